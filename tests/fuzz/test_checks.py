"""The fuzzer's own oracle: each shared check fails on the failure it names and passes otherwise."""

from __future__ import annotations

import os

from . import checks, drive, interruptions, jsontext, known, mutations
from .violations import normalize, stderr_tail


def _result(code, stderr="", outlived=()):
    return drive.Result(("python", "-m", "measure", "run"), code, "", stderr, 0.1, "/tmp", outlived)


def test_completed_names_each_way_a_command_can_fail():
    assert checks.completed("p", _result(0)) == []
    assert "hang" in checks.completed("p", _result(None))[0].what
    assert checks.completed("p", _result(1, "Traceback (most recent call last):\nValueError: x 12"))[0].what == "exit 1 (ValueError: x N)"
    assert "outlives" in checks.completed("p", _result(0, outlived=("python -m measure run",)))[0].what


def test_a_refusal_is_one_line_after_the_usage_text():
    usage = "usage: measure run [-h] --out OUT\n                   [--root ROOT]\n"
    assert checks.refused_or_completed("p", _result(2, usage + "measure run: error: argument --jobs: bad\n")) == []
    click_usage = "Usage: measure run [OPTIONS]\nTry 'measure run --help' for help.\n\n"
    assert checks.refused_or_completed("p", _result(2, click_usage + "Error: Invalid value for '--jobs': bad\n")) == []
    assert checks.refused_or_completed("p", _result(2, "one\ntwo\n"))[0].what == "exit 2 with 2 error line(s)"
    assert checks.refused_or_completed("p", _result(1, "Traceback (most recent call last):\nKeyError: 'x'"))


def test_snapshots_see_a_file_vanish_change_or_appear(tmp_path):
    (tmp_path / "a").write_text("1")
    (tmp_path / "d").mkdir()
    before = drive.snapshot(tmp_path)
    assert drive.snapshot_diff(before, drive.snapshot(tmp_path)) == []
    (tmp_path / "a").write_text("2")
    os.chmod(tmp_path / "d", 0o700)
    (tmp_path / "b").write_text("new")
    diff = drive.snapshot_diff(before, drive.snapshot(tmp_path))
    assert any(d.startswith("changed") and d.endswith("/a") for d in diff) and any(d.startswith("appeared") for d in diff)
    os.unlink(tmp_path / "a")
    assert any(d.startswith("vanished") for d in drive.snapshot_diff(before, drive.snapshot(tmp_path)))


def test_canaries_are_found_whatever_their_case_and_named_by_row_kind():
    places = {"/o/errors.csv": b"path,session_path,kind,count,reason\n'-home-canaryN/s,x,internal_error,1,r\n",
              "/o/errors.parquet": b"canaryn", "stderr of run": b"under CanaryNroot/"}
    whats = sorted(v.what for v in checks.canaries("redact", ("CANARYn",), places, ""))
    assert whats == ["CANARYn in errors (internal_error row)", "CANARYn in stderr of run"]
    assert checks.canaries("redact", ("CANARYn",), {"/o/sessions.csv": b"sha256:0123456789ab"}, "") == []


def test_signatures_mask_what_varies():
    assert normalize("OverflowError: at /tmp/x/y.jsonl line 12") == "OverflowError: at <path> line N"
    assert stderr_tail("Traceback...\n  File x\nTypeError: boom\nException ignored in: <gen>\nTraceback\nKeyError: 1") == "TypeError: boom"


def test_known_failures_are_tolerated_only_when_they_match(monkeypatch):
    entry = known.Known(r"^trees: a file in --cache-dir that measure did not write", "tests/hostile/x.py::test_y")
    monkeypatch.setattr(known, "KNOWN", (entry,))
    assert known.explain("trees: a file in --cache-dir that measure did not write was deleted or changed") == entry
    assert known.explain("trees: the sessions root changed: vanished") is None
    monkeypatch.setattr(known, "SHOW_ALL", True)
    assert not known.tolerated("trees: a file in --cache-dir that measure did not write was deleted")


def test_json_text_writes_what_python_json_would_not():
    value = {"a": [jsontext.Raw("1e400"), "x\ud800"], "b": jsontext.Pairs((("k", 1), ("k", 2)))}
    assert jsontext.dumps(value) == '{"a":[1e400,"x\\ud800"],"b":{"k":1,"k":2}}'
    assert len(jsontext.dumps(jsontext.nested(5_000))) == 10_006  # no recursion limit


def test_a_torn_line_expects_a_malformed_row_only_when_json_parse_would_refuse_it():
    assert mutations._is_json('{"a": 1}') is True
    assert mutations._is_json('{"a": 1') is False
    assert mutations._is_json("NaN") is False
    assert mutations._is_json("[" * 5_000 + "]" * 5_000) is None  # too deep for Python's parser: no expectation


def test_leftovers_in_a_shared_folder_are_only_those_of_the_outputs_named(tmp_path):
    (tmp_path / ".measure-staging-theirs-1-abcdef12").mkdir()
    assert checks.leftovers("p", tmp_path, "")[0].what == "leftover staging folder after the run"
    assert checks.leftovers("p", tmp_path, "", ("mine",)) == []
    (tmp_path / ".measure-retired-mine-x1y2").mkdir()
    assert checks.leftovers("p", tmp_path, "", ("mine",))[0].detail == ".measure-retired-mine-x1y2"


def test_a_sigint_while_python_itself_starts_is_not_held_against_measure():
    startup = ("can't initialize sys standard streams\nPython runtime state: core initialized\nTraceback (most recent call last):\n"
               '  File "<frozen importlib._bootstrap>", line 1176, in _find_and_load\n  File "<frozen io>", line 53, in <module>\nKeyboardInterrupt\n')
    assert interruptions.before_measure_ran(startup)
    ours = f'Traceback (most recent call last):\n  File "{drive.REPO}/measure/cli.py", line 9, in <module>\nKeyboardInterrupt\n'
    assert not interruptions.before_measure_ran(ours)
    assert not interruptions.before_measure_ran("measure: interrupted; the previous output is intact\n")
