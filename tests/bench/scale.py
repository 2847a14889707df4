"""Scale of `measure report`: 20,000 small sessions, wall time and peak process-tree RSS."""

from __future__ import annotations

import datetime
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from tests.bench.timing import checked_run

SCALE_SESSIONS = 20_000  # the target's "20,000 small sessions"
SCALE_PROJECTS = 200  # project folders they are spread over
REPORT_BUDGETS = "20000,40000,80000,160000,320000,640000"  # six budgets, as a report's default sweep
ROOT_NAME = "measure-bench-scale"  # the report's scratch run goes to build/runs/<it>
_T0 = 1_780_000_000  # seconds; timestamps of the generated sessions start here


def _line(kind: str, uuid: str, t: int, content, after: dict | None = None, **extra) -> str:
    """One transcript record of `kind` (user or assistant) at second `t`, compact JSON; `after` follows the message."""
    stamp = datetime.datetime.fromtimestamp(_T0 + t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    record = {"type": kind, "uuid": uuid, "timestamp": stamp, **extra, "message": content, **(after or {})}
    return json.dumps(record, separators=(",", ":"))


def _said(msg_id: str, tokens: tuple[int, int], content: list) -> dict:
    return {"id": msg_id, "role": "assistant", "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1]}, "content": content}


def _result(tool_id: str, content: str) -> dict:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": content}]}


def session_lines(i: int) -> tuple[list[str], list[str] | None, str | None]:
    """The lines of small session `i`: a prompt, a tool call, an answer; every 5th delegates to a
    background subagent (its transcript lines and sidecar text are returned too)."""
    t, m, agent = i * 60, i % 97, f"a{i:07x}" if i % 5 == 0 else None
    lines = [
        _line("user", f"u{i}-1", t, {"role": "user", "content": f"session {i}: please fix the failing test in module {m}"},
              sessionId=f"s{i}"),
        _line("assistant", f"u{i}-2", t + 1, _said(f"msg{i}-1", (100, 20), [
            {"type": "text", "text": f"Looking at module {m} now."},
            {"type": "tool_use", "id": f"toolu_{i}_1", "name": "Read", "input": {"file_path": f"/src/mod{m}.py"}}])),
        _line("user", f"u{i}-3", t + 2, _result(f"toolu_{i}_1", "def f(x):\n    return x + 1\n" * 3)),
    ]
    sub = meta = None
    if agent:
        task = {"description": "review the fix", "prompt": "review it", "subagent_type": "general-purpose", "run_in_background": True}
        lines += [
            _line("assistant", f"u{i}-4", t + 3, _said(f"msg{i}-2", (150, 30), [
                {"type": "tool_use", "id": f"toolu_{i}_2", "name": "Task", "input": task}])),
            _line("user", f"u{i}-5", t + 4, _result(f"toolu_{i}_2", f"Async agent launched. agentId: {agent}"),
                  after={"toolUseResult": {"agentId": agent, "status": "async_launched", "isAsync": True}}),
            _line("user", f"u{i}-6", t + 30, {"role": "user", "content": f"<task-notification><task-id>{agent}</task-id>"
                  f"<status>completed</status><result>The fix in module {m} is right.</result></task-notification>"}),
        ]
        sub = [
            _line("user", f"v{i}-1", t + 5, {"role": "user", "content": "review it"}, isSidechain=True, agentId=agent),
            _line("assistant", f"v{i}-2", t + 29, _said(f"msgv{i}", (80, 15), [{"type": "text", "text": f"The fix in module {m} is right."}]),
                  isSidechain=True, agentId=agent),
        ]
        meta = json.dumps({"agentType": "general-purpose", "description": "review the fix", "toolUseId": f"toolu_{i}_2"},
                          separators=(",", ":"))
    lines.append(_line("assistant", f"u{i}-9", t + 40, _said(f"msg{i}-3", (200, 25), [
        {"type": "text", "text": f"Fixed module {m}: an off-by-one in f."}])))
    return lines, sub, meta


def build_root(root: Path, sessions: int = SCALE_SESSIONS, projects: int = SCALE_PROJECTS) -> dict:
    """Write `sessions` small sessions over `projects` project folders under `root` (same bytes every time)."""
    files = size = 0
    for i in range(sessions):
        proj = root / f"-home-me-src-proj{i % projects:04d}"
        proj.mkdir(parents=True, exist_ok=True)
        sid = f"{i:08x}-0000-4000-8000-{i:012x}"
        lines, sub, meta = session_lines(i)
        written = [(proj / f"{sid}.jsonl", "\n".join(lines) + "\n")]
        if sub is not None:
            agent = proj / sid / "subagents" / f"agent-a{i:07x}"
            agent.parent.mkdir(parents=True)
            written += [(agent.with_suffix(".jsonl"), "\n".join(sub) + "\n"), (agent.with_suffix(".meta.json"), meta)]
        for path, text in written:
            data = text.encode("utf-8")
            path.write_bytes(data)
            os.utime(path, (_T0 + i * 60 + 40,) * 2)
            files, size = files + 1, size + len(data)
    return {"sessions": sessions, "files": files, "bytes": size}


def scale_report(sessions: int = SCALE_SESSIONS, interval: float = 0.1, cwd: str | None = None, log=print) -> dict:
    """Generate the scale root in a temporary folder and time one cold `measure report` on it."""
    work = Path(tempfile.mkdtemp(prefix="measure-scale-"))
    try:
        log(f"bench: scale: writing {sessions} small sessions, then measure report over them ...")
        stats = build_root(work / ROOT_NAME, sessions)
        return stats | checked_run([sys.executable, "-m", "measure", "report", "--root", os.fspath(work / ROOT_NAME), "--out",
                                    os.fspath(work / "report"), "--cache-dir", os.fspath(work / "cache"), "--budgets", REPORT_BUDGETS,
                                    "--quiet"], interval, cwd)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        # the report's scratch run folder, build/runs/<root name>, under the working directory's repo
        shutil.rmtree(Path(cwd or os.getcwd()) / "build" / "runs" / ROOT_NAME, ignore_errors=True)

