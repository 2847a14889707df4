"""The `repeat_reads` table: reads of background work whose result repeats what the parent held.

A read of background work is the tool result of `TaskOutput`, `BashOutput`, a `Read` of a task's
output file (`…/tasks/<id>.output`), a resumed-agent message (`SendMessage`, or `Task`/`Agent`
with `resume`), or a second delivered notification of a task that already notified (a resumed
agent's). Each is keyed by the task it reads.

Rule for `repeated_chars`: the result is split into lines; a line is repeated when the same
line (whitespace-trimmed, `Read`'s `   N→` line-number prefix removed, a notification's
`<result>` tags split off) was already in something
the parent received for the same task before this read: an earlier read's result or a delivered
notification's text. A repeated line counts its UTF-16 length plus its newline; blank lines
count as neither. This covers both shapes seen in practice: a growing output read again (the
earlier read is a prefix of the new one) and a result that re-sends the notification's
`<result>`. Lines repeated only within the same read are not repeats.

Memory: only 8-byte hashes (blake2b) of the lines received from background work are kept, per
task, never the text; nothing is stored for other tool results.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from hashlib import blake2b

from measure.akm.jscompat import utf16_len
from measure.measurements.lines import collector
from measure.measurements.tasks import parse_notification, result_text
from measure.numbers import percent, rounded

_OUTPUT_FILE = re.compile(r"/tasks/([^/]+)\.output$")
_LINE_NUMBER = re.compile(r"^\s*\d+\u2192")
#: The input keys naming the task a tool reads, first present first (`Read` names it by its output file).
_TARGET_KEYS = {"TaskOutput": ("task_id", "bash_id"), "BashOutput": ("task_id", "bash_id"), "SendMessage": ("to",),
                "Task": ("resume",), "Agent": ("resume",)}


@dataclass(frozen=True, slots=True)
class BackgroundRead:
    """One read of background work and how much of it the parent already held."""

    line: int
    tool: str  # TaskOutput, BashOutput, Read, SendMessage, Task (resume), notification (a repeat notification)
    task_id: str
    chars: int  # UTF-16 length of the result text
    repeated_chars: int  # see the module doc


def read_target(name: object, inp: dict) -> str | None:
    """The task a tool_use reads, or None when it reads no background work."""
    if name == "Read":
        m = _OUTPUT_FILE.search(inp["file_path"]) if type(inp.get("file_path")) is str else None
        return m.group(1) if m else None
    keys = _TARGET_KEYS.get(name) if type(name) is str else None
    if not keys:  # most tool_uses (Bash, Edit, Grep, ...) read no background work
        return None
    v = next(filter(None, map(inp.get, keys)), None)
    return v if type(v) is str else None


@collector("reads")
class ReadCollector:
    """Per file: every read of background work, scored against what was received before it."""

    TYPES = frozenset({"assistant", "user"})  # progress lines re-embed subagent messages: not the reader's own

    __slots__ = ("pending", "seen", "reads", "notified")

    def __init__(self, label: str):
        self.pending: dict[str, tuple[str, str]] = {}  # tool_use id -> (tool, task id)
        self.seen: dict[str, set[bytes]] = {}  # task id -> hashes of lines received
        self.reads: list[BackgroundRead] = []
        self.notified: set[str] = set()

    def _score(self, task: str, text: str, numbered: bool) -> int:
        """UTF-16 chars of `text`'s lines already received for `task` (see the module doc); records the new ones."""
        seen = self.seen.setdefault(task, set())
        repeated = 0
        fresh = []
        for raw in text.split("\n"):
            key = (_LINE_NUMBER.sub("", raw, count=1) if numbered else raw).strip()
            if not key:
                continue
            h = blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
            if h in seen:
                repeated += utf16_len(raw) + 1
            else:
                fresh.append(h)
        seen.update(fresh)
        return repeated

    def _read(self, line: int, tool: str, task: str, text: str, repeated: int) -> None:
        chars = utf16_len(text)
        self.reads.append(BackgroundRead(line, tool, task, chars, min(repeated, chars)))

    def __call__(self, record: dict, line: int) -> None:
        kind = record["type"]
        msg = record.get("message")
        if type(msg) is not dict:
            return
        content = msg.get("content")
        if kind == "assistant":
            if type(content) is list:
                for b in content:
                    if type(b) is dict and b.get("type") == "tool_use" and type(b.get("id")) is str:
                        inp = b.get("input") if type(b.get("input")) is dict else {}
                        target = read_target(b.get("name"), inp)  # any value: only a known tool name reads a task
                        if target:
                            self.pending[b["id"]] = (b["name"], target)
            return
        if type(content) is list:
            blocks = [b for b in content if type(b) is dict and b.get("type") == "tool_result"]
            if blocks:
                for b in blocks:
                    found = self.pending.pop(b.get("tool_use_id"), None) if type(b.get("tool_use_id")) is str else None
                    if found:
                        text = result_text(b.get("content"))
                        tool, task = found
                        self._read(line, tool, task, text, self._score(task, text, tool == "Read"))
                return
            text = result_text(content)
        elif type(content) is str:
            text = content
        else:
            return
        note = parse_notification(text)
        if note is None or not note.task_id:
            return
        # <result> opens and closes on the result's own first and last lines: split them off
        repeated = self._score(note.task_id, text.replace("<result>", "\n").replace("</result>", "\n"), False)
        if note.task_id in self.notified:
            self._read(line, "notification", note.task_id, text, repeated)
        self.notified.add(note.task_id)

    def result(self) -> tuple[BackgroundRead, ...]:
        return tuple(self.reads)


def repeat_rows(reads: tuple[BackgroundRead, ...]) -> list[dict]:
    """One row per read of background work by the parent, in line order."""
    return [
        {"line": r.line, "tool": r.tool, "task_id": r.task_id, "chars": r.chars, "repeated_chars": r.repeated_chars,
         "repeated_pct": percent(r.repeated_chars, r.chars)}
        for r in reads
    ]


def repeat_summary(reads: tuple[BackgroundRead, ...]) -> dict:
    """Per-session read figures (columns of `cost_sessions`)."""
    chars = sum(r.chars for r in reads)
    repeated = sum(r.repeated_chars for r in reads)
    return {
        "background_reads": len(reads), "repeat_reads": sum(1 for r in reads if r.repeated_chars), "read_chars": chars,
        "repeated_chars": repeated, "repeat_fraction": rounded(repeated / chars, 4) if chars else None,
    }
