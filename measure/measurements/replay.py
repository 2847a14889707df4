"""The `replay` table: akm's pipeline re-run at earlier moments of a session, as if extracting it mid-write.

A session is rebuilt as it stood at moment *t* from the one read the run already made: every
file is cut to the events written up to *t* (a file is appended, so an event is written no
earlier than the events before it: its moment is the running maximum of its file's timestamps,
and an event without a timestamp of its own belongs to the moment of the event before it).
Files with nothing written yet are absent. At each moment every strategy runs on the cut
session and akm's content hash is taken; a changed hash is an extraction akm would make.

Cost: each moment runs every strategy on the cut session, sharing what moments have in common:
per-event pre-filter verdicts and rendered lines (with the plain run), the pre-filter result of
any event sequence already seen (chunked's closed windows, a subagent that wrote nothing new),
pair scores and each call's digest. A cut that is a prefix of the folded (or parent-alone)
stream, as most are, is sliced, pre-filtered from an index of the whole stream (PrefixPrefilter:
cost grows with the events kept) and hashed from where the previous moment's hash stopped;
prompts are checked for the error akm's build would raise, not built (nothing reads them), and
fold_stub_raw's stream is cut from the whole session's stubbed one when it can be (StubbedStream).
What is left per moment are passes over the cut (chunked's windows, the slicing): moments x
events still, with moments capped at MAX_MOMENTS per session.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace
from itertools import accumulate

from measure.akm.hashing import PrefixHashes, content_hash
from measure.akm.prefilter import PrefixPrefilter
from measure.akm.read import inline_refs
from measure.akm.records import Session, TranscriptFile
from measure.measurements.strategies import STRATEGIES, SessionContext, StrategyResult, StubbedStream
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
        try:
            minutes = float(text[len("every:") :])
        except ValueError:
            minutes = 0.0
        if minutes > 0 and minutes == minutes and minutes != float("inf"):
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


def _ref_counts(tf: TranscriptFile) -> list[int]:
    """refs found in the first k events, for k = 0..len(events) (refs come in event order)."""
    counts = [0]
    n = 0
    for e in tf.events:
        if "akm" in e.text:
            n += len(inline_refs(e.text, e.ts))
        counts.append(n)
    return counts


class Replayer:
    """A read session, indexed once so that it can be cut at any moment in one pass over its events."""

    def __init__(self, session: Session):
        self.session = session
        self.files = (session.parent, *session.subagents)
        self.written = [written_at(tf) for tf in self.files]
        self.refs = [_ref_counts(tf) for tf in self.files]
        # The folded stream is the stable ts-sort of the files' events (prefixed for subagents),
        # concatenated in walk order: the same sort over the written-at values aligns them.
        order = []
        for k, (tf, wa) in enumerate(zip(self.files, self.written)):
            order.extend((e.ts, k, w) for e, w in zip(tf.events, wa))
        order.sort(key=lambda x: x[0])
        self.folded_written = [w for _, _, w in order]
        self.final = max((wa[-1] for wa in self.written if wa), default=None)
        # A cut is usually a prefix of the folded stream (and of the parent-alone stream): then
        # it is sliced, and its content hash continues the previous moment's (PrefixHashes).
        self._folded_high = list(accumulate(self.folded_written, max))
        self._folded_sorted = sorted(self.folded_written)
        self.folded_hashes = PrefixHashes(session.folded)
        ts = [e.ts for e in session.parent.events]
        self._parent_high = list(accumulate(ts, max))
        self._parent_low = list(accumulate(reversed(ts), min))[::-1]
        self.alone = session.alone
        self.alone_hashes = PrefixHashes(self.alone)

    def folded_prefix(self, t: float) -> int | None:
        """k when the session cut at `t` folds to the first k events of the folded stream, else None."""
        k = bisect_right(self._folded_high, t)
        return k if bisect_right(self._folded_sorted, t) == k else None

    def alone_prefix(self, t: float) -> int | None:
        """k when the parent cut at `t`, read alone, is the first k events of the whole parent's
        alone stream (its sort): every event kept is no later than every event cut, else None."""
        k = bisect_right(self.written[0], t)
        n = len(self._parent_high)
        return k if k in (0, n) or self._parent_high[k - 1] <= self._parent_low[k] else None

    def hashes(self, t: float, cut: Session) -> tuple[str, str | None]:
        """akm's content hash of the cut's folded stream, and of its parent read alone when that is
        a prefix (else None: hash `cut.alone`); moments must come in increasing order."""
        k = self.folded_prefix(t)
        folded = self.folded_hashes.of(k) if k is not None else content_hash(cut.folded)
        k = self.alone_prefix(t)
        return folded, (self.alone_hashes.of(k) if k is not None else None)

    def cut(self, t: float) -> Session | None:
        """The session as it stood at `t`, or None when nothing was written yet."""
        s = self.session
        cuts = [bisect_right(wa, t) for wa in self.written]
        if not any(cuts):
            return None
        files = []
        for tf, k, refs in zip(self.files, cuts, self.refs):
            files.append(replace(tf, events=tf.events[:k], refs=tf.refs[: refs[k]], fallback=tuple(i for i in tf.fallback if i < k)))
        parent, subs = files[0], tuple(f for f, k in zip(files[1:], cuts[1:]) if k)
        k = self.folded_prefix(t)
        folded = s.folded[:k] if k is not None else tuple(e for e, w in zip(s.folded, self.folded_written) if w <= t)
        refs = parent.refs + tuple(r for f in subs for r in f.refs)
        ref = replace(
            s.ref,
            started_at=folded[0].ts if folded else s.ctime_ms,
            ended_at=folded[-1].ts if folded else s.mtime_ms,
        )
        return replace(s, ref=ref, parent=parent, subagents=subs, folded=folded, refs=refs)


def turn_ends(parent_written: list[float], timeline: Timeline | None) -> list[float]:
    """The end of each parent turn: its last event before the next human prompt, and its last event."""
    out = parent_written[-1:]
    for turn in timeline.turns if timeline is not None else ():
        if turn.source == "human" and turn.ts is not None:
            i = bisect_left(parent_written, turn.ts)
            if i:
                out.append(parent_written[i - 1])
    return out


def moments(replayer: Replayer, timeline: Timeline | None, schedule: Schedule) -> tuple[list[float], int]:
    """The schedule's moments for one session (sorted, distinct, final state last) and how many the cap dropped."""
    final = replayer.final
    if final is None:
        return [], 0
    if schedule.kind == "turn_end":
        points = turn_ends(replayer.written[0], timeline)
    elif schedule.kind == "every":
        start = min(wa[0] for wa in replayer.written if wa)
        step = schedule.minutes * 60_000
        n = int((final - start) // step)
        points = [start + step * i for i in range(1, min(n, 100 * MAX_MOMENTS) + 1)]
    else:
        points = []
    found = sorted({p for p in points if p < final} | {final})
    if len(found) <= MAX_MOMENTS:
        return found, 0
    keep = [found[round(i * (len(found) - 1) / (MAX_MOMENTS - 1))] for i in range(MAX_MOMENTS)]
    return keep, len(found) - len(keep)


def prompt_key(result: StrategyResult, digests: dict | None = None) -> str:
    """What the LLM would read: the kept events of every call and the refs listed as preserved.

    The Started/Ended header is left out: any later event (a subagent's too) widens Ended in
    every strategy, and a prompt that differs only there tells the LLM nothing new. Each call
    is hashed once per distinct list of kept events: `digests` (keyed by the events' identities,
    which must stay alive while it is used) keeps them from one moment to the next, where most
    calls (chunked's closed windows, subagents that wrote nothing new) keep the same events.
    """
    h = hashlib.sha256(f"refs:{result.inline_refs}".encode())
    for call in result.calls:
        h.update(b"\x01call")
        h.update(_call_digest(call.kept.events, digests))
    return h.hexdigest()


def _call_digest(events, digests: dict | None) -> bytes:
    key = tuple(map(id, events)) if digests is not None else None
    found = digests.get(key) if key is not None else None
    if found is None:
        c = hashlib.sha256()
        for e in events:
            c.update(f"\x00{e.role}\x00{e.ts!r}\x00".encode())
            c.update(e.text.encode("utf-8", "surrogatepass"))
        found = c.digest()
        if key is not None:
            digests[key] = found
    return found


@dataclass
class _Tally:
    points: int = 0
    extractions: int = 0
    wasted: int = 0
    calls: int = 0
    wasted_calls: int = 0
    late: int = 0
    last_hash: str | None = None
    last_prompt: str | None = None
    prompts: set = None  # type: ignore[assignment]


def replay_rows(
    plain: SessionContext,
    timelines: dict[str, Timeline],
    strategies,
    schedule: str | Schedule,
    background: list[dict],
) -> list[dict]:
    """One row per strategy: what akm would extract, and re-extract, at each moment of `schedule`.

    `plain` is the run's own context (its session, parameters and shared pre-filter verdicts);
    `background` the session's `background` rows (their late completions are `late_results`).
    """
    session, params, memo, lines = plain.session, plain.params, plain.memo, plain.lines
    schedule = parse_schedule(schedule) if isinstance(schedule, str) else schedule
    late_results = sum(1 for r in background if r.get("completed_after_parent_end"))
    replayer = Replayer(session)
    # A moment's prompts are never read (prompt_key reads the calls' kept events): only checked
    # for the error akm's build would raise, not built (their Started/Ended change every moment).
    moment_params = replace(params, build_prompts=False)
    # The folded and parent-alone streams, indexed once: a cut that is a prefix of one is
    # pre-filtered without a pass over its events (PrefixPrefilter), its chars known at once.
    rules = dict(max_total_chars=params.budget, max_event_text_length=params.max_event_text_length,
                 readonly_ops=params.readonly_ops, memo=memo)
    folded_index = PrefixPrefilter(session.folded, **rules)
    alone_index = PrefixPrefilter(replayer.alone, **rules)
    stubbed = StubbedStream.of(plain, **rules) if "fold_stub_raw" in strategies else None
    # Moments after the parent's last event see only what other files wrote after it.
    end = replayer.written[0][-1] if replayer.written[0] else None
    points, dropped = moments(replayer, timelines.get(session.ref.path), schedule)
    tallies = {name: _Tally(prompts=set()) for name in strategies}
    alive = []  # results (and their stub events) stay alive while `memo` and `digests` may hold their ids
    digests: dict = {}
    prefiltered: dict = {}  # pre-filter results by event sequence, shared by the moments
    for t in points:
        cut = replayer.cut(t)
        if cut is None:
            continue
        ctx = SessionContext(cut, moment_params)
        ctx.memo, ctx.lines, ctx.overlaps, ctx.prefiltered = memo, lines, plain.overlaps, prefiltered
        k = replayer.folded_prefix(t)
        if k is not None:
            ctx.use_prefix(cut.folded, folded_index, k)
            if stubbed is not None:
                ctx.stubbed = (stubbed, k)
        k = replayer.alone_prefix(t)
        if k is not None:
            ctx.use_prefix(replayer.alone[:k], alone_index, k, alone=True)
        folded_hash, alone_hash = replayer.hashes(t, cut)
        for name in strategies:
            try:
                result = STRATEGIES[name](ctx)
            except ValueError:  # akm's prompt build would throw; the plain run reports it
                continue
            alive.append(result)
            if name == "link":
                alone_hash = alone_hash or content_hash(cut.alone)
                digest = alone_hash
            else:
                digest = folded_hash
            tl = tallies[name]
            tl.points += 1
            if digest == tl.last_hash:
                continue
            key = prompt_key(result, digests)
            tl.extractions += 1
            tl.calls += len(result.calls)
            if end is not None and t > end:
                tl.late += 1
            if key == tl.last_prompt:
                tl.wasted += 1
                tl.wasted_calls += len(result.calls)
            tl.prompts.add(key)
            tl.last_hash, tl.last_prompt = digest, key
    rows = []
    for name in strategies:
        tl = tallies[name]
        rows.append(
            {
                "strategy": name,
                "schedule": schedule.name,
                "extraction_points": tl.points,
                "moments_dropped": dropped,
                "extractions": tl.extractions,
                "re_extractions": max(0, tl.extractions - 1),
                "distinct_prompts": len(tl.prompts),
                "wasted_extractions": tl.wasted,
                "late_extractions": tl.late,
                "late_results": late_results,
                "llm_calls": tl.calls,
                "wasted_llm_calls": tl.wasted_calls,
            }
        )
    del alive
    return rows

