"""The per-session job: read once, run every strategy, return the rows of every table."""

from __future__ import annotations

import gc
import os
import traceback
from dataclasses import dataclass, field, replace

import orjson

from measure.akm.hashing import content_hash
from measure.akm.jscompat import MAX_EXACT
from measure.akm.prefilter import DEFAULT_MAX_EVENT_TEXT_LENGTH, DEFAULT_MAX_TOTAL_CHARS
from measure.akm.read import NotRegularFile, ReadError, read_session, rel
from measure.measurements import tasks  # noqa: F401  (registers the "tasks" line collector)
from measure.measurements.background import background_rows
from measure.measurements.breakdown import session_info_rows
from measure.measurements.budget_sweep import sweep_rows
from measure.measurements.cost import cost_tables  # its modules register the "usage" and "reads" collectors
from measure.measurements.delegation import delegation_rows, delegation_totals
from measure.measurements.duplicates import duplicate_rows
from measure.measurements.eviction import eviction_rows
from measure.measurements.lines import SessionLines
from measure.measurements.llm_calls import llm_rows
from measure.measurements.priorities import DEFAULT as DEFAULT_PRIORITIES
from measure.measurements.priorities import canonical
from measure.measurements.quirks import quirk_rows
from measure.measurements.replay import replay_rows
from measure.measurements.sessions import session_rows
from measure.measurements.strategies import STRATEGIES, Memo, Params, SessionContext, apply_min_content_gate, fits_whole
from measure.measurements.subagents import subagent_rows
from measure.runner.redact import protect_outcome


@dataclass(frozen=True)
class RunParams:
    """What a run measures; everything here is recorded in run.json."""

    budget: int = DEFAULT_MAX_TOTAL_CHARS
    budgets: tuple[int, ...] = ()
    max_event_text_length: int = DEFAULT_MAX_EVENT_TEXT_LENGTH
    template_path: str | None = None
    session_cap: int = 25
    redact: bool = False
    sessions: tuple[str, ...] = ()
    since_ms: float = 0
    strategies: tuple[str, ...] = tuple(STRATEGIES)
    file_time_ms: float | None = None  # stand-in for file mtimes/ctimes (bundled fixtures)
    walk_order: str = "name"  # directory entry order: "name" (descending, every machine) or "fs" (readdir, akm's)
    replay: str | None = None  # --replay-at schedule (turn_end, final, every:<minutes>); None: no replay table
    show_excerpts: bool = False  # keep transcript-derived text (subagent descriptions) in the rows
    priorities: str = DEFAULT_PRIORITIES  # the choice table's priorities (measurements.priorities grammar)

    @classmethod
    def from_options(cls, *, max_total_chars: int | None = None, budgets=(), max_event_chars: int | None = None,
                     template: str | None = None, sessions=(), since_ms: float | None = None, priorities: str | None = None,
                     **same) -> RunParams:
        """The run that the options of `measure run` / `measure report` (or a notebook's parameters, named
        the same; `same`: those named as their field) ask for; None or empty means the default."""
        given = {"budget": max_total_chars, "max_event_text_length": max_event_chars, **same}
        return cls(**{name: value for name, value in given.items() if value is not None},
                   budgets=tuple(sorted({int(b) for b in budgets or ()})), template_path=str(template) if template else None,
                   sessions=tuple(sessions or ()), since_ms=since_ms or 0,
                   priorities=canonical(priorities) if priorities else cls.priorities)


@dataclass
class SessionOutcome:
    """Every table's rows for one session, as columns (what the cache writes and the merge appends as
    they are), and its errors rows (or the reason it could not be measured)."""

    session_path: str
    tables: dict[str, dict[str, list]] = field(default_factory=dict)
    errors: list[dict] = field(default_factory=list)


def columns(rows: list[dict], shared: dict | None = None) -> dict[str, list]:
    """`rows` as columns in the order their keys first appear, `shared` (the same for every row) first;
    a row without a column holds None there."""
    names, uneven = dict.fromkeys(rows[0]) if rows else {}, False
    for row in rows:
        if row.keys() != names.keys():
            names.update(dict.fromkeys(row))
            uneven = True
    own = {k: [row.get(k) for row in rows] for k in names} if uneven else {k: [row[k] for row in rows] for k in names}
    return {**{k: [v] * len(rows) for k, v in (shared or {}).items()}, **own}


def _error(path: str, session_path: str | None, kind: str, reason: str, count: int = 1) -> dict:
    return {"path": path, "session_path": session_path, "kind": kind, "count": count, "reason": reason}


def internal_error(errors: list[dict]) -> bool:
    """Whether measuring failed in measure's own code (an outcome never cached: a fixed measure tries again)."""
    return any(e["kind"] == "internal_error" for e in errors)


def measure_session(root: str, path: str, params: RunParams, template: str) -> SessionOutcome:
    """Read one session once and measure every strategy on it. Pure: no writes. A surprise
    becomes an `internal_error` row naming the code where it happened, not a failed run."""
    # A session's objects hold no cycles worth collecting, and the cyclic GC would rescan the growing heap
    # again and again (a cost that grows faster than the session): reference counting frees them.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        try:
            outcome = _measure_session(root, path, params, template)
        except Exception as exc:  # noqa: BLE001 - one session's surprise must not end the run
            outcome = SessionOutcome(rel(path, root))
            outcome.errors.append(_error(outcome.session_path, outcome.session_path, "internal_error", _raised_at(exc)))
        clamp_counts(outcome)
        # Privacy rules before the outcome goes anywhere, the cache included.
        protect_outcome(outcome, params.redact, params.show_excerpts)
        return outcome
    finally:
        if was_enabled:
            gc.enable()


def _raised_at(exc: Exception) -> str:
    """The exception's type and the line of `measure` that raised it: never its message, which may
    quote the input (a name, a value from a transcript)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ours = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(package)]
    at = f" at {os.path.relpath(ours[-1].filename, os.path.dirname(package))}:{ours[-1].lineno}" if ours else ""
    return f"{type(exc).__name__}{at} (message withheld: it may quote the input)"


def clamp_counts(outcome: SessionOutcome) -> None:
    """Integers past MAX_EXACT (a token count of 2^64 in a transcript) clamped to it, and counted in an
    errors row: akm's own numbers (JS doubles) hold no more exactly, and the tables' Int64 and sums must."""
    try:  # orjson checks every integer of the rows in C; only a session that fails it is walked
        orjson.dumps(outcome.tables, option=orjson.OPT_STRICT_INTEGER)
        return
    except TypeError:  # an integer past 2^53 (or text orjson refuses): walk the rows
        pass
    clamped: dict[str, int] = {}
    for name, table in outcome.tables.items():
        for k, values in table.items():
            for i, v in enumerate(values):
                if type(v) is int and not -MAX_EXACT <= v <= MAX_EXACT:
                    values[i] = MAX_EXACT if v > 0 else -MAX_EXACT
                    clamped[f"{name}.{k}"] = clamped.get(f"{name}.{k}", 0) + 1
    if clamped:
        where = ", ".join(f"{c} ({n})" for c, n in sorted(clamped.items()))
        outcome.errors.append(_error(outcome.session_path, outcome.session_path, "clamped",
                                     f"integers past 2^53 clamped to 2^53: {where}", sum(clamped.values())))


def _measure_session(root: str, path: str, params: RunParams, template: str) -> SessionOutcome:
    session_path = rel(path, root)
    out = SessionOutcome(session_path)
    try:
        lines = SessionLines()
        session, problems = read_session(path, root, file_time_ms=params.file_time_ms, observe=lines.observe, walk_order=params.walk_order)
    except ReadError as exc:
        kind = "not_a_file" if isinstance(exc.__cause__, NotRegularFile) else "unreadable"
        out.errors.append(_error(session_path, session_path, kind, str(exc)))
        return out
    for p, kind, reason in problems:
        count = int(reason.split(" ", 1)[0]) if kind == "malformed_lines" else 1
        out.errors.append(_error(p, session_path, kind, reason, count))
    for tf in (session.parent, *session.subagents):
        if tf.lines == 0:
            out.errors.append(_error(tf.path, session_path, "empty", "no lines: nothing to read"))
    memo = Memo()  # per-event results do not depend on the budget: every budget shares them
    timelines = lines.get("tasks")
    by_budget = {}
    failed: dict[str, str] = {}
    whole = None  # results at a smaller budget that no larger one can change (see fits_whole)
    for budget in sorted({params.budget, *params.budgets}):
        ctx = SessionContext(session, Params(template=template, budget=budget, keep_prompts=False,
                                             max_event_text_length=params.max_event_text_length), memo, timelines)
        if whole is not None:  # the sweep reads a budget from its key; the run's budget's rows from the results
            raw, gated = whole
            by_budget[budget] = (ctx, raw, {n: replace(r, budget=budget) for n, r in gated.items()} if budget == params.budget else gated)
            continue
        raw = {}
        for name in params.strategies:
            try:
                raw[name] = STRATEGIES[name](ctx)
            except ValueError as exc:  # a timestamp JS's Date cannot render: akm's build throws
                failed.setdefault(name, str(exc))
        by_budget[budget] = (ctx, raw, apply_min_content_gate(ctx, raw))
        # Every strategy, not each on its own: some start from another's kept set (fold's, link's).
        if not failed and all(map(fits_whole, raw.values())):
            whole = by_budget[budget][1:]
    out.errors += [_error(session_path, session_path, "render_error", f"{name}: buildExtractPrompt would throw: {reason}")
                   for name, reason in failed.items()]
    ctx, raw, results = by_budget[params.budget]
    keyed = {"session_id": session.ref.session_id, "session_path": session_path}

    def add(table: str, rows: list[dict]) -> None:
        if rows:
            out.tables[table] = columns(rows, keyed)

    subagents = ctx.subagents
    delegation = delegation_rows(ctx, results)
    add("sessions", session_rows(ctx, results, content_hash(session.folded), delegation_totals(delegation)))
    add("eviction", eviction_rows(results) if "link" in results else [])
    add("duplicates", duplicate_rows(ctx, results))
    add("llm_calls", llm_rows(results))
    add("budget_sweep", sweep_rows({b: r for b, (_, _, r) in by_budget.items()}) if "link" in results else [])
    add("subagents", subagent_rows(session, subagents))
    add("quirks", quirk_rows(session, results))
    add("background", background := background_rows(session, timelines))
    add("replay", replay_rows(ctx, raw, params.replay, background) if params.replay else [])
    for table, rows in cost_tables(session, lines, subagents).items():
        add(table, rows)
    add("delegation", delegation)
    versions = {label: dict(tl.versions) for label, tl in timelines.items()}
    add("session_info", session_info_rows(session_path, session.ref.started_at, versions))
    return out
