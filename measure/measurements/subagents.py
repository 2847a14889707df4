"""Subagent kinds and launches (one classifier), and the `subagents` table.

One classifier, read by `subagents`, `delegation`, `tokens` and the overview. A kind is decided from
the file's name and sidecar first, then from its launch in the parent, then from its content (a
transcript that opens with the parent's own opening events is a replay of the parent); a transcript
none of these explains is `unknown`, never guessed to be delegated work. Launches are resolved from
every source the parent's task timeline holds (claude-code-format.md §2, §8), the source named.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import takewhile
from dataclasses import dataclass

from measure.akm.records import Event, Session, Sidecar
from measure.measurements.pairs import TASK_ID, stem
from measure.measurements.tasks import SPAWN_TOOLS, Ack, Launch, Timeline, iso_time

#: Kinds counted as delegated work (sessions, delegation totals, verdict). compaction_helper,
#: side_question and workflow_journal are listed, not counted; unknown is counted on its own.
DELEGATED_KINDS = frozenset({"task_agent", "workflow_agent", "fork"})

#: Opening events compared with the parent's to call a transcript a replay (fewer when either has fewer).
REPLAY_EVENTS = 2

#: Launch acknowledgements of a spawned subagent, by the `launch` they give (format §8.2–8.4).
LAUNCH_OF_ACK = {"sync_result": "sync", "async_launched": "background", "forked_skill": "fork",
                 "rejected": "rejected", "interrupted": "interrupted"}

_AGENT_ID = re.compile(r"agent-[0-9a-f]{7,17}")  # the hex ids of format §1 (7, 8 or 17 chars)
_SIDE_QUESTION = re.compile(r"agent-aside_question-[0-9a-f]+")


@dataclass(frozen=True, slots=True)
class Subagent:
    """One subagent transcript, classified."""

    kind: str  # task_agent, workflow_agent, fork, compaction_helper, side_question, workflow_journal, unknown
    launch: str  # sync, background, fork, rejected, interrupted, unknown
    launch_source: str  # tool_result_ack, tool_result_text, sidecar_tool_use_id, agent_progress, none
    tool_use_id: str | None  # the spawning tool_use, when resolved
    acknowledged: bool  # the spawn's tool result came back (a result, a launch ack, a rejection)
    replayed: int  # leading events repeating the parent's (a replay of the parent), else 0


def replayed_prefix(events: tuple[Event, ...], parent: tuple[Event, ...]) -> int:
    """How many leading events of a replay are parent events; 0 when the transcript is no replay: it does not
    open with the parent's opening events (role and text), REPLAY_EVENTS of them."""
    k = min(REPLAY_EVENTS, len(events), len(parent))
    if not k or any(a.role != b.role or a.text != b.text for a, b in zip(events[:k], parent[:k])):
        return 0
    seen = {(e.role, e.text) for e in parent}
    return sum(1 for _ in takewhile(lambda e: (e.role, e.text) in seen, events))


def kind_of(name: str, inside: str, sidecar: Sidecar | None, launch: str, replayed: int) -> str:
    """A transcript's kind from its file's stem (`name`), its path under `subagents/` (`inside`) and its sidecar
    (format §1, §3, §10), else from its launch, else from its replayed prefix (`replayed_prefix`)."""
    if name == "journal":
        return "workflow_journal"
    if name.startswith("agent-acompact"):  # `agent-acompact-<hex>`: a compaction call's transcript
        return "compaction_helper"
    if _SIDE_QUESTION.fullmatch(name):  # a `/btw` side question (no sidecar)
        return "side_question"
    agent_type = sidecar.agent_type if sidecar is not None else None
    if inside.startswith("workflows/") or agent_type == "workflow-subagent":
        return "workflow_agent"
    if agent_type == "fork" or launch == "fork" or (sidecar is not None and (sidecar.raw or {}).get("isFork") is True):
        return "fork"
    if launch != "unknown" or agent_type:
        return "task_agent"
    if replayed:  # a replay of the parent that no launch or sidecar explains: a side question
        return "side_question"
    return "task_agent" if _AGENT_ID.fullmatch(name) else "unknown"


class Launches:
    """Every launch the session's timelines hold (the parent's first, then each transcript's own:
    a nested agent's spawn lives in its parent agent's file), indexed for `resolve`."""

    def __init__(self, timelines: dict[str, Timeline] | None):
        self.by_task: dict[str, Ack] = {}
        self.by_tool_use: dict[str, Ack] = {}
        self.calls: dict[str, Launch] = {}
        self.progress: dict[str, str | None] = {}
        for tl in (timelines or {}).values():
            for a in tl.acks:
                if a.kind not in LAUNCH_OF_ACK:
                    continue
                # a sync result outranks another acknowledgement of the same agent, as a result is delivery
                if a.task_id and (a.task_id not in self.by_task or a.kind == "sync_result"):
                    self.by_task[a.task_id] = a
                if a.tool_use_id:
                    self.by_tool_use.setdefault(a.tool_use_id, a)
            for call in tl.launches:
                if call.tool in SPAWN_TOOLS:
                    self.calls.setdefault(call.tool_use_id, call)
            for agent, tool_use in tl.agent_progress:
                self.progress.setdefault(agent, tool_use)

    def resolve(self, agent: str, sidecar: Sidecar | None) -> tuple[str, str, str | None, bool]:
        """(launch, launch_source, tool_use_id, acknowledged) of agent id `agent`, from the first source naming it."""
        ack = self.by_task.get(agent)
        if ack is not None:
            return LAUNCH_OF_ACK[ack.kind], "tool_result_text" if ack.from_text else "tool_result_ack", ack.tool_use_id, True
        for tool_use, source in ((sidecar.tool_use_id if sidecar else None, "sidecar_tool_use_id"),
                                 (self.progress.get(agent), "agent_progress")):
            if tool_use in self.by_tool_use:
                return LAUNCH_OF_ACK[self.by_tool_use[tool_use].kind], source, tool_use, True
            if tool_use in self.calls:  # called, and no result yet: the call says how it runs
                return ("background" if self.calls[tool_use].background else "sync"), source, tool_use, False
        return "unknown", "none", None, False


def classify(session: Session, timelines: dict[str, Timeline] | None) -> dict[str, Subagent]:
    """Every subagent transcript of the session, by path: kind, launch and replayed prefix."""
    launches = Launches(timelines)
    parent = session.parent.events
    out = {}
    for tf in session.subagents:
        name = stem(tf.path)
        launch, source, tool_use, acked = launches.resolve(name.removeprefix("agent-"), tf.sidecar)
        replayed = replayed_prefix(tf.events, parent)
        kind = kind_of(name, tf.path[len(session.ref.path) - len(".jsonl") + len("/subagents/") :], tf.sidecar, launch, replayed)
        if kind == "fork" and launch == "background":  # a fork runs in the background (format §8.4)
            launch = "fork"
        out[tf.path] = Subagent(kind, launch, source, tool_use, acked, replayed)
    return out


def subagent_rows(session: Session, subagents: dict[str, Subagent]) -> list[dict]:
    rows = []
    notified = Counter(tid for e in session.parent.events if "<task-id>" in e.text for tid in TASK_ID.findall(e.text))
    for tf in session.subagents:
        agent_id = stem(tf.path)
        sc = tf.sidecar
        sub = subagents[tf.path]
        ts = [e.ts for e in tf.events]
        rows.append({
            "subagent_path": tf.path, "agent_id": agent_id, "kind": sub.kind,
            "agent_type": sc.agent_type if sc else None, "description": sc.description if sc else None,
            "sidecar": sc.state if sc else "missing", "events": len(tf.events), "chars": sum(e.chars for e in tf.events),
            "first_ts": iso_time(min(ts)) if ts else None, "last_ts": iso_time(max(ts)) if ts else None,
            "launch": sub.launch, "launch_source": sub.launch_source, "replayed_events": sub.replayed,
            "notifications": notified[agent_id.removeprefix("agent-")],
        })
    return rows
