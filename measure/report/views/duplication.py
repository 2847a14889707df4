"""Views of 02-duplication: notification ↔ subagent pairs, overlap, copies in the prompt."""

from __future__ import annotations

import polars as pl

from measure.numbers import ROUND_MODE
from measure.report.views.common import Report, fmt_int, fmt_pct, markdown, per_session, session_column, session_order


def _pct(expr: pl.Expr) -> pl.Expr:
    return (100 * expr).round(1, mode=ROUND_MODE)


def pair_summary(r: Report, pairing: str | None = None) -> pl.DataFrame:
    """Per session (and pairing method): pairs, overlap min/max/mean %, copies in the fold prompt, stub savings."""
    dup = r.tables["duplicates"]
    if pairing is not None:
        dup = dup.filter(pl.col("pairing") == pairing)
    keys = ["session_id"] if pairing is not None else ["session_id", "pairing"]
    agg = dup.group_by(keys).agg(
        pl.len().cast(pl.Int64).alias("pairs"),
        _pct(pl.col("overlap").min()).alias("min overlap %"),
        _pct(pl.col("overlap").max()).alias("max overlap %"),
        _pct(pl.col("overlap").mean()).alias("mean overlap %"),
        pl.col("notification_in_prompt").sum().cast(pl.Int64).alias("notification in prompt"),
        pl.col("final_in_prompt").sum().cast(pl.Int64).alias("final in prompt"),
        pl.col("both_in_prompt").sum().cast(pl.Int64).alias("both in prompt"),
        pl.col("stub_saved_chars").sum().alias("a stub would save (chars)"),
    )
    if pairing is not None:
        # Sessions without pairs still get a row (0 pairs), as in the published table.
        base = pl.DataFrame({"session_id": session_order(r)}, schema={"session_id": pl.String})
        agg = base.join(agg, on="session_id", how="left", maintain_order="left").with_columns(
            pl.col("pairs", "notification in prompt", "final in prompt", "both in prompt", "a stub would save (chars)").fill_null(0)
        )
        return per_session(agg, r)
    return per_session(agg.sort("session_id", "pairing"), r).sort("pairing", maintain_order=True)


def pair_totals(r: Report) -> pl.DataFrame:
    """Per pairing method: pairs, mean overlap, how many reach the fold prompt with both copies, stub savings."""
    dup = r.tables["duplicates"]
    return (
        dup.group_by("pairing")
        .agg(
            pl.len().cast(pl.Int64).alias("pairs"),
            pl.col("session_id").n_unique().cast(pl.Int64).alias("sessions"),
            _pct(pl.col("overlap").mean()).alias("mean overlap %"),
            (pl.col("overlap") >= 0.8).sum().cast(pl.Int64).alias("pairs ≥ 80% alike"),
            pl.col("both_in_prompt").sum().cast(pl.Int64).alias("both in prompt"),
            pl.col("stub_saved_chars").sum().alias("a stub would save (chars)"),
        )
        .sort("pairing")
    )


def top_pairs(r: Report, n: int = 10) -> pl.DataFrame:
    """The `n` most alike pairs (descriptions only with show_excerpts)."""
    dup = r.tables["duplicates"].with_columns(session_column(r))
    cols = ["session", "agent_id", "pairing", "overlap %", "both_in_prompt", "notification_chars", "final_chars", "stub_saved_chars"]
    if r.show_excerpts:
        cols.insert(3, "description")
    return (
        dup.with_columns(_pct(pl.col("overlap")).alias("overlap %"))
        .sort(["overlap", "session_id", "agent_id", "pairing"], descending=[True, False, False, False])
        .head(n)
        .select(cols)
        # The pair's counterfactual, not the stub savings of 01-eviction (what a strategy's stubs did replace).
        .rename({"stub_saved_chars": "a stub would save (chars)"})
    )


def duplication_summary(r: Report):
    """Markdown: how many pairs, how alike, how many reach the prompt twice, what a stub saves."""
    dup = r.tables["duplicates"]
    if dup.height == 0:
        return markdown("No task-notification ↔ subagent pairs were found on this root.")
    lines = []
    for row in pair_totals(r).iter_rows(named=True):
        lines.append(
            f"- `{row['pairing']}`: {row['pairs']} pairs in {row['sessions']} sessions, mean overlap "
            f"{fmt_pct(row['mean overlap %'])}; **{row['both in prompt']} reach the fold prompt with both copies**; "
            f"a stub would save {fmt_int(row['a stub would save (chars)'])} raw chars."
        )
    return markdown("\n".join(lines) + "\n\n" + dedupe_effect(r))


def dedupe_effect(r: Report) -> str:
    """Whether the scoped dedupe changes what the LLM sees, from the prompt digests and stub counts
    of fold and fold_dedupe_scoped (not from the pair counts)."""
    s = r.tables["sessions"]
    fold = s.filter(pl.col("strategy") == "fold").select("session_id", pl.col("prompt_sha256").alias("a"))
    ded = s.filter(pl.col("strategy") == "fold_dedupe_scoped").select("session_id", pl.col("prompt_sha256").alias("b"), "stubbed")
    both = fold.join(ded, on="session_id", how="inner")
    if both.height == 0:
        return "fold and fold_dedupe_scoped were not both measured: no statement on what the dedupe changes."
    changed = both.filter(pl.col("a") != pl.col("b"))
    stubbed = int(both["stubbed"].sum())
    if changed.height == 0:
        return (
            f"The scoped dedupe stubs nothing that reaches the prompt here: fold and fold_dedupe_scoped send "
            f"identical prompts (same sha256) in all {both.height} sessions."
        )
    return (
        f"The scoped dedupe changes the prompt in {changed.height} of {both.height} sessions "
        f"(different sha256 from fold), stubbing {stubbed} notification{'s' if stubbed != 1 else ''} in all."
    )
