"""Views of 00-overview: the #840 headline table, the verdict, errors, subagent inventory, quirks."""

from __future__ import annotations

import polars as pl

from measure.report.views.common import (
    Report,
    _fmt_int,
    _fmt_pct,
    _fmt_x,
    _markdown,
    _wide,
    _with_session,
    ordered_strategies,
)


def headline(r: Report) -> pl.DataFrame:
    """The #840 headline table recomputed: prompt chars per strategy, fold eviction, inline refs."""
    s = r.tables["sessions"]
    ev = r.tables["eviction"]
    prompt = _wide(s, "prompt_chars", ["link", "fold", "fold_dedupe_scoped", "hybrid"], r, {"fold_dedupe_scoped": "fold+dedupe"})
    refs = _wide(s, "inline_refs", ["link", "fold", "hybrid"], r, {k: f"refs {k}" for k in ("link", "fold", "hybrid")})
    files = _wide(s, "subagent_files", ["fold"], r, {"fold": "subagent files"})
    evicted = _wide(ev, "evicted_chars", ["fold"], r, {"fold": "fold evicted"})
    pct = _wide(ev, "evicted_chars_pct", ["fold"], r, {"fold": "fold evicted %"})
    out = files
    for part in (prompt, evicted, pct, refs):
        out = out.join(part, on="session_id", how="left", maintain_order="left")
    return _with_session(out, r).select("session", pl.exclude("session", "session_id"))


def verdict(r: Report):
    """Markdown: a plain-language reading of the run, computed from the tables."""
    s = r.tables["sessions"]
    ev = r.tables["eviction"]
    ids = s["session_id"].unique().to_list()
    n = len(ids)
    if n == 0:
        return _markdown(
            f"**No sessions were measured under `{r.sessions_root}`.** See the errors table below."
        )
    lines: list[str] = []

    hyb = ev.filter(pl.col("strategy") == "hybrid")
    fold = ev.filter(pl.col("strategy") == "fold")
    hybrid_zero = hyb.filter(pl.col("evicted_chars") <= 0).height
    fold_evicting = fold.filter(pl.col("evicted_chars") > 0)
    max_pct = fold_evicting["evicted_chars_pct"].max() if fold_evicting.height else 0.0
    total_evicted = int(fold_evicting["evicted_chars"].sum()) if fold_evicting.height else 0
    lines.append(
        f"- **Eviction.** hybrid evicted 0 parent-origin chars in {hybrid_zero}/{hyb.height} sessions; "
        f"fold evicted parent content in {fold_evicting.height}/{fold.height} sessions"
        + (f", up to {_fmt_pct(max_pct)} ({_fmt_int(total_evicted)} chars in all)." if fold_evicting.height else ".")
    )

    refs = _wide(s, "inline_refs", ["link", "fold", "hybrid"], r)
    same_refs = refs.filter(pl.col("hybrid") == pl.col("fold")).height
    gained = int((refs["fold"].fill_null(0) - refs["link"].fill_null(0)).sum())
    lines.append(
        f"- **Inline refs.** hybrid lists the same `akm remember/feedback` refs as fold in "
        f"{same_refs}/{n} sessions; reading subagent transcripts adds {_fmt_int(gained)} refs over link."
    )

    prompt = _wide(s, "prompt_chars", ["link", "fold", "hybrid"], r)
    not_larger = prompt.filter(pl.col("hybrid") <= pl.col("fold")).height
    lines.append(
        f"- **Prompt size.** hybrid's prompt is no larger than fold's in {not_larger}/{n} sessions "
        f"(total {_fmt_int(prompt['hybrid'].sum())} vs {_fmt_int(prompt['fold'].sum())} chars)."
    )

    dup = r.tables["duplicates"]
    if dup.height:
        both = dup.filter(pl.col("both_in_prompt")).height
        saved = int(dup["stub_saved_chars"].sum())
        lines.append(
            f"- **Duplication.** {dup.height} notification/subagent pairs; {both} "
            f"{'reaches' if both == 1 else 'reach'} the fold prompt with both copies (hybrid sends no subagent "
            f"text, so never a result twice); stubbing the notification would save {_fmt_int(saved)} raw chars."
        )
    else:
        lines.append("- **Duplication.** No notification/subagent pairs were found.")

    calls = r.tables["llm_calls"].filter(pl.col("strategy") == "chunked")
    cost = r.tables["run_cost"]
    calls = calls.filter(pl.col("llm_calls") > 0)  # sessions without events make no call at all
    if calls.height:
        lo, hi = calls["multiplier"].min(), calls["multiplier"].max()
        text = f"- **Cost.** chunked needs {_fmt_x(lo)}–{_fmt_x(hi)} the calls of a single-call strategy"
        chunk_cost = cost.filter(pl.col("strategy") == "chunked")
        if chunk_cost.height:
            row = chunk_cost.row(0, named=True)
            text += (
                f"; with akm's cap of {row['session_cap']} sessions per run, its most expensive run makes "
                f"{_fmt_int(row['calls_per_run_max'])} calls ({_fmt_x(row['cap_multiplier'])} the cap)"
            )
        lines.append(text + ".")

    supports = hyb.height == n and hybrid_zero == n and same_refs == n
    if supports:
        decision = (
            "**The data supports C3, hybrid**: it never evicts parent-origin content, keeps every inline ref "
            "that folding finds, and makes one call per session. Fold spends parent budget on subagent text; "
            "chunking recovers more content but multiplies the calls."
        )
    else:
        reasons = []
        if hybrid_zero < hyb.height:
            reasons.append(f"hybrid evicts parent content in {hyb.height - hybrid_zero} session(s)")
        if hyb.height < n:
            reasons.append(f"hybrid has no row for {n - hyb.height} session(s)")
        if same_refs < n:
            reasons.append(f"hybrid's inline refs differ from fold's in {n - same_refs} session(s)")
        decision = (
            "**On this root the data does not cleanly support C3, hybrid**: " + "; ".join(reasons)
            + ". Read the eviction and LLM-call notebooks before deciding."
        )
    return _markdown(decision + "\n\n" + "\n".join(lines))


def errors(r: Report):
    """The errors table, sorted (every file that could not be read fully, with the reason)."""
    if r.tables["errors"].height == 0:
        return _markdown("_No errors: every file under the root was read fully._")
    return r.tables["errors"].sort("path", "kind", "session_path", nulls_last=True)


def subagent_inventory(r: Report):
    """Subagent transcripts per session and kind: files, events, chars, sidecar and launch status."""
    sub = r.tables["subagents"]
    if sub.height == 0:
        return _markdown("_No subagent transcripts under this root._")
    out = sub.group_by("session_id", "kind").agg(
        pl.len().alias("files"),
        pl.col("events").sum().alias("events"),
        pl.col("chars").sum().alias("chars"),
        (pl.col("sidecar") == "ok").sum().alias("sidecar ok"),
        (pl.col("sidecar") == "missing").sum().alias("sidecar missing"),
        (pl.col("sidecar") == "broken").sum().alias("sidecar broken"),
        (pl.col("launch") == "background").sum().alias("background"),
        pl.col("notifications").sum().alias("notifications"),
    )
    out = _with_session(out.sort("session_id", "kind"), r)
    return out.select("session", "kind", pl.exclude("session", "kind", "session_id"))


def subagents_detail(r: Report) -> pl.DataFrame:
    """Every subagent transcript (descriptions only with show_excerpts)."""
    sub = r.tables["subagents"]
    cols = ["session", "subagent_path", "kind", "agent_type", "sidecar", "events", "chars", "launch", "notifications"]
    if r.show_excerpts:
        cols.insert(4, "description")
    return _with_session(sub, r).select(cols)


def quirks(r: Report):
    """How often each reproduced akm quirk fired, summed over sessions, per strategy."""
    q = r.tables["quirks"]
    if q.height == 0:
        return _markdown("_No reproduced akm quirk changed what would be sent._")
    out = q.group_by("quirk", "strategy").agg(
        pl.col("count").sum().alias("count"), pl.col("session_id").n_unique().alias("sessions")
    )
    order = {s: i for i, s in enumerate(ordered_strategies(out["strategy"].unique().to_list()))}
    return out.with_columns(pl.col("strategy").replace_strict(order, return_dtype=pl.Int64).alias("_o")).sort(
        "quirk", "_o"
    ).drop("_o")
