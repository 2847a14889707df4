"""Scale of `measure report` (#17): 20,000 small sessions, wall time and peak process-tree RSS."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from measure.bench.timing import OtherLoad, timed_run

SCALE_SESSIONS = 20_000
"""Sessions of the scale root (the issue's "20,000 small sessions")."""

SCALE_PROJECTS = 200
"""Project folders the sessions are spread over."""

SCALE_BUDGETS = "20000,40000,80000,160000,320000,640000"
"""The budget sweep of the timed report (six budgets, a report's default)."""

ROOT_NAME = "measure-bench-scale"
"""The generated root's folder name (the report's scratch run goes to build/runs/<it>)."""

_T0 = 1_780_000_000  # seconds; timestamps of the generated sessions start here


def _ts(seconds: int) -> str:
    import datetime  # noqa: PLC0415

    return datetime.datetime.fromtimestamp(_T0 + seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _dump(obj) -> str:
    return json.dumps(obj, separators=(",", ":"))


def session_lines(i: int) -> tuple[list[str], list[str] | None, str | None]:
    """The lines of small session `i`: a prompt, a tool call, an answer; every 5th delegates to a
    background subagent (returns its transcript lines and sidecar text too)."""
    t = i * 60
    agent = f"a{i:07x}" if i % 5 == 0 else None
    lines = [
        _dump({"type": "user", "uuid": f"u{i}-1", "timestamp": _ts(t), "sessionId": f"s{i}",
               "message": {"role": "user", "content": f"session {i}: please fix the failing test in module {i % 97}"}}),
        _dump({"type": "assistant", "uuid": f"u{i}-2", "timestamp": _ts(t + 1),
               "message": {"id": f"msg{i}-1", "role": "assistant", "usage": {"input_tokens": 100, "output_tokens": 20},
                           "content": [{"type": "text", "text": f"Looking at module {i % 97} now."},
                                       {"type": "tool_use", "id": f"toolu_{i}_1", "name": "Read",
                                        "input": {"file_path": f"/src/mod{i % 97}.py"}}]}}),
        _dump({"type": "user", "uuid": f"u{i}-3", "timestamp": _ts(t + 2),
               "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}_1",
                                                        "content": "def f(x):\n    return x + 1\n" * 3}]}}),
    ]
    sub = meta = None
    if agent:
        lines.append(_dump({"type": "assistant", "uuid": f"u{i}-4", "timestamp": _ts(t + 3),
                            "message": {"id": f"msg{i}-2", "role": "assistant", "usage": {"input_tokens": 150, "output_tokens": 30},
                                        "content": [{"type": "tool_use", "id": f"toolu_{i}_2", "name": "Task",
                                                     "input": {"description": "review the fix", "prompt": "review it",
                                                               "subagent_type": "general-purpose", "run_in_background": True}}]}}))
        lines.append(_dump({"type": "user", "uuid": f"u{i}-5", "timestamp": _ts(t + 4),
                            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}_2",
                                                                     "content": f"Async agent launched. agentId: {agent}"}]},
                            "toolUseResult": {"agentId": agent, "status": "async_launched", "isAsync": True}}))
        lines.append(_dump({"type": "user", "uuid": f"u{i}-6", "timestamp": _ts(t + 30),
                            "message": {"role": "user", "content": f"<task-notification><task-id>{agent}</task-id><status>completed"
                                                                   f"</status><result>The fix in module {i % 97} is right.</result>"
                                                                   "</task-notification>"}}))
        sub = [
            _dump({"type": "user", "uuid": f"v{i}-1", "timestamp": _ts(t + 5), "isSidechain": True, "agentId": agent,
                   "message": {"role": "user", "content": "review it"}}),
            _dump({"type": "assistant", "uuid": f"v{i}-2", "timestamp": _ts(t + 29), "isSidechain": True, "agentId": agent,
                   "message": {"id": f"msgv{i}", "role": "assistant", "usage": {"input_tokens": 80, "output_tokens": 15},
                               "content": [{"type": "text", "text": f"The fix in module {i % 97} is right."}]}}),
        ]
        meta = _dump({"agentType": "general-purpose", "description": "review the fix", "toolUseId": f"toolu_{i}_2"})
    lines.append(_dump({"type": "assistant", "uuid": f"u{i}-9", "timestamp": _ts(t + 40),
                        "message": {"id": f"msg{i}-3", "role": "assistant", "usage": {"input_tokens": 200, "output_tokens": 25},
                                    "content": [{"type": "text", "text": f"Fixed module {i % 97}: an off-by-one in f."}]}}))
    return lines, sub, meta


def build_root(root: Path, sessions: int = SCALE_SESSIONS, projects: int = SCALE_PROJECTS) -> dict:
    """Write `sessions` small sessions over `projects` project folders under `root` (same bytes every time).

    Returns {"sessions", "files", "bytes"}.
    """
    files = size = 0
    mtime = _T0
    for i in range(sessions):
        proj = root / f"-home-me-src-proj{i % projects:04d}"
        if i < projects:
            proj.mkdir(parents=True, exist_ok=True)
        sid = f"{i:08x}-0000-4000-8000-{i:012x}"
        lines, sub, meta = session_lines(i)
        written = [(proj / f"{sid}.jsonl", "\n".join(lines) + "\n")]
        if sub is not None:
            agent = json.loads(lines[4])["toolUseResult"]["agentId"]
            subdir = proj / sid / "subagents"
            subdir.mkdir(parents=True)
            written += [(subdir / f"agent-{agent}.jsonl", "\n".join(sub) + "\n"), (subdir / f"agent-{agent}.meta.json", meta)]
        for path, text in written:
            data = text.encode("utf-8")
            path.write_bytes(data)
            os.utime(path, (mtime + i * 60 + 40, mtime + i * 60 + 40))
            files += 1
            size += len(data)
    return {"sessions": sessions, "files": files, "bytes": size}


def report_cmd(root: Path, out: Path, cache: Path) -> list[str]:
    """`measure report` over the scale root, six budgets, every notebook."""
    return [sys.executable, "-m", "measure", "report", "--root", os.fspath(root), "--out", os.fspath(out),
            "--cache-dir", os.fspath(cache), "--budgets", SCALE_BUDGETS, "--quiet"]


def scale_report(sessions: int = SCALE_SESSIONS, interval: float = 0.1, cwd: str | None = None, log=print) -> dict:
    """Generate the scale root in a temporary folder and time one cold `measure report` on it."""
    work = Path(tempfile.mkdtemp(prefix="measure-scale-"))
    try:
        log(f"bench: scale: writing {sessions} small sessions ...")
        root = work / ROOT_NAME
        stats = build_root(root, sessions)
        log(f"bench: scale: measure report over {sessions} sessions, {len(SCALE_BUDGETS.split(','))} budgets ...")
        with OtherLoad() as load:
            t = timed_run(report_cmd(root, work / "report", work / "cache"), interval, cwd=cwd)
        if t.returncode != 0:
            raise SystemExit(f"bench: measure report failed ({t.returncode}):\n{t.stderr[-4000:]}")
        return {**stats, "wall_s": t.wall_s, "tree_rss_bytes": t.tree_rss_bytes, "tree_pss_bytes": t.tree_pss_bytes,
                "maxrss_bytes": t.maxrss_bytes, "procs": t.procs, "cpu_s": load.own_cpu, "other_load": load.cores}
    finally:
        shutil.rmtree(work, ignore_errors=True)
        # the report's scratch run folder, build/runs/<root name>, under the working directory's repo
        shutil.rmtree(Path(cwd or os.getcwd()) / "build" / "runs" / ROOT_NAME, ignore_errors=True)


if __name__ == "__main__":  # python -m measure.bench.scale [SESSIONS]
    res = scale_report(int(sys.argv[1]) if len(sys.argv) > 1 else SCALE_SESSIONS,
                       log=lambda m: print(m, file=sys.stderr, flush=True))
    print(json.dumps(res, indent=1))
