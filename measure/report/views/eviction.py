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
    ordered_strategies,
)


def parent_kept(r: Report) -> pl.DataFrame:
    """Parent-origin chars kept per session: alone (= link) and under each fold-family strategy."""
    ev = r.tables["eviction"]
    strategies = ordered_strategies(ev["strategy"].unique().to_list())
    alone = ev.group_by("session_id").agg(pl.col("alone_parent_kept_chars").first().alias("alone (link)"))
    wide = _wide(ev, "parent_kept_chars", strategies, r)
    out = wide.join(alone, on="session_id", how="left", maintain_order="left")
    return _with_session(out, r).select("session", "alone (link)", *strategies)


def eviction_table(r: Report) -> pl.DataFrame:
    """Parent-origin chars evicted per session and strategy, as chars and % of the parent-alone set."""
    ev = r.tables["eviction"]
    strategies = ordered_strategies(ev["strategy"].unique().to_list())
    out = pl.DataFrame({"session_id": _session_order(r)}, schema={"session_id": pl.String})
    for s in strategies:
        out = out.join(_wide(ev, "evicted_chars", [s], r, {s: f"{s}"}), on="session_id", how="left", maintain_order="left")
        out = out.join(_wide(ev, "evicted_chars_pct", [s], r, {s: f"{s} %"}), on="session_id", how="left", maintain_order="left")
    return _with_session(out, r).select("session", pl.exclude("session", "session_id"))


def _zero_budget_expr(df: pl.DataFrame) -> pl.DataFrame:
    """Per session and strategy: smallest budget from which every larger swept budget evicts nothing.

    That is the smallest budget above the largest one that still evicts (or has no value):
    aggregations per group, without sorting the sweep or looping in Python (issue #17).
    """
    keys = ["session_id", "strategy"]
    bad = ~(pl.col("evicted_chars").is_not_null() & (pl.col("evicted_chars") <= 0))
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
    return _with_session(out, r).select("session", *strategies)


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
    """Pooled eviction per strategy and budget: evicted chars as % of the parent-alone chars of all sessions.

    Strategies in `exclude` (default: link and chunked) are left out.
    """
    budget_sweep = budget_sweep.filter(~pl.col("strategy").is_in(list(exclude)))
    if budget_sweep.height == 0:
        return pl.DataFrame(
            schema={"strategy": pl.String, "budget": pl.Int64, "evicted_chars": pl.Int64, "alone_parent_kept_chars": pl.Int64, "evicted_pct": pl.Float64, "sessions_evicting": pl.UInt32}
        )
    out = budget_sweep.group_by("strategy", "budget").agg(
        pl.col("evicted_chars").sum(),
        pl.col("alone_parent_kept_chars").sum(),
        (pl.col("evicted_chars") > 0).sum().alias("sessions_evicting"),
    )
    out = out.with_columns(
        (100.0 * pl.col("evicted_chars") / pl.max_horizontal(pl.col("alone_parent_kept_chars"), pl.lit(1))).round(1).alias("evicted_pct")
    )
    order = {s: i for i, s in enumerate(ordered_strategies(out["strategy"].unique().to_list()))}
    return (
        out.with_columns(pl.col("strategy").replace_strict(order, return_dtype=pl.Int64).alias("_o"))
        .sort("_o", "budget")
        .drop("_o")
        .select("strategy", "budget", "evicted_chars", "alone_parent_kept_chars", "evicted_pct", "sessions_evicting")
    )


def eviction_summary(r: Report):
    """Markdown: who evicts parent content at the run's budget, and which budget lets fold evict nothing."""
    ev = r.tables["eviction"]
    sweep = r.tables["budget_sweep"]
    n = ev["session_id"].n_unique()
    parts = []
    for s in ordered_strategies(ev["strategy"].unique().to_list()):
        sub = ev.filter(pl.col("strategy") == s)
        k = sub.filter(pl.col("evicted_chars") > 0).height
        top = sub["evicted_chars_pct"].max() if k else 0.0
        parts.append(f"`{s}` evicts parent content in {k}/{n} sessions" + (f" (up to {_fmt_pct(top)})" if k else ""))
    text = "At the run's budget: " + "; ".join(parts) + "." if parts else "No eviction rows."
    if sweep.height:
        zero = fold_zero_budget(sweep)
        largest = sweep["budget"].max()
        if zero is None:
            text += f" Within the sweep, fold still evicts parent content at the largest budget ({_fmt_int(largest)})."
        else:
            text += f" Within the sweep, **fold evicts nothing in any session from maxTotalChars = {_fmt_int(zero)}**."
    return _markdown(text)
