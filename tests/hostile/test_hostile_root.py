"""Issue #17: the whole suite on a hostile sessions root never hangs, crashes, writes into the
root, or leaks a planted name under --redact.

The root is built at test time (hostile_root.py). Each run is a subprocess with a timeout: a
hang guard, not a speed assertion.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import hostile_root  # noqa: E402

HANG_GUARD_S = 300


def measure(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_CACHE_HOME": str(cwd / "xdg-cache")}
    return subprocess.run(
        [sys.executable, "-m", "measure", *args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=HANG_GUARD_S,
    )


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    planted = hostile_root.build(base)
    try:
        before = hostile_root.snapshot(planted.root)
        out, red, cache = base / "out", base / "redacted", base / "cache"
        root = str(planted.root)
        plain = measure("run", "--root", root, "--out", str(out), "--no-cache", "--show-excerpts", "--jobs", "2", cwd=base)
        cold = measure("run", "--root", root, "--out", str(red), "--redact", "--cache-dir", str(cache), "--jobs", "2", cwd=base)
        warm = measure("run", "--root", root, "--out", str(red), "--redact", "--cache-dir", str(cache), "--jobs", "1", cwd=base)
        after = hostile_root.snapshot(planted.root)
        yield planted, (plain, cold, warm), out, red, cache, before, after
    finally:  # the 1,200-deep folders must go bottom-up: pytest's rmtree recurses
        planted.close()


def test_every_run_completes(hostile):
    _, runs, *_ = hostile
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
        assert "Traceback" not in r.stderr


def test_good_sessions_are_measured(hostile):
    planted, _, out, *_ = hostile
    measured = set(pl.read_parquet(out / "sessions.parquet")["session_path"])
    errors = pl.read_parquet(out / "errors.parquet")
    assert "internal_error" not in errors["kind"].to_list()
    for path in planted.measured:
        shown = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        assert shown in measured, shown


def test_every_planted_input_has_an_errors_row(hostile):
    planted, _, out, *_ = hostile
    paths = set(pl.read_parquet(out / "errors.parquet")["path"])
    missing = [p for p in planted.errors if p not in paths]
    assert missing == []


def test_special_files_are_named_for_what_they_are(hostile):
    _, _, out, *_ = hostile
    errors = pl.read_parquet(out / "errors.parquet")
    reasons = " ".join(errors.filter(pl.col("kind") == "not_a_file")["reason"])
    assert "a FIFO" in reasons and "a character device" in reasons
    assert errors.filter(pl.col("kind") == "outside_link").height >= 3


def test_deep_json_mid_file_is_read_as_json_parse_reads_it(hostile):
    _, _, out, *_ = hostile
    s = pl.read_parquet(out / "sessions.parquet").filter(pl.col("strategy") == "link")
    by_path = dict(zip(s["session_path"], s["kept_events"]))
    # the three ordinary lines give two events; the 5,000-deep record is the third
    assert by_path[f"-home-{hostile_root.CANARY}two/{hostile_root.CANARY}middeep.jsonl"] == 3


def test_tool_input_nested_deeper_than_the_recursion_limit_is_rendered_as_json_stringify_renders_it(hostile):
    _, _, out, *_ = hostile
    s = pl.read_parquet(out / "sessions.parquet").filter(pl.col("strategy") == "link")
    by_path = dict(zip(s["session_path"], s["kept_events"]))
    for depth in hostile_root.DEEP_TOOL_INPUTS:
        # the prompt and the answer, then the tool call whose input is nested `depth` deep
        assert by_path[f"-home-{hostile_root.CANARY}two/{hostile_root.CANARY}tooldeep{depth}.jsonl"] == 3


def test_lone_surrogates_become_replacement_characters(hostile):
    _, _, out, *_ = hostile
    sub = pl.read_parquet(out / "subagents.parquet")
    assert f"{hostile_root.CANARY}desc\ufffd" in sub["description"].to_list()
    assert f"{hostile_root.CANARY}type\ufffd" in sub["agent_type"].to_list()


def test_no_text_from_outside_the_root_is_copied(hostile):
    _, _, out, *_ = hostile
    for p in out.iterdir():
        data = p.read_bytes()
        for leak in (b"outtype", b"outdesc", b"toolu_CANARYout", b"answeroutside", b"titleoutside"):
            assert leak not in data, (p.name, leak)


def test_the_root_is_unchanged(hostile):
    *_, before, after = hostile
    assert before == after


def test_no_canary_reaches_any_output_under_redact(hostile):
    _, _, _, red, cache, *_ = hostile
    files = [p for d in (red, cache) for p in d.rglob("*") if p.is_file()]
    assert any(p.suffix == ".csv" for p in files) and any(cache in p.parents for p in files)  # the cache was written: scan it too
    leaks = [str(p) for p in files if hostile_root.CANARY.lower().encode() in p.read_bytes().lower()]
    assert leaks == []
    assert not any(hostile_root.CANARY.lower() in str(p).lower() for p in files)


def test_csv_cells_a_spreadsheet_would_run_are_quoted(hostile):
    _, _, out, *_ = hostile
    text = (out / "sessions.csv").read_text(encoding="utf-8")
    assert ",'=HYPERLINK" in text or "\"'=HYPERLINK" in text
    assert ",=HYPERLINK" not in text and "\"=HYPERLINK" not in text


def test_inspect_does_not_hang_on_a_fifo(hostile):
    planted, *_ = hostile
    fifo = planted.root / f"-home-{hostile_root.CANARY}two" / f"{hostile_root.CANARY}fifo.jsonl"
    r = measure("inspect", str(fifo), cwd=planted.root.parent)
    assert r.returncode != 0 and "Traceback" not in r.stderr
