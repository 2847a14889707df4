"""Run every notebook with papermill into a report: notebooks, HTML, figures, tables, parameters.

`measure report --root DIR` (measure/cli.py parses the options) measures the root once with
`measure run`, then executes `notebooks/*.py` (jupytext py:percent) one after the other in this
process, each in a fresh `python3` kernel, and writes::

    reports/<root-name>/
      00-overview.ipynb  00-overview.html  ...   executed notebooks (normalized) + HTML without code
      figures/<name>.png                         every figure of measure.report.plots.FIGURES
      tables/<name>.csv                          every table of the run
      params/<notebook>.yaml                     the parameters each notebook ran with
      run.json                                   the run's parameters, versions and input fingerprint

`--golden` instead executes the notebooks on the bundled fixtures (GOLDEN_SETS) into `tests/golden/`, where
nbval re-executes and compares them. Outputs carry no timestamps and no absolute paths of this machine, so two
runs on the same root give byte-identical files.
"""

from __future__ import annotations

import base64
import json
import multiprocessing
import os
import re
import shutil
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from measure import paths
from measure.akm.prefilter import DEFAULT_MAX_TOTAL_CHARS  # akm's default `maxTotalChars`
from measure.measurements.budget_sweep import DEFAULT_BUDGETS  # the sweep of a report unless --budgets is given
from measure.report.notebooks import (
    BUILD_DIR,
    EXECUTION_TIMEOUT,
    NotebookFailure,
    ReportError,
    notebook_sources,
    page_titles,
    render_index,
    run_notebooks,
)
from measure.runner import progress
from measure.runner.job import RunParams
from measure.runner.outputs import StagedDir, check_out_dir

FIXTURE_ROOT = "fixtures/default"
"""The bundled sessions root (repo-relative): `make report`'s default and the goldens' input."""

GOLDEN_DIR = "tests/golden"
"""Where `--golden` writes the normalized executed notebooks (repo-relative)."""

GOLDEN_SETS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    ".": (FIXTURE_ROOT, None),
    "s840": ("fixtures/s840", ("00-overview",)),
}
"""Golden notebooks: sub-folder of GOLDEN_DIR -> (sessions root, notebook stems or None for all); 00-overview
also runs on the #840-shaped fixture, so nbval checks the side-by-side with the published #840 figures too."""


def golden_parameters(sessions_root: str = FIXTURE_ROOT) -> dict[str, Any]:
    """Parameters of the golden notebooks: a bundled fixture root, measured inside each notebook (`out_dir`
    None, so every execution recomputes the numbers with the current code: a changed number fails nbval)."""
    return report_parameters(sessions_root, None, budgets=list(DEFAULT_BUDGETS))


def report_parameters(sessions_root: str | os.PathLike, run_dir: str | os.PathLike | None, *,
                      max_total_chars: int = DEFAULT_MAX_TOTAL_CHARS, budgets: list[int] | None = None,
                      template_path: str | os.PathLike | None = None, sessions: list[str] | None = None,
                      show_excerpts: bool = False, priorities: str | None = None) -> dict[str, Any]:
    """Plain-JSON parameters of a report's notebooks; paths portable; `run_dir` None: the notebooks measure."""
    return {
        "sessions_root": paths.portable(sessions_root),
        "out_dir": paths.portable(run_dir) if run_dir else None,
        "max_total_chars": int(max_total_chars),
        "budgets": [int(b) for b in budgets] if budgets else None,
        "template_path": paths.portable(template_path) if template_path else None,
        "sessions": [str(s) for s in sessions or []],
        "show_excerpts": bool(show_excerpts),
        "priorities": priorities,
    }


def report(sessions_root: str | os.PathLike = FIXTURE_ROOT, out: str | os.PathLike | None = None, *,
           max_total_chars: int | None = None, budgets: list[int] | None = None,
           template_path: str | os.PathLike | None = None, sessions: list[str] | None = None, jobs: int | None = None,
           redact: bool = False, cache: bool = True, file_time_ms: int | None = None, walk_order: str = "name",
           show_excerpts: bool = False, replay_at: str = "turn_end", extraction_dir: str | os.PathLike | None = None,
           build_dir: str | os.PathLike | None = None, timeout: int = EXECUTION_TIMEOUT, log=print,
           run_options: dict[str, Any] | None = None) -> Path:
    """Measure `sessions_root` once, run every notebook on the result, and write the report; return its directory.

    `out` defaults to `reports/<last component of sessions_root>`; most options are `measure run`'s (budgets
    default to DEFAULT_BUDGETS, `file_time_ms` to pinned times for roots under fixtures/, and a report always
    replays, at `replay_at`); `run_options` carries since_ms, session_cap, max_event_chars, priorities,
    cache_dir, executor and scheduler. `extraction_dir` is a `measure extract --out` directory for
    06-extraction (None: a recorded store, if any); `timeout` is seconds per cell. Raises ReportError naming
    each failed notebook and cell, and RuntimeError when the measurement fails.
    """
    from measure.runner.cache import default_cache_dir  # noqa: PLC0415

    options = run_options or {}
    root = paths.resolve(sessions_root)
    name = paths.report_name(root)
    out_path = paths.resolve(out) if out else paths.root() / "reports" / name
    build = paths.resolve(build_dir) if build_dir else paths.root() / BUILD_DIR
    params = RunParams.from_options(
        max_total_chars=max_total_chars, budgets=budgets or DEFAULT_BUDGETS, sessions=sessions, redact=redact,
        template=paths.resolve(template_path) if template_path else None, show_excerpts=show_excerpts,
        file_time_ms=file_time_ms if file_time_ms is not None else paths.file_time_for(root), walk_order=walk_order,
        replay=replay_at, since_ms=options.get("since_ms"), session_cap=options.get("session_cap") or None,
        max_event_chars=options.get("max_event_chars") or None, priorities=options.get("priorities"),
    )
    run_dir = build / "runs" / name
    how = {"jobs": jobs, "cache_dir": (options.get("cache_dir") or default_cache_dir()) if cache else None,
           "executor": options.get("executor", "local"), "scheduler": options.get("scheduler")}

    # Before any work: --out outside the root, empty or an earlier report's, writable. The
    # report is written beside it and renamed into place when complete.
    check_out_dir(run_dir, root, option="build dir")
    check_out_dir(out_path, root)
    with StagedDir(out_path, "report", root) as staged:
        if extraction_dir is None and (out_path / "extraction" / "extract.json").is_file():
            extraction_dir = out_path / "extraction"  # `measure extract --out <report>/extraction`
        shutil.rmtree(run_dir, ignore_errors=True)  # measure's own scratch under build/
        log(f"measure run --root {paths.portable(root)} --out {paths.portable(run_dir)}")
        # In a child process: what the run held is given back when it ends, before the kernels start. The
        # summary line counts what the child measured.
        vars(progress.current()).update(in_child(_measure, root, run_dir, params, how, staged))
        if extraction_dir is not None:  # 06-extraction reads <run dir>/extraction
            if not (paths.resolve(extraction_dir) / "extract.json").is_file():
                raise RuntimeError(f"no `measure extract` results (extract.json) in {paths.portable(extraction_dir)}")
            shutil.copytree(paths.resolve(extraction_dir), run_dir / "extraction")
        # What the run measures is also what the notebooks are told it measured.
        shown = report_parameters(root, run_dir, max_total_chars=params.budget, budgets=list(params.budgets),
                                  template_path=template_path, sessions=sessions, show_excerpts=show_excerpts,
                                  priorities=params.priorities)
        sources = notebook_sources()
        written = run_notebooks(sources, shown, staged, build_dir=build, params_dir=staged / "params", timeout=timeout,
                                log=log)
        save_figures([p for p in written if p.suffix == ".ipynb"], staged / "figures", run_dir)
        render_index(staged, page_titles(sources))
    return out_path


def save_figures(executed: list[Path], folder: Path, run_dir: Path) -> None:
    """Every figure of plots.FIGURES as `folder/<name>.png`: the PNG of the first cell that calls its function
    (`plots.<function>(...)`), else drawn from the run's table the way a notebook shows it (nbsetup.png)."""
    from measure.report import nbsetup  # noqa: PLC0415 - matplotlib: with the figures
    from measure.report.plots import FIGURES  # noqa: PLC0415
    from measure.runner.tables import read_table  # noqa: PLC0415

    names = {fn.__name__: name for name, (_, fn) in FIGURES.items()}
    folder.mkdir(parents=True, exist_ok=True)
    for path in executed:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            called = re.match(r"plots\.(\w+)\(", "".join(cell["source"]).strip().splitlines()[-1]) if cell["source"] else None
            png = next((o["data"]["image/png"] for o in cell.get("outputs", ()) if "image/png" in o.get("data", {})), None)
            if called and png and called[1] in names:
                (folder / f"{names.pop(called[1])}.png").write_bytes(base64.b64decode(png))
    for name in names.values():
        table, fn = FIGURES[name]
        (folder / f"{name}.png").write_bytes(nbsetup.png(fn(read_table(run_dir, table))))


def _measure(root: Path, run_dir: Path, params: RunParams, how: dict, out_path: Path) -> dict:
    """`measure run` into `run_dir` (`how`: run_measurement's options), then its tables and run.json into the
    report; returns what the progress counted (the summary line is printed by the parent)."""
    from measure.runner.run import run_measurement  # noqa: PLC0415

    try:
        run_measurement(root, run_dir, params, **how)
    except FileNotFoundError as exc:
        raise RuntimeError(f"measure run failed: {exc}") from exc
    (out_path / "tables").mkdir(parents=True, exist_ok=True)
    for src, dst in [*((csv, out_path / "tables" / csv.name) for csv in sorted(run_dir.glob("*.csv"))),
                     (run_dir / "run.json", out_path / "run.json")]:
        try:  # a second name for the run's file (the scratch run is replaced whole, never written into)
            os.link(src, dst)
        except OSError:  # another filesystem, or links not allowed
            shutil.copyfile(src, dst)
    bar = progress.current()
    return {k: getattr(bar, k) for k in ("total", "total_bytes", "done", "done_bytes", "_seconds")}


def in_child(fn, *args):
    """`fn(*args)` in a forked child process, its exception raised here; the child ends with this
    process, even a SIGKILLed one. In this process instead off Linux, and in a process that has
    loaded polars (a test, a notebook): a fork can deadlock in polars' thread pool."""
    if not sys.platform.startswith("linux") or "polars" in sys.modules:
        return fn(*args)
    from measure.runner.executor import _worker_init  # noqa: PLC0415 - ends the child with this process

    fork = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=1, mp_context=fork, initializer=_worker_init, initargs=(os.getpid(),)) as pool:
        return pool.submit(fn, *args).result()


def golden_plan() -> list[tuple[Path, str, list[Path]]]:
    """The golden notebooks to make: (output folder, sessions root, sources) per GOLDEN_SETS entry."""
    base = paths.root() / GOLDEN_DIR
    sources = notebook_sources()
    return [(base / sub if sub != "." else base, root_dir, [s for s in sources if stems is None or s.stem in stems])
            for sub, (root_dir, stems) in GOLDEN_SETS.items()]


def golden(*, timeout: int = EXECUTION_TIMEOUT, log=print) -> list[Path]:
    """Execute the notebooks of GOLDEN_SETS with `golden_parameters(root)` into tests/golden (normalized),
    removing goldens whose source no longer exists. Review the diff, then commit."""
    build = paths.root() / BUILD_DIR / "golden"
    written: list[Path] = []
    failures: list[NotebookFailure] = []
    for out_path, root_dir, sources in golden_plan():
        stems = {s.stem for s in sources}
        out_path.mkdir(parents=True, exist_ok=True)
        for stale in out_path.glob("*.ipynb"):
            if stale.stem not in stems:
                stale.unlink()
        log(f"golden notebooks on {root_dir} -> {paths.portable(out_path)}/")
        try:
            written += run_notebooks(sources, golden_parameters(root_dir), out_path, build_dir=build / out_path.name,
                                     html=False, timeout=timeout, log=log)
        except ReportError as exc:
            failures += exc.failures
    if failures:
        raise ReportError(failures)
    return written
