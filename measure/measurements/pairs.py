"""Pair each subagent's final report with the parent event that copies it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from measure.akm.records import Event, Session
from measure.measurements.tasks import AGENT_ID_LINE

_NON_WORD = re.compile(r"[^a-z0-9]+")
_AGENT_STEM = re.compile(r"^agent-(.+)$")
TASK_ID = re.compile(r"<task-id>([^<]*)</task-id>")


@dataclass(frozen=True)
class DuplicatePair:
    """A parent notification and the subagent final report it copies (#840 definition)."""

    agent_id: str  # sidecar file stem, `agent-` included
    subagent_path: str
    description: str
    tool_use_id: str | None
    pairing: str  # "sidecar_tool_use_id" or "agent_id"
    parent_index: int  # index of the notification in the folded stream
    notification: Event
    final: Event
    overlap: float


def word_set(text: str) -> set[str]:
    """#840's word set: lowercase, runs outside a-z0-9 as one space, words over 3 chars."""
    return {w for w in _NON_WORD.sub(" ", text.lower()).split(" ") if len(w) > 3}


def jaccard(a: str, b: str) -> float:
    return set_jaccard(word_set(a), word_set(b))


def set_jaccard(sa: set[str] | frozenset[str], sb: set[str] | frozenset[str]) -> float:
    """Jaccard of two word sets (0 when either is empty), as #840 scores a pair."""
    if not sa or not sb:
        return 0.0
    inter = len(sa & sb)
    return inter / (len(sa) + len(sb) - inter)


def stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".jsonl")


def _overlap(note: Event, final: Event, overlaps: dict) -> float:
    hit = overlaps.get((id(note), id(final)))
    if hit is None or hit[0] is not note or hit[1] is not final:
        hit = overlaps[id(note), id(final)] = (note, final, jaccard(note.text, final.text))  # holding both keeps the ids
    return hit[2]


def find_pairs(session: Session, overlaps: dict) -> tuple[DuplicatePair, ...]:
    """#840's sidecar pairs, then agent-id pairs for subagents that have none, overlap-sorted.

    #840 joins a top-level sidecar's `toolUseId` to the first parent `<task-notification>`
    that mentions it. Most transcripts have no sidecar; for those the agent id (file stem)
    is matched to a notification's `<task-id>`, else to a sync Task result's `agentId:`.
    `overlaps` (keyed by the two events' identities) shares scores between calls over the
    same events, as a replay's moments are.
    """
    parent_path = session.ref.path
    # One pass over the parent picks the only events a pair can use, so the per-subagent
    # searches below stay small however long the session is.
    notes: list[tuple[int, Event]] = []
    by_task: dict[str, tuple[int, Event]] = {}  # first notification naming each <task-id>
    by_result: dict[str, tuple[int, Event]] = {}  # first tool result naming each agentId
    for i, e in enumerate(session.folded):
        if e.file == parent_path:
            if "<task-notification>" in e.text:
                notes.append((i, e))
                for tid in TASK_ID.findall(e.text):
                    by_task.setdefault(tid, (i, e))
            if "[tool_result]" in e.text and "agentId: " in e.text:
                for aid in AGENT_ID_LINE.findall(e.text):
                    by_result.setdefault(aid, (i, e))
    pairs: list[DuplicatePair] = []
    top = parent_path[: -len(".jsonl")] + "/subagents/"  # #840's readdir is not recursive: it sees only these
    # #840's script reads the sidecars in ascending name order; ties in overlap keep it.
    for tf in sorted(session.subagents, key=lambda t: t.path.encode()):
        sc = tf.sidecar
        agent_id = stem(tf.path)
        found = None
        if sc is not None and sc.tool_use_id and tf.path.startswith(top) and "/" not in tf.path[len(top) :]:
            found = next(((i, e) for i, e in notes if sc.tool_use_id in e.text), None)
            pairing = "sidecar_tool_use_id"
        if found is None:
            m = _AGENT_STEM.match(agent_id)
            if not m or m.group(1).startswith("acompact"):
                continue
            aid = m.group(1)
            found = by_task.get(aid)
            pairing = "agent_id_notification"
            if found is None:
                found = by_result.get(aid)
                pairing = "agent_id_tool_result"
            if found is None:
                continue
        final_events = tf.alone()
        if not final_events:
            continue
        final = final_events[-1]
        index, note = found
        pairs.append(DuplicatePair(
            agent_id=agent_id, subagent_path=tf.path, description=(sc.description or "") if sc else "",
            tool_use_id=sc.tool_use_id if sc else None, pairing=pairing, parent_index=index,
            notification=note, final=final, overlap=_overlap(note, final, overlaps),
        ))
    pairs.sort(key=lambda p: -p.overlap)
    return tuple(pairs)
