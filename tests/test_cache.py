"""The incremental cache: safe entries, misses on damage, no stale results, no leftovers."""

from __future__ import annotations

import errno
import logging
import os
import shutil
import time
import zipfile
from pathlib import Path

import orjson
import pytest

from measure.runner import cache as cache_mod
from measure.runner import inputs as inputs_mod
from measure.runner.cache import ENTRY_HEADER, Cache, decode, encode, store_entry
from measure.runner.job import RunParams, SessionOutcome
from measure.runner.run import run_measurement
from measure.schema import TABLES

PARITY = Path(__file__).parent / "parity"
TEMPLATE = str(PARITY / "template.md")
PARAMS = RunParams(template_path=TEMPLATE)


def _csvs(out: Path) -> dict[str, bytes]:
    return {name: (out / f"{name}.csv").read_bytes() for name in TABLES}


def _entries(cache_dir: Path) -> list[Path]:
    """Per-session entries (the whole-run copies under runs/ aside)."""
    return sorted(p for p in cache_dir.glob("*/*.json") if p.parent.name != "runs")


def _forget_runs(cache_dir: Path) -> None:
    shutil.rmtree(cache_dir / "runs", ignore_errors=True)


@pytest.fixture(scope="module")
def measured(parity_root, tmp_path_factory) -> tuple[Path, Path, Path]:
    """A root measured once: the root, that run's tables and the cache it filled (copy it before changing it)."""
    base = tmp_path_factory.mktemp("measured")
    shutil.copytree(parity_root / "projects", base / "root")
    run_measurement(base / "root", base / "out", PARAMS, jobs=1, cache_dir=base / "cache")
    return base / "root", base / "out", base / "cache"


@pytest.fixture
def root(parity_root, tmp_path) -> Path:
    r = tmp_path / "root"
    shutil.copytree(parity_root / "projects", r)
    return r


def test_a_cache_folder_an_earlier_version_filled_is_still_its_own(root, tmp_path):
    """Version 2 kept each run as a folder of tables (`runs/<key>/`): the default cache folder of an
    analyst who ran it must not be refused after an upgrade, and those folders are left as they are."""
    old = tmp_path / "cache" / "runs" / ("ab" * 32)
    old.mkdir(parents=True)
    for name in ("sessions.csv", "sessions.parquet", "run.json", "run-entry.json"):
        (old / name).write_bytes(b"v2")
    (tmp_path / "cache" / "runs" / f"{'cd' * 32}.123.tmp").mkdir()
    cache_mod.check_cache_dir(tmp_path / "cache", root)
    run_measurement(root, tmp_path / "out", RunParams(), jobs=1, cache_dir=tmp_path / "cache")
    assert sorted(p.name for p in old.iterdir()) == ["run-entry.json", "run.json", "sessions.csv", "sessions.parquet"]
    (old / "holiday.jpg").write_bytes(b"photo")  # not a name version 2 wrote
    with pytest.raises(cache_mod.OutputError, match="holiday.jpg"):
        cache_mod.check_cache_dir(tmp_path / "cache", root)


def test_entries_are_json_behind_a_version_header(root, tmp_path):
    run_measurement(root, tmp_path / "out", PARAMS, jobs=1, cache_dir=tmp_path / "cache")
    entries = _entries(tmp_path / "cache")
    assert entries
    for e in entries:
        data = e.read_bytes()
        assert data.startswith(ENTRY_HEADER)
        assert isinstance(orjson.loads(data[len(ENTRY_HEADER) :]), dict)
    assert "pickle" not in Path(cache_mod.__file__).read_text()


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[:-7] + b"\xff" + b[-6:],  # a bad byte
        lambda b: b[: len(b) // 2],  # truncated
        lambda b: b"",  # empty
        lambda b: b"\x80\x04\x95garbage",  # a pickle, say
        lambda b: ENTRY_HEADER + b'{"session_path": 3, "tables": {}, "errors": []}',
        lambda b: ENTRY_HEADER + b'{"session_path": "x", "tables": {"sessions": {"llm_calls": ["many"]}}, "errors": []}',
        lambda b: ENTRY_HEADER + b'{"session_path": "x", "tables": {"nope": {}}, "errors": []}',
        lambda b: ENTRY_HEADER + b'{"session_path": "x", "tables": {"sessions": {"nope": [1]}}, "errors": []}',
        lambda b: ENTRY_HEADER + b'{"session_path": "x", "tables": {"sessions": {"llm_calls": [1, 2], "strategy": ["a"]}}, "errors": []}',
        lambda b: ENTRY_HEADER + b'{"session_path": "x", "tables": {}, "errors": [{"count": "one"}]}',
        lambda b: ENTRY_HEADER + b'{"session_path": "x", "tables": {"sessions": {"session_path": ["a", "b"]}}, "errors": []}',
        lambda b: ENTRY_HEADER + b"[1, 2]",
    ],
    ids=["bad_byte", "truncated", "empty", "pickle", "wrong_type_path", "wrong_type_cell", "unknown_table", "unknown_column",
         "ragged_columns", "wrong_type_error", "two_sessions", "not_object"],
)
def test_a_damaged_entry_is_a_logged_miss_and_is_replaced(measured, tmp_path, caplog, damage):
    root, first, filled = measured
    cache = tmp_path / "cache"
    shutil.copytree(filled, cache)
    entries = _entries(cache)
    good = {e: e.read_bytes() for e in entries}
    for e in entries:
        e.write_bytes(damage(good[e]))
    _forget_runs(cache)  # else the whole-run copy answers before any session entry is read
    with caplog.at_level(logging.WARNING, logger="measure.runner.cache"):
        summary = run_measurement(root, tmp_path / "b", PARAMS, jobs=1, cache_dir=cache)
    assert summary.cached == 0
    assert _csvs(first) == _csvs(tmp_path / "b")
    assert sum("cache entry" in r.getMessage() for r in caplog.records) == len(entries)
    for e in entries:  # replaced by a good entry
        assert e.read_bytes() == good[e]
    _forget_runs(cache)
    assert run_measurement(root, tmp_path / "c", PARAMS, jobs=1, cache_dir=cache).cached == summary.sessions
    assert _csvs(first) == _csvs(tmp_path / "c")


def test_an_unchanged_run_is_copied_whole_and_a_damaged_copy_is_a_miss(root, tmp_path, caplog):
    cache = tmp_path / "cache"
    run_measurement(root, tmp_path / "a", PARAMS, jobs=1, cache_dir=cache)
    (run_zip,) = (cache / "runs").iterdir()
    warm = run_measurement(root, tmp_path / "b", PARAMS, jobs=1, cache_dir=cache)
    assert warm.cached == warm.sessions
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == sorted(p.name for p in (tmp_path / "b").iterdir())
    for p in (tmp_path / "a").iterdir():
        assert p.read_bytes() == (tmp_path / "b" / p.name).read_bytes(), p.name
    csv = (tmp_path / "a" / "sessions.csv").read_bytes()
    stored = run_zip.read_bytes()
    assert stored.count(csv) == 1  # stored as it is
    run_zip.write_bytes(stored.replace(csv, csv[:-3] + b"999"))
    with caplog.at_level(logging.WARNING, logger="measure.runner.cache"):
        again = run_measurement(root, tmp_path / "c", PARAMS, jobs=1, cache_dir=cache)
    assert any("does not match" in r.getMessage() for r in caplog.records)
    assert again.cached == again.sessions  # from the session entries
    assert _csvs(tmp_path / "a") == _csvs(tmp_path / "c")
    with zipfile.ZipFile(run_zip) as z:
        assert z.read("sessions.csv") == csv  # replaced


def test_encode_refuses_values_json_would_change():
    o = SessionOutcome("s.jsonl", {"sessions": {"budget": [float("nan")]}}, [])
    assert encode(o) is None
    assert encode(SessionOutcome("s.jsonl", {}, [{"count": float("inf")}])) is None
    assert encode(SessionOutcome("s.jsonl", {"sessions": {"budget": [object()]}}, [])) is None
    o = SessionOutcome("s.jsonl", {"sessions": {"budget": [1]}, "eviction": {"evicted_chars_pct": [1.5]}}, [])
    assert decode(encode(o)) == o


def _empty_session_root(tmp_path: Path) -> Path:
    """One session without events: akm dates it with the parent's ctime."""
    r = tmp_path / "ctime-root"
    (r / "-home-dev-empty").mkdir(parents=True)
    (r / "-home-dev-empty" / "0f0e0d0c-0000-4000-8000-000000000001.jsonl").write_text('{"type":"summary","summary":"x"}\n')
    (r / "-home-dev-other").mkdir()
    shutil.copy(PARITY / "inputs" / "projects" / "-home-dev-basic0" / "cd613e30-d8f1-4adf-91b7-584a2265b1f5.jsonl",
                r / "-home-dev-other")
    return r


def test_a_ctime_only_change_is_not_served_from_the_cache(tmp_path):
    r = _empty_session_root(tmp_path)
    cache = tmp_path / "cache"
    params = RunParams(template_path=TEMPLATE)
    run_measurement(r, tmp_path / "a", params, jobs=1, cache_dir=cache)
    empty = next(r.glob("-home-dev-empty/*.jsonl"))
    before = os.stat(empty).st_ctime_ns
    deadline = time.time() + 5
    while os.stat(empty).st_ctime_ns == before and time.time() < deadline:
        time.sleep(0.01)
        os.chmod(empty, 0o600 if os.stat(empty).st_mode & 0o077 else 0o644)  # chmod: only ctime moves
    assert os.stat(empty).st_ctime_ns != before
    warm = run_measurement(r, tmp_path / "b", params, jobs=1, cache_dir=cache)
    fresh = tmp_path / "fresh"
    run_measurement(r, fresh, params, jobs=1, cache_dir=None)
    assert warm.cached == 1  # the other session only
    assert _csvs(tmp_path / "b") == _csvs(fresh)
    # akm dates a session without events by its ctime; since the minContentChars gate (#10) skips
    # such a session before any prompt is built, the ctime no longer reaches a table, so the
    # re-measurement above (cached == 1) is what this test can observe.


def test_leftover_tmp_files_are_removed(root, tmp_path):
    cache = tmp_path / "cache"
    run_measurement(root, tmp_path / "a", PARAMS, jobs=1, cache_dir=cache)
    sub = next(p for p in cache.iterdir() if p.is_dir() and p.name != "runs")
    dead = sub / f"{'a' * 64}.json.999999999.tmp"  # a writer that is gone
    old = sub / f"{'b' * 64}.json.1.tmp"  # its pid lives (init), but an hour old
    mine = sub / f"{'c' * 64}.json.{os.getpid()}.tmp"  # a live writer: kept
    for p in (dead, old, mine):
        p.write_bytes(b"partial")
    os.utime(old, (time.time() - 2 * 3600,) * 2)
    run_measurement(root, tmp_path / "b", PARAMS, jobs=1, cache_dir=cache)
    assert not dead.exists() and not old.exists() and mine.exists()


def test_a_full_disk_leaves_no_tmp_and_a_complete_run(root, tmp_path, monkeypatch, caplog):
    real_open = open

    class Full:
        def __init__(self, path, mode):
            self.f = real_open(path, mode)

        def write(self, data):
            self.f.write(data[:10])
            raise OSError(errno.ENOSPC, "No space left on device")

        def __getattr__(self, name):  # tell, seek, flush: the file's own
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    cache = tmp_path / "cache"
    # Where the cache writes its files (the staging marker, written by the same helper, is not the cache's).
    monkeypatch.setattr(inputs_mod, "open", lambda path, mode: (Full if Path(path).is_relative_to(cache) else real_open)(path, mode),
                        raising=False)
    monkeypatch.setattr(Path, "write_bytes", lambda self, data: (_ for _ in ()).throw(OSError(errno.ENOSPC, "full")))
    with caplog.at_level(logging.WARNING, logger="measure.runner.cache"):
        run_measurement(root, tmp_path / "a", PARAMS, jobs=1, cache_dir=cache)
    assert not list(cache.rglob("*.tmp"))
    assert not _entries(cache) and not list(cache.glob("runs/*"))
    assert any("full" in r.getMessage() for r in caplog.records)
    monkeypatch.undo()
    run_measurement(root, tmp_path / "b", PARAMS, jobs=1, cache_dir=None)
    assert _csvs(tmp_path / "a") == _csvs(tmp_path / "b")


def test_store_and_load_round_trip(tmp_path):
    c = Cache(tmp_path)
    o = SessionOutcome("p/s.jsonl", {}, [{"path": "p", "session_path": None, "kind": "empty", "count": 1, "reason": "r"}])
    assert store_entry(c.entry("ab" * 32), o)
    assert c.load("ab" * 32) == o
    assert c.load("cd" * 32) is None


def test_redact_keeps_no_input_name_in_the_cache(root, tmp_path):
    cache = tmp_path / "cache"
    params = RunParams(template_path=TEMPLATE, redact=True)
    run_measurement(root, tmp_path / "a", params, jobs=1, cache_dir=cache)
    warm = run_measurement(root, tmp_path / "b", params, jobs=1, cache_dir=cache)
    assert warm.cached == warm.sessions  # the whole run is reused
    assert _csvs(tmp_path / "a") == _csvs(tmp_path / "b")
    names = {p.name for p in root.rglob("*")} | {p.stem for p in root.rglob("*.jsonl")}
    names = {n for n in names if len(n) >= 8 and n != "subagents"}
    # The cache adds nothing to what the redacted tables show (what they show is redact.py's
    # business): no stat index of paths, no rows from before redaction.
    shown = "".join(p.read_bytes().decode("utf-8", "replace") for p in (tmp_path / "a").iterdir())
    leaked = {n for n in names if n not in shown}
    assert not (cache / "stat-index.json").exists()
    assert not _entries(cache)
    for f in cache.rglob("*"):
        assert not [n for n in leaked if n in f.name], f
        if f.is_file():
            text = f.read_bytes().decode("utf-8", "replace")
            assert not [n for n in leaked if n in text], f


def test_a_copied_root_with_kept_mtimes_is_measured_again(tmp_path):
    a = _empty_session_root(tmp_path)
    cache = tmp_path / "cache"
    params = RunParams(template_path=TEMPLATE)
    run_measurement(a, tmp_path / "oa", params, jobs=1, cache_dir=cache)
    time.sleep(0.02)
    b = tmp_path / "copy"
    shutil.copytree(a, b)  # copy2: the same mtimes, new ctimes
    moved = tmp_path / "moved"
    a.rename(moved)
    b.rename(a)  # the same paths, sizes and mtimes; only ctimes (and inodes) differ
    warm = run_measurement(a, tmp_path / "ob", params, jobs=1, cache_dir=cache)
    fresh = run_measurement(a, tmp_path / "oc", params, jobs=1, cache_dir=None)
    assert warm.cached == 0 and warm.files_hashed == fresh.files_hashed
    assert _csvs(tmp_path / "ob") == _csvs(tmp_path / "oc")


def test_columns_come_back_as_they_went(tmp_path):
    """Entries store a session's tables as columns: names once per table, in their order."""
    c = Cache(tmp_path)
    table = {"session_path": ["p/s.jsonl"] * 3, "strategy": ["fold", "link", "hybrid"], "llm_calls": [None, 2, 1]}
    o = SessionOutcome("p/s.jsonl", {"sessions": table}, [])
    assert store_entry(c.entry("ab" * 32), o)
    loaded = c.load("ab" * 32)
    assert loaded == o and list(loaded.tables["sessions"]) == list(table)  # column order too
