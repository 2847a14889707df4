"""Run every notebook with papermill into a report: executed notebooks, HTML, figures, tables, parameters.

`measure report --root DIR` (and `python -m measure.reports`) measures the root once with
`measure run`, then executes `notebooks/*.py` (jupytext py:percent) one after the other in this
process, each in a fresh `python3` kernel, and writes::

    reports/<root-name>/
      00-overview.ipynb  00-overview.html  ...   executed notebooks (normalized) + HTML without code
      figures/<name>.png                         every figure of measure.plots.FIGURES
      tables/<name>.csv                          every table of the run
      params/<notebook>.yaml                     the parameters each notebook ran with
      run.json                                   the run's parameters, versions and input fingerprint

`--golden` instead executes the notebooks on the bundled fixtures (GOLDEN_SETS: every notebook on
`fixtures/default`, 00-overview also on `fixtures/s840`) with `golden_parameters(root)` and writes
the normalized notebooks to `tests/golden/`, where nbval re-executes and compares them.
Outputs carry no timestamps and no absolute paths of this machine, so two runs on the same root
give byte-identical files.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from measure import paths

__all__ = [
    "FIXTURE_ROOT",
    "GOLDEN_DIR",
    "DEFAULT_MAX_TOTAL_CHARS",
    "NotebookFailure",
    "ReportError",
    "golden_parameters",
    "report_parameters",
    "notebook_sources",
    "build_notebook",
    "execute_notebook",
    "normalize",
    "write_notebook",
    "render_html",
    "run_notebooks",
    "report",
    "golden",
    "golden_plan",
    "GOLDEN_SETS",
    "add_arguments",
    "run",
    "main",
]

FIXTURE_ROOT = "fixtures/default"
"""The bundled sessions root (repo-relative): `make report`'s default and the goldens' input."""

NOTEBOOKS_DIR = "notebooks"
"""Where the notebook sources live (repo-relative)."""

GOLDEN_DIR = "tests/golden"
"""Where `--golden` writes the normalized executed notebooks (repo-relative)."""

S840_ROOT = "fixtures/s840"
"""The #840-shaped fixture: the four sessions of the #840 study, for the published comparison."""

GOLDEN_SETS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    ".": (FIXTURE_ROOT, None),
    "s840": (S840_ROOT, ("00-overview",)),
}
"""Golden notebooks: sub-folder of GOLDEN_DIR -> (sessions root, notebook stems or None for all).

Every notebook runs on the bundled default fixtures; 00-overview also runs on the #840-shaped
fixture, so nbval checks the side-by-side with the published #840 figures too.
"""

BUILD_DIR = "build"
"""Scratch space: converted notebooks, raw papermill outputs, measure-run tables (repo-relative)."""

DEFAULT_MAX_TOTAL_CHARS = 80_000
"""akm's default `maxTotalChars`."""

DEFAULT_BUDGETS: tuple[int, ...] = (20_000, 40_000, 80_000, 160_000, 320_000, 640_000)
"""Budget sweep of a report unless --budgets is given (the 01-eviction curve needs several)."""

EXECUTION_TIMEOUT = 1200
"""Seconds one cell may run before the notebook fails (CellTimeoutError)."""

KERNEL_NAME = "python3"

PAPERMILL_OPTIONS: dict[str, Any] = {
    "kernel_name": KERNEL_NAME,
    "language": "python",
    "progress_bar": False,
    "log_output": False,
    "start_timeout": 120,
    "request_save_on_cell_execute": True,
}
"""papermill options of every execution (besides paths, parameters and the timeout)."""

NBCLIENT_OPTIONS: dict[str, Any] = {"record_timing": False, "coalesce_streams": True}
"""nbclient traits forwarded by papermill; checked against NotebookClient (typos are silent)."""

KERNEL_ENV: dict[str, str] = {
    "PYTHONHASHSEED": "0",
    "TQDM_DISABLE": "1",
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    "TZ": "UTC",
}
"""Environment every kernel inherits (set when missing; MPLBACKEND is removed: it drops inline figures)."""


@dataclass(frozen=True)
class NotebookFailure:
    """One notebook that did not run to the end.

    notebook: source path (repo-relative); cell: index of the failing cell in the source
    notebook (0-based, markdown cells included) or None; line: its `# %%` line in the source;
    kind: error, timeout or dead_kernel; message: what happened; output: the saved notebook.
    """

    notebook: str
    cell: int | None
    line: int | None
    kind: str
    message: str
    output: str | None = None

    def __str__(self) -> str:
        where = self.notebook + (f":{self.line}" if self.line else "")
        cell = f"cell {self.cell}" if self.cell is not None else "an unknown cell"
        text = f"{where}: {cell} failed ({self.kind}): {self.message}"
        if self.output:
            text += f"\n    executed notebook: {self.output}"
        return text


class ReportError(RuntimeError):
    """Raised when one or more notebooks fail; `failures` names each notebook and cell."""

    def __init__(self, failures: list[NotebookFailure]):
        self.failures = failures
        super().__init__("\n".join(str(f) for f in failures))


# --------------------------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------------------------


def golden_parameters(sessions_root: str = FIXTURE_ROOT) -> dict[str, Any]:
    """Parameters of the golden notebooks: a bundled fixture root, measured inside each notebook.

    `out_dir` is None so every execution (make golden, nbval under make test) recomputes the
    numbers with the current code: a changed number in measure fails nbval.
    """
    return {
        "sessions_root": sessions_root,
        "out_dir": None,
        "max_total_chars": DEFAULT_MAX_TOTAL_CHARS,
        "budgets": list(DEFAULT_BUDGETS),
        "template_path": None,
        "sessions": [],
        "show_excerpts": False,
    }


def report_parameters(
    sessions_root: str | os.PathLike,
    run_dir: str | os.PathLike,
    *,
    max_total_chars: int = DEFAULT_MAX_TOTAL_CHARS,
    budgets: list[int] | None = None,
    template_path: str | os.PathLike | None = None,
    sessions: list[str] | None = None,
    show_excerpts: bool = False,
) -> dict[str, Any]:
    """Plain-JSON parameters of a report's notebooks; paths repo-relative (or `~/...`) when possible."""
    return {
        "sessions_root": paths.portable(sessions_root),
        "out_dir": paths.portable(run_dir),
        "max_total_chars": int(max_total_chars),
        "budgets": [int(b) for b in budgets] if budgets else None,
        "template_path": paths.portable(template_path) if template_path else None,
        "sessions": [str(s) for s in sessions or []],
        "show_excerpts": bool(show_excerpts),
    }


def _write_params(params: dict[str, Any], path: Path) -> dict[str, Any]:
    """Write `params` as YAML and return what reading it back gives (the dict papermill gets)."""
    import yaml  # noqa: PLC0415

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(params, sort_keys=True, default_flow_style=False, allow_unicode=True), encoding="utf-8")
    return yaml.safe_load(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------------------------
# Notebooks: build, execute, normalize, render
# --------------------------------------------------------------------------------------------


def notebook_sources(notebooks_dir: str | os.PathLike | None = None) -> list[Path]:
    """Return the notebook sources (`NN-name.py`, jupytext py:percent), sorted by name."""
    directory = paths.resolve(notebooks_dir or NOTEBOOKS_DIR)
    return sorted(p for p in directory.glob("*.py") if not p.name.startswith(("_", ".")))


def build_notebook(source: Path, build_dir: Path):
    """Convert a py:percent source to `build_dir/<stem>.ipynb` with stable cell ids; return (path, notebook).

    Only the kernelspec is kept from the notebook metadata (jupytext's pairing info would make
    Jupyter pair the executed copies), and ids are `cell-<n>` so the build is byte-stable.
    """
    import jupytext  # noqa: PLC0415
    import nbformat  # noqa: PLC0415

    nb = jupytext.read(source)
    nb.nbformat, nb.nbformat_minor = 4, 5
    nb.metadata = nbformat.NotebookNode({"kernelspec": nb.metadata.get("kernelspec", _kernelspec())})
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i}"
    out = build_dir / f"{source.stem}.ipynb"
    write_notebook(nb, out)
    return out, nb


def _kernelspec() -> dict[str, str]:
    return {"display_name": "Python 3 (ipykernel)", "language": "python", "name": KERNEL_NAME}


def _check_nbclient_options() -> None:
    """Fail loudly on a misspelt nbclient option (nbclient would only warn and ignore it)."""
    from nbclient import NotebookClient  # noqa: PLC0415

    unknown = set(NBCLIENT_OPTIONS) - set(NotebookClient.class_trait_names())
    if unknown:
        raise ValueError(f"not nbclient options: {sorted(unknown)}")


def _kernel_env() -> None:
    """Set the environment the kernels inherit (see KERNEL_ENV)."""
    for key, value in KERNEL_ENV.items():
        os.environ.setdefault(key, value)
    os.environ.pop("MPLBACKEND", None)


def execute_notebook(
    built: Path,
    output: Path,
    params: dict[str, Any],
    *,
    source: Path,
    timeout: int = EXECUTION_TIMEOUT,
):
    """Execute `built` with papermill into `output`; return the executed notebook.

    Raises ReportError naming the source notebook and the failing cell on a cell error
    (PapermillExecutionError), a cell timeout (CellTimeoutError) or a dead kernel (DeadKernelError).
    """
    import papermill as pm  # noqa: PLC0415
    from nbclient.exceptions import CellTimeoutError, DeadKernelError  # noqa: PLC0415
    from papermill.exceptions import PapermillExecutionError  # noqa: PLC0415

    _check_nbclient_options()
    _kernel_env()
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        return pm.execute_notebook(
            str(built),
            str(output),
            parameters=params,
            execution_timeout=timeout,
            cwd=str(paths.root()),
            **PAPERMILL_OPTIONS,
            **NBCLIENT_OPTIONS,
        )
    except PapermillExecutionError as exc:
        cell = _source_cell(built, exc.cell_index, injected=bool(params))
        message = f"{exc.ename}: {exc.evalue}".strip()
        raise ReportError([_failure(source, cell, "error", message, output)]) from exc
    except CellTimeoutError as exc:
        cell = _cell_from_preview(built, str(exc))
        if cell is None:
            cell = _running_cell(built, output, injected=bool(params))
        raise ReportError([_failure(source, cell, "timeout", f"no result after {timeout} s", output)]) from exc
    except DeadKernelError as exc:
        cell = _running_cell(built, output, injected=bool(params))
        raise ReportError([_failure(source, cell, "dead_kernel", f"the kernel died ({exc})", output)]) from exc


def _failure(source: Path, cell: int | None, kind: str, message: str, output: Path | None) -> NotebookFailure:
    return NotebookFailure(
        notebook=paths.portable(source),
        cell=cell,
        line=_cell_line(source, cell),
        kind=kind,
        message=message,
        output=paths.portable(output) if output and output.exists() else None,
    )


def _parameters_index(built: Path) -> int | None:
    import nbformat  # noqa: PLC0415

    nb = nbformat.read(built, as_version=4)
    for i, cell in enumerate(nb.cells):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            return i
    return None


def _source_cell(built: Path, executed_index: int | None, *, injected: bool) -> int | None:
    """Map a cell index of the executed notebook to the source notebook.

    papermill inserts an `injected-parameters` cell after the `parameters` cell (or first, when
    there is none) whenever parameters are passed; cells after it shift by one.
    """
    if executed_index is None:
        return None
    if not injected:
        return executed_index
    p = _parameters_index(built)
    position = p + 1 if p is not None else 0
    if executed_index == position:
        return p  # the injected parameters themselves failed: blame the parameters cell
    return executed_index - 1 if executed_index > position else executed_index


def _cell_from_preview(built: Path, message: str) -> int | None:
    """Find the cell whose source starts like the preview nbclient puts in a timeout message."""
    import nbformat  # noqa: PLC0415

    match = re.search(r"-{5,}\n(.*?)\n-{5,}", message, re.S)
    if not match:
        return None
    preview = match.group(1).strip()
    if not preview:
        return None
    nb = nbformat.read(built, as_version=4)
    hits = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.strip().startswith(preview[:200])]
    return hits[0] if len(hits) == 1 else None


def _running_cell(built: Path, output: Path, *, injected: bool) -> int | None:
    """The cell that was running when execution stopped, from the output papermill saved.

    papermill stamps `metadata.papermill.start_time` on each cell it starts (cells never
    started keep None, although their status may read "completed"), so the last stamped cell
    is the one that was running. Falls back to the last cell with an execution count.
    """
    import nbformat  # noqa: PLC0415

    if not output.exists():
        return None
    nb = nbformat.read(output, as_version=4)
    started = [
        i for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and (c.metadata.get("papermill") or {}).get("start_time") is not None
    ]
    if not started:
        started = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.get("execution_count") is not None]
    return _source_cell(built, started[-1], injected=injected) if started else None


def _cell_line(source: Path, cell: int | None) -> int | None:
    """Line (1-based) of the `# %%` marker of source cell `cell`, when markers and cells agree."""
    if cell is None:
        return None
    lines = source.read_text(encoding="utf-8").splitlines()
    markers = [n + 1 for n, line in enumerate(lines) if line.startswith("# %%")]
    import jupytext  # noqa: PLC0415

    if len(markers) != len(jupytext.read(source).cells) or cell >= len(markers):
        return None
    return markers[cell]


def normalize(nb):
    """Strip what changes from run to run and keep outputs and execution counts.

    Drops notebook `metadata.papermill`, `metadata.widgets`, `metadata.jupytext` and
    `language_info.version`; drops each cell's `metadata.papermill` and `metadata.execution`;
    renumbers cell ids "0".."n-1". Returns the same notebook, changed in place.
    """
    for key in ("papermill", "widgets", "jupytext"):
        nb.metadata.pop(key, None)
    info = nb.metadata.get("language_info")
    if info is not None:
        info.pop("version", None)
    for i, cell in enumerate(nb.cells):
        cell.id = str(i)
        for key in ("papermill", "execution", "ExecuteTime", "collapsed", "scrolled"):
            cell.metadata.pop(key, None)
    return nb


def write_notebook(nb, path: Path) -> Path:
    """Write a notebook as nbformat JSON (sorted keys, indent 1, trailing newline)."""
    import nbformat  # noqa: PLC0415

    path.parent.mkdir(parents=True, exist_ok=True)
    text = nbformat.writes(nb)
    if not text.endswith("\n"):
        text += "\n"
    path.write_text(text, encoding="utf-8")
    return path


def render_html(nb, path: Path, title: str) -> Path:
    """Render a notebook to HTML without code cells or prompts (nbconvert --no-input)."""
    from nbconvert import HTMLExporter  # noqa: PLC0415

    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    return path


def run_notebooks(
    sources: list[Path],
    params: dict[str, Any],
    out_dir: Path,
    *,
    build_dir: Path,
    html: bool = True,
    params_dir: Path | None = None,
    timeout: int = EXECUTION_TIMEOUT,
    log=print,
) -> list[Path]:
    """Execute each source with `params` (one kernel each, one after the other) into `out_dir`.

    Writes `<stem>.ipynb` (normalized) and, with `html`, `<stem>.html`; with `params_dir`, the
    parameters as `<params_dir>/<stem>.yaml` first (and papermill gets the dict read back from it).
    Every notebook is tried; raises ReportError listing every failure at the end.
    """
    import nbformat  # noqa: PLC0415

    failures: list[NotebookFailure] = []
    written: list[Path] = []
    for k, source in enumerate(sources, 1):
        nb_params = dict(params)
        if params_dir is not None:
            nb_params = _write_params(params, params_dir / f"{source.stem}.yaml")
        built, _ = build_notebook(source, build_dir / "nb")
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
            written.append(render_html(nbformat.read(target, as_version=4), target.with_suffix(".html"), source.stem))
        log(f"[{k}/{len(sources)}] {source.name}: ok ({time.perf_counter() - started:.1f} s)")
    if failures:
        raise ReportError(failures)
    return written


# --------------------------------------------------------------------------------------------
# Report and golden modes
# --------------------------------------------------------------------------------------------


def _clean_report_dir(out: Path) -> None:
    """Remove what a previous report wrote here (only files this module writes)."""
    for sub in ("figures", "tables", "params"):
        shutil.rmtree(out / sub, ignore_errors=True)
    for pattern in ("*.ipynb", "*.html", "run.json"):
        for p in out.glob(pattern):
            if p.is_file():
                p.unlink()


def report(
    sessions_root: str | os.PathLike = FIXTURE_ROOT,
    out: str | os.PathLike | None = None,
    *,
    max_total_chars: int | None = None,
    budgets: list[int] | None = None,
    template_path: str | os.PathLike | None = None,
    sessions: list[str] | None = None,
    jobs: int | None = None,
    redact: bool = False,
    cache: bool = True,
    file_time_ms: int | None = None,
    show_excerpts: bool = False,
    notebooks_dir: str | os.PathLike | None = None,
    build_dir: str | os.PathLike | None = None,
    timeout: int = EXECUTION_TIMEOUT,
    log=print,
) -> Path:
    """Measure `sessions_root` once, run every notebook on the result, and write the report.

    Parameters
    ----------
    sessions_root : a sessions root (`~/.claude/projects`-shaped); repo-relative, `~/...` or absolute.
    out : report directory; default `reports/<last component of sessions_root>`.
    max_total_chars, budgets, template_path, sessions, jobs, redact : passed to `measure run`
        (budgets default to DEFAULT_BUDGETS).
    cache : False passes `--no-cache` to `measure run`.
    file_time_ms : `--pin-file-times` for `measure run`; default: pinned for roots under fixtures/
        (report_views.FIXTURE_FILE_TIME_MS), real file times otherwise.
    show_excerpts : let notebooks show transcript-derived text (subagent descriptions).
    notebooks_dir, build_dir : sources and scratch space (defaults `notebooks/`, `build/`).
    timeout : seconds per cell.

    Returns the report directory. Raises ReportError naming each failed notebook and cell.
    """
    from measure import plots, report_views  # noqa: PLC0415
    from measure.tables import read_tables  # noqa: PLC0415

    root_path = paths.resolve(sessions_root)
    name = paths.report_name(root_path)
    out_path = paths.resolve(out) if out else paths.root() / "reports" / name
    build = paths.resolve(build_dir) if build_dir else paths.root() / BUILD_DIR
    run_dir = build / "runs" / name
    max_chars = DEFAULT_MAX_TOTAL_CHARS if max_total_chars is None else int(max_total_chars)
    budgets = sorted(set(budgets)) if budgets else list(DEFAULT_BUDGETS)
    sources = notebook_sources(notebooks_dir)

    out_path.mkdir(parents=True, exist_ok=True)
    _clean_report_dir(out_path)
    shutil.rmtree(run_dir, ignore_errors=True)

    log(f"measure run --root {paths.portable(root_path)} --out {paths.portable(run_dir)}")
    report_views.run_measure(
        root_path,
        run_dir,
        max_total_chars=max_chars,
        budgets=budgets,
        template_path=template_path,
        sessions=sessions,
        jobs=jobs,
        redact=redact,
        cache=cache,
        file_time_ms=file_time_ms if file_time_ms is not None else report_views.file_time_for(root_path),
    )

    tables_dir = out_path / "tables"
    tables_dir.mkdir(parents=True, exist_ok=True)
    for csv in sorted(run_dir.glob("*.csv")):
        shutil.copyfile(csv, tables_dir / csv.name)
    if (run_dir / "run.json").is_file():
        shutil.copyfile(run_dir / "run.json", out_path / "run.json")

    tables = read_tables(run_dir)
    for fig_name, (table, fn) in plots.FIGURES.items():
        plots.save(fn(tables[table]), out_path / "figures" / f"{fig_name}.png")

    params = report_parameters(
        root_path,
        run_dir,
        max_total_chars=max_chars,
        budgets=budgets,
        template_path=template_path,
        sessions=sessions,
        show_excerpts=show_excerpts,
    )
    run_notebooks(
        sources,
        params,
        out_path,
        build_dir=build,
        html=True,
        params_dir=out_path / "params",
        timeout=timeout,
        log=log,
    )
    return out_path


def golden_plan(notebooks_dir: str | os.PathLike | None = None) -> list[tuple[Path, str, list[Path]]]:
    """The golden notebooks to make: (output folder, sessions root, sources) per GOLDEN_SETS entry."""
    base = paths.root() / GOLDEN_DIR
    sources = notebook_sources(notebooks_dir)
    plan = []
    for sub, (root_dir, stems) in GOLDEN_SETS.items():
        chosen = [s for s in sources if stems is None or s.stem in stems]
        plan.append((base / sub if sub != "." else base, root_dir, chosen))
    return plan


def golden(
    *,
    notebooks_dir: str | os.PathLike | None = None,
    build_dir: str | os.PathLike | None = None,
    timeout: int = EXECUTION_TIMEOUT,
    log=print,
) -> list[Path]:
    """Execute the notebooks of GOLDEN_SETS with `golden_parameters(root)` into tests/golden (normalized).

    Goldens whose source no longer exists are removed. Review the diff, then commit.
    """
    build = paths.resolve(build_dir) if build_dir else paths.root() / BUILD_DIR / "golden"
    written: list[Path] = []
    failures: list[NotebookFailure] = []
    for out_path, root_dir, sources in golden_plan(notebooks_dir):
        stems = {s.stem for s in sources}
        out_path.mkdir(parents=True, exist_ok=True)
        for stale in out_path.glob("*.ipynb"):
            if stale.stem not in stems:
                stale.unlink()
        log(f"golden notebooks on {root_dir} -> {paths.portable(out_path)}/")
        try:
            written += run_notebooks(
                sources, golden_parameters(root_dir), out_path, build_dir=build / out_path.name,
                html=False, timeout=timeout, log=log,
            )
        except ReportError as exc:
            failures += exc.failures
    if failures:
        raise ReportError(failures)
    return written


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def _budgets(text: str) -> list[int]:
    """Parse `20000,40000` (or one number) into positive ints."""
    try:
        values = [int(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers, got {text!r}") from None
    if not values or any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError("budgets must be positive integers")
    return values


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the `measure report` options to `parser`."""
    parser.add_argument("--root", default=FIXTURE_ROOT, help=f"sessions root to measure (default: {FIXTURE_ROOT})")
    parser.add_argument("--out", default=None, help="report directory (default: reports/<name of the root>)")
    parser.add_argument(
        "--max-total-chars", type=int, default=None, metavar="N",
        help=f"akm's maxTotalChars for the run (default: {DEFAULT_MAX_TOTAL_CHARS})",
    )
    parser.add_argument(
        "--budgets", type=_budgets, nargs="+", default=None, metavar="N",
        help="budgets of the budget sweep, as N,N,... or N N ... (default: 20000,40000,80000,160000,320000,640000)",
    )
    parser.add_argument("--template", default=None, metavar="PATH", help="extraction prompt template (default: the bundled one)")
    parser.add_argument("--session", dest="sessions", action="append", default=None, metavar="ID",
                        help="measure only this session id (repeatable)")
    parser.add_argument("--jobs", type=int, default=None, metavar="N", help="worker processes for measure run")
    parser.add_argument("--redact", action="store_true", help="hash session ids and descriptions in the tables")
    parser.add_argument("--no-cache", action="store_true", help="measure every session again (measure run --no-cache)")
    parser.add_argument(
        "--pin-file-times", type=int, default=None, metavar="MS",
        help="use MS (epoch ms) as every file's mtime/ctime (default: pinned for roots under fixtures/, real times otherwise)",
    )
    parser.add_argument("--show-excerpts", action="store_true",
                        help="allow transcript-derived text (subagent descriptions) in the notebooks")
    parser.add_argument("--timeout", type=int, default=EXECUTION_TIMEOUT, metavar="SECONDS", help="seconds one cell may run")
    parser.add_argument("--golden", action="store_true",
                        help=f"regenerate the golden notebooks under {GOLDEN_DIR}/ from the bundled fixtures instead of writing a report")
    return parser


def run(args: argparse.Namespace) -> int:
    """Run `measure report` with parsed arguments; return the exit code."""

    def log(message: str) -> None:
        print(message, flush=True)

    def from_cwd(path: str | None) -> str | None:
        # Paths on the command line are relative to where the command runs; the library's to the repo.
        return os.path.abspath(os.path.expanduser(path)) if path else None

    try:
        if args.golden:
            written = golden(timeout=args.timeout, log=log)
            log(f"golden notebooks written: {', '.join(paths.portable(p) for p in written)}")
            return 0
        budgets = sorted({b for group in args.budgets for b in group}) if args.budgets else None
        out = report(
            from_cwd(args.root),
            from_cwd(args.out),
            max_total_chars=args.max_total_chars,
            budgets=budgets,
            template_path=from_cwd(args.template),
            sessions=args.sessions,
            jobs=args.jobs,
            redact=args.redact,
            cache=not args.no_cache,
            file_time_ms=args.pin_file_times,
            show_excerpts=args.show_excerpts,
            timeout=args.timeout,
            log=log,
        )
    except ReportError as exc:
        print(f"measure report: {len(exc.failures)} notebook(s) failed:", file=sys.stderr)
        for failure in exc.failures:
            print(f"  {failure}", file=sys.stderr)
        return 1
    except RuntimeError as exc:  # measure run failed
        print(f"measure report: {exc}", file=sys.stderr)
        return 1
    where = paths.portable(out)
    log(f"Report written to {where}/ — open {where}/00-overview.html")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python -m measure.reports`."""
    parser = argparse.ArgumentParser(
        prog="python -m measure.reports",
        description="Measure a sessions root once and run every notebook on it into reports/<root-name>/.",
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
