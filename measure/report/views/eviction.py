"""Views of 01-eviction: parent content kept and evicted per strategy; the budget sweep."""

from __future__ import annotations

import polars as pl

from measure.report.shaping import SWEEP_EXCLUDED, fold_zero_budget, sweep_curve, zero_budgets
from measure.report.style import ordered_strategies
from measure.report.views.common import Report, fmt_int, fmt_pct, markdown, per_session, scan, session_ids, wide


def parent_kept(r: Report) -> pl.DataFrame:
    """Parent-origin chars kept per session: alone (= link) and under each fold-family strategy."""
    ev = r.tables["eviction"]
    strategies = ordered_strategies(ev["strategy"].unique().to_list())
    alone = ev.group_by("session_id").agg(pl.col("alone_parent_kept_chars").first().alias("alone (link)"))
    out = wide(ev, "parent_kept_chars", strategies, r).join(alone, on="session_id", how="left", maintain_order="left")
    return per_session(out, r).select("session", "alone (link)", *strategies)


def eviction_table(r: Report) -> pl.DataFrame:
    """Per session and strategy: parent chars evicted by the budget (chars and %), and, for the
    strategies that stub notifications, the parent chars the stubs shortened (not eviction)."""
    ev = r.tables["eviction"]
    out = session_ids(r)
    for s in ordered_strategies(ev["strategy"].unique().to_list()):
        columns = [("budget_evicted_chars", "evicted (chars)"), ("budget_evicted_pct", "evicted (%)")]
        if ev.filter((pl.col("strategy") == s) & (pl.col("stub_saved_chars") != 0)).height:
            columns.append(("stub_saved_chars", "stub-shortened (chars)"))
        for value, header in columns:
            out = out.join(wide(ev, value, [s], r, {s: f"{s} {header}"}), on="session_id", how="left", maintain_order="left")
    return per_session(out, r)


def zero_eviction_budgets(r: Report) -> pl.DataFrame:
    """Per session: the smallest swept budget from which each strategy evicts no parent content (null: none)."""
    sweep = scan(r, "budget_sweep")  # the columns the query reads, not the table
    swept = sweep.select(pl.col("strategy").unique()).collect()["strategy"].to_list()
    strategies = [s for s in ordered_strategies(swept) if s not in SWEEP_EXCLUDED]
    return per_session(wide(zero_budgets(sweep), "zero_from", strategies, r), r)


IDENTITY_ZERO: dict[str, str] = {
    "hybrid": "its prompt is built from the parent's events only, so its kept set is link's: 0 by construction",
}
"""Strategies whose budget eviction is 0 by construction, with the reason the page prints."""


def _has_subagent_text(r: Report) -> bool:
    """Whether any session folds subagent transcripts (without them fold's stream is the parent's)."""
    sub = r.tables.get("subagents")
    if sub is not None and sub.height:
        return True
    s = r.tables.get("sessions")  # read only when there is no subagents table to answer
    return bool(s is not None and s.height and (s["subagent_files"].fill_null(0) > 0).any())


def eviction_summary(r: Report):
    """Markdown: who evicts parent content at the run's budget (budget eviction only), what stubs shorten on purpose,
    and which budget lets fold evict nothing."""
    ev = r.tables["eviction"]
    sweep = scan(r, "budget_sweep")
    swept, largest = sweep.select(pl.len(), pl.col("budget").max()).collect().row(0)
    n = ev["session_id"].n_unique()
    parts, stubs, identities = [], [], []
    for s in ordered_strategies(ev["strategy"].unique().to_list()):
        sub = ev.filter(pl.col("strategy") == s)
        evicting = sub.filter(pl.col("budget_evicted_chars") > 0)
        k = evicting.height
        if k == 0 and s in IDENTITY_ZERO:
            # True by construction, so not a finding; a non-zero value would be one (a bug).
            identities.append(f"`{s}` evicts nothing ({IDENTITY_ZERO[s]})")
            continue
        parts.append(f"`{s}` evicts parent content in {k}/{n} sessions"
                     + (f" (up to {fmt_pct(evicting['budget_evicted_pct'].max())})" if k else ""))
        stubbed = sub.filter(pl.col("stub_saved_chars") > 0)
        if stubbed.height:
            stubs.append(f"`{s}` shortens parent notifications to stubs in {stubbed.height}/{n} sessions "
                         f"({fmt_int(stubbed['stub_saved_chars'].sum())} chars in all)")
    if ev.height == 0:
        return markdown("No sessions were measured, so there is no eviction to report.")
    text = "At the run's budget: " + "; ".join(parts) + "." if parts else "At the run's budget:"
    if identities:
        text += " *Identity, not a finding:* " + "; ".join(identities) + "."
    no_subagents = not _has_subagent_text(r)
    if no_subagents:
        text += (" *This root has no subagent transcripts, so every fold strategy reads the parent alone: "
                 "no eviction is possible here (identity), and the sweep below cannot show any.*")
    if stubs:
        text += " Stubs are dedupe by design and not counted as eviction: " + "; ".join(stubs) + "."
    zero = fold_zero_budget(sweep) if swept else None
    if swept and zero is None:
        text += f" Within the sweep, fold still evicts parent content at the largest budget ({fmt_int(largest)})."
    elif swept and not no_subagents:  # else "fold evicts nothing from the smallest budget" would restate the identity
        text += f" Within the sweep, **fold evicts nothing in any session from maxTotalChars = {fmt_int(zero)}**."
    return markdown(text)


SWEEP_LABELS: dict[str, str] = {
    "budget": "budget (chars)", "evicted_chars": "evicted (chars)", "stub_saved_chars": "stub-shortened (chars)",
    "alone_parent_kept_chars": "parent alone kept (chars)", "evicted_pct": "evicted (%)",
    "sessions_evicting": "sessions evicting",
}
"""Headers of the pooled sweep as the page shows it: the words and units of the eviction table above."""


def sweep_table(r: Report):
    """The pooled budget sweep (sweep_curve) with human headers; a note when nothing was swept."""
    curve = sweep_curve(scan(r, "budget_sweep"))
    if curve.height == 0:
        return markdown("_No budget sweep rows: no session was measured under a fold strategy or hybrid._")
    return curve.rename(SWEEP_LABELS)
