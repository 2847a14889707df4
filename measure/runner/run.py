"""The main job: every strategy over every session of a root, written as tables."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import platform
import shutil
from dataclasses import asdict, dataclass, replace
from importlib.metadata import version
from pathlib import Path

from measure import __version__
from measure.akm.prompt import load_template
from measure.akm.read import file_size, list_sessions, rel, walk_jsonl
from measure.measurements.breakdown import breakdown_rows
from measure.measurements.llm_calls import run_cost_rows
from measure.measurements.priorities import DEFAULT as DEFAULT_PRIORITIES
from measure.measurements.priorities import choice
from measure.measurements.verdict import summarise, verdict_rows
from measure.paths import portable
from measure.runner import inputs
from measure.runner.cache import Cache, check_cache_dir, measuring_key, run_key, session_key, store_entry
from measure.runner.executor import Task, run_tasks
from measure.runner.inputs import FileState, StatIndex, session_files
from measure.runner.job import RunParams, SessionOutcome, _error, internal_error
from measure.runner.merge import Merged
from measure.runner.outputs import StagedDir
from measure.runner.progress import Progress, current
from measure.runner.redact import redact, redact_path, redact_row
from measure.runner.select import select_sessions


@dataclass(frozen=True)
class RunSummary:
    """What a run measured and where it wrote the tables."""

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
                n = sum(1 for _ in walk_jsonl(dirpath))
                reason = f"{n} subagent transcript(s) whose parent session file is missing; akm never reads them"
                rows.append(_error(rel(dirpath, root), None, "orphan_subagents", reason, n))
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


def run_measurement(root: str | os.PathLike, out_dir: str | os.PathLike, params: RunParams = RunParams(),
                    jobs: int | None = None, cache_dir: str | os.PathLike | None = None,
                    progress: Progress | None = None, executor: str = "local",
                    scheduler: str | None = None) -> RunSummary:
    """Measure every session under `root` and write the tables to `out_dir`.

    `executor` is "local" (`jobs` processes; 1 measures in this process) or "dask" (the cluster at
    `scheduler`, or a LocalCluster of `jobs` workers). With a `cache_dir`, sessions whose files,
    parameters and code are unchanged are not measured. `progress` (default: `progress.current()`)
    is told the sessions and the bytes to measure, and stopped when they are.
    """
    root = os.path.abspath(os.fspath(root))
    if not os.path.isdir(root):
        raise FileNotFoundError(f"sessions root not found: {root}")
    if cache_dir:
        check_cache_dir(cache_dir, root, out_dir)
    # Before any work: --out outside the root, replaceable, writable; written into a staging
    # sibling and renamed into place only when complete, so a killed run leaves the last output.
    with StagedDir(out_dir, "run", root) as staging:
        summary = _measure_into(root, staging, params, jobs, cache_dir, progress or current(), executor, scheduler)
    return replace(summary, out_dir=os.fspath(out_dir))


def _measure_into(root: str, out: Path, params: RunParams, jobs, cache_dir, bar: Progress, executor, scheduler) -> RunSummary:
    template = load_template(params.template_path)
    list_errors: list = []
    listings = list_sessions(root, since_ms=params.since_ms, errors=list_errors, file_time_ms=params.file_time_ms,
                             walk_order=params.walk_order)
    if params.sessions:
        listings = select_sessions(listings, params.sessions, root, params.redact)
    listed = [rel(s.path, root) for s in listings]
    errors = [_error(rel(p, root), None, kind, reason) for p, kind, reason in list_errors] + orphan_errors(root)
    if params.redact:  # the sessions' own rows come redacted from the job (redact.protect_outcome)
        for row in errors:
            redact_row(row)
    # The merge order (largest parent first) is the one tables were always built in: rows whose
    # sort keys tie keep it, whatever executor measured them and in which order they finished.
    order = sorted(listings, key=lambda s: -file_size(s.path))
    # Under --redact nothing that names the input is kept: no stat index (it holds paths) and no per-session
    # entries (rows before redaction); only the redacted tables of a whole run, under a key that is a digest.
    index = StatIndex(None if params.redact else cache_dir, root)
    cache = Cache(cache_dir) if cache_dir else None
    if cache is not None:
        cache.clean_tmp()
    states: dict[str, list[FileState]] = {}
    keys: list[str | None] = []
    measuring = measuring_key(params, template)
    for s in order:
        files, found = session_files(s.path, root, params.walk_order), []
        for p in files:
            with contextlib.suppress(OSError):  # unreadable now: measured all the same, the reader says why
                found.append(index.state(p))
        states[s.path] = found
        keys.append(session_key(root, s.path, found, measuring) if cache and len(found) == len(files) else None)
    whole = None
    if cache is not None and all(keys):
        # Every session and the listing unchanged: the tables are the stored ones, copied
        # without measuring, decoding rows or loading polars.
        whole = run_key(keys, listed, errors, root, _versions())
        hit = cache.load_run(whole, out)
        if hit is not None:
            index.save()
            bar.start(len(order), done=len(order))
            bar.stop()
            return RunSummary(len(listings), hit["measured"], hit["errors"], os.fspath(out), len(order), index.hashed, index.reused)
    per_session = cache is not None and not params.redact
    run_order = [redact_path(p) for p in listed] if params.redact else listed
    rank = {p: i for i, p in enumerate(run_order)}
    # Rows are merged as they arrive, into columnar tables (20,000 sessions' rows as dicts were 1.5 GB);
    # each session keeps its place in `order`, so the tables are the ones a merge in that order gives.
    spill = out / ".measure-spill"  # inside the staging folder: removed below, or with it
    merged = Merged(spill)
    todo = []
    for i, k in enumerate(keys):
        o = cache.load(k) if per_session and k else None
        if o is None:
            todo.append(i)
        else:
            _merge(merged, i, o, rank)
    # Local workers store their own entries (in parallel, not in this process); a Dask worker's disk is
    # not this cache's, so the cluster's outcomes are stored here.
    entries = {i: cache.entry(keys[i]) for i in todo if per_session and keys[i]}
    local = executor == "local"
    tasks = [Task(root, order[i].path, params, template, sum(f.size for f in states[order[i].path]),
                  entries.get(i) if local else None) for i in todo]
    bar.start(len(order), sum(t.size for t in tasks), len(order) - len(todo))  # bytes: measured now, not from the cache
    for t, o in run_tasks(tasks, jobs, executor, scheduler):
        i = todo[t]
        if not local and i in entries and not internal_error(o.errors):  # as measure_task does
            store_entry(entries[i], o)
        _merge(merged, i, o, rank)
        bar.advance(tasks[t].size)
    bar.stop()
    index.save()
    from measure.runner.tables import Rows, frame, write_tables  # polars: only when tables are built
    from measure.schema import TABLES

    for pos in sorted(merged.errors):
        errors.extend(merged.errors[pos])
    heights: dict[str, int] = {}

    def emit(name: str, df) -> None:
        heights[name] = df.height
        write_tables({name: df}, out)

    # One table at a time, built, written and let go: first budget_sweep, the largest, while nothing else is
    # held; then the tables the whole-run tables read (kept until those are built), then those, then the rest.
    emit("budget_sweep", merged.frame("budget_sweep"))
    frames = {}
    for name in (n for n in TABLES if n in _READ_BY_DERIVED):
        emit(name, frames.setdefault(name, merged.frame(name)))
    run_cost = run_cost_rows(Rows(frames["llm_calls"]), run_order, params.session_cap)
    derived = {
        "run_cost": run_cost,
        **decision_rows(Rows(frames["sessions"]), Rows(frames["eviction"]), run_cost, params.priorities, params.session_cap),
        "breakdown": breakdown_rows(Rows(frames["session_info"]), Rows(frames["sessions"]), Rows(frames["eviction"]),
                                    Rows(frames["subagents"])),
        "errors": errors,
    }
    measured = frames["sessions"]["session_path"].n_unique()
    frames.clear()
    for name, rows in derived.items():
        emit(name, frame(TABLES[name], rows))
    del derived
    for name in TABLES:
        if name not in heights:
            emit(name, merged.frame(name))
    shutil.rmtree(spill, ignore_errors=True)
    _write_run_json(out, root, params, template, listings, heights, inputs.fingerprint(root, states))
    if whole is not None and not internal_error(errors):
        files = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))  # the staging marker aside
        cache.store_run(whole, out, files, {"measured": measured, "errors": len(errors)})
    return RunSummary(len(listings), measured, len(errors), os.fspath(out), len(order) - len(todo), index.hashed, index.reused)


def decision_rows(sessions, eviction, run_cost, priorities: str = DEFAULT_PRIORITIES, cap: int = 25) -> dict[str, list[dict]]:
    """The verdict, choice and robustness tables from a run's sessions, eviction and run_cost rows (pure)."""
    from measure.measurements.robustness import robustness_rows  # numpy: with polars, after the workers

    summary = summarise(sessions, eviction, run_cost)
    walk, choice_rows = choice(summary, priorities, cap)
    return {"verdict": verdict_rows(summary, walk.winner if walk else None), "choice": choice_rows,
            "robustness": robustness_rows(summary, walk)}


_READ_BY_DERIVED = ("llm_calls", "sessions", "eviction", "session_info", "subagents")
"""The tables the whole-run tables (run_cost, verdict, choice, robustness, breakdown) are built from."""


def _merge(merged: Merged, position: int, o: SessionOutcome, rank: dict[str, int]) -> None:
    calls = o.tables.get("llm_calls")
    if calls:  # akm's processing order is the listing's: known here, not to the session's job
        calls["run_order"] = [rank.get(p) for p in calls["session_path"]]
    merged.add(position, o.tables, o.errors)


@functools.lru_cache(maxsize=1)
def _versions() -> dict:
    return {"measure": __version__, "python": platform.python_version(), **{n: version(n) for n in ("orjson", "polars", "matplotlib")}}


def _write_run_json(out: Path, root: str, params: RunParams, template: str, listings, heights: dict[str, int],
                    fingerprint: str) -> None:
    p = asdict(params)
    root_name, root_shown = os.path.basename(root.rstrip(os.sep)), portable(root)
    if params.redact:  # the root's name and the chosen session ids name the input
        root_name, root_shown = redact(root_name), redact(root_shown)
        # a value taken from a redacted report is already a hash; anything else names the input
        p["sessions"] = [x if x.startswith("sha256:") else redact(x) for x in params.sessions]
    if params.template_path:
        p["template_path"] = os.path.basename(params.template_path)
    # "root" as the report shows it (repo-relative or ~/...): the notebooks read the root from here.
    doc = {"schema_version": 1, "parameters": p, "template_sha256": hashlib.sha256(template.encode()).hexdigest(),
           "versions": dict(_versions()), "rows": dict(sorted(heights.items())),
           "input": {"root_name": root_name, "root": root_shown, "sessions_listed": len(listings),
                     "fingerprint": fingerprint, "fingerprint_method": inputs.METHOD}}
    (out / "run.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
