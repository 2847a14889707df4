"""Small inputs the issue #26 reproduction tests plant at test time: lines, sessions, big roots.

Each test builds what it needs under its own tmp_path with these, runs `measure` through
`fuzz.drive` and asserts what correct behaviour is (see each test's docstring).
"""

from __future__ import annotations

import os
from pathlib import Path

from fuzz.jsontext import Raw, line

CANARY = "CANARYz"
"""Planted in names and ids: under --redact it must appear in no output and no stream."""


def prompt(second: int = 1, text: str = "please look at the build", **extra) -> dict:
    return {"type": "user", "timestamp": f"2026-05-01T10:00:{second:02d}.000Z",
            "message": {"role": "user", "content": text}, **extra}


def answer(second: int = 2, text: str = "looking at it now", usage: dict | None = None, msg_id: str = "msg_1", **extra) -> dict:
    return {"type": "assistant", "timestamp": f"2026-05-01T10:00:{second:02d}.000Z",
            "message": {"id": msg_id, "role": "assistant", "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}],
                        "usage": usage or {"input_tokens": 10, "output_tokens": 5}}, **extra}


def tool_use(tool_id, second: int = 3, name: str = "Task", **input_fields) -> dict:
    """An assistant line with one tool_use block; `tool_id` may be any value (Raw for JSON text)."""
    fields = input_fields or {"description": "look into it", "prompt": "go", "run_in_background": True}
    return {"type": "assistant", "timestamp": f"2026-05-01T10:00:{second:02d}.000Z",
            "message": {"id": f"msg_t{second}", "role": "assistant", "content": [{"type": "tool_use", "id": tool_id, "name": name,
                                                                                  "input": fields}]}}


def launch_ack(tool_id, agent: str, second: int = 4) -> dict:
    return {"type": "user", "timestamp": f"2026-05-01T10:00:{second:02d}.000Z",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "Async agent launched"}]},
            "toolUseResult": {"agentId": agent, "status": "async_launched", "isAsync": True}}


def write(path: Path | bytes, lines, mtime_s: int | None = None) -> Path | bytes:
    """Write JSONL: dicts go through fuzz.jsontext (Raw values verbatim), bytes/str lines as they are."""
    data = b"".join((ln if isinstance(ln, bytes) else ln.encode() if isinstance(ln, str) else line(ln)) + b"\n" for ln in lines)
    raw = os.fsencode(path)
    os.makedirs(os.path.dirname(raw), exist_ok=True)
    with open(raw, "wb") as f:
        f.write(data)
    if mtime_s is not None:
        os.utime(raw, (mtime_s, mtime_s))
    return path


def ordinary_root(root: Path, project: str = "-home-me-app", session: str = "s1") -> Path:
    """A root holding one ordinary session; returns the session's file."""
    return write(root / project / f"{session}.jsonl", [prompt(1), answer(2)])


def big_root(root: Path, sessions: int = 6, lines: int = 4_000) -> Path:
    """A root that takes a few seconds to measure (a signal can land mid-run)."""
    text = "the build log says the test failed again " * 30
    for i in range(sessions):
        write(root / "-home-me-big" / f"big{i}.jsonl",
              [prompt(n % 60, text) if n % 2 == 0 else answer(n % 60, text, msg_id=f"m{n}") for n in range(lines)])
    return root


def deep(depth: int = 3_000) -> Raw:
    """A JSON value nested `depth` deep (lists), as JSON.parse reads it."""
    return Raw("[" * depth + '"x"' + "]" * depth)
