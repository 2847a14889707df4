"""What every page shares: load a run, order strategies and sessions, format numbers, the run summary.

Every view is a pure function of the schema tables; rows are always sorted, so output is
byte-stable from run to run. Notebooks stay thin: `load(...)`, then one view per table or paragraph."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from measure import paths
from measure.runner.tables import read_tables
from measure.schema import TABLES

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


FIXTURE_FILE_TIME_MS = 1_780_000_000_000
"""File time (epoch ms) that stands in for every mtime/ctime when measuring the bundled fixtures.

Git keeps no file times, and akm falls back to them (events without a timestamp, session order),
so roots under `fixtures/` are measured with `measure run --pin-file-times` this value: the same
numbers in every clone. Other roots are measured with their real file times.
"""


def file_time_for(sessions_root: str | os.PathLike) -> int | None:
    """The `--pin-file-times` value for a root: FIXTURE_FILE_TIME_MS for bundled fixtures, else None."""
    return FIXTURE_FILE_TIME_MS if paths.is_fixture(sessions_root) else None


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
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)  # derived once per report

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
                show_excerpts=show_excerpts,
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
    show_excerpts: bool = False,
) -> Path:
    """Run `measure run` on `sessions_root` into `out_dir`; return the output directory.

    `cache=False` measures without the incremental cache: every number is computed by the
    code as it is now. `file_time_ms` stands in for file times (see FIXTURE_FILE_TIME_MS).
    `show_excerpts` keeps subagent descriptions in the tables (dropped otherwise).
    Raises RuntimeError when the sessions root does not exist.
    """
    from measure.runner.cache import default_cache_dir
    from measure.runner.job import RunParams
    from measure.runner.run import run_measurement  # noqa: PLC0415

    params = RunParams(
        budget=int(max_total_chars) if max_total_chars is not None else RunParams.budget,
        budgets=tuple(int(b) for b in budgets or ()),
        template_path=str(paths.resolve(template_path)) if template_path else None,
        redact=redact,
        sessions=tuple(sessions or ()),
        file_time_ms=file_time_ms,
        show_excerpts=show_excerpts,
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


def ordered_strategies(names) -> list[str]:
    """Return the distinct strategy names in display order (unknown ones last, sorted)."""
    present = set(names)
    known = [s for s in STRATEGY_ORDER if s in present]
    return known + sorted(present - set(STRATEGY_ORDER))


def short_ids(ids, minimum: int = 8) -> dict[str, str]:
    """Map each session id to its shortest prefix (at least `minimum` chars) that no other id starts with.

    UUIDs come out as their first 8 hex digits; ids sharing a long prefix keep what tells them apart.
    Linear after one sort: the other id sharing the longest prefix with an id is a sorted neighbour.
    """
    ids = sorted(set(ids))
    shared = [-1] * len(ids)  # longest common prefix with any other id (-1: there is none)
    for k in range(1, len(ids)):
        n = _common_prefix(ids[k - 1], ids[k])
        shared[k - 1] = max(shared[k - 1], n)
        shared[k] = max(shared[k], n)
    return {i: i[: min(len(i), max(minimum, shared[k] + 1))] for k, i in enumerate(ids)}


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    k = 0
    while k < n and a[k] == b[k]:
        k += 1
    return k


def _session_order(r: Report) -> list[str]:
    """Return session ids in the order of the sessions table (session_path), then any others."""
    if "session_order" not in r.memo:
        r.memo["session_order"] = _scan_session_order(r)
    return list(r.memo["session_order"])


def _scan_session_order(r: Report) -> list[str]:
    seen: dict[str, None] = {}  # insertion-ordered set: membership in O(1)
    for name in ("sessions", "eviction", "llm_calls", "duplicates", "subagents", "budget_sweep"):
        df = r.tables.get(name)
        if df is None or "session_id" not in df.columns:
            continue
        # Distinct (path, id) pairs only: the first occurrences keep the same order, and a
        # budget_sweep of 20,000 sessions is never sorted or listed row by row.
        pairs = df.lazy().select("session_path", "session_id").unique().sort("session_path", "session_id").collect()
        for sid in pairs["session_id"].to_list():
            if sid not in seen:
                seen[sid] = None
    return list(seen)


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


def run_summary(r: Report):
    """Markdown: what was measured (root, sessions, budgets, template, tool versions)."""
    s = r.tables["sessions"]
    n = s["session_id"].n_unique()
    budgets = sorted(set(r.tables["budget_sweep"]["budget"].unique().to_list()))
    budget = sorted(set(s["budget"].unique().to_list()))
    strategies = ordered_strategies(s["strategy"].unique().to_list())
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


def table_names() -> list[str]:
    """Names of every schema table, in schema order."""
    return list(TABLES)
