"""The `replay` table: akm's pipeline re-run at earlier moments of a session, as if mid-write.

A session is rebuilt as it stood at moment *t* from the one read the run already made: every
file is cut to the events written up to *t* (a file is appended, so an event is written no
earlier than the events before it: its moment is the running maximum of its file's timestamps,
and an event without a timestamp of its own belongs to the moment of the event before it).
Files with nothing written yet are absent. At each moment every strategy runs on the cut
session; a moved content hash is an extraction akm would make. A cut only grows from one moment
to the next, so akm's hash of it moves exactly when it gained events: the events are counted,
not hashed (the folded stream's for every strategy, the parent's for link, which reads it alone).

Cost: each moment runs every strategy on its cut from scratch, sharing only per-event results:
the plain run's memo (pre-filter verdicts, rendered lines, pair scores) and the kept events'
digests (`prompt_key`). Moments x events, with moments capped at MAX_MOMENTS per session.
"""

from __future__ import annotations

import hashlib
import math
from bisect import bisect_left, bisect_right
from contextlib import suppress
from dataclasses import dataclass, field, replace
from itertools import accumulate

from measure.akm.read import inline_refs
from measure.akm.records import Session, TranscriptFile
from measure.measurements.strategies import STRATEGIES, SessionContext, StrategyResult
from measure.measurements.tasks import Timeline

MAX_MOMENTS = 48
"""At most this many moments per session (evenly thinned, the final state always kept)."""

SCHEDULES = ("turn_end", "final", "every:<minutes>")


@dataclass(frozen=True)
class Schedule:
    """When to replay: at each turn end, only at the final state, or every `minutes`."""

    kind: str  # turn_end | final | every
    minutes: float = 0.0

    @property
    def name(self) -> str:
        return f"every:{self.minutes:g}" if self.kind == "every" else self.kind


def parse_schedule(text: str) -> Schedule:
    """`turn_end`, `final` or `every:<minutes>`; raises ValueError otherwise."""
    if text in ("turn_end", "final"):
        return Schedule(text)
    if text.startswith("every:"):
        with suppress(ValueError):  # not a number: refused below
            minutes = float(text[len("every:") :])
            if 0 < minutes < float("inf"):  # NaN too is refused
                return Schedule("every", minutes)
    raise ValueError(f"expected one of {', '.join(SCHEDULES)} (minutes > 0), got {text!r}")


def written_at(tf: TranscriptFile) -> list[float]:
    """The moment each event of a file was written: the running maximum of its own timestamps."""
    fallback = set(tf.fallback)
    out: list[float] = []
    high = None
    for i, e in enumerate(tf.events):
        if i not in fallback and (high is None or e.ts > high):
            high = e.ts
        out.append(high)  # None until the first timestamped event
    first = next((w for w in out if w is not None), 0.0)
    return [first if w is None else w for w in out]


class Replayer:
    """A read session, indexed once so that it can be cut at any moment in one pass over its events."""

    def __init__(self, session: Session):
        self.session = session
        self.files = (session.parent, *session.subagents)
        self.written = [written_at(tf) for tf in self.files]
        # refs found in the first k events of each file, for k = 0..len(events) (refs come in event order)
        self.refs = [list(accumulate((len(inline_refs(e.text, e.ts)) if "akm" in e.text else 0 for e in tf.events),
                                     initial=0)) for tf in self.files]
        # The folded stream is the stable ts-sort of the files' events (prefixed for subagents),
        # concatenated in walk order: the same sort over the written-at values aligns them.
        order = sorted(((e.ts, w) for tf, wa in zip(self.files, self.written) for e, w in zip(tf.events, wa)),
                       key=lambda x: x[0])
        self.folded_written = [w for _, w in order]
        self.final = max((wa[-1] for wa in self.written if wa), default=None)

    def cut(self, t: float) -> Session | None:
        """The session as it stood at `t`, or None when nothing was written yet."""
        s = self.session
        cuts = [bisect_right(wa, t) for wa in self.written]
        if not any(cuts):
            return None
        if all(cuts[1:]) and all(k == len(tf.events) for tf, k in zip(self.files, cuts)):
            return s  # nothing written after t: the session as read
        files = [replace(tf, events=tf.events[:k], refs=tf.refs[: refs[k]],
                         fallback=tuple(i for i in tf.fallback if i < k))
                 for tf, k, refs in zip(self.files, cuts, self.refs)]
        parent, subs = files[0], tuple(f for f, k in zip(files[1:], cuts[1:]) if k)
        folded = tuple(e for e, w in zip(s.folded, self.folded_written) if w <= t)
        refs = parent.refs + tuple(r for f in subs for r in f.refs)
        ref = replace(s.ref, started_at=folded[0].ts if folded else s.ctime_ms,
                      ended_at=folded[-1].ts if folded else s.mtime_ms)
        return replace(s, ref=ref, parent=parent, subagents=subs, folded=folded, refs=refs)


def _until(records: tuple, t: float) -> tuple:
    """The records (in line order) written by `t`: a record's moment is the running maximum of the
    timestamps so far, as for events (one without a timestamp belongs to the moment before it)."""
    high = None
    for k, r in enumerate(records):
        if r.ts is not None and (high is None or r.ts > high):
            high = r.ts
            if high > t:
                return records[:k]
    return records


def timelines_at(timelines: dict[str, Timeline], t: float) -> dict[str, Timeline]:
    """Each file's task timeline as it stood at `t` (what a strategy reading deliveries knew then);
    `timelines` itself when nothing was recorded after `t`."""
    cut = {path: {f: _until(getattr(tl, f), t) for f in ("launches", "acks", "queue", "turns")} for path, tl in timelines.items()}
    if all(records is getattr(timelines[path], f) for path, fields in cut.items() for f, records in fields.items()):
        return timelines
    return {path: replace(timelines[path], **fields) for path, fields in cut.items()}


def moments(replayer: Replayer, timeline: Timeline | None, schedule: Schedule) -> tuple[list[float], int]:
    """The schedule's moments for one session (sorted, distinct, final state last) and how many the cap dropped."""
    final = replayer.final
    if final is None:
        return [], 0
    if schedule.kind == "turn_end":  # the parent's last event, and its last before each human prompt
        parent = replayer.written[0]
        turns = timeline.turns if timeline is not None else ()
        starts = [bisect_left(parent, t.ts) for t in turns if t.source == "human" and t.ts is not None]
        points = parent[-1:] + [parent[i - 1] for i in starts if i]
    elif schedule.kind == "every":
        start = min(wa[0] for wa in replayer.written if wa)
        step = schedule.minutes * 60_000
        n = int((final - start) // step) if math.isfinite(final - start) else 0  # a 1e400 timestamp: no moments between
        points = [start + step * i for i in range(1, min(n, 100 * MAX_MOMENTS) + 1)]
    else:
        points = []
    found = sorted({p for p in points if p < final} | {final})
    if len(found) <= MAX_MOMENTS:
        return found, 0
    keep = [found[round(i * (len(found) - 1) / (MAX_MOMENTS - 1))] for i in range(MAX_MOMENTS)]
    return keep, len(found) - len(keep)


def prompt_key(result: StrategyResult, digests: dict) -> str:
    """What the LLM would read: the kept events of every call and the refs listed as preserved.

    The Started/Ended header is left out: any later event (a subagent's too) widens Ended in
    every strategy, and a prompt that differs only there tells the LLM nothing new. `digests`
    holds each event's digest by its identity (with the event, so the id is not reused).
    """
    h = hashlib.sha256(f"refs:{result.inline_refs}".encode())
    for call in result.calls:
        h.update(b"\x01call")
        parts = []
        for e in call.kept.events:
            hit = digests.get(id(e))
            if hit is None or hit[0] is not e:
                d = hashlib.sha256(f"\x00{e.role}\x00{e.ts!r}\x00".encode("utf-8", "surrogatepass"))  # a role may be a lone surrogate
                d.update(e.text.encode("utf-8", "surrogatepass"))
                hit = digests[id(e)] = (e, d.digest())
            parts.append(hit[1])
        h.update(hashlib.sha256(b"".join(parts)).digest())
    return h.hexdigest()


@dataclass
class _Tally:
    points: int = 0
    extractions: int = 0
    wasted: int = 0
    calls: int = 0
    wasted_calls: int = 0
    late: int = 0
    last_events: int = -1  # events of the last extracted cut (the stream the strategy hashes)
    last_prompt: str | None = None
    prompts: set = field(default_factory=set)


def replay_rows(plain: SessionContext, results: dict[str, StrategyResult], schedule: str,
                background: list[dict]) -> list[dict]:
    """One row per strategy: what akm would extract, and re-extract, at each moment of `schedule`.

    `plain` is the run's own context (its session, parameters and memo, which every moment shares)
    and `results` what each strategy gives on it (before akm's minContentChars gate): a moment after
    which nothing was written is that session, and those results are its own. `background` holds
    the session's `background` rows (their late completions are `late_results`).
    """
    session, timelines = plain.session, plain.timelines
    schedule = parse_schedule(schedule)
    late_results = sum(1 for r in background if r.get("completed_after_parent_end"))
    replayer = Replayer(session)
    # Moments after the parent's last event see only what other files wrote after it.
    end = replayer.written[0][-1] if replayer.written[0] else None
    points, dropped = moments(replayer, plain.parent_timeline, schedule)
    tallies = {name: _Tally() for name in results}
    digests: dict = {}  # kept events' digests, shared by the moments (see prompt_key)
    for t in points:
        cut = replayer.cut(t)
        if cut is None:
            continue
        tls = timelines_at(timelines, t)
        ctx = SessionContext(cut, plain.params, plain.memo, tls)
        whole = cut is session and tls is timelines
        for name, tl in tallies.items():
            try:
                result = results[name] if whole else STRATEGIES[name](ctx)
            except ValueError:  # akm's prompt build would throw; the plain run reports it
                continue
            events = len(cut.parent.events) if name == "link" else len(cut.folded)
            tl.points += 1
            if events == tl.last_events:
                continue
            key = prompt_key(result, digests)
            wasted = key == tl.last_prompt
            tl.extractions += 1
            tl.calls += len(result.calls)
            tl.late += end is not None and t > end
            tl.wasted += wasted
            tl.wasted_calls += wasted * len(result.calls)
            tl.prompts.add(key)
            tl.last_events, tl.last_prompt = events, key
    return [
        {
            "strategy": name, "schedule": schedule.name, "extraction_points": tl.points, "moments_dropped": dropped,
            "extractions": tl.extractions, "re_extractions": max(0, tl.extractions - 1),
            "distinct_prompts": len(tl.prompts), "wasted_extractions": tl.wasted, "late_extractions": tl.late,
            "late_results": late_results, "llm_calls": tl.calls, "wasted_llm_calls": tl.wasted_calls,
        }
        for name, tl in tallies.items()
    ]

