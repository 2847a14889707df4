"""`measure extract` end to end: the real SDKs against a loopback fake server (tests/fake_llm.py)."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import polars as pl
import pytest

from measure.cli import main
from measure.extract.run import ExtractParams, plan, rebuild
from measure.paths import FIXTURE_FILE_TIME_MS

sys.path.insert(0, str(Path(__file__).parent))
from fake_llm import FakeLLM  # noqa: E402

ROOT = str(Path(__file__).resolve().parent.parent / "fixtures" / "default")
FAST = ["--max-retries", "0", "--timeout", "10", "--jobs", "1"]


def _extract(out, *extra) -> int:
    return main(["extract", "--root", ROOT, "--out", str(out), *FAST, *extra])


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.glob("extraction_*"))}


def test_dry_run_lists_ten_sessions_and_sends_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert _extract(tmp_path / "o", "--dry-run") == 0
    out = capsys.readouterr().out
    lines = out.strip().splitlines()
    assert len(lines) == 1 + 20 + 1  # header, 10 sessions x fold/hybrid, totals
    assert "10 session(s), 20 call(s)" in lines[-1] and "nothing sent" in lines[-1] and "$" in lines[-1]
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_anthropic_sdk_writes_tables_and_store_and_reruns_send_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    out = tmp_path / "o"
    with FakeLLM() as srv:
        assert _extract(out, "--client", "anthropic", "--base-url", srv.url, "--max-sessions", "3") == 0
        first = len(srv.requests)
        assert all("temperature" not in b for b in srv.bodies)  # not sent unless asked for
        assert first > 0 and set(srv.requests) == {"/v1/messages"}
        tables = _files(out)
        assert _extract(out, "--client", "anthropic", "--base-url", srv.url, "--max-sessions", "3") == 0
        assert len(srv.requests) == first  # nothing new was sent
    assert "0 sent, 6 from the store" in capsys.readouterr().err
    assert set(tables) == {f"extraction_{t}.{e}" for t in ("calls", "ab", "unique") for e in ("csv", "parquet")}
    assert _files(out) == tables  # byte-identical
    calls = pl.read_parquet(out / "extraction_calls.parquet")
    assert calls.height == 6 and calls["status"].to_list() == ["ok"] * 6
    assert calls["input_tokens"].null_count() == 0
    assert len(list((out / "store").rglob("*.json"))) == first
    ab = pl.read_parquet(out / "extraction_ab.parquet")
    assert ab.height == 3 and ab["complete"].all()
    assert (ab["matched"] + ab["unique_a"] == ab["candidates_a"]).all()
    unique_a = ab.select(pl.col("^unique_a_.*$")).sum_horizontal()
    assert (unique_a == ab["unique_a"]).all()
    # No candidate text in the tables: it stays in the store.
    text = (out / "store").rglob("*.json").__next__().read_text()
    assert '"reply"' in text
    rebuilt = rebuild(out, ROOT, tmp_path / "rebuilt")
    assert _files(rebuilt) == tables
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert _extract(out, "--offline", "--max-sessions", "3") == 0  # no key, no server: the store answers
    assert _files(out) == tables


@pytest.mark.slow
def test_openai_sdk_against_a_compatible_server(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "o"
    with FakeLLM() as srv:
        args = ["--client", "openai", "--base-url", srv.url + "/v1", "--model", "local", "--max-sessions", "2", "--samples", "2", "--temperature", "0.7"]
        assert _extract(out, *args) == 0
        assert set(srv.requests) == {"/v1/chat/completions"} and len(srv.requests) == 8
        assert {b["temperature"] for b in srv.bodies} == {0.7} and {b["model"] for b in srv.bodies} == {"local"}
        assert _extract(out, *args) == 0
        assert len(srv.requests) == 8
    ab = pl.read_parquet(out / "extraction_ab.parquet")
    assert ab["noise_a_unmatched_pct"].to_list() == [0.0, 0.0]  # the fake model is deterministic
    assert pl.read_parquet(out / "extraction_calls.parquet")["model"].unique().to_list() == ["local"]


@pytest.mark.slow
def test_failed_and_invalid_calls_are_error_rows_and_the_rest_go_on(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    p = ExtractParams(max_sessions=2, file_time_ms=FIXTURE_FILE_TIME_MS)
    calls = plan(ROOT, p).calls
    fold = [c for c in calls if c.strategy == "fold"]
    replies = {fold[0].prompt.sha256: 500, fold[1].prompt.sha256: "I found nothing worth keeping."}
    out = tmp_path / "o"
    with FakeLLM(replies) as srv:
        assert _extract(out, "--base-url", srv.url, "--max-sessions", "2") == 0
        sent = len(srv.requests)
    rows = pl.read_parquet(out / "extraction_calls.parquet")
    status = dict(zip(rows["prompt_sha256"], rows["status"]))
    assert status[fold[0].prompt.sha256] == "call_failed"
    assert status[fold[1].prompt.sha256] == "invalid_reply"
    assert "no JSON object" in rows.filter(pl.col("status") == "invalid_reply")["error"][0]
    assert rows.filter(pl.col("strategy") == "hybrid")["status"].to_list() == ["ok", "ok"]
    ab = pl.read_parquet(out / "extraction_ab.parquet")
    assert not ab["complete"].any() and ab["matched"].null_count() == 2
    # The failed call is not stored: a rerun sends exactly that one again.
    with FakeLLM() as srv:
        assert _extract(out, "--base-url", srv.url, "--max-sessions", "2") == 0
        assert len(srv.requests) == 1
    assert sent == 4


def test_missing_key_is_one_line_and_nonzero(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert _extract(tmp_path / "o", "--max-sessions", "1") == 2
    err = capsys.readouterr().err
    assert err.strip() == "measure extract: ANTHROPIC_API_KEY is not set (the anthropic client needs an API key)"


def test_unreachable_server_is_one_line_and_nonzero(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again before the call: nothing listens there
    assert _extract(tmp_path / "o", "--base-url", f"http://127.0.0.1:{port}", "--max-sessions", "1") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("measure extract: cannot reach the Anthropic API")


@pytest.mark.slow
def test_redact_keeps_no_reply_and_names_no_session_in_the_folder_or_on_the_terminal(tmp_path, capsys, monkeypatch):
    """A reply describes its transcript, so under --redact none is stored (a rerun sends again), and no
    output, extract.json, a per-call line or the --dry-run listing included, names a session or the root."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    plain, red = tmp_path / "plain", tmp_path / "red"
    with FakeLLM() as srv:
        run = ("--client", "anthropic", "--base-url", srv.url, "--max-sessions", "2")
        assert _extract(plain, *run) == 0
        capsys.readouterr()
        for _ in range(2):
            assert _extract(red, *run, "--redact") == 0
        assert _extract(red, *run, "--redact", "--dry-run") == 0
        assert len(srv.requests) == 3 * 4  # 2 sessions x fold, hybrid, sent by each of the three runs
    said = capsys.readouterr()
    calls = pl.read_parquet(plain / "extraction_calls.parquet")
    names = {*calls["session_id"], *(part for path in calls["session_path"] for part in path.split("/")), "fixtures/default"}
    replies = [json.loads(f.read_text())["reply"] for f in (plain / "store").rglob("*.json")]
    texts = {c[k] for r in replies for c in json.loads(r)["candidates"] for k in ("title", "body")}
    assert len(names) > 3 and len(texts) > 3 and not (red / "store").exists()
    leaks = {f"{f.relative_to(red)}: {t}" for f in red.rglob("*") if f.is_file() for t in names | texts
             if t.encode() in f.read_bytes()}
    leaks |= {f"terminal: {t}" for t in names | texts if t in said.out + said.err}
    assert "sha256:" in said.err and not leaks


@pytest.mark.slow
def test_command_client_and_chunked_calls(tmp_path):
    cmd = f"{sys.executable} {Path(__file__).parent / 'fake_llm.py'}"
    out = tmp_path / "o"
    assert _extract(out, "--client", "command", "--command", cmd, "--strategies", "fold,hybrid,chunked", "--max-sessions", "1") == 0
    calls = pl.read_parquet(out / "extraction_calls.parquet")
    assert _extract(tmp_path / "r", "--client", "command", "--command", cmd, "--max-sessions", "1", "--redact") == 0
    redacted = pl.read_parquet(tmp_path / "r" / "extraction_ab.parquet")
    assert redacted["session_id"][0].startswith("sha256:") and "sha256:" in redacted["session_path"][0]
    assert calls["session_id"][0] not in (tmp_path / "r" / "extract.json").read_text()
    titles = pl.read_parquet(out / "extraction_unique.parquet")["title"], pl.read_parquet(tmp_path / "r" / "extraction_unique.parquet")["title"]
    assert titles[1].len() > 0 and titles[1].str.starts_with("sha256:").all() and not titles[0].str.starts_with("sha256:").any()
    chunked = calls.filter(pl.col("strategy") == "chunked")
    assert chunked.height > 1 and chunked["call_index"].to_list() == list(range(chunked.height))
    assert calls["status"].unique().to_list() == ["ok"]
    ab = pl.read_parquet(out / "extraction_ab.parquet")
    assert ab.select("strategy_a", "strategy_b").rows() == [("fold", "hybrid"), ("fold", "chunked"), ("hybrid", "chunked")] or ab.height == 3


def test_unknown_strategy_is_one_line(tmp_path, capsys):
    assert _extract(tmp_path / "o", "--strategies", "fold,nope", "--dry-run") == 2
    assert "unknown strategy 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["inside", "equal", "holding"])
def test_an_out_in_or_around_the_root_is_refused_before_any_work(tmp_path, capsys, where):
    """The experiment's folder is checked as `measure run --out` is: the root is the analyst's only copy."""
    import shutil

    root = tmp_path / "projects"
    shutil.copytree(ROOT, root)
    out = {"inside": root / "x", "equal": root, "holding": tmp_path}[where]
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert main(["extract", "--root", str(root), "--out", str(out), *FAST, "--offline", "--client", "command",
                 "--command", "cat"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "sessions root" in err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize("option, value", [
    ("--max-total-chars", str(2**63)), ("--pin-file-times", "9" * 30), ("--jobs", str(10**9)), ("--samples", str(10**20)),
    ("--max-tokens", str(2**64)), ("--max-sessions", str(2**64)), ("--max-retries", "-1"), ("--timeout", "0"),
    ("--timeout", "nan"), ("--timeout", "inf"), ("--temperature", "nan"), ("--temperature", "-1"), ("--price-per-mtok", "nan"),
])
def test_a_value_the_experiment_cannot_use_is_refused_when_the_command_line_is_read(tmp_path, capsys, option, value):
    with pytest.raises(SystemExit) as info:
        main(["extract", "--root", ROOT, "--out", str(tmp_path / "o"), "--dry-run", option, value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"Invalid value for '{option}'" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_a_short_id_selects_its_session_as_run_does(tmp_path, capsys):
    assert _extract(tmp_path / "o", "--dry-run", "--session", "03b61ee1") == 0
    assert "1 session(s), 2 call(s)" in capsys.readouterr().out.strip().splitlines()[-1]
