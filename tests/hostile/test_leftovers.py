"""Issue #26, leftovers that block later runs: a re-run always recovers and cleans up after us.

Correct: a run whose cache folder lies inside its own `--out` is either refused before any work
(exit 2, one line) or completes; either way no `.measure-staging-*` folder is left and later
runs into `--out` work. After a kill between the two renames of the output commit (`--out`
moved aside to `.measure-retired-*/old`, the staged folder not yet renamed in), the next run
restores or finishes the interrupted commit, writes its output, and leaves no staging or
retired folder behind.
"""

from __future__ import annotations

import os
import shutil

import pytest

from fuzz import drive
from plant import ordinary_root


def _ours(folder) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.startswith((".measure-staging-", ".measure-retired-")))


def test_a_cache_dir_inside_out_leaves_nothing_behind(tmp_path):
    ordinary_root(tmp_path / "root")
    out = tmp_path / "out"
    r = drive.measure("run", "--root", tmp_path / "root", "--out", out, "--cache-dir", out / "c", cwd=tmp_path)
    assert not r.traceback and r.returncode in (0, 2), r.stderr[-1500:]
    if r.returncode == 2:
        assert len([ln for ln in r.stderr.splitlines() if ln.strip()]) == 1, r.stderr
    assert _ours(tmp_path) == []
    later = drive.measure("run", "--root", tmp_path / "root", "--out", out, "--no-cache", cwd=tmp_path)
    assert later.returncode == 0, later.stderr[-1500:]


@pytest.mark.slow  # a run killed mid-way, in a subprocess: seconds
def test_a_kill_between_the_two_renames_of_the_commit_is_recovered(tmp_path):
    ordinary_root(tmp_path / "root")
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    for folder, budget in ((out, "20000"), (fresh, "10000")):
        r = drive.measure("run", "--root", tmp_path / "root", "--out", folder, "--no-cache", "--budgets", budget, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    # What the commit leaves when killed between its renames: the staged folder complete (its
    # manifest written, its marker already removed), --out renamed into a retired folder.
    staged = tmp_path / ".measure-staging-out-k1ll3d"
    shutil.copytree(fresh, staged)
    retired = tmp_path / ".measure-retired-out-k1ll3d"
    retired.mkdir()
    os.rename(out, retired / "old")
    r = drive.measure("run", "--root", tmp_path / "root", "--out", out, "--no-cache", "--budgets", "10000", cwd=tmp_path)
    assert r.returncode == 0 and not r.traceback, r.stderr[-1500:]
    assert drive.output_files(out) == drive.output_files(fresh)
    assert _ours(tmp_path) == [], "an interrupted commit's folders are still there"
