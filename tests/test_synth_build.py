"""generate() and copy_real(): same arguments, same bytes and mtimes; the size options; fixtures/default."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from synth_corpus import DEFAULT, DEFAULT_SEED, DEFAULT_SESSIONS, REAL, ROOT, jsonl_files, lines_of, tree_digest

from measure import synth

pytest_plugins = ["synth_fixtures"]


def test_same_seed_same_bytes_and_mtimes(tmp_path, mixed_root):
    again = tmp_path / "again"
    synth.generate(again, seed=11)
    assert tree_digest(again) == tree_digest(mixed_root)


def test_same_seed_same_bytes_across_hash_seeds(tmp_path):
    # String hashing is salted per process; a generator that leaked set/dict order would differ here.
    code = "import sys; from pathlib import Path; from measure.synth import generate; generate(Path(sys.argv[1]), seed=5, sessions=6)"
    for name, hash_seed in (("a", "1"), ("b", "2")):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        subprocess.run([sys.executable, "-c", code, str(tmp_path / name)], check=True, env=env, cwd=ROOT)
    assert tree_digest(tmp_path / "a") == tree_digest(tmp_path / "b")


def test_different_seed_different_bytes(tmp_path, mixed_root):
    other = tmp_path / "other"
    synth.generate(other, seed=12)
    assert tree_digest(other) != tree_digest(mixed_root)


def test_refuses_non_empty_directory(tmp_path):
    (tmp_path / "x.txt").write_text("keep me")
    with pytest.raises(FileExistsError):
        synth.generate(tmp_path, seed=1)


def test_mtime_is_last_timestamp(mixed_root):
    from datetime import datetime
    path = max((p for p in jsonl_files(mixed_root) if p.read_bytes().endswith(b"\n")), key=lambda p: p.stat().st_size)
    last = max(e["timestamp"] for e in lines_of(path) if isinstance(e.get("timestamp"), str))
    last_ms = int(datetime.fromisoformat(last.replace("Z", "+00:00")).timestamp() * 1000)
    assert 0 <= path.stat().st_mtime_ns // 1_000_000 - last_ms < 1000


def test_sessions_argument(tmp_path):
    summary = synth.generate(tmp_path / "m", seed=3, sessions=3)
    assert summary.sessions == 3


def test_size_mb_overrides_sessions_for_mixed(tmp_path):
    summary = synth.generate(tmp_path / "m", seed=3, sessions=2, size_mb=8)
    assert summary.bytes >= 8_000_000 and summary.sessions > 12


def test_bench_stops_near_size(tmp_path):
    summary = synth.generate(tmp_path / "b", seed=3, shape="bench", size_mb=4)
    assert 4_000_000 <= summary.bytes < 9_000_000
    assert summary.bytes == sum(p.stat().st_size for p in (tmp_path / "b").rglob("*") if p.is_file())


def test_default_fixture_is_reproducible(tmp_path):
    """fixtures/default = `mixed` at DEFAULT_SEED plus byte copies of a few real transcripts."""
    if not DEFAULT.exists():
        pytest.skip("fixtures/default not built")
    regen = tmp_path / "default"
    synth.generate(regen, seed=DEFAULT_SEED, sessions=DEFAULT_SESSIONS)
    synth.copy_real(REAL, regen)

    def contents(root: Path) -> list:  # git keeps no mtimes, so compare paths and bytes only
        return sorted((str(p.relative_to(root)), hashlib.sha256(p.read_bytes()).hexdigest())
                      for p in root.rglob("*") if p.is_file() and p.name != "README.md")
    assert contents(regen) == contents(DEFAULT)


def _synth(*argv: str) -> int:
    from measure.synth.cli import main

    return main(["--sessions", "1", *argv])


def test_clean_deletes_only_a_root_synth_wrote_and_never_the_analysts_files(tmp_path, capsys):
    """`--clean` on an earlier --out of synth regenerates it; on a folder holding anything else (a real
    ~/.claude/projects, a note left in a generated root) it refuses in one line and deletes nothing."""
    out = tmp_path / "gen"
    assert _synth("--out", str(out)) == 0
    assert _synth("--out", str(out), "--clean", "--seed", "3") == 0  # its own output: replaced
    (out / "notes.txt").write_text("mine")
    mine = tmp_path / "projects" / "-home-me-src-app"
    mine.mkdir(parents=True)
    (mine / "s.jsonl").write_text("{}\n")
    capsys.readouterr()
    for folder in (out, tmp_path / "projects"):
        before = sorted((p.relative_to(tmp_path), p.read_bytes()) for p in tmp_path.rglob("*") if p.is_file())
        assert _synth("--out", str(folder), "--clean") == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
        assert sorted((p.relative_to(tmp_path), p.read_bytes()) for p in tmp_path.rglob("*") if p.is_file()) == before


@pytest.mark.parametrize("option, value", [("--size-mb", "inf"), ("--size-mb", "nan"), ("--size-mb", "0"), ("--sessions", "0"),
                                           ("--sessions", str(2**64))])
def test_a_size_synth_cannot_write_is_refused_when_the_command_line_is_read(tmp_path, capsys, option, value):
    assert _synth("--out", str(tmp_path / "gen"), option, value) == 2
    assert "Invalid value" in capsys.readouterr().err and not (tmp_path / "gen").exists()
