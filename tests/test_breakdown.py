"""measure.measurements.breakdown: version order, session_info rows, the breakdown table."""

from __future__ import annotations

import polars as pl

from measure.cli import main
from measure.measurements.breakdown import (
    breakdown_rows,
    session_info_rows,
    session_version,
    version_key,
)


def test_versions_are_ordered_as_numbers():
    assert sorted(["2.1.10", "2.1.9", "2.0.76", "1.0.113"], key=version_key) == ["1.0.113", "2.0.76", "2.1.9", "2.1.10"]


def test_session_version_is_the_parents_most_common_then_newest():
    assert session_version({"p": {"2.1.9": 3, "2.1.10": 3, "2.0.1": 1}, "s": {"9.9.9": 50}}) == ("2.1.10", 4)
    assert session_version({"p": {}, "s": {"2.0.76": 2}}) == ("2.0.76", 1)  # parent carries none
    assert session_version({"p": {}}) == (None, 0)


def test_session_info_rows():
    (row,) = session_info_rows("-home-me-app/x.jsonl", 1_767_225_600_000, {"p": {"2.1.38": 4}})
    assert row == {"project": "-home-me-app", "cc_version": "2.1.38", "cc_versions": 1, "month": "2026-01",
                   "started_at": "2026-01-01T00:00:00.000Z"}
    assert session_info_rows("x.jsonl", None, {})[0] | {} == {"project": "", "cc_version": None, "cc_versions": 0,
                                                             "month": None, "started_at": None}


def test_breakdown_rows_sum_over_groups():
    info = [
        {"session_path": "a/1.jsonl", "project": "a", "cc_version": "2.1.38", "month": "2026-01"},
        {"session_path": "a/2.jsonl", "project": "a", "cc_version": None, "month": "2026-02"},
        {"session_path": "b/3.jsonl", "project": "b", "cc_version": "2.1.38", "month": "2026-02"},
    ]
    sessions = []
    for path, parent, chunked in (("a/1.jsonl", 1000, 4), ("a/2.jsonl", 3000, 1), ("b/3.jsonl", 1000, 2)):
        sessions += [
            {"session_path": path, "strategy": "link", "llm_calls": 1, "raw_chars": parent},
            {"session_path": path, "strategy": "chunked", "llm_calls": chunked, "raw_chars": parent},
        ]
    eviction = [
        {"session_path": "a/1.jsonl", "strategy": "fold", "evicted_chars": 300, "alone_parent_kept_chars": 1000},
        {"session_path": "a/2.jsonl", "strategy": "fold", "evicted_chars": 0, "alone_parent_kept_chars": 3000},
        {"session_path": "b/3.jsonl", "strategy": "fold", "evicted_chars": 100, "alone_parent_kept_chars": 1000},
        *({"session_path": p, "strategy": "hybrid", "evicted_chars": 0, "alone_parent_kept_chars": 1} for p in ("a/1.jsonl", "b/3.jsonl")),
    ]
    subagents = [{"session_path": "a/1.jsonl", "chars": 3000}, {"session_path": "a/1.jsonl", "chars": 1000}]
    rows = {(r["dimension"], r["value"]): r for r in breakdown_rows(info, sessions, eviction, subagents)}
    assert set(rows) == {("project", "a"), ("project", "b"), ("cc_version", "2.1.38"), ("cc_version", "unknown"),
                         ("month", "2026-01"), ("month", "2026-02")}
    a = rows[("project", "a")]
    assert (a["sessions"], a["sessions_with_subagents"], a["subagent_files"]) == (2, 1, 2)
    assert a["subagent_chars_pct"] == 50.0  # 4000 of 4000 + 4000
    assert (a["fold_evicted_chars"], a["fold_evicted_pct"], a["hybrid_evicted_pct"]) == (300, 7.5, 0.0)
    assert (a["llm_calls_link"], a["llm_calls_chunked"], a["chunked_multiplier"]) == (2, 5, 2.5)
    v = rows[("cc_version", "2.1.38")]
    assert (v["sessions"], v["fold_evicted_pct"]) == (2, 20.0)
    assert rows[("cc_version", "unknown")]["sessions"] == 1
    assert sum(r["sessions"] for (d, _), r in rows.items() if d == "month") == 3


def test_run_writes_session_info_and_breakdown(parity_root, tmp_path):
    out = tmp_path / "o"
    assert main(["run", "--root", str(parity_root / "projects"), "--out", str(out), "--no-cache", "--jobs", "1", "-q"]) == 0
    info = pl.read_parquet(out / "session_info.parquet")
    sessions = pl.read_parquet(out / "sessions.parquet")
    assert info.height == sessions["session_id"].n_unique() == 15
    assert info["project"].to_list() == [p.split("/")[0] for p in info["session_path"].to_list()]
    bd = pl.read_parquet(out / "breakdown.parquet")
    for dim in ("project", "cc_version", "month"):
        assert bd.filter(pl.col("dimension") == dim)["sessions"].sum() == 15
    fold = pl.read_parquet(out / "eviction.parquet").filter(pl.col("strategy") == "fold")
    assert bd.filter(pl.col("dimension") == "project")["fold_evicted_chars"].sum() == fold["evicted_chars"].sum()


def test_redact_hashes_projects_in_both_tables(parity_root, tmp_path):
    out = tmp_path / "o"
    assert main(["run", "--root", str(parity_root / "projects"), "--out", str(out), "--no-cache", "--jobs", "1", "-q", "--redact"]) == 0
    info = pl.read_parquet(out / "session_info.parquet")
    assert all(p.startswith("sha256:") for p in info["project"].to_list())
    assert info["project"].to_list() == [p.split("/")[0] for p in info["session_path"].to_list()]
    projects = pl.read_parquet(out / "breakdown.parquet").filter(pl.col("dimension") == "project")["value"].to_list()
    assert projects and all(p.startswith("sha256:") for p in projects)
    assert "home-dev" not in (out / "breakdown.csv").read_text() + (out / "session_info.csv").read_text()
