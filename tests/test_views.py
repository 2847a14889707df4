"""measure.report.views: every sentence and table of the pages matches the tables it is computed from (issue #10)."""

from __future__ import annotations

import polars as pl
import pytest

from measure.report.views import common, duplication, eviction
from tests.test_plots import S1, S2, small_tables


def _stubbing_report() -> common.Report:
    """S1: fold_dedupe_scoped's whole difference from the parent alone is 3,000 stub-shortened chars
    at every budget (no budget eviction); fold evicts 20,000 chars at 80k in S1 as before."""
    t = small_tables()
    ev = t["eviction"]
    is_dedupe = (pl.col("strategy") == "fold_dedupe_scoped") & (pl.col("session_id") == S1[0])
    t["eviction"] = ev.with_columns(
        pl.when(is_dedupe).then(3_000).otherwise(pl.col("evicted_chars")).alias("evicted_chars"),
        pl.when(is_dedupe).then(3.8).otherwise(pl.col("evicted_chars_pct")).alias("evicted_chars_pct"),
        pl.when(is_dedupe).then(3_000).otherwise(0).alias("stub_saved_chars"),
        pl.when(is_dedupe).then(0).otherwise(pl.col("evicted_chars")).alias("budget_evicted_chars"),
        pl.when(is_dedupe).then(0.0).otherwise(pl.col("evicted_chars_pct")).alias("budget_evicted_pct"),
    )
    sw = t["budget_sweep"]
    t["budget_sweep"] = sw.with_columns(
        pl.when(is_dedupe).then(3_000).otherwise(pl.col("evicted_chars")).alias("evicted_chars"),
        pl.when(is_dedupe).then(3_000).otherwise(0).alias("stub_saved_chars"),
        pl.when(is_dedupe).then(0).otherwise(pl.col("evicted_chars")).alias("budget_evicted_chars"),
        pl.when(is_dedupe).then(0.0).otherwise(pl.col("evicted_chars_pct")).alias("budget_evicted_pct"),
    )
    return common.Report(tables=t, sessions_root="fixtures/default")


def test_defect1_stubs_are_not_eviction_anywhere():
    r = _stubbing_report()
    text = eviction.eviction_summary(r).data
    assert "`fold_dedupe_scoped` evicts parent content in 0/2 sessions" in text
    assert "`fold_dedupe_scoped` shortens parent notifications to stubs in 1/2 sessions (3,000 chars in all)" in text
    assert "stubs saved" not in text
    table = eviction.eviction_table(r)
    assert table["fold_dedupe_scoped evicted (chars)"].to_list()[0] == 0
    assert table["fold_dedupe_scoped stub-shortened (chars)"].to_list()[0] == 3_000
    curve = eviction.sweep_curve(r["budget_sweep"])
    dedupe = curve.filter(pl.col("strategy") == "fold_dedupe_scoped")
    assert dedupe["evicted_chars"].to_list() == [0, 0, 0, 0]  # the curve reaches zero
    zero = eviction.zero_eviction_budgets(r)
    assert zero["fold_dedupe_scoped"].null_count() == 0  # not "still evicting" for stubs


def test_defect1_budget_sweep_rows_split_stubs_from_eviction():
    from measure.measurements.budget_sweep import sweep_rows

    class R:
        def __init__(self, pc, saved):
            self.pc, self.stub_saved_chars, self.prompt_chars, self.calls = pc, saved, 1, [1]

        def kept_by_origin(self):
            return (1, self.pc, 0, 0)

    rows = sweep_rows({80_000: {"link": R(1_000, 0), "fold_dedupe_scoped": R(700, 300)}})
    dedupe = next(x for x in rows if x["strategy"] == "fold_dedupe_scoped")
    assert (dedupe["evicted_chars"], dedupe["stub_saved_chars"], dedupe["budget_evicted_chars"]) == (300, 300, 0)
