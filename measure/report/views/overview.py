"""Views of 00-overview: the #840 headline table, the verdict, errors, subagent inventory, quirks."""

from __future__ import annotations

import os

import polars as pl

from measure.numbers import ROUND_MODE
from measure.report.shaping import breakdown_ordered
from measure.report.style import BREAKDOWN_DIMENSIONS, STRATEGY_LABELS, ordered_strategies, strategy_rank
from measure.report.views import extraction
from measure.report.views.common import Report, fmt_int, markdown, per_session, wide


def headline(r: Report) -> pl.DataFrame:
    """The #840 headline table recomputed: prompt chars per strategy, fold eviction, inline refs."""
    s = r.tables["sessions"]
    ev = r.tables["eviction"]
    prompt = wide(s, "prompt_chars", ["link", "fold", "fold_dedupe_scoped", "hybrid"], r, {"fold_dedupe_scoped": "fold+dedupe"})
    refs = wide(s, "inline_refs", ["link", "fold", "hybrid"], r, {k: f"refs {k}" for k in ("link", "fold", "hybrid")})
    files = wide(s, "subagent_files", ["fold"], r, {"fold": "subagent files"})
    evicted = wide(ev, "evicted_chars", ["fold"], r, {"fold": "fold evicted"})
    pct = wide(ev, "evicted_chars_pct", ["fold"], r, {"fold": "fold evicted %"})
    out = files
    for part in (prompt, evicted, pct, refs):
        out = out.join(part, on="session_id", how="left", maintain_order="left")
    return per_session(out, r)


CANDIDATES = {k: v for k, v in STRATEGY_LABELS.items() if "(C" in v}
"""The strategies that were #840's candidates C1..C4, by the name a decision gives them."""

CRITERION_LABELS = {
    "parent_chars_evicted": "Parent-origin chars evicted (budget eviction)",
    "delegated_results_in_prompt": "Delegated results reaching the prompt",
    "subagent_unique_chars_in_prompt": "Subagent-only chars reaching the prompt",
    "inline_refs": "Inline refs listed",
    "llm_calls": "LLM calls",
    "calls_per_run_max": "Calls in the most expensive akm run",
    "prompt_chars": "Prompt chars",
}


def verdict_matrix(r: Report) -> pl.DataFrame:
    """The verdict table wide: one row per criterion, one column per strategy, the best and the identities."""
    v = r["verdict"].filter(pl.col("criterion") != "decision")
    if v.height == 0:
        return pl.DataFrame({"criterion": []}, schema={"criterion": pl.String})
    names = ordered_strategies(v["strategy"].unique().to_list())
    order = {c: i for i, c in enumerate(CRITERION_LABELS)}
    matrix = v.pivot(on="strategy", index=["criterion", "better"], values="value").select("criterion", "better", *names)
    best = v.filter(pl.col("best")).group_by("criterion").agg(
        pl.col("strategy").sort_by(strategy_rank(names)).str.join(", ").alias("best"))
    out = matrix.join(best, on="criterion", how="left").sort(pl.col("criterion").replace_strict(order, return_dtype=pl.Int64))
    return out.with_columns(  # every criterion counts chars, calls, refs or results: whole numbers
        pl.col("criterion").replace_strict(CRITERION_LABELS, return_dtype=pl.String),
        pl.col(names).round(0, mode=ROUND_MODE).cast(pl.Int64),
    )


def _advantage(c: str, a: float, b: float, loser: str, k: int | None, cap: int | None) -> str:
    """What a value `a` gains over `b` on criterion `c`, in words (a is the better one; `loser` has b)."""
    d = abs(a - b)
    if c == "parent_chars_evicted":
        where = f", {loser} evicting in {k} session(s)" if k else ""
        return f"evicts {fmt_int(d)} fewer parent-origin chars (budget eviction: {fmt_int(a)} vs {fmt_int(b)}{where})"
    if c == "delegated_results_in_prompt":
        return f"gets {fmt_int(d)} more delegated results into the prompt ({fmt_int(a)} vs {fmt_int(b)})"
    if c == "subagent_unique_chars_in_prompt":
        return f"sends {fmt_int(d)} more chars of subagent-only content ({fmt_int(a)} vs {fmt_int(b)})"
    if c == "inline_refs":
        return f"lists {fmt_int(d)} more inline refs ({fmt_int(a)} vs {fmt_int(b)})"
    if c == "llm_calls":
        return f"makes {fmt_int(d)} fewer LLM calls ({fmt_int(a)} vs {fmt_int(b)})"
    if c == "calls_per_run_max":
        under = f" under akm's cap of {cap} sessions per run" if cap else ""
        return f"makes {fmt_int(d)} fewer calls in its most expensive run{under} ({fmt_int(a)} vs {fmt_int(b)})"
    return f"sends {fmt_int(d)} fewer prompt chars ({fmt_int(a)} vs {fmt_int(b)})"


def _trade(v: pl.DataFrame, a: str, b: str, cap: int | None) -> str:
    """One sentence: what `a` gives that `b` does not, and at what cost."""
    cell = {(x["criterion"], x["strategy"]): x for x in v.iter_rows(named=True) if x["criterion"] != "decision"}
    gains, losses = [], []
    for c in CRITERION_LABELS:
        x, y = cell.get((c, a)), cell.get((c, b))
        if x is None or y is None or x["value"] == y["value"]:
            continue
        a_better = (x["value"] < y["value"]) == (x["better"] == "lower")
        if a_better:
            gains.append(_advantage(c, x["value"], y["value"], b, y["sessions"], cap))
        else:
            losses.append(_advantage(c, y["value"], x["value"], a, x["sessions"], cap))
    text = f"- **{a} or {b}.** {a} " + "; ".join(gains)
    return text + (f" — while {b} " + "; ".join(losses) + "." if losses else ".")


def verdict(r: Report, out_dir: str | os.PathLike | None = None):
    """Markdown: the decision of the `verdict` table (a Pareto analysis), its trade-offs and criteria.

    When extraction results exist for the root (`measure extract`, or the recorded store of a
    fixture), a section on what a model actually extracted follows; `out_dir` is the run
    directory the notebook reads, where `measure report --extraction` copies them.
    """
    s = r.tables["sessions"]
    v = r["verdict"]
    decision_row = v.filter(pl.col("criterion") == "decision").row(0, named=True)
    decision = decision_row["decision"]
    if decision == "no_sessions":
        errs = r.tables["errors"].height
        return markdown(
            f"**No sessions were measured under `{r.sessions_root}`**, so there is nothing to compare."
            + (f" The errors table below says why {errs} file(s) could not be read." if errs else
               " No file under it could be read as a session, and none failed: the root holds no session transcripts.")
        )
    n = s["session_id"].n_unique()
    cost = r.tables["run_cost"]
    cap = int(cost["session_cap"][0]) if cost.height else None
    front = [g.split("=") for g in (decision_row["strategy"] or "").split(",") if g]
    lines: list[str] = []
    if decision == "no_delegated_work":
        prompt = wide(s, "prompt_chars", ["link", "fold", "hybrid"], r)
        head = (
            f"**No delegated work under this root** ({n} session(s)): no task or workflow agent transcripts, so there "
            "is no subagent-only content for any strategy to send or lose, and nothing here can favour one way of "
            "delivering delegated work over another."
        )
        bg = r.tables.get("background")
        if bg is not None and bg.height:
            # Background tasks without transcripts still deliver results, but only through the parent's own
            # events, which every single-call strategy reads alike (see 04-background).
            turns = bg.filter(pl.col("delivery") == "turn").height
            head += (
                f" The parents did launch {fmt_int(bg.height)} background task(s) ({fmt_int(turns)} result(s) reached "
                "them as a turn, see 04-background); those results are parent events, the same for every strategy."
            )
        if prompt.height:
            head += (
                f" The single-call strategies send {fmt_int(prompt['link'].sum())} (link), "
                f"{fmt_int(prompt['fold'].sum())} (fold) and {fmt_int(prompt['hybrid'].sum())} (hybrid) prompt chars in all."
            )
    elif decision == "trade_off":
        names = ", ".join(" = ".join(g) for g in front)
        head = (
            f"**No strategy dominates on this root: the data shows a trade-off** (measured over {n} session(s)). "
            f"On the Pareto front, where no other strategy is at least as good on every criterion below and better on one: "
            f"{names}. What each gives up:"
        )
        reps = [g[0] if "hybrid" not in g else "hybrid" for g in front]
        ref = "hybrid" if "hybrid" in reps else reps[0]
        lines += [_trade(v, a, ref, cap) for a in reps if a != ref]
    else:
        group = next((g for g in front if decision in g), [decision])
        ties = [x for x in group if x != decision]
        head = (
            f"**The data supports {CANDIDATES.get(decision, decision)}** (measured over {n} session(s)): on every "
            "criterion below it is at least as good as every other strategy, and better than each on at least one."
        )
        if ties:
            head += (
                f" {', '.join(ties)} {'ties' if len(ties) == 1 else 'tie'} with it on every criterion; a tie goes to "
                "hybrid, the path akm ships (#843)."
            )
    dominated = v.filter((pl.col("criterion") == "prompt_chars") & (pl.col("dominated_by") != ""))
    if decision != "no_delegated_work" and dominated.height:
        lines.append(
            "- **Dominated.** "
            + "; ".join(f"{x['strategy']} (by {x['dominated_by'].replace(',', ', ')})" for x in dominated.iter_rows(named=True))
            + "."
        )
    lines.append("")
    lines.append("The criteria, summed over the run (an *identity* holds by construction and is not a finding):")
    lines.append("")
    for c, label in CRITERION_LABELS.items():
        rows = v.filter(pl.col("criterion") == c)
        if not rows.height:
            continue
        better = rows["better"][0]
        cells = []
        for x in sorted(rows.iter_rows(named=True), key=lambda x: ordered_strategies(rows["strategy"].to_list()).index(x["strategy"])):
            cell = f"{x['strategy']} {fmt_int(x['value'])}"
            if c == "parent_chars_evicted" and x["sessions"]:
                cell += f" in {x['sessions']} session(s)"
            if x["identity"]:
                cell += f" *(identity: {x['identity']})*"
            cells.append(cell)
        lines.append(f"- **{label}** ({better} is better): " + "; ".join(cells) + ".")
    ev = r.tables["eviction"]
    if ev.height:
        saved = ev.group_by("strategy").agg(pl.col("stub_saved_chars").sum()).filter(pl.col("stub_saved_chars") > 0)
        if saved.height:
            lines.append(
                "- **Stub savings are not eviction.** Parent chars a notification stub shortened on purpose: "
                + "; ".join(f"{x['strategy']} {fmt_int(x['stub_saved_chars'])}" for x in saved.sort("strategy").iter_rows(named=True))
                + "."
            )
    dup = r.tables["duplicates"]
    if dup.height:
        # Totals per pairing method, never summed: only sidecar pairs are #840's definition.
        per = []
        for pairing in sorted(set(dup["pairing"].to_list())):
            part = dup.filter(pl.col("pairing") == pairing)
            both = part.filter(pl.col("both_in_prompt")).height
            per.append(
                f"`{pairing}`: {part.height} pairs, {both} with both copies in the fold prompt, "
                f"{fmt_int(int(part['stub_would_save_chars'].sum()))} raw chars a stub would save"
            )
        lines.append(
            "- **Duplication** (per pairing method, never summed across methods). "
            + "; ".join(per) + "."
        )
    text = head + "\n\n" + "\n".join(lines)
    section = extraction.verdict_section(r, out_dir)
    return markdown(text + ("\n\n" + section if section else ""))


def errors(r: Report):
    """The errors table, sorted (every file that could not be read fully, with the reason)."""
    if r.tables["errors"].height == 0:
        return markdown("_No errors: every file under the root was read fully._")
    return r.tables["errors"].sort("path", "kind", "session_path", nulls_last=True)


def legacy_agent_note(r: Report):
    """Markdown: how many sessions are legacy sibling `agent-*.jsonl` transcripts (akm lists them as sessions)."""
    s = r.tables["sessions"]
    n = s["session_id"].n_unique()
    k = _legacy(s).height
    if k == 0:
        return markdown(f"_None of the {n} sessions is a legacy sibling `agent-*.jsonl` transcript._")
    return markdown(
        f"**{k} of the {n} sessions are legacy sibling `agent-*.jsonl` transcripts** (subagents written beside "
        f"their parent, the layout before `<session>/subagents/`). akm lists them as sessions of their own, so they "
        f"are measured as such here and marked below; the other {n - k} are parent transcripts."
    )


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
    n = sub.group_by("kind").len()
    count = dict(zip(n["kind"], n["len"]))
    delegated = [k for k in ("task_agent", "workflow_agent", "fork") if count.get(k)]
    total = sum(count.get(k, 0) for k in delegated)
    text = (f"**{fmt_int(sub.height)} subagent transcripts, {fmt_int(total)} counted as delegated work**"
            + (f" ({', '.join(_kinds(count[k], k) for k in delegated)})." if delegated else "."))
    out = []
    for kind, why in EXCLUDED_BECAUSE.items():
        if count.get(kind):
            detail = ""
            if kind == "side_question":
                by_content = sub.filter((pl.col("kind") == kind) & ~pl.col("agent_id").str.starts_with("agent-aside_question-")).height
                detail = f" ({by_content} recognised by their content alone)" if by_content else ""
            out.append(f"- {_kinds(count[kind], kind)}{detail}: {why}.")
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
    unresolved = sub.filter(pl.col("kind").is_in(["task_agent", "fork"]) & (pl.col("launch") == "unknown")).height
    if unresolved:
        out.append(f"- {unresolved} task agent(s) or fork(s) with no launch the parent holds in any form (`launch = unknown`).")
    return markdown(text + ("\n\n" + "\n".join(out) if out else ""))


def launches(r: Report) -> pl.DataFrame:
    """Subagent transcripts per kind, launch and the source that named the launch (run totals)."""
    sub = r.tables["subagents"]
    order = {k: i for i, k in enumerate(KIND_NAMES)}
    return (
        sub.group_by("kind", "launch", "launch_source")
        .agg(pl.len().cast(pl.Int64).alias("transcripts"), pl.col("session_id").n_unique().cast(pl.Int64).alias("sessions"))
        .sort(pl.col("kind").replace_strict(order, default=len(order), return_dtype=pl.Int64), "launch", "launch_source")
    )


def subagent_inventory(r: Report):
    """Subagent transcripts per session and kind: files, events, chars, sidecar status, launches resolved."""
    sub = r.tables["subagents"]
    if sub.height == 0:
        return markdown("_No subagent transcripts under this root._")
    out = sub.group_by("session_id", "kind").agg(
        pl.len().alias("files"),
        pl.col("events").sum().alias("events"),
        pl.col("chars").sum().alias("chars"),
        (pl.col("sidecar") == "ok").sum().alias("sidecar ok"),
        (pl.col("sidecar") == "missing").sum().alias("sidecar missing"),
        (pl.col("sidecar") == "broken").sum().alias("sidecar broken"),
        (pl.col("launch") == "background").sum().alias("background"),
        (pl.col("launch") != "unknown").sum().alias("launch resolved"),
        pl.col("notifications").sum().alias("notifications"),
    )
    return per_session(out.sort("session_id", "kind"), r)


def quirks(r: Report):
    """How often each reproduced akm quirk fired, summed over sessions, per strategy."""
    q = r.tables["quirks"]
    if q.height == 0:
        return markdown("_No reproduced akm quirk changed what would be sent._")
    out = q.group_by("quirk", "strategy").agg(
        pl.col("count").sum().alias("count"), pl.col("session_id").n_unique().alias("sessions")
    )
    return out.sort("quirk", strategy_rank(out["strategy"]))


def breakdown(r: Report) -> pl.DataFrame:
    """Per project, Claude Code version and month: sessions, subagent share, eviction and calls."""
    df = breakdown_ordered(r.tables["breakdown"])
    return df.select(
        pl.col("dimension").replace_strict(BREAKDOWN_DIMENSIONS, default=pl.col("dimension")).alias("by"),
        pl.col("value"),
        pl.col("sessions"),
        pl.col("sessions_with_subagents").alias("with subagents"),
        pl.col("subagent_chars_pct").alias("subagent chars %"),
        pl.col("fold_evicted_pct").alias("fold evicted %"),
        pl.col("hybrid_evicted_pct").alias("hybrid evicted %"),
        pl.col("llm_calls_link").alias("calls (link)"),
        pl.col("llm_calls_chunked").alias("calls (chunked)"),
        pl.col("chunked_multiplier").alias("chunked ×"),
    )
