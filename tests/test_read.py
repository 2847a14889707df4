"""Discovery and reading: akm's listing rules, folding, bad input, read-only access."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from measure.akm.read import (
    ReadError,
    flatten_content,
    inline_refs,
    list_sessions,
    read_session,
    resolve_root,
)
from measure.measurements.strategies import STRATEGIES
from measure.runner.job import RunParams
from measure.runner.run import run_measurement

PARITY = Path(__file__).parent / "parity" / "inputs" / "projects"


def line(**kw) -> str:
    base = {"type": "user", "timestamp": "2026-01-01T00:00:00.000Z", "message": {"role": "user", "content": "hello there, world"}}
    base.update(kw)
    return json.dumps(base)


def write(path: Path, *lines: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        for ln in lines:
            f.write(ln if isinstance(ln, bytes) else ln.encode())
            f.write(b"\n")
    return path


def test_resolve_root(monkeypatch, tmp_path):
    assert resolve_root(tmp_path) == tmp_path
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert resolve_root() == tmp_path / "cfg" / "projects"
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert resolve_root() == tmp_path / "home" / ".claude" / "projects"


def test_listing_excludes_subagents_and_journals(tmp_path):
    write(tmp_path / "p" / "s1.jsonl", line())
    write(tmp_path / "p" / "s1" / "subagents" / "agent-a.jsonl", line())
    write(tmp_path / "p" / "s1" / "subagents" / "workflows" / "w" / "agent-b.jsonl", line())
    write(tmp_path / "p" / "s1" / "subagents" / "workflows" / "w" / "journal.jsonl", line())
    write(tmp_path / "p" / "journal.jsonl", line())
    write(tmp_path / "p" / "s1" / "other" / "notes.jsonl", line())  # still a session, as in akm
    write(tmp_path / "subagents" / "s2.jsonl", line())  # a project named subagents is kept
    write(tmp_path / "p" / "agent-legacy.jsonl", line())  # legacy sibling layout: listed by akm
    names = sorted(os.path.relpath(s.path, tmp_path) for s in list_sessions(tmp_path))
    assert names == ["p/agent-legacy.jsonl", "p/s1.jsonl", "p/s1/other/notes.jsonl", "subagents/s2.jsonl"]


def test_listing_order_is_newest_ended_first(tmp_path):
    write(tmp_path / "p" / "old.jsonl", line(timestamp="2026-01-01T00:00:00Z"))
    write(tmp_path / "p" / "new.jsonl", line(timestamp="2026-02-01T00:00:00Z"))
    assert [s.session_id for s in list_sessions(tmp_path)] == ["new", "old"]


def test_peek_reads_title_from_head_and_end_from_tail(tmp_path):
    big = "x" * 5000
    p = write(
        tmp_path / "p" / "s.jsonl",
        json.dumps({"type": "custom-title", "customTitle": "My title"}),
        line(timestamp="2026-01-01T00:00:00Z"),
        line(message={"role": "user", "content": big}, timestamp="2026-01-02T00:00:00Z"),
        line(timestamp="2026-01-03T00:00:00Z"),
    )
    (s,) = list_sessions(tmp_path)
    assert s.title == "My title"
    assert s.started_at == 1767225600000 and s.ended_at == 1767398400000
    assert s.path == str(p)


def test_flatten_content_blocks():
    text = flatten_content(
        [
            {"type": "text", "text": "a"},
            {"type": "thinking", "thinking": "b"},
            {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}},
            {"type": "tool_use", "input": {"z": 1, "1": 2}},
            {"type": "tool_result", "content": [{"type": "text", "text": "t"}]},
            {"type": "tool_result"},
            {"type": "image"},
            None,
            "str",
        ]
    )
    assert text == 'a\nb\n[tool:Bash] ls\n[tool:tool] {"1":2,"z":1}\n[tool_result] [{"type":"text","text":"t"}]\n[tool_result] ""'


def test_inline_refs():
    refs = inline_refs(
        """run akm remember "use the \\"fast\\" path" && akm feedback skill:x --good -n 'nice one' and akm remember '  ' """,
        5.0,
    )
    assert [(r.kind, r.text, r.ref) for r in refs] == [
        ("remember", 'use the \\"fast\\" path', None),
        ("feedback", "nice one", "skill:x"),
    ]
    assert inline_refs('akm feedback x --rating 5 --note "n"', 1.0) == []  # a flag value blocks it


def test_bad_input_is_reported_not_fatal(tmp_path):
    root = tmp_path
    write(
        root / "p" / "s.jsonl",
        b"\xef\xbb\xbf" + line().encode(),  # BOM: JSON.parse fails on the first line
        line(),
        b"{not json",
        b'{"type":"user","timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"caf\xe9 bytes"}}',
        b'{"a": NaN}',
        b"[1,2]",
        b"null",
    )
    write(root / "p" / "s" / "subagents" / "agent-x.jsonl", line())
    (root / "p" / "s" / "subagents" / "agent-x.meta.json").write_text("{broken")
    session, problems = read_session(str(root / "p" / "s.jsonl"), str(root))
    kinds = {k for _, k, _ in problems}
    assert {"malformed_lines", "invalid_utf8", "broken_sidecar"} <= kinds
    assert len(session.parent.events) == 2
    assert "caf\ufffd bytes" in session.parent.events[1].text
    (sub,) = [e for e in session.folded if e.file.endswith("agent-x.jsonl")]
    assert sub.text.startswith("[subagent:unknown]\n")


def test_missing_parent_raises_read_error(tmp_path):
    with pytest.raises(ReadError):
        read_session(str(tmp_path / "p" / "gone.jsonl"), str(tmp_path))


def test_unreadable_subagent_fails_the_session_as_akm_does(tmp_path):
    write(tmp_path / "p" / "s.jsonl", line())
    (tmp_path / "p" / "s" / "subagents").mkdir(parents=True)
    os.symlink(tmp_path / "nowhere", tmp_path / "p" / "s" / "subagents" / "agent-dangling.jsonl")
    with pytest.raises(ReadError):
        read_session(str(tmp_path / "p" / "s.jsonl"), str(tmp_path))


def test_alone_view_comes_from_the_same_parse(tmp_path):
    write(tmp_path / "p" / "s.jsonl", line(timestamp="2026-01-02T00:00:00Z"), line(timestamp="2026-01-01T00:00:00Z"))
    write(tmp_path / "p" / "s" / "subagents" / "agent-a.jsonl", line(timestamp="2025-12-31T00:00:00Z"))
    session, _ = read_session(str(tmp_path / "p" / "s.jsonl"), str(tmp_path))
    assert [e.ts for e in session.alone] == sorted(e.ts for e in session.parent.events)
    assert all(e in session.folded for e in session.alone)  # the same Event objects
    assert session.ref.started_at < session.alone_ref.started_at


def _snapshot(root: Path) -> dict:
    snap = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        snap[str(p.relative_to(root))] = (
            st.st_mode,
            st.st_mtime_ns,
            hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None,
        )
    return snap


def test_reading_never_writes_under_the_root(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(PARITY, root)
    for p in [root, *root.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    before = _snapshot(root)
    try:
        run_measurement(root, tmp_path / "out", RunParams(budgets=(1000,)), jobs=1, cache_dir=tmp_path / "cache")
        after = _snapshot(root)
    finally:
        for p in [root, *root.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
    assert after == before


def test_fifty_thousand_events(tmp_path):
    """A large session parses in one pass; events and refs are all there."""
    lines = [line(timestamp=f"2026-01-01T00:{i // 1000 % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z",
                  message={"role": "user", "content": f"event {i} akm remember \"note {i}\""}) for i in range(50_000)]
    write(tmp_path / "p" / "big.jsonl", *lines)
    session, problems = read_session(str(tmp_path / "p" / "big.jsonl"), str(tmp_path))
    assert len(session.folded) == 50_000 and len(session.refs) == 50_000 and not problems


def test_odd_shapes_never_crash_the_reader(tmp_path):
    """Seeded random records of every JSON shape: the reader parses or skips, never raises."""
    import random

    r = random.Random(11)
    atoms = [None, True, False, 0, -1, 1.5, 2**70, "", "x", "2026-01-01T00:00:00Z", "not a date", [], {}]

    def value(depth=0):
        if depth > 2 or r.random() < 0.4:
            return r.choice(atoms)
        if r.random() < 0.5:
            return [value(depth + 1) for _ in range(r.randrange(3))]
        keys = ["type", "text", "thinking", "name", "input", "content", "command", "role", "timestamp", "message"]
        return {r.choice(keys): value(depth + 1) for _ in range(r.randrange(4))}

    lines = []
    for i in range(400):
        rec = {"type": r.choice(["user", "assistant", "system", 5, None]), "timestamp": r.choice(atoms + [i * 1000])}
        rec["message"] = r.choice([value(), {"role": value(), "content": [value(), value()]}, {"content": value()}])
        lines.append(json.dumps(rec))
    lines += ["\x00\x01", "{", '{"a": Infinity}', "[" * 50 + "]" * 50]
    write(tmp_path / "p" / "s.jsonl", *lines)
    session, problems = read_session(str(tmp_path / "p" / "s.jsonl"), str(tmp_path))
    assert session.parent.lines == len(lines)
    assert session.parent.bad_lines >= 3
    assert all(isinstance(e.text, str) and e.text for e in session.folded)
    import polars as pl

    out = tmp_path.parent / (tmp_path.name + "-out")  # outside the root: --out inside it is refused
    run_measurement(tmp_path, out, RunParams(budgets=(500,)), jobs=1, cache_dir=None)
    errors = pl.read_parquet(out / "errors.parquet")
    assert "internal_error" not in errors["kind"].to_list()
    # a timestamp of 2**70 ms is out of JS Date's range: akm's prompt build throws, and each
    # strategy whose prompt would hold it is reported as such instead of measured
    failed = {r.split(":", 1)[0] for r in errors.filter(pl.col("kind") == "render_error")["reason"]}
    measured = set(pl.read_parquet(out / "sessions.parquet")["strategy"])
    assert failed and not failed & measured and failed | measured == set(STRATEGIES)


def test_non_string_record_types_as_roles(tmp_path):
    """role = record type when message.role is not a string: String() in the hash, `||` in the prompt."""
    from measure.akm.hashing import canonical
    from measure.akm.prompt import format_transcript

    write(
        tmp_path / "p" / "s.jsonl",
        json.dumps({"type": 0, "timestamp": "2026-01-01T00:00:00Z", "message": {"content": "zero typed record"}}),
        json.dumps({"type": [], "timestamp": "2026-01-01T00:00:01Z", "message": {"content": "array typed record"}}),
        json.dumps({"type": 7, "timestamp": "2026-01-01T00:00:02Z", "message": {"content": "seven typed record"}}),
    )
    session, _ = read_session(str(tmp_path / "p" / "s.jsonl"), str(tmp_path))
    assert canonical(session.folded) == "0\nzero typed record\n\0\n\narray typed record\n\0\n7\nseven typed record"
    body = format_transcript(session.folded)
    assert "[unknown @ 2026-01-01T00:00:00.000Z] zero" in body  # 0 || "unknown"
    assert "[ @ 2026-01-01T00:00:01.000Z] array" in body  # [] is truthy, String([]) is ""
    assert "[7 @ 2026-01-01T00:00:02.000Z] seven" in body


def test_walk_order_fs_follows_readdir_and_name_is_the_default(tmp_path, monkeypatch):
    """#10 defect 12: akm walks in readdir order; `--walk-order fs` reproduces it, "name" (descending) is the default."""
    import measure.akm.read as read_mod

    parent = write(tmp_path / "-p" / "s1.jsonl", line())
    for name in ("agent-a", "agent-b", "agent-c"):
        write(tmp_path / "-p" / "s1" / "subagents" / f"{name}.jsonl", line())
    real_scandir = os.scandir
    fs_order = {"agent-c.jsonl": 0, "agent-a.jsonl": 1, "agent-b.jsonl": 2}

    class Scan:  # readdir order that is neither ascending nor descending by name
        def __init__(self, top):
            self.it = real_scandir(top)

        def __enter__(self):
            return iter(sorted(self.it, key=lambda e: fs_order.get(e.name, -1)))

        def __exit__(self, *exc):
            self.it.close()

    monkeypatch.setattr(read_mod.os, "scandir", Scan)
    fs, _ = read_session(str(parent), str(tmp_path), walk_order="fs")
    name, _ = read_session(str(parent), str(tmp_path))
    assert [os.path.basename(t.path) for t in fs.subagents] == ["agent-c.jsonl", "agent-a.jsonl", "agent-b.jsonl"]
    assert [os.path.basename(t.path) for t in name.subagents] == ["agent-c.jsonl", "agent-b.jsonl", "agent-a.jsonl"]
    with pytest.raises(ValueError):
        read_session(str(parent), str(tmp_path), walk_order="random")


def test_walk_order_option_reaches_run_json(tmp_path):
    from measure.cli import main

    write(tmp_path / "root" / "-p" / "s1.jsonl", line())
    assert main(["run", "--root", str(tmp_path / "root"), "--out", str(tmp_path / "o"), "--no-cache", "--jobs", "1", "--walk-order", "fs"]) == 0
    assert json.loads((tmp_path / "o" / "run.json").read_text())["parameters"]["walk_order"] == "fs"


def test_readme_does_not_claim_a_descending_walk():
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    assert "visiting directory entries in *descending* name" not in readme
    assert "--walk-order fs" in readme
# --- hostile inputs (issue #17) ------------------------------------------------------------

from measure.akm.read import (  # noqa: E402
    NotRegularFile,
    open_regular,
    read_sidecar,
    read_transcript,
    walk_jsonl,
)

LINE = '{"type":"user","timestamp":"2026-05-01T10:00:00Z","message":{"role":"user","content":"hello there"}}'


def test_open_regular_refuses_a_fifo_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "f.jsonl")  # no writer: a blocking open would never return
    with pytest.raises(NotRegularFile, match="FIFO"):
        open_regular(str(tmp_path / "f.jsonl"))
    with pytest.raises(NotRegularFile, match="character device"):
        open_regular("/dev/zero")


def test_a_file_swapped_for_a_fifo_after_listing_is_reported_not_read(tmp_path):
    parent = write(tmp_path / "p" / "s.jsonl", LINE)
    write(tmp_path / "p" / "s" / "subagents" / "agent-a.jsonl", LINE)
    [listing] = list_sessions(tmp_path)
    sub = tmp_path / "p" / "s" / "subagents" / "agent-a.jsonl"
    sub.unlink()
    os.mkfifo(sub)
    session, problems = read_session(listing.path, str(tmp_path))
    assert session.subagents == () and ("p/s/subagents/agent-a.jsonl", "not_a_file") in [(p, k) for p, k, _ in problems]
    parent.unlink()
    os.mkfifo(parent)
    with pytest.raises(ReadError, match="FIFO"):
        read_session(listing.path, str(tmp_path))


def test_a_sidecar_that_is_a_fifo_reads_as_broken(tmp_path):
    write(tmp_path / "agent-a.jsonl", LINE)
    os.mkfifo(tmp_path / "agent-a.meta.json")
    sidecar, problem = read_sidecar(str(tmp_path / "agent-a.jsonl"))
    assert sidecar.state == "broken" and problem[0] == "not_a_file"


def test_json_deeper_than_the_recursion_limit_is_an_event(tmp_path):
    deep = '{"type":"user","timestamp":"2026-05-01T10:00:01Z","message":{"role":"user","content":"deep one"},"x":%s%s}' % (
        "[" * 20_000, "]" * 20_000)
    write(tmp_path / "s.jsonl", "[" * 10_000 + "]" * 10_000, LINE, deep)
    tf, valid = read_transcript(str(tmp_path / "s.jsonl"), 0.0, "s.jsonl")
    assert [e.text for e in tf.events] == ["hello there", "deep one"] and tf.bad_lines == 0 and valid
    [listing] = list_sessions(tmp_path)  # the peek at the first 4 KB survives it too
    assert listing.started_at is not None


def _recursive_walk(top):
    entries = sorted(os.scandir(top), key=lambda e: os.fsencode(e.name), reverse=True)
    for e in entries:
        if e.is_dir(follow_symlinks=False):
            yield from _recursive_walk(e.path)
        elif e.name.endswith(".jsonl"):
            yield e.path


def test_walk_order_is_unchanged_and_has_no_depth_limit(tmp_path):
    for rel in ("b/x.jsonl", "b/c/y.jsonl", "a.jsonl", "c/agent-b.jsonl", "c/agent-a.jsonl", "c/d/e/z.jsonl", "c/z.txt"):
        write(tmp_path / rel, "{}")
    assert list(walk_jsonl(str(tmp_path))) == list(_recursive_walk(str(tmp_path)))
    deep = tmp_path / "deep"
    deep.mkdir()
    cwd = os.getcwd()
    depth = 0
    try:
        os.chdir(deep)
        for _ in range(1_200):
            os.mkdir("d")
            os.chdir("d")
            depth += 1
        Path("s.jsonl").write_text(LINE + "\n")
        os.chdir(cwd)
        found = list(walk_jsonl(str(deep)))
        assert len(found) == 1 and found[0].endswith("/d" * 1_200 + "/s.jsonl")
    finally:  # remove bottom-up, whatever happened: shutil.rmtree (pytest's cleanup) recurses
        os.chdir(deep)
        for _ in range(depth):
            os.chdir("d")
        if os.path.exists("s.jsonl"):
            os.unlink("s.jsonl")
        for _ in range(depth):
            os.chdir("..")
            os.rmdir("d")
        os.chdir(cwd)


def test_a_link_leaving_the_root_is_reported(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    write(outside / "s.jsonl", LINE)
    (root / "p").mkdir(parents=True)
    os.symlink(outside / "s.jsonl", root / "p" / "s.jsonl")
    session, problems = read_session(str(root / "p" / "s.jsonl"), str(root))
    assert len(session.folded) == 1  # measured as akm reads it
    assert ("p/s.jsonl", "outside_link") in [(p, k) for p, k, _ in problems]


def test_a_line_over_the_cap_is_skipped_unread_and_reported(tmp_path, monkeypatch):
    from measure.akm import read as read_mod

    monkeypatch.setattr(read_mod, "MAX_LINE_BYTES", 4096)
    huge = '{"type":"user","timestamp":"2026-05-01T10:00:01Z","message":{"role":"user","content":"%s"}}' % ("x" * 100_000)
    number = "1." + "0" * 10_000  # a prefix of it parses too (as a number): still one long line
    exact = '{"type":"user","message":{"role":"user","content":"%s"}}' % ("y" * (4096 - 54))  # 4,096 bytes, last line
    assert len(exact) == 4096
    path = tmp_path / "p" / "s.jsonl"
    path.parent.mkdir()
    path.write_bytes("\n".join([LINE, huge, number, LINE.replace("hello", "after"), exact]).encode())
    tf, valid = read_transcript(str(path), 0.0, "p/s.jsonl")
    assert [e.text for e in tf.events] == ["hello there", "after there", "y" * (4096 - 54)]
    assert (tf.long_lines, tf.bad_lines, tf.lines) == (2, 0, 5) and valid
    [listing] = list_sessions(tmp_path)
    _, problems = read_session(listing.path, str(tmp_path))
    assert [(p, k) for p, k, _ in problems] == [("p/s.jsonl", "long_line")]


def test_one_enormous_line_is_read_in_bounded_memory(tmp_path, monkeypatch):
    """A file that is one line with no newline (here 24 MiB) costs a multiple of the cap, not of its
    size (orjson's error on a line takes about 12 times the line)."""
    import tracemalloc

    from measure.akm import read as read_mod

    monkeypatch.setattr(read_mod, "MAX_LINE_BYTES", 2**18)
    path = tmp_path / "s.jsonl"
    with open(path, "wb") as f:
        f.write(b'{"type":"user","message":{"role":"user","content":"')
        for _ in range(24):
            f.write(b"z" * 2**20)
    tracemalloc.start()
    try:
        tf, _ = read_transcript(str(path), 0.0, "s.jsonl")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert tf.long_lines == 1 and tf.events == ()
    assert peak < 8 * 2**20, peak


def test_a_sidecar_over_the_cap_reads_as_broken_and_is_reported(tmp_path, monkeypatch):
    from measure.akm import read as read_mod

    monkeypatch.setattr(read_mod, "MAX_LINE_BYTES", 1024)
    write(tmp_path / "agent-a.jsonl", LINE)
    (tmp_path / "agent-a.meta.json").write_text('{"agentType": "x", "description": "%s"}' % ("d" * 2000))
    sidecar, problem = read_sidecar(str(tmp_path / "agent-a.jsonl"))
    assert sidecar.state == "broken" and problem[0] == "long_line"
