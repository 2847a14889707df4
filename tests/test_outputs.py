"""measure/runner/outputs.py and the commands that use it: --out never inside the sessions root,
never replacing what measure did not write, outputs appearing whole or not at all (issue #17)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from measure.cli import main
from measure.runner.job import RunParams
from measure.runner.outputs import (
    MANIFEST,
    STAGING_MARKER,
    OutputError,
    StagedDir,
    check_out_dir,
)
from measure.runner.cache import check_cache_dir
from measure.runner.run import run_measurement


@pytest.fixture()
def root(tmp_path):
    r = tmp_path / "projects"
    (r / "-home-me-app").mkdir(parents=True)
    (r / "-home-me-app" / "s1.jsonl").write_text(
        '{"type":"user","timestamp":"2026-05-01T10:00:00Z","message":{"role":"user","content":"hello there"}}\n'
    )
    # a project folder named like a report's subfolder: an --out equal to the root deleted it once
    (r / "tables").mkdir()
    (r / "tables" / "keep.jsonl").write_text("{}\n")
    return r


def _listing(d: Path) -> dict[str, bytes]:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("where", ["equal", "inside", "containing", "link"])
def test_out_inside_equal_to_or_containing_the_root_is_refused(root, tmp_path, where):
    out = {"equal": root, "inside": root / "-home-me-app" / "out", "containing": tmp_path, "link": tmp_path / "ln"}[where]
    if where == "link":
        os.symlink(root, out)
    with pytest.raises(OutputError) as e:
        check_out_dir(out, root)
    assert "\n" not in str(e.value) and "sessions root" in str(e.value)


def test_out_beside_the_root_is_accepted(root, tmp_path):
    assert check_out_dir(tmp_path / "out", root) == (tmp_path / "out").resolve()


def test_cache_dir_inside_the_root_is_refused(root, tmp_path):
    with pytest.raises(OutputError):
        check_cache_dir(root / "cache", root)
    check_cache_dir(tmp_path / "cache", root)


@pytest.mark.parametrize("cmd", ["run", "report"])
def test_commands_refuse_out_in_the_root_before_any_work(root, tmp_path, cmd, capsys):
    before = _listing(root)
    args = [cmd, "--root", str(root), "--out", str(root)] + (["--no-cache"] if cmd == "run" else [])
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "sessions root" in err
    assert _listing(root) == before


def test_run_refuses_a_cache_dir_in_the_root(root, tmp_path, capsys):
    assert main(["run", "--root", str(root), "--out", str(tmp_path / "o"), "--cache-dir", str(root / "c")]) == 2
    assert not (root / "c").exists() and not (tmp_path / "o").exists()


def test_run_replaces_only_its_own_earlier_output(root, tmp_path):
    out = tmp_path / "out"
    run_measurement(root, out, RunParams(), jobs=1)
    first = _listing(out)
    assert MANIFEST in first and "sessions.csv" in first
    run_measurement(root, out, RunParams(), jobs=1)
    assert _listing(out) == first
    (out / "notes.txt").write_text("mine")
    with pytest.raises(OutputError, match="notes.txt"):
        run_measurement(root, out, RunParams(), jobs=1)
    assert (out / "notes.txt").read_text() == "mine"


def test_report_refuses_a_folder_it_did_not_write_and_keeps_every_file(root, tmp_path, capsys):
    out = tmp_path / "mine"
    (out / "tables").mkdir(parents=True)
    (out / "notes.html").write_text("my notes")
    (out / "tables" / "budget.csv").write_text("a,b\n")
    (out / "run.json").write_text("{}")
    before = _listing(out)
    assert main(["report", "--root", str(root), "--out", str(out)]) == 2
    assert "did not write" in capsys.readouterr().err
    assert _listing(out) == before


def test_a_failed_write_leaves_the_previous_output(tmp_path):
    out = tmp_path / "out"
    with StagedDir(out, "run") as d:
        (d / "a.csv").write_text("old")
    with pytest.raises(RuntimeError):
        with StagedDir(out, "run") as d:
            (d / "a.csv").write_text("new")
            (d / "b.csv").write_text("half")
            raise RuntimeError("disk full")
    assert _listing(out) == {"a.csv": b"old", MANIFEST: (out / MANIFEST).read_bytes()}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging folder left


def test_an_unwritable_out_is_refused_before_any_work(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="not writable"):
        StagedDir(tmp_path / "file" / "out", "run")


@pytest.mark.slow
def test_a_killed_run_leaves_the_previous_output(root, tmp_path):
    out = tmp_path / "out"
    run_measurement(root, out, RunParams(), jobs=1)
    before = _listing(out)
    _run_killed_while_writing(root, out)
    assert _listing(out) == before


def _run_killed_while_writing(root, out) -> None:
    """`measure run` in a child process that SIGKILLs itself when it starts writing tables."""
    code = (
        "import os, signal, measure.runner.tables as t\n"
        "def die(*a, **k): os.kill(os.getpid(), signal.SIGKILL)\n"
        "t.write_tables = die\n"  # run.py imports it when it writes: the patched one
        f"from measure.runner.job import RunParams\nimport measure.runner.run as r\nr.run_measurement({str(root)!r}, {str(out)!r}, RunParams(), jobs=1)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert proc.returncode == -9, proc.stderr.decode(errors="replace")[-2000:]


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid  # reaped: no process has it (the kernel hands pids out in order, not at once)


def _staging(tmp_path: Path, suffix: str, owner: dict | None) -> Path:
    d = tmp_path / f".measure-staging-out-{suffix}"
    (d / "tables").mkdir(parents=True)
    (d / "tables" / "sessions.csv").write_text("half written")
    if owner is not None:
        (d / STAGING_MARKER).write_text(json.dumps(owner))
    return d


def test_stale_staging_folders_of_dead_runs_are_removed_and_nothing_else(tmp_path):
    from measure.runner.outputs import _owner

    import psutil

    dead = _staging(tmp_path, "dead", {**_owner(os.getpid()), "pid": _dead_pid()})
    # a writer of an earlier boot whose pid is ours now: this process started after it
    rebooted = _staging(tmp_path, "reboot", {**_owner(os.getpid()), "started": psutil.boot_time() - 3600.0})
    reused = _staging(tmp_path, "reused", {**_owner(os.getpid()), "started": psutil.Process().create_time() - 5})  # our pid, not our start
    live = _staging(tmp_path, "live", _owner(os.getpid()))
    foreign = _staging(tmp_path, "foreign", None)  # same prefix, no marker: not ours to judge
    garbled = _staging(tmp_path, "garbled", None)
    (garbled / STAGING_MARKER).write_text("{not json")
    other = tmp_path / ".measure-staging-another-x"  # another --out's staging folder
    other.mkdir()
    (other / STAGING_MARKER).write_text(json.dumps({**_owner(os.getpid()), "pid": _dead_pid()}))
    with StagedDir(tmp_path / "out", "run") as d:
        (d / "a.csv").write_text("new")
    assert not dead.exists() and not rebooted.exists() and not reused.exists()
    for kept in (live, foreign, garbled, other):
        assert kept.is_dir(), kept
    assert (foreign / "tables" / "sessions.csv").read_text() == "half written"
    assert STAGING_MARKER not in _listing(tmp_path / "out")  # the marker never reaches the output


@pytest.mark.slow
def test_a_sigkilled_runs_staging_folder_is_removed_by_the_next_run(root, tmp_path):
    out = tmp_path / "out"
    _run_killed_while_writing(root, out)
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(".measure-staging-out-")]
    assert len(left) == 1
    run_measurement(root, out, RunParams(), jobs=1)
    assert not any(p.name.startswith(".measure-staging-") for p in tmp_path.iterdir())


@pytest.mark.slow
def test_the_report_measures_in_a_child_process_whose_errors_come_back_whole():
    """measure report runs the measurement in a forked child (its memory goes when it ends): a
    result comes back, and an exception keeps its type and message, whatever its __init__ takes."""
    code = (
        "import os, sys\n"
        "from measure.report.build import in_child\n"
        "from measure.runner.select import UnknownSessions\n"
        "def ok(x): return (os.getpid(), x * 2)\n"
        "def bad(): raise UnknownSessions({'zzzz': ['abc']}, 3)\n"
        "pid, v = in_child(ok, 21)\n"
        "assert v == 42 and pid != os.getpid(), (pid, v)\n"
        "try:\n    in_child(bad)\nexcept UnknownSessions as e:\n    print(type(e).__name__, e, e.listed)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "UnknownSessions no session matches 'zzzz'; closest: abc 3"


def test_an_interrupt_while_the_commit_marks_its_retired_folder_leaves_out_and_no_folder(tmp_path, monkeypatch):
    """SIGTERM or Ctrl-C (an exception) after the retired folder exists but before the old output
    moved into it: `out` stays as it was and the half-written retired folder goes (a marker cut
    short would not parse, and `recover` leaves such a folder alone)."""
    from measure.runner import outputs

    out = tmp_path / "out"
    with StagedDir(out, "run") as d:
        (d / "a.csv").write_text("old")

    def interrupted(folder):
        (folder / outputs.STAGING_MARKER).write_text('{"writer": "meas')
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        with StagedDir(out, "run") as d:
            (d / "a.csv").write_text("new")
            monkeypatch.setattr(outputs, "_mark", interrupted)  # the commit's mark of its retired folder
    assert (out / "a.csv").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize("which", ["staging", "retired"])
def test_a_sigkill_inside_the_marker_write_leaves_a_folder_the_next_run_removes(tmp_path, which):
    """A SIGKILL after a marker's file was created but before its JSON was whole: the next run
    into `out` finds `out` as it was and removes the folder (a marker cut short would not parse,
    and `recover` must leave such a marker, which may be anyone's, alone)."""
    out = tmp_path / "out"
    with StagedDir(out, "run") as d:
        (d / "a.csv").write_text("old")
    code = (
        "import os, signal\n"
        "from measure.runner import outputs\n"
        "real = outputs.write_atomically\n"
        "def cut(path, write):\n"
        f"    if path.name == '.measure-staging.json' and '.measure-{which}-' in str(path):\n"
        "        def write(f):\n"
        "            f.write(b'{\"writer\"'); f.flush(); os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return real(path, write)\n"
        "outputs.write_atomically = cut\n"
        f"with outputs.StagedDir({str(out)!r}, 'run') as d:\n"
        "    (d / 'a.csv').write_text('new')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert proc.returncode == -9, proc.stderr.decode(errors="replace")[-2000:]
    assert any(p.name.startswith(f".measure-{which}-out-") for p in tmp_path.iterdir())  # the kill left it
    with StagedDir(out, "run") as d:
        (d / "a.csv").write_text("again")
    assert (out / "a.csv").read_text() == "again"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_marker_cut_short_by_a_live_writer_is_left_alone(tmp_path):
    live = tmp_path / ".measure-staging-out-1-0a0a0a0a"
    live.mkdir()
    (live / f"{STAGING_MARKER}.{os.getpid()}.tmp").write_text('{"writ')  # this process is writing it
    with StagedDir(tmp_path / "out", "run") as d:
        (d / "a.csv").write_text("new")
    assert live.is_dir()
