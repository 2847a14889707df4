"""The `cost_sessions` table: one row per session joining its tokens, wake-ups and repeat reads."""

from __future__ import annotations

from measure.akm.records import Session
from measure.measurements.reads import repeat_rows, repeat_summary
from measure.measurements.subagents import Subagent
from measure.measurements.tasks import Timeline
from measure.measurements.tokens import Usage, token_rows
from measure.measurements.wakeups import wakeup_rows, wakeup_summary, wakeups


def cost_tables(session: Session, lines, subagents: dict[str, Subagent]) -> dict[str, list[dict]]:
    """Rows of `tokens`, `wakeups`, `repeat_reads` and `cost_sessions` from one read's collectors and
    the session's classified subagents (`subagents.classify`)."""
    parent = session.parent.path
    usage: dict[str, Usage] = lines.get("usage")
    timeline: Timeline | None = lines.get("tasks").get(parent)
    reads = lines.get("reads").get(parent, ())
    tokens = token_rows(session, usage, subagents)
    found = wakeups(timeline, usage.get(parent)) if timeline is not None else []
    wakeup_table = wakeup_rows(found)
    p, t = tokens[0], tokens[-1]  # the parent's row and the total's (`token_rows` order)
    summary = {"parent_api_calls": p["api_calls"], "parent_cache_read_tokens": p["cache_read_tokens"],
               "total_api_calls": t["api_calls"], "total_cache_read_tokens": t["cache_read_tokens"],
               **wakeup_summary(timeline, found, wakeup_table), **repeat_summary(reads)}
    return {"tokens": tokens, "wakeups": wakeup_table, "repeat_reads": repeat_rows(reads), "cost_sessions": [summary]}
