"""The published #840 figures (data, not code) and the side-by-side comparison with a run."""

from __future__ import annotations

import polars as pl

from measure.numbers import rounded
from measure.report.views.common import Report, markdown, session_column
from measure.report.views.duplication import pair_summary
from measure.report.views.llm_calls import chunking_table
from measure.report.views.overview import headline

PUBLISHED_840_SOURCE = ("akm #840 design determination (document in PR #841, implemented by #843), "
                        "as transcribed in pipeline-spec §12.2")
"""Where the PUBLISHED_840_* tables come from."""


PUBLISHED_840_HEADLINE = pl.DataFrame({
    "session": ["4f7f80f8", "578b2d47", "f798f45f", "393273fd"],
    "subagent files": [28, 4, 1, 74],
    "link": [92_678, 92_044, 93_395, 91_573],
    "fold": [97_529, 93_781, 93_395, 92_342],
    "fold+dedupe": [97_529, 93_781, 93_395, 92_342],
    "hybrid": [97_529, 94_160, 93_395, 91_573],
    "fold evicted": [0, 21_974, 0, 22_864],
    "fold evicted %": [0.0, 27.5, 0.0, 28.6],
    "refs link": [2, 4, 1, 8],
    "refs fold": [162, 38, 1, 8],
    "refs hybrid": [162, 38, 1, 8],
})
"""#840 headline table: prompt chars per candidate (`buildExtractPrompt(...).length`), fold eviction, inline refs;
"subagent files" counts only the top level of subagents/ (the #840 script read it non-recursively)."""


PUBLISHED_840_DUPLICATES = pl.DataFrame({
    "session": ["4f7f80f8", "578b2d47", "f798f45f", "393273fd"],
    "pairs": [19, 3, 0, 55],
    "min overlap %": [81.0, 84.0, None, 5.0],
    "max overlap %": [97.0, 94.0, None, 96.0],
    "mean overlap %": [89.0, 89.0, None, 75.0],
    "both in prompt": [0, 0, 0, 0],
    "a stub would save (chars)": [207_000, 31_000, 0, 375_000],
})
"""#840 raw duplicate pairs (sidecar toolUseId pairing); stub savings were published rounded to 1K."""


PUBLISHED_840_CHUNKING = pl.DataFrame({
    "session": ["4f7f80f8", "578b2d47", "f798f45f", "393273fd"],
    "parent windows": [17, 15, 8, 100],
    "subagent chunks": [50, 32, 1, 129],
    "calls": [67, 47, 9, 229],
    "parent chars across chunks": [637_296, 820_953, 227_198, 4_944_133],
    "baseline parent chars": [79_995, 79_984, 79_992, 79_997],
    "recovered ×": [8.0, 10.3, 2.8, 61.8],
})
"""#840 chunking table: windows, chunks, calls, parent-origin chars kept across chunks vs one call."""

PUBLISHED_840_DETERMINATION = "hybrid"
"""#840 §5: "Winner: Candidate 3" (harvest-without-prompting hybrid)."""


_840_PREFIXES = tuple(PUBLISHED_840_HEADLINE["session"].to_list())


def is_840_fixture(r: Report) -> bool:
    """True when every #840 session id prefix (4f7f80f8, 578b2d47, f798f45f, 393273fd) is present."""
    ids = r.tables["sessions"]["session_id"].to_list()
    return all(any(i.startswith(p) for i in ids) for p in _840_PREFIXES)


def _side_by_side(measured: pl.DataFrame, published: pl.DataFrame) -> pl.DataFrame:
    """Interleave rows: for each published session, `here`, `#840` and `Δ` (here - #840)."""
    cols = [c for c in published.columns if c != "session"]
    rows = []
    for pub in published.iter_rows(named=True):
        match = measured.filter(pl.col("session").str.starts_with(pub["session"]))
        here = match.row(0, named=True) if match.height else {}
        delta = {c: None if here.get(c) is None or pub[c] is None else here[c] - pub[c] for c in cols}
        rows += [{"session": pub["session"], "source": source, **values} for source, values in
                 (("here", {c: here.get(c) for c in cols}), ("#840", {c: pub[c] for c in cols}), ("Δ", delta))]
    schema = {"session": pl.String, "source": pl.String} | {
        c: pl.Float64 if measured.schema.get(c) == pl.Float64 else published.schema[c] for c in cols}
    return pl.DataFrame(rows, schema=schema, orient="row")


PROMPT_COLUMNS: tuple[str, ...] = ("link", "fold", "fold+dedupe", "hybrid")
"""Headline columns that hold prompt lengths: they include the template, once per call."""


def _over_link(df: pl.DataFrame) -> pl.DataFrame:
    """Prompt chars over link's: the template cancels, so these compare across templates."""
    return df.with_columns(*((pl.col(c) - pl.col("link")).alias(f"{c} − link") for c in PROMPT_COLUMNS[1:]))


def top_level_subagent_files(r: Report) -> pl.DataFrame:
    """Per session: transcripts directly in `<session>/subagents/` (what #840's non-recursive read counted)."""
    prefix = pl.col("session_path").str.replace(r"\.jsonl$", "") + "/subagents/"
    top = r.tables["subagents"].filter(pl.col("subagent_path").str.starts_with(prefix)
                                       & ~pl.col("subagent_path").str.slice(prefix.str.len_chars()).str.contains("/"))
    return top.group_by("session_id").agg(pl.len().cast(pl.Int64).alias("top"))


def bundled_template(r: Report) -> bool:
    """True when the run used the bundled stand-in template (not akm's own)."""
    return not (r.run.get("parameters") or {}).get("template_path")


def published_comparison(r: Report, which: str = "headline"):
    """The recomputed table ("headline", "duplicates" or "chunking") next to the published #840 one (rows:
    here / #840 / Δ per session); a one-line Markdown note when the root is not the #840-shaped fixture."""
    if not is_840_fixture(r):
        return markdown("_This root is not the #840-shaped fixture (sessions 4f7f80f8…, 578b2d47…, f798f45f…, "
                        "393273fd…), so there are no published figures to set beside it._")
    if which == "headline":  # on #840's definitions: top-level subagent files, plus prompt chars over link
        tops = top_level_subagent_files(r).select(session_column(r), "top")
        measured = headline(r).join(tops, on="session", how="left", maintain_order="left")
        measured = measured.with_columns(pl.col("top").fill_null(0).alias("subagent files")).drop("top")
        table = _side_by_side(_over_link(measured), _over_link(PUBLISHED_840_HEADLINE))
        if bundled_template(r):
            # Absolute prompt lengths include a different template: their Δ compares templates, not strategies.
            table = table.with_columns(pl.when(pl.col("source") == "Δ").then(None).otherwise(pl.col(c)).alias(c)
                                       for c in PROMPT_COLUMNS)
        return table
    if which == "duplicates":
        return _side_by_side(pair_summary(r, pairing="sidecar_tool_use_id"), PUBLISHED_840_DUPLICATES)
    if which == "chunking":
        return _side_by_side(chunking_table(r), PUBLISHED_840_CHUNKING)
    raise ValueError(f"unknown published table {which!r}: use headline, duplicates or chunking")


def published_note(r: Report, which: str = "headline"):
    """Markdown: how many recomputed figures equal the published ones, and the source."""
    if not is_840_fixture(r):
        return markdown("")
    delta = published_comparison(r, which).filter(pl.col("source") == "Δ").drop("session", "source")
    known = [v for col in delta.columns for v in delta[col].to_list() if v is not None]
    exact = known.count(0)
    worst = max((abs(v) for v in known), default=0)
    worst_text = f"{worst:,.0f}" if float(worst).is_integer() else f"{rounded(worst, 1):,.1f}"
    text = (f"{exact} of {len(known)} comparable figures equal the published ones exactly"
            + (f"; the largest difference is {worst_text}." if worst else ".")
            + f" Published figures: {PUBLISHED_840_SOURCE}. The fixture is shaped like the #840 sessions (ids, subagent"
            " counts, sizes) but its transcripts are synthetic, so only the shape of the result, not each figure, is"
            " expected to match.")
    if which == "headline":
        text += (" Compared on #840's definitions: `subagent files` counts only the top level of `subagents/`, as"
                 " #840's script did (the headline table above counts every transcript the fold reads, nested workflow"
                 " agents included); `… − link` columns are prompt chars over link's, in which the template cancels.")
        if bundled_template(r):
            text += (" Prompt chars here were measured with the bundled stand-in template, not akm's"
                     " `extract-session.md`, whose length differs by a fixed amount per call: the Δ of the absolute"
                     " prompt columns is left empty. Pass akm's own template with `--template PATH`"
                     " (`make report REPORT_ARGS=\"--template …/extract-session.md\"`) to compare them too.")
        else:
            text += f" Prompt chars were measured with the template `{r.run['parameters']['template_path']}`."
        decision = r["verdict"].filter(pl.col("criterion") == "decision")["decision"].to_list()
        here = decision[0] if decision else None
        text += (f" #840 determined **{PUBLISHED_840_DETERMINATION}** (C3) from fold's eviction, refs, prompt size and"
                 " chunking's cost; the dominance analysis of this run, which also counts what hybrid and link never"
                 f" send, decides **{here}**" + (" too." if here == PUBLISHED_840_DETERMINATION else "."))
    elif which == "duplicates":
        text += " #840 published the stub savings rounded to thousands."
    return markdown(text)
