"""Issue #26, the small ones (and two the fuzzer found beyond its list).

Correct: SIGINT prints one line (the previous output is intact; no traceback) and leaves the
previous output as it was; a `--template` that is a FIFO or `/dev/zero` is refused at parse
time (exit 2, one line) without blocking or reading without end; a sidecar nobody may read is
reported as unreadable, not as "not a JSON object"; a FIFO named like a session gets one errors
row; and, beyond the list: a session file dated before 1970 is measured or reported, never
dropped silently; no worker process outlives a SIGKILLed run; a refusal naming sessions is one
line whatever their names hold.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from fuzz import checks, drive
from plant import big_root, ordinary_root, prompt, write

TEMPLATE_GUARD_S = 8.0  # a run of the one-session root takes about a second


@pytest.mark.slow  # a run killed mid-way, in a subprocess: seconds
def test_sigint_prints_one_line_and_keeps_the_previous_output(tmp_path):
    ordinary_root(tmp_path / "small")
    out = tmp_path / "out"
    first = drive.measure("run", "--root", tmp_path / "small", "--out", out, "--no-cache", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = drive.output_files(out)
    big_root(tmp_path / "big", sessions=10)
    proc = drive.start(("run", "--root", tmp_path / "big", "--out", out, "--no-cache", "--jobs", "1"), tmp_path)
    deadline = time.monotonic() + 30
    while not any(n.startswith(".measure-staging-") for n in os.listdir(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.02)  # the staging folder appears when the run starts measuring
    time.sleep(0.3)  # mid-run: a 50 MB root takes seconds
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
    r = drive.finish(proc, tmp_path)
    assert r.returncode not in (0, None), "the run ended before the signal: the root is too small for this machine"
    assert drive.output_files(out) == before
    assert not r.traceback, r.stderr[-3000:]
    assert len([ln for ln in r.stderr.splitlines() if ln.strip()]) == 1, r.stderr[-3000:]


def _template_refused(tmp_path, template) -> None:
    ordinary_root(tmp_path / "root")
    r = drive.measure("run", "--root", tmp_path / "root", "--out", tmp_path / "out", "--no-cache", "--template", template,
                      cwd=tmp_path, timeout=TEMPLATE_GUARD_S)
    assert not r.timed_out, "still reading the template after the hang guard"
    assert r.returncode == 2 and not r.traceback, r.stderr[-1500:]
    assert len([ln for ln in r.stderr.splitlines() if ln.strip() and not checks.usage_line(ln)]) == 1, r.stderr


def test_a_template_that_is_a_fifo_is_refused(tmp_path):
    os.mkfifo(tmp_path / "template.md")
    _template_refused(tmp_path, tmp_path / "template.md")


def test_a_template_that_is_dev_zero_is_refused(tmp_path):
    _template_refused(tmp_path, "/dev/zero")


def test_a_sidecar_nobody_may_read_is_reported_unreadable(tmp_path):
    uid = drive.unprivileged_uid()
    if uid is None and not drive.permissions_bite():
        pytest.skip("running as root and cannot switch to an unprivileged user: chmod 000 does not bite")
    with drive.shared_folder("measure-test-", uid) as base:
        ordinary_root(base / "root")
        sub = base / "root" / "-home-me-app" / "s1" / "subagents"
        write(sub / "agent-a1.jsonl", [prompt(3, "the subagent's prompt")])
        (sub / "agent-a1.meta.json").write_text('{"agentType": "Explore"}')
        if uid is not None:
            drive.hand_over(base, uid)
        os.chmod(sub / "agent-a1.meta.json", 0)
        r = drive.measure("run", "--root", base / "root", "--out", base / "out", "--no-cache", cwd=base, user=uid)
        assert r.returncode == 0, r.stderr[-1500:]
        rows = [e for e in drive.errors_rows(base / "out") if e["path"] == "-home-me-app/s1/subagents/agent-a1.meta.json"]
        assert rows, "no errors row for the sidecar"
        assert all(e["kind"] == "unreadable" or "ermission" in e["reason"] for e in rows), rows


def test_a_fifo_named_like_a_session_gets_one_row(tmp_path):
    ordinary_root(tmp_path / "root")
    os.mkfifo(tmp_path / "root" / "-home-me-app" / "s2.jsonl")
    run = drive.run_in_process(tmp_path / "root", tmp_path / "out")
    assert not run.lost, run.trace
    assert len([e for e in run.errors if e["path"] == "-home-me-app/s2.jsonl"]) == 1, run.errors


def test_a_session_dated_before_1970_is_not_dropped_silently(tmp_path):
    """Not in #26's list: akm's listSessions skips a file whose mtime is below `sinceMs`, and
    `sinceMs` defaults to 0, so a session dated before 1970 (a restored backup, a clock gone
    wrong; `--pin-file-times -1` does the same to every session) vanishes with no errors row.
    The README's rule is that nothing is skipped silently: measured, or an errors row."""
    ordinary_root(tmp_path / "root")
    old = write(tmp_path / "root" / "-home-me-app" / "s0.jsonl", [prompt(1), prompt(2, "more")], mtime_s=-86_400 * 365)
    run = drive.run_in_process(tmp_path / "root", tmp_path / "out")
    assert not run.lost, run.trace
    shown = "-home-me-app/s0.jsonl"
    measured = {r["session_path"] for r in drive.table_rows(tmp_path / "out", "sessions")}
    assert shown in measured or shown in {e["path"] for e in run.errors}, f"{old} vanished without a row"


@pytest.mark.slow  # a run killed mid-way, in a subprocess: seconds
def test_no_worker_outlives_a_sigkilled_run(tmp_path):
    """Not in #26's list: SIGKILL the run the moment its first worker is forked, then read its
    output to the end as a shell's `$(...)` does (the killed process is reaped only after that).
    The worker, forked just then, misses PR_SET_PDEATHSIG and takes init as its parent; its
    watchdog then waits for `getppid()` to change (it already has) or for the run's pid to
    vanish (a zombie until reaped), so it blocks for ever, holding the caller's pipes.
    Correct: every process of the run ends within seconds of the kill."""
    if not os.path.isdir("/proc"):
        pytest.skip("needs /proc to see the run's workers")
    big_root(tmp_path / "root", sessions=8, lines=1_500)
    left = []
    for _ in range(5):
        proc = drive.start(("run", "--root", tmp_path / "root", "--out", tmp_path / "out", "--no-cache", "--jobs", "2"), tmp_path)
        deadline = time.monotonic() + 30
        while not drive.children(proc.pid) and time.monotonic() < deadline:
            pass  # poll without sleeping: the window is the few milliseconds after the fork
        os.kill(proc.pid, signal.SIGKILL)
        left += drive.finish(proc, tmp_path, timeout=30).outlived
        if left:
            break
    assert left == []


def test_a_refusal_naming_sessions_stays_one_line(tmp_path):
    """Not in #26's list: `--session` matching nothing names the closest ids; a file name holding
    a newline must not forge a second line of output, nor one holding ESC sequences reach the
    terminal raw. Correct: the refusal is one line, names escaped."""
    write(tmp_path / "root" / "-home-me-app" / "s\nmeasure run: all done \x1b[2J.jsonl", [prompt(1), prompt(2, "more")])
    r = drive.measure("run", "--root", tmp_path / "root", "--out", tmp_path / "out", "--no-cache", "--session=zzzz", cwd=tmp_path)
    assert r.returncode == 2 and not r.traceback, r.stderr
    assert len([ln for ln in r.stderr.splitlines() if ln.strip()]) == 1, r.stderr
    assert "\x1b" not in r.stderr
