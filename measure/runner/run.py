"""The main job: every strategy over every session of a root, written as tables."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from measure import __version__
from measure.akm.prompt import load_template
from measure.akm.read import list_sessions, rel, walk_files
from measure.measurements.breakdown import breakdown_rows
from measure.measurements.llm_calls import run_cost_rows
from measure.measurements.verdict import verdict_rows
from measure.paths import portable
from measure.runner import inputs
from measure.runner.cache import Cache, run_key, session_key
from measure.runner.executor import Task, run_tasks
from measure.runner.inputs import FileState, StatIndex, session_files
from measure.runner.job import RunParams, SessionOutcome, _error
from measure.runner.outputs import StagedDir, check_cache_dir
from measure.runner.progress import Progress
from measure.runner.progress import resolve as resolve_progress
from measure.runner.redact import _redact_rows, redact, redact_path
from measure.runner.select import select_sessions


@dataclass(frozen=True)
class RunSummary:
    sessions: int
    measured: int
    errors: int
    out_dir: str
    cached: int = 0  # sessions whose outcome came from the cache
    files_hashed: int = 0  # files read for a content digest (stat changed or new)
    files_unchanged: int = 0  # files whose stat matched the index: not read


def orphan_errors(root: str) -> list[dict]:
    """`<project>/<id>/subagents/` folders whose `<id>.jsonl` is gone (rotated off disk)."""
    rows = []
    stack = [root]  # explicit stack, not os.walk's recursion: folders may nest 1,200 deep
    while stack:
        dirpath = stack.pop()
        if os.path.basename(dirpath) == "subagents" and dirpath != root:
            session_dir = os.path.dirname(dirpath)
            if session_dir != root and not os.path.exists(session_dir + ".jsonl"):
                n = sum(1 for p in walk_files(dirpath) if p.endswith(".jsonl"))
                rows.append(
                    _error(
                        rel(dirpath, root),
                        None,
                        "orphan_subagents",
                        f"{n} subagent transcript(s) whose parent session file is missing; akm never reads them",
                        n,
                    )
                )
            continue
        try:
            with os.scandir(dirpath) as it:
                subdirs = sorted(e.path for e in it if _is_real_dir(e))
        except OSError:
            continue
        stack.extend(reversed(subdirs))
    return rows


def _is_real_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def run_measurement(
    root: str | os.PathLike,
    out_dir: str | os.PathLike,
    params: RunParams = RunParams(),
    jobs: int | None = None,
    cache_dir: str | os.PathLike | None = None,
    progress: Progress | Callable[[int, int], None] | None = None,
    executor: str = "local",
    scheduler: str | None = None,
) -> RunSummary:
    """Measure every session under `root` and write the tables to `out_dir`.

    `executor` is "local" (`jobs` processes; 1 measures in this process) or "dask" (the
    cluster at `scheduler`, or a LocalCluster of `jobs` workers when None). With a
    `cache_dir`, sessions whose files, parameters and code are unchanged are not measured.
    `progress` (default: `measure.runner.progress.current()`, silent unless the command line
    made one active) is told the sessions and the bytes to measure, and stopped when they are
    measured; a plain `callback(done, total)` is called after each session instead.
    """
    root = os.path.abspath(os.fspath(root))
    if not os.path.isdir(root):
        raise FileNotFoundError(f"sessions root not found: {root}")
    if cache_dir:
        check_cache_dir(cache_dir, root)
    # Before any work: --out outside the root, replaceable, writable; written into a staging
    # sibling and renamed into place only when complete (issue #17).
    staged = StagedDir(out_dir, "run", root)
    try:
        summary = _measure_into(root, staged.path, params, jobs, cache_dir, progress, executor, scheduler)
    except BaseException:
        staged.abort()
        raise
    staged.commit()
    return replace(summary, out_dir=os.fspath(out_dir))


def _measure_into(root: str, out_dir: Path, params: RunParams, jobs, cache_dir, progress, executor, scheduler) -> RunSummary:
    template = load_template(params.template_path)
    list_errors: list = []
    listings = list_sessions(
        root, since_ms=params.since_ms, errors=list_errors, file_time_ms=params.file_time_ms, walk_order=params.walk_order
    )
    if params.sessions:
        listings = select_sessions(listings, params.sessions, root)
    errors = [_error(rel(p, root), None, kind, reason) for p, kind, reason in list_errors]
    errors += orphan_errors(root)
    if params.redact:  # the sessions' own rows come redacted from the job (redact.protect_outcome)
        _redact_rows({"errors": errors})
    # The merge order (largest parent first) is the one tables were always built in: rows whose
    # sort keys tie keep it, whatever executor measured them and in which order they finished.
    order = sorted(listings, key=lambda s: -_size(s.path))
    # Under --redact nothing that names the input is kept: no stat index (it holds paths) and no
    # per-session entries (they hold rows before redaction); only the redacted tables of a
    # whole run are, under a key that is a digest.
    index = StatIndex(None if params.redact else cache_dir, root)
    cache = Cache(cache_dir) if cache_dir else None
    if cache is not None:
        cache.clean_tmp()
    states: dict[str, list[FileState]] = {}
    keys: list[str | None] = []
    for s in order:
        files, key = [], None
        try:
            files = [index.state(p) for p in session_files(s.path)]
            if cache is not None:
                key = session_key(root, s.path, files, params, template)
        except OSError:
            # unreadable now: measure it and let the reader report why
            files = [f for f in (_try_state(index, p) for p in session_files(s.path)) if f is not None]
        states[s.path] = files
        keys.append(key)
    out = Path(out_dir)
    whole = None
    if cache is not None and all(keys):
        # Every session and the listing unchanged: the tables are the stored ones, copied
        # without measuring, decoding rows or loading polars.
        whole = run_key(keys, [rel(s.path, root) for s in listings], errors, root, _versions())
        hit = cache.load_run(whole, out)
        if hit is not None:
            index.save()
            bar = resolve_progress(progress)
            bar.start(len(order), 0)
            for _ in order:
                bar.advance(0)
            bar.stop()
            return RunSummary(len(listings), hit["measured"], hit["errors"], os.fspath(out), len(order), index.hashed, index.reused)
    per_session = cache is not None and not params.redact
    outcomes: list[SessionOutcome | None] = [cache.load(k) if per_session and k else None for k in keys]
    cached = sum(o is not None for o in outcomes)
    todo = [i for i, o in enumerate(outcomes) if o is None]
    tasks = [Task(root, order[i].path, params, template, sum(f.size for f in states[order[i].path])) for i in todo]
    bar = resolve_progress(progress)
    bar.start(len(order), sum(t.size for t in tasks))  # bytes: what is measured now, not what the cache holds
    for _ in range(cached):
        bar.advance(0)
    for i, o in zip(todo, run_tasks(tasks, jobs=jobs, executor=executor, scheduler=scheduler, progress=bar)):
        outcomes[i] = o
        # An internal error is not cached: a fixed measure should try again.
        if per_session and keys[i] and not any(e["kind"] == "internal_error" for e in o.errors):
            cache.store(keys[i], o)
    bar.stop()
    index.save()
    from measure.runner.tables import (  # polars: only when tables are built
        frame,
        write_tables,
    )
    from measure.schema import TABLES

    rows: dict[str, list[dict]] = {name: [] for name in TABLES}
    for o in outcomes:
        assert o is not None
        for name, table_rows in o.tables.items():
            rows[name].extend(table_rows)
        errors.extend(o.errors)
    run_order = [rel(s.path, root) for s in listings]
    if params.redact:
        run_order = [redact_path(p) for p in run_order]
    rank = {p: i for i, p in enumerate(run_order)}
    for row in rows["llm_calls"]:
        row["run_order"] = rank.get(row["session_path"])
    rows["run_cost"] = run_cost_rows(rows["llm_calls"], run_order, params.session_cap)
    rows["verdict"] = verdict_rows(rows["sessions"], rows["eviction"], rows["run_cost"])
    rows["breakdown"] = breakdown_rows(rows["session_info"], rows["sessions"], rows["eviction"], rows["subagents"])
    rows["errors"] = errors
    frames = {name: frame(TABLES[name], rows[name]) for name in TABLES}
    written = write_tables(frames, out)
    _write_run_json(out, root, params, listings, frames, inputs.fingerprint(root, states))
    measured = len({r["session_path"] for r in rows["sessions"]})
    if whole is not None and cache is not None and not any(e["kind"] == "internal_error" for e in errors):
        cache.store_run(whole, out, [p.name for p in written] + ["run.json"], {"measured": measured, "errors": len(errors)})
    return RunSummary(len(listings), measured, len(errors), os.fspath(out), cached, index.hashed, index.reused)


def _try_state(index: StatIndex, path: str) -> FileState | None:
    try:
        return index.state(path)
    except OSError:
        return None


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


@functools.lru_cache(maxsize=1)
def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    found = {"measure": __version__, "python": platform.python_version()}
    for dist in ("orjson", "polars", "matplotlib"):
        try:
            found[dist] = version(dist)
        except PackageNotFoundError:
            found[dist] = None
    return found


def _write_run_json(out: Path, root: str, params: RunParams, listings, frames, fingerprint: str) -> None:
    p = asdict(params)
    root_name, root_shown = os.path.basename(root.rstrip(os.sep)), portable(root)
    if params.redact:  # the root's name and the chosen session ids name the input
        root_name, root_shown = redact(root_name), redact(root_shown)
        # a value taken from a redacted report is already a hash; anything else names the input
        p["sessions"] = [x if x.startswith("sha256:") else redact(x) for x in params.sessions]
    if params.template_path:
        p["template_path"] = os.path.basename(params.template_path)
    doc = {
        "schema_version": 1,
        "parameters": p,
        "template_sha256": hashlib.sha256(load_template(params.template_path).encode()).hexdigest(),
        "versions": dict(_versions()),
        "input": {
            "root_name": root_name,
            # As the report shows it (repo-relative or ~/...): the notebooks read the root from here.
            "root": root_shown,
            "sessions_listed": len(listings),
            "fingerprint": fingerprint,
            "fingerprint_method": inputs.METHOD,
        },
        "rows": {name: df.height for name, df in sorted(frames.items())},
    }
    with open(out / "run.json", "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
