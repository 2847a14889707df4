"""A hostile sessions root, built at test time: every input of issue #17, small.

Each planted input is recorded in `Planted` with what the run must do with it: measure it
(`measured`, by root-relative session path) or report it (`errors`, by root-relative path).
Every name and text carries a canary (`CANARY...`) so a test can scan every output for leaks.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path

CANARY = "CANARY"
DEEP_DIRS = 1_200
T0 = 1_780_000_000_000


@dataclass
class Planted:
    root: Path
    outside: Path
    measured: list[str] = field(default_factory=list)  # session paths that must be measured
    errors: list[str] = field(default_factory=list)  # paths that must have an errors row
    sockets: list[socket.socket] = field(default_factory=list)

    def close(self) -> None:
        for s in self.sockets:
            s.close()
        remove_deep(self.root)


def _line(obj) -> str:
    return json.dumps(obj, ensure_ascii=True)


def _msg(role: str, text, i: int, **extra) -> str:
    return _line({"type": role, "timestamp": f"2026-05-01T10:{i // 60:02d}:{i % 60:02d}.000Z",
                  "message": {"role": role, "content": text}, **extra})


def _session_lines(tag: str, agent: str | None = None) -> list[str]:
    lines = [
        _line({"type": "custom-title", "customTitle": f"{CANARY}title{tag}"}),
        _msg("user", f"{CANARY}prompt{tag}: please look at the build", 1),
        _msg("assistant", [{"type": "text", "text": f"{CANARY}answer{tag}"},
                           {"type": "tool_use", "id": f"toolu_{CANARY}{tag}", "name": "Task",
                            "input": {"description": f"{CANARY}taskdesc{tag}", "prompt": "go"}}], 2),
    ]
    if agent:
        lines.append(_line({
            "type": "user", "timestamp": "2026-05-01T10:00:03.000Z",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{CANARY}{tag}",
                                                     "content": f"{CANARY}launched{tag}"}]},
            "toolUseResult": {"agentId": agent, "status": "async_launched", "isAsync": True},
        }))
        lines.append(_msg("user", f"<task-notification><task-id>{agent}</task-id><result>{CANARY}result{tag} "
                                  "the subagent found the failing test</result></task-notification>", 9))
    return lines


DEEP_TOOL_INPUTS = (2_000, 10_000)


def deep_input(depth: int) -> str:
    """JSON text of a value nested `depth` deep, lists and objects alternating, a string inside."""
    opens = "".join('{"k":' if i % 2 else "[" for i in range(depth))
    closes = "".join("}" if i % 2 else "]" for i in reversed(range(depth)))
    return opens + '"leaf"' + closes


def deep_tool_line(depth: int) -> str:
    return ('{"type":"assistant","timestamp":"2026-05-01T10:00:40.000Z","message":{"role":"assistant",'
            '"content":[{"type":"tool_use","id":"toolu_deep","name":"Edit","input":{"a":%s}}]}}' % deep_input(depth))


def _write(path: Path, lines: list[str] | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = lines if isinstance(lines, bytes) else ("\n".join(lines) + "\n").encode("utf-8")
    path.write_bytes(data)


@contextlib.contextmanager
def _cwd(path: Path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def build(base: Path) -> Planted:
    """Build `base/projects` (the root) and `base/outside` (what links point at)."""
    root, outside = base / "projects", base / "outside"
    outside.mkdir(parents=True)
    p = Planted(root, outside)

    # A good project: a session with a subagent (sidecar with lone surrogates) and hostile siblings.
    proj = root / f"-home-{CANARY}proj"
    agent = f"a{CANARY}agent1"
    sess = proj / f"{CANARY}sess1.jsonl"
    _write(sess, _session_lines("1", agent))
    p.measured.append(f"{proj.name}/{sess.name}")
    sub = proj / f"{CANARY}sess1" / "subagents"
    _write(sub / f"agent-{agent}.jsonl", [_msg("user", f"{CANARY}subprompt", 4), _msg("assistant", f"{CANARY}subanswer", 5)])
    # "\ud83d": a lone surrogate, as a JSON escape (what JSON.parse accepts and orjson refuses)
    meta = '{"agentType": "%stype\\ud83d", "description": "%sdesc\\ud83d", "toolUseId": "toolu_%s1"}' % (CANARY, CANARY, CANARY)
    (sub / f"agent-{agent}.meta.json").write_text(meta, encoding="ascii")
    # subagent transcript that is a FIFO
    os.mkfifo(sub / f"agent-{CANARY}fifo.jsonl")
    p.errors.append(f"{proj.name}/{CANARY}sess1/subagents/agent-{CANARY}fifo.jsonl")
    # a good subagent whose sidecar is a FIFO
    _write(sub / f"agent-{CANARY}x2.jsonl", [_msg("assistant", f"{CANARY}x2", 6)])
    os.mkfifo(sub / f"agent-{CANARY}x2.meta.json")
    p.errors.append(f"{proj.name}/{CANARY}sess1/subagents/agent-{CANARY}x2.meta.json")
    # a subagent transcript that is a character device (a link to /dev/zero: reading never ends)
    os.symlink("/dev/zero", sub / f"agent-{CANARY}zero.jsonl")
    p.errors.append(f"{proj.name}/{CANARY}sess1/subagents/agent-{CANARY}zero.jsonl")
    # a sidecar that is /dev/urandom
    _write(sub / f"agent-{CANARY}rnd.jsonl", [_msg("assistant", f"{CANARY}rnd", 7)])
    os.symlink("/dev/urandom", sub / f"agent-{CANARY}rnd.meta.json")
    p.errors.append(f"{proj.name}/{CANARY}sess1/subagents/agent-{CANARY}rnd.meta.json")
    # a subagent transcript that is a socket (bound relative to stay under the path limit):
    # opening it fails at once (ENXIO), so akm's readSession throws and the session is reported
    _write(proj / f"{CANARY}sess2.jsonl", _session_lines("2"))
    (proj / f"{CANARY}sess2" / "subagents").mkdir(parents=True)
    with _cwd(proj / f"{CANARY}sess2" / "subagents"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(f"agent-{CANARY}sock.jsonl")
        p.sockets.append(s)
    p.errors.append(f"{proj.name}/{CANARY}sess2.jsonl")
    # a sidecar that is a link leaving the root: measured, reported, its text never copied
    _write(sub / f"agent-{CANARY}out.jsonl", [_msg("assistant", f"{CANARY}outsub", 8)])
    (outside / "meta.json").write_text(json.dumps({"agentType": f"{CANARY}outtype", "description": f"{CANARY}outdesc",
                                                   "toolUseId": f"toolu_{CANARY}out"}))
    os.symlink(outside / "meta.json", sub / f"agent-{CANARY}out.meta.json")
    p.errors.append(f"{proj.name}/{CANARY}sess1/subagents/agent-{CANARY}out.meta.json")

    # Hostile sessions.
    proj2 = root / f"-home-{CANARY}two"
    proj2.mkdir()
    os.mkfifo(proj2 / f"{CANARY}fifo.jsonl")
    p.errors.append(f"{proj2.name}/{CANARY}fifo.jsonl")
    os.symlink("/dev/urandom", proj2 / f"{CANARY}urandom.jsonl")
    p.errors.append(f"{proj2.name}/{CANARY}urandom.jsonl")
    with _cwd(proj2):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(f"{CANARY}sock.jsonl")
        p.sockets.append(s)
    p.errors.append(f"{proj2.name}/{CANARY}sock.jsonl")
    # a session meta that is a FIFO, beside a good session (akm never reads it: just no hang)
    os.mkfifo(proj2 / f"{CANARY}orphan.meta.json")
    # a file name that is not UTF-8
    bad_name = os.fsdecode(CANARY.encode() + b"\xff\xfename.jsonl")
    _write(proj2 / bad_name, _session_lines("nonutf8"))
    p.measured.append(f"{proj2.name}/{bad_name}")
    # the first 4 KB: JSON nested 10,000 deep, then ordinary lines
    _write(proj2 / f"{CANARY}deep4k.jsonl", ["[" * 10_000 + "]" * 10_000, *_session_lines("deep4k")])
    p.measured.append(f"{proj2.name}/{CANARY}deep4k.jsonl")
    # mid-file: an event whose record holds JSON nested 5,000 deep (JSON.parse reads it)
    deep = '{"type":"user","timestamp":"2026-05-01T10:00:30.000Z","message":{"role":"user","content":"%sdeepmsg"},"x":%s%s}' % (
        CANARY, "[" * 5_000, "]" * 5_000)
    _write(proj2 / f"{CANARY}middeep.jsonl", [*_session_lines("mid"), deep])
    p.measured.append(f"{proj2.name}/{CANARY}middeep.jsonl")
    # mid-file: a tool_use whose `input` is nested 2,000 and 10,000 deep (akm renders it with
    # JSON.stringify, which Bun's JavaScriptCore does to 40,000 levels)
    for depth in DEEP_TOOL_INPUTS:
        _write(proj2 / f"{CANARY}tooldeep{depth}.jsonl", [*_session_lines(f"tool{depth}"), deep_tool_line(depth)])
        p.measured.append(f"{proj2.name}/{CANARY}tooldeep{depth}.jsonl")
    # a legacy top-level agent-* session
    _write(proj2 / f"agent-{CANARY}legacy.jsonl", _session_lines("legacy"))
    p.measured.append(f"{proj2.name}/agent-{CANARY}legacy.jsonl")
    # a session that is a link leaving the root
    _write(outside / "sess.jsonl", _session_lines("outside"))
    os.symlink(outside / "sess.jsonl", proj2 / f"{CANARY}linked.jsonl")
    p.measured.append(f"{proj2.name}/{CANARY}linked.jsonl")
    p.errors.append(f"{proj2.name}/{CANARY}linked.jsonl")
    # malformed lines and invalid UTF-8 bytes
    _write(proj2 / f"{CANARY}mixed.jsonl", b"{not json\n" + ("\n".join(_session_lines("mixed")) + "\n").encode() + b"\xff\xfe\n")
    p.measured.append(f"{proj2.name}/{CANARY}mixed.jsonl")
    p.errors.append(f"{proj2.name}/{CANARY}mixed.jsonl")
    # a subagents folder whose parent is gone
    _write(proj2 / f"{CANARY}gone" / "subagents" / f"agent-{CANARY}orphan.jsonl", [_msg("user", "x", 1)])
    p.errors.append(f"{proj2.name}/{CANARY}gone/subagents")
    # a project name a spreadsheet would run
    proj3 = root / f"=HYPERLINK(\"{CANARY}\")"
    _write(proj3 / f"{CANARY}formula.jsonl", _session_lines("formula"))
    p.measured.append(f"{proj3.name}/{CANARY}formula.jsonl")

    # Folders nested 1,200 deep, a session at the bottom.
    deep_dir = root / f"{CANARY}nest"
    deep_dir.mkdir()
    with _cwd(deep_dir):
        for _ in range(DEEP_DIRS):
            os.mkdir("d")
            os.chdir("d")
        _write(Path(f"{CANARY}bottom.jsonl"), _session_lines("bottom"))
    p.measured.append(f"{CANARY}nest/" + "d/" * DEEP_DIRS + f"{CANARY}bottom.jsonl")

    return p


def remove_deep(root: Path) -> None:
    """Remove the 1,200-deep folders bottom-up (shutil.rmtree recurses and would fail)."""
    top = root / f"{CANARY}nest"
    if not top.exists():
        return
    with _cwd(top):
        depth = 0
        while os.path.isdir("d"):
            os.chdir("d")
            depth += 1
        for name in os.listdir("."):
            os.unlink(name)
        for _ in range(depth):
            os.chdir("..")
            os.rmdir("d")


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under `root` (links not followed): type, size, mtime, and bytes of regular files."""
    import hashlib
    import stat

    out = {}
    stack = [os.fsencode(root)]
    while stack:
        d = stack.pop()
        for e in os.scandir(d):
            st = e.stat(follow_symlinks=False)
            digest = None
            if stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256(Path(os.fsdecode(e.path)).read_bytes()).hexdigest()
            elif stat.S_ISLNK(st.st_mode):
                digest = os.readlink(e.path)
            out[e.path] = (st.st_mode, st.st_size if not stat.S_ISDIR(st.st_mode) else 0, st.st_mtime_ns, digest)
            if stat.S_ISDIR(st.st_mode):
                stack.append(e.path)
    return out
