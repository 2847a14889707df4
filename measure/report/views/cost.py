"""Views of 05-cost: tokens by origin, the per-line over-count, wake-ups, batching, repeat reads."""

from __future__ import annotations

import polars as pl

from measure.numbers import ROUND_MODE
from measure.report.shaping import all_tokens
from measure.report.style import ORIGIN_LABELS
from measure.report.views.common import Report, fmt_int, fmt_pct, fmt_x, headed, markdown, per_session


def _share(part: float, whole: float) -> str:
    """`part` as a percentage of `whole` ("n/a" of nothing)."""
    return fmt_pct(100 * (part / whole)) if whole else "n/a"


def _tokens(t: pl.DataFrame, prefix: str = "") -> int:
    """Every token of `t` (the four usage fields, or their `prefix`ed per-line sums) over all its rows."""
    return int(t.select(all_tokens(prefix)).to_series().sum())


def tokens_table(r: Report) -> pl.DataFrame:
    """Per session and origin: calls, the four usage fields, and the naive per-line figures."""
    out = r.tables["tokens"].select(
        "session_id",
        pl.col("origin").replace_strict(ORIGIN_LABELS, default=pl.col("origin")).alias("origin"),
        *headed({"api_calls": "calls", "input_tokens": "input", "cache_creation_tokens": "cache write",
                 "cache_read_tokens": "cache read", "output_tokens": "output",
                 "output_tokens_is_lower_bound": "output is a lower bound", "naive_lines": "per-line calls"}),
        (all_tokens("naive_") / pl.max_horizontal(all_tokens(), pl.lit(1))).round(2, mode=ROUND_MODE)
        .alias("per-line ÷ deduplicated tokens"),
    )
    # Relevance order, like every per-session table: in path order the sessions with subagents sink below the cut.
    return per_session(out, r)


def tokens_summary(r: Report):
    """Markdown: calls and tokens by origin over the run, and how much of it the subagents spent."""
    t = r.tables["tokens"]
    if t.height == 0:
        return markdown("No sessions were measured, so there is no token usage to report.")
    total, parent = (t.filter(pl.col("origin") == origin) for origin in ("total", "parent"))
    tokens_total, tokens_parent = _tokens(total), _tokens(parent)
    lower = int(total["output_tokens_is_lower_bound"].sum())
    sub_calls = int(total["api_calls"].sum() - parent["api_calls"].sum())
    split = (f"; the parents made {fmt_int(parent['api_calls'].sum())} of those calls and their subagent files the other "
             f"{fmt_int(sub_calls)}, which spent {_share(tokens_total - tokens_parent, tokens_total)} of the tokens. "
             if sub_calls else "; every call was the parents' own: no subagent file recorded a call. ")
    return markdown(
        f"The {total.height} sessions made **{fmt_int(total['api_calls'].sum())} API calls** (one per `message.id`) for "
        f"{fmt_int(tokens_total)} tokens{split}Cache reads are {_share(total['cache_read_tokens'].sum(), tokens_total)} "
        "of all tokens. "
        + (f"In {lower} of the {total.height} sessions some calls were written by Claude Code 2.1 or later, whose "
           "transcripts store a placeholder `output_tokens`: their output figures are lower bounds." if lower else
           "No session holds a placeholder `output_tokens`: the output figures are exact."))


def overcount_summary(r: Report):
    """Markdown: what summing every assistant line's usage (per-line tools) would report instead."""
    total = r.tables["tokens"].filter(pl.col("origin") == "total")
    calls = int(total["api_calls"].sum())
    if calls == 0:
        return markdown("No API calls were found, so per-line sums and deduplicated sums agree trivially.")
    dedup, naive = _tokens(total), _tokens(total, "naive_")
    progress = int(total["progress_usage_lines"].sum())
    lines = int(total["naive_lines"].sum())
    text = "Summing `usage` over every assistant line, as per-line tools do, "
    if lines == calls and naive == dedup:
        text += (f"gives the same {fmt_int(calls)} calls and {fmt_int(dedup)} tokens here: every response was written as "
                 "a single line.")
    else:
        text += (f"counts {fmt_int(lines)} calls instead of {fmt_int(calls)} ({fmt_x(lines / calls)}) and "
                 f"{fmt_int(naive)} tokens instead of {fmt_int(dedup)} ({fmt_x(naive / dedup if dedup else None)}): "
                 f"{fmt_int(lines - calls)} lines repeat the usage of a response already counted (one response is "
                 "written as one line per content block).")
    if progress:
        text += (f" A further {fmt_int(progress)} `agent_progress` lines re-embed subagent messages with their usage in "
                 "parent files; they are never counted.")
    return markdown(text)


def wakeups_table(r: Report) -> pl.DataFrame:
    """Per session with notifications: wake-up turns, their calls and cache reads, and batching."""
    out = r.tables["cost_sessions"].filter(pl.col("notifications_enqueued") + pl.col("wakeup_turns") > 0).select(
        "session_id",
        *headed({"notifications_enqueued": "notifications queued", "notifications_undelivered": "undelivered (no turn)",
                 "wakeup_turns": "wake-up turns", "wakeup_calls": "calls", "wakeup_cache_read_tokens": "cache read"}),
        (100 * pl.col("wakeup_cache_read_tokens") / pl.max_horizontal(pl.col("parent_cache_read_tokens"), pl.lit(1)))
        .round(1, mode=ROUND_MODE).alias("% of parent cache read"),
        *headed({"batchable_wakeups": "batchable", "batched_turns": "turns if batched", "batch_saved_calls": "calls saved",
                 "batch_saved_cache_read_tokens": "cache read saved"}),
    )
    return per_session(out, r, relevance=False)


def wakeups_summary(r: Report):
    """Markdown: how many notifications woke the parent and what those turns read from the cache."""
    c = r.tables["cost_sessions"]
    turns = int(c["wakeup_turns"].sum())
    if turns == 0:
        return markdown("No notification was delivered to a parent as a turn of its own "
                        f"({fmt_int(c['notifications_enqueued'].sum())} were queued), so wake-ups cost nothing here.")
    sessions = int((c["wakeup_turns"] > 0).sum())
    cr = int(c["wakeup_cache_read_tokens"].sum())
    parent_reads = int(c.filter(pl.col("wakeup_turns") > 0)["parent_cache_read_tokens"].sum())
    w = r.tables.get("wakeups")
    tasks = w.select("session_id", "task_id").unique().height if w is not None and w.height else None
    # 04-background counts tasks; a task that notifies twice (a resumed agent) wakes its parent twice.
    of_tasks = f" from {fmt_int(tasks)} tasks" if tasks is not None and tasks != turns else ""
    return markdown(f"**{turns} notifications**{of_tasks} woke a parent in {sessions} sessions. The turns they opened "
                    f"made {fmt_int(c['wakeup_calls'].sum())} API calls that read {fmt_int(cr)} tokens from the cache, "
                    f"{_share(cr, parent_reads)} of those parents' cache reads: each wake-up re-reads the whole context. "
                    f"{fmt_int(c['notifications_undelivered'].sum())} queued notifications were never delivered as a "
                    "turn (removed from the queue, or still queued when the transcript ends).")


def batching_summary(r: Report):
    """Markdown: the counterfactual of delivering what was already queued as one turn."""
    c = r.tables["cost_sessions"]
    turns = int(c["wakeup_turns"].sum())
    if turns == 0:
        return markdown("With no wake-up turns there is nothing to batch.")
    return markdown(f"{int(c['batchable_wakeups'].sum())} of the {turns} wake-ups were already queued when the previous "
                    "notification's turn began. Delivering what is queued at each turn boundary as one turn (no waiting "
                    f"window) would need {fmt_int(c['batched_turns'].sum())} turns instead of {turns} and save "
                    f"**{fmt_int(c['batch_saved_calls'].sum())} calls** and "
                    f"{fmt_int(c['batch_saved_cache_read_tokens'].sum())} cache-read tokens, assuming a batch turn costs "
                    "what the first turn of its batch cost.")


def repeat_table(r: Report) -> pl.DataFrame:
    """Per session with reads of background work: reads, chars, repeated chars and the fraction."""
    out = r.tables["cost_sessions"].filter(pl.col("background_reads") > 0).select(
        "session_id",
        *headed({"background_reads": "reads", "repeat_reads": "reads with repeats", "read_chars": "chars read",
                 "repeated_chars": "chars already held"}),
        (100 * pl.col("repeat_fraction")).round(1, mode=ROUND_MODE).alias("% repeated"),
    )
    return per_session(out, r, relevance=False)


def repeat_summary(r: Report):
    """Markdown: how much of what the parents read from background work they already held."""
    c = r.tables["cost_sessions"]
    reads = int(c["background_reads"].sum())
    if reads == 0:
        return markdown("No parent read the output of background work (TaskOutput, BashOutput, an output file or a resumed agent).")
    chars, repeated = int(c["read_chars"].sum()), int(c["repeated_chars"].sum())
    return markdown(f"Parents read background work {reads} times in {int((c['background_reads'] > 0).sum())} sessions, "
                    f"{fmt_int(chars)} chars in all. **{_share(repeated, chars)} of those chars** ({fmt_int(repeated)}) "
                    "repeated lines the parent had already received for the same task, from an earlier read or from the "
                    "notification.")
