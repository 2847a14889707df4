"""measure.report.notebooks: pages that work offline, link each other and an index (#10 defect 10)."""

from __future__ import annotations

import re

import nbformat
import pytest
import polars as pl

from measure.report import nbsetup, notebooks

PAGES = [("00-overview", "Overview"), ("01-eviction", "Eviction: a title")]


def _nb():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Eviction: a title\n\nSome text with $x$ and `code`."),
        nbformat.v4.new_code_cell("1 + 1", outputs=[nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=1)]),
    ]
    return nb


def test_pages_load_nothing_from_the_network(tmp_path):
    page = notebooks.render_html(_nb(), tmp_path / "01-eviction.html", PAGES).read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]*src=", page)
    for cdn in ("require.js", "mathjax", "mermaid", "cdnjs", "https://", "http://"):
        assert cdn not in page.lower(), cdn
    assert "<title>Eviction: a title</title>" in page
    assert "1 + 1" not in page  # no code


def test_every_page_links_the_index_and_the_other_pages(tmp_path):
    page = notebooks.render_html(_nb(), tmp_path / "01-eviction.html", PAGES).read_text(encoding="utf-8")
    assert '<a href="index.html">Report index</a>' in page
    assert 'href="00-overview.html"' in page and 'href="01-eviction.html" class="current"' in page
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "sessions.csv").write_text("a\n")
    index = notebooks.render_index(tmp_path, PAGES).read_text(encoding="utf-8")
    assert 'href="00-overview.html">00-overview</a>: Overview' in index
    assert 'href="tables/sessions.csv"' in index
    assert "https://" not in index


def test_table_headers_are_human_labels():
    df = pl.DataFrame({"session": ["a"], "calls_per_run_max": [3], "both_in_prompt": [True], "fold_dedupe_scoped evicted (chars)": [0]})
    html = nbsetup.frame_html(df)
    heads = re.findall(r"<th>(.*?)</th>", html)
    assert heads == ["session", "calls per run (max)", "both copies in prompt", "fold_dedupe_scoped evicted (chars)"]
    assert not any("_" in h for h in heads[:3])


@pytest.mark.slow
def test_configure_never_loads_pandas_but_sets_its_options_once_loaded():
    # Importing pandas in every kernel only to set display options cost 0.2 s and 50 MiB a kernel
    # (a 20,000-session report's peak past its 500 MiB target) in a venv with the lab extra.
    import subprocess
    import sys

    pytest.importorskip("pandas")
    code = (
        "import sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "shell.run_cell('from measure.report import nbsetup; nbsetup.configure()')\n"
        "assert 'pandas' not in sys.modules\n"
        "shell.run_cell('import pandas as pd')\n"
        "shell.run_cell('precision = pd.get_option(\"display.precision\")')\n"
        "assert shell.user_ns['precision'] == 1, shell.user_ns['precision']\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.slow
@pytest.mark.parametrize("name", notebooks.UNUSED_OPTIONAL_IMPORTS)
def test_papermill_is_loaded_without_its_unused_optional_imports(name):
    # papermill's imports load pyarrow (HDFS) and rfc3987_syntax (IRI checks) when installed:
    # 40 MB and 0.9 s of the report's own process for features it never uses.
    import subprocess
    import sys

    pytest.importorskip(name)
    code = (
        "import importlib, sys\n"
        "from measure.report.notebooks import lean_import\n"
        "pm = lean_import('papermill')\n"
        f"assert callable(pm.execute_notebook) and {name!r} not in sys.modules\n"
        f"mod = importlib.import_module({name!r})\n"  # still importable by anything that wants it later
        f"assert sys.modules[{name!r}] is mod\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
