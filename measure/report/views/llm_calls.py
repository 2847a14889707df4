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
    by_relevance,
    ordered_strategies,
)


def calls_table(r: Report) -> pl.DataFrame:
    """LLM calls per session and strategy (one column per strategy)."""
    calls = r.tables["llm_calls"]
    strategies = ordered_strategies(calls["strategy"].unique().to_list())
    out = _wide(calls, "llm_calls", strategies, r)
    return by_relevance(_with_session(out, r), r).select("session", *strategies)


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
    return by_relevance(_with_session(out, r), r).select("session", pl.exclude("session", "session_id"))


def run_cost_table(r: Report) -> pl.DataFrame:
    """Run cost under akm's per-run session cap, strategies in display order."""
    cost = r.tables["run_cost"]
    order = {s: i for i, s in enumerate(ordered_strategies(cost["strategy"].unique().to_list()))}
    single = cost.filter(pl.col("strategy") != "chunked")["calls_per_run_max"].max() or 0
    return (
        cost.with_columns(pl.col("strategy").replace_strict(order, return_dtype=pl.Int64).alias("_o"))
        .sort("_o")
        .drop("_o")
        .with_columns(
            pl.col("calls_per_run_mean").round(1),
            pl.col("cap_multiplier").round(1),
            (pl.col("calls_per_run_max") / max(int(single), 1)).round(1).alias("x_single_call_run"),
        )
    )


def calls_summary(r: Report):
    """Markdown: the call multiplier of chunking, what it recovers, and what it costs per run."""
    calls = r.tables["llm_calls"]
    ch = calls.filter(pl.col("strategy") == "chunked")
    if calls.height == 0:
        return _markdown("No sessions were measured, so no LLM call would be made.")
    if ch.height == 0:
        return _markdown("No chunked rows: every strategy measured makes one call per session.")
    active = ch.filter(pl.col("llm_calls") > 0)
    ct = chunking_table(r).filter(pl.col("calls") > 0)
    text = (
        f"Chunked extraction makes {_fmt_int(ch['llm_calls'].sum())} calls for {ch.height} sessions"
        + (
            f" ({_fmt_x(active['multiplier'].min())}–{_fmt_x(active['multiplier'].max())} a single call"
            f" in the {active.height} sessions with events). " + _recovered(ct)
            if active.height
            else "."
        )
    )
    skipped = skipped_sessions(r)
    if skipped.height:
        text += (
            f" {skipped.height} session{' falls' if skipped.height == 1 else 's fall'} below akm's `minContentChars` gate "
            "(fewer than 10 chars of raw text) and cost no call under the strategies listed below."
        )
    cost = r.tables["run_cost"]
    chunked = cost.filter(pl.col("strategy") == "chunked")
    single = cost.filter(pl.col("strategy") != "chunked")
    if chunked.height and single.height:
        row = chunked.row(0, named=True)
        baseline = int(single["calls_per_run_max"].max() or 0)
        text += (
            f" Under akm's cap of {row['session_cap']} sessions per run ({_fmt_int(row['sessions'])} sessions here, "
            f"{_fmt_int(row['runs'])} run{'s' if row['runs'] != 1 else ''}), the most expensive run makes "
            f"**{_fmt_int(row['calls_per_run_max'])} calls** where a single-call strategy makes at most "
            f"{_fmt_int(baseline)}"
            + (f" ({_fmt_x(row['calls_per_run_max'] / baseline)})." if baseline else ".")
        )
    return _markdown(text)


def _recovered(ct: pl.DataFrame) -> str:
    """What chunking keeps of the parent, against one parent-alone call: a range, or "the same" when it is 1.0 everywhere."""
    lo, hi = ct["recovered ×"].min(), ct["recovered ×"].max()
    if lo == hi == 1.0:
        return (
            "Across its calls it keeps 1.0× the parent-origin chars of one parent-alone call in every session "
            "(to one decimal): here chunking recovers no parent content a single call loses."
        )
    return f"It keeps {_fmt_x(lo)}–{_fmt_x(hi)} the parent-origin chars of one parent-alone call."


def skipped_sessions(r: Report) -> pl.DataFrame:
    """Sessions akm's minContentChars gate skips under some strategy (no call): which, and for which strategies."""
    s = r.tables["sessions"]
    if "skipped" not in s.columns:
        return pl.DataFrame(schema={"session": pl.String, "skipped by": pl.String, "strategies": pl.String})
    sk = s.filter(pl.col("skipped").is_not_null())
    order = {x: i for i, x in enumerate(ordered_strategies(s["strategy"].to_list()))}
    agg = sk.group_by("session_id").agg(
        pl.col("skipped").first().alias("skipped by"),
        pl.col("strategy").sort_by(pl.col("strategy").replace_strict(order, return_dtype=pl.Int64)).str.join(", ").alias("strategies"),
    )
    # by_relevance: the notebook's caption says the rows are in RELEVANCE_ORDER.
    return by_relevance(_with_session(agg, r), r).select("session", "skipped by", "strategies")
