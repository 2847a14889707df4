"""The stat index: unchanged files are not read again; a touched file re-measures only its session."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from measure.runner.inputs import INDEX_NAME, StatIndex, session_files
from measure.runner.job import RunParams
from measure.runner.run import run_measurement
from measure.schema import TABLES

PARITY = Path(__file__).parent / "parity"
TEMPLATE = str(PARITY / "template.md")
PARAMS = RunParams(template_path=TEMPLATE)
OLD_NS = 1_700_000_000 * 10**9  # long before any run: not racy


def _root(parity_root, tmp_path) -> Path:
    r = tmp_path / "root"
    shutil.copytree(parity_root / "projects", r)
    for p in r.rglob("*"):
        if p.is_file():
            os.utime(p, ns=(OLD_NS, OLD_NS))
    time.sleep(0.1)  # ctimes just moved: let them leave the racy window
    return r


def test_an_unchanged_root_reads_no_file_and_measures_no_session(parity_root, tmp_path):
    r = _root(parity_root, tmp_path)
    cache = tmp_path / "cache"
    cold = run_measurement(r, tmp_path / "a", PARAMS, jobs=1, cache_dir=cache)
    assert cold.cached == 0 and cold.files_unchanged == 0 and cold.files_hashed > 0
    warm = run_measurement(r, tmp_path / "b", PARAMS, jobs=1, cache_dir=cache)
    assert warm.cached == warm.sessions and warm.files_hashed == 0 and warm.files_unchanged == cold.files_hashed
    for name in TABLES:
        assert (tmp_path / "a" / f"{name}.csv").read_bytes() == (tmp_path / "b" / f"{name}.csv").read_bytes()
    assert (tmp_path / "a" / "run.json").read_bytes() == (tmp_path / "b" / "run.json").read_bytes()


def test_a_touched_file_re_measures_only_its_session(parity_root, tmp_path):
    r = _root(parity_root, tmp_path)
    cache = tmp_path / "cache"
    first = run_measurement(r, tmp_path / "a", PARAMS, jobs=1, cache_dir=cache)
    sub = next(r.glob("-home-dev-fold-small/*/subagents/*.jsonl"))
    os.utime(sub, ns=(OLD_NS + 10**9, OLD_NS + 10**9))
    time.sleep(0.1)
    again = run_measurement(r, tmp_path / "b", PARAMS, jobs=1, cache_dir=cache)
    assert again.cached == first.sessions - 1
    assert again.files_hashed == 1


def test_run_json_says_how_the_fingerprint_was_taken(parity_root, tmp_path):
    r = _root(parity_root, tmp_path)
    run_measurement(r, tmp_path / "a", PARAMS, jobs=1, cache_dir=None)
    doc = json.loads((tmp_path / "a" / "run.json").read_text())
    assert "git's index" in doc["input"]["fingerprint_method"]
    assert len(doc["input"]["fingerprint"]) == 64


def test_fingerprint_ignores_times_but_not_content(parity_root, tmp_path):
    a = _root(parity_root, tmp_path / "x")
    b = tmp_path / "copy"
    shutil.copytree(a, b, copy_function=shutil.copy)  # new mtimes and inodes
    run_measurement(a, tmp_path / "oa", PARAMS, jobs=1, cache_dir=None)
    run_measurement(b, tmp_path / "ob", PARAMS, jobs=1, cache_dir=None)
    fa = json.loads((tmp_path / "oa" / "run.json").read_text())["input"]["fingerprint"]
    fb = json.loads((tmp_path / "ob" / "run.json").read_text())["input"]["fingerprint"]
    assert fa == fb
    with open(next(b.glob("*/*.jsonl")), "ab") as f:
        f.write(b"\n")
    run_measurement(b, tmp_path / "oc", PARAMS, jobs=1, cache_dir=None)
    assert json.loads((tmp_path / "oc" / "run.json").read_text())["input"]["fingerprint"] != fa


def test_index_rehashes_racy_and_changed_entries(tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_text("{}\n")
    idx = StatIndex(tmp_path / "cache", os.fspath(tmp_path))
    idx.state(os.fspath(f))
    idx.save()
    again = StatIndex(tmp_path / "cache", os.fspath(tmp_path))
    again.state(os.fspath(f))
    assert again.hashed == 1  # just written: racy, so not trusted
    os.utime(f, ns=(OLD_NS, OLD_NS))
    time.sleep(0.1)
    for _ in range(2):
        idx = StatIndex(tmp_path / "cache", os.fspath(tmp_path))
        idx.state(os.fspath(f))
        idx.save()
    assert idx.hashed == 0 and idx.reused == 1
    (tmp_path / "cache" / INDEX_NAME).write_bytes(b"garbage")
    broken = StatIndex(tmp_path / "cache", os.fspath(tmp_path))
    broken.state(os.fspath(f))
    assert broken.hashed == 1


def test_session_files_lists_the_parent_then_its_subagents(parity_root):
    parent = next((parity_root / "projects" / "-home-dev-fold-small").glob("*.jsonl"))
    files = session_files(os.fspath(parent), os.fspath(parity_root / "projects"))
    assert files[0] == os.fspath(parent) and len(files) > 1
    assert all("/subagents/" in p for p in files[1:])


def _remove_deep(top: str, deepest: str) -> None:
    for name in os.listdir(deepest):
        os.unlink(os.path.join(deepest, name))
    d = deepest
    while d != top:
        os.rmdir(d)
        d = os.path.dirname(d)


@pytest.mark.slow
def test_session_files_walks_deep_folders_in_os_walk_order(tmp_path):
    parent = tmp_path / "p" / "s.jsonl"
    parent.parent.mkdir()
    parent.write_text("{}\n")
    sub = tmp_path / "p" / "s" / "subagents"
    sub.mkdir(parents=True)
    deep = os.fspath(sub)
    for _ in range(1200):  # deeper than the recursion limit
        deep = os.path.join(deep, "d")
        os.mkdir(deep)
    with open(os.path.join(deep, "agent-deep.jsonl"), "w") as f:
        f.write("{}\n")
    for name in ("b", "a"):
        (sub / name).mkdir()
        (sub / name / "agent-x.jsonl").write_text("{}\n")
    (sub / "agent-top.jsonl").write_text("{}\n")
    try:
        files = session_files(os.fspath(parent), os.fspath(tmp_path))
    finally:
        _remove_deep(os.fspath(sub), deep)  # shutil.rmtree (pytest's clean-up) recurses per level
    rel = [os.path.relpath(f, sub) for f in files[1:]]
    assert files[0] == os.fspath(parent)
    # os.walk's top-down order: a folder's files, then its sorted subfolders in turn
    assert rel[:3] == ["agent-top.jsonl", "a/agent-x.jsonl", "b/agent-x.jsonl"]
    assert len(rel) == 4 and rel[3].endswith("/d/agent-deep.jsonl") and rel[3].count("/") == 1200


def test_a_fifo_is_never_opened(tmp_path):
    fifo = tmp_path / "agent-fifo.jsonl"
    os.mkfifo(fifo)
    idx = StatIndex(None, os.fspath(tmp_path))
    state = idx.state(os.fspath(fifo))  # would block forever if opened
    assert state.digest.startswith("not-a-file:")
