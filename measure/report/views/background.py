"""Views of 04-background: launch stubs vs run times, deliveries, late results, re-extractions."""

from __future__ import annotations

import polars as pl

from measure.numbers import ROUND_MODE, rounded
from measure.report.shaping import deliveries, replay_totals
from measure.report.views.common import Report, fmt_int, markdown, per_session


def _fmt_s(x: float | None) -> str:
    return "n/a" if x is None else f"{rounded(x / 60, 1):,.1f} min" if x >= 120 else f"{rounded(x, 1):,.1f} s"


def background_summary(r: Report):
    """Markdown: how many background tasks, how long their stub says they ran vs how long they ran."""
    bg = r.tables["background"]
    if bg.height == 0:
        return markdown("No session of this run launched a background task: the launch-stub, delivery and late-result "
                        "sections below are empty. The replay at the end covers every session, background tasks or not.")
    timed = bg.filter(pl.col("stub_seconds").is_not_null() & pl.col("run_seconds").is_not_null())
    text = f"{fmt_int(bg.height)} background tasks in {fmt_int(bg['session_id'].n_unique())} sessions."
    if timed.height:
        longer = timed.filter(pl.col("run_seconds") > pl.col("stub_seconds")).height
        text += (f" For the {fmt_int(timed.height)} with both a launch stub and a completion, the stub arrives a median"
                 f" {_fmt_s(timed['stub_seconds'].median())} after the launch while the task completes a median"
                 f" {_fmt_s(timed['run_seconds'].median())} after it (longest: {_fmt_s(timed['run_seconds'].max())});"
                 f" {fmt_int(longer)} of them ran longer than their stub says."
                 + (" A tool that trusts the launch result records the stub, not the work, for those." if longer
                    else " Here the launch stub never understates a task's run time."))
    if untimed := bg.height - timed.height:
        text += (f" {fmt_int(untimed)} have no launch line or no completion in the files (launched in another session,"
                 " a workflow whose launch tool is not a task tool, or never completed) and are left out of the times.")
    return markdown(text)


def stub_table(r: Report) -> pl.DataFrame:
    """Per kind: tasks, median launch stub and median true run time (seconds), the longest run."""
    return r.tables["background"].group_by("kind").agg(
        pl.len().alias("tasks"),
        pl.col("stub_seconds").median().round(1, mode=ROUND_MODE).alias("median stub (s)"),
        pl.col("run_seconds").median().round(1, mode=ROUND_MODE).alias("median run (s)"),
        pl.col("run_seconds").max().round(1, mode=ROUND_MODE).alias("longest run (s)"),
    ).sort("kind")


def deliveries_table(r: Report) -> pl.DataFrame:
    """Tasks by kind and Claude Code version, one column per delivery (turn, removed, never)."""
    return deliveries(r.tables["background"])


def _tasks(r: Report, which: pl.Expr, *columns: str) -> pl.DataFrame:
    """The background tasks `which` selects, in session order, `columns` under TASK_LABELS' headers."""
    out = r.tables["background"].filter(which).select("session_id", *columns)
    return per_session(out, r, relevance=False).rename(TASK_LABELS, strict=False)


def undelivered_table(r: Report) -> pl.DataFrame:
    """Tasks whose result never reached the parent as a turn (removed from the queue, or never consumed)."""
    return _tasks(r, pl.col("delivery") != "turn", "task_id", "kind", "cc_version", "status", "notifications", "removed",
                  "delivery", "completed_after_parent_end", "result_chars")


TASK_LABELS: dict[str, str] = {
    "task_id": "task id", "cc_version": "Claude Code", "result_chars": "result (chars)",
    "completed_after_parent_end": "completed after the parent's last turn", "completed_by": "completion seen in",
    "parent_end_at": "parent's last turn ended", "completed_at": "completed", "run_seconds": "run (s)",
    "transcript_events": "subagent transcript events",
}
"""Headers of the per-task tables: the words of the deliveries table and the summaries, with units."""


def late_table(r: Report) -> pl.DataFrame:
    """Tasks that completed after the parent's last turn ended."""
    return _tasks(r, pl.col("completed_after_parent_end").fill_null(False), "task_id", "kind", "delivery", "completed_by",
                  "parent_end_at", "completed_at", "run_seconds", "transcript_events")


def delivery_summary(r: Report):
    """Markdown: results never delivered and results after the parent's last turn, and what they mean for akm."""
    bg = r.tables["background"]
    if bg.height == 0:
        return markdown("No background tasks, so nothing to deliver.")
    removed, never = (bg.filter(pl.col("delivery") == d) for d in ("removed", "never"))
    never_notified = never.filter(pl.col("notifications") > 0).height
    late = bg.filter(pl.col("completed_after_parent_end").fill_null(False))
    killed = bg.filter(pl.col("killed")).height
    text = (
        f"{fmt_int(bg.filter(pl.col('delivery') == 'turn').height)} of {fmt_int(bg.height)} background results reached"
        f" the parent as a turn. {fmt_int(removed.height)} were enqueued and removed without a user line"
        f" ({fmt_int(removed.filter(pl.col('killed')).height)} of them killed; {fmt_int(killed)} killed in all):"
        " removal is not delivery: no user turn carries their notification (a parent may still have read the"
        " result with TaskOutput, as CC 2.0.x parents did)."
        f" {fmt_int(never.height)} never reached a turn nor were removed"
        + (f" ({fmt_int(never_notified)} with a notification still in the queue, {fmt_int(never.height - never_notified)}"
           " with none at all)." if never.height else ".")
        + f" {fmt_int(late.height)} completed after the parent's last turn"
    )
    if not late.height:
        return markdown(text + ".")
    return markdown(text + f"; {fmt_int(late.filter(pl.col('transcript_events').is_not_null()).height)} of those have a"
                    " subagent transcript. akm's content hash covers it, so its late lines move the hash after the parent"
                    " is done: the fold strategies send them only if akm extracts again, and hybrid extracts again without"
                    " sending them, since its prompt is built from the parent's events (true by construction).")


def replay_table(r: Report) -> pl.DataFrame:
    """Per strategy: sessions replayed, moments, extractions, re-extractions, wasted ones and their LLM calls."""
    return replay_totals(r.tables["replay"])


def replay_summary(r: Report):
    """Markdown: per strategy, what the replay schedule implies for akm, in plain sentences."""
    rp = r.tables["replay"]
    if rp.height == 0:
        if not any(r.tables[t].height for t in ("sessions", "background") if t in r.tables):
            return markdown("No sessions were measured, so there was nothing to replay.")
        return markdown("This run did not replay the sessions (`measure run --replay`); `measure report` always does.")
    moments = {"turn_end": "at the end of every parent turn and at the final state", "final": "at the final state only"}
    when = "; ".join(moments.get(s, f"every {s.partition(':')[2]} minutes and at the final state")
                     for s in sorted(set(rp["schedule"].to_list())))
    t = replay_table(r)
    thinned = fmt_int(rp.filter(pl.col("moments_dropped") > 0)["session_id"].n_unique())
    lines = [
        f"akm's pipeline ran on each session as it stood {when}"
        f" ({fmt_int(t['moments'].max() if t.height else 0)} moments over {fmt_int(rp['session_id'].n_unique())} sessions"
        + (f", thinned to the per-session cap in {thinned} sessions" if rp["moments_dropped"].sum() else "") + ")."
        " An extraction is a moment whose content hash differs from the previous extraction's; a wasted one"
        " sends the same transcript and preserved refs as the extraction before it."
    ]
    for row in t.iter_rows(named=True):
        late = row["after the parent's last event"]
        lines.append(
            f"- **{row['strategy']}** would extract {fmt_int(row['extractions'])} times, re-extracting"
            f" {fmt_int(row['sessions re-extracted'])} sessions {fmt_int(row['re-extractions'])} times"
            f" ({fmt_int(row['LLM calls'])} LLM calls in all)"
            + (f"; it would re-extract {fmt_int(row['sessions with waste'])} sessions {fmt_int(row['wasted'])} times with"
               f" an unchanged prompt: {fmt_int(row['wasted LLM calls'])} LLM calls that show the LLM nothing new"
               if row["wasted"] else "; no re-extraction repeats its prompt")
            + (f"; {fmt_int(late)} of its extractions come after the parent's last event, triggered by other files' lines"
               " alone." if late else "."))
    late = rp.group_by("session_id").agg(pl.col("late_results").max())["late_results"].sum()
    lines.append(f"\n{fmt_int(late)} background results completed after their parent's last turn: akm sees them only if "
                 "it extracts again after that moment." if late else "\nNo background result completed after its parent's "
                 "last turn, so no result depends on a late re-extraction.")
    return markdown("\n".join(lines))
