"""The `wakeups` table: what each notification the parent consumed as a turn cost, and batching.

A wake-up is a `task_notification` turn of the parent's task timeline (a `queue-operation`
enqueue, a dequeue, then the user line carrying the same string; claude-code-format.md §9.1).
Its cost is the API calls of the turn it opened: every call whose first line lies after the
notification's user line and before the next turn that is not `meta`. A notification that ended
as enqueue + remove (the remove line may carry no content) opened no turn and is no wake-up; per
session, enqueued notifications matched to no delivered turn are counted as undelivered.

Batching (seed 003's rule: batch only what is already queued at the boundary, no waiting window):
`batchable_with_previous` says whether a notification was enqueued before the previous
notification's turn began (the pairwise rule of the issue). The counterfactual is built greedily
and conservatively: the first notification of a batch is its head; the batch takes the following
delivered notifications, in order, while each was enqueued before the head's turn began. A batch
of n is assumed to cost what its head's turn cost, so it saves the calls and tokens of the other
n - 1 turns.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from dataclasses import dataclass

from measure.measurements.background import seconds
from measure.measurements.tasks import Notification, QueueOp, Timeline, Turn, iso_time
from measure.measurements.tokens import SUMMED, Call, Usage


@dataclass(frozen=True, slots=True)
class Wakeup:
    """One delivered notification, its enqueue (if any) and the calls of the turn it opened."""

    turn: Turn
    enqueue: QueueOp | None
    calls: tuple[Call, ...]


def wakeups(timeline: Timeline, usage: Usage | None) -> list[Wakeup]:
    """Every task_notification turn of `timeline`, matched to its enqueue, with its calls."""
    calls = usage.calls if usage else ()  # in line order (`Usage.calls`)
    call_lines = [c.line for c in calls]
    bounds = sorted(t.line for t in timeline.turns if t.source != "meta")
    pending: dict[Notification, deque[QueueOp]] = {}
    for q in timeline.queue:
        if q.operation == "enqueue" and q.notification is not None:
            pending.setdefault(q.notification, deque()).append(q)
    out = []
    for turn in timeline.turns:
        if turn.source != "task_notification":
            continue
        waiting = pending.get(turn.notification)  # FIFO: the earliest unmatched enqueue of the same string
        enq = waiting.popleft() if waiting and waiting[0].line < turn.line else None
        k = bisect_right(bounds, turn.line)  # the next turn, whose calls are its own
        lo = bisect_right(call_lines, turn.line)
        hi = bisect_right(call_lines, bounds[k]) if k < len(bounds) else len(calls)
        out.append(Wakeup(turn, enq, tuple(calls[lo:hi])))
    return out


def wakeup_rows(found: list[Wakeup]) -> list[dict]:
    """One row per wake-up, in delivery order, with its counterfactual batch (greedy, see the module doc)."""
    rows = []
    prev: Wakeup | None = None
    head: Wakeup | None = None  # the current batch's first wake-up
    batch = 0
    for w in found:
        if head is None or w.enqueue is None or w.enqueue.line >= head.turn.line:
            head, batch = w, batch + 1
        n = w.turn.notification
        enq_ts = w.enqueue.ts if w.enqueue else None
        rows.append({
            "line": w.turn.line, "task_id": n.task_id, "task_kind": n.task_kind, "status": n.status,
            "enqueued_at": iso_time(enq_ts), "delivered_at": iso_time(w.turn.ts),
            "waited_seconds": seconds(enq_ts, w.turn.ts), "api_calls": len(w.calls),
            **{name: sum(c.usage[i] for c in w.calls) for name, i in SUMMED},
            "batchable_with_previous": bool(prev is not None and w.enqueue is not None and w.enqueue.line < prev.turn.line),
            "batch": batch,
        })
        prev = w
    return rows


def wakeup_summary(timeline: Timeline | None, found: list[Wakeup], rows: list[dict]) -> dict:
    """Per-session wake-up figures and the batching counterfactual (columns of `cost_sessions`);
    `rows` are `wakeup_rows(found)`."""
    saved = [r for i, r in enumerate(rows) if i and r["batch"] == rows[i - 1]["batch"]]
    queue = timeline.queue if timeline else ()
    enqueued = sum(1 for q in queue if q.operation == "enqueue" and q.notification is not None)
    return {
        "notifications_enqueued": enqueued,
        "notifications_undelivered": enqueued - sum(1 for w in found if w.enqueue is not None),
        "wakeup_turns": len(rows), "wakeup_calls": sum(r["api_calls"] for r in rows),
        **{f"wakeup_{name}": sum(r[name] for r in rows) for name, _ in SUMMED},
        "batchable_wakeups": sum(r["batchable_with_previous"] for r in rows),
        "batched_turns": len({r["batch"] for r in rows}),
        "batch_saved_calls": sum(r["api_calls"] for r in saved),
        "batch_saved_cache_read_tokens": sum(r["cache_read_tokens"] for r in saved),
        "batch_saved_tokens": sum(r[name] for r in saved for name, _ in SUMMED),
    }
