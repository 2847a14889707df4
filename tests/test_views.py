"""measure.report.views: every sentence and table of the pages matches the tables it is computed from (issue #10)."""

from __future__ import annotations

import polars as pl
import pytest

from measure.report import shaping
from measure.report.views import common, duplication, eviction
from measure.runner.tables import read_table
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
    curve = shaping.sweep_curve(r["budget_sweep"])
    dedupe = curve.filter(pl.col("strategy") == "fold_dedupe_scoped")
    assert dedupe["evicted_chars"].to_list() == [0, 0, 0, 0]  # the curve reaches zero
    zero = eviction.zero_eviction_budgets(r)
    assert zero["fold_dedupe_scoped"].null_count() == 0  # not "still evicting" for stubs


def test_defect1_budget_sweep_rows_split_stubs_from_eviction():
    from measure.measurements.budget_sweep import sweep_rows

    class R:
        def __init__(self, pc, saved):
            self.pc, self.stub_saved_chars, self.prompt_chars, self.calls = pc, saved, 1, [1]

        kept_by_origin = property(lambda self: (1, self.pc, 0, 0))

    rows = sweep_rows({80_000: {"link": R(1_000, 0), "fold_dedupe_scoped": R(700, 300)}})
    dedupe = next(x for x in rows if x["strategy"] == "fold_dedupe_scoped")
    assert (dedupe["evicted_chars"], dedupe["stub_saved_chars"], dedupe["budget_evicted_chars"]) == (300, 300, 0)


def test_defect6_calls_per_run_are_compared_with_single_call_runs_when_fewer_sessions_than_the_cap():
    from measure.measurements.llm_calls import run_cost_rows
    from measure.report.views import llm_calls
    from measure.runner.tables import frame
    from measure.schema import TABLES

    t = {k: v.filter(pl.col("session_id") == S2[0]) if "session_id" in v.columns else v for k, v in small_tables().items()}
    t["run_cost"] = frame(TABLES["run_cost"], run_cost_rows(t["llm_calls"].to_dicts(), [S2[1]], 25))  # as measure run --session 2222
    r = common.Report(tables=t, sessions_root="fixtures/default")
    cost = {row["strategy"]: row for row in r["run_cost"].iter_rows(named=True)}
    assert cost["chunked"]["llm_calls"] == 3 and cost["chunked"]["sessions"] == 1  # S2 only
    assert cost["link"]["llm_calls"] == 1
    text = llm_calls.calls_summary(r).data
    assert "a single-call strategy makes at most 1 (3.0×)" in text
    assert "25 (" not in text  # not divided by the cap when the run holds fewer sessions


def test_defect6_no_hard_coded_window_and_pairing_names_match_the_data():
    from measure.paths import root
    from measure.schema import DUPLICATES

    overview = (root() / "notebooks" / "00-overview.py").read_text(encoding="utf-8")
    assert "80,000-char" not in overview
    doc = dict((c[0], c[2]) for c in DUPLICATES.columns)["pairing"]
    assert "agent_id_notification" in doc and "agent_id_tool_result" in doc
    dup = (root() / "notebooks" / "02-duplication.py").read_text(encoding="utf-8")
    assert "- `agent_id`:" not in dup and "`agent_id_notification`" in dup


def test_defect8_a_missing_run_dir_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no run.json"):
        common.load("fixtures/default", tmp_path / "typo")


def test_defect8_the_root_comes_from_run_json(tmp_path):
    import json

    from measure.runner.tables import write_tables

    write_tables(small_tables(), tmp_path)
    (tmp_path / "run.json").write_text(json.dumps({"input": {"root": "~/elsewhere/projects"}}), encoding="utf-8")
    r = common.load("fixtures/default", tmp_path)
    assert r.sessions_root == "~/elsewhere/projects"
    assert "`~/elsewhere/projects`" in common.run_summary(r).data


def test_defect2_dedupe_claim_is_computed_from_prompt_digests():
    t = small_tables()  # every prompt_sha256 is "0" * 64: fold and dedupe send the same prompt
    r = common.Report(tables=t, sessions_root="fixtures/default")
    text = duplication.duplication_summary(r).data
    assert "changes what the LLM sees" not in text  # a pair reaches the prompt twice, yet the prompts are identical
    assert "identical prompts (same sha256) in all 2 sessions" in text
    s = t["sessions"].with_columns(
        pl.when((pl.col("strategy") == "fold_dedupe_scoped") & (pl.col("session_id") == S1[0]))
        .then(pl.lit("f" * 64)).otherwise(pl.col("prompt_sha256")).alias("prompt_sha256"),
        pl.when((pl.col("strategy") == "fold_dedupe_scoped") & (pl.col("session_id") == S1[0]))
        .then(2).otherwise(pl.col("stubbed")).alias("stubbed"),
    )
    text = duplication.duplication_summary(common.Report(tables={**t, "sessions": s})).data
    assert "changes the prompt in 1 of 2 sessions" in text and "stubbing 2 notifications" in text


def test_defect2_the_page_names_all_three_pairing_methods():
    from measure.paths import root

    page = (root() / "notebooks" / "02-duplication.py").read_text(encoding="utf-8")
    assert "one of two methods" not in page
    for method in ("sidecar_tool_use_id", "agent_id_notification", "agent_id_tool_result"):
        assert f"`{method}`" in page


def test_defect11_legacy_agent_sessions_are_marked():
    from measure.measurements.sessions import is_legacy_agent
    from measure.report.views import overview

    assert is_legacy_agent("-home-dev-a/agent-a1b2c3.jsonl")
    assert not is_legacy_agent("-home-dev-a/11111111-aaaa-4000-8000-000000000001.jsonl")
    assert not is_legacy_agent("-home-agent-x/11111111.jsonl")
    t = small_tables()
    t["sessions"] = t["sessions"].with_columns((pl.col("session_id") == S2[0]).alias("legacy_agent"))
    r = common.Report(tables=t, sessions_root="fixtures/default")
    assert "**1 of the 2 sessions are legacy sibling `agent-*.jsonl` transcripts**" in overview.legacy_agent_note(r).data
    assert overview.legacy_agent_sessions(r)["session"].to_list() == ["22222222"]
    assert "2 sessions measured, 1 of them legacy sibling `agent-*.jsonl` transcripts" in common.run_summary(r).data


@pytest.fixture(scope="module")
def s840():
    from measure.paths import root

    if not (root() / "fixtures" / "s840" / ".measure-output.json").exists():
        pytest.skip("fixtures/s840 not generated (make fixtures)")
    return common.load("fixtures/s840")


@pytest.mark.slow
def test_defect4_840_comparison_is_like_for_like(s840):
    from measure.report.views import published

    table = published.published_comparison(s840, "headline")
    here = table.filter(pl.col("source") == "here")
    assert here["subagent files"].to_list() == [28, 4, 1, 74]  # #840 counted the top level only
    delta = table.filter(pl.col("source") == "Δ")
    assert delta["subagent files"].to_list() == [0, 0, 0, 0]
    assert delta["link"].null_count() == 4  # bundled template: absolute prompt lengths are not comparable
    assert "hybrid − link" in table.columns and delta["hybrid − link"].null_count() == 0
    note = published.published_note(s840, "headline").data
    assert "bundled stand-in template" in note and "--template PATH" in note


def _many_sessions(n: int = 30) -> common.Report:
    """`n` sessions; only the last by path has subagent files and eviction (as on a real root
    where most sessions never delegate)."""
    base = small_tables()
    rows: dict[str, list[pl.DataFrame]] = {k: [] for k in ("sessions", "eviction", "llm_calls", "budget_sweep")}
    for i in range(n):
        sid = f"{i:08x}-0000-4000-8000-000000000000"
        sp = f"-home-dev-p/{sid}.jsonl"
        src = S1[0] if i == n - 1 else S2[0]
        for k in rows:
            part = base[k].filter(pl.col("session_id") == src).with_columns(
                pl.lit(sid).alias("session_id"), pl.lit(sp).alias("session_path")
            )
            if k == "sessions":
                part = part.with_columns(pl.lit(2 if i == n - 1 else 0).alias("subagent_files"))
            rows[k].append(part)
    t = {**base, **{k: pl.concat(v) for k, v in rows.items()}, "duplicates": base["duplicates"].clear()}
    return common.Report(tables=t, sessions_root="fixtures/default")


def test_defect7_tables_put_the_sessions_that_matter_first_and_say_so():
    from measure.report.views import llm_calls, overview

    r = _many_sessions(30)
    last = f"{29:08x}"
    for table in (eviction.eviction_table(r), eviction.parent_kept(r), llm_calls.calls_table(r), overview.headline(r)):
        assert table["session"][0] == last  # not hidden behind 29 sessions sorted by path
    shown = common.top(eviction.eviction_table(r), table="eviction")
    assert shown.caption() == (
        "20 of 30 sessions, ordered by most parent content evicted, then most subagent transcripts, "
        "then most LLM calls. Every row: tables/eviction.csv of the report."
    )
    html = shown._repr_html_()
    assert html.count("<tr>") == 21 and "20 of 30 sessions" in html
    assert '<a href="tables/eviction.csv">' in html


def test_defect7_bar_charts_of_the_top_sessions_are_ordered_by_their_value():
    from measure.report import plots

    r = _many_sessions(30)
    ev = r["eviction"].with_columns(
        pl.when(pl.col("session_id").str.starts_with("0000000a")).then(50.0).otherwise(pl.col("budget_evicted_pct")).alias("budget_evicted_pct")
    )
    picked = plots._top_sessions(ev, "budget_evicted_pct", limit=20)
    assert picked[:2] == ["0000000a-0000-4000-8000-000000000000", f"{29:08x}-0000-4000-8000-000000000000"]


def test_defect7_an_empty_table_says_so_without_a_header_row():
    shown = common.top(pl.DataFrame({"session": []}, schema={"session": pl.String}))
    assert shown.caption() == "No sessions here."
    assert "<table" not in shown._repr_html_()


def test_a_report_reads_a_table_each_time_it_is_used_and_a_fresh_measure_eagerly(tmp_path, monkeypatch):
    """A notebook of a 20,000-session report holds no table between two views (budget_sweep alone is
    1,080,000 rows); a root measured now (into a temporary folder that is gone afterwards) keeps every table."""
    from measure.runner.job import RunParams
    from measure.runner.run import run_measurement

    run_measurement("fixtures/default", tmp_path / "run", RunParams(budgets=(20000, 40000), file_time_ms=1_780_000_000_000), jobs=1)
    r = common.load("fixtures/default", tmp_path / "run")
    read = []
    monkeypatch.setattr(common, "read_table", lambda directory, name: read.append(name) or read_table(directory, name))
    common.run_summary(r)  # scans of the columns it needs: no table is read whole
    assert read == []
    assert r.tables["sessions"] is not r.tables["sessions"] and r.tables["sessions"].equals(r.tables["sessions"])
    assert set(r.tables) == set(common.TABLES) and r.tables.get("nope") is None
    fresh = common.load("fixtures/default", None, budgets=[20000, 40000])
    assert fresh.tables["sessions"].equals(r.tables["sessions"])


def test_the_tie_breaks_of_relevance_order_are_linear_and_stable():
    from measure.report import plots

    sessions = [f"s{i:05d}" for i in range(20_000)]
    df = pl.DataFrame({"session_id": sessions, "session_path": sessions, "v": [i % 3 for i in range(20_000)]})
    top = plots._top_sessions(df, "v", limit=5)
    assert top == ["s00002", "s00005", "s00008", "s00011", "s00014"]  # largest first, ties in table order


def test_printed_percentages_round_half_away_from_zero():
    """measure.numbers' rule, not half to even: 100 x 0.4325 = 43.25 is 43.3, and 0.25% is 0.3%."""
    from measure.report.views import cost

    t = small_tables()
    t["cost_sessions"] = t["cost_sessions"].with_columns(
        pl.when(pl.col("session_id") == S1[0]).then(0.4325).otherwise(pl.col("repeat_fraction")).alias("repeat_fraction"))
    assert cost.repeat_table(common.Report(tables=t))["% repeated"].to_list() == [43.3]
    assert (common.fmt_pct(0.25), common.fmt_x(0.25)) == ("0.3%", "0.3×")
