"""Claude Code's on-disk lines per version (era): ids, record envelopes, the transcript and sidecar writers."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from measure.synth.vocab import BASE62, HEX, LOWER_ALNUM

# ============================================================================================
# Claude Code versions ("eras"): layout, key order and notification shape differ per era.
# ============================================================================================


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
    tmp: str  # task output-file root


ERAS: dict[str, Era] = {
    "inline": Era("inline", ("1.0.98", "1.0.113"), "inline", False, "Task", "", "hex8", False, False, True,
                  "claude-sonnet-4-20250514", "claude-3-5-haiku-20241022", "/tmp/claude"),
    "sibling": Era("sibling", ("2.0.61", "2.0.76"), "sibling", False, "Task", "agent", "hex7", False, False, True,
                   "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001", "/tmp/claude"),
    "2.1.17": Era("2.1.17", ("2.1.17",), "nested", False, "Task", "2.1.17", "hex7", False, False, False,
                  "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001", "/private/tmp/claude"),
    "2.1.39": Era("2.1.39", ("2.1.37", "2.1.38", "2.1.39", "2.1.42"), "nested", False, "Task", "2.1.37", "hex7",
                  False, True, False, "claude-opus-4-6", "claude-haiku-4-5-20251001", "/tmp/claude-1000"),
    "modern": Era("modern", ("2.1.219", "2.1.226", "2.1.233", "2.1.238"), "nested", True, "Agent", "modern", "a16",
                  True, False, False, "claude-opus-5", "claude-haiku-4-5-20251001", "/private/tmp/claude-501"),
}


def iso(ms: int) -> str:
    """ISO-8601 UTC with milliseconds, as Claude Code writes `timestamp`."""
    s, frac = divmod(ms, 1000)
    t = time.gmtime(s)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (t[0], t[1], t[2], t[3], t[4], t[5], frac)


class Ids:
    """Identifier formats seen on disk, drawn from one rng."""

    def __init__(self, rng: random.Random):
        self.r = rng

    def uuid(self) -> str:
        h = "%032x" % self.r.getrandbits(128)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"

    def _b62(self, k: int) -> str:
        return "".join(self.r.choices(BASE62, k=k))

    def msg(self) -> str:
        return "msg_01" + self._b62(22)

    def req(self) -> str:
        return "req_011C" + self._b62(20)

    def toolu(self) -> str:
        return "toolu_01" + self._b62(22)

    def hexs(self, k: int) -> str:
        return "".join(self.r.choices(HEX, k=k))

    def agent(self, kind: str) -> str:
        if kind == "hex8":
            return self.hexs(8)
        if kind == "hex7":
            return "a" + self.hexs(6)
        return "a" + self.hexs(16)

    def bash_task(self, modern: bool) -> str:
        return "b" + ("".join(self.r.choices(LOWER_ALNUM[10:], k=8)) if modern else self.hexs(6))

    def workflow_task(self) -> str:
        return "w" + "".join(self.r.choices(LOWER_ALNUM, k=8))

    def signature(self, n: int) -> str:
        return "Es" + "".join(self.r.choices(BASE62 + "+/", k=n))


@dataclass
class Tally:
    """Running totals for SynthSummary."""

    files: int = 0
    bytes: int = 0
    lines: int = 0
    message_lines: int = 0
    subagent_files: dict = field(default_factory=dict)
    sessions: int = 0
    notifications: int = 0
    mtimes: dict = field(default_factory=dict)  # path -> ms


class Envelope:
    """Per-file constant fields and the key order of each record kind for one era."""

    def __init__(self, era: Era, session_id: str, cwd: str, version: str, branch: str,
                 agent_id: str | None = None, sidechain: bool = False, agent_type: str | None = None):
        self.era = era
        self.session_id = session_id
        self.cwd = cwd
        self.version = version
        self.branch = branch
        self.agent_id = agent_id
        self.sidechain = sidechain
        self.agent_type = agent_type
        self.slug: str | None = None
        self.prompt_id: str | None = None

    def _head(self, parent: str | None) -> dict:
        d = {"parentUuid": parent, "isSidechain": self.sidechain, "userType": "external", "cwd": self.cwd,
             "sessionId": self.session_id, "version": self.version, "gitBranch": self.branch}
        if self.agent_id is not None and self.era.layout != "inline":
            d["agentId"] = self.agent_id
        if self.slug is not None:
            d["slug"] = self.slug
        return d

    def _tail(self, d: dict, main_session_id: bool = True) -> dict:
        if main_session_id and not self.sidechain:
            d["session_id"] = self.session_id
        d["userType"] = "external"
        d["entrypoint"] = "cli"
        d["cwd"] = self.cwd
        d["sessionId"] = self.session_id
        d["version"] = self.version
        d["gitBranch"] = self.branch
        return d

    def user(self, uuid: str, parent: str | None, ts: int, content, *, meta: bool = False,
             tur=None, source: str | None = None, human: bool = False, compact: bool = False,
             origin: str | None = None, source_tool_use: str | None = None) -> dict:
        message = {"role": "user", "content": content}
        if self.era.modern:
            d = {"parentUuid": parent, "isSidechain": self.sidechain, "promptId": self.prompt_id}
            if self.agent_id is not None:
                d["agentId"] = self.agent_id
            d["type"] = "user"
            d["message"] = message
            if meta:
                d["isMeta"] = True
            if compact:
                d["isVisibleInTranscriptOnly"] = True
                d["isCompactSummary"] = True
            d["uuid"] = uuid
            d["timestamp"] = iso(ts)
            if tur is not None:
                d["toolUseResult"] = tur
                d["sourceToolAssistantUUID"] = source
            if origin is not None:
                d["origin"] = {"kind": origin}
                d["promptSource"] = "system"
            elif human:
                d["origin"] = {"kind": "human"}
                d["promptSource"] = "typed"
                d["permissionMode"] = "default"
            return self._tail(d)
        d = self._head(parent)
        d["type"] = "user"
        d["message"] = message
        if meta:
            d["isMeta"] = True
        if compact:
            d["isVisibleInTranscriptOnly"] = True
            d["isCompactSummary"] = True
        d["uuid"] = uuid
        d["timestamp"] = iso(ts)
        if source_tool_use is not None:
            d["sourceToolUseID"] = source_tool_use
        if tur is not None:
            d["toolUseResult"] = tur
            if self.era.key != "sibling" and self.era.key != "inline":
                d["sourceToolAssistantUUID"] = source
        elif human and not self.sidechain:
            d["thinkingMetadata"] = {"maxThinkingTokens": 31999}
            d["todos"] = []
            if self.era.key != "sibling":
                d["permissionMode"] = "bypassPermissions" if self.cwd.startswith("/home") else "default"
        return d

    def assistant(self, uuid: str, parent: str | None, ts: int, message: dict, request_id: str) -> dict:
        if self.era.modern:
            d = {"parentUuid": parent, "isSidechain": self.sidechain}
            if self.agent_id is not None:
                d["agentId"] = self.agent_id
            d["message"] = message
            d["requestId"] = request_id
            if self.agent_type is not None:
                d["attributionAgent"] = self.agent_type
            d["type"] = "assistant"
            d["uuid"] = uuid
            d["timestamp"] = iso(ts)
            if not self.sidechain:
                d["effort"] = "high"
            return self._tail(d)
        d = self._head(parent)
        d["message"] = message
        d["requestId"] = request_id
        d["type"] = "assistant"
        d["uuid"] = uuid
        d["timestamp"] = iso(ts)
        return d

    def progress(self, uuid: str, parent: str | None, ts: int, data: dict, tool_use_id: str,
                 parent_tool_use_id: str) -> dict:
        if self.era.modern:
            d = {"parentUuid": parent, "isSidechain": self.sidechain}
            if self.agent_id is not None:
                d["agentId"] = self.agent_id
            d.update(type="progress", data=data, toolUseID=tool_use_id, parentToolUseID=parent_tool_use_id,
                     uuid=uuid, timestamp=iso(ts))
            return self._tail(d, main_session_id=False)
        d = self._head(parent)
        d.update(type="progress", data=data, toolUseID=tool_use_id, parentToolUseID=parent_tool_use_id,
                 uuid=uuid, timestamp=iso(ts))
        return d

    def system(self, uuid: str, parent: str | None, ts: int, subtype: str, fields: dict,
               logical_parent: str | None = None, level: str | None = None, is_meta: bool | None = False) -> dict:
        if self.era.modern:
            d = {"parentUuid": parent}
            if logical_parent is not None:
                d["logicalParentUuid"] = logical_parent
            d["isSidechain"] = self.sidechain
            d["type"] = "system"
            d["subtype"] = subtype
            d.update(fields)
            if level:
                d["level"] = level
            d["timestamp"] = iso(ts)
            d["uuid"] = uuid
            return self._tail(d, main_session_id=False)
        head = self._head(parent)
        if logical_parent is not None:
            d = {"parentUuid": parent, "logicalParentUuid": logical_parent}
            d.update((k, v) for k, v in head.items() if k != "parentUuid")
        else:
            d = head
        d["type"] = "system"
        d["subtype"] = subtype
        if subtype == "compact_boundary":
            d["content"] = "Conversation compacted"
            d["isMeta"] = False
            d["timestamp"] = iso(ts)
            d["uuid"] = uuid
            d["level"] = "info"
            d.update(fields)
            return d
        d.update(fields)
        if level:
            d["level"] = level
        d["timestamp"] = iso(ts)
        d["uuid"] = uuid
        if is_meta is not None and subtype in ("turn_duration", "local_command"):
            d["isMeta"] = is_meta
        return d


def flat_text(entry) -> str:
    """The event text akm's reader derives from one parsed line (pipeline-spec §6.3), or ''."""
    if not isinstance(entry, dict):
        return ""
    message = entry.get("message")
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            parts.append(block["thinking"])
        elif kind == "tool_use":
            name = block.get("name") if isinstance(block.get("name"), str) else "tool"
            inp = block.get("input")
            if isinstance(inp, dict) and isinstance(inp.get("command"), str):
                text = inp["command"]
            elif isinstance(inp, (dict, list)):
                text = orjson.dumps(inp).decode()
            elif isinstance(inp, str):
                text = inp
            else:
                text = ""
            parts.append(f"[tool:{name}] {text}")
        elif kind == "tool_result":
            out = block.get("content")
            parts.append("[tool_result] " + (out if isinstance(out, str) else orjson.dumps(out if out is not None else "").decode()))
    return "\n".join(parts)


class Transcript:
    """One JSONL file being written; keeps the uuid chain, the clock high-water mark and faults."""

    def __init__(self, path: Path, env: Envelope, tally: Tally, layout: str, *, append: bool = False,
                 track_text: bool = False):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.env = env
        self.tally = tally
        self.fh = open(path, "ab" if append else "wb")
        if not append:
            tally.files += 1
            tally.subagent_files[layout] = tally.subagent_files.get(layout, 0) + 1
        self.max_ts = 0
        self.track_text = track_text
        self.text_chars = 0
        self.events = 0
        # Window counter mirrors the #840 chunking rule: a new 80,000-char window starts when
        # the current one would overflow and is not empty.
        self.windows = 0
        self.window_fill = 0
        self.corrupt_queue = 0  # lines still to mangle (well under 1% of lines)
        self.corrupt_rng: random.Random | None = None

    def write(self, obj: dict, ts: int | None = None, *, corruptible: bool = False) -> None:
        data = orjson.dumps(obj) + b"\n"
        if corruptible and self.corrupt_queue and self.corrupt_rng is not None and self.corrupt_rng.random() < 0.05:
            # A torn write from a crashed process: the line is cut short, the next one is whole.
            cut = self.corrupt_rng.randint(20, max(21, len(data) - 2))
            data = data[:cut] + b"\n"
            self.corrupt_queue -= 1
        elif self.track_text and obj.get("type") in ("user", "assistant"):
            n = len(flat_text(obj))
            if n:
                self.events += 1
                self.text_chars += n
                if self.windows == 0 or (self.window_fill + n > 80_000 and self.window_fill > 0):
                    self.windows += 1
                    self.window_fill = 0
                self.window_fill += n
        self.fh.write(data)
        self.tally.bytes += len(data)
        self.tally.lines += 1
        if obj.get("type") in ("user", "assistant"):
            self.tally.message_lines += 1
        if ts is not None and ts > self.max_ts:
            self.max_ts = ts

    def write_raw(self, data: bytes, ts: int | None = None) -> None:
        self.fh.write(data)
        self.tally.bytes += len(data)
        self.tally.lines += data.count(b"\n")
        if ts is not None and ts > self.max_ts:
            self.max_ts = ts

    def close(self, torn_tail: bytes | None = None) -> None:
        if torn_tail:
            self.fh.write(torn_tail)
            self.tally.bytes += len(torn_tail)
        self.fh.close()
        self.tally.mtimes[str(self.path)] = max(self.max_ts, self.tally.mtimes.get(str(self.path), 0)) + 137


def write_json_file(path: Path, obj, tally: Tally, ms: int, raw: bytes | None = None) -> None:
    """Sidecar/snapshot files: compact JSON like Claude Code, or raw bytes for broken cases."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = raw if raw is not None else orjson.dumps(obj)
    path.write_bytes(data)
    tally.files += 1
    tally.bytes += len(data)
    tally.mtimes[str(path)] = ms


def xml_escape(text: str) -> str:
    """Escape as Claude Code does inside `<result>` (akm #842 decodes exactly these)."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))
