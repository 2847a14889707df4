"""Claude Code's on-disk records per version (era): ids, line envelopes, transcript and file writers."""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from pathlib import Path
from xml.sax.saxutils import escape

import orjson

from measure.akm.jscompat import to_iso
from measure.akm.read import flatten_content
from measure.synth.vocab import BASE62, HEX


@dataclass(frozen=True)
class Era:
    """What one Claude Code version range writes to disk (claude-code-format.md §1-§10)."""

    key: str
    versions: tuple[str, ...]
    layout: str  # "inline" (sidechain lines in the parent), "sibling" (<project>/agent-*.jsonl), "nested"
    modern: bool  # 2.1.2xx envelope: promptId/entrypoint, envelope fields at the end
    task_tool: str  # "Task" until v2.1.63, then "Agent"
    notify: str  # "" | "agent" (<agent-notification>) | "2.1.17" | "2.1.37" | "modern"
    agent_id: str  # "hex8" | "hex7" | "a16"
    sidecars: bool  # agent-<id>.meta.json beside each subagent transcript
    agent_progress: bool  # sync subagent messages echoed into the parent as progress lines
    real_output_tokens: bool  # 2.1.x writes streaming placeholders (1-30) instead
    model: str
    fast_model: str


ERAS: dict[str, Era] = {
    "inline": Era("inline", ("1.0.98", "1.0.113"), "inline", False, "Task", "", "hex8", False, False, True,
                  "claude-sonnet-4-20250514", "claude-3-5-haiku-20241022"),
    "sibling": Era("sibling", ("2.0.61", "2.0.76"), "sibling", False, "Task", "agent", "hex7", False, False, True,
                   "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001"),
    "2.1.17": Era("2.1.17", ("2.1.17",), "nested", False, "Task", "2.1.17", "hex7", False, False, False,
                  "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001"),
    "2.1.39": Era("2.1.39", ("2.1.37", "2.1.38", "2.1.39", "2.1.42"), "nested", False, "Task", "2.1.37", "hex7",
                  False, True, False, "claude-opus-4-6", "claude-haiku-4-5-20251001"),
    "modern": Era("modern", ("2.1.219", "2.1.226", "2.1.233", "2.1.238"), "nested", True, "Agent", "modern", "a16",
                  True, False, False, "claude-opus-5", "claude-haiku-4-5-20251001"),
}


class Ids:
    """Identifier formats seen on disk, drawn from one rng."""

    def __init__(self, rng: random.Random):
        self.r = rng

    def uuid(self) -> str:
        h = "%032x" % self.r.getrandbits(128)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"

    def chars(self, alphabet: str, k: int) -> str:
        return "".join(self.r.choices(alphabet, k=k))

    def msg(self) -> str:
        return "msg_01" + self.chars(BASE62, 22)

    def req(self) -> str:
        return "req_011C" + self.chars(BASE62, 20)

    def toolu(self) -> str:
        return "toolu_01" + self.chars(BASE62, 22)

    def hexs(self, k: int) -> str:
        return self.chars(HEX, k)

    def agent(self, kind: str) -> str:
        """An agent id of the era's format: "hex8", "hex7" (a + 6 hex) or "a16" (a + 16 hex)."""
        return self.hexs(8) if kind == "hex8" else "a" + self.hexs(6 if kind == "hex7" else 16)


@dataclass
class Tally:
    """Running totals of a root being written (files, bytes, lines, sessions) and each file's mtime."""

    files: int = 0
    bytes: int = 0
    lines: int = 0
    sessions: int = 0
    mtimes: dict = field(default_factory=dict)  # path -> ms


@dataclass
class Envelope:
    """Per-file constant fields and the key order of each record kind for one era."""

    era: Era
    session_id: str
    cwd: str
    version: str
    branch: str
    agent_id: str | None = None
    sidechain: bool = False
    agent_type: str | None = None
    slug: str | None = None
    prompt_id: str | None = None

    def sidechain_of(self, agent_id: str | None, agent_type: str | None = None) -> Envelope:
        """The envelope of a subagent of this (main) session."""
        return replace(self, agent_id=agent_id, sidechain=True, agent_type=agent_type, slug=None, prompt_id=None)

    def head(self, parent: str | None, prompt: bool = False) -> dict:
        """The fields before `type`: the chain (a modern line), or the whole envelope (an older one)."""
        if self.era.modern:
            d = {"parentUuid": parent, "isSidechain": self.sidechain}
            if prompt:
                d["promptId"] = self.prompt_id
            if self.agent_id is not None:
                d["agentId"] = self.agent_id
            return d
        d = {"parentUuid": parent, "isSidechain": self.sidechain, "userType": "external", "cwd": self.cwd,
             "sessionId": self.session_id, "version": self.version, "gitBranch": self.branch}
        if self.agent_id is not None and self.era.layout != "inline":
            d["agentId"] = self.agent_id
        if self.slug is not None:
            d["slug"] = self.slug
        return d

    def _tail(self, d: dict, main_session_id: bool = True) -> dict:
        """A modern line ends with the envelope."""
        if main_session_id and not self.sidechain:
            d["session_id"] = self.session_id
        d.update(userType="external", entrypoint="cli", cwd=self.cwd, sessionId=self.session_id, version=self.version,
                 gitBranch=self.branch)
        return d

    def user(self, uuid: str, parent: str | None, ts: int, content, *, meta: bool = False,
             tur=None, source: str | None = None, human: bool = False, compact: bool = False,
             origin: str | None = None, source_tool_use: str | None = None) -> dict:
        d = self.head(parent, prompt=True)
        d.update(type="user", message={"role": "user", "content": content})
        if meta:
            d["isMeta"] = True
        if compact:
            d.update(isVisibleInTranscriptOnly=True, isCompactSummary=True)
        d.update(uuid=uuid, timestamp=to_iso(ts))
        if self.era.modern:
            if tur is not None:
                d.update(toolUseResult=tur, sourceToolAssistantUUID=source)
            if origin is not None:
                d.update(origin={"kind": origin}, promptSource="system")
            elif human:
                d.update(origin={"kind": "human"}, promptSource="typed", permissionMode="default")
            return self._tail(d)
        if source_tool_use is not None:
            d["sourceToolUseID"] = source_tool_use
        if tur is not None:
            d["toolUseResult"] = tur
            if self.era.key not in ("inline", "sibling"):
                d["sourceToolAssistantUUID"] = source
        elif human and not self.sidechain:
            d.update(thinkingMetadata={"maxThinkingTokens": 31999}, todos=[])
            if self.era.key != "sibling":
                d["permissionMode"] = "bypassPermissions" if self.cwd.startswith("/home") else "default"
        return d

    def assistant(self, uuid: str, parent: str | None, ts: int, message: dict, request_id: str) -> dict:
        d = self.head(parent)
        d.update(message=message, requestId=request_id)
        if self.agent_type is not None:
            d["attributionAgent"] = self.agent_type
        d.update(type="assistant", uuid=uuid, timestamp=to_iso(ts))
        if not self.era.modern:
            return d
        if not self.sidechain:
            d["effort"] = "high"
        return self._tail(d)

    def progress(self, uuid: str, parent: str | None, ts: int, data: dict, tool_use_id: str,
                 parent_tool_use_id: str) -> dict:
        d = self.head(parent)
        d.update(type="progress", data=data, toolUseID=tool_use_id, parentToolUseID=parent_tool_use_id,
                 uuid=uuid, timestamp=to_iso(ts))
        return self._tail(d, main_session_id=False) if self.era.modern else d

    def system(self, uuid: str, parent: str | None, ts: int, subtype: str, fields: dict,
               logical_parent: str | None = None) -> dict:
        """A main-session system line (turn_duration, stop_hook_summary, local_command, compact_boundary)."""
        d = self.head(parent)
        if logical_parent is not None:
            d = {"parentUuid": parent, "logicalParentUuid": logical_parent} | d
        d.update(type="system", subtype=subtype)
        if subtype == "compact_boundary" and not self.era.modern:
            d.update(content="Conversation compacted", isMeta=False, timestamp=to_iso(ts), uuid=uuid, level="info")
            return d | fields
        d.update(fields, timestamp=to_iso(ts), uuid=uuid)
        if self.era.modern:
            return self._tail(d, main_session_id=False)
        if subtype in ("turn_duration", "local_command"):
            d["isMeta"] = False
        return d


def flat_text(entry) -> str:
    """The event text akm's reader derives from one parsed line (pipeline-spec §6.3), or ''."""
    message = entry.get("message") if isinstance(entry, dict) else None
    return flatten_content(message.get("content")) if isinstance(message, dict) else ""


WINDOW_CHARS = 80_000
"""The #840 chunking rule's window: a new one starts when the current one would overflow and is not empty."""


class Transcript:
    """One JSONL file being written: its newest timestamp, its parent text so far and the lines it tears."""

    def __init__(self, path: Path, tally: Tally, *, append: bool = False, track_text: bool = False,
                 torn_lines: int = 0, torn_rng: random.Random | None = None):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.tally = tally
        self.fh = open(path, "ab" if append else "wb")
        if not append:
            tally.files += 1
        self.max_ts = 0
        self.track_text = track_text
        self.text_chars = 0
        self.windows = 0
        self.window_fill = 0
        self.torn_lines = torn_lines  # lines still to tear (well under 1% of lines)
        self.torn_rng = torn_rng
        self.head: list[dict] = []  # its first 40 user/assistant lines (tracked text only), which a replay of it repeats

    def write(self, obj: dict, ts: int | None = None, *, corruptible: bool = False) -> None:
        data = orjson.dumps(obj) + b"\n"
        if corruptible and self.torn_lines and self.torn_rng.random() < 0.05:
            # A torn write from a crashed process: the line is cut short, the next one is whole.
            data = data[: self.torn_rng.randint(20, max(21, len(data) - 2))] + b"\n"
            self.torn_lines -= 1
        elif self.track_text and obj.get("type") in ("user", "assistant"):
            if len(self.head) < 40:
                self.head.append(obj)
            n = len(flat_text(obj))
            if n:
                self.text_chars += n
                if self.windows == 0 or (self.window_fill + n > WINDOW_CHARS and self.window_fill > 0):
                    self.windows += 1
                    self.window_fill = 0
                self.window_fill += n
        self.write_raw(data, ts)

    def write_raw(self, data: bytes, ts: int | None = None) -> None:
        self.fh.write(data)
        self.tally.bytes += len(data)
        self.tally.lines += data.count(b"\n")
        if ts is not None and ts > self.max_ts:
            self.max_ts = ts

    def close(self) -> None:
        self.fh.close()
        self.tally.mtimes[str(self.path)] = max(self.max_ts, self.tally.mtimes.get(str(self.path), 0)) + 137


def write_file(path: Path, data: bytes, tally: Tally, ms: int) -> None:
    """A whole file at once (sidecars, snapshots, journals; raw bytes for the broken cases)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    tally.files += 1
    tally.bytes += len(data)
    tally.mtimes[str(path)] = ms


def xml_escape(text: str) -> str:
    """Escape as Claude Code does inside `<result>` (akm #842 decodes exactly these)."""
    return escape(text, {'"': "&quot;", "'": "&#39;"})
