"""measure.runner.progress: a bar on a terminal, nothing when not one, one summary line, --quiet silent."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from measure.cli import main
from measure.runner import progress

REPO = Path(__file__).parent.parent


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_gets_a_bar_and_one_summary_line():
    out = FakeTerminal()
    bar = progress.for_terminal(stream=out)
    bar.start(total=3, total_bytes=3_000_000)
    for _ in range(3):
        bar.advance(1_000_000)
    line = bar.finish("measured 3 sessions")
    text = out.getvalue()
    assert "/3 sessions" in text and "\r" in text  # tqdm drew (and redrew) the bar
    assert text.endswith(line + "\n") and line.startswith("measured 3 sessions (3.0 MB in ")
    assert "MB/s" in line


def test_not_a_terminal_gets_only_the_summary_line():
    out = io.StringIO()
    bar = progress.for_terminal(stream=out)
    bar.start(total=2, total_bytes=10)
    bar.advance(5)
    bar.advance(5)
    bar.finish("done")
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("done (0.0 MB in ") and "\r" not in out.getvalue()


def test_quiet_prints_nothing_even_on_a_terminal():
    out = FakeTerminal()
    bar = progress.for_terminal(quiet=True, stream=out)
    bar.start(total=1, total_bytes=1)
    bar.advance(1)
    assert bar.finish("x").startswith("x (") and out.getvalue() == ""
    assert (bar.done, bar.done_bytes) == (1, 1)


def test_the_library_is_silent_unless_a_progress_is_shown():
    assert not progress.current().bar and not progress.current().summary
    out = FakeTerminal()
    mine = progress.for_terminal(stream=out)
    with progress.shown(mine):
        assert progress.current() is mine
        mine.start(total=2, total_bytes=2)
        mine.advance(1)
    assert progress.current() is not mine
    assert mine._tqdm is None and out.getvalue().endswith("\r")  # the block's end removed the bar (tqdm's leave=False)


def test_run_not_on_a_terminal(parity_root, tmp_path, capsys):
    args = ["run", "--root", str(parity_root / "projects"), "--out", str(tmp_path / "o"), "--no-cache", "--jobs", "1"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("measured 15 of 15 sessions under projects/") and "MB/s)" in line and "\r" not in captured.err
    assert main([*args, "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")


@pytest.mark.slow
def test_run_on_a_terminal_shows_progress(parity_root, tmp_path):
    """`measure run` with its stderr on a pseudo-terminal draws a bar, then the summary line."""
    master, slave = pty.openpty()
    env = {**os.environ, "TQDM_DISABLE": "1", "COLUMNS": "120"}  # the Makefile's export must not hide the bar
    proc = subprocess.Popen(
        [sys.executable, "-m", "measure", "run", "--root", str(parity_root / "projects"), "--out", str(tmp_path / "o"),
         "--no-cache", "--jobs", "1"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave, cwd=REPO, env=env,
    )
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(master)
    assert proc.wait(timeout=30) == 0
    text = b"".join(chunks).decode("utf-8", "replace")
    assert "/15 sessions" in text and "\r" in text, text
    last = [l for l in text.replace("\r", "\n").splitlines() if l.strip()][-1]
    assert last.startswith("measured 15 of 15 sessions under projects/") and "MB/s)" in last


def test_a_progress_given_to_the_library_counts_every_session(parity_root, tmp_path):
    from measure.runner.run import run_measurement

    seen = []

    class Recording(progress.Progress):
        def advance(self, n_bytes: int = 0) -> None:
            super().advance(n_bytes)
            seen.append((self.done, self.total))

    mine = Recording()
    run_measurement(parity_root / "projects", tmp_path / "o", jobs=1, progress=mine)
    assert seen == [(i, 15) for i in range(1, 16)]
    assert mine.done_bytes == mine.total_bytes > 0


def test_extract_shows_its_calls_on_a_terminal_and_nothing_with_quiet(tmp_path, monkeypatch, capsys):
    cmd = f"{sys.executable} {Path(__file__).parent / 'fake_llm.py'}"
    root = str(REPO / "fixtures" / "default")
    args = ["extract", "--root", root, "--client", "command", "--command", cmd, "--max-sessions", "1", "--jobs", "1"]
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    text = terminal.getvalue()
    assert "/2 calls" in text and "\r" in text and "sent " not in text  # the bar, not one line per call
    assert text.rstrip("\n").splitlines()[-1].startswith("extract: 1 session(s), 2 call(s): 2 sent")
    monkeypatch.undo()
    assert main([*args, "--out", str(tmp_path / "b"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""
