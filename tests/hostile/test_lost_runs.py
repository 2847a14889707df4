"""Issue #26, whole runs lost (exit 1, a traceback, no output) to one odd value in one file.

Correct: the run completes and writes every table; the session holding the odd value is
measured, and the value is visible in `errors` or `quirks` (a count past 64 bits is clamped or
stored wide, and the clamp is counted; how is the fix's choice, so only that is asserted). A
hostile option value is refused at parse time: exit 2, one error line (argparse's usage lines
before it allowed), no traceback.
"""

from __future__ import annotations

import os

import pytest

from fuzz import checks, drive
from plant import answer, prompt, write

SESSION = "-home-me-app/s1.jsonl"


def _measured_and_visible(tmp_path, lines, cache: bool = False) -> None:
    write(tmp_path / "root" / SESSION, lines)
    run = drive.run_in_process(tmp_path / "root", tmp_path / "out", cache_dir=tmp_path / "cache" if cache else None)
    assert not run.lost, run.trace
    assert SESSION in {r["session_path"] for r in drive.table_rows(tmp_path / "out", "sessions")}
    noted = [e for e in run.errors if e["session_path"] == SESSION] + \
            [q for q in drive.table_rows(tmp_path / "out", "quirks") if q["session_path"] == SESSION]
    assert noted, "the odd count is not visible in errors or quirks"


def test_a_token_count_of_2_to_the_63(tmp_path):
    _measured_and_visible(tmp_path, [prompt(1), answer(2, usage={"input_tokens": 2**63, "output_tokens": 1})])


def test_token_counts_that_fit_64_bits_but_sum_past_them(tmp_path):
    calls = [answer(2 + i, usage={"input_tokens": 2**62, "output_tokens": 1}, msg_id=f"m{i}") for i in range(3)]
    _measured_and_visible(tmp_path, [prompt(1), *calls])


def test_a_token_count_of_2_to_the_64_with_the_cache(tmp_path):
    """In this shape the run survives today, but the tokens table silently shows 0 input tokens
    (2^64 is past what the reader's integers hold): the odd value must be visible."""
    _measured_and_visible(tmp_path, [prompt(1), answer(2, usage={"input_tokens": 2**64, "output_tokens": 1})], cache=True)


def test_a_file_name_that_is_not_utf8_with_the_cache(tmp_path):
    """The cache (on by default) must hold any path the input can carry; the session is
    measured, shown with its `\\xNN` escapes."""
    write(tmp_path / "root" / "-home-me-app" / "s1.jsonl", [prompt(1), answer(2)])
    write(os.fsencode(tmp_path / "root" / "-home-me-app") + b"/s\xff\xfe.jsonl", [prompt(1), answer(2)])
    r = drive.measure("run", "--root", tmp_path / "root", "--out", tmp_path / "out", "--cache-dir", tmp_path / "cache", cwd=tmp_path)
    assert r.returncode == 0 and not r.traceback, r.stderr[-2000:]
    assert "-home-me-app/s\\xff\\xfe.jsonl" in {row["session_path"] for row in drive.table_rows(tmp_path / "out", "sessions")}


def test_a_lone_surrogate_in_a_transcript_with_the_cache(tmp_path):
    """Not in #26's list: a lone surrogate (a `\\ud800` escape JSON.parse accepts) in a value the
    tables keep, here a tool_use id, loses the whole run once the cache encodes the rows
    (orjson refuses surrogates). Correct: the run completes and the session is measured."""
    from fuzz.jsontext import Raw
    from plant import launch_ack, tool_use

    write(tmp_path / "root" / SESSION, [prompt(1), tool_use(Raw('"toolu_\\ud800"')), launch_ack(Raw('"toolu_\\ud800"'), "a1")])
    run = drive.run_in_process(tmp_path / "root", tmp_path / "out", cache_dir=tmp_path / "cache")
    assert not run.lost, run.trace
    assert SESSION in {r["session_path"] for r in drive.table_rows(tmp_path / "out", "sessions")}


@pytest.mark.parametrize(("option", "value", "cache"), [
    ("--budgets", 2**63, "--no-cache"), ("--max-total-chars", 2**63, "--no-cache"), ("--session-cap", 2**63, "--no-cache"),
    # found by the fuzzer beyond #26's list: past 64 bits the cache key itself cannot be written
    ("--max-total-chars", 2**64, "--cache-dir=cache"),
])
def test_an_option_of_2_to_the_63_is_refused_at_parse_time(tmp_path, option, value, cache):
    write(tmp_path / "root" / SESSION, [prompt(1), answer(2)])
    r = drive.measure("run", "--root", tmp_path / "root", "--out", tmp_path / "out", cache, option, str(value), cwd=tmp_path)
    assert r.returncode == 2 and not r.traceback, r.stderr[-2000:]
    message = [ln for ln in r.stderr.splitlines() if ln.strip() and not checks.usage_line(ln)]
    assert len(message) == 1, r.stderr
    assert not (tmp_path / "out").exists()
