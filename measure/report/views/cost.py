"""Views of 05-cost: native tokens by origin, the per-line over-count, wake-ups, batching, repeat reads."""

from __future__ import annotations

import polars as pl

from measure.report.views.common import (
    Report,
    _fmt_int,
    _fmt_pct,
    _fmt_x,
    _markdown,
    _with_session,
)

ORIGIN_LABELS = {
    "parent": "parent",
    "task_agent": "task agents",
    "workflow_agent": "workflow agents",
    "compaction_helper": "compaction",
    "other": "other subagents",
    "total": "total",
}
"""Display names of the tokens table's origins."""

TOKEN_COLUMNS = ("input_tokens", "cache_creation_tokens", "cache_read_tokens", "output_tokens")
"""The four usage fields whose sum is a call's tokens."""


def _all_tokens(prefix: str = "") -> pl.Expr:
    return pl.sum_horizontal(*(pl.col(prefix + c) for c in TOKEN_COLUMNS))


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def tokens_table(r: Report) -> pl.DataFrame:
    """Per session and origin: calls, the four usage fields, and the naive per-line figures."""
    t = r.tables["tokens"]
    out = t.select(
        "session_id",
        pl.col("origin").replace_strict(ORIGIN_LABELS, default=pl.col("origin")).alias("origin"),
        pl.col("api_calls").alias("calls"),
        pl.col("input_tokens").alias("input"),
        pl.col("cache_creation_tokens").alias("cache write"),
        pl.col("cache_read_tokens").alias("cache read"),
        pl.col("output_tokens").alias("output"),
        pl.col("output_tokens_is_lower_bound").alias("output is a lower bound"),
        pl.col("naive_lines").alias("per-line calls"),
        (_all_tokens("naive_") / pl.max_horizontal(_all_tokens(), pl.lit(1))).round(2).alias("per-line ÷ deduplicated tokens"),
    )
    return _with_session(out, r).select("session", pl.exclude("session", "session_id"))


def tokens_summary(r: Report):
    """Markdown: calls and tokens by origin over the run, and how much of it the subagents spent."""
    t = r.tables["tokens"]
    if t.height == 0:
        return _markdown("No sessions were measured, so there is no token usage to report.")
    total = t.filter(pl.col("origin") == "total")
    parent = t.filter(pl.col("origin") == "parent")
    tokens_total = int(total.select(_all_tokens()).to_series().sum())
    tokens_parent = int(parent.select(_all_tokens()).to_series().sum())
    lower = int(total["output_tokens_is_lower_bound"].sum())
    text = (
        f"The {total.height} sessions made **{_fmt_int(total['api_calls'].sum())} API calls** "
        f"(one per `message.id`) for {_fmt_int(tokens_total)} tokens; the parents made "
        f"{_fmt_int(parent['api_calls'].sum())} of those calls and their subagent files the other "
        f"{_fmt_int(total['api_calls'].sum() - parent['api_calls'].sum())}, which spent "
        f"{_fmt_pct(100 * _ratio(tokens_total - tokens_parent, tokens_total)) if tokens_total else 'n/a'} of the tokens. "
        f"Cache reads are {_fmt_pct(100 * _ratio(total['cache_read_tokens'].sum(), tokens_total)) if tokens_total else 'n/a'} "
        f"of all tokens. In {lower} of the {total.height} sessions some calls were written by Claude Code 2.1 or "
        "later, whose transcripts store a placeholder `output_tokens`: their output figures are lower bounds."
    )
    return _markdown(text)


def overcount_summary(r: Report):
    """Markdown: what summing every assistant line's usage (per-line tools) would report instead."""
    total = r.tables["tokens"].filter(pl.col("origin") == "total")
    calls = int(total["api_calls"].sum())
    if calls == 0:
        return _markdown("No API calls were found, so per-line sums and deduplicated sums agree trivially.")
    dedup = int(total.select(_all_tokens()).to_series().sum())
    naive = int(total.select(_all_tokens("naive_")).to_series().sum())
    progress = int(total["progress_usage_lines"].sum())
    return _markdown(
        f"Summing `usage` over every assistant line, as per-line tools do, counts "
        f"{_fmt_int(total['naive_lines'].sum())} calls instead of {_fmt_int(calls)} "
        f"({_fmt_x(_ratio(total['naive_lines'].sum(), calls))}) and {_fmt_int(naive)} tokens instead of "
        f"{_fmt_int(dedup)} ({_fmt_x(_ratio(naive, dedup))}), because one response is written as one line per "
        f"content block, each repeating the response's usage. A further {_fmt_int(progress)} `agent_progress` "
        "lines re-embed subagent messages with their usage in parent files; they are never counted."
    )


def wakeups_table(r: Report) -> pl.DataFrame:
    """Per session with notifications: wake-up turns, their calls and cache reads, and batching."""
    c = r.tables["cost_sessions"].filter(pl.col("notifications_enqueued") + pl.col("wakeup_turns") > 0)
    out = c.select(
        "session_id",
        pl.col("notifications_enqueued").alias("notifications queued"),
        pl.col("notifications_undelivered").alias("undelivered (no turn)"),
        pl.col("wakeup_turns").alias("wake-up turns"),
        pl.col("wakeup_calls").alias("calls"),
        pl.col("wakeup_cache_read_tokens").alias("cache read"),
        (100 * pl.col("wakeup_cache_read_tokens") / pl.max_horizontal(pl.col("parent_cache_read_tokens"), pl.lit(1)))
        .round(1)
        .alias("% of parent cache read"),
        pl.col("batchable_wakeups").alias("batchable"),
        pl.col("batched_turns").alias("turns if batched"),
        pl.col("batch_saved_calls").alias("calls saved"),
        pl.col("batch_saved_cache_read_tokens").alias("cache read saved"),
    )
    return _with_session(out, r).select("session", pl.exclude("session", "session_id"))


def wakeups_summary(r: Report):
    """Markdown: how many notifications woke the parent and what those turns read from the cache."""
    c = r.tables["cost_sessions"]
    turns = int(c["wakeup_turns"].sum()) if c.height else 0
    if turns == 0:
        return _markdown(
            "No notification was delivered to a parent as a turn of its own "
            f"({_fmt_int(c['notifications_enqueued'].sum() if c.height else 0)} were queued), so wake-ups cost nothing here."
        )
    sessions = int((c["wakeup_turns"] > 0).sum())
    cr = int(c["wakeup_cache_read_tokens"].sum())
    share = _ratio(cr, int(c.filter(pl.col("wakeup_turns") > 0)["parent_cache_read_tokens"].sum()))
    return _markdown(
        f"**{turns} notifications** woke a parent in {sessions} sessions. The turns they opened made "
        f"{_fmt_int(c['wakeup_calls'].sum())} API calls that read {_fmt_int(cr)} tokens from the cache, "
        f"{_fmt_pct(100 * share) if share is not None else 'n/a'} of those parents' cache reads: each wake-up re-reads "
        f"the whole context. {_fmt_int(c['notifications_undelivered'].sum())} queued notifications were never "
        "delivered as a turn (removed from the queue, or still queued when the transcript ends)."
    )


def batching_summary(r: Report):
    """Markdown: the counterfactual of delivering what was already queued as one turn."""
    c = r.tables["cost_sessions"]
    turns = int(c["wakeup_turns"].sum()) if c.height else 0
    if turns == 0:
        return _markdown("With no wake-up turns there is nothing to batch.")
    batchable = int(c["batchable_wakeups"].sum())
    return _markdown(
        f"{batchable} of the {turns} wake-ups were already queued when the previous notification's turn began. "
        f"Delivering what is queued at each turn boundary as one turn (no waiting window) would need "
        f"{_fmt_int(c['batched_turns'].sum())} turns instead of {turns} and save "
        f"**{_fmt_int(c['batch_saved_calls'].sum())} calls** and {_fmt_int(c['batch_saved_cache_read_tokens'].sum())} "
        "cache-read tokens, assuming a batch turn costs what the first turn of its batch cost."
    )


def repeat_table(r: Report) -> pl.DataFrame:
    """Per session with reads of background work: reads, chars, repeated chars and the fraction."""
    c = r.tables["cost_sessions"].filter(pl.col("background_reads") > 0)
    out = c.select(
        "session_id",
        pl.col("background_reads").alias("reads"),
        pl.col("repeat_reads").alias("reads with repeats"),
        pl.col("read_chars").alias("chars read"),
        pl.col("repeated_chars").alias("chars already held"),
        (100 * pl.col("repeat_fraction")).round(1).alias("% repeated"),
    )
    return _with_session(out, r).select("session", pl.exclude("session", "session_id"))


def repeat_summary(r: Report):
    """Markdown: how much of what the parents read from background work they already held."""
    c = r.tables["cost_sessions"]
    reads = int(c["background_reads"].sum()) if c.height else 0
    if reads == 0:
        return _markdown("No parent read the output of background work (TaskOutput, BashOutput, an output file or a resumed agent).")
    chars = int(c["read_chars"].sum())
    repeated = int(c["repeated_chars"].sum())
    return _markdown(
        f"Parents read background work {reads} times in {int((c['background_reads'] > 0).sum())} sessions, "
        f"{_fmt_int(chars)} chars in all. **{_fmt_pct(100 * _ratio(repeated, chars))} of those chars** "
        f"({_fmt_int(repeated)}) repeated lines the parent had already received for the same task, from an "
        "earlier read or from the notification."
    )
