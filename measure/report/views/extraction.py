"""Views of 06-extraction: what a real model extracted under each strategy, and how the arms differ.

Results: a `measure extract --out O` directory (`measure report --extraction O` copies it to `<run dir>/extraction`),
else for a root under fixtures/ the tables beside its recorded store (RECORDED_DIR; tests/test_extraction_views.py
checks they are what `measure.extract.run.rebuild` makes of the store).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from measure import paths
from measure.numbers import ROUND_MODE
from measure.report.shaping import sources_table as _sources
from measure.report.style import label, short_ids
from measure.report.views.common import fmt_int, fmt_pct, headed, markdown
from measure.schema import EXTRACTION_TABLES

RECORDED_DIR = "tests/extraction"
"""Recorded extraction runs (repo-relative), one folder per sessions root name (e.g. `default`)."""


@dataclass(frozen=True)
class Extraction:
    """The tables of one extraction run, its extract.json, and where they came from."""

    calls: pl.DataFrame
    ab: pl.DataFrame
    unique: pl.DataFrame
    meta: dict[str, Any]
    source: str  # portable path of the results
    recorded: bool  # the recorded store of a bundled fixture
    show_excerpts: bool = False


def find_results(sessions_root: str | os.PathLike | None, extraction_dir: str | os.PathLike | None = None,
                 out_dir: str | os.PathLike | None = None) -> tuple[Path, bool] | None:
    """(directory, recorded?) of the extraction results to show, or None: `extraction_dir`, else an
    `extraction/` folder in the run directory `out_dir`, else the recorded store of a root under fixtures/."""
    for d in (extraction_dir, Path(out_dir) / "extraction" if out_dir else None):
        if d and (paths.resolve(d) / "extract.json").is_file():
            return paths.resolve(d), False
    if sessions_root and paths.is_fixture(sessions_root):
        rec = paths.root() / RECORDED_DIR / paths.report_name(paths.resolve(sessions_root))
        if (rec / "extract.json").is_file():
            return rec, True
    return None


def load(sessions_root: str | os.PathLike | None, extraction_dir: str | os.PathLike | None = None, *,
         out_dir: str | os.PathLike | None = None, show_excerpts: bool = False) -> Extraction | None:
    """The extraction results for a report, or None when there are none (see find_results)."""
    found = find_results(sessions_root, extraction_dir, out_dir)
    if found is None:
        return None
    directory, recorded = found
    meta = json.loads((directory / "extract.json").read_text(encoding="utf-8"))
    calls, ab, unique = (pl.read_parquet(file) if (file := directory / f"{name}.parquet").exists()
                 else pl.DataFrame(schema=table.polars_schema) for name, table in EXTRACTION_TABLES.items())
    return Extraction(calls, ab, unique, meta, paths.portable(directory), recorded, show_excerpts)


def summary(x: Extraction | None):
    """Markdown: where the results come from, what was sent, and how many calls failed."""
    if x is None:
        return markdown("No extraction results for this root: run `measure extract --root ROOT --out O` and render "
                        "`measure report --extraction O`.")
    p = x.meta.get("params", {})
    client = p.get("client", "?")
    model = x.meta.get("model") or p.get("model") or "?"
    ok = x.calls.filter(pl.col("status") == "ok").height
    lines = [
        f"- **Results:** `{x.source}`" + (" (a recorded store, rebuilt now with no network)" if x.recorded else ""),
        f"- **Client / model:** `{client}` / `{model}`, {p.get('samples', 1)} sample(s) per prompt, "
        f"temperature {p.get('temperature') if p.get('temperature') is not None else 'the server default'}",
        f"- **Sessions:** {x.ab['session_path'].n_unique()}, "
        + ("named on the command line" if p.get("sessions") else f"selected by `{p.get('select', '?')}`"
           + (" (most subagent-origin chars in the fold prompt first)" if p.get("select") == "most_delegated" else "")),
        f"- **Calls:** {fmt_int(x.calls.height)}, {fmt_int(ok)} answered with candidates, "
        f"{fmt_int(x.calls.height - ok)} error row(s)",
    ]
    if client == "command":
        lines.append(f"- **Note:** a shell command stood in for the model (`{p.get('command')}`); its candidates "
                     "say nothing about what a real model extracts unless that command calls one.")
    return markdown("\n".join(lines))


def _session(x: Extraction) -> pl.Expr:
    return pl.col("session_id").replace_strict(short_ids(x.ab["session_id"].to_list()), default=pl.col("session_id")).alias("session")


def ab_table(x: Extraction) -> pl.DataFrame:
    """One row per session and strategy pair: candidates, matched, unique per arm (and their sources), noise."""
    return x.ab.sort("session_path", "strategy_a", "strategy_b").select(
        _session(x),
        pl.format("{} vs {}", "strategy_a", "strategy_b").alias("arms"),
        *headed({"candidates_a": "cand. a", "candidates_b": "cand. b", "matched": "matched", "unique_a": "unique a",
                 "unique_a_subagent_only": "a: subagent-only", "unique_b": "unique b",
                 "unique_b_subagent_only": "b: subagent-only", "unmatched_pct": "unmatched % (a vs b)",
                 "noise_a_unmatched_pct": "noise % (a vs a)", "noise_b_unmatched_pct": "noise % (b vs b)"}),
    )


def sources_table(x: Extraction) -> pl.DataFrame:
    """Unique candidates per arm by where their words come from (complete session pairs only)."""
    return _sources(x.ab)


def calls_table(x: Extraction) -> pl.DataFrame:
    """Per strategy: calls, answered, errors by status, tokens reported, median latency."""
    return x.calls.group_by("strategy").agg(
        pl.len().alias("calls"),
        *((pl.col("status") == status).sum().alias(header) for status, header in (
            ("ok", "ok"), ("call_failed", "failed"), ("invalid_reply", "invalid reply"),
            ("not_in_store", "not in store"))),
        pl.col("candidates").sum(),
        # null, not 0, when the client reports no usage (command)
        *(pl.when(pl.col(f"{io}_tokens").is_not_null().any()).then(pl.col(f"{io}_tokens").sum()).alias(f"{io} tokens")
          for io in ("input", "output")),
        pl.col("latency_ms").median().round(0, mode=ROUND_MODE).alias("median latency ms"),
    ).sort("strategy")


def errors(x: Extraction):
    """Calls that gave no candidates, with the reason, or a line saying every call gave candidates."""
    t = x.calls.filter(pl.col("status") != "ok").select(_session(x), "strategy", "call_index", "sample", "status", "error")
    return t if t.height else markdown(f"Every one of the {fmt_int(x.calls.height)} calls gave candidates.")


def verdict_text(x: Extraction | None) -> str:
    """The finding in plain words, computed from extraction_ab ('' when there are no complete pairs)."""
    if x is None:
        return ""
    lines = []
    for (sa, sb), part in x.ab.group_by(["strategy_a", "strategy_b"], maintain_order=True):
        done = part.filter(pl.col("complete"))
        if done.height == 0:
            lines.append(f"- **{label(sa)} vs {label(sb)}:** no session has a complete pair of replies.")
            continue
        restated = int(done["unique_a_inline_ref"].sum() + done["unique_a_notification"].sum())
        noise = [v for v in (done["noise_a_unmatched_pct"].mean(), done["noise_b_unmatched_pct"].mean()) if v is not None]
        lines.append(
            f"- **{label(sa)} vs {label(sb)}** ({done.height} session(s) with both replies): "
            f"{fmt_int(done['matched'].sum())} candidates matched; {fmt_int(done['unique_a'].sum())} found only under "
            f"{sa}, of which {fmt_int(done['unique_a_subagent_only'].sum())} rest on content present only in subagent-"
            f"origin events (the seed's criterion for what {sb} cannot see) and {fmt_int(restated)} restate an inline ref "
            f"or a notification; {fmt_int(done['unique_b'].sum())} found only under {sb}. Unmatched between arms: "
            f"{fmt_pct(done['unmatched_pct'].mean())} of candidates"
            + (f"; between two samples of the same prompt: {fmt_pct(sum(noise) / len(noise))} (sampling noise)." if noise
               else "; sampling noise not measured (one sample per prompt; use --samples 2 or more)."))
    return "\n".join(lines)


def verdict(x: Extraction | None):
    """Markdown of verdict_text, or a line saying there is nothing to compare."""
    return markdown(verdict_text(x) or "No extraction results to compare.")


def verdict_section(r, out_dir: str | os.PathLike | None = None) -> str:
    """Markdown for the overview's verdict when extraction results exist for the report `r`, else '' (`out_dir`: the
    notebook's, where `measure report --extraction` copies the results)."""
    x = load(r.sessions_root, out_dir=out_dir)
    body = verdict_text(x)
    if not body:
        return ""
    p = x.meta.get("params", {})
    model = x.meta.get("model") or p.get("model")
    head = f"**What a model extracted** (`{p.get('client')}` / `{model}`, see 06-extraction):"
    if p.get("client") == "command":  # the overview must not present a stand-in's replies as a model's findings
        head = (f"**What a stand-in for the model returned** (`command` / `{model}`: a shell command, "
                f"`{p.get('command')}`, answered instead of a model, so these counts say nothing about what a real model "
                "extracts; see 06-extraction):")
    if x.recorded:
        head += f" *Replies from the recorded store `{x.source}`, not from a call made for this report.*"
    return head + "\n\n" + body


def excerpts(x: Extraction) -> pl.DataFrame | Any:
    """Titles of the candidates each arm found alone (sample 0). Transcript-derived: only with show_excerpts."""
    if not x.show_excerpts:
        return markdown("Candidate text is not shown (it is transcript-derived); render with `--show-excerpts`.")
    if x.unique.is_empty() and x.ab.filter(pl.col("complete"))["unique_a", "unique_b"].sum_horizontal().sum():
        return markdown("These results have no `extraction_unique` table (an older `measure extract`): run the same "
                        "command again with `--offline`, which rebuilds every table from the store and sends nothing.")
    return x.unique.select(_session(x), pl.col("strategy").alias("only under"), pl.col("title").str.slice(0, 120))


def sources_bars(x: Extraction | None):
    """The figure of candidates found by one arm only, by source (`plots.sources_bars` of extraction_ab)."""
    from measure.report import plots  # noqa: PLC0415 - matplotlib only for the page that draws it

    return plots.sources_bars(x.ab if x is not None else None)
