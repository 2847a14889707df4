"""The `background` table: each background task a parent launched, its launch stub and true completion."""

from __future__ import annotations

from dataclasses import dataclass, field

from measure.akm.records import Session
from measure.measurements.pairs import stem
from measure.measurements.tasks import Notification, Timeline, iso_time
from measure.numbers import rounded

#: Launch acknowledgements that start a task running out of band (format §8.3–8.4), by row kind.
BACKGROUND_ACKS = {"async_launched": "agent", "forked_skill": "forked_skill", "background_bash": "bash", "monitor": "monitor"}
_TOOL_KIND = {"Task": "agent", "Agent": "agent", "Bash": "bash", "Monitor": "monitor", "Skill": "forked_skill"}


@dataclass
class _Task:
    """What the parent's timeline says about one background task, gathered in line order."""

    task_id: str | None
    tool_use_id: str | None
    kind: str
    launched_at: float | None = None
    ack_at: float | None = None
    ack_chars: int | None = None
    notes: list[tuple[float | None, Notification]] = field(default_factory=list)  # every notification, in line order
    delivered: int = 0
    removed: int = 0
    resumes: int = 0


def background_tasks(parent: Timeline) -> list[_Task]:
    """Background tasks of one parent timeline, with their notifications matched queue-wise.

    A notification is matched by task id, else by tool-use id (format §9.1). The queue is a
    FIFO: a `remove` without content (CC 2.0.x) takes the oldest pending notification, a user
    turn carrying a notification consumes the pending `enqueue` of the same task or, when there
    is none (builds that wrote no queue lines), counts as a notification of its own.
    """
    by_tool = {launch.tool_use_id: launch for launch in parent.launches}
    tasks: list[_Task] = []
    by_id: dict[str, _Task] = {}
    by_tuid: dict[str, _Task] = {}

    def index(t: _Task) -> _Task:
        tasks.append(t)
        if t.task_id:
            by_id.setdefault(t.task_id, t)
        if t.tool_use_id:
            by_tuid.setdefault(t.tool_use_id, t)
        return t

    acked = set()
    for ack in parent.acks:
        if ack.kind == "resumed" and ack.task_id in by_id:
            by_id[ack.task_id].resumes += 1
            continue
        if ack.kind not in BACKGROUND_ACKS or ack.task_id in by_id:
            continue
        launch = by_tool.get(ack.tool_use_id)
        acked.add(ack.tool_use_id)
        index(_Task(ack.task_id, ack.tool_use_id, BACKGROUND_ACKS[ack.kind], launch.ts if launch else None, ack.ts, ack.chars))
    for launch in parent.launches:
        if launch.background and launch.tool_use_id not in acked and launch.tool in _TOOL_KIND:
            index(_Task(None, launch.tool_use_id, _TOOL_KIND[launch.tool], launch.ts))

    def task_of(note: Notification, line: int) -> _Task:
        t = by_id.get(note.task_id) or by_tuid.get(note.tool_use_id)  # neither index holds a None or "" key
        if t is None:
            t = index(_Task(note.task_id or f"line:{line}", note.tool_use_id, note.task_kind))
        elif t.task_id is None and note.task_id:
            t.task_id = note.task_id
            by_id.setdefault(note.task_id, t)
        if note.task_kind == "workflow":  # a workflow's launch ack has the agent's async shape (format §9.2)
            t.kind = "workflow"
        return t

    pending: list[_Task] = []  # a task per enqueued notification not yet delivered or removed

    def take(t: _Task | None) -> _Task | None:
        """The oldest pending notification of `t` (of any task when None), taken off the queue."""
        i = next((i for i, pt in enumerate(pending) if t is None or pt is t), None)
        return None if i is None else pending.pop(i)

    events = sorted([(q.line, "queue", q) for q in parent.queue]
                    + [(x.line, "turn", x) for x in parent.turns if x.notification])
    for line, what, rec in events:
        note = rec.notification
        if what == "turn":
            t = task_of(note, line)
            t.delivered += 1
            if take(t) is None:
                t.notes.append((rec.ts, note))
        elif rec.operation == "enqueue" and note is not None:
            t = task_of(note, line)
            t.notes.append((rec.ts, note))
            pending.append(t)
        elif rec.operation == "remove":
            t = take(task_of(note, line)) if note is not None else take(None)
            if t is not None:
                t.removed += 1
    return tasks


def background_rows(session: Session, timelines: dict[str, Timeline]) -> list[dict]:
    """One row per background task of the session's parent (none when it launched none)."""
    parent = timelines.get(session.ref.path)
    if parent is None:
        return []
    files = {stem(tf.path): tf for tf in session.subagents}
    # The parent's last turn ended at its last assistant line with a timestamp of its own: queue lines,
    # undelivered notifications and user lines after it are not the parent working.
    fallback = set(session.parent.fallback)
    end = max((e.ts for i, e in enumerate(session.parent.events) if e.role == "assistant" and i not in fallback),
              default=None)
    version = parent.versions[-1][0] if parent.versions else None
    rows = []
    for t in background_tasks(parent):
        tf = files.get(f"agent-{t.task_id}") if t.task_id else None
        transcript_end = timelines[tf.path].last_ts if tf is not None and tf.path in timelines else None
        first_note = next((ts for ts, _ in t.notes if ts is not None), None)
        completed = first_note if first_note is not None else transcript_end
        last = t.notes[-1][1] if t.notes else None
        results = [n.result_chars for _, n in t.notes if n.result_chars is not None]
        rows.append({
            "task_id": t.task_id, "tool_use_id": t.tool_use_id, "kind": t.kind, "cc_version": version,
            "launched_at": iso_time(t.launched_at), "ack_at": iso_time(t.ack_at), "ack_chars": t.ack_chars,
            "completed_at": iso_time(completed),
            "completed_by": None if completed is None else ("notification" if first_note is not None else "transcript"),
            "stub_seconds": seconds(t.launched_at, t.ack_at), "run_seconds": seconds(t.launched_at, completed),
            "notifications": len(t.notes), "delivered": t.delivered, "removed": t.removed,
            "delivery": "turn" if t.delivered else "removed" if t.removed else "never",
            "parent_end_at": iso_time(end),
            "completed_after_parent_end": None if completed is None or end is None else completed > end,
            "status": last.status if last else None, "killed": any(n.status == "killed" for _, n in t.notes),
            "resumes": t.resumes, "transcript_events": len(tf.events) if tf is not None else None,
            "transcript_chars": sum(e.chars for e in tf.events) if tf is not None else None,
            "transcript_end_at": iso_time(transcript_end), "result_chars": results[-1] if results else None,
        })
    return rows


def seconds(start: float | None, end: float | None) -> float | None:
    """Seconds from `start` to `end` (epoch ms), rounded to the millisecond; None when either is unknown."""
    return None if start is None or end is None else rounded((end - start) / 1000, 3)
