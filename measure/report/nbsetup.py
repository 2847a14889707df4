"""Notebook setup: one `configure()` call in the first cell makes every output deterministic."""

from __future__ import annotations

import os
import sys

import matplotlib as mpl
import matplotlib.style
import polars as pl

from measure.report.style import STYLE
from measure.report.views.common import HTML_FLOAT_DIGITS, HTML_TABLE_ROWS, frame_html

POLARS_DISPLAY: dict[str, object] = {
    "tbl_rows": HTML_TABLE_ROWS, "tbl_cols": 24, "fmt_str_lengths": 100, "float_precision": HTML_FLOAT_DIGITS,
    "thousands_separator": ",", "tbl_width_chars": 240, "tbl_hide_column_data_types": True,
    "tbl_hide_dataframe_shape": True, "tbl_cell_numeric_alignment": "RIGHT",
}
"""polars display options of every report table (global: set once per kernel)."""

PNG_KWARGS: dict[str, object] = {"bbox_inches": "tight", "metadata": {"Software": None}}
"""print_figure options of inline PNGs: no Software tag, so bytes do not change with matplotlib."""


def configure() -> None:
    """Set polars display options (none inherited from `POLARS_FMT_*`), the matplotlib style and, in a kernel,
    PNG as the only inline figure format and `frame_html` for DataFrames. PANDAS_DISPLAY is set once something
    has loaded pandas: now if it is, else before the first cell run after it is (no report notebook uses pandas:
    importing it costs a kernel 50 MiB)."""
    from IPython import get_ipython  # noqa: PLC0415
    from matplotlib_inline.backend_inline import set_matplotlib_formats  # noqa: PLC0415
    from matplotlib_inline.config import InlineBackend  # noqa: PLC0415

    for key in [k for k in os.environ if k.startswith(("POLARS_FMT_", "POLARS_TABLE_"))]:
        del os.environ[key]
    pl.Config.restore_defaults()
    pl.Config(**POLARS_DISPLAY)  # without `with`, these stay set for the kernel

    mpl.rcdefaults()
    mpl.style.use(STYLE)

    ip = get_ipython()
    if ip is None:  # not in a kernel: no display to configure
        _set_pandas_options()
        return
    cfg = InlineBackend.instance()
    cfg.print_figure_kwargs = dict(PNG_KWARGS)  # kept if pyplot later re-registers the formatters
    cfg.figure_formats = {"png"}
    set_matplotlib_formats("png", **PNG_KWARGS)
    ip.display_formatter.formatters["text/html"].for_type(pl.DataFrame, frame_html)
    if not _set_pandas_options():

        def before_cell(*_) -> None:
            if _set_pandas_options():
                ip.events.unregister("pre_run_cell", before_cell)

        ip.events.register("pre_run_cell", before_cell)


def png(fig) -> bytes:
    """`fig` as a kernel shows it inline (PNG_KWARGS, under the project style): a figure file of the report."""
    from IPython.core.pylabtools import print_figure  # noqa: PLC0415

    with mpl.style.context(STYLE, after_reset=True):
        return print_figure(fig, "png", **PNG_KWARGS)


PANDAS_DISPLAY: dict[str, object] = {
    "display.max_rows": 60, "display.max_columns": 24, "display.width": 200, "display.precision": 1,
    "display.max_colwidth": 60, "display.show_dimensions": False,
}
"""pandas display options, set in a kernel where something loaded pandas (not a dependency)."""


def _set_pandas_options() -> bool:
    pd = sys.modules.get("pandas")
    if pd is None or not hasattr(pd, "set_option"):  # not loaded, or still loading
        return False
    for key, value in PANDAS_DISPLAY.items():
        pd.set_option(key, value)
    return True
