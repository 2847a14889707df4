"""The `subagents` table: every folded transcript under a session's subagents/ folder."""

from __future__ import annotations

from collections import Counter

from measure.akm.records import Session, TranscriptFile
from measure.measurements.pairs import TASK_ID, stem
from measure.measurements.tasks import iso_time

def subagent_kind(tf: TranscriptFile, session: Session) -> str:
    name = tf.path.rsplit("/", 1)[-1]
    if name == "journal.jsonl":
        return "workflow_journal"
    if name.startswith("agent-acompact"):
        return "compaction_helper"
    inside = tf.path[len(session.ref.path) - len(".jsonl") + len("/subagents/") :]
    if inside.startswith("workflows/") or (tf.sidecar and tf.sidecar.agent_type == "workflow-subagent"):
        return "workflow_agent"
    if name.startswith("agent-"):
        return "task_agent"
    return "other"


def subagent_rows(session: Session) -> list[dict]:
    launches = {a: mode for a, mode, _ in session.parent.launches}
    rows = []
    notified = Counter(tid for e in session.parent.events if "<task-id>" in e.text for tid in TASK_ID.findall(e.text))
    for tf in session.subagents:
        agent_id = stem(tf.path)
        bare = agent_id.removeprefix("agent-")
        sc = tf.sidecar
        ts = [e.ts for e in tf.events]
        mode = launches.get(bare)
        rows.append(
            {
                "subagent_path": tf.path,
                "agent_id": agent_id,
                "kind": subagent_kind(tf, session),
                "agent_type": sc.agent_type if sc else None,
                "description": sc.description if sc else None,
                "sidecar": sc.state if sc else "missing",
                "events": len(tf.events),
                "chars": sum(e.chars for e in tf.events),
                "first_ts": iso_time(min(ts)) if ts else None,
                "last_ts": iso_time(max(ts)) if ts else None,
                "launch": mode or "unknown",
                "notifications": notified[bare],
            }
        )
    return rows

