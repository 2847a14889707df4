"""The candidate strategies: one function each, one shared signature, one result shape.

Each is registered with where it comes from (`ORIGIN`): akm's code paths and the #840 study's
candidates are "akm"; a strategy this suite proposes, which akm has never shipped, is a "suite proposal".
"""

from __future__ import annotations

import hashlib
import heapq
import sys
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Callable

from measure.akm.jscompat import utf16_len
from measure.akm.prefilter import DEFAULT_MAX_EVENT_TEXT_LENGTH, DEFAULT_MAX_TOTAL_CHARS
from measure.akm.prefilter import dedupe_notifications, prefilter, truncate
from measure.akm.prompt import Prompt, build_prompt
from measure.akm.records import Event, InlineRef, Prefiltered, PrefilterStats, Session, SessionRef, by_ts
from measure.measurements.delegation import delivery, final_report, notified_ids
from measure.measurements.pairs import DuplicatePair, find_pairs, stem
from measure.measurements.subagents import DELEGATED_KINDS, Subagent, classify
from measure.measurements.tasks import Timeline


@dataclass(frozen=True)
class Params:
    """Everything a strategy needs besides the session."""

    template: str
    budget: int = DEFAULT_MAX_TOTAL_CHARS
    max_event_text_length: int = DEFAULT_MAX_EVENT_TEXT_LENGTH
    keep_prompts: bool = True  # a run over a whole root keeps digests only


@dataclass(frozen=True, slots=True)
class Call:
    """One extraction call: what was pre-filtered and the prompt sent."""

    source: str  # the transcript the call's events come from (chunked), else the parent
    raw_events: int
    raw_chars: int
    kept: Prefiltered
    prompt: Prompt

    def kept_keys(self) -> set[tuple[float, str]]:
        """(ts, file) of each kept event: the key `duplicates` judges "in the prompt" by."""
        return {(e.ts, e.file) for e in self.kept.events}


@dataclass(frozen=True)
class StrategyResult:
    """What one strategy sends for one session."""

    budget: int
    parent_path: str
    raw_events: int
    raw_chars: int
    inline_refs: int
    calls: tuple[Call, ...]
    parent_windows: int = 0
    subagent_chunks: int = 0
    stubbed: int = 0  # notifications replaced by a stub
    stub_saved_chars: int = 0  # kept parent chars the stubs removed (not eviction)
    skipped: str = ""  # why akm would make no call (min_content_chars), else empty

    @cached_property
    def kept_by_origin(self) -> tuple[int, int, int, int]:
        """(parent events, parent chars, subagent events, subagent chars) over all calls."""
        parent = [e.chars for call in self.calls for e in call.kept.events if e.file == self.parent_path]
        subagent = [e.chars for call in self.calls for e in call.kept.events if e.file != self.parent_path]
        return len(parent), sum(parent), len(subagent), sum(subagent)

    @property
    def prompt_chars(self) -> int:
        return sum(c.prompt.chars for c in self.calls)

    @property
    def prompt_sha256(self) -> str:
        """The prompt's sha256; for several calls, the sha256 of their hex digests in order."""
        if len(self.calls) == 1:
            return self.calls[0].prompt.sha256
        return hashlib.sha256("".join(c.prompt.sha256 for c in self.calls).encode()).hexdigest()


@dataclass(frozen=True)
class Memo:
    """Per-event results that do not depend on the budget, shared by every context over the same
    Event objects (a run's budgets, a replay's moments), and the prompts built from them. Keyed by
    event identity; each entry holds its events, so an id cannot be reused while the memo lives."""

    verdicts: dict = field(default_factory=dict)  # pre-filter verdicts (prefilter's `memo`)
    lines: dict = field(default_factory=dict)  # rendered transcript lines (build_prompt's `lines`)
    overlaps: dict = field(default_factory=dict)  # pair scores (pairs.find_pairs)
    prompts: dict = field(default_factory=dict)  # built prompts (SessionContext.prompt)


class SessionContext:
    """One session plus the pieces several strategies share, each computed once.

    `timelines` are the session's task timelines (the `tasks` collector's results, by file): without
    them no tool result is known to be a synchronous Task result or a launch acknowledgement.
    """

    def __init__(self, session: Session, params: Params, memo: Memo | None = None, timelines: dict | None = None):
        self.session = session
        self.params = params
        self.memo = memo if memo is not None else Memo()
        self.timelines = timelines or {}

    def run(self, events, ref: SessionRef, refs) -> Call:
        """The plain pre-filter over `events`, then the prompt."""
        p = self.params
        kept = prefilter(events, max_total_chars=p.budget, max_event_text_length=p.max_event_text_length,
                         memo=self.memo.verdicts)
        chars = sum(e.chars for e in events)
        return Call(self.session.ref.path, len(events), chars, kept, self.prompt(ref, kept, refs))

    def prefilter_after(self, kept: Prefiltered, events) -> Prefiltered:
        """`kept` plus what akm's pre-filter keeps of `events` in the room `kept` leaves, in stream order.

        The same per-event rules, then newest first, skipping what does not fit; akm keeps its
        newest event even when it alone overflows, which applies here only when `kept` is empty.
        """
        p, verdicts = self.params, self.memo.verdicts
        rules = prefilter(events, max_total_chars=sys.maxsize, max_event_text_length=p.max_event_text_length, memo=verdicts)
        running, accepted, dropped = kept.stats.totalChars, [], 0
        for e in reversed(rules.events):
            if running + e.chars > p.budget and (accepted or kept.events):
                dropped += 1
                continue
            accepted.append(e)
            running += e.chars
        cut = {id(v[1]) for v in map(verdicts.get, map(id, events)) if v[2]}
        st = kept.stats
        stats = PrefilterStats(
            inputCount=st.inputCount + len(events), outputCount=len(kept.events) + len(accepted),
            droppedByRule=dict(Counter(st.droppedByRule) + Counter(rules.stats.droppedByRule)),
            truncatedCount=st.truncatedCount + sum(1 for e in accepted if id(e) in cut), totalChars=running,
            budgetDroppedCount=st.budgetDroppedCount + dropped,
        )
        # Both lists are in stream order, and the stream sorts stably with the parent's events
        # first: a stable merge by timestamp restores it.
        return Prefiltered(tuple(heapq.merge(kept.events, reversed(accepted), key=by_ts)), stats)

    @cached_property
    def subagents(self) -> dict[str, Subagent]:
        """Every subagent transcript classified (kind, launch) from the timelines this context holds."""
        return classify(self.session, self.timelines)

    @cached_property
    def undelivered_reports(self) -> tuple[Event, ...]:
        """The folded final report of each delegated subagent whose result never reached the parent
        (its delivery is neither a Task result nor a consumed notification), in walk order."""
        notified = notified_ids(self.parent_timeline)
        wanted = [path for path, sub in self.subagents.items() if sub.kind in DELEGATED_KINDS
                  and delivery(sub, stem(path).removeprefix("agent-") in notified) not in DELIVERED]
        by_file: dict[str, list[Event]] = {p: [] for p in wanted}
        for e in self.session.folded:
            if e.file in by_file:
                by_file[e.file].append(e)
        return tuple(r for r in (final_report(tuple(by_file[p])) for p in wanted) if r is not None)

    @cached_property
    def folded_chars(self) -> int:
        return sum(e.chars for e in self.session.folded)

    def prompt(self, ref: SessionRef, kept: Prefiltered, refs) -> Prompt:
        """akm's prompt of `kept`, built once per session for every budget that keeps the same events."""
        p = self.params
        key = (id(ref), id(refs), p.template, p.keep_prompts, *map(id, kept.events))
        hit = self.memo.prompts.get(key)
        if hit is None:
            prompt = build_prompt(p.template, ref, kept.events, refs, keep_text=p.keep_prompts, lines=self.memo.lines)
            hit = self.memo.prompts[key] = ((ref, refs, kept.events), prompt)  # holding them keeps their ids unused
        return hit[1]

    @cached_property
    def parent_events(self) -> tuple[Event, ...]:
        """The #843 parent-origin view of the folded stream."""
        p = self.session.ref.path
        return tuple(e for e in self.session.folded if e.file == p)

    @cached_property
    def link_call(self) -> Call:
        return self.run(self.session.alone, self.session.alone_ref, self.session.parent.refs)

    @cached_property
    def fold_call(self) -> Call:
        return self.run(self.session.folded, self.session.ref, self.session.refs)

    @cached_property
    def pairs(self) -> tuple[DuplicatePair, ...]:
        """Parent copy <-> subagent result pairs; an `agentId:` in an async launch acknowledgement
        ("Async agent launched successfully…", format §8.3) holds no copy of the result and pairs nothing."""
        acked = {a.task_id for a in self.parent_timeline.acks if a.kind == "async_launched"}
        return tuple(
            p for p in find_pairs(self.session, self.memo.overlaps)
            if not (p.pairing == "agent_id_tool_result" and p.agent_id.removeprefix("agent-") in acked)
        )

    @cached_property
    def sync_pairs(self) -> tuple[tuple[DuplicatePair, str], ...]:
        """Pairs whose parent copy is a synchronous Task result (format §8.2), each with the Task's description."""
        tl = self.parent_timeline
        described = {l.tool_use_id: l.description for l in tl.launches}
        sync = {a.task_id: described.get(a.tool_use_id) or "" for a in tl.acks if a.kind == "sync_result" and a.task_id}
        return tuple(
            (p, p.description or sync[p.agent_id.removeprefix("agent-")]) for p in self.pairs
            if p.pairing == "agent_id_tool_result" and p.agent_id.removeprefix("agent-") in sync
        )

    @property
    def parent_timeline(self) -> Timeline:
        """The parent's task timeline; an empty one when there is none."""
        return self.timelines.get(self.session.ref.path) or NO_TIMELINE


NO_TIMELINE = Timeline((), (), (), (), None)

DELIVERED = frozenset({"tool_result", "notification"})
"""Deliveries (`delegation.delivery`) by which a subagent's result reached the parent."""

Strategy = Callable[[SessionContext], StrategyResult]
STRATEGIES: dict[str, Strategy] = {}
ORIGIN: dict[str, str] = {}
"""Strategy -> "akm" (akm's code paths and #840's candidates) or "suite proposal" (not akm's code)."""


def registry_order(name: str) -> int:
    """A strategy's place in the registry (tables list strategies so); an unknown name sorts last."""
    return list(STRATEGIES).index(name) if name in STRATEGIES else len(STRATEGIES)


def strategy(name: str, origin: str = "akm"):
    def register(fn: Strategy) -> Strategy:
        STRATEGIES[name], ORIGIN[name] = fn, origin
        return fn

    return register


def _single(ctx: SessionContext, call: Call, refs: tuple[InlineRef, ...] | None = None,
            stubbed: int = 0, saved: int = 0) -> StrategyResult:
    """One call's result; `refs` defaults to every transcript's."""
    refs = ctx.session.refs if refs is None else refs
    return StrategyResult(
        budget=ctx.params.budget, parent_path=ctx.session.ref.path, raw_events=call.raw_events, raw_chars=call.raw_chars,
        inline_refs=len(refs), calls=(call,), stubbed=stubbed or call.kept.stubbed,
        stub_saved_chars=saved or call.kept.stub_saved_chars,
    )


@strategy("link")
def link(ctx: SessionContext) -> StrategyResult:
    """C2: the parent transcript alone, as akm read it before #830."""
    return _single(ctx, ctx.link_call, ctx.session.parent.refs)


@strategy("fold")
def fold(ctx: SessionContext) -> StrategyResult:
    """C1: subagent transcripts folded into the parent stream (#830), no dedupe."""
    return _single(ctx, ctx.fold_call)


@strategy("fold_dedupe_scoped")
def fold_dedupe_scoped(ctx: SessionContext) -> StrategyResult:
    """C1 with the #839/#842 post-pass: stub a notification whose subagent copy is kept too."""
    s, fold = ctx.session, ctx.fold_call
    # The post-pass runs on fold's final kept list and never changes which events are kept,
    # so fold's pre-filter result is reused; only stubbed texts (and so the prompt) differ.
    events, stubbed, saved = dedupe_notifications(list(fold.kept.events))
    if not stubbed:
        return _single(ctx, fold)
    kept = Prefiltered(tuple(events), replace(fold.kept.stats, totalChars=sum(e.chars for e in events)), stubbed, saved)
    return _single(ctx, replace(fold, kept=kept, prompt=ctx.prompt(s.ref, kept, s.refs)))


def stub_text(pair: DuplicatePair, description: str | None = None) -> str:
    """#839's stub of a parent copy: `[subagent <id> completed: <description>]`."""
    return f"[subagent {pair.agent_id} completed: {pair.description if description is None else description}]"


def _stubbed(ctx: SessionContext, stubs: dict[int, str]) -> tuple[Call, int]:
    """The folded stream with each event at an index of `stubs` replaced by its text, pre-filtered (fold's
    call when there is none); and what the kept stubs saved: the room each replaced event would have taken
    after truncation."""
    if not stubs:
        return ctx.fold_call, 0
    s = ctx.session
    events = list(s.folded)
    originals = {}  # id(stub) -> the event it replaces
    for i, text in stubs.items():
        e = events[i]
        events[i] = Event(e.role, e.ts, text, e.file, utf16_len(text))
        originals[id(events[i])] = e
    call = ctx.run(events, s.ref, s.refs)
    kept = [(originals[id(e)], e.chars) for e in call.kept.events if id(e) in originals]
    limit = ctx.params.max_event_text_length
    saved = sum((o.chars if o.chars <= limit else truncate(o.text, o.chars, limit)[1]) - chars for o, chars in kept)
    return call, saved


@strategy("fold_stub_raw")
def fold_stub_raw(ctx: SessionContext) -> StrategyResult:
    """#840's simulation: every paired notification stubbed in the raw folded stream."""
    # #840's pairs (top-level sidecars with a toolUseId); reversed, so the first pair of a notification stubs it
    stubs = dict(reversed([(p.parent_index, stub_text(p)) for p in ctx.pairs if p.pairing == "sidecar_tool_use_id"]))
    call, saved = _stubbed(ctx, stubs)
    return _single(ctx, call, stubbed=len(stubs), saved=saved)


@strategy("fold_dedupe_sync", origin="suite proposal")
def fold_dedupe_sync(ctx: SessionContext) -> StrategyResult:
    """#842's scoped rule for synchronous Task results: where fold keeps both the parent's tool-result
    copy and the subagent's own final report, the copy is stubbed and the folded stream pre-filtered again.

    Invariant: stubbing only shrinks events, and the budget pass decides each event from the newer ones,
    so every event newer than the newest stub, and that stub, keep their place. An older event, a report
    among them, can still lose its place (the pass skips what does not fit and keeps trying older ones):
    that pair is then un-stubbed and the pass re-run, until every stubbed copy's report is kept.
    """
    kept = ctx.fold_call.kept_keys()
    stubs = {}
    for p, description in ctx.sync_pairs:
        text = stub_text(p, description)
        if (p.notification.ts, p.notification.file) in kept and (p.final.ts, p.final.file) in kept and utf16_len(text) < p.notification.chars:
            stubs.setdefault(p.parent_index, (p, text))
    while stubs:
        call, saved = _stubbed(ctx, {i: text for i, (_, text) in stubs.items()})
        kept = call.kept_keys()
        lost = [i for i, (p, _) in stubs.items() if (p.final.ts, p.final.file) not in kept]
        if not lost:
            return _single(ctx, call, stubbed=len(stubs), saved=saved)
        for i in lost:
            del stubs[i]
    return _single(ctx, ctx.fold_call)


@strategy("hybrid")
def hybrid(ctx: SessionContext) -> StrategyResult:
    """C3, akm's #843 path: prompt from parent-origin events, refs from every transcript."""
    # The parent-origin view of the folded stream is the parent-alone stream, event for event
    # in the same order (both sorts are stable), so link's pre-filter result is hybrid's too;
    # only the prompt's ref (Started/Ended) and "Already preserved" refs differ.
    s, link = ctx.session, ctx.link_call
    return _single(ctx, replace(link, prompt=ctx.prompt(s.ref, link.kept, s.refs)))


@strategy("chunked")
def chunked(ctx: SessionContext) -> StrategyResult:
    """C4: one call per budget-sized parent window plus one per subagent transcript."""
    s, budget = ctx.session, ctx.params.budget
    windows: list[list[Event]] = []
    size = 0
    for e in ctx.parent_events:
        if not windows or size + e.chars > budget:
            windows.append([])
            size = 0
        windows[-1].append(e)
        size += e.chars
    groups: dict[str, list[Event]] = {}
    for e in s.folded:
        if e.file != s.ref.path and e.file:
            groups.setdefault(e.file, []).append(e)
    calls = [ctx.run(events, s.ref, ()) for events in windows]
    calls += [replace(ctx.run(events, s.ref, ()), source=path) for path, events in groups.items()]
    return StrategyResult(
        budget=budget, parent_path=s.ref.path, raw_events=len(s.folded), raw_chars=ctx.folded_chars,
        inline_refs=0, calls=tuple(calls), parent_windows=len(windows), subagent_chunks=len(groups),
    )


@strategy("parent_first", origin="suite proposal")
def parent_first(ctx: SessionContext) -> StrategyResult:
    """Suite proposal: link's kept parent events, then subagent events in the room left (folded ref, every ref)."""
    s = ctx.session
    kept = ctx.prefilter_after(ctx.link_call.kept, tuple(e for e in s.folded if e.file != s.ref.path))
    call = Call(s.ref.path, len(s.folded), ctx.folded_chars, kept, ctx.prompt(s.ref, kept, s.refs))
    return _single(ctx, call)


@strategy("hybrid_undelivered", origin="suite proposal")
def hybrid_undelivered(ctx: SessionContext) -> StrategyResult:
    """Suite proposal: hybrid, plus the report of each delegated subagent whose result never reached the parent."""
    s = ctx.session
    reports = {id(e) for e in ctx.undelivered_reports}
    if not reports:
        return hybrid(ctx)
    # Pre-filtered together: a report takes its place in the budget like any parent event.
    events = tuple(e for e in s.folded if e.file == s.ref.path or id(e) in reports)
    return _single(ctx, ctx.run(events, s.ref, s.refs))


def fits_whole(result: StrategyResult) -> bool:
    """Whether every larger budget gives `result` again (its `budget` aside): no call dropped an event
    for the budget, chunked made at most one parent window; a budget enters every strategy only so."""
    return result.parent_windows <= 1 and not any(c.kept.stats.budgetDroppedCount for c in result.calls)


def check_names(names) -> None:
    """Raise ValueError naming the first of `names` that is no registered strategy."""
    unknown = [s for s in names if s not in STRATEGIES]
    if unknown:
        raise ValueError(f"unknown strategy {unknown[0]!r}; choose from {', '.join(STRATEGIES)}")


def run_all(ctx: SessionContext, names: list[str] | None = None) -> dict[str, StrategyResult]:
    """Every registered strategy (or the named ones) over one session."""
    return {n: STRATEGIES[n](ctx) for n in (names or STRATEGIES)}


MIN_CONTENT_CHARS = 10
"""akm's `minContentChars` default: a session whose raw text is shorter is skipped, no LLM call."""


def apply_min_content_gate(ctx: SessionContext, results: dict[str, StrategyResult]) -> dict[str, StrategyResult]:
    """`results` with every strategy that akm's gate would skip replaced by a no-call result.

    akm measures the FULL folded stream, not the parent view (pipeline-spec §4.6), so every strategy
    that reads subagents is gated on it; link reads the parent alone (akm before #830). Modelled as
    the sum of the events' UTF-16 text lengths (the gate's exact text is not in the spec; an empty or
    near-empty session is skipped under any reading).
    """
    no_call = {"calls": (), "parent_windows": 0, "subagent_chunks": 0, "stubbed": 0, "stub_saved_chars": 0, "skipped": "min_content_chars"}
    return {name: replace(r, **no_call) if (r.raw_chars if name == "link" else ctx.folded_chars) < MIN_CONTENT_CHARS
            else r for name, r in results.items()}
