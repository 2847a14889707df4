"""Views of 03-llm-calls: calls per session, chunking's recovery, cost per akm run."""

from __future__ import annotations

import polars as pl

from measure.numbers import ROUND_MODE
from measure.report.style import ordered_strategies, strategy_rank
from measure.report.views.common import Report, fmt_int, fmt_x, headed, markdown, per_session, plural, wide


def calls_table(r: Report) -> pl.DataFrame:
    """LLM calls per session and strategy (one column per strategy)."""
    calls = r.tables["llm_calls"]
    strategies = ordered_strategies(calls["strategy"].unique().to_list())
    return per_session(wide(calls, "llm_calls", strategies, r), r)


def chunking_table(r: Report) -> pl.DataFrame:
    """Chunked extraction per session: windows, chunks, calls, parent chars across chunks vs one call."""
    calls = r.tables["llm_calls"]
    ch = calls.filter(pl.col("strategy") == "chunked").select(
        "session_id",
        *headed({"parent_windows": "parent windows", "subagent_chunks": "subagent chunks", "llm_calls": "calls",
                 "parent_chars_in_prompts": "parent chars across chunks"}),
    )
    base = calls.filter(pl.col("strategy") == "link").select(
        "session_id", pl.col("parent_chars_in_prompts").alias("baseline parent chars"))
    out = ch.join(base, on="session_id", how="left", maintain_order="left").with_columns(
        (pl.col("parent chars across chunks") / pl.max_horizontal(pl.col("baseline parent chars"), pl.lit(1)))
        .round(1, mode=ROUND_MODE).alias("recovered ×"))
    return per_session(out, r)


def run_cost_table(r: Report) -> pl.DataFrame:
    """Run cost under akm's per-run session cap, strategies in display order."""
    cost = r.tables["run_cost"]
    single = cost.filter(pl.col("strategy") != "chunked")["calls_per_run_max"].max() or 0
    return cost.sort(strategy_rank(cost["strategy"])).with_columns(
        pl.col("calls_per_run_mean", "cap_multiplier").round(1, mode=ROUND_MODE),
        (pl.col("calls_per_run_max") / max(int(single), 1)).round(1, mode=ROUND_MODE).alias("x_single_call_run"),
    )


def calls_summary(r: Report):
    """Markdown: the call multiplier of chunking, what it recovers, and what it costs per run."""
    calls = r.tables["llm_calls"]
    ch = calls.filter(pl.col("strategy") == "chunked")
    if calls.height == 0:
        return markdown("No sessions were measured, so no LLM call would be made.")
    if ch.height == 0:
        return markdown("No chunked rows: every strategy measured makes one call per session.")
    active = ch.filter(pl.col("llm_calls") > 0)
    text = f"Chunked extraction makes {fmt_int(ch['llm_calls'].sum())} calls for {ch.height} sessions"
    if active.height:
        text += (f" ({fmt_x(active['multiplier'].min())}–{fmt_x(active['multiplier'].max())} a single call in the "
                 f"{active.height} sessions with events). " + _recovered(chunking_table(r).filter(pl.col("calls") > 0)))
    else:
        text += "."
    if k := skipped_sessions(r).height:
        text += (f" {k} {plural(k, 'session falls', 'sessions fall')} below akm's `minContentChars` gate "
                 "(fewer than 10 chars of raw text) and cost no call under the strategies listed below.")
    cost = r.tables["run_cost"]
    chunked, single = cost.filter(pl.col("strategy") == "chunked"), cost.filter(pl.col("strategy") != "chunked")
    if chunked.height and single.height:
        row = chunked.row(0, named=True)
        baseline = int(single["calls_per_run_max"].max() or 0)
        text += (f" Under akm's cap of {row['session_cap']} sessions per run ({fmt_int(row['sessions'])} sessions "
                 f"here, {fmt_int(row['runs'])} {plural(row['runs'], 'run')}), the most expensive run makes "
                 f"**{fmt_int(row['calls_per_run_max'])} calls** where a single-call strategy makes at most "
                 f"{fmt_int(baseline)}"
                 + (f" ({fmt_x(row['calls_per_run_max'] / baseline)})." if baseline else "."))
    return markdown(text)


def _recovered(ct: pl.DataFrame) -> str:
    """What chunking keeps of the parent, against one parent-alone call: a range, or "the same" when it is 1.0 everywhere."""
    lo, hi = ct["recovered ×"].min(), ct["recovered ×"].max()
    if lo == hi == 1.0:
        return ("Across its calls it keeps 1.0× the parent-origin chars of one parent-alone call in every session "
                "(to one decimal): here chunking recovers no parent content a single call loses.")
    return f"It keeps {fmt_x(lo)}–{fmt_x(hi)} the parent-origin chars of one parent-alone call."


def skipped_sessions(r: Report) -> pl.DataFrame:
    """Sessions akm's minContentChars gate skips under some strategy (no call): which, and for which strategies."""
    s = r.tables["sessions"]
    agg = s.filter(pl.col("skipped").is_not_null()).group_by("session_id").agg(
        pl.col("skipped").first().alias("skipped by"),
        pl.col("strategy").sort_by(strategy_rank(s["strategy"])).str.join(", ").alias("strategies"),
    )
    return per_session(agg, r)  # the notebook's caption says the rows are in RELEVANCE_ORDER
