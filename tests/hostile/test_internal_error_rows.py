"""Issue #26, sessions silently replaced by an `internal_error` row, and `measure inspect` crashes.

akm reads these files: JSON numbers overflow to ±Infinity or lose digits (JS doubles), a
400-digit integer is a finite or infinite double, JSON.parse nests deeply; the port must read
them as akm does, and every measurement after it must survive what the port hands it.
Correct: no `internal_error` row; the session is measured, or reported with a reason akm's own
pipeline gives (a prompt akm cannot build is a `render_error`); `measure inspect` on the file
exits 0 (or 2 with one line) and prints no traceback.
"""

from __future__ import annotations

import os

import pytest

from fuzz import drive
from fuzz.jsontext import Raw
from plant import answer, deep, launch_ack, prompt, tool_use, write

SESSION = "-home-me-app/s1.jsonl"
BASE = [prompt(1), answer(2)]


def _ts(value: str) -> list:
    return [{**prompt(1), "timestamp": Raw(value)}, answer(2)]


INPUTS = {
    "a 400-digit integer timestamp": (_ts("9" * 400), {}),
    "a timestamp of 1e400": (_ts("1e400"), {}),
    "a timestamp of -1e400": (_ts("-1e400"), {}),
    "a timestamp of -1e308": (_ts("-1e308"), {}),
    "a 400-digit integer in a tool input": ([*BASE, tool_use("t1", name="Edit", n=Raw("9" * 400))], {}),
    "a lone-surrogate role under --replay": ([*BASE, {**prompt(5), "message": {"role": "\ud800", "content": "hello there"}}],
                                             {"replay": "turn_end"}),
    "a 1e400 timestamp under --replay-at every:5": (_ts("1e400"), {"replay": "every:5"}),
    "a tool_use id nested 3,000 deep": ([*BASE, tool_use(deep()), launch_ack("t", "a1")], {}),
    "a tool_use name nested 3,000 deep": ([*BASE, tool_use("t1", name=deep())], {}),
    "a version nested 3,000 deep": ([{**prompt(i), "version": deep()} for i in (1, 2, 3)], {}),
    "a queue-operation nested 3,000 deep": ([*BASE, {"type": "queue-operation", "operation": deep(), "timestamp": "2026-05-01T10:00:05.000Z",
                                                     "content": "x"}], {}),
}


def _no_internal_error(run, out) -> None:
    assert not run.lost, run.trace
    assert [e for e in run.errors if e["kind"] == "internal_error"] == []
    measured = {r["session_path"] for r in drive.table_rows(out, "sessions")}
    assert SESSION in measured or any(e["session_path"] == SESSION for e in run.errors)


@pytest.mark.parametrize("what", sorted(INPUTS))
def test_the_session_is_measured_not_replaced(tmp_path, what):
    lines, options = INPUTS[what]
    write(tmp_path / "root" / SESSION, lines)
    _no_internal_error(drive.run_in_process(tmp_path / "root", tmp_path / "out", **options), tmp_path / "out")


def test_a_subagent_under_a_folder_whose_name_is_not_utf8(tmp_path):
    write(tmp_path / "root" / SESSION, BASE)
    write(os.fsencode(tmp_path / "root" / "-home-me-app" / "s1" / "subagents") + b"/\xff\xfe/agent-a1.jsonl", [prompt(3, "sub")])
    _no_internal_error(drive.run_in_process(tmp_path / "root", tmp_path / "out"), tmp_path / "out")


@pytest.mark.parametrize("what", [k for k, (_, options) in sorted(INPUTS.items()) if not options])
def test_inspect_shows_the_session(tmp_path, what):
    """`measure inspect` on each input: exit 0 (a file it cannot read: exit 2, one line), no traceback."""
    write(tmp_path / SESSION, INPUTS[what][0])
    r = drive.measure("inspect", tmp_path / SESSION, cwd=tmp_path)
    assert r.returncode in (0, 2) and not r.traceback, r.stderr[-1500:]
    if r.returncode == 2:
        assert len([ln for ln in r.stderr.splitlines() if ln.strip()]) == 1, r.stderr
