"""Views of 01-eviction: parent content kept and evicted per strategy; the budget sweep."""

from __future__ import annotations

import polars as pl

from measure.report.views.common import (
    Report,
    _fmt_int,
    _fmt_pct,
    _markdown,
    _session_order,
    _wide,
    _with_session,
    by_relevance,
    ordered_strategies,
)


def parent_kept(r: Report) -> pl.DataFrame:
    """Parent-origin chars kept per session: alone (= link) and under each fold-family strategy."""
    ev = r.tables["eviction"]
    strategies = ordered_strategies(ev["strategy"].unique().to_list())
    alone = ev.group_by("session_id").agg(pl.col("alone_parent_kept_chars").first().alias("alone (link)"))
    wide = _wide(ev, "parent_kept_chars", strategies, r)
    out = wide.join(alone, on="session_id", how="left", maintain_order="left")
    return by_relevance(_with_session(out, r), r).select("session", "alone (link)", *strategies)


EVICTION_VALUE = "budget_evicted_chars"
"""What the report calls eviction: parent content that lost its place in the budget to subagent
text. #840's `evicted_chars` also counts what stubs shorten on purpose; that is shown apart."""


def _budget_evicted(df: pl.DataFrame) -> pl.DataFrame:
    """`df` with budget_evicted_chars/pct filled from evicted_chars where a table predates them."""
    if "budget_evicted_chars" not in df.columns:
        df = df.with_columns(pl.lit(None, pl.Int64).alias("budget_evicted_chars"), pl.lit(None, pl.Float64).alias("budget_evicted_pct"))
    if "stub_saved_chars" not in df.columns:
        df = df.with_columns(pl.lit(0, pl.Int64).alias("stub_saved_chars"))
    pct = "evicted_chars_pct" if "evicted_chars_pct" in df.columns else "evicted_pct"
    return df.with_columns(
        pl.col("budget_evicted_chars").fill_null(pl.col("evicted_chars")),
        pl.col("budget_evicted_pct").fill_null(pl.col(pct)),
        pl.col("stub_saved_chars").fill_null(0),
    )


def eviction_table(r: Report) -> pl.DataFrame:
    """Per session and strategy: parent chars evicted by the budget (chars and %), and, for the
    strategies that stub notifications, the parent chars the stubs shortened (not eviction)."""
    ev = _budget_evicted(r.tables["eviction"])
    strategies = ordered_strategies(ev["strategy"].unique().to_list())
    out = pl.DataFrame({"session_id": _session_order(r)}, schema={"session_id": pl.String})
    for s in strategies:
        out = out.join(_wide(ev, "budget_evicted_chars", [s], r, {s: f"{s} evicted (chars)"}), on="session_id", how="left", maintain_order="left")
        out = out.join(_wide(ev, "budget_evicted_pct", [s], r, {s: f"{s} evicted (%)"}), on="session_id", how="left", maintain_order="left")
        if ev.filter((pl.col("strategy") == s) & (pl.col("stub_saved_chars") != 0)).height:
            out = out.join(_wide(ev, "stub_saved_chars", [s], r, {s: f"{s} stub-shortened (chars)"}), on="session_id", how="left", maintain_order="left")
    return by_relevance(_with_session(out, r), r).select("session", pl.exclude("session", "session_id"))


def _zero_budget_expr(df: pl.DataFrame) -> pl.DataFrame:
    """Per session and strategy: smallest budget from which every larger swept budget evicts nothing
    (budget eviction: what stubs shorten on purpose does not count).

    That is the smallest budget above the largest one that still evicts (or has no value):
    aggregations per group, without sorting the sweep or looping in Python (issue #17).
    """
    df = _budget_evicted(df)
    keys = ["session_id", "strategy"]
    bad = ~(pl.col(EVICTION_VALUE).is_not_null() & (pl.col(EVICTION_VALUE) <= 0))
    rows = df.lazy().select(*keys, "budget", bad.alias("_bad"))
    worst = rows.group_by(keys).agg(pl.when(pl.col("_bad")).then(pl.col("budget")).max().alias("_worst"))
    clear = (
        rows.join(worst, on=keys, nulls_equal=True)
        .filter(pl.col("_worst").is_null() | (pl.col("budget") > pl.col("_worst")))
        .group_by(keys)
        .agg(pl.col("budget").min().cast(pl.Int64).alias("zero_from"))
    )
    return (
        worst.select(keys).join(clear, on=keys, how="left", nulls_equal=True)
        .sort(keys)
        .collect()
    )


def zero_eviction_budgets(r: Report) -> pl.DataFrame:
    """Per session: the smallest swept budget from which each strategy evicts no parent content.

    Null means the strategy still evicts parent content at the largest swept budget.
    """
    sweep = r.tables["budget_sweep"]
    strategies = [s for s in ordered_strategies(sweep["strategy"].unique().to_list()) if s not in ("link", "chunked")]
    z = _zero_budget_expr(sweep)
    out = _wide(z, "zero_from", strategies, r)
    return by_relevance(_with_session(out, r), r).select("session", *strategies)


def fold_zero_budget(budget_sweep: pl.DataFrame, strategy: str = "fold") -> int | None:
    """The smallest swept budget at which `strategy` evicts nothing in every session (None if none)."""
    z = _zero_budget_expr(budget_sweep.filter(pl.col("strategy") == strategy))
    if z.height == 0 or z["zero_from"].null_count():
        return None
    return int(z["zero_from"].max())


SWEEP_EXCLUDED: tuple[str, ...] = ("link", "chunked")
"""Left out of the pooled sweep: link is the parent-alone reference (0 by definition), and chunked
keeps parent content across many calls (large negative "eviction"; see 03-llm-calls)."""


def sweep_curve(budget_sweep: pl.DataFrame, exclude: tuple[str, ...] = SWEEP_EXCLUDED) -> pl.DataFrame:
    """Pooled eviction per strategy and budget: budget-evicted chars as % of the parent-alone chars of all sessions.

`evicted_chars` here is budget eviction (parent content that lost its place to subagent text);
`stub_saved_chars` is what stubs shortened on purpose, shown apart.

    Strategies in `exclude` (default: link and chunked) are left out.
    """
    budget_sweep = _budget_evicted(budget_sweep.filter(~pl.col("strategy").is_in(list(exclude))))
    if budget_sweep.height == 0:
        return pl.DataFrame(
            schema={"strategy": pl.String, "budget": pl.Int64, "evicted_chars": pl.Int64, "stub_saved_chars": pl.Int64, "alone_parent_kept_chars": pl.Int64, "evicted_pct": pl.Float64, "sessions_evicting": pl.UInt32}
        )
    out = budget_sweep.group_by("strategy", "budget").agg(
        pl.col(EVICTION_VALUE).sum().alias("evicted_chars"),
        pl.col("stub_saved_chars").sum(),
        pl.col("alone_parent_kept_chars").sum(),
        (pl.col(EVICTION_VALUE) > 0).sum().alias("sessions_evicting"),
    )
    out = out.with_columns(
        (100.0 * pl.col("evicted_chars") / pl.max_horizontal(pl.col("alone_parent_kept_chars"), pl.lit(1))).round(1).alias("evicted_pct")
    )
    order = {s: i for i, s in enumerate(ordered_strategies(out["strategy"].unique().to_list()))}
    return (
        out.with_columns(pl.col("strategy").replace_strict(order, return_dtype=pl.Int64).alias("_o"))
        .sort("_o", "budget")
        .drop("_o")
        .select("strategy", "budget", "evicted_chars", "stub_saved_chars", "alone_parent_kept_chars", "evicted_pct", "sessions_evicting")
    )


IDENTITY_ZERO: dict[str, str] = {
    "hybrid": "its prompt is built from the parent's events only, so its kept set is link's: 0 by construction",
}
"""Strategies whose budget eviction is 0 by construction, with the reason the page prints."""


def _has_subagent_text(r: Report) -> bool:
    """Whether any session folds subagent transcripts (without them fold's stream is the parent's)."""
    sub = r.tables.get("subagents")
    if sub is not None and sub.height:
        return True
    s = r.tables.get("sessions")
    return bool(s is not None and s.height and "subagent_files" in s.columns and (s["subagent_files"].fill_null(0) > 0).any())


def eviction_summary(r: Report):
    """Markdown: who evicts parent content at the run's budget (budget eviction only), what stubs
    shorten on purpose, and which budget lets fold evict nothing."""
    ev = _budget_evicted(r.tables["eviction"])
    sweep = r.tables["budget_sweep"]
    n = ev["session_id"].n_unique()
    parts = []
    stubs = []
    identities = []
    for s in ordered_strategies(ev["strategy"].unique().to_list()):
        sub = ev.filter(pl.col("strategy") == s)
        evicting = sub.filter(pl.col(EVICTION_VALUE) > 0)
        k = evicting.height
        top = evicting["budget_evicted_pct"].max() if k else 0.0
        if k == 0 and s in IDENTITY_ZERO:
            # True by construction, so not a finding; a non-zero value would be one (a bug).
            identities.append(f"`{s}` evicts nothing ({IDENTITY_ZERO[s]})")
            continue
        parts.append(f"`{s}` evicts parent content in {k}/{n} sessions" + (f" (up to {_fmt_pct(top)})" if k else ""))
        stubbed = sub.filter(pl.col("stub_saved_chars") > 0)
        if stubbed.height:
            stubs.append(
                f"`{s}` shortens parent notifications to stubs in {stubbed.height}/{n} sessions "
                f"({_fmt_int(stubbed['stub_saved_chars'].sum())} chars in all)"
            )
    if ev.height == 0:
        return _markdown("No sessions were measured, so there is no eviction to report.")
    text = "At the run's budget: " + "; ".join(parts) + "." if parts else "At the run's budget:"
    if identities:
        text += " *Identity, not a finding:* " + "; ".join(identities) + "."
    no_subagents = not _has_subagent_text(r)
    if no_subagents:
        text += (
            " *This root has no subagent transcripts, so every fold strategy reads the parent alone: "
            "no eviction is possible here (identity), and the sweep below cannot show any.*"
        )
    if stubs:
        text += " Stubs are dedupe by design and not counted as eviction: " + "; ".join(stubs) + "."
    if sweep.height:
        zero = fold_zero_budget(sweep)
        largest = sweep["budget"].max()
        if zero is None:
            text += f" Within the sweep, fold still evicts parent content at the largest budget ({_fmt_int(largest)})."
        elif no_subagents:
            pass  # "fold evicts nothing from the smallest budget" would restate the identity above as a finding
        else:
            text += f" Within the sweep, **fold evicts nothing in any session from maxTotalChars = {_fmt_int(zero)}**."
    return _markdown(text)


SWEEP_LABELS: dict[str, str] = {
    "strategy": "strategy",
    "budget": "budget (chars)",
    "evicted_chars": "evicted (chars)",
    "stub_saved_chars": "stub-shortened (chars)",
    "alone_parent_kept_chars": "parent alone kept (chars)",
    "evicted_pct": "evicted (%)",
    "sessions_evicting": "sessions evicting",
}
"""Headers of the pooled sweep as the page shows it: the words and units of the eviction table above."""


def sweep_table(r: Report):
    """The pooled budget sweep (sweep_curve) with human headers; a note when nothing was swept."""
    curve = sweep_curve(r.tables["budget_sweep"])
    if curve.height == 0:
        return _markdown("_No budget sweep rows: no session was measured under a fold strategy or hybrid._")
    return curve.rename(SWEEP_LABELS)
