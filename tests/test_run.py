"""The main job end to end: tables agree with the parity vectors, runs are reproducible."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import polars as pl
import pytest

from measure.runner.job import RunParams
from measure.runner.run import run_measurement
from measure.schema import TABLES

PARITY = Path(__file__).parent / "parity"
TEMPLATE = str(PARITY / "template.md")


@pytest.fixture(scope="module")
def parity_tables(parity_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    run_measurement(parity_root / "projects", out, RunParams(template_path=TEMPLATE, budgets=(6000,)), jobs=2, cache_dir=None)
    return out


def _vectors():
    for name in json.loads((PARITY / "expected" / "INDEX.json").read_text()):
        yield json.loads((PARITY / "expected" / name).read_text(encoding="utf-8"))


def test_every_table_is_written_with_its_schema(parity_tables):
    for name, table in TABLES.items():
        df = pl.read_parquet(parity_tables / f"{name}.parquet")
        assert df.columns == table.names
        assert (parity_tables / f"{name}.csv").read_text().splitlines()[0] == ",".join(table.names)


def test_sessions_table_reproduces_the_vectors(parity_tables):
    df = pl.read_parquet(parity_tables / "sessions.parquet").filter(pl.col("budget") == 80_000)
    for vec in _vectors():
        path = vec["session"][len("projects/") :]
        rows = {r["strategy"]: r for r in df.filter(pl.col("session_path") == path).iter_rows(named=True)}
        for name, cand in vec["candidates"].items():
            r = rows[name]
            assert r["prompt_chars"] == cand["promptChars"], (path, name)
            assert r["parent_kept_events"] == cand["parentKeptEvents"]
            assert r["subagent_kept_events"] == cand["subagentKeptEvents"]
            assert r["parent_kept_chars"] == cand["parentKeptChars"]
            assert r["kept_chars"] == cand["keptChars"]
            assert r["inline_refs"] == cand["inlineRefs"]
            assert r["content_hash"] == vec["contentHash"]["folded"]
        ch = rows["chunked"]
        assert ch["llm_calls"] == vec["chunked"]["llmCalls"]
        assert ch["prompt_chars"] == vec["chunked"]["promptCharsTotal"]


def test_eviction_and_pairs_reproduce_the_vectors(parity_tables):
    ev = pl.read_parquet(parity_tables / "eviction.parquet").filter(pl.col("strategy") == "fold")
    dup = pl.read_parquet(parity_tables / "duplicates.parquet").filter(pl.col("pairing") == "sidecar_tool_use_id")
    calls = pl.read_parquet(parity_tables / "llm_calls.parquet").filter(pl.col("strategy") == "chunked")
    for vec in _vectors():
        path = vec["session"][len("projects/") :]
        (row,) = ev.filter(pl.col("session_path") == path).iter_rows(named=True)
        e = vec["eviction"]
        assert row["alone_parent_kept_chars"] == e["aloneParentKeptChars"]
        assert row["parent_kept_chars"] == e["foldParentKeptChars"]
        assert row["evicted_events"] == e["aloneParentKeptEvents"] - e["foldParentKeptEvents"]
        pairs = dup.filter(pl.col("session_path") == path).sort("agent_id")
        expected = sorted(vec["duplicatePairs"], key=lambda p: p["agentId"])
        assert pairs["agent_id"].to_list() == [p["agentId"] for p in expected]
        assert pairs["overlap"].to_list() == [p["overlap"] for p in expected]
        assert pairs["both_in_prompt"].to_list() == [p["notificationSurvives"] and p["subagentOwnSurvives"] for p in expected]
        (c,) = calls.filter(pl.col("session_path") == path).iter_rows(named=True)
        assert (c["parent_windows"], c["subagent_chunks"]) == (vec["chunked"]["parentWindows"], vec["chunked"]["subagentChunks"])
        assert c["parent_chars_in_prompts"] == vec["chunked"]["parentKeptCharsAcrossChunks"]


def test_two_runs_give_byte_identical_csvs(parity_root, tmp_path):
    params = RunParams(template_path=TEMPLATE, budgets=(20_000, 160_000))
    run_measurement(parity_root / "projects", tmp_path / "a", params, jobs=2, cache_dir=None)
    run_measurement(parity_root / "projects", tmp_path / "b", params, jobs=1, cache_dir=tmp_path / "cache")
    run_measurement(parity_root / "projects", tmp_path / "c", params, jobs=2, cache_dir=tmp_path / "cache")  # warm
    for name in TABLES:
        a = (tmp_path / "a" / f"{name}.csv").read_bytes()
        assert a == (tmp_path / "b" / f"{name}.csv").read_bytes() == (tmp_path / "c" / f"{name}.csv").read_bytes(), name
    assert (tmp_path / "a" / "run.json").read_bytes() == (tmp_path / "c" / "run.json").read_bytes()


def test_a_corrupt_file_among_good_ones(parity_root, tmp_path):
    root = tmp_path / "root"
    shutil.copytree(parity_root / "projects", root)
    (root / "-home-dev-basic0" / "cd613e30-d8f1-4adf-91b7-584a2265b1f5.jsonl").write_bytes(b"\x00\xff{{{ not json\n\xfe")
    sub = root / "-home-dev-fold-small" / "e88b7591-31db-4e32-98dc-b35f94c662cd" / "subagents"
    (sub / "agent-a6db288e68b7b4b02.jsonl").unlink()
    (sub / "agent-a6db288e68b7b4b02.jsonl").mkdir()  # a directory named like a transcript
    (root / "-home-dev-gone" / "0000" / "subagents").mkdir(parents=True)
    (root / "-home-dev-gone" / "0000" / "subagents" / "agent-x.jsonl").write_text("{}\n")
    summary = run_measurement(root, tmp_path / "out", RunParams(template_path=TEMPLATE), jobs=2, cache_dir=None)
    assert summary.measured == summary.sessions == 15
    errors = pl.read_parquet(tmp_path / "out" / "errors.parquet")
    kinds = dict(zip(errors["path"].to_list(), errors["kind"].to_list()))
    assert kinds["-home-dev-basic0/cd613e30-d8f1-4adf-91b7-584a2265b1f5.jsonl"] in ("malformed_lines", "invalid_utf8")
    assert kinds["-home-dev-gone/0000/subagents"] == "orphan_subagents"
    sessions = pl.read_parquet(tmp_path / "out" / "sessions.parquet")
    assert sessions["session_path"].n_unique() == 15


def test_cache_is_invalidated_by_a_changed_subagent_file(parity_root, tmp_path):
    root = tmp_path / "root"
    shutil.copytree(parity_root / "projects", root)
    params = RunParams(template_path=TEMPLATE)
    run_measurement(root, tmp_path / "a", params, jobs=1, cache_dir=tmp_path / "cache")
    sub = root / "-home-dev-fold-small" / "e88b7591-31db-4e32-98dc-b35f94c662cd" / "subagents" / "agent-a1f0f96fdd163482a.jsonl"
    with open(sub, "a") as f:
        f.write('{"type":"user","timestamp":"2026-06-09T00:00:00Z","message":{"role":"user","content":"one more event here"}}\n')
    run_measurement(root, tmp_path / "b", params, jobs=1, cache_dir=tmp_path / "cache")
    a = pl.read_parquet(tmp_path / "a" / "sessions.parquet")
    b = pl.read_parquet(tmp_path / "b" / "sessions.parquet")
    key = pl.col("session_path").str.starts_with("-home-dev-fold-small")
    assert a.filter(key)["content_hash"][0] != b.filter(key)["content_hash"][0]
    assert a.filter(~key).equals(b.filter(~key))


def test_pinned_file_times_make_copies_agree(parity_root, tmp_path):
    """Bundled fixtures lose their mtimes in git; pinned times give every clone one answer."""
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(parity_root / "projects", a)
    shutil.copytree(parity_root / "projects", b)  # copytree keeps mtimes: reset b's
    for p in b.rglob("*.jsonl"):
        os.utime(p, ns=(1_000_000_000_000_000, 1_000_000_000_000_000))
    params = RunParams(template_path=TEMPLATE, file_time_ms=1_780_000_000_000)
    run_measurement(a, tmp_path / "oa", params, jobs=1, cache_dir=None)
    run_measurement(b, tmp_path / "ob", params, jobs=1, cache_dir=None)
    for name in TABLES:
        assert (tmp_path / "oa" / f"{name}.csv").read_bytes() == (tmp_path / "ob" / f"{name}.csv").read_bytes(), name


def test_descriptions_only_with_show_excerpts(parity_root, tmp_path):
    run_measurement(parity_root / "projects", tmp_path / "d", RunParams(template_path=TEMPLATE), jobs=1, cache_dir=None)
    run_measurement(parity_root / "projects", tmp_path / "s", RunParams(template_path=TEMPLATE, show_excerpts=True), jobs=1, cache_dir=None)
    for table in ("subagents", "duplicates"):
        assert pl.read_parquet(tmp_path / "d" / f"{table}.parquet")["description"].null_count() == pl.read_parquet(tmp_path / "d" / f"{table}.parquet").height
    assert pl.read_parquet(tmp_path / "s" / "duplicates.parquet")["description"].drop_nulls().len() > 0
    assert "Altitude review" not in "".join((tmp_path / "d" / f"{n}.csv").read_text() for n in TABLES)


def test_redact_hashes_names_and_descriptions(parity_root, tmp_path):
    params = RunParams(template_path=TEMPLATE, redact=True, show_excerpts=True)
    run_measurement(parity_root / "projects", tmp_path / "o", params, jobs=1, cache_dir=None)
    text = "".join((tmp_path / "o" / f"{n}.csv").read_text() for n in TABLES)
    assert "-home-dev-" not in text and "e88b7591" not in text
    assert "Altitude review" not in text  # a sidecar description
    dup = pl.read_parquet(tmp_path / "o" / "duplicates.parquet")
    assert dup["description"].drop_nulls().len() and dup["description"].drop_nulls().str.starts_with("sha256:").all()
    sessions = pl.read_parquet(tmp_path / "o" / "sessions.parquet")
    assert sessions["session_path"].str.starts_with("sha256:").all()


def test_redact_hashes_task_ids_of_the_cost_tables(tmp_path):
    """#12: wakeups and repeat_reads name tasks; under --redact their ids are hashes too."""
    root = Path(__file__).resolve().parent.parent / "fixtures" / "default"
    params = RunParams(template_path=TEMPLATE, redact=True, file_time_ms=1_780_000_000_000)
    run_measurement(root, tmp_path / "o", params, jobs=1, cache_dir=None)
    for name in ("wakeups", "repeat_reads"):
        ids = pl.read_parquet(tmp_path / "o" / f"{name}.parquet")["task_id"]
        assert ids.len() and ids.str.starts_with("sha256:").all(), name
    tokens = pl.read_parquet(tmp_path / "o" / "tokens.parquet")
    assert tokens["session_path"].str.starts_with("sha256:").all() and tokens["models"].str.starts_with("claude").any()


def test_csv_cells_are_injection_safe_and_text_is_valid_utf8():
    from measure.runner.tables import csv_safe, text_cell

    cells = ["=1+1", "+x", "-home-x", "@SUM", "\tt", "\rr", "plain", "a=b", "", "'q", None, " =x", "\n=x"]
    df = pl.DataFrame({"a": cells, "b": ["ok"] * len(cells), "n": list(range(-1, len(cells) - 1))})
    out = csv_safe(df)
    assert out["a"].to_list() == ["'=1+1", "'+x", "'-home-x", "'@SUM", "'\tt", "'\rr", "plain", "a=b", "", "'q", None, " =x", "\n=x"]
    assert out["b"].to_list() == df["b"].to_list() and out["n"].to_list() == df["n"].to_list()  # safe text, numbers untouched
    assert df["a"].to_list() == cells  # the frame given (Parquet's values) is not changed
    assert text_cell("name\udcff\udcfe") == "name\\xff\\xfe"  # a file name byte that is not UTF-8
    assert text_cell("desc\ud83d") == "desc\ufffd"  # a lone surrogate from JSON
    assert text_cell("ok é") == "ok é"


def test_a_table_is_written_as_a_safe_csv_and_an_unchanged_parquet(tmp_path):
    from measure.runner import tables

    df = pl.DataFrame({"path": ["-a", "b", "=c", None, "d", "+e", "f"], "x": [1.5, None, 2.0, 3.25, 0.1, 7.0, 1e21]})
    tables.write_tables({"t": df}, tmp_path)
    assert (tmp_path / "t.csv").read_bytes() == b"path,x\n'-a,1.5\nb,\n'=c,2.0\n,3.25\nd,0.1\n'+e,7.0\nf,1e+21\n"
    assert pl.read_parquet(tmp_path / "t.parquet")["path"].to_list() == df["path"].to_list()


def test_a_csv_written_in_slices_is_the_csv_written_at_once(tmp_path, monkeypatch):
    """Tables over CSV_SLICE_ROWS are written slice by slice (csv_safe copies one slice's text at a
    time): the bytes are those of the table written whole."""
    from measure.runner import tables

    df = pl.DataFrame({"path": ["-a", "b", "=c", None, "d", "+e", "f"], "x": [1.5, None, 2.0, 3.25, 0.1, 7.0, 1e21]})
    tables.write_tables({"t": df}, tmp_path / "whole")
    monkeypatch.setattr(tables, "CSV_SLICE_ROWS", 2)
    tables.write_tables({"t": df}, tmp_path / "sliced")
    whole, sliced = (tmp_path / "whole" / "t.csv").read_bytes(), (tmp_path / "sliced" / "t.csv").read_bytes()
    assert whole == sliced and whole.count(b"path,x") == 1 and b"'-a" in whole and b"'=c" in whole
    assert pl.read_parquet(tmp_path / "sliced" / "t.parquet")["path"].to_list() == df["path"].to_list()


@pytest.mark.parametrize("redacted", [False, True])
def test_an_internal_error_row_names_the_code_never_the_input(parity_root, tmp_path, monkeypatch, redacted):
    """A bug in one session's measurement is a row holding the exception's type and the line of
    measure that raised it: its message (here quoting a name from the input) is never written."""
    import measure.runner.job as job

    def broken(*args, **kwargs):
        raise KeyError("-home-dev-fold-small secret")

    monkeypatch.setattr(job, "session_rows", broken)
    out = tmp_path / "out"
    run_measurement(parity_root / "projects", out, RunParams(template_path=TEMPLATE, redact=redacted), jobs=1)
    rows = pl.read_parquet(out / "errors.parquet").filter(pl.col("kind") == "internal_error").to_dicts()
    assert rows
    for r in rows:
        assert re.fullmatch(r"KeyError at measure/runner/job\.py:\d+ \(message withheld: it may quote the input\)", r["reason"])
        assert r["path"].startswith("sha256:") == redacted
