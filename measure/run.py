"""The main job: every strategy over every session of a root, written as tables."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import pickle
import platform
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from measure import __version__
from measure.hashing import content_hash
from measure.metrics import (
    duplicate_rows,
    eviction_rows,
    llm_rows,
    quirk_rows,
    run_cost_rows,
    session_rows,
    subagent_rows,
    sweep_rows,
)
from measure.prompt import load_template
from measure.read import ReadError, list_sessions, read_session, rel, subagents_dir
from measure.schema import TABLES
from measure.strategies import STRATEGIES, Params, SessionContext
from measure.tables import frame, write_tables

CACHE_VERSION = 1


#: The modules whose code decides a session's rows: a change to any must not reuse old results.
MEASURING_MODULES = (
    "hashing", "jscompat", "metrics", "pairs", "prefilter", "prompt", "read", "records", "run", "schema", "strategies",
)


def _code_digest() -> str:
    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in MEASURING_MODULES:
        h.update(name.encode())
        h.update((here / f"{name}.py").read_bytes())
    return h.hexdigest()


@dataclass(frozen=True)
class RunParams:
    """What a run measures; everything here is recorded in run.json."""

    budget: int = 80_000
    budgets: tuple[int, ...] = ()
    max_event_text_length: int = 2_000
    template_path: str | None = None
    session_cap: int = 25
    redact: bool = False
    sessions: tuple[str, ...] = ()
    since_ms: float = 0
    strategies: tuple[str, ...] = tuple(STRATEGIES)
    file_time_ms: float | None = None  # stand-in for file mtimes/ctimes (bundled fixtures)


@dataclass
class SessionOutcome:
    """Rows of every table for one session (or the reason it could not be measured)."""

    session_path: str
    tables: dict[str, list[dict]] = field(default_factory=dict)
    errors: list[dict] = field(default_factory=list)


def _error(path: str, session_path: str | None, kind: str, reason: str, count: int = 1) -> dict:
    return {"path": path, "session_path": session_path, "kind": kind, "count": count, "reason": reason}


def measure_session(root: str, path: str, params: RunParams, template: str) -> SessionOutcome:
    """Read one session once and measure every strategy on it. Pure: no writes."""
    # A session's objects hold no cycles worth collecting, and the cyclic GC would rescan the
    # growing heap again and again (a cost that grows faster than the session). Reference
    # counting frees everything when the session is done.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _measure_session(root, path, params, template)
    finally:
        if was_enabled:
            gc.enable()


def _measure_session(root: str, path: str, params: RunParams, template: str) -> SessionOutcome:
    session_path = rel(path, root)
    out = SessionOutcome(session_path)
    try:
        session, problems = read_session(path, root, file_time_ms=params.file_time_ms)
    except ReadError as exc:
        out.errors.append(_error(session_path, session_path, "unreadable", str(exc)))
        return out
    for p, kind, reason in problems:
        count = int(reason.split(" ", 1)[0]) if kind == "malformed_lines" else 1
        out.errors.append(_error(p, session_path, kind, reason, count))
    for tf in (session.parent, *session.subagents):
        if tf.lines == 0:
            out.errors.append(_error(tf.path, session_path, "empty", "no lines: nothing to read"))
    memo: dict = {}  # pre-filter verdicts do not depend on the budget: share them
    by_budget = {}
    failed: dict[str, str] = {}
    for budget in sorted({params.budget, *params.budgets}):
        ctx = SessionContext(
            session,
            Params(template=template, budget=budget, max_event_text_length=params.max_event_text_length, keep_prompts=False),
        )
        ctx.memo = memo
        results = {}
        for name in params.strategies:
            try:
                results[name] = STRATEGIES[name](ctx)
            except ValueError as exc:  # a timestamp JS's Date cannot render: akm's build throws
                failed.setdefault(name, str(exc))
        by_budget[budget] = (ctx, results)
    for name, reason in failed.items():
        out.errors.append(
            _error(session_path, session_path, "render_error", f"{name}: buildExtractPrompt would throw: {reason}")
        )
    ctx, results = by_budget[params.budget]
    digest = content_hash(session.folded)
    keyed = {"session_id": session.ref.session_id, "session_path": session_path}

    def add(table: str, rows: list[dict]) -> None:
        out.tables.setdefault(table, []).extend({**keyed, **r} for r in rows)

    add("sessions", session_rows(ctx, results, digest))
    if "link" in results:
        add("eviction", eviction_rows(results))
    add("duplicates", duplicate_rows(ctx, results))
    add("llm_calls", llm_rows(results))
    add("budget_sweep", sweep_rows({b: r for b, (_, r) in by_budget.items()}) if "link" in results else [])
    add("subagents", subagent_rows(session))
    add("quirks", quirk_rows(session, results))
    return out


_STRUCTURAL = ("subagents", "workflows", "tool-results", "journal.jsonl")


def redact(value: str | None) -> str | None:
    """A stable stand-in for text that should not leave the machine."""
    if value is None:
        return None
    return "sha256:" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def redact_path(path: str | None) -> str | None:
    """Hash the segments that name things (project folders are cwd paths, session ids are
    ids) and keep the structure (`subagents/`, `agent-<id>`), so paths still read as layouts."""
    if not path:
        return path
    out = []
    for i, part in enumerate(path.split("/")):
        if i and (part in _STRUCTURAL or part.startswith(("agent-", "wf_"))):
            out.append(part)
        elif part.endswith(".jsonl"):
            out.append(redact(part[: -len(".jsonl")]) + ".jsonl")
        else:
            out.append(redact(part))
    return "/".join(out)


def _redact_rows(rows: dict[str, list[dict]]) -> None:
    """--redact: one pass over every table, so no row escapes it (errors included)."""
    for table_rows in rows.values():
        for row in table_rows:
            for key in ("session_path", "subagent_path", "path"):
                if row.get(key):
                    row[key] = redact_path(row[key])
            for key in ("session_id", "description"):
                if row.get(key) is not None:  # "" too: every value of a redacted column is a hash
                    row[key] = redact(row[key])


# --- incremental cache ---------------------------------------------------------------------


def _file_key(path: str, with_mtime: bool = True) -> list:
    """Size, mtime and a content fingerprint (first and last 64 KiB) of one file."""
    st = os.stat(path)
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        h.update(f.read(65536))
        if st.st_size > 131072:
            f.seek(-65536, os.SEEK_END)
            h.update(f.read(65536))
    return [st.st_size, st.st_mtime_ns if with_mtime else 0, h.hexdigest()]


def session_key(root: str, path: str, params: RunParams, template: str) -> str | None:
    """A key that changes with the parent, any file under its subagents/, or the params."""
    parts: list = [CACHE_VERSION, _CODE, asdict(params), hashlib.sha256(template.encode()).hexdigest(), rel(path, root)]
    try:
        parts.append(_file_key(path))
        parts += [[rel(p, root), _file_key(p)] for p in _subagent_files(path)]
    except OSError:
        return None  # unreadable now: measure it and let the reader report why
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


_CODE = _code_digest()


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "measure"


def _cached_measure(job: tuple) -> SessionOutcome:
    root, path, params, template, cache_dir = job
    key = session_key(root, path, params, template) if cache_dir else None
    if key:
        entry = Path(cache_dir) / key[:2] / f"{key}.pickle"
        try:
            with open(entry, "rb") as f:
                return pickle.load(f)
        except (OSError, pickle.UnpicklingError, EOFError):
            pass
    try:
        outcome = measure_session(root, path, params, template)
    except Exception as exc:  # noqa: BLE001 - one session's surprise must not end the run
        outcome = SessionOutcome(rel(path, root))
        outcome.errors.append(
            _error(rel(path, root), rel(path, root), "internal_error", f"{type(exc).__name__}: {exc}")
        )
        return outcome  # not cached: a fixed measure should try again
    if key:
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            tmp = entry.with_suffix(f".{os.getpid()}.tmp")
            with open(tmp, "wb") as f:
                pickle.dump(outcome, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, entry)
        except OSError:
            pass  # a cache that cannot be written only costs time
    return outcome


# --- the run -------------------------------------------------------------------------------


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
    template = load_template(params.template_path)
    list_errors: list = []
    listings = list_sessions(root, since_ms=params.since_ms, errors=list_errors, file_time_ms=params.file_time_ms)
    if params.sessions:
        wanted = set(params.sessions)
        listings = [s for s in listings if s.session_id in wanted or rel(s.path, root) in wanted]
    errors = [_error(rel(p, root), None, kind, reason) for p, kind, reason in list_errors]
    errors += orphan_errors(root)
    # Largest first, so the pool does not end waiting on one big session.
    order = sorted(listings, key=lambda s: -_size(s.path))
    jobs_list = [(root, s.path, params, template, os.fspath(cache_dir) if cache_dir else None) for s in order]
    outcomes: list[SessionOutcome] = []
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    if workers > 1 and len(jobs_list) > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for i, o in enumerate(pool.map(_cached_measure, jobs_list, chunksize=1), 1):
                outcomes.append(o)
                progress(i, len(jobs_list))
    else:
        for i, job in enumerate(jobs_list, 1):
            outcomes.append(_cached_measure(job))
            progress(i, len(jobs_list))
    rows: dict[str, list[dict]] = {name: [] for name in TABLES}
    for o in outcomes:
        for name, table_rows in o.tables.items():
            rows[name].extend(table_rows)
        errors.extend(o.errors)
    rows["run_cost"] = run_cost_rows(rows["llm_calls"], [rel(s.path, root) for s in listings], params.session_cap)
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


def _subagent_files(path: str) -> list[str]:
    sub = subagents_dir(path)
    found = []
    for dirpath, dirnames, names in os.walk(sub):
        dirnames.sort()
        found += [os.path.join(dirpath, n) for n in sorted(names)]
    return found


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
