"""Views of 00-overview besides the decision: the #840 headline, errors, subagent inventory, quirks."""

from __future__ import annotations

import polars as pl

from measure.report.shaping import breakdown_ordered
from measure.report.style import BREAKDOWN_DIMENSIONS, strategy_rank
from measure.report.views.common import Report, fmt_int, headed, markdown, per_session, wide


def headline(r: Report) -> pl.DataFrame:
    """The #840 headline table recomputed: prompt chars per strategy, fold eviction, inline refs."""
    s, ev = r.tables["sessions"], r.tables["eviction"]
    out = wide(s, "subagent_files", ["fold"], r, {"fold": "subagent files"})
    for part in (
        wide(s, "prompt_chars", ["link", "fold", "fold_dedupe_scoped", "hybrid"], r,
             {"fold_dedupe_scoped": "fold+dedupe"}),
        wide(ev, "evicted_chars", ["fold"], r, {"fold": "fold evicted"}),
        wide(ev, "evicted_chars_pct", ["fold"], r, {"fold": "fold evicted %"}),
        wide(s, "inline_refs", ["link", "fold", "hybrid"], r, {k: f"refs {k}" for k in ("link", "fold", "hybrid")}),
    ):
        out = out.join(part, on="session_id", how="left", maintain_order="left")
    return per_session(out, r)


def errors(r: Report):
    """The errors table, sorted (every file that could not be read fully, with the reason)."""
    if r.tables["errors"].height == 0:
        return markdown("_No errors: every file under the root was read fully._")
    return r.tables["errors"].sort("path", "kind", "session_path", nulls_last=True)


def legacy_agent_note(r: Report):
    """Markdown: how many sessions are legacy sibling `agent-*.jsonl` transcripts (akm lists them as sessions)."""
    s = r.tables["sessions"]
    n, k = s["session_id"].n_unique(), _legacy(s).height
    if k == 0:
        return markdown(f"_None of the {n} sessions is a legacy sibling `agent-*.jsonl` transcript._")
    return markdown(f"**{k} of the {n} sessions are legacy sibling `agent-*.jsonl` transcripts** (subagents written "
                    "beside their parent, the layout before `<session>/subagents/`). akm lists them as sessions of their "
                    f"own, so they are measured as such here and marked below; the other {n - k} are parent transcripts.")


def legacy_agent_sessions(r: Report) -> pl.DataFrame:
    """The sessions that are legacy sibling `agent-*.jsonl` transcripts, in report order."""
    legacy = _legacy(r.tables["sessions"])
    return per_session(legacy, r, relevance=False).select("session", pl.col("session_path").alias("legacy agent transcript"))


def _legacy(s: pl.DataFrame) -> pl.DataFrame:
    return s.filter(pl.col("legacy_agent")).select("session_id", "session_path").unique(maintain_order=True)


#: Why each kind that is not delegated work is left out of it (the classification: measurements/subagents.py).
EXCLUDED_BECAUSE = {
    "compaction_helper": "compaction calls Claude Code makes for itself (`agent-acompact-*`), not work the agent delegated",
    "side_question": "replays of the parent conversation with a `/btw` question and its answer: the replayed part is the "
                     "parent's own text",
    "workflow_journal": "a workflow's journal, not a transcript",
    "unknown": "nothing (name, sidecar, launch in the parent, content) says what they are: counted apart, never guessed",
}
KIND_NAMES = {"task_agent": ("task agent", "task agents"), "workflow_agent": ("workflow agent", "workflow agents"),
              "fork": ("fork", "forks"), "compaction_helper": ("compaction helper", "compaction helpers"),
              "side_question": ("side question", "side questions"), "workflow_journal": ("workflow journal", "workflow journals"),
              "unknown": ("transcript of unknown kind", "transcripts of unknown kind")}
"""Each kind in words (one, several), in the order the overview lists kinds."""


def _kinds(n: int, kind: str) -> str:
    return f"{fmt_int(n)} {KIND_NAMES[kind][n != 1]}"


def classification_note(r: Report):
    """Markdown: per kind, how many transcripts count as delegated work, and why the others do not."""
    sub = r.tables["subagents"]
    if sub.height == 0:
        return markdown("_No subagent transcripts under this root._")
    count = dict(sub.group_by("kind").len().iter_rows())
    delegated = [k for k in ("task_agent", "workflow_agent", "fork") if count.get(k)]
    total = sum(count.get(k, 0) for k in delegated)
    text = (f"**{fmt_int(sub.height)} subagent transcripts, {fmt_int(total)} counted as delegated work**"
            + (f" ({', '.join(_kinds(count[k], k) for k in delegated)})." if delegated else "."))
    by_content = sub.filter((pl.col("kind") == "side_question")
                            & ~pl.col("agent_id").str.starts_with("agent-aside_question-")).height
    detail = {"side_question": f" ({by_content} recognised by their content alone)" if by_content else ""}
    out = [f"- {_kinds(count[kind], kind)}{detail.get(kind, '')}: {why}." for kind, why in EXCLUDED_BECAUSE.items()
           if count.get(kind)]
    replayed = sub.filter(pl.col("kind").is_in(delegated) & (pl.col("replayed_events") > 0))
    if replayed.height:
        out.append(f"- {replayed.height} delegated transcript(s) open with a replay of the parent "
                   f"({fmt_int(int(replayed['replayed_events'].sum()))} events): that part counts as parent text, never as subagent-only content.")
    d = r.tables["delegation"]
    rejected = d.filter(pl.col("delegated") & (pl.col("delivery") == "rejected"))["subagent_path"].n_unique() if d.height else 0
    if rejected:
        out.append(f"- {rejected} delegated transcript(s) whose launch the user rejected or interrupted: work done whose result "
                   "never reached the parent (delivery `rejected`).")
    # a workflow agent's launch is its workflow's, which names the run, not the agent
    if unresolved := sub.filter(pl.col("kind").is_in(["task_agent", "fork"]) & (pl.col("launch") == "unknown")).height:
        out.append(f"- {unresolved} task agent(s) or fork(s) with no launch the parent holds in any form (`launch = unknown`).")
    return markdown(text + ("\n\n" + "\n".join(out) if out else ""))


def launches(r: Report) -> pl.DataFrame:
    """Subagent transcripts per kind, launch and the source that named the launch (run totals)."""
    order = {k: i for i, k in enumerate(KIND_NAMES)}
    return r.tables["subagents"].group_by("kind", "launch", "launch_source").agg(
        pl.len().cast(pl.Int64).alias("transcripts"), pl.col("session_id").n_unique().cast(pl.Int64).alias("sessions"),
    ).sort(pl.col("kind").replace_strict(order, default=len(order), return_dtype=pl.Int64), "launch", "launch_source")


def subagent_inventory(r: Report):
    """Subagent transcripts per session and kind: files, events, chars, sidecar status, launches resolved."""
    sub = r.tables["subagents"]
    if sub.height == 0:
        return markdown("_No subagent transcripts under this root._")
    out = sub.group_by("session_id", "kind").agg(
        pl.len().alias("files"),
        pl.col("events", "chars").sum(),
        *((pl.col("sidecar") == status).sum().alias(f"sidecar {status}") for status in ("ok", "missing", "broken")),
        (pl.col("launch") == "background").sum().alias("background"),
        (pl.col("launch") != "unknown").sum().alias("launch resolved"),
        pl.col("notifications").sum(),
    )
    return per_session(out.sort("session_id", "kind"), r)


def quirks(r: Report):
    """How often each reproduced akm quirk fired, summed over sessions, per strategy."""
    q = r.tables["quirks"]
    if q.height == 0:
        return markdown("_No reproduced akm quirk changed what would be sent._")
    out = q.group_by("quirk", "strategy").agg(pl.col("count").sum(), pl.col("session_id").n_unique().alias("sessions"))
    return out.sort("quirk", strategy_rank(out["strategy"]))


def breakdown(r: Report) -> pl.DataFrame:
    """Per project, Claude Code version and month: sessions, subagent share, eviction and calls."""
    return breakdown_ordered(r.tables["breakdown"]).select(
        pl.col("dimension").replace_strict(BREAKDOWN_DIMENSIONS, default=pl.col("dimension")).alias("by"),
        "value", "sessions",
        *headed({"sessions_with_subagents": "with subagents", "subagent_chars_pct": "subagent chars %",
                 "fold_evicted_pct": "fold evicted %", "hybrid_evicted_pct": "hybrid evicted %", "llm_calls_link":
                 "calls (link)", "llm_calls_chunked": "calls (chunked)", "chunked_multiplier": "chunked ×"}),
    )
