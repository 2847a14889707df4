"""Conclusions the data can overturn (review of the report pages): each sentence checked here comes
out differently on another test root, and identities are labelled as such, never as findings."""

from __future__ import annotations

import polars as pl

from measure.report import plots, shaping, style
from measure.report.views import common, cost, decision, eviction, llm_calls
from measure.runner.tables import frame
from measure.schema import TABLES
from tests.test_plots import S1, S2, _boxes, _overlap, small_tables, with_verdict


def _report(t: dict | None = None, **kw) -> common.Report:
    """A report of `t` (default small_tables) with the verdict `measure run` would derive from it."""
    return common.Report(tables=with_verdict(t if t is not None else small_tables()), sessions_root="fixtures/default", **kw)


def _s1_last_by_path() -> dict:
    """small_tables with S1 (the session that evicts) sorting after S2 by path: path order and relevance differ."""
    t = small_tables()
    for name, df in t.items():
        if "session_path" in df.columns and df.height:
            t[name] = df.with_columns(
                pl.when(pl.col("session_id") == S1[0]).then(pl.lit("-z" + S1[1])).otherwise(pl.col("session_path")).alias("session_path"))
    return t


def _empty_tables() -> dict:
    return {name: frame(TABLES[name], []) for name in TABLES}


def _no_subagents() -> dict:
    """small_tables as a root without subagent transcripts: fold reads the parent alone, nothing evicted."""
    t = small_tables()
    zero = dict(evicted_chars=0, evicted_chars_pct=0.0, budget_evicted_chars=0, budget_evicted_pct=0.0)
    t["eviction"] = t["eviction"].with_columns(pl.lit(80_000).alias("parent_kept_chars"), **{k: pl.lit(v) for k, v in zero.items()})
    t["budget_sweep"] = t["budget_sweep"].with_columns(pl.col("budget").alias("parent_kept_chars"), **{k: pl.lit(v) for k, v in zero.items()})
    t["sessions"] = t["sessions"].with_columns(pl.lit(0).alias("subagent_files"))
    return t


# 01-eviction ------------------------------------------------------------------------------------------


def test_hybrid_zero_eviction_is_labelled_an_identity_not_counted_as_a_finding():
    text = eviction.eviction_summary(_report()).data
    assert "`hybrid` evicts parent content in 0/2 sessions" not in text
    assert "*Identity, not a finding:* `hybrid` evicts nothing (its prompt is built from the parent's events only" in text
    assert "`fold` evicts parent content in 1/2 sessions (up to 25.0%)" in text


def test_hybrid_eviction_would_be_a_finding_if_it_ever_happened():
    t = small_tables()
    hyb = (pl.col("strategy") == "hybrid") & (pl.col("session_id") == S1[0])
    t["eviction"] = t["eviction"].with_columns(
        *(pl.when(hyb).then(500).otherwise(pl.col(c)).alias(c) for c in ("evicted_chars", "budget_evicted_chars")),
        *(pl.when(hyb).then(0.6).otherwise(pl.col(c)).alias(c) for c in ("evicted_chars_pct", "budget_evicted_pct")),
    )
    text = eviction.eviction_summary(_report(t)).data
    assert "`hybrid` evicts parent content in 1/2 sessions (up to 0.6%)" in text and "Identity" not in text


def test_a_root_without_subagents_does_not_present_zero_eviction_as_a_finding():
    with_sub = eviction.eviction_summary(_report()).data
    assert "fold evicts nothing in any session from maxTotalChars = 160,000" in with_sub
    assert "no subagent transcripts" not in with_sub
    text = eviction.eviction_summary(_report(_no_subagents())).data
    assert "no subagent transcripts" in text and "no eviction is possible here (identity)" in text
    assert "fold evicts nothing in any session from" not in text


def test_an_empty_root_says_no_sessions_on_the_eviction_page():
    r = _report(_empty_tables())
    assert eviction.eviction_summary(r).data == "No sessions were measured, so there is no eviction to report."
    assert "No budget sweep rows" in eviction.sweep_table(r).data


def test_the_sweep_table_uses_the_eviction_tables_words_and_units():
    t = eviction.sweep_table(_report())
    assert t.columns == ["strategy", "budget (chars)", "evicted (chars)", "stub-shortened (chars)",
                         "parent alone kept (chars)", "evicted (%)", "sessions evicting"]
    assert all("_" not in c for c in t.columns)


# 00-overview ------------------------------------------------------------------------------------------


def test_no_sessions_points_at_errors_only_when_there_are_some():
    r = _report(_empty_tables())
    text = decision.verdict(r).data
    assert "See the errors" not in text and "the root holds no session transcripts" in text
    t = _empty_tables()
    t["errors"] = frame(TABLES["errors"], [dict(path="p/x.jsonl", session_path=None, kind="unreadable", count=1, reason="r")])
    text = decision.verdict(_report(t)).data
    assert "The errors table below says why 1 file(s) could not be read." in text


# 03-llm-calls -----------------------------------------------------------------------------------------


def test_an_empty_root_does_not_claim_every_strategy_makes_one_call():
    assert llm_calls.calls_summary(_report(_empty_tables())).data == "No sessions were measured, so no LLM call would be made."
    t = small_tables()
    t["llm_calls"] = t["llm_calls"].filter(pl.col("strategy") != "chunked")
    assert "every strategy measured makes one call per session" in llm_calls.calls_summary(_report(t)).data


def test_chunking_recovery_says_nothing_recovered_when_it_is_one_everywhere():
    text = llm_calls.calls_summary(_report()).data
    assert "It keeps 3.8×–3.8× the parent-origin chars" in text  # small_tables: 300,000 vs 80,000 / 60,000
    t = small_tables()
    t["llm_calls"] = t["llm_calls"].with_columns(pl.col("parent_chars_in_prompts").alias("parent_chars_in_prompts"))
    t["llm_calls"] = t["llm_calls"].with_columns(
        pl.when(pl.col("strategy") == "chunked").then(80_000).otherwise(pl.col("parent_chars_in_prompts")).alias("parent_chars_in_prompts"))
    t["llm_calls"] = t["llm_calls"].with_columns(
        pl.when(pl.col("strategy") == "link").then(80_000).otherwise(pl.col("parent_chars_in_prompts")).alias("parent_chars_in_prompts"))
    text = llm_calls.calls_summary(_report(t)).data
    assert "1.0×–1.0×" not in text and "chunking recovers no parent content a single call loses" in text


def test_skipped_sessions_are_in_the_order_their_caption_states():
    t = _s1_last_by_path()
    t["sessions"] = t["sessions"].with_columns(pl.lit("min_content_chars").alias("skipped"))
    r = _report(t)
    short = style.short_ids([S1[0], S2[0]])
    # S1 evicts, so it leads, as the caption ("ordered by most parent content evicted, ...") says
    assert llm_calls.skipped_sessions(r)["session"].to_list() == [short[S1[0]], short[S2[0]]]


# 05-cost ----------------------------------------------------------------------------------------------


def test_overcount_cause_is_stated_only_when_there_is_an_overcount():
    text = cost.overcount_summary(_report()).data
    assert "lines repeat the usage of a response already counted" in text
    t = small_tables()
    t["tokens"] = t["tokens"].with_columns(
        pl.col("api_calls").alias("naive_lines"),
        *(pl.col(c).alias("naive_" + c) for c in shaping.TOKEN_COLUMNS),
    )
    text = cost.overcount_summary(_report(t)).data
    assert "gives the same" in text and "every response was written as a single line" in text
    assert "repeat the usage" not in text and "agent_progress" not in text


def test_placeholder_output_sentence_follows_the_data():
    assert "In 2 of the 2 sessions some calls were written by Claude Code 2.1" in cost.tokens_summary(_report()).data
    t = small_tables()
    t["tokens"] = t["tokens"].with_columns(pl.lit(False).alias("output_tokens_is_lower_bound"))
    text = cost.tokens_summary(_report(t)).data
    assert "Claude Code 2.1" not in text and "the output figures are exact" in text


def test_tokens_table_puts_the_sessions_that_matter_first():
    r = _report(_s1_last_by_path())
    short = style.short_ids([S1[0], S2[0]])
    assert cost.tokens_table(r)["session"].to_list()[0] == short[S1[0]]


# figures ----------------------------------------------------------------------------------------------


def test_tokens_legend_covers_no_bar():
    fig = plots.tokens_by_origin_bars(small_tables()["tokens"])
    renderer = _boxes(fig)
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    bars = [p.get_window_extent(renderer) for p in ax.patches if p.get_height() > 0]
    assert bars and not any(_overlap(legend, b) for b in bars)


def test_budget_sweep_without_any_eviction_says_so_instead_of_a_zero_budget_marker():
    drawn = plots.budget_sweep_curve(small_tables()["budget_sweep"]).axes[0]
    assert any(t.get_text() == "fold evicts nothing from 160k" for t in drawn.texts)
    ax = plots.budget_sweep_curve(_no_subagents()["budget_sweep"]).axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert texts == ["no strategy evicts parent content at any swept budget (20k–160k)"]
    assert not ax.lines


def test_duplication_counterfactual_is_not_called_stub_savings():
    """02's per-pair figure is what a stub *would* save; 01's stub savings are what stubs did replace."""
    from measure.report.views import duplication

    r = _report()
    for df in (duplication.pair_totals(r), duplication.pair_summary(r, "sidecar_tool_use_id"), duplication.top_pairs(r)):
        assert "a stub would save (chars)" in df.columns
        assert not {"stub saved chars", "stub_saved_chars"} & set(df.columns)


def test_subagent_share_of_tokens_only_when_subagents_made_calls():
    text = cost.tokens_summary(_report()).data
    assert "their subagent files the other 6, which spent" in text
    t = small_tables()
    parent = t["tokens"].filter(pl.col("origin") == "parent")
    total = parent.with_columns(pl.lit("total").alias("origin"), pl.lit(5, dtype=parent["origin_order"].dtype).alias("origin_order"))
    t["tokens"] = pl.concat([parent, total]).sort("session_id", "origin_order")  # a root whose subagents made no call
    text = cost.tokens_summary(_report(t)).data
    assert "subagent files the other" not in text and "no subagent file recorded a call" in text


def test_no_delegated_work_does_not_deny_background_results_the_parent_received():
    t = _no_subagents()
    t["sessions"] = t["sessions"].with_columns(
        pl.lit(0).alias("delegated_results"), pl.lit(0).alias("delegated_results_in_prompt"), pl.lit(0).alias("subagent_unique_chars_in_prompt"))
    text = decision.verdict(_report(t)).data
    assert text.startswith("**No delegated work under this root**") and "background task" not in text
    t["background"] = frame(TABLES["background"], [
        dict(session_id=S1[0], session_path=S1[1], task_id="b1", kind="agent", delivery="turn", notifications=1),
        dict(session_id=S1[0], session_path=S1[1], task_id="b2", kind="bash", delivery="never", notifications=0),
    ])
    text = decision.verdict(_report(t)).data
    assert "The parents did launch 2 background task(s) (1 result(s) reached them as a turn" in text
    assert "no delegated result" not in text


def test_per_row_tables_of_the_background_and_cost_pages_say_when_they_are_empty():
    """A bare DataFrame renders an empty table as a header row with no note; common.top says "No … here"."""
    from measure import paths

    for name in ("04-background", "05-cost"):
        lines = (paths.root() / "notebooks" / f"{name}.py").read_text(encoding="utf-8").splitlines()
        bare = [ln for ln in lines if "_table(r)" in ln and not ln.startswith(("common.top(", "#", " "))]
        assert bare == [], f"{name}: tables shown without a caption or empty note: {bare}"
    empty = common.top(pl.DataFrame({"session": []}, schema={"session": pl.String}), what="undelivered tasks",
                       table="background", order="session path")
    assert repr(empty) == "No undelivered tasks here."


def test_wakeups_name_the_tasks_when_a_task_woke_its_parent_twice():
    """05-cost counts notification turns, 04-background counts tasks: say so when the two differ."""
    t = small_tables()
    row = dict(session_id=S1[0], session_path=S1[1], task_id="a1", task_kind="agent")
    t["wakeups"] = frame(TABLES["wakeups"], [{**row, "line": i, "task_id": f"a{i}"} for i in (1, 2, 3)])
    assert "**3 notifications** woke a parent" in cost.wakeups_summary(_report(t)).data
    t["wakeups"] = frame(TABLES["wakeups"], [{**row, "line": i, "task_id": k} for i, k in ((1, "a1"), (2, "a1"), (3, "a2"))])
    assert "**3 notifications** from 2 tasks woke a parent" in cost.wakeups_summary(_report(t)).data


def _verdict_report(hybrid_results: int = 1, hybrid_unique: int = 0) -> common.Report:
    t = small_tables()
    by = {"link": (1, 0), "hybrid": (hybrid_results, hybrid_unique)}
    t["sessions"] = t["sessions"].with_columns(
        pl.col("strategy").replace_strict({k: v[0] for k, v in by.items()}, default=2, return_dtype=pl.Int64).alias("delegated_results_in_prompt"),
        pl.col("strategy").replace_strict({k: v[1] for k, v in by.items()}, default=500, return_dtype=pl.Int64).alias("subagent_unique_chars_in_prompt"),
    )
    return _report(t)


def test_parent_only_prompts_are_labelled_identities_on_the_overview():
    text = decision.verdict(_verdict_report()).data
    line = next(ln for ln in text.splitlines() if ln.startswith("- **Subagent-only chars"))
    assert "link 0 *(identity: link's prompt holds parent events only" in line
    assert "hybrid 0 *(identity: hybrid's prompt holds parent events only" in line
    line = next(ln for ln in text.splitlines() if ln.startswith("- **Delegated results"))
    assert "hybrid 2 *(identity: hybrid's prompt events are link's kept set: equal to link" in line


def test_a_broken_identity_is_shown_as_a_finding():
    text = decision.verdict(_verdict_report(hybrid_results=3, hybrid_unique=7)).data
    assert "hybrid 14;" in next(ln for ln in text.splitlines() if ln.startswith("- **Subagent-only chars"))
    assert "hybrid 6;" in next(ln for ln in text.splitlines() if ln.startswith("- **Delegated results"))
