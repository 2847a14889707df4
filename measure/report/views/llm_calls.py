"""Views of 03-llm-calls: calls per session, chunking's recovery, cost per akm run."""

from __future__ import annotations

import polars as pl

from measure.report.views.common import (
    Report,
    _fmt_int,
    _fmt_x,
    _markdown,
    _wide,
    _with_session,
    ordered_strategies,
)


def calls_table(r: Report) -> pl.DataFrame:
    """LLM calls per session and strategy (one column per strategy)."""
    calls = r.tables["llm_calls"]
    strategies = ordered_strategies(calls["strategy"].unique().to_list())
    out = _wide(calls, "llm_calls", strategies, r)
    return _with_session(out, r).select("session", *strategies)


def chunking_table(r: Report) -> pl.DataFrame:
    """Chunked extraction per session: windows, chunks, calls, parent chars across chunks vs one call."""
    calls = r.tables["llm_calls"]
    ch = calls.filter(pl.col("strategy") == "chunked").select(
        "session_id",
        pl.col("parent_windows").alias("parent windows"),
        pl.col("subagent_chunks").alias("subagent chunks"),
        pl.col("llm_calls").alias("calls"),
        pl.col("parent_chars_in_prompts").alias("parent chars across chunks"),
    )
    base = calls.filter(pl.col("strategy") == "link").select(
        "session_id", pl.col("parent_chars_in_prompts").alias("baseline parent chars")
    )
    out = ch.join(base, on="session_id", how="left", maintain_order="left").with_columns(
        (pl.col("parent chars across chunks") / pl.max_horizontal(pl.col("baseline parent chars"), pl.lit(1)))
        .round(1)
        .alias("recovered ×")
    )
    return _with_session(out, r).select("session", pl.exclude("session", "session_id"))


def run_cost_table(r: Report) -> pl.DataFrame:
    """Run cost under akm's per-run session cap, strategies in display order."""
    cost = r.tables["run_cost"]
    order = {s: i for i, s in enumerate(ordered_strategies(cost["strategy"].unique().to_list()))}
    return (
        cost.with_columns(pl.col("strategy").replace_strict(order, return_dtype=pl.Int64).alias("_o"))
        .sort("_o")
        .drop("_o")
        .with_columns(pl.col("calls_per_run_mean").round(1), pl.col("cap_multiplier").round(1))
    )


def calls_summary(r: Report):
    """Markdown: the call multiplier of chunking, what it recovers, and what it costs per run."""
    calls = r.tables["llm_calls"]
    ch = calls.filter(pl.col("strategy") == "chunked")
    if ch.height == 0:
        return _markdown("No chunked rows: every strategy measured makes one call per session.")
    active = ch.filter(pl.col("llm_calls") > 0)
    ct = chunking_table(r).filter(pl.col("calls") > 0)
    text = (
        f"Chunked extraction makes {_fmt_int(ch['llm_calls'].sum())} calls for {ch.height} sessions"
        + (
            f" ({_fmt_x(active['multiplier'].min())}–{_fmt_x(active['multiplier'].max())} a single call"
            f" in the {active.height} sessions with events). It keeps "
            f"{_fmt_x(ct['recovered ×'].min())}–{_fmt_x(ct['recovered ×'].max())} the parent-origin chars of one "
            "parent-alone call."
            if active.height
            else "."
        )
    )
    cost = r.tables["run_cost"].filter(pl.col("strategy") == "chunked")
    if cost.height:
        row = cost.row(0, named=True)
        text += (
            f" Under akm's cap of {row['session_cap']} sessions per run, the most expensive run makes "
            f"**{_fmt_int(row['calls_per_run_max'])} calls** where a single-call strategy makes at most "
            f"{row['session_cap']} ({_fmt_x(row['cap_multiplier'])})."
        )
    return _markdown(text)
