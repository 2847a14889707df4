"""Issue #26, the filesystem-wide walk: a `subagents` link cannot pull in the machine.

akm follows a `<session>/subagents` symlink, so the port may too, but the suite must stop where
a link leads to `/`, to the root or an ancestor of it (every session of the root, and the
session itself, would become its own subagents: a loop), with an `errors` row for the link,
and never hang. Correct: the run completes in time (the timeout is a hang guard, not a speed
assertion), the session is measured, and `<session>/subagents` has an errors row.
"""

from __future__ import annotations

import os

from fuzz import drive
from plant import ordinary_root, prompt, write

SLASH_GUARD_S = 30.0


def _session_with_link(root, target) -> tuple[str, str]:
    ordinary_root(root, "-home-me-app", "s1")
    write(root / "-home-me-app" / "s2.jsonl", [prompt(1, "another session")])
    (root / "-home-me-app" / "s1").mkdir()
    os.symlink(target, root / "-home-me-app" / "s1" / "subagents")
    return "-home-me-app/s1.jsonl", "-home-me-app/s1/subagents"


def test_a_subagents_link_to_the_filesystem_root_is_bounded(tmp_path):
    session, link = _session_with_link(tmp_path / "root", "/")
    r = drive.measure("run", "--root", tmp_path / "root", "--out", tmp_path / "out", "--no-cache", cwd=tmp_path,
                      timeout=SLASH_GUARD_S)
    assert not r.timed_out, "still walking / after the hang guard"
    assert r.returncode == 0 and not r.traceback, r.stderr[-2000:]
    assert session in {row["session_path"] for row in drive.table_rows(tmp_path / "out", "sessions")}
    assert link in {e["path"] for e in drive.errors_rows(tmp_path / "out")}


def _linked_back(tmp_path, target) -> None:
    session, link = _session_with_link(tmp_path / "root", target)
    run = drive.run_in_process(tmp_path / "root", tmp_path / "out")
    assert not run.lost, run.trace
    assert link in {e["path"] for e in run.errors}, run.errors
    subagents = {row["subagent_path"] for row in drive.table_rows(tmp_path / "out", "subagents")}
    own = [p for p in subagents if p.endswith("/s1.jsonl")]
    assert own == [], f"the session was folded into itself through the link: {own}"


def test_a_subagents_link_to_an_ancestor_of_the_root_is_reported(tmp_path):
    _linked_back(tmp_path, tmp_path)


def test_a_subagents_link_to_the_root_itself_is_reported(tmp_path):
    _linked_back(tmp_path, tmp_path / "root")


def test_a_subagents_link_to_an_ordinary_outside_folder_is_read_and_reported(tmp_path):
    """What akm does and the suite already handles (passes today): the outside files are folded
    and each gets an `outside_link` row."""
    write(tmp_path / "elsewhere" / "agent-a1.jsonl", [prompt(3, "a subagent kept elsewhere")])
    session, link = _session_with_link(tmp_path / "root", tmp_path / "elsewhere")
    run = drive.run_in_process(tmp_path / "root", tmp_path / "out")
    assert not run.lost, run.trace
    assert {"kind": "outside_link", "path": f"{link}/agent-a1.jsonl"} in [{k: e[k] for k in ("kind", "path")} for e in run.errors]


def test_a_subagent_linked_to_a_file_whose_read_would_block_is_reported(tmp_path):
    """Not in #26's list (found walking `/`): /proc/kmsg is a regular file whose non-blocking
    read returns no data but None; the input fingerprint then raises TypeError and the whole
    run is lost. Correct: an errors row for the subagent (it is not a transcript that can be
    read), the run completes."""
    if not os.access("/proc/kmsg", os.R_OK):
        import pytest

        pytest.skip("/proc/kmsg is not readable here (it is root's)")
    ordinary_root(tmp_path / "root")
    (tmp_path / "root" / "-home-me-app" / "s1" / "subagents").mkdir(parents=True)
    os.symlink("/proc/kmsg", tmp_path / "root" / "-home-me-app" / "s1" / "subagents" / "agent-a1.jsonl")
    r = drive.measure("run", "--root", tmp_path / "root", "--out", tmp_path / "out", "--no-cache", cwd=tmp_path, timeout=SLASH_GUARD_S)
    assert r.returncode == 0 and not r.traceback, r.stderr[-1500:]
    assert "-home-me-app/s1/subagents/agent-a1.jsonl" in {e["path"] for e in drive.errors_rows(tmp_path / "out")}
