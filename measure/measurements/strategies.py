"""The candidate strategies: one function each, one shared signature, one result shape."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Callable

from measure.akm.jscompat import utf16_len
from measure.akm.prefilter import (
    DEFAULT_MAX_EVENT_TEXT_LENGTH,
    DEFAULT_MAX_TOTAL_CHARS,
    READONLY_OPS,
    PrefixPrefilter,
    dedupe_notifications,
    prefilter,
    truncate,
)
from measure.akm.prompt import Prompt, build_prompt, check_prompt
from measure.akm.records import Event, InlineRef, Prefiltered, Session, SessionRef
from measure.measurements.pairs import DuplicatePair, find_pairs


@dataclass(frozen=True)
class Params:
    """Everything a strategy needs besides the session."""

    template: str
    budget: int = DEFAULT_MAX_TOTAL_CHARS
    max_event_text_length: int = DEFAULT_MAX_EVENT_TEXT_LENGTH
    readonly_ops: frozenset[str] = READONLY_OPS
    keep_prompts: bool = True  # a run over a whole root keeps digests only
    build_prompts: bool = True  # False: calls carry prompt.NOT_BUILT (a replay reads kept events only)


@dataclass(frozen=True, slots=True)
class Call:
    """One extraction call: what was pre-filtered and the prompt sent."""

    source: str  # the transcript the call's events come from (chunked), else the parent
    raw_events: int
    raw_chars: int
    kept: Prefiltered
    prompt: Prompt


@dataclass(frozen=True)
class StrategyResult:
    """What one strategy sends for one session."""

    name: str
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

    def kept_by_origin(self) -> tuple[int, int, int, int]:
        """(parent events, parent chars, subagent events, subagent chars) over all calls."""
        return self._kept_by_origin

    @cached_property
    def _kept_by_origin(self) -> tuple[int, int, int, int]:
        pe = pc = se = sc = 0
        for call in self.calls:
            for e in call.kept.events:
                if e.file == self.parent_path:
                    pe += 1
                    pc += e.chars
                else:
                    se += 1
                    sc += e.chars
        return pe, pc, se, sc

    @property
    def prompt_chars(self) -> int:
        return sum(c.prompt.chars for c in self.calls)

    @property
    def prompt_sha256(self) -> str:
        """The prompt's sha256; for several calls, the sha256 of their hex digests in order."""
        if len(self.calls) == 1:
            return self.calls[0].prompt.sha256
        return hashlib.sha256("".join(c.prompt.sha256 for c in self.calls).encode()).hexdigest()


PREFILTERED_CACHE_MAX_EVENTS = 4096
"""Longest event sequence whose pre-filter result SessionContext.run keeps for reuse."""


class SessionContext:
    """One session plus the pieces several strategies share, each computed once."""

    def __init__(self, session: Session, params: Params):
        self.session = session
        self.params = params
        # Per-event pre-filter verdicts and rendered transcript lines, shared by every
        # strategy and budget: the same Event objects recur in link, fold, hybrid and chunked.
        self.memo: dict = {}
        self.lines: dict = {}
        self.overlaps: dict = {}  # pair scores (pairs.find_pairs), shared the same way
        # Pre-filter results by budget and event sequence (identities), when a replay shares one
        # between its moments, which see the same sequences again (chunked's closed windows,
        # subagents that wrote nothing new); a single run never does.
        self.prefiltered: dict | None = None
        # Streams known to be the first k events of a longer one (a replay's cuts): id -> (events,
        # PrefixPrefilter of the longer stream, k). See `use_prefix`.
        self.prefixes: dict = {}
        self.stubbed: tuple[StubbedStream, int] | None = None  # see `stubbed_cut`

    def use_prefix(self, events, index: PrefixPrefilter, k: int, alone: bool = False) -> None:
        """Declare `events` the first k events of the stream `index` was built on: its pre-filter
        result and chars come from `index` without a pass over the events. With `alone`, `events`
        is this context's parent-alone stream."""
        self.prefixes[id(events)] = (events, index, k)
        if alone:
            self.__dict__["alone"] = events  # the cached_property's value

    def stubbed_cut(self) -> tuple[tuple[Event, ...], dict, int] | None:
        """fold_stub_raw's stream for this context from the whole session's (`stubbed`, set by a
        replay with its prefix length): (events, stub -> notification, stubs), or None when the
        cut's own pairs must be found (a paired notification whose subagent has not written yet)."""
        if self.stubbed is None:
            return None
        stream, k = self.stubbed
        present = {tf.path for tf in self.session.subagents}
        stubs = [path for i, _, path in stream.stubs if i < k]
        if any(path not in present for path in stubs):
            return None
        events = stream.events[:k]
        self.use_prefix(events, stream.index, k)
        return events, stream.originals, len(stubs)

    def run(self, events, ref: SessionRef, refs) -> Call:
        """The plain pre-filter over `events`, then the prompt."""
        kept, chars = self._prefiltered(events)
        return Call(self.session.ref.path, len(events), chars, kept, self.prompt(ref, kept, refs))

    def _prefiltered(self, events) -> tuple[Prefiltered, int]:
        """The plain pre-filter's result for `events` and their chars: from a known prefix, the
        sequence cache, or a pass over them."""
        known = self.prefixes.get(id(events))
        if known is not None and known[0] is events:
            return known[1].prefix(known[2]), known[1].raw_chars(known[2])
        # (a long sequence is not kept: its key would cost more memory than it saves)
        cached = self.prefiltered is not None and len(events) <= PREFILTERED_CACHE_MAX_EVENTS
        key = (self.params.budget, tuple(map(id, events))) if cached else None
        hit = self.prefiltered.get(key) if cached else None
        if hit is None:
            kept = prefilter(
                events,
                max_total_chars=self.params.budget,
                max_event_text_length=self.params.max_event_text_length,
                readonly_ops=self.params.readonly_ops,
                memo=self.memo,
            )
            hit = (events, kept, self.chars(events))  # holding the events keeps their ids
            if cached:
                self.prefiltered[key] = hit
        return hit[1], hit[2]

    def chars(self, events) -> int:
        """UTF-16 chars of `events`; the session's two streams (folded, parent alone) are summed
        once, not once per strategy that reads them, and a known prefix not at all."""
        if events is self.session.folded:
            return self.folded_chars
        if events is self.alone:
            return self.alone_chars
        return self._sum(events)

    def _sum(self, events) -> int:
        known = self.prefixes.get(id(events))
        return known[1].raw_chars(known[2]) if known is not None and known[0] is events else sum(e.chars for e in events)

    @cached_property
    def folded_chars(self) -> int:
        return self._sum(self.session.folded)

    @cached_property
    def alone_chars(self) -> int:
        return self._sum(self.alone)

    def prompt(self, ref: SessionRef, kept: Prefiltered, refs) -> Prompt:
        p = self.params
        if not p.build_prompts:
            return check_prompt(ref, kept.events, self.lines)
        return build_prompt(p.template, ref, kept.events, refs, keep_text=p.keep_prompts, lines=self.lines)

    @cached_property
    def parent_events(self) -> tuple[Event, ...]:
        """The #843 parent-origin view of the folded stream."""
        p = self.session.ref.path
        return tuple(e for e in self.session.folded if e.file == p)

    @cached_property
    def alone(self) -> tuple[Event, ...]:
        return self.session.alone

    @cached_property
    def link_call(self) -> Call:
        return self.run(self.alone, self.session.alone_ref, self.session.parent.refs)

    @cached_property
    def fold_call(self) -> Call:
        return self.run(self.session.folded, self.session.ref, self.session.refs)

    @cached_property
    def sidecar_pairs(self) -> tuple[DuplicatePair, ...]:
        """#840's pairs: top-level sidecars with a toolUseId, sorted by overlap (stable)."""
        return tuple(p for p in self.pairs if p.pairing == "sidecar_tool_use_id")

    @cached_property
    def pairs(self) -> tuple[DuplicatePair, ...]:
        return find_pairs(self.session, self.overlaps)


Strategy = Callable[[SessionContext], StrategyResult]
STRATEGIES: dict[str, Strategy] = {}


def strategy(name: str):
    def register(fn: Strategy) -> Strategy:
        STRATEGIES[name] = fn
        return fn

    return register


def _single(
    name: str, ctx: SessionContext, call: Call, refs: tuple[InlineRef, ...], stubbed: int = 0, saved: int = 0
) -> StrategyResult:
    return StrategyResult(
        name=name,
        budget=ctx.params.budget,
        parent_path=ctx.session.ref.path,
        raw_events=call.raw_events,
        raw_chars=call.raw_chars,
        inline_refs=len(refs),
        calls=(call,),
        stubbed=stubbed or call.kept.stubbed,
        stub_saved_chars=saved or call.kept.stub_saved_chars,
    )


@strategy("link")
def link(ctx: SessionContext) -> StrategyResult:
    """C2: the parent transcript alone, as akm read it before #830."""
    return _single("link", ctx, ctx.link_call, ctx.session.parent.refs)


@strategy("fold")
def fold(ctx: SessionContext) -> StrategyResult:
    """C1: subagent transcripts folded into the parent stream (#830), no dedupe."""
    return _single("fold", ctx, ctx.fold_call, ctx.session.refs)


@strategy("fold_dedupe_scoped")
def fold_dedupe_scoped(ctx: SessionContext) -> StrategyResult:
    """C1 with the #839/#842 post-pass: stub a notification whose subagent copy is kept too."""
    s = ctx.session
    fold = ctx.fold_call
    # The post-pass runs on fold's final kept list and never changes which events are kept,
    # so fold's pre-filter result is reused; only stubbed texts (and so the prompt) differ.
    events, stubbed, saved = dedupe_notifications(list(fold.kept.events))
    if not stubbed:
        return _single("fold_dedupe_scoped", ctx, fold, s.refs)
    stats = replace(fold.kept.stats, totalChars=sum(e.chars for e in events))
    kept = Prefiltered(tuple(events), stats, stubbed, saved)
    call = Call(fold.source, fold.raw_events, fold.raw_chars, kept, ctx.prompt(s.ref, kept, s.refs))
    return _single("fold_dedupe_scoped", ctx, call, s.refs)


def stub_text(pair: DuplicatePair) -> str:
    return f"[subagent {pair.agent_id} completed: {pair.description}]"


@strategy("fold_stub_raw")
def fold_stub_raw(ctx: SessionContext) -> StrategyResult:
    """#840's simulation: every paired notification stubbed in the raw folded stream."""
    s = ctx.session
    known = ctx.stubbed_cut()
    if known is not None:
        events, originals, stubbed = known
    else:
        stubs: dict[int, str] = {}
        for p in ctx.sidecar_pairs:
            stubs.setdefault(p.parent_index, stub_text(p))
        events, originals = stubbed_events(s.folded, stubs)
        stubbed = len(stubs)
    if not stubbed:
        return _single("fold_stub_raw", ctx, ctx.fold_call, s.refs)
    call = ctx.run(events, s.ref, s.refs)
    # What a kept stub saved: the room its notification would have taken after truncation.
    saved = 0
    limit = ctx.params.max_event_text_length
    for e in call.kept.events:
        orig = originals.get(id(e))
        if orig is not None:
            room = orig.chars if orig.chars <= limit else truncate(orig.text, orig.chars, limit)[1]
            saved += room - e.chars
    return _single("fold_stub_raw", ctx, call, s.refs, stubbed=stubbed, saved=saved)


def stubbed_events(folded, stubs: dict[int, str]) -> tuple[list[Event], dict]:
    """`folded` with the event at each index of `stubs` replaced by its stub text; and each stub's
    notification, by the stub's identity."""
    events = list(folded)
    originals = {}
    for i, text in stubs.items():
        e = events[i]
        events[i] = Event(e.role, e.ts, text, e.file, utf16_len(text))
        originals[id(events[i])] = e
    return events, originals


@dataclass(frozen=True)
class StubbedStream:
    """The whole session's folded stream as fold_stub_raw stubs it, indexed for a replay's prefix
    cuts (see SessionContext.stubbed_cut)."""

    stubs: tuple[tuple[int, str, str], ...]  # (folded index, stub text, subagent path) of each pair
    events: tuple[Event, ...]
    originals: dict  # id(stub) -> notification
    index: PrefixPrefilter

    @classmethod
    def of(cls, ctx: SessionContext, **rules) -> StubbedStream | None:
        """For the session of `ctx`, whole; None when two pairs share a notification (which stub a
        cut keeps then depends on the cut's overlaps) or there is nothing to stub."""
        pairs = ctx.sidecar_pairs
        if not pairs or len({p.parent_index for p in pairs}) < len(pairs):
            return None
        stubs = tuple(sorted((p.parent_index, stub_text(p), p.subagent_path) for p in pairs))
        events, originals = stubbed_events(ctx.session.folded, {i: text for i, text, _ in stubs})
        events = tuple(events)
        return cls(stubs, events, originals, PrefixPrefilter(events, **rules))


@strategy("hybrid")
def hybrid(ctx: SessionContext) -> StrategyResult:
    """C3, akm's #843 path: prompt from parent-origin events, refs from every transcript."""
    s = ctx.session
    # The parent-origin view of the folded stream is the parent-alone stream, event for event
    # in the same order (both sorts are stable), so link's pre-filter result is hybrid's too;
    # only the prompt's ref (Started/Ended) and "Already preserved" refs differ.
    link = ctx.link_call
    return _single("hybrid", ctx, Call(link.source, link.raw_events, link.raw_chars, link.kept, ctx.prompt(s.ref, link.kept, s.refs)), s.refs)


@strategy("chunked")
def chunked(ctx: SessionContext) -> StrategyResult:
    """C4: one call per budget-sized parent window plus one per subagent transcript."""
    s = ctx.session
    budget = ctx.params.budget
    windows: list[list[Event]] = []
    current: list[Event] = []
    size = 0
    for e in ctx.parent_events:
        if size + e.chars > budget and current:
            windows.append(current)
            current, size = [], 0
        current.append(e)
        size += e.chars
    if current:
        windows.append(current)
    groups: dict[str, list[Event]] = {}
    for e in s.folded:
        if e.file != s.ref.path and e.file:
            groups.setdefault(e.file, []).append(e)
    calls = []
    for events in windows:
        calls.append(ctx.run(events, s.ref, ()))
    for path, events in groups.items():
        c = ctx.run(events, s.ref, ())
        calls.append(Call(path, c.raw_events, c.raw_chars, c.kept, c.prompt))
    return StrategyResult(
        name="chunked",
        budget=budget,
        parent_path=s.ref.path,
        raw_events=len(s.folded),
        raw_chars=ctx.folded_chars,
        inline_refs=0,
        calls=tuple(calls),
        parent_windows=len(windows),
        subagent_chunks=len(groups),
    )


def run_all(ctx: SessionContext, names: list[str] | None = None) -> dict[str, StrategyResult]:
    """Every registered strategy (or the named ones) over one session."""
    return {n: STRATEGIES[n](ctx) for n in (names or STRATEGIES)}


MIN_CONTENT_CHARS = 10
"""akm's `minContentChars` default: a session whose raw text is shorter is skipped, no LLM call."""


def content_chars(ctx: SessionContext, name: str) -> int:
    """UTF-16 chars of the raw text the `minContentChars` gate measures for strategy `name`.

    akm measures the FULL folded stream, not the parent view (pipeline-spec §4.6), so every
    strategy that reads subagents is gated on it; link reads the parent alone (akm before #830).
    Modelled as the sum of the events' text lengths (the gate's exact text is not in the spec;
    an empty or near-empty session is skipped under any reading).
    """
    return ctx.alone_chars if name == "link" else ctx.folded_chars


def apply_min_content_gate(
    ctx: SessionContext, results: dict[str, StrategyResult], minimum: int = MIN_CONTENT_CHARS
) -> dict[str, StrategyResult]:
    """`results` with every strategy that akm's gate would skip replaced by a no-call result."""
    out = {}
    for name, r in results.items():
        if content_chars(ctx, name) < minimum:
            r = replace(r, calls=(), parent_windows=0, subagent_chunks=0, stubbed=0, stub_saved_chars=0, skipped="min_content_chars")
        out[name] = r
    return out
