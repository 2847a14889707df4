"""Presentation helpers the notebooks call: load a run, shape its tables for reading, say what they mean.

Everything here is a pure function of the schema tables (plus the published #840 figures,
kept below as data). Notebooks stay thin: they call `load(...)` and then one helper per
table or paragraph. Rows are always sorted, so output is byte-stable from run to run.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from measure import paths
from measure.schema import TABLES
from measure.tables import read_tables

__all__ = [
    "STRATEGY_ORDER",
    "STRATEGY_LABELS",
    "PUBLISHED_840_SOURCE",
    "PUBLISHED_840_HEADLINE",
    "PUBLISHED_840_DUPLICATES",
    "PUBLISHED_840_CHUNKING",
    "Report",
    "load",
    "run_measure",
    "FIXTURE_FILE_TIME_MS",
    "file_time_for",
    "ordered_strategies",
    "short_ids",
    "run_summary",
    "headline",
    "is_840_fixture",
    "published_comparison",
    "verdict",
    "errors",
    "subagent_inventory",
    "quirks",
    "parent_kept",
    "eviction_table",
    "zero_eviction_budgets",
    "sweep_curve",
    "fold_zero_budget",
    "eviction_summary",
    "pair_summary",
    "pair_totals",
    "overlap_bins",
    "top_pairs",
    "duplication_summary",
    "calls_table",
    "chunking_table",
    "run_cost_table",
    "calls_summary",
]

STRATEGY_ORDER: tuple[str, ...] = ("link", "fold", "fold_dedupe_scoped", "fold_stub_raw", "hybrid", "chunked")
"""Display order of the strategies everywhere (tables, legends, bars)."""

STRATEGY_LABELS: dict[str, str] = {
    "link": "link (C2)",
    "fold": "fold (C1)",
    "fold_dedupe_scoped": "fold + scoped dedupe",
    "fold_stub_raw": "fold + raw stub",
    "hybrid": "hybrid (C3)",
    "chunked": "chunked (C4)",
}
"""Human names; C1..C4 are the candidate numbers of the #840 study."""

# --------------------------------------------------------------------------------------------
# Published #840 figures (data, not code).
# --------------------------------------------------------------------------------------------

PUBLISHED_840_SOURCE = (
    "akm #840 design determination (document in PR #841, implemented by #843), "
    "as transcribed in pipeline-spec §12.2"
)
"""Where the PUBLISHED_840_* tables come from."""

PUBLISHED_840_HEADLINE = pl.DataFrame(
    {
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
    }
)
"""#840 headline table: prompt chars per candidate, fold eviction, inline refs.

"subagent files" counts only the top level of subagents/ (the #840 script read it
non-recursively); the other columns are `buildExtractPrompt(...).length` and friends.
"""

PUBLISHED_840_DUPLICATES = pl.DataFrame(
    {
        "session": ["4f7f80f8", "578b2d47", "f798f45f", "393273fd"],
        "pairs": [19, 3, 0, 55],
        "min overlap %": [81.0, 84.0, None, 5.0],
        "max overlap %": [97.0, 94.0, None, 96.0],
        "mean overlap %": [89.0, 89.0, None, 75.0],
        "both in prompt": [0, 0, 0, 0],
        "stub saved chars": [207_000, 31_000, 0, 375_000],
    }
)
"""#840 raw duplicate pairs (sidecar toolUseId pairing); stub savings were published rounded to 1K."""

PUBLISHED_840_CHUNKING = pl.DataFrame(
    {
        "session": ["4f7f80f8", "578b2d47", "f798f45f", "393273fd"],
        "parent windows": [17, 15, 8, 100],
        "subagent chunks": [50, 32, 1, 129],
        "calls": [67, 47, 9, 229],
        "parent chars across chunks": [637_296, 820_953, 227_198, 4_944_133],
        "baseline parent chars": [79_995, 79_984, 79_992, 79_997],
        "recovered ×": [8.0, 10.3, 2.8, 61.8],
    }
)
"""#840 chunking table: windows, chunks, calls, parent-origin chars kept across chunks vs one call."""

_840_PREFIXES = tuple(PUBLISHED_840_HEADLINE["session"].to_list())

FIXTURE_FILE_TIME_MS = 1_780_000_000_000
"""File time (epoch ms) that stands in for every mtime/ctime when measuring the bundled fixtures.

Git keeps no file times, and akm falls back to them (events without a timestamp, session order),
so roots under `fixtures/` are measured with `measure run --pin-file-times` this value: the same
numbers in every clone. Other roots are measured with their real file times.
"""


def file_time_for(sessions_root: str | os.PathLike) -> int | None:
    """The `--pin-file-times` value for a root: FIXTURE_FILE_TIME_MS for bundled fixtures, else None."""
    return FIXTURE_FILE_TIME_MS if paths.is_fixture(sessions_root) else None

# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Report:
    """The tables of one measurement and how they were made.

    tables: schema name -> DataFrame (sorted by the schema's key).
    run: the run's `run.json` (empty when there is none).
    sessions_root: the root as a portable string (repo-relative or `~/...`).
    show_excerpts: whether transcript-derived text (descriptions) may be shown.
    """

    tables: dict[str, pl.DataFrame]
    run: dict[str, Any] = field(default_factory=dict)
    sessions_root: str = ""
    show_excerpts: bool = False

    def __getitem__(self, name: str) -> pl.DataFrame:
        return self.tables[name]


def load(
    sessions_root: str | os.PathLike,
    out_dir: str | os.PathLike | None = None,
    *,
    max_total_chars: int | None = None,
    budgets: list[int] | None = None,
    template_path: str | os.PathLike | None = None,
    sessions: list[str] | None = None,
    show_excerpts: bool = False,
) -> Report:
    """Return the tables of a measurement of `sessions_root`.

    Parameters
    ----------
    sessions_root : the sessions root that was (or is to be) measured; repo-relative or `~/...`.
    out_dir : a `measure run` output directory. When given and it holds a `run.json`, its
        tables are read; otherwise the root is measured now into a temporary directory
        (this is what golden notebooks do, so nbval always checks freshly computed numbers).
    max_total_chars, budgets, template_path : passed to `measure run` when measuring now.
    sessions : keep only these session ids (exact or prefix); empty or None keeps all.
    show_excerpts : allow transcript-derived text (subagent descriptions) in views.
    """
    sessions = list(sessions or [])
    resolved = paths.resolve(out_dir) if out_dir else None
    if resolved is not None and (resolved / "run.json").is_file():
        tables, run = _read_run(resolved)
    else:
        with tempfile.TemporaryDirectory(prefix="measure-nb-") as tmp:
            run_measure(
                sessions_root,
                tmp,
                max_total_chars=max_total_chars,
                budgets=budgets,
                template_path=template_path,
                sessions=sessions,
                cache=False,
                file_time_ms=file_time_for(sessions_root),
            )
            tables, run = _read_run(Path(tmp))
    if sessions:
        tables = _filter_sessions(tables, sessions)
    return Report(tables=tables, run=run, sessions_root=paths.portable(sessions_root), show_excerpts=show_excerpts)


def _read_run(directory: Path) -> tuple[dict[str, pl.DataFrame], dict[str, Any]]:
    tables = read_tables(directory)
    run_json = directory / "run.json"
    run = json.loads(run_json.read_text(encoding="utf-8")) if run_json.is_file() else {}
    return tables, run


def _filter_sessions(tables: dict[str, pl.DataFrame], sessions: list[str]) -> dict[str, pl.DataFrame]:
    def keep(col: pl.Expr) -> pl.Expr:
        expr = pl.lit(False)
        for s in sessions:
            expr = expr | col.str.starts_with(s)
        return expr

    out = {}
    for name, df in tables.items():
        if "session_id" in df.columns:
            df = df.filter(keep(pl.col("session_id")))
        out[name] = df
    return out


def run_measure(
    sessions_root: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    max_total_chars: int | None = None,
    budgets: list[int] | None = None,
    template_path: str | os.PathLike | None = None,
    sessions: list[str] | None = None,
    jobs: int | None = None,
    redact: bool = False,
    cache: bool = True,
    file_time_ms: int | None = None,
) -> Path:
    """Run `measure run` on `sessions_root` into `out_dir`; return the output directory.

    `cache=False` measures without the incremental cache: every number is computed by the
    code as it is now. `file_time_ms` stands in for file times (see FIXTURE_FILE_TIME_MS).
    Raises RuntimeError when the sessions root does not exist.
    """
    from measure.run import RunParams, default_cache_dir, run_measurement  # noqa: PLC0415

    params = RunParams(
        budget=int(max_total_chars) if max_total_chars is not None else RunParams.budget,
        budgets=tuple(int(b) for b in budgets or ()),
        template_path=str(paths.resolve(template_path)) if template_path else None,
        redact=redact,
        sessions=tuple(sessions or ()),
        file_time_ms=file_time_ms,
    )
    out = Path(out_dir)
    try:
        run_measurement(
            paths.resolve(sessions_root), out, params, jobs=jobs, cache_dir=default_cache_dir() if cache else None,
            progress=lambda done, total: None,
        )
    except FileNotFoundError as exc:
        raise RuntimeError(f"measure run failed: {exc}") from exc
    return out


# --------------------------------------------------------------------------------------------
# Small shared shaping helpers
# --------------------------------------------------------------------------------------------


def ordered_strategies(names) -> list[str]:
    """Return the distinct strategy names in display order (unknown ones last, sorted)."""
    present = set(names)
    known = [s for s in STRATEGY_ORDER if s in present]
    return known + sorted(present - set(STRATEGY_ORDER))


def short_ids(ids, minimum: int = 8) -> dict[str, str]:
    """Map each session id to its shortest prefix (at least `minimum` chars) that no other id starts with.

    UUIDs come out as their first 8 hex digits; ids sharing a long prefix keep what tells them apart.
    """
    ids = sorted(set(ids))
    short = {}
    for i in ids:
        others = [o for o in ids if o != i]
        width = min(minimum, len(i))
        while width < len(i) and any(o.startswith(i[:width]) for o in others):
            width += 1
        short[i] = i[:width]
    return short


def _session_order(r: Report) -> list[str]:
    """Return session ids in the order of the sessions table (session_path), then any others."""
    seen: list[str] = []
    for name in ("sessions", "eviction", "llm_calls", "duplicates", "subagents", "budget_sweep"):
        df = r.tables.get(name)
        if df is None or "session_id" not in df.columns:
            continue
        for sid in df.sort("session_path", "session_id")["session_id"].to_list():
            if sid not in seen:
                seen.append(sid)
    return seen


def _with_session(df: pl.DataFrame, r: Report) -> pl.DataFrame:
    """Add a short `session` column and sort rows by the report's session order."""
    order = _session_order(r)
    short = short_ids(order)
    rank = {sid: i for i, sid in enumerate(order)}
    return (
        df.with_columns(
            pl.col("session_id").replace_strict(short, default=pl.col("session_id")).alias("session"),
            pl.col("session_id").replace_strict(rank, default=len(rank), return_dtype=pl.Int64).alias("_rank"),
        )
        .sort("_rank", "session_id", maintain_order=True)
        .drop("_rank")
    )


def _wide(df: pl.DataFrame, value: str, strategies: list[str], r: Report, rename=None) -> pl.DataFrame:
    """One row per session, one column per strategy holding `value` (null when absent)."""
    base = pl.DataFrame({"session_id": _session_order(r)}, schema={"session_id": pl.String})
    for s in strategies:
        col = (rename or {}).get(s, s)
        part = df.filter(pl.col("strategy") == s).select("session_id", pl.col(value).alias(col))
        part = part.unique("session_id", keep="first", maintain_order=True)
        base = base.join(part, on="session_id", how="left", maintain_order="left")
    return base


def _fmt_int(n: int | float | None) -> str:
    return "n/a" if n is None else f"{int(n):,}"


def _fmt_pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1f}%"


def _fmt_x(x: float | None) -> str:
    return "n/a" if x is None else f"{x:,.1f}×"


def _markdown(text: str):
    """Wrap Markdown text for display (IPython when available, else the plain string)."""
    try:
        from IPython.display import Markdown  # noqa: PLC0415
    except ImportError:  # pragma: no cover - the report extra installs IPython
        return text
    return Markdown(text)


# --------------------------------------------------------------------------------------------
# 00-overview
# --------------------------------------------------------------------------------------------


def run_summary(r: Report):
    """Markdown: what was measured (root, sessions, budgets, template, tool versions)."""
    s = r.tables["sessions"]
    n = s["session_id"].n_unique()
    budgets = sorted(set(r.tables["budget_sweep"]["budget"].to_list()))
    budget = sorted(set(s["budget"].to_list()))
    strategies = ordered_strategies(s["strategy"].to_list())
    lines = [
        f"- **Sessions root:** `{r.sessions_root}` ({n} session{'s' if n != 1 else ''} measured, "
        f"{r.tables['subagents'].height} subagent transcripts, {r.tables['errors'].height} error rows)",
        f"- **Budget (`maxTotalChars`):** {', '.join(_fmt_int(b) for b in budget) or 'n/a'}; "
        f"**budget sweep:** {', '.join(_fmt_int(b) for b in budgets) or 'none'}",
        f"- **Strategies:** {', '.join(f'`{x}`' for x in strategies) or 'none'}",
    ]
    if r.run:
        template = _find(r.run, "template_path") or "the bundled template"
        digest = _find(r.run, "template_sha256")
        lines.append(f"- **Prompt template:** {template}" + (f" (sha256 `{digest[:12]}…`)" if digest else ""))
        fingerprint = _find(r.run, "fingerprint")
        if fingerprint:
            lines.append(f"- **Input fingerprint:** `{str(fingerprint)[:16]}…` (paths, sizes and contents of the files read)")
        version = _find(r.run, "measure")
        if version:
            lines.append(f"- **measure version:** {version}")
    return _markdown("\n".join(lines))


def _find(d: Any, key: str) -> Any:
    """Return the first value stored under `key` anywhere in a nested dict (depth-first, sorted)."""
    if isinstance(d, dict):
        if key in d:
            return d[key]
        for k in sorted(d):
            found = _find(d[k], key)
            if found is not None:
                return found
    return None


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


def is_840_fixture(r: Report) -> bool:
    """True when every #840 session id prefix (4f7f80f8, 578b2d47, f798f45f, 393273fd) is present."""
    ids = r.tables["sessions"]["session_id"].to_list()
    return all(any(i.startswith(p) for i in ids) for p in _840_PREFIXES)


def _side_by_side(measured: pl.DataFrame, published: pl.DataFrame) -> pl.DataFrame:
    """Interleave rows: for each published session, `here`, `#840` and `Δ` (here - #840)."""
    cols = [c for c in published.columns if c != "session"]
    rows = []
    for pub in published.iter_rows(named=True):
        prefix = pub["session"]
        match = measured.filter(pl.col("session").str.starts_with(prefix))
        here = match.row(0, named=True) if match.height else {}
        rows.append({"session": prefix, "source": "here", **{c: here.get(c) for c in cols}})
        rows.append({"session": prefix, "source": "#840", **{c: pub[c] for c in cols}})
        delta = {}
        for c in cols:
            a, b = here.get(c), pub[c]
            delta[c] = None if a is None or b is None else a - b
        rows.append({"session": prefix, "source": "Δ", **delta})
    schema = {"session": pl.String, "source": pl.String}
    for c in cols:
        dtype = published.schema[c]
        if c in measured.columns and measured.schema[c] == pl.Float64:
            dtype = pl.Float64
        schema[c] = dtype
    return pl.DataFrame(rows, schema=schema, orient="row")


def published_comparison(r: Report, which: str = "headline"):
    """The recomputed table next to the published #840 one (rows: here / #840 / Δ per session).

    `which` is "headline", "duplicates" or "chunking". When the root is not the #840-shaped
    fixture, returns a one-line Markdown note instead.
    """
    if not is_840_fixture(r):
        return _markdown(
            "_This root is not the #840-shaped fixture (sessions 4f7f80f8…, 578b2d47…, f798f45f…, "
            "393273fd…), so there are no published figures to set beside it._"
        )
    if which == "headline":
        measured, published = headline(r), PUBLISHED_840_HEADLINE
    elif which == "duplicates":
        measured, published = pair_summary(r, pairing="sidecar_tool_use_id"), PUBLISHED_840_DUPLICATES
    elif which == "chunking":
        measured, published = chunking_table(r), PUBLISHED_840_CHUNKING
    else:
        raise ValueError(f"unknown published table {which!r}: use headline, duplicates or chunking")
    return _side_by_side(measured, published)


def published_note(r: Report, which: str = "headline"):
    """Markdown: how many recomputed figures equal the published ones, and the source."""
    if not is_840_fixture(r):
        return _markdown("")
    table = published_comparison(r, which)
    delta = table.filter(pl.col("source") == "Δ").drop("session", "source")
    values = [v for col in delta.columns for v in delta[col].to_list()]
    known = [v for v in values if v is not None]
    exact = sum(1 for v in known if v == 0)
    worst = max((abs(v) for v in known), default=0)
    worst_text = f"{worst:,.0f}" if float(worst).is_integer() else f"{worst:,.1f}"
    text = (
        f"{exact} of {len(known)} comparable figures equal the published ones exactly"
        + (f"; the largest difference is {worst_text}." if worst else ".")
        + f" Published figures: {PUBLISHED_840_SOURCE}. The fixture is shaped like the #840"
        " sessions (ids, subagent counts, sizes) but its transcripts are synthetic, so only the shape"
        " of the result, not each figure, is expected to match."
    )
    if which == "headline":
        text += (
            " `subagent files`: #840 counted only the top level of `subagents/`; this report counts"
            " every transcript the fold reads, nested workflow agents included."
        )
    elif which == "duplicates":
        text += " #840 published the stub savings rounded to thousands."
    return _markdown(text)


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
    order = {s: i for i, s in enumerate(ordered_strategies(out["strategy"].to_list()))}
    return out.with_columns(pl.col("strategy").replace_strict(order, return_dtype=pl.Int64).alias("_o")).sort(
        "quirk", "_o"
    ).drop("_o")


# --------------------------------------------------------------------------------------------
# 01-eviction
# --------------------------------------------------------------------------------------------


def parent_kept(r: Report) -> pl.DataFrame:
    """Parent-origin chars kept per session: alone (= link) and under each fold-family strategy."""
    ev = r.tables["eviction"]
    strategies = ordered_strategies(ev["strategy"].to_list())
    alone = ev.group_by("session_id").agg(pl.col("alone_parent_kept_chars").first().alias("alone (link)"))
    wide = _wide(ev, "parent_kept_chars", strategies, r)
    out = wide.join(alone, on="session_id", how="left", maintain_order="left")
    return _with_session(out, r).select("session", "alone (link)", *strategies)


def eviction_table(r: Report) -> pl.DataFrame:
    """Parent-origin chars evicted per session and strategy, as chars and % of the parent-alone set."""
    ev = r.tables["eviction"]
    strategies = ordered_strategies(ev["strategy"].to_list())
    out = pl.DataFrame({"session_id": _session_order(r)}, schema={"session_id": pl.String})
    for s in strategies:
        out = out.join(_wide(ev, "evicted_chars", [s], r, {s: f"{s}"}), on="session_id", how="left", maintain_order="left")
        out = out.join(_wide(ev, "evicted_chars_pct", [s], r, {s: f"{s} %"}), on="session_id", how="left", maintain_order="left")
    return _with_session(out, r).select("session", pl.exclude("session", "session_id"))


def _zero_budget_expr(df: pl.DataFrame) -> pl.DataFrame:
    """Per session and strategy: smallest budget from which every larger swept budget evicts nothing."""
    rows = []
    for (sid, strat), part in df.group_by("session_id", "strategy", maintain_order=False):
        part = part.sort("budget")
        budgets = part["budget"].to_list()
        evicted = part["evicted_chars"].to_list()
        answer = None
        for i in range(len(budgets) - 1, -1, -1):
            if evicted[i] is not None and evicted[i] <= 0:
                answer = budgets[i]
            else:
                break
        rows.append({"session_id": sid, "strategy": strat, "zero_from": answer})
    return pl.DataFrame(rows, schema={"session_id": pl.String, "strategy": pl.String, "zero_from": pl.Int64}).sort(
        "session_id", "strategy"
    )


def zero_eviction_budgets(r: Report) -> pl.DataFrame:
    """Per session: the smallest swept budget from which each strategy evicts no parent content.

    Null means the strategy still evicts parent content at the largest swept budget.
    """
    sweep = r.tables["budget_sweep"]
    strategies = [s for s in ordered_strategies(sweep["strategy"].to_list()) if s not in ("link", "chunked")]
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
    order = {s: i for i, s in enumerate(ordered_strategies(out["strategy"].to_list()))}
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
    for s in ordered_strategies(ev["strategy"].to_list()):
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


# --------------------------------------------------------------------------------------------
# 02-duplication
# --------------------------------------------------------------------------------------------


def pair_summary(r: Report, pairing: str | None = None) -> pl.DataFrame:
    """Per session (and pairing method): pairs, overlap min/max/mean %, copies in the fold prompt, stub savings."""
    dup = r.tables["duplicates"]
    if pairing is not None:
        dup = dup.filter(pl.col("pairing") == pairing)
    keys = ["session_id"] if pairing is not None else ["session_id", "pairing"]
    agg = dup.group_by(keys).agg(
        pl.len().cast(pl.Int64).alias("pairs"),
        (100 * pl.col("overlap").min()).round(1).alias("min overlap %"),
        (100 * pl.col("overlap").max()).round(1).alias("max overlap %"),
        (100 * pl.col("overlap").mean()).round(1).alias("mean overlap %"),
        pl.col("notification_in_prompt").sum().cast(pl.Int64).alias("notification in prompt"),
        pl.col("final_in_prompt").sum().cast(pl.Int64).alias("final in prompt"),
        pl.col("both_in_prompt").sum().cast(pl.Int64).alias("both in prompt"),
        pl.col("stub_saved_chars").sum().alias("stub saved chars"),
    )
    if pairing is not None:
        # Sessions without pairs still get a row (0 pairs), as in the published table.
        base = pl.DataFrame({"session_id": _session_order(r)}, schema={"session_id": pl.String})
        agg = base.join(agg, on="session_id", how="left", maintain_order="left").with_columns(
            pl.col("pairs", "notification in prompt", "final in prompt", "both in prompt", "stub saved chars").fill_null(0)
        )
        out = _with_session(agg, r)
        return out.select("session", pl.exclude("session", "session_id"))
    out = _with_session(agg.sort("session_id", "pairing"), r)
    return out.sort("pairing", maintain_order=True).select("session", "pairing", pl.exclude("session", "pairing", "session_id"))


def pair_totals(r: Report) -> pl.DataFrame:
    """Per pairing method: pairs, mean overlap, how many reach the fold prompt with both copies, stub savings."""
    dup = r.tables["duplicates"]
    return (
        dup.group_by("pairing")
        .agg(
            pl.len().cast(pl.Int64).alias("pairs"),
            pl.col("session_id").n_unique().cast(pl.Int64).alias("sessions"),
            (100 * pl.col("overlap").mean()).round(1).alias("mean overlap %"),
            (pl.col("overlap") >= 0.8).sum().cast(pl.Int64).alias("pairs ≥ 80% alike"),
            pl.col("both_in_prompt").sum().cast(pl.Int64).alias("both in prompt"),
            pl.col("stub_saved_chars").sum().alias("stub saved chars"),
        )
        .sort("pairing")
    )


OVERLAP_BINS: tuple[float, ...] = tuple(i / 20 for i in range(21))
"""Histogram edges for the overlap distribution: 5-point bins from 0 to 1."""


def overlap_bins(duplicates: pl.DataFrame) -> pl.DataFrame:
    """Pair counts per pairing method and 5% overlap bin, split by whether both copies reach the prompt."""
    rows = []
    edges = OVERLAP_BINS
    for pairing in sorted(set(duplicates["pairing"].to_list())):
        part = duplicates.filter(pl.col("pairing") == pairing)
        for both in (False, True):
            values = part.filter(pl.col("both_in_prompt") == both)["overlap"].to_list()
            counts = [0] * (len(edges) - 1)
            for v in values:
                if v is None:
                    continue
                i = min(int(v * 20), len(counts) - 1)
                counts[max(i, 0)] += 1
            for i, c in enumerate(counts):
                rows.append({"pairing": pairing, "both_in_prompt": both, "bin_start": edges[i], "bin_end": edges[i + 1], "pairs": c})
    return pl.DataFrame(
        rows,
        schema={"pairing": pl.String, "both_in_prompt": pl.Boolean, "bin_start": pl.Float64, "bin_end": pl.Float64, "pairs": pl.Int64},
        orient="row",
    )


def top_pairs(r: Report, n: int = 10) -> pl.DataFrame:
    """The `n` most alike pairs (descriptions only with show_excerpts)."""
    dup = _with_session(r.tables["duplicates"], r)
    cols = ["session", "agent_id", "pairing", "overlap %", "both_in_prompt", "notification_chars", "final_chars", "stub_saved_chars"]
    if r.show_excerpts:
        cols.insert(3, "description")
    return (
        dup.with_columns((100 * pl.col("overlap")).round(1).alias("overlap %"))
        .sort(["overlap", "session_id", "agent_id", "pairing"], descending=[True, False, False, False])
        .head(n)
        .select(cols)
    )


def duplication_summary(r: Report):
    """Markdown: how many pairs, how alike, how many reach the prompt twice, what a stub saves."""
    dup = r.tables["duplicates"]
    if dup.height == 0:
        return _markdown("No task-notification ↔ subagent pairs were found on this root.")
    lines = []
    for row in pair_totals(r).iter_rows(named=True):
        lines.append(
            f"- `{row['pairing']}`: {row['pairs']} pairs in {row['sessions']} sessions, mean overlap "
            f"{_fmt_pct(row['mean overlap %'])}; **{row['both in prompt']} reach the fold prompt with both copies**; "
            f"a stub would save {_fmt_int(row['stub saved chars'])} raw chars."
        )
    both = dup.filter(pl.col("both_in_prompt")).height
    close = (
        "Duplication reaches the prompt: a scoped dedupe changes what the LLM sees."
        if both
        else "No pair reaches the prompt with both copies: the pre-filter's recency budget already drops one side, "
        "so dedupe saves raw bytes but does not change the prompt."
    )
    return _markdown("\n".join(lines) + "\n\n" + close)


# --------------------------------------------------------------------------------------------
# 03-llm-calls
# --------------------------------------------------------------------------------------------


def calls_table(r: Report) -> pl.DataFrame:
    """LLM calls per session and strategy (one column per strategy)."""
    calls = r.tables["llm_calls"]
    strategies = ordered_strategies(calls["strategy"].to_list())
    out = _wide(calls, "llm_calls", strategies, r)
    return _with_session(out, r).select("session", *strategies)


def chunking_table(r: Report) -> pl.DataFrame:
    """Chunked extraction per session: windows, chunks, calls, parent chars across chunks vs one call."""
    calls = r.tables["llm_calls"]
    ch = calls.filter(pl.col("strategy") == "chunked").select(
        "session_id",
        pl.col("parent_windows").alias("parent windows"),
        pl.col("subagent_chunks").alias("subagent chunks"),
        pl.col("llm_calls").alias("calls"),
        pl.col("parent_chars_in_prompts").alias("parent chars across chunks"),
    )
    base = calls.filter(pl.col("strategy") == "link").select(
        "session_id", pl.col("parent_chars_in_prompts").alias("baseline parent chars")
    )
    out = ch.join(base, on="session_id", how="left", maintain_order="left").with_columns(
        (pl.col("parent chars across chunks") / pl.max_horizontal(pl.col("baseline parent chars"), pl.lit(1)))
        .round(1)
        .alias("recovered ×")
    )
    return _with_session(out, r).select("session", pl.exclude("session", "session_id"))


def run_cost_table(r: Report) -> pl.DataFrame:
    """Run cost under akm's per-run session cap, strategies in display order."""
    cost = r.tables["run_cost"]
    order = {s: i for i, s in enumerate(ordered_strategies(cost["strategy"].to_list()))}
    return (
        cost.with_columns(pl.col("strategy").replace_strict(order, return_dtype=pl.Int64).alias("_o"))
        .sort("_o")
        .drop("_o")
        .with_columns(pl.col("calls_per_run_mean").round(1), pl.col("cap_multiplier").round(1))
    )


def calls_summary(r: Report):
    """Markdown: the call multiplier of chunking, what it recovers, and what it costs per run."""
    calls = r.tables["llm_calls"]
    ch = calls.filter(pl.col("strategy") == "chunked")
    if ch.height == 0:
        return _markdown("No chunked rows: every strategy measured makes one call per session.")
    active = ch.filter(pl.col("llm_calls") > 0)
    ct = chunking_table(r).filter(pl.col("calls") > 0)
    text = (
        f"Chunked extraction makes {_fmt_int(ch['llm_calls'].sum())} calls for {ch.height} sessions"
        + (
            f" ({_fmt_x(active['multiplier'].min())}–{_fmt_x(active['multiplier'].max())} a single call"
            f" in the {active.height} sessions with events). It keeps "
            f"{_fmt_x(ct['recovered ×'].min())}–{_fmt_x(ct['recovered ×'].max())} the parent-origin chars of one "
            "parent-alone call."
            if active.height
            else "."
        )
    )
    cost = r.tables["run_cost"].filter(pl.col("strategy") == "chunked")
    if cost.height:
        row = cost.row(0, named=True)
        text += (
            f" Under akm's cap of {row['session_cap']} sessions per run, the most expensive run makes "
            f"**{_fmt_int(row['calls_per_run_max'])} calls** where a single-call strategy makes at most "
            f"{row['session_cap']} ({_fmt_x(row['cap_multiplier'])})."
        )
    return _markdown(text)


def table_names() -> list[str]:
    """Names of every schema table, in schema order."""
    return list(TABLES)
