"""Execute one notebook with papermill, normalise it, render it as HTML; failures name the cell."""

from __future__ import annotations

import html
import importlib
import os
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from measure import paths

NOTEBOOKS_DIR = "notebooks"
"""Where the notebook sources live (repo-relative)."""

BUILD_DIR = "build"
"""Scratch space: converted notebooks, raw papermill outputs, measure-run tables (repo-relative)."""

EXECUTION_TIMEOUT = 1200
"""Seconds one cell may run before the notebook fails (CellTimeoutError)."""

KERNEL_NAME = "python3"

NBCLIENT_OPTIONS: dict[str, Any] = {
    "record_timing": False,
    "coalesce_streams": True,
    # jupyter_client interrupts every kernel (SIGINT) before asking it to shut down; a kernel still
    # answering a message then logs "KeyboardInterrupt caught in kernel" as an ERROR on the analyst's
    # terminal after a report that succeeded. Every failure that matters reaches us through papermill
    # (a cell error, a timeout, a dead kernel), so the kernel's own log is silenced.
    "extra_arguments": ["--IPKernelApp.log_level=CRITICAL"],
}
"""nbclient traits forwarded by papermill (a misspelt one is ignored: tests check them against NotebookClient)."""

KERNEL_TRANSPORT = "ipc"
"""How papermill talks to its kernels: Unix sockets in a private temporary folder, not TCP ports.

ipykernel 7 warns "Kernel is running over TCP without encryption" on every TCP start; IPC opens no port.
Left to jupyter_client, the sockets would be `kernel-ipc-<n>` in the repository, where a killed report leaves
them and two reports race for the names. `_kernel_config()` uses TCP past the Unix limit (108 bytes)."""

KERNEL_ENV: dict[str, str] = {"PYTHONHASHSEED": "0", "TQDM_DISABLE": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
                              "TZ": "UTC"}
"""Environment every kernel inherits (set when missing; MPLBACKEND is removed: it drops inline figures)."""


@dataclass(frozen=True)
class NotebookFailure:
    """One notebook that did not run to the end."""

    notebook: str  # source path (repo-relative)
    cell: int | None  # index of the failing cell in the source notebook (0-based, markdown cells included)
    line: int | None  # its `# %%` line in the source
    kind: str  # error, timeout or dead_kernel
    message: str
    output: str | None = None  # the saved notebook

    def __str__(self) -> str:
        where = self.notebook + (f":{self.line}" if self.line else "")
        cell = f"cell {self.cell}" if self.cell is not None else "an unknown cell"
        return f"{where}: {cell} failed ({self.kind}): {self.message}" + (
            f"\n    executed notebook: {self.output}" if self.output else "")


class ReportError(RuntimeError):
    """Raised when one or more notebooks fail; `failures` names each notebook and cell."""

    def __init__(self, failures: list[NotebookFailure]):
        self.failures = failures
        super().__init__("\n".join(str(f) for f in failures))


def notebook_sources() -> list[Path]:
    """Return the notebook sources (`NN-name.py`, jupytext py:percent), sorted by name."""
    return sorted(p for p in paths.resolve(NOTEBOOKS_DIR).glob("*.py") if not p.name.startswith(("_", ".")))


def build_notebook(source: Path, build_dir: Path) -> Path:
    """Convert a py:percent source to `build_dir/<stem>.ipynb`; return its path. Only the kernelspec is kept
    (jupytext's pairing info would make Jupyter pair the executed copies), and ids are `cell-<n>`: the build is
    byte-stable, and a failed cell of the executed copy names its source cell."""
    jupytext = lean_import("jupytext")
    nbformat = lean_import("nbformat")

    nb = jupytext.read(source)
    nb.nbformat, nb.nbformat_minor = 4, 5
    default = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": KERNEL_NAME}
    nb.metadata = nbformat.NotebookNode({"kernelspec": nb.metadata.get("kernelspec", default)})
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i}"
    return write_notebook(nb, build_dir / f"{source.stem}.ipynb")


def _kernel_config(sockets: Path):
    """The traitlets Config papermill's kernel manager gets: KERNEL_TRANSPORT, with the sockets
    `sockets/kernel-<n>`, when such a path fits."""
    from traitlets.config import Config  # noqa: PLC0415

    if len(os.fsencode(sockets / "kernel-65535")) < 108:
        return Config({"KernelManager": {"transport": KERNEL_TRANSPORT, "ip": str(sockets / "kernel")}})
    return Config({"KernelManager": {"transport": "tcp"}})


UNUSED_OPTIONAL_IMPORTS = ("pyarrow", "rfc3987_syntax")
"""Packages the notebook stack's imports load when installed (the lab extra installs both) for
features the report never uses: pyarrow for papermill's HDFS paths (40 MB of the report's process
while every kernel runs), rfc3987_syntax for jsonschema's "iri" format checks, which nbformat's
import reaches (0.9 s of grammar building and 16 MB)."""


def lean_import(name: str):
    """Module `name` (nbformat, jupytext, nbclient, nbconvert, papermill) imported with
    UNUSED_OPTIONAL_IMPORTS left unloaded; they stay importable afterwards."""
    if name in sys.modules:
        return sys.modules[name]
    blocked = [m for m in UNUSED_OPTIONAL_IMPORTS if m not in sys.modules]
    for m in blocked:
        sys.modules[m] = None  # type: ignore[assignment]  # an optional `import m` fails
    try:
        return importlib.import_module(name)
    finally:
        for m in blocked:
            if m in sys.modules and sys.modules[m] is None:
                del sys.modules[m]


def execute_notebook(built: Path, output: Path, params: dict[str, Any], *, source: Path, timeout: int):
    """Execute `built` with papermill into `output`; return the executed notebook. A cell error, a cell
    timeout or a dead kernel raises ReportError naming the source notebook and the failing cell."""
    pm = lean_import("papermill")
    from nbclient.exceptions import CellTimeoutError, DeadKernelError  # noqa: PLC0415
    from papermill.exceptions import PapermillExecutionError  # noqa: PLC0415

    for key, value in KERNEL_ENV.items():  # what the kernels inherit
        os.environ.setdefault(key, value)
    os.environ.pop("MPLBACKEND", None)
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        with tempfile.TemporaryDirectory(prefix="measure-kernel-") as sockets:
            return pm.execute_notebook(
                str(built), str(output), parameters=params, execution_timeout=timeout, cwd=str(paths.root()),
                config=_kernel_config(Path(sockets)), kernel_name=KERNEL_NAME, language="python", progress_bar=False,
                log_output=False, start_timeout=120, request_save_on_cell_execute=True, **NBCLIENT_OPTIONS,
            )
    except PapermillExecutionError as exc:
        raise ReportError([_failure(source, "error", f"{exc.ename}: {exc.evalue}".strip(), output)]) from exc
    except CellTimeoutError as exc:
        raise ReportError([_failure(source, "timeout", f"no result after {timeout} s", output)]) from exc
    except DeadKernelError as exc:
        raise ReportError([_failure(source, "dead_kernel", f"the kernel died ({exc})", output)]) from exc


def _failure(source: Path, kind: str, message: str, output: Path) -> NotebookFailure:
    cell = _failed_cell(output, kind)
    return NotebookFailure(paths.portable(source), cell, _cell_line(source, cell), kind, message,
                           paths.portable(output) if output.exists() else None)


def _failed_cell(output: Path, kind: str) -> int | None:
    """The index of the source cell that failed, from the output papermill saved: the cell marked `exception`,
    else (a timeout, a dead kernel) the last one started (`start_time`). Built cells carry their source index in
    their id (`cell-<n>`); the cell papermill injects after the `parameters` cell stands for that cell."""
    nbformat = lean_import("nbformat")

    if not output.exists():
        return None
    cells = [c for c in nbformat.read(output, as_version=4).cells if c.cell_type == "code"]
    key = "exception" if kind == "error" else "start_time"
    cell = next((c for c in reversed(cells) if (c.metadata.get("papermill") or {}).get(key)), None)
    if cell is not None and "injected-parameters" in cell.metadata.get("tags", []):
        cell = next((c for c in cells if "parameters" in c.metadata.get("tags", [])), None)
    return int(cell.id.removeprefix("cell-")) if cell is not None and cell.id.startswith("cell-") else None


def _cell_line(source: Path, cell: int | None) -> int | None:
    """Line (1-based) of the `# %%` marker of source cell `cell`, when markers and cells agree."""
    if cell is None:
        return None
    lines = source.read_text(encoding="utf-8").splitlines()
    markers = [n + 1 for n, line in enumerate(lines) if line.startswith("# %%")]
    jupytext = lean_import("jupytext")

    if len(markers) != len(jupytext.read(source).cells) or cell >= len(markers):
        return None
    return markers[cell]


def normalize(nb):
    """Strip, in place, what changes from run to run (metadata of papermill, widgets, jupytext, the language
    version, cells' timings), keeping outputs and execution counts; cell ids become "0".."n-1"."""
    for key in ("papermill", "widgets", "jupytext"):
        nb.metadata.pop(key, None)
    nb.metadata.get("language_info", {}).pop("version", None)
    for i, cell in enumerate(nb.cells):
        cell.id = str(i)
        for key in ("papermill", "execution", "ExecuteTime", "collapsed", "scrolled"):
            cell.metadata.pop(key, None)
    return nb


def write_notebook(nb, path: Path) -> Path:
    """Write a notebook as nbformat JSON (sorted keys, indent 1) and a trailing newline."""
    nbformat = lean_import("nbformat")

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    return path


PAGE_CSS = """
body { font: 15px/1.5 "DejaVu Sans", Helvetica, Arial, sans-serif; color: #1f2328; margin: 0; }
main, nav.pages { max-width: 1100px; margin: 0 auto; padding: 0 24px; }
nav.pages { padding-top: 12px; padding-bottom: 12px; border-bottom: 1px solid #d0d7de; font-size: 14px; }
nav.pages a { margin-right: 14px; }
nav.pages a.current { font-weight: bold; color: #1f2328; text-decoration: none; }
h1 { font-size: 26px; } h2 { font-size: 20px; margin-top: 32px; } h3 { font-size: 17px; }
a.anchor-link { display: none; }
code { background: #f6f8fa; padding: 1px 4px; border-radius: 3px; font-size: 90%; }
table.dataframe { border-collapse: collapse; margin: 8px 0; font-size: 13px; display: block; overflow-x: auto; max-width: 100%; }
table.dataframe th, table.dataframe td { border: 1px solid #d0d7de; padding: 3px 8px; }
table.dataframe th { background: #f6f8fa; text-align: left; }
table.dataframe tbody tr:nth-child(even) { background: #fbfcfd; }
.output_area img, .jp-RenderedImage img { max-width: 100%; height: auto; }
pre { white-space: pre-wrap; }
"""
"""The pages' whole stylesheet: inline, so a page needs no network and no other file."""


def _nav(pages: list[tuple[str, str]], current: str | None) -> str:
    links = ['<a href="index.html"' + (' class="current"' if current is None else "") + ">Report index</a>"]
    for stem, title in pages:
        cls = ' class="current"' if stem == current else ""
        links.append(f'<a href="{html.escape(stem)}.html"{cls} title="{html.escape(title)}">{html.escape(stem)}</a>')
    return '<nav class="pages">' + " ".join(links) + "</nav>"


def _page(title: str, body: str, nav: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>{PAGE_CSS}</style>\n</head>\n<body>\n{nav}\n<main>\n{body}\n</main>\n</body>\n</html>\n"
    )


def render_html(nb, path: Path, pages: list[tuple[str, str]]) -> Path:
    """Render a notebook to a self-contained HTML page `path` without code cells or prompts: nbconvert's `basic`
    template (no require.js, MathJax or mermaid from a CDN), an inline stylesheet and a navigation bar linking the
    report index and each of `pages` ((stem, title) of every page, this one's stem that of `path`)."""
    HTMLExporter = lean_import("nbconvert").HTMLExporter  # noqa: N806

    exporter = HTMLExporter(template_name="basic", exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": path.stem}})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_page(dict(pages).get(path.stem, path.stem), body, _nav(pages, path.stem)), encoding="utf-8")
    return path


def render_index(out_dir: Path, pages: list[tuple[str, str]]) -> Path:
    """Write `index.html`: a link to every page with its title, then the tables, figures and run.json."""
    items = "".join(f'<li><a href="{html.escape(stem)}.html">{html.escape(stem)}</a>: {html.escape(title)}</li>' for stem, title in pages)
    parts = [f"<h1>Report</h1>\n<p>Start with the overview. Every page links back here.</p>\n<ul>{items}</ul>"]
    for folder, what in (("tables", "Every table of the run (CSV)"), ("figures", "Every figure (PNG)")):
        files = sorted(p.name for p in (out_dir / folder).glob("*.*"))
        if files:
            links = "".join(f'<li><a href="{folder}/{html.escape(f)}">{html.escape(f)}</a></li>' for f in files)
            parts.append(f"<h2>{what}</h2>\n<ul>{links}</ul>")
    if (out_dir / "run.json").is_file():
        parts.append('<h2>Run</h2>\n<ul><li><a href="run.json">run.json</a>: parameters, versions and a fingerprint of the input files</li></ul>')
    path = out_dir / "index.html"
    path.write_text(_page("Report index", "\n".join(parts), _nav(pages, None)), encoding="utf-8")
    return path


def run_notebooks(sources: list[Path], params: dict[str, Any], out_dir: Path, *, build_dir: Path, html: bool = True,
                  params_dir: Path | None = None, timeout: int = EXECUTION_TIMEOUT, log=print) -> list[Path]:
    """Execute each source with `params` (one kernel each, one after the other) into `out_dir/<stem>.ipynb`
    (normalized) and, with `html`, `<stem>.html`; with `params_dir`, the parameters go to `<stem>.yaml` there
    first (and papermill gets the dict read back from it). Raises ReportError listing every failure at the end."""
    nbformat = lean_import("nbformat")

    failures: list[NotebookFailure] = []
    written: list[Path] = []
    pages = page_titles(sources)
    for k, source in enumerate(sources, 1):
        nb_params = _write_params(params, params_dir / f"{source.stem}.yaml") if params_dir else dict(params)
        built = build_notebook(source, build_dir / "nb")
        raw = build_dir / "executed" / f"{source.stem}.ipynb"
        target = out_dir / f"{source.stem}.ipynb"
        started = time.perf_counter()
        try:
            executed = execute_notebook(built, raw, nb_params, source=source, timeout=timeout)
        except ReportError as exc:
            if raw.exists():  # keep the partial notebook where the reader looks, error banner included
                write_notebook(normalize(nbformat.read(raw, as_version=4)), target)
                failures.extend(replace(f, output=paths.portable(target)) for f in exc.failures)
            else:
                failures.extend(exc.failures)
            log(f"[{k}/{len(sources)}] {source.name}: FAILED")
            continue
        write_notebook(normalize(executed), target)
        written.append(target)
        if html:
            written.append(render_html(nbformat.read(target, as_version=4), target.with_suffix(".html"), pages))
        log(f"[{k}/{len(sources)}] {source.name}: ok ({time.perf_counter() - started:.1f} s)")
    if failures:
        raise ReportError(failures)
    return written


def page_titles(sources: list[Path]) -> list[tuple[str, str]]:
    """(stem, title) of each source: its first `# ` heading (jupytext percent), else its stem."""
    return [(s.stem, next((line[4:].strip() for line in s.read_text(encoding="utf-8").splitlines()
                           if line.startswith("# # ")), s.stem)) for s in sources]


def _write_params(params: dict[str, Any], path: Path) -> dict[str, Any]:
    """Write `params` as YAML and return what reading it back gives (the dict papermill gets)."""
    import yaml  # noqa: PLC0415

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(params, sort_keys=True, default_flow_style=False, allow_unicode=True), encoding="utf-8")
    return yaml.safe_load(path.read_text(encoding="utf-8"))
