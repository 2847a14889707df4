"""The main job: every strategy over every session of a root, written as tables."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import polars as pl

from measure import __version__
from measure.akm.prompt import load_template
from measure.akm.read import list_sessions, rel, walk_files
from measure.measurements.llm_calls import run_cost_rows
from measure.runner.cache import _cached_measure, _file_key, _subagent_files
from measure.runner.job import RunParams, SessionOutcome, _error
from measure.runner.outputs import StagedDir, check_cache_dir
from measure.runner.redact import _redact_rows, redact, redact_path
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


def _progress(done: int, total: int) -> None:
    if sys.stderr.isatty() and total >= 20:
        sys.stderr.write(f"\rmeasure: {done}/{total} sessions")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def run_measurement(
    root: str | os.PathLike,
    out_dir: str | os.PathLike,
    params: RunParams = RunParams(),
    jobs: int | None = None,
    cache_dir: str | os.PathLike | None = None,
    progress=_progress,
) -> RunSummary:
    """Measure every session under `root` and write the tables to `out_dir`."""
    root = os.path.abspath(os.fspath(root))
    if not os.path.isdir(root):
        raise FileNotFoundError(f"sessions root not found: {root}")
    if cache_dir:
        check_cache_dir(cache_dir, root)
    # Before any work: --out outside the root, replaceable, writable (issue #17).
    staged = StagedDir(out_dir, "run", root)
    try:
        summary = _measure_into(root, staged.path, params, jobs, cache_dir, progress)
    except BaseException:
        staged.abort()
        raise
    staged.commit()
    return RunSummary(summary.sessions, summary.measured, summary.errors, os.fspath(out_dir))


def _measure_into(root: str, out: Path, params: RunParams, jobs, cache_dir, progress) -> RunSummary:
    template = load_template(params.template_path)
    list_errors: list = []
    listings = list_sessions(root, since_ms=params.since_ms, errors=list_errors, file_time_ms=params.file_time_ms)
    if params.sessions:
        wanted = set(params.sessions)
        listings = [s for s in listings if s.session_id in wanted or rel(s.path, root) in wanted]
    errors = [_error(rel(p, root), None, kind, reason) for p, kind, reason in list_errors]
    errors += orphan_errors(root)
    if params.redact:
        _redact_rows({"errors": errors})
    spill = out / ".measure-rows"  # inside the staging folder: gone with it, whatever happens
    spill.mkdir()
    try:
        return _collect_and_write(root, out, params, jobs, cache_dir, progress, template, listings, errors, spill)
    finally:
        shutil.rmtree(spill, ignore_errors=True)


def _collect_and_write(root, out, params, jobs, cache_dir, progress, template, listings, errors, spill) -> RunSummary:
    # Largest first, so the pool does not end waiting on one big session.
    order = sorted(listings, key=lambda s: -_size(s.path))
    jobs_list = [(root, s.path, params, template, os.fspath(cache_dir) if cache_dir else None) for s in order]
    collected = _Collected(params.redact, spill)
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    if workers > 1 and len(jobs_list) > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for i, o in enumerate(pool.map(_cached_measure, jobs_list, chunksize=1), 1):
                collected.add(o)
                progress(i, len(jobs_list))
    else:
        for i, job in enumerate(jobs_list, 1):
            collected.add(_cached_measure(job))
            progress(i, len(jobs_list))
    errors.extend(collected.errors)
    order = [rel(s.path, root) for s in listings]
    if params.redact:
        order = [redact_path(p) for p in order]
    heights: dict[str, int] = {}
    llm: list[dict] = []
    measured = 0
    # One table at a time, written then freed, the largest (budget_sweep) first while the heap is
    # smallest: peak memory at 20,000 sessions (issue #17).
    for name in sorted(TABLES, key=lambda n: n != "budget_sweep"):
        if name == "run_cost":
            df = frame(TABLES[name], run_cost_rows(llm, order, params.session_cap))
        elif name == "errors":
            df = frame(TABLES[name], errors)
        else:
            df = collected.table(name)
        if name == "llm_calls":
            llm = df.select("strategy", "session_path", "llm_calls").to_dicts()
        if name == "sessions":
            measured = df["session_path"].n_unique()
        write_tables({name: df}, out)
        heights[name] = df.height
        del df
    _write_run_json(out, root, params, listings, heights)
    return RunSummary(len(listings), measured, len(errors), os.fspath(out))


class _Collected:
    """Sessions' rows gathered a batch at a time into Arrow IPC files in `spill` (a folder the
    caller removes), then read back one table at a time: at 20,000 sessions, holding every row
    (as dicts, or as frames) until the end took over a gigabyte (issue #17)."""

    BATCH = 500

    def __init__(self, redact: bool, spill: Path):
        self.redact = redact
        self.spill = spill
        self.rows: dict[str, list[dict]] = {name: [] for name in TABLES}
        self.parts: dict[str, list[Path]] = {name: [] for name in TABLES}
        self.errors: list[dict] = []
        self.pending = 0

    def add(self, o: SessionOutcome) -> None:
        if self.redact and not o.redacted:  # e.g. an internal_error outcome made outside the job
            _redact_rows({"errors": o.errors, **o.tables})
        for name, table_rows in o.tables.items():
            self.rows[name].extend(table_rows)
        self.errors.extend(o.errors)
        self.pending += 1
        if self.pending >= self.BATCH:
            self._flush()

    def _flush(self) -> None:
        for name, rows in self.rows.items():
            if rows:
                part = self.spill / f"{name}.{len(self.parts[name]):06d}.arrow"
                df = frame(TABLES[name], rows)
                # Every row of a session repeats its id and path: stored once per batch instead.
                df = df.with_columns(pl.col(c).cast(pl.Categorical) for c in _REPEATED if c in df.columns)
                df.write_ipc(part, compression="uncompressed")
                self.parts[name].append(part)
                rows.clear()
        self.pending = 0

    def table(self, name: str):
        """One table, sorted as `frame` sorts it (a stable sort of the batches in arrival order)."""
        self._flush()
        parts, self.parts[name] = self.parts[name], []
        if not parts:
            return frame(TABLES[name], [])
        table = TABLES[name]
        df = pl.concat([pl.read_ipc(p.read_bytes()) for p in parts], how="vertical", rechunk=False)  # no mmap
        for p in parts:
            p.unlink()
        df = _stable_sort(df, list(table.sort))
        return df.with_columns(pl.col(c).cast(pl.String) for c in _REPEATED if c in df.columns)


_REPEATED = ("session_id", "session_path")


def _stable_sort(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """`df.sort(keys, nulls_last=True, maintain_order=True)` as if every column were a string, in
    less memory: a categorical key is ordered by the dense rank of its text, then rows are gathered.

    The batches arrive in outcome order, each sorted alike, so a stable sort of them all is what
    `frame` of all the rows at once gives.
    """
    if df.height == 0:
        return df
    by = [pl.col(k).cast(pl.String).rank("dense") if df.schema[k] == pl.Categorical else pl.col(k) for k in keys]
    order = df.select(pl.arg_sort_by(by, nulls_last=True, maintain_order=True)).to_series()
    return df[order]


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
            h.update(f"{rel(p, root)}\0{key}\n".encode("utf-8", "surrogateescape"))  # names need not be UTF-8
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


def _write_run_json(out: Path, root: str, params: RunParams, listings, heights: dict[str, int]) -> None:
    p = asdict(params)
    root_name = os.path.basename(root.rstrip(os.sep))
    if params.template_path:
        p["template_path"] = os.path.basename(params.template_path)
    if params.redact:  # the root's name and the chosen session ids name the input
        root_name = redact(root_name)
        p["sessions"] = [redact(x) for x in params.sessions]
    doc = {
        "schema_version": 1,
        "parameters": p,
        "template_sha256": hashlib.sha256(load_template(params.template_path).encode()).hexdigest(),
        "versions": _versions(),
        "input": {
            "root_name": root_name,
            "sessions_listed": len(listings),
            "fingerprint": fingerprint(root, listings),
        },
        "rows": dict(sorted(heights.items())),
    }
    with open(out / "run.json", "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
