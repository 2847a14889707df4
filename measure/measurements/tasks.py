"""The task timeline of a transcript: launches, launch acknowledgements, queue operations, turns.

One collector (`tasks`) gathers, in the run's single read, every line that starts, acknowledges,
queues or delivers a delegated task (claude-code-format.md §8–9), as small frozen records. The
`delegation`, `background`, `replay` and `wakeups` tables all read this one timeline, so each
shape is recognised in one place. Structured fields (`toolUseResult`, `queue-operation`) are
preferred to prose; the notification tags are parsed because nothing structured replaces them.
"""

from __future__ import annotations

import re
from contextlib import suppress
from dataclasses import dataclass

from measure.akm.jscompat import date_parse, js_number, to_iso, utf16_len
from measure.measurements.lines import collector

NOTIFICATION_TAGS = ("task-notification", "agent-notification")
_TAG = re.compile(r"<(task-id|agent-id|tool-use-id|status|summary|result|usage)>(.*?)</\1>", re.S)
_TOKENS = re.compile(r"(?:total_tokens:\s*|<subagent_tokens>)(\d+)")

#: Tools whose `tool_use` starts or addresses a task (Task was renamed Agent in CC 2.1.63).
TASK_TOOLS = frozenset({"Task", "Agent", "Bash", "Skill", "Monitor", "SendMessage", "TaskOutput", "BashOutput", "TaskStop"})
#: Of those, the tools that spawn a subagent transcript (a forked Skill runs as one, format §8.4).
SPAWN_TOOLS = frozenset({"Task", "Agent", "Skill"})
AGENT_ID_LINE = re.compile(r"agentId: ([^\s(]+)")
"""The `agentId: <id>` line of a Task result's text (the sync footer, format §8.2; an async launch's text, §8.3)."""
#: What a spawn's tool result says when the user stopped it (real 2.1.3x lines), by launch outcome.
STOPPED_BY_USER = (("User rejected tool use", "rejected"), ("The user doesn't want to proceed with this tool use", "rejected"),
                   ("[Request interrupted by user for tool use]", "interrupted"))


@dataclass(frozen=True, slots=True)
class Notification:
    """A `<task-notification>` (CC 2.1.x) or `<agent-notification>` (CC ≤ 2.0.x), parsed."""

    tag: str  # task-notification | agent-notification
    task_id: str | None
    tool_use_id: str | None  # newer builds only
    status: str | None  # completed, failed, killed, stopped
    task_kind: str  # agent | bash | workflow | other
    result_chars: int | None  # UTF-16 length of <result>; None when the tag is absent
    usage_tokens: int | None  # <usage> total_tokens / subagent_tokens
    chars: int  # UTF-16 length of the whole text


@dataclass(frozen=True, slots=True)
class Launch:
    """An assistant `tool_use` of a task tool."""

    line: int
    ts: float | None
    tool_use_id: str
    tool: str
    background: bool  # input.run_in_background is true
    description: str | None = None  # input.description (Task/Agent), input.skill (Skill)


@dataclass(frozen=True, slots=True)
class Ack:
    """A user line whose `toolUseResult` says what a task tool did."""

    line: int
    ts: float | None
    tool_use_id: str | None
    kind: str  # sync_result | async_launched | forked_skill | background_bash | monitor | resumed | message_queued,
    # or, for a spawn (SPAWN_TOOLS) the user stopped, rejected | interrupted
    # (a result that acknowledges no task, kind "other", is not kept: nothing reads it)
    task_id: str | None  # agentId, backgroundTaskId, taskId or resumedAgentId
    chars: int  # UTF-16 length of the tool_result text the parent received
    from_text: bool = False  # task_id read from the result text's `agentId:` line, not from toolUseResult


@dataclass(frozen=True, slots=True)
class QueueOp:
    """A `queue-operation` line; `notification` is set when its content is one."""

    line: int
    ts: float | None
    operation: str  # enqueue | dequeue | remove | popAll
    notification: Notification | None


@dataclass(frozen=True, slots=True)
class Turn:
    """A user line that opens a turn: a human prompt, a delivered notification, an agent message."""

    line: int
    ts: float | None
    source: str  # human | task_notification | agent_message | meta | compact_summary
    notification: Notification | None


@dataclass(frozen=True, slots=True)
class Timeline:
    """Every task record of one transcript, in line order, plus its last timestamp."""

    launches: tuple[Launch, ...]
    acks: tuple[Ack, ...]
    queue: tuple[QueueOp, ...]
    turns: tuple[Turn, ...]
    last_ts: float | None
    versions: tuple[tuple[str, int], ...] = ()  # (Claude Code `version`, lines carrying it), first seen first
    agent_progress: tuple[tuple[str, str | None], ...] = ()  # (data.agentId, parentToolUseID), first line of each agent


def iso_time(ms: float | None) -> str | None:
    """`ms` as JS's `toISOString` prints it; None when absent or beyond JS's Date range."""
    if ms is not None:
        with suppress(ValueError):  # beyond the range
            return to_iso(ms)
    return None


def epoch_ms(ts) -> float | None:
    """A `timestamp` value in epoch ms (None when absent or unparseable)."""
    if type(ts) is str:
        ms = date_parse(ts)
        return None if ms != ms else ms
    if type(ts) in (int, float):
        return js_number(ts)
    return None


_JSON_TYPES = {dict: "object", list: "array", bool: "boolean", int: "number", float: "number", type(None): "null"}


def as_text(v) -> str:
    """`v` when it is a string, else its JSON type as a placeholder (`(object)`): never its content,
    which may be transcript text, or nested deeper than `str()` can render."""
    return v if type(v) is str else f"({_JSON_TYPES.get(type(v), 'value')})"


_SUMMARY_KINDS = (("Agent ", "agent"), ("Background command", "bash"), ("Dynamic workflow", "workflow"))


def task_kind(task_id: str | None, summary: str | None) -> str:
    """agent, bash or workflow: by the summary's wording, else by the task-id's shape (format §0.8)."""
    s = (summary or "").lstrip()
    by_summary = next((kind for prefix, kind in _SUMMARY_KINDS if s.startswith(prefix)), None)
    return by_summary or {"a": "agent", "b": "bash", "w": "workflow"}.get((task_id or "")[:1], "other")


def parse_notification(text: str) -> Notification | None:
    """The fields of a notification text, or None when `text` does not start with one."""
    head = text.lstrip()[:22]
    tag = next((t for t in NOTIFICATION_TAGS if head.startswith(f"<{t}>")), None)
    if tag is None:
        return None
    fields = dict(reversed(_TAG.findall(text)))  # the first of each tag wins
    task_id = fields.get("task-id") or fields.get("agent-id")
    usage = _TOKENS.search(fields.get("usage", ""))
    result = fields.get("result")
    return Notification(
        tag=tag, task_id=task_id.strip() if task_id else None, tool_use_id=fields.get("tool-use-id", "").strip() or None,
        status=fields.get("status", "").strip() or None, task_kind=task_kind(task_id, fields.get("summary")),
        result_chars=None if result is None else utf16_len(result), usage_tokens=int(usage.group(1)) if usage else None,
        chars=utf16_len(text),
    )


def result_text(content) -> str:
    """The text of a tool_result's `content` (a string, or text blocks joined by newlines)."""
    if type(content) is str:
        return content
    if type(content) is list:
        return "\n".join(b["text"] for b in content if type(b) is dict and type(b.get("text")) is str)
    return ""


#: The keys `ack_kind` reads to recognise a task acknowledgement: a result with none of them is "other".
_ACK_KEYS = frozenset({"isAsync", "status", "background", "agentId", "backgroundTaskId", "taskId", "resumedAgentId", "message"})


def ack_kind(result: dict) -> tuple[str, str | None]:
    """What a `toolUseResult` object acknowledges, and the task id it names (format §8.2–8.4)."""
    if _ACK_KEYS.isdisjoint(result):  # most tool results (Read, Bash, Edit, ...): one C-level check
        return "other", None
    if result.get("isAsync") or result.get("status") == "async_launched":
        return "async_launched", result.get("agentId")
    if result.get("status") == "forked" or (result.get("background") and result.get("agentId")):
        return "forked_skill", result.get("agentId")
    if result.get("backgroundTaskId"):
        return "background_bash", result.get("backgroundTaskId")
    if result.get("taskId") and "timeoutMs" in result:
        return "monitor", result.get("taskId")
    if result.get("resumedAgentId"):
        return "resumed", result.get("resumedAgentId")
    if isinstance(result.get("message"), str) and result["message"].startswith("Message queued"):
        pin = result.get("pin")
        return "message_queued", pin.get("id") if isinstance(pin, dict) else None
    if result.get("agentId"):
        return "sync_result", result.get("agentId")
    return "other", None


def spawn_outcome(result, text: str, is_error: bool) -> tuple[str, str | None, bool] | None:
    """(kind, task id, from text) of a spawn's tool result that `ack_kind` cannot read, else None.

    A stopped spawn says so in its `toolUseResult` string or in an error result's text
    (STOPPED_BY_USER); a result whose structured fields lack `agentId` may still end with the
    `agentId: <id>` footer of a sync result (format §8.2) or an async launch's text (§8.3).
    """
    said = result if type(result) is str else text if is_error else ""
    for phrase, kind in STOPPED_BY_USER:
        if phrase in said:
            return kind, None, False
    m = AGENT_ID_LINE.search(text) if "agentId: " in text else None
    if m is None:
        return None
    return ("async_launched" if text.lstrip().startswith("Async agent launched") else "sync_result"), m.group(1), True


def _str(v) -> str | None:
    return v if type(v) is str and v else None


@collector("tasks")
class TaskCollector:
    """Builds a transcript's `Timeline` line by line."""

    # No TYPES, every type: a `progress` line is read only for agent_progress's two ids (it re-embeds
    # subagent lines, never the parent's own activity, so it is neither a turn nor a timestamp of the parent).

    __slots__ = ("launches", "acks", "queue", "turns", "last_ts", "versions", "progress", "_tail", "_spawns")

    #: raw timestamps held unparsed before the newest valid one among them is settled
    TAIL = 256

    def __init__(self, label: str):
        self.launches: list[Launch] = []
        self.acks: list[Ack] = []
        self.queue: list[QueueOp] = []
        self.turns: list[Turn] = []
        self.last_ts: float | None = None
        self.versions: dict[str, int] = {}  # version -> lines carrying it (every type: progress lines too)
        self.progress: dict[str, str | None] = {}  # agent_progress: agentId -> parentToolUseID
        self._spawns: set[str] = set()  # tool_use ids of SPAWN_TOOLS calls, whose results are read even when plain
        # Raw timestamps of lines after last_ts's line that keep no record: only the newest
        # valid one can become last_ts, so they are parsed (newest first) only when settled.
        self._tail: list = []

    def _stamp(self, raw) -> float | None:
        """The line's timestamp, parsed now (its record keeps it); the newest valid is last_ts."""
        ts = epoch_ms(raw)
        if ts is not None:
            self.last_ts = ts
            self._tail.clear()
        return ts

    def _defer(self, raw) -> None:
        """A line that keeps no record: its timestamp matters only if it is the last."""
        if type(raw) in (str, int, float):
            tail = self._tail
            tail.append(raw)
            if len(tail) >= self.TAIL:
                self._settle()

    def _settle(self) -> None:
        for raw in reversed(self._tail):
            ts = epoch_ms(raw)
            if ts is not None:
                self.last_ts = ts
                break
        self._tail.clear()

    def __call__(self, record: dict, line: int) -> None:
        version = record.get("version")
        if type(version) is str and version:  # not `!=` on any value: one may nest 3,000 deep
            self.versions[version] = self.versions.get(version, 0) + 1
        kind = record.get("type")
        if kind == "progress":  # the most frequent line: one lookup unless it carries data
            data = record.get("data")
            if type(data) is dict and data.get("type") == "agent_progress":
                agent = data.get("agentId")
                if type(agent) is str and agent and agent not in self.progress:
                    self.progress[agent] = _str(record.get("parentToolUseID"))
            return
        raw = record.get("timestamp")
        if kind == "queue-operation":
            ts = self._stamp(raw)
            content = record.get("content")
            note = parse_notification(content) if type(content) is str else None
            self.queue.append(QueueOp(line, ts, as_text(record.get("operation")), note))
            return
        msg = record.get("message") if kind == "assistant" or kind == "user" else None
        if type(msg) is not dict:
            self._defer(raw)
            return
        content = msg.get("content")
        if kind == "assistant":
            stamped = False
            if type(content) is list:
                for b in content:
                    if type(b) is dict and b.get("type") == "tool_use" and type(b.get("name")) is str and b["name"] in TASK_TOOLS:
                        if not stamped:
                            ts, stamped = self._stamp(raw), True
                        inp = b.get("input") if type(b.get("input")) is dict else {}
                        self.launches.append(Launch(line, ts, as_text(b.get("id")), b["name"],
                                                    inp.get("run_in_background") is True,
                                                    _str(inp.get("description")) or _str(inp.get("skill"))))
                        if b["name"] in SPAWN_TOOLS:
                            self._spawns.add(as_text(b.get("id")))
            if not stamped:
                self._defer(raw)
            return
        result = record.get("toolUseResult")
        ack, task_id = ack_kind(result) if type(result) is dict else ("other", None)
        block = None
        if (ack != "other" or self._spawns) and type(content) is list:
            for b in content:  # the first tool_result block (a plain loop: this runs on every tool result)
                if type(b) is dict and b.get("type") == "tool_result":
                    block = b
                    break
        tool_use = _str(block.get("tool_use_id")) if block is not None else None
        found = None
        if ack == "other" and tool_use is not None and tool_use in self._spawns:
            # a spawn's result whose toolUseResult names no task: stopped by the user, or a footer only
            found = spawn_outcome(result, result_text(block.get("content")), block.get("is_error") is True)
        if ack != "other" or found is not None:
            ack, task_id, from_text = found or (ack, task_id, False)
            chars = utf16_len(result_text(block.get("content"))) if block is not None else 0
            self.acks.append(Ack(line, self._stamp(raw), tool_use, ack, _str(task_id), chars, from_text))
            return
        # A tool result that acknowledges no task (Read, Bash, Edit, ...), or a line without text: no turn.
        if (type(result) is dict or type(content) not in (str, list)
                or type(content) is list and any(type(b) is dict and b.get("type") == "tool_result" for b in content)):
            self._defer(raw)
            return
        text = content if type(content) is str else result_text(content)
        ts = self._stamp(raw)
        note = parse_notification(text)
        source = ("task_notification" if note is not None
                  else "agent_message" if text.lstrip().startswith("<agent-message")
                  else "compact_summary" if record.get("isCompactSummary")
                  else "meta" if record.get("isMeta") else "human")
        self.turns.append(Turn(line, ts, source, note))

    def result(self) -> Timeline:
        self._settle()
        return Timeline(tuple(self.launches), tuple(self.acks), tuple(self.queue), tuple(self.turns), self.last_ts,
                        tuple(self.versions.items()), tuple(self.progress.items()))
