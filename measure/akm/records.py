"""Frozen records passed between the pipeline stages."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from operator import attrgetter


@dataclass(frozen=True, slots=True)
class Event:
    """One transcript event as akm sees it after parsing (`SessionEvent`)."""

    role: str
    ts: float  # ms since epoch; a JSON number is taken as-is, so it may be fractional
    text: str
    file: str  # the transcript the line came from (path as given to the reader)
    chars: int  # UTF-16 length of `text`, computed once


@dataclass(frozen=True, slots=True)
class InlineRef:
    """An `akm remember` / `akm feedback` call found in raw event text."""

    kind: str  # "remember" | "feedback"
    text: str
    ts: float
    ref: str | None = None


@dataclass(frozen=True, slots=True)
class Listing:
    """One entry of akm's `listSessions` (head/tail peek plus stat)."""

    session_id: str
    path: str
    started_at: float | None
    ended_at: float | None
    project_hint: str | None
    title: str | None
    mtime_ms: float


@dataclass(frozen=True, slots=True)
class Sidecar:
    """A subagent's `.meta.json`: state is `ok`, `missing`, `broken` or `null`."""

    state: str
    agent_type: str | None = None
    description: str | None = None
    tool_use_id: str | None = None
    raw: dict | None = None


@dataclass(frozen=True, slots=True)
class TranscriptFile:
    """One parsed `.jsonl` (parent or subagent), in file order, before folding."""

    path: str
    events: tuple[Event, ...]  # unprefixed texts, in line order
    refs: tuple[InlineRef, ...]
    title: str | None  # last custom-title line
    lines: int
    bad_lines: int  # lines that did not parse as JSON
    sidecar: Sidecar | None = None  # subagent files only
    mtime_ms: float = 0.0  # this file's own mtime
    fallback: tuple[int, ...] = ()  # indices of events whose ts fell back to the parent mtime
    long_lines: int = 0  # lines over read.MAX_LINE_BYTES, skipped unread

    def alone(self) -> tuple["Event", ...]:
        """The events akm's `readSession` gives when this file is read as a session itself."""
        events = list(self.events)
        for i in self.fallback:
            e = events[i]
            events[i] = Event(e.role, self.mtime_ms, e.text, e.file, e.chars)
        return sorted_events(events)


@dataclass(frozen=True, slots=True)
class SessionRef:
    """The ref akm's `readSession` returns (timestamps already resolved)."""

    harness: str
    session_id: str
    path: str
    started_at: float | None
    ended_at: float | None
    project_hint: str | None
    title: str | None


@dataclass(frozen=True, slots=True)
class Session:
    """A session read once: parent and subagent files, plus akm's folded view."""

    ref: SessionRef
    parent: TranscriptFile
    subagents: tuple[TranscriptFile, ...]  # walk order (bytewise-sorted dirs)
    folded: tuple[Event, ...]  # provenance-stamped, stable-sorted by ts
    refs: tuple[InlineRef, ...]  # parent first, then each subagent file
    mtime_ms: float
    ctime_ms: float
    errors: tuple[tuple[str, str], ...] = ()  # (path, reason) for files that failed to read

    @property
    def alone_ref(self) -> SessionRef:
        """The ref akm returns when the session has no subagents folder."""
        ts = [e.ts for e in self.parent.events]  # first/last of the ts sort are min/max
        return replace(self.ref, started_at=min(ts) if ts else self.ctime_ms, ended_at=max(ts) if ts else self.mtime_ms)

    @property
    def alone(self) -> tuple[Event, ...]:
        """The parent-alone stream (what akm reads with no subagents folder)."""
        return sorted_events(self.parent.events)


by_ts = attrgetter("ts")


def sorted_events(events: tuple[Event, ...] | list[Event]) -> tuple[Event, ...]:
    """akm's stable sort by timestamp."""
    return tuple(sorted(events, key=by_ts))


@dataclass(frozen=True, slots=True)
class PrefilterStats:
    """`preFilterSession` stats, named as akm names them."""

    inputCount: int
    outputCount: int
    droppedByRule: dict = field(default_factory=dict)
    truncatedCount: int = 0
    totalChars: int = 0
    budgetDroppedCount: int = 0


@dataclass(frozen=True, slots=True)
class Prefiltered:
    """The kept events and the stats of one pre-filter call."""

    events: tuple[Event, ...]
    stats: PrefilterStats
    stubbed: int = 0  # notifications replaced by the #839 dedupe post-pass
    stub_saved_chars: int = 0  # kept chars those stubs removed
