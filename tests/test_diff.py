"""measure diff: per-strategy deltas between two runs (run or report directories)."""

from __future__ import annotations

import polars as pl
import pytest

from measure.cli import main
from measure.report.views.diff import (
    METRICS,
    RunDiffError,
    diff_runs,
    formatted,
    run_tables,
)


@pytest.fixture(scope="module")
def two_budgets(parity_root, tmp_path_factory):
    base = tmp_path_factory.mktemp("diff")
    common = ["run", "--root", str(parity_root / "projects"), "--no-cache", "--jobs", "1", "-q"]
    assert main([*common, "--out", str(base / "a"), "--max-total-chars", "20000"]) == 0
    assert main([*common, "--out", str(base / "b"), "--max-total-chars", "80000"]) == 0
    return base / "a", base / "b"


def test_diff_of_two_budgets(two_budgets):
    a, b = two_budgets
    table, changes = diff_runs(a, b)
    assert changes == ["parameters.budget: 20000 -> 80000"]
    assert table.columns == ["strategy", "metric", "a", "b", "delta", "delta_pct"]
    assert table["strategy"].unique(maintain_order=True).to_list()[:2] == ["link", "fold"]
    row = table.filter((pl.col("strategy") == "fold") & (pl.col("metric") == "evicted_chars")).row(0, named=True)
    ev = {k: pl.read_parquet(d / "eviction.parquet").filter(pl.col("strategy") == "fold")["evicted_chars"].sum() for k, d in (("a", a), ("b", b))}
    assert (row["a"], row["b"], row["delta"]) == (ev["a"], ev["b"], ev["b"] - ev["a"])
    assert row["delta"] < 0  # a larger budget evicts less
    sessions = table.filter(pl.col("metric") == "sessions")
    assert set(sessions["delta"].to_list()) == {0.0}
    # link has no eviction rows: no evicted_* metrics for it
    assert table.filter((pl.col("strategy") == "link") & pl.col("metric").str.starts_with("evicted")).height == 0


def test_diff_identical_runs_is_all_zero(two_budgets):
    a, _ = two_budgets
    table, changes = diff_runs(a, a)
    assert changes == [] and set(table["delta"].drop_nulls().to_list()) == {0.0}


def test_diff_reads_report_directories(two_budgets, tmp_path):
    a, b = two_budgets
    report = tmp_path / "report"
    (report / "tables").mkdir(parents=True)
    for name in ("sessions", "eviction", "run_cost", "verdict"):  # every table a metric reads
        (report / "tables" / f"{name}.csv").write_bytes((a / f"{name}.csv").read_bytes())
    (report / "run.json").write_bytes((a / "run.json").read_bytes())
    assert diff_runs(report, b)[0].equals(diff_runs(a, b)[0])


def test_diff_errors(two_budgets, tmp_path, capsys):
    a, _ = two_budgets
    with pytest.raises(RunDiffError, match="holds no run"):
        run_tables(tmp_path)
    with pytest.raises(RunDiffError, match="unknown metric"):
        diff_runs(a, a, metrics=["nope"])
    assert main(["diff", str(a), str(tmp_path / "missing")]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_diff_command(two_budgets, capsys):
    a, b = two_budgets
    assert main(["diff", str(a), str(b), "--metric", "evicted_pct", "--metric", "llm_calls"]) == 0
    out = capsys.readouterr().out
    assert "what differs: parameters.budget: 20000 -> 80000" in out
    assert "| strategy" in out.replace("  ", " ") or "strategy |" in out
    assert "evicted_pct" in out and "prompt_chars" not in out
    assert main(["diff", str(a), str(b), "--csv"]) == 0
    csv = capsys.readouterr().out
    assert csv.splitlines()[0] == "strategy,metric,a,b,delta,delta_pct"
    assert len(csv.splitlines()) > len(METRICS)


def test_formatted():
    t = pl.DataFrame([{"strategy": "fold", "metric": "m", "a": 1000.0, "b": 1500.5, "delta": 500.5, "delta_pct": 50.0},
                      {"strategy": "fold", "metric": "n", "a": None, "b": 2.0, "delta": None, "delta_pct": None}])
    assert formatted(t).rows() == [("fold", "m", "1,000", "1,500.5", "+500.5", "+50.0%"), ("fold", "n", "n/a", "2", "n/a", "n/a")]


def test_diff_names_the_new_candidates_and_the_choice(two_budgets, parity_root, tmp_path):
    a, _ = two_budgets
    other = tmp_path / "c"
    assert main(["run", "--root", str(parity_root / "projects"), "--no-cache", "--jobs", "1", "-q", "--out", str(other),
                 "--max-total-chars", "20000", "--priorities", "subagent_unique_chars_in_prompt"]) == 0
    table, changes = diff_runs(a, other)
    assert changes == ["parameters.priorities: 'calls_per_run_max<=cap, parent_chars_evicted, inline_refs, prompt_chars~1%' "
                       "-> 'subagent_unique_chars_in_prompt'"]
    assert {"parent_first", "hybrid_undelivered"} <= set(table["strategy"].to_list())
    chosen = {r["strategy"]: (r["a"], r["b"]) for r in table.filter(pl.col("metric") == "chosen").iter_rows(named=True)}
    picked = {side: [s for s, v in chosen.items() if v[k] == 1] for k, side in enumerate("ab")}
    assert len(picked["a"]) == len(picked["b"]) == 1 and picked["a"] != picked["b"]
    assert sum(v for pair in chosen.values() for v in pair) == 2  # one chosen strategy per run, 0 for every other
