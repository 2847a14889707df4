"""Tables a page and a figure both show, derived from the run's tables: one copy of each."""

from __future__ import annotations

import polars as pl

from measure.measurements.verdict import CRITERIA
from measure.numbers import ROUND_MODE
from measure.report.style import DELIVERY_COLORS, SOURCE_LABELS, UNKNOWN, ordered_strategies, strategy_rank
from measure.report.style import task_group_key, version_key

TOKEN_COLUMNS = ("input_tokens", "cache_creation_tokens", "cache_read_tokens", "output_tokens")
"""The four usage fields of the tokens table whose sum is a call's tokens."""


def all_tokens(prefix: str = "") -> pl.Expr:
    """The sum of the four usage columns (`prefix="naive_"`: of their per-line counterparts)."""
    return pl.sum_horizontal(*(pl.col(prefix + c) for c in TOKEN_COLUMNS))


SWEEP_EXCLUDED: tuple[str, ...] = ("link", "chunked")
"""Left out of the pooled sweep: link is the parent-alone reference (0 by definition), and chunked
keeps parent content across many calls (large negative "eviction"; see 03-llm-calls)."""


def zero_budgets(sweep: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """Per session and strategy: smallest swept budget from which every larger one evicts nothing (budget
    eviction only, not what stubs shorten on purpose): the smallest budget above the largest one that still
    evicts (or has no value); null when the largest budget still evicts."""
    keys = ["session_id", "strategy"]
    bad = ~(pl.col("budget_evicted_chars").is_not_null() & (pl.col("budget_evicted_chars") <= 0))
    rows = sweep.lazy().select(*keys, "budget", bad.alias("_bad"))
    worst = rows.group_by(keys).agg(pl.when(pl.col("_bad")).then(pl.col("budget")).max().alias("_worst"))
    clear = (
        rows.join(worst, on=keys, nulls_equal=True)
        .filter(pl.col("_worst").is_null() | (pl.col("budget") > pl.col("_worst")))
        .group_by(keys)
        .agg(pl.col("budget").min().cast(pl.Int64).alias("zero_from"))
    )
    return worst.select(keys).join(clear, on=keys, how="left", nulls_equal=True).sort(keys).collect()


def fold_zero_budget(sweep: pl.DataFrame | pl.LazyFrame) -> int | None:
    """The smallest swept budget at which fold evicts nothing in every session (None if none)."""
    z = zero_budgets(sweep.lazy().filter(pl.col("strategy") == "fold"))
    if z.height == 0 or z["zero_from"].null_count():
        return None
    return int(z["zero_from"].max())


def sweep_curve(sweep: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """Pooled budget eviction (`evicted_chars`; `stub_saved_chars` is what stubs shortened on purpose) per
    strategy and budget, as % of the parent-alone chars of all sessions; SWEEP_EXCLUDED is left out."""
    sweep = sweep.lazy().filter(~pl.col("strategy").is_in(list(SWEEP_EXCLUDED)))
    out = sweep.group_by("strategy", "budget").agg(
        pl.col("budget_evicted_chars").sum().alias("evicted_chars"),
        pl.col("stub_saved_chars").sum(),
        pl.col("alone_parent_kept_chars").sum(),
        (pl.col("budget_evicted_chars") > 0).sum().alias("sessions_evicting"),
    ).collect()
    pct = 100.0 * pl.col("evicted_chars") / pl.max_horizontal(pl.col("alone_parent_kept_chars"), pl.lit(1))
    return out.sort(strategy_rank(out["strategy"]), "budget").select(
        "strategy", "budget", "evicted_chars", "stub_saved_chars", "alone_parent_kept_chars",
        pct.round(1, mode=ROUND_MODE).alias("evicted_pct"), "sessions_evicting",
    )


def breakdown_ordered(df: pl.DataFrame) -> pl.DataFrame:
    """Breakdown rows in display order: projects by sessions (most first), versions by number, months by date."""
    keys = {
        "project": lambda r: (-r["sessions"], r["value"]),
        "cc_version": lambda r: (r["value"] == UNKNOWN, version_key(r["value"])),
        "month": lambda r: (r["value"] == UNKNOWN, r["value"]),
    }
    rows = [r for dim, key in keys.items() for r in sorted(df.filter(pl.col("dimension") == dim).to_dicts(), key=key)]
    return pl.DataFrame(rows, schema=df.schema) if rows else df.clear()


def sources_table(ab: pl.DataFrame) -> pl.DataFrame:
    """Unique candidates per arm by where their words come from (complete session pairs only)."""
    rows = []
    for (sa, sb), part in ab.filter(pl.col("complete")).group_by(["strategy_a", "strategy_b"], maintain_order=True):
        for arm, name in (("a", sa), ("b", sb)):
            row = {"arms": f"{sa} vs {sb}", "unique to": name, "unique": int(part[f"unique_{arm}"].sum())}
            rows.append(row | {text: int(part[f"unique_{arm}_{s}"].sum()) for s, text in SOURCE_LABELS.items()})
    schema = {"arms": pl.String, "unique to": pl.String, "unique": pl.Int64} | dict.fromkeys(SOURCE_LABELS.values(), pl.Int64)
    return pl.DataFrame(rows, schema=schema, orient="row")


def deliveries(background: pl.DataFrame) -> pl.DataFrame:
    """Background tasks by kind and Claude Code version, one column per delivery (turn, removed, never)."""
    bg = background.with_columns(pl.col("cc_version").fill_null(UNKNOWN))
    rows = []
    for (kind, version), part in sorted(bg.group_by("kind", "cc_version"), key=lambda kv: task_group_key(*kv[0])):
        counts = dict(part.group_by("delivery").len().iter_rows())
        rows.append({"kind": kind, "Claude Code": version, **{d: counts.get(d, 0) for d in DELIVERY_COLORS}, "tasks": part.height})
    schema = {"kind": pl.String, "Claude Code": pl.String, **dict.fromkeys(DELIVERY_COLORS, pl.Int64), "tasks": pl.Int64}
    return pl.DataFrame(rows, schema=schema, orient="row")


def replay_totals(replay: pl.DataFrame) -> pl.DataFrame:
    """Per strategy: sessions replayed, moments, extractions, re-extractions, wasted ones and the LLM calls they imply."""
    return (
        replay.group_by("strategy")
        .agg(
            pl.len().alias("sessions"),
            pl.col("extraction_points").sum().alias("moments"),
            pl.col("extractions").sum(),
            pl.col("re_extractions").sum().alias("re-extractions"),
            (pl.col("re_extractions") > 0).sum().alias("sessions re-extracted"),
            pl.col("wasted_extractions").sum().alias("wasted"),
            (pl.col("wasted_extractions") > 0).sum().alias("sessions with waste"),
            pl.col("late_extractions").sum().alias("after the parent's last event"),
            pl.col("llm_calls").sum().alias("LLM calls"),
            pl.col("wasted_llm_calls").sum().alias("wasted LLM calls"),
        )
        .sort(strategy_rank(replay["strategy"]))
    )


def chosen_pairs(robustness: pl.DataFrame, differing: bool = False) -> pl.DataFrame:
    """The robustness rows of the chosen strategy against each other front member and rival: the other
    strategy in display order, then the criteria in the verdict's order (`differing`: only the rows
    where some session differs)."""
    pairs = robustness.filter(pl.col("chosen_pair") & (pl.col("ties") < pl.col("sessions") if differing else True))
    others = {s: i for i, s in enumerate(ordered_strategies(pairs["strategy_b"]))}
    criteria = {c: i for i, (c, _) in enumerate(CRITERIA)}
    return pairs.sort(pl.col("strategy_b").replace_strict(others, return_dtype=pl.Int64),
                      pl.col("criterion").replace_strict(criteria, default=len(criteria), return_dtype=pl.Int64))
