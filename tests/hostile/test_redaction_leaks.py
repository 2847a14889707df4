"""Issue #26, redaction and privacy: under --redact no output names the input, stderr included.

Correct: with `--redact`, no project folder, session id, agent id or root name appears in any
table, cache entry, stdout or stderr line, whatever happened to the session (an internal_error
row too) and whatever went wrong with the options (a `--session` that matches nothing names no
real id). Without `--redact`, the tables still hold no transcript text: a tool_use `id` that is
not a string is never written as its Python repr.
"""

from __future__ import annotations

from fuzz import checks, drive
from fuzz.jsontext import Raw
from plant import CANARY, answer, launch_ack, prompt, tool_use, write

ROOT, PROJECT, SESSION = f"{CANARY}root", f"-home-{CANARY}proj", f"{CANARY}sess"


def _leaks(tmp_path, *runs: drive.Result) -> list:
    places = {}
    for folder in ("out", "cache"):
        if (tmp_path / folder).exists():
            places.update(checks.folder_contents(tmp_path / folder))
    for i, r in enumerate(runs):
        places[f"stderr of run {i}"] = r.stderr.encode()
        places[f"stdout of run {i}"] = r.stdout.encode()
    return [str(v) for v in checks.canaries("redact", (CANARY,), places, "")]


def _root(tmp_path, lines):
    write(tmp_path / ROOT / PROJECT / f"{SESSION}.jsonl", lines)
    return tmp_path / ROOT


def test_an_internal_error_row_names_nothing(tmp_path):
    """A session that hits an internal error (here a 400-digit timestamp) keeps its real path today."""
    root = _root(tmp_path, [{**prompt(1), "timestamp": Raw("9" * 400)}, answer(2)])
    r = drive.measure("run", "--root", root, "--out", tmp_path / "out", "--redact", "--quiet", "--cache-dir", tmp_path / "cache", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-1500:]
    assert _leaks(tmp_path, r) == []


def test_a_session_matching_nothing_names_no_real_id(tmp_path):
    root = _root(tmp_path, [prompt(1), answer(2)])
    r = drive.measure("run", "--root", root, "--out", tmp_path / "out", "--redact", "--no-cache", f"--session={CANARY[:3]}xx", cwd=tmp_path)
    assert r.returncode == 2, r.stderr[-1500:]
    assert _leaks(tmp_path, r) == []


def test_the_summary_line_names_no_root(tmp_path):
    root = _root(tmp_path, [prompt(1), answer(2)])
    r = drive.measure("run", "--root", root, "--out", tmp_path / "out", "--redact", "--cache-dir", tmp_path / "cache", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-1500:]
    assert _leaks(tmp_path, r) == []


def test_a_tool_use_id_that_is_not_a_string_is_not_written_as_python_repr(tmp_path):
    """Without --redact: an id that is an object holding transcript text must not reach a table."""
    text = "the secret plan for the launch"
    tool_id = {"note": text}
    root = _root(tmp_path, [prompt(1), tool_use(tool_id), launch_ack(tool_id, "a1")])
    r = drive.measure("run", "--root", root, "--out", tmp_path / "out", "--no-cache", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-1500:]
    assert [str(v) for v in checks.canaries("plain tables", (text,), checks.folder_contents(tmp_path / "out"), "")] == []
