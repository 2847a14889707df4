"""Issue #26, data loss: a --cache-dir that already holds the analyst's own files loses none of them.

Correct: `measure run --cache-dir DIR` on a folder `measure` did not make either refuses it
(exit 2, one line) or leaves every file and folder that was there untouched; only what the
suite itself wrote may be replaced or removed (the promise `--out` already keeps).
"""

from __future__ import annotations

import os
import time

from fuzz import drive
from plant import ordinary_root


def _refused_or_kept(r: drive.Result, before: dict, cache) -> None:
    assert not r.traceback and not r.timed_out, r.stderr[-2000:]
    if r.returncode == 2:
        message = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert len(message) == 1, r.stderr
    else:
        assert r.returncode == 0, r.stderr[-2000:]
    after = drive.snapshot(cache)
    lost = sorted(p for p, v in before.items() if after.get(p) != v)
    assert lost == [], f"deleted or changed in --cache-dir: {lost}"


def test_old_tmp_entries_of_the_analyst_survive(tmp_path):
    """`*.tmp` files and folders older than an hour, at the top and one level down, are not ours to delete."""
    ordinary_root(tmp_path / "root")
    cache = tmp_path / "mine"
    (cache / "drafts").mkdir(parents=True)
    (cache / "thesis.tmp").write_text("chapter 3\n")
    (cache / "drafts" / "letter.tmp").write_text("dear ...\n")
    (cache / "build.tmp").mkdir()
    (cache / "build.tmp" / "object.o").write_bytes(b"\x7fELF")
    for p in (cache / "thesis.tmp", cache / "drafts" / "letter.tmp", cache / "build.tmp"):
        old = time.time() - 7200
        os.utime(p, (old, old))
    before = drive.snapshot(cache)
    r = drive.measure("run", "--root", tmp_path / "root", "--out", tmp_path / "out", "--cache-dir", cache, cwd=tmp_path)
    _refused_or_kept(r, before, cache)


def test_folders_under_runs_of_the_analyst_survive(tmp_path):
    """A `runs/` folder of the analyst's own (ten photo folders) is not the cache's to prune to eight."""
    ordinary_root(tmp_path / "root")
    cache = tmp_path / "mine"
    for i in range(10):
        (cache / "runs" / f"holiday-{i}").mkdir(parents=True)
        (cache / "runs" / f"holiday-{i}" / "beach.jpg").write_bytes(b"\xff\xd8 photo")
        os.utime(cache / "runs" / f"holiday-{i}", (1_600_000_000 + i,) * 2)
    before = drive.snapshot(cache)
    r = drive.measure("run", "--root", tmp_path / "root", "--out", tmp_path / "out", "--cache-dir", cache, cwd=tmp_path)
    _refused_or_kept(r, before, cache)


def test_a_cache_folder_of_its_own_still_serves_re_runs(tmp_path):
    """The other side of the promise (passes today): in a folder it made, the cache is written
    and a re-run from it gives the same tables."""
    ordinary_root(tmp_path / "root")
    cache = tmp_path / "cache"
    for out in ("out1", "out2"):
        r = drive.measure("run", "--root", tmp_path / "root", "--out", tmp_path / out, "--cache-dir", cache, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    assert drive.output_files(tmp_path / "out1") == drive.output_files(tmp_path / "out2")
