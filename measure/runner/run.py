"""The main job: every strategy over every session of a root, written as tables."""

from __future__ import annotations

import hashlib
import json
import os
import platform
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from measure import __version__
from measure.akm.prompt import load_template
from measure.akm.read import list_sessions, rel
from measure.measurements.breakdown import breakdown_rows
from measure.measurements.llm_calls import run_cost_rows
from measure.measurements.verdict import verdict_rows
from measure.runner.cache import _cached_measure, _file_key, _subagent_files
from measure.runner.job import RunParams, SessionOutcome, _error
from measure.runner.progress import Progress
from measure.runner.progress import resolve as resolve_progress
from measure.runner.redact import _redact_rows
from measure.runner.select import select_sessions
from measure.runner.tables import frame, write_tables
from measure.schema import TABLES


@dataclass(frozen=True)
class RunSummary:
    sessions: int
    measured: int
    errors: int
    out_dir: str


def orphan_errors(root: str) -> list[dict]:
    """`<project>/<id>/subagents/` folders whose `<id>.jsonl` is gone (rotated off disk)."""
    rows = []
    for dirpath, dirnames, _ in os.walk(root):
        dirnames.sort()
        if os.path.basename(dirpath) == "subagents" and "subagents" not in os.path.relpath(dirpath, root).split(os.sep)[:-1]:
            session_dir = os.path.dirname(dirpath)
            if session_dir != root and not os.path.exists(session_dir + ".jsonl"):
                n = sum(len([f for f in fs if f.endswith(".jsonl")]) for _, _, fs in os.walk(dirpath))
                rows.append(
                    _error(
                        rel(dirpath, root),
                        None,
                        "orphan_subagents",
                        f"{n} subagent transcript(s) whose parent session file is missing; akm never reads them",
                        n,
                    )
                )
            dirnames[:] = []
    return rows


def run_measurement(
    root: str | os.PathLike,
    out_dir: str | os.PathLike,
    params: RunParams = RunParams(),
    jobs: int | None = None,
    cache_dir: str | os.PathLike | None = None,
    progress: Progress | Callable[[int, int], None] | None = None,
) -> RunSummary:
    """Measure every session under `root` and write the tables to `out_dir`.

    `progress` (default: `measure.runner.progress.current()`, silent unless the command line
    made one active) is told the sessions and their bytes, and stopped when they are measured;
    a plain `callback(done, total)` is called after each session instead.
    """
    root = os.path.abspath(os.fspath(root))
    if not os.path.isdir(root):
        raise FileNotFoundError(f"sessions root not found: {root}")
    template = load_template(params.template_path)
    list_errors: list = []
    listings = list_sessions(root, since_ms=params.since_ms, errors=list_errors, file_time_ms=params.file_time_ms)
    if params.sessions:
        listings = select_sessions(listings, params.sessions, root)
    errors = [_error(rel(p, root), None, kind, reason) for p, kind, reason in list_errors]
    errors += orphan_errors(root)
    # Largest first, so the pool does not end waiting on one big session.
    order = sorted(listings, key=lambda s: -_size(s.path))
    jobs_list = [(root, s.path, params, template, os.fspath(cache_dir) if cache_dir else None) for s in order]
    outcomes: list[SessionOutcome] = []
    sizes = [sum(map(_size, (s.path, *_subagent_files(s.path)))) for s in order]
    bar = resolve_progress(progress)
    bar.start(len(jobs_list), sum(sizes))
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    if workers > 1 and len(jobs_list) > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for i, o in enumerate(pool.map(_cached_measure, jobs_list, chunksize=1), 1):
                outcomes.append(o)
                bar.advance(sizes[i - 1])
    else:
        for i, job in enumerate(jobs_list, 1):
            outcomes.append(_cached_measure(job))
            bar.advance(sizes[i - 1])
    bar.stop()
    rows: dict[str, list[dict]] = {name: [] for name in TABLES}
    for o in outcomes:
        for name, table_rows in o.tables.items():
            rows[name].extend(table_rows)
        errors.extend(o.errors)
    rows["run_cost"] = run_cost_rows(rows["llm_calls"], [rel(s.path, root) for s in listings], params.session_cap)
    rows["verdict"] = verdict_rows(rows["sessions"], rows["eviction"], rows["run_cost"])
    rows["breakdown"] = breakdown_rows(rows["session_info"], rows["sessions"], rows["eviction"], rows["subagents"])
    rows["errors"] = errors
    if params.redact:
        _redact_rows(rows)
    frames = {name: frame(TABLES[name], rows[name]) for name in TABLES}
    out = Path(out_dir)
    write_tables(frames, out)
    _write_run_json(out, root, params, listings, frames)
    measured = len({r["session_path"] for r in rows["sessions"]})
    return RunSummary(len(listings), measured, len(errors), os.fspath(out))


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def fingerprint(root: str, listings) -> str:
    """A digest of what was measured: each file's path, size and head/tail content.

    mtimes are left out so that two clones of the same fixtures agree.
    """
    h = hashlib.sha256()
    for s in sorted(listings, key=lambda s: s.path):
        for p in [s.path, *_subagent_files(s.path)]:
            try:
                key = _file_key(p, with_mtime=False)
            except OSError:
                continue
            h.update(f"{rel(p, root)}\0{key}\n".encode())
    return h.hexdigest()


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    found = {"measure": __version__, "python": platform.python_version()}
    for dist in ("orjson", "polars", "matplotlib"):
        try:
            found[dist] = version(dist)
        except PackageNotFoundError:
            found[dist] = None
    return found


def _write_run_json(out: Path, root: str, params: RunParams, listings, frames) -> None:
    p = asdict(params)
    if params.template_path:
        p["template_path"] = os.path.basename(params.template_path)
    doc = {
        "schema_version": 1,
        "parameters": p,
        "template_sha256": hashlib.sha256(load_template(params.template_path).encode()).hexdigest(),
        "versions": _versions(),
        "input": {
            "root_name": os.path.basename(root.rstrip(os.sep)),
            "sessions_listed": len(listings),
            "fingerprint": fingerprint(root, listings),
        },
        "rows": {name: df.height for name, df in sorted(frames.items())},
    }
    with open(out / "run.json", "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
