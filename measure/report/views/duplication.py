"""Views of 02-duplication: notification ↔ subagent pairs, overlap, copies in the prompt."""

from __future__ import annotations

import polars as pl

from measure.numbers import ROUND_MODE
from measure.report.views.common import (Report, fmt_int, fmt_pct, markdown, per_session, plural, session_column,
                                         session_ids)


def _pct(expr: pl.Expr) -> pl.Expr:
    return (100 * expr).round(1, mode=ROUND_MODE)


def pair_summary(r: Report, pairing: str | None = None) -> pl.DataFrame:
    """Per session (and pairing method): pairs, overlap min/max/mean %, copies in the fold prompt, stub savings."""
    dup = r.tables["duplicates"]
    if pairing is not None:
        dup = dup.filter(pl.col("pairing") == pairing)
    agg = dup.group_by("session_id", *(["pairing"] if pairing is None else [])).agg(
        pl.len().cast(pl.Int64).alias("pairs"),
        _pct(pl.col("overlap").min()).alias("min overlap %"),
        _pct(pl.col("overlap").max()).alias("max overlap %"),
        _pct(pl.col("overlap").mean()).alias("mean overlap %"),
        *(pl.col(f"{c}_in_prompt").sum().cast(pl.Int64).alias(f"{c} in prompt")
          for c in ("notification", "final", "both")),
        pl.col("stub_would_save_chars").sum().alias("a stub would save (chars)"),
    )
    if pairing is not None:
        # Sessions without pairs still get a row (0 pairs), as in the published table.
        agg = session_ids(r).join(agg, on="session_id", how="left", maintain_order="left")
        return per_session(agg.with_columns(pl.exclude("session_id", "^.*overlap %$").fill_null(0)), r)
    return per_session(agg.sort("session_id", "pairing"), r).sort("pairing", maintain_order=True)


def pair_totals(r: Report) -> pl.DataFrame:
    """Per pairing method: pairs, mean overlap, how many reach the fold prompt with both copies, stub savings."""
    return r.tables["duplicates"].group_by("pairing").agg(
        pl.len().cast(pl.Int64).alias("pairs"),
        pl.col("session_id").n_unique().cast(pl.Int64).alias("sessions"),
        _pct(pl.col("overlap").mean()).alias("mean overlap %"),
        (pl.col("overlap") >= 0.8).sum().cast(pl.Int64).alias("pairs ≥ 80% alike"),
        pl.col("both_in_prompt").sum().cast(pl.Int64).alias("both in prompt"),
        pl.col("stub_would_save_chars").sum().alias("a stub would save (chars)"),
    ).sort("pairing")


def top_pairs(r: Report, n: int = 10) -> pl.DataFrame:
    """The `n` most alike pairs (descriptions only with show_excerpts)."""
    cols = ["session", "agent_id", "pairing", "overlap %", "both_in_prompt", "notification_chars", "final_chars", "stub_would_save_chars"]
    if r.show_excerpts:
        cols.insert(3, "description")
    return (
        r.tables["duplicates"].with_columns(session_column(r), _pct(pl.col("overlap")).alias("overlap %"))
        .sort(["overlap", "session_id", "agent_id", "pairing"], descending=[True, False, False, False])
        .head(n)
        .select(cols)
        # The pair's counterfactual, not the stub savings of 01-eviction (what a strategy's stubs did replace).
        .rename({"stub_would_save_chars": "a stub would save (chars)"})
    )


def duplication_summary(r: Report):
    """Markdown: how many pairs, how alike, how many reach the prompt twice, what a stub saves."""
    if r.tables["duplicates"].height == 0:
        return markdown("No task-notification ↔ subagent pairs were found on this root.")
    lines = [f"- `{row['pairing']}`: {row['pairs']} pairs in {row['sessions']} sessions, mean overlap "
             f"{fmt_pct(row['mean overlap %'])}; **{row['both in prompt']} reach the fold prompt with both copies**; "
             f"a stub would save {fmt_int(row['a stub would save (chars)'])} raw chars."
             for row in pair_totals(r).iter_rows(named=True)]
    return markdown("\n".join(lines) + "\n\n" + dedupe_effect(r))


#: The strategies that stub parent copies, and the copies each stubs.
STUBBING = {"fold_dedupe_scoped": "notifications whose subagent copy is kept (#842)",
            "fold_stub_raw": "notifications of sidecar pairs, in the raw stream (#840's simulation)",
            "fold_dedupe_sync": "synchronous Task results whose subagent copy is kept (a suite proposal)"}


def stubs_table(r: Report) -> pl.DataFrame:
    """Per stubbing strategy: copies stubbed, parent chars the stubs shortened, sessions whose prompt is not fold's."""
    s, ev = r.tables["sessions"], r.tables["eviction"]
    fold = s.filter(pl.col("strategy") == "fold").select("session_id", pl.col("prompt_sha256").alias("fold"))
    rows = []
    for name, what in STUBBING.items():
        part = s.filter(pl.col("strategy") == name)
        if part.height == 0:
            continue
        changed = part.join(fold, on="session_id").filter(pl.col("prompt_sha256") != pl.col("fold")).height
        shortened = ev.filter(pl.col("strategy") == name)["stub_saved_chars"].sum()
        rows.append((name, what, int(part["stubbed"].sum()), int(shortened), changed))
    counts = ("copies stubbed", "stub-shortened parent chars", "sessions whose prompt differs from fold")
    return pl.DataFrame(rows, schema={"strategy": pl.String, "stubs": pl.String} | dict.fromkeys(counts, pl.Int64), orient="row")


def stubs_note(r: Report):
    """Markdown: what a stub would save on every pair (a counterfactual), before what was stubbed."""
    dup = r.tables["duplicates"]
    return markdown(f"A stub on each of the {dup.height} parent copies paired here would save "
                    f"{fmt_int(int(dup['stub_would_save_chars'].sum()))} raw chars (`duplicates.stub_would_save_chars`, "
                    "summed over every pair whether or not the budget kept it: a counterfactual). What each strategy did "
                    "stub, at the run's budget (`sessions.stubbed`, `eviction.stub_saved_chars`):")


def dedupe_effect(r: Report) -> str:
    """Whether each dedupe changes what the LLM sees, from the prompt digests and stub counts (not the pair counts)."""
    s = r.tables["sessions"]
    fold = s.filter(pl.col("strategy") == "fold").select("session_id", pl.col("prompt_sha256").alias("a"))
    out = []
    for name, label, what in (("fold_dedupe_scoped", "The scoped dedupe", "notification"),
                              ("fold_dedupe_sync", "The sync dedupe (a suite proposal)", "synchronous result")):
        ded = s.filter(pl.col("strategy") == name).select("session_id", pl.col("prompt_sha256").alias("b"), "stubbed")
        both = fold.join(ded, on="session_id", how="inner")
        if both.height == 0:
            out.append(f"fold and {name} were not both measured: no statement on what it changes.")
            continue
        changed = both.filter(pl.col("a") != pl.col("b"))
        stubbed = int(both["stubbed"].sum())
        if changed.height == 0:
            out.append(f"{label} stubs nothing that reaches the prompt here: fold and {name} send identical prompts "
                       f"(same sha256) in all {both.height} sessions.")
        else:
            out.append(f"{label} changes the prompt in {changed.height} of {both.height} sessions (different sha256 from "
                       f"fold), stubbing {stubbed} {plural(stubbed, what)} in all.")
    return " ".join(out)
