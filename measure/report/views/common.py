"""What every page shares: load a run, order strategies and sessions, format numbers, the run summary.

Every view is a pure function of the schema tables; rows are always sorted, so output is
byte-stable from run to run. Notebooks stay thin: `load(...)`, then one view per table or paragraph.

Slightly over ~500 lines: loading, the session filter and the shared formatting helpers that
every page's view module imports.
"""

from __future__ import annotations

import html
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from measure import paths
from measure.runner.tables import read_table
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

    tables: Mapping[str, pl.DataFrame]  # a LazyTables when read from a run directory
    run: dict[str, Any] = field(default_factory=dict)
    sessions_root: str = ""
    show_excerpts: bool = False
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)  # derived once per report

    def __getitem__(self, name: str) -> pl.DataFrame:
        return self.tables[name]

    def pandas(self, name: str | None = None):
        """Table `name` as a pandas DataFrame (every table, as a dict by name, when `name` is None).

        Through Arrow: columns are `pd.ArrowDtype` backed by the polars buffers, so numbers are
        not copied; rows and columns are the schema's. Needs the `pandas` extra (`make lab` has it).
        """
        try:
            import pandas  # noqa: F401, PLC0415
            import pyarrow  # noqa: F401, PLC0415
        except ImportError as exc:
            raise ImportError(
                "Report.pandas needs pandas and pyarrow: pip install -e '.[pandas]' (make lab installs them)"
            ) from exc
        if name is None:
            return {n: self.pandas(n) for n in self.tables}
        if name not in self.tables:
            raise KeyError(f"no table {name!r}; tables: {', '.join(self.tables)}")
        return self.tables[name].to_pandas(use_pyarrow_extension_array=True)


def load(
    sessions_root: str | os.PathLike,
    out_dir: str | os.PathLike | None = None,
    *,
    max_total_chars: int | None = None,
    budgets: list[int] | None = None,
    template_path: str | os.PathLike | None = None,
    sessions: list[str] | None = None,
    show_excerpts: bool = False,
    replay: str | None = None,
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
    replay : the `--replay-at` schedule when measuring now (None: no replay table; only the
        04-background page needs one, and replaying costs a pipeline run per moment).
    """
    sessions = list(sessions or [])
    if out_dir:
        resolved = paths.resolve(out_dir)
        if not (resolved / "run.json").is_file():
            # A mistyped out_dir must not silently measure another root.
            raise FileNotFoundError(f"out_dir {paths.portable(resolved)} holds no run.json: not a `measure run` directory")
        tables, run = _read_run(resolved)
        # The run records the root it measured; a sessions_root parameter cannot mislabel it.
        sessions_root = run.get("input", {}).get("root") or sessions_root
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
                replay=replay,
                show_excerpts=show_excerpts,
            )
            tables, run = _read_run(Path(tmp), lazy=False)  # the folder goes with the block
    # A run made with these --session values holds exactly them already (ids and paths may be hashed).
    made = run.get("parameters") or {}
    # A run made with these --session values is already filtered; under --redact its run.json
    # holds them hashed, so a run that was redacted and filtered is trusted as it is.
    already = list(made.get("sessions") or []) == sessions or (made.get("redact") and made.get("sessions"))
    if sessions and not already:
        tables = _filter_sessions(tables, sessions, run)
    root = sessions_root if str(sessions_root).startswith("~") else paths.portable(sessions_root)
    return Report(tables=tables, run=run, sessions_root=root, show_excerpts=show_excerpts)


class LazyTables(Mapping):
    """Every table of a run directory, each read from its Parquet file when first used.

    A notebook holds only the tables it reads (a report of 20,000 sessions has a 720,000-row
    budget_sweep that most pages never look at); `scan(name)` reads columns without loading.
    """

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        self._frames: dict[str, pl.DataFrame] = {}

    def __getitem__(self, name: str) -> pl.DataFrame:
        if name not in TABLES:
            raise KeyError(name)
        df = self._frames.get(name)
        if df is None:
            df = self._frames[name] = read_table(self.directory, name)
        return df

    def __iter__(self):
        return iter(TABLES)

    def __len__(self) -> int:
        return len(TABLES)

    def scan(self, name: str) -> pl.LazyFrame:
        """Table `name` as a LazyFrame: only the columns a query selects are read."""
        if name in self._frames or not (self.directory / f"{name}.parquet").is_file():
            return self[name].lazy()
        return pl.scan_parquet(self.directory / f"{name}.parquet")


def scan(r: "Report", name: str) -> pl.LazyFrame | None:
    """Table `name` of a report as a LazyFrame (from a run directory only the columns a query
    selects are read); None when the report has no such table."""
    if isinstance(r.tables, LazyTables):
        return r.tables.scan(name)
    df = r.tables.get(name)
    return None if df is None else df.lazy()


def _read_run(directory: Path, lazy: bool = True) -> tuple[Mapping[str, pl.DataFrame], dict[str, Any]]:
    tables = LazyTables(directory)
    if not lazy:
        tables = {name: tables[name] for name in tables}
    run_json = directory / "run.json"
    run = json.loads(run_json.read_text(encoding="utf-8")) if run_json.is_file() else {}
    return tables, run


def _filter_sessions(tables: dict[str, pl.DataFrame], sessions: list[str], run: dict | None = None) -> dict[str, pl.DataFrame]:
    """Keep the rows of the sessions `sessions` names, as `--session` does (id, id prefix, path);
    run_cost and breakdown are recomputed over the kept sessions."""
    from measure.runner.select import matches  # noqa: PLC0415

    pairs = set()
    for df in tables.values():
        if {"session_id", "session_path"} <= set(df.columns):
            pairs.update(df.select("session_id", "session_path").unique().iter_rows())
    kept = sorted({sid for sid, path in pairs if any(matches(s, sid, path or "") for s in sessions)})
    out = {}
    for name, df in tables.items():
        if "session_id" in df.columns:
            df = df.filter(pl.col("session_id").is_in(kept))
        elif name == "verdict":
            df = df.clear()  # it depends on which sessions are shown: overview.verdict_table recomputes it
        out[name] = df
    out["run_cost"] = _run_cost(out["llm_calls"], _find(run or {}, "session_cap") or _cap(tables["run_cost"]))
    if "breakdown" in out:
        out["breakdown"] = _breakdown(out)
    return out


def _breakdown(tables: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """The breakdown table over the sessions of `tables` (as measure run builds it)."""
    from measure.measurements.breakdown import breakdown_rows  # noqa: PLC0415
    from measure.runner.tables import frame  # noqa: PLC0415

    rows = breakdown_rows(*(tables[n].to_dicts() for n in ("session_info", "sessions", "eviction", "subagents")))
    return frame(TABLES["breakdown"], rows)


def _cap(run_cost: pl.DataFrame) -> int:
    caps = run_cost["session_cap"].drop_nulls().to_list()
    return int(caps[0]) if caps else 25


def _run_cost(llm_calls: pl.DataFrame, cap: int) -> pl.DataFrame:
    """run_cost over the sessions of `llm_calls`, batched in akm's order (run_order)."""
    from measure.measurements.llm_calls import run_cost_rows  # noqa: PLC0415
    from measure.runner.tables import frame  # noqa: PLC0415

    calls = llm_calls.sort("run_order", "session_path", nulls_last=True)
    order = list(dict.fromkeys(calls["session_path"].to_list()))
    return frame(TABLES["run_cost"], run_cost_rows(calls.to_dicts(), order, int(cap)))


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
    since_ms: float = 0,
    session_cap: int | None = None,
    max_event_chars: int | None = None,
    cache_dir: str | os.PathLike | None = None,
    walk_order: str = "name",
    replay: str | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    show_excerpts: bool = False,
) -> Path:
    """Run `measure run` on `sessions_root` into `out_dir`; return the output directory.

    `cache=False` measures without the incremental cache: every number is computed by the
    code as it is now. `file_time_ms` stands in for file times (see FIXTURE_FILE_TIME_MS).
    `show_excerpts` keeps subagent descriptions in the tables (dropped otherwise).
    `since_ms`, `session_cap`, `max_event_chars`, `cache_dir`, `executor` and `scheduler` are
    `measure run`'s --since, --session-cap, --max-event-chars, --cache-dir, --executor and
    --scheduler. Progress goes to the active
    `measure.runner.progress` (silent unless the command line made one active).
    `replay` is `--replay-at` (None: no replay table; `measure report` always passes one).
    Raises RuntimeError when the sessions root does not exist, and
    `measure.runner.select.UnknownSessions` when a `sessions` value names no session.
    """
    from measure.runner.cache import default_cache_dir
    from measure.runner.job import RunParams
    from measure.runner.run import run_measurement  # noqa: PLC0415

    params = RunParams.from_options(
        max_total_chars=max_total_chars,
        budgets=budgets,
        max_event_chars=max_event_chars or None,
        template=paths.resolve(template_path) if template_path else None,
        sessions=sessions,
        since_ms=since_ms,
        session_cap=session_cap or None,
        redact=redact,
        show_excerpts=show_excerpts,
        file_time_ms=file_time_ms,
        walk_order=walk_order,
        replay=replay,
    )
    out = Path(out_dir)
    cache_at = (cache_dir or default_cache_dir()) if cache else None
    try:
        run_measurement(
            paths.resolve(sessions_root), out, params, jobs=jobs, cache_dir=cache_at, executor=executor, scheduler=scheduler
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
        lf = scan(r, name)  # two columns read, not the table
        if lf is None or "session_id" not in lf.collect_schema().names():
            continue
        # Distinct (path, id) pairs only: the first occurrences keep the same order, and a
        # budget_sweep of 20,000 sessions is never sorted or listed row by row.
        pairs = lf.select("session_path", "session_id").unique().sort("session_path", "session_id").collect()
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


HTML_TABLE_ROWS = 40
"""Rows an HTML table shows at most (more rows: a "… N more rows" line)."""

HTML_FLOAT_DIGITS = 1
"""Decimals of floats in tables."""


COLUMN_LABELS: dict[str, str] = {
    "session_id": "session id",
    "session_path": "session path",
    "subagent_path": "subagent transcript",
    "agent_id": "agent id",
    "agent_type": "agent type",
    "both_in_prompt": "both copies in prompt",
    "notification_chars": "notification (chars)",
    "final_chars": "final report (chars)",
    "stub_saved_chars": "stub saves (chars)",
    "session_cap": "session cap",
    "llm_calls": "LLM calls",
    "calls_per_run_mean": "calls per run (mean)",
    "calls_per_run_max": "calls per run (max)",
    "cap_multiplier": "max calls per run / cap (×)",
    "x_single_call_run": "max calls per run / single-call strategy's (×)",
    "chars": "chars",
    "events": "events",
}
"""Human headers of raw schema columns that views show as they are (with units)."""


def column_label(name: str) -> str:
    """The header a page shows for column `name`: a human label with units. Strategy ids
    (`fold_dedupe_scoped`) stay as they are: they are names, used so in every sentence too."""
    if name in COLUMN_LABELS:
        return COLUMN_LABELS[name]
    for sid in sorted(STRATEGY_ORDER, key=len, reverse=True):
        if name == sid or name.startswith(sid + " "):
            return name
    return name.replace("_", " ")


def frame_html(df: pl.DataFrame) -> str:
    """A plain HTML table of `df` with human headers (polars' own HTML quotes every string cell)."""
    rows = min(df.height, HTML_TABLE_ROWS)
    head = "".join(f"<th>{html.escape(column_label(c))}</th>" for c in df.columns)
    numeric = [dt.is_numeric() for dt in df.dtypes]
    body = []
    for row in df.head(rows).iter_rows():
        cells = []
        for value, num in zip(row, numeric):
            align = ' style="text-align:right"' if num else ' style="text-align:left"'
            cells.append(f"<td{align}>{html.escape(_cell(value))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = f"<p>… {df.height - rows} more rows</p>" if df.height > rows else ""
    return f'<table class="dataframe"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>{more}'


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.{HTML_FLOAT_DIGITS}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


RELEVANCE_ORDER = "most parent content evicted, then most subagent transcripts, then most LLM calls"
"""How per-session tables are ordered (largest first; ties by session path)."""

TOP_N = 20
"""Rows a per-session table shows; the caption gives the total and where every row is."""


def relevance_rank(r: Report) -> dict[str, int]:
    """Session id -> place in RELEVANCE_ORDER: sessions whose delegated work matters come first."""
    order = _session_order(r)
    key: dict[str, list] = {sid: [0, 0, 0] for sid in order}

    def peak(table: str, value: str, slot: int) -> None:
        df = r.tables.get(table)
        if df is None or value not in df.columns or df.height == 0:
            return
        for sid, v in df.group_by("session_id").agg(pl.col(value).max()).iter_rows():
            if sid in key and v is not None:
                key[sid][slot] = max(key[sid][slot], v)

    ev = r.tables.get("eviction")
    peak("eviction", "budget_evicted_chars" if ev is not None and "budget_evicted_chars" in ev.columns else "evicted_chars", 0)
    peak("sessions", "subagent_files", 1)
    peak("llm_calls", "llm_calls", 2)
    # sorted() is stable: ties keep the session order (no `order.index`, which made this quadratic)
    ranked = sorted(order, key=lambda sid: (-key[sid][0], -key[sid][1], -key[sid][2]))
    return {sid: i for i, sid in enumerate(ranked)}


def by_relevance(df: pl.DataFrame, r: Report) -> pl.DataFrame:
    """`df` (with a session_id column) sorted by RELEVANCE_ORDER, stable within a session."""
    rank = relevance_rank(r)
    return (
        df.with_columns(pl.col("session_id").replace_strict(rank, default=len(rank), return_dtype=pl.Int64).alias("_rel"))
        .sort("_rel", maintain_order=True)
        .drop("_rel")
    )


@dataclass(frozen=True)
class Top:
    """The first `n` rows of a per-session table, with a caption saying the total, the order and
    where every row is. Notebooks display it; its text form is the same caption."""

    df: pl.DataFrame
    n: int
    what: str  # "sessions", "pairs", ...
    table: str  # the schema table holding every row
    order: str = RELEVANCE_ORDER

    def caption(self) -> str:
        if self.df.height == 0:
            return f"No {self.what} here."
        shown = min(self.n, self.df.height)
        if self.df.height > shown:
            head = f"{shown} of {self.df.height} {self.what}"
        elif self.df.height == 1:
            head = f"The one row of {self.what}"
        else:
            head = f"All {self.df.height} {self.what}"
        return f"{head}, ordered by {self.order}. Every row: tables/{self.table}.csv of the report."

    def _repr_html_(self) -> str:
        if self.df.height == 0:
            return f"<p><em>{html.escape(self.caption())}</em></p>"
        csv = f"tables/{self.table}.csv"
        caption = html.escape(self.caption()).replace(csv, f'<a href="{csv}">{csv}</a>')
        return frame_html(self.df.head(self.n)) + f"<p><em>{caption}</em></p>"

    def __repr__(self) -> str:
        return self.caption()


def top(df, what: str = "sessions", table: str = "sessions", n: int = TOP_N, order: str = RELEVANCE_ORDER):
    """Show the first `n` rows of `df` (already in `order`) with a caption (see Top); anything
    but a DataFrame (a "no rows" note) is returned as it is."""
    return Top(df, n, what, table, order) if isinstance(df, pl.DataFrame) else df


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
    # one column, not the 720,000-row table of 20,000 sessions
    budgets = sorted(set(scan(r, "budget_sweep").select("budget").collect()["budget"].unique().to_list()))
    budget = sorted(set(s["budget"].unique().to_list()))
    strategies = ordered_strategies(s["strategy"].unique().to_list())
    legacy = s.filter(pl.col("legacy_agent"))["session_id"].n_unique() if "legacy_agent" in s.columns else 0
    lines = [
        f"- **Sessions root:** `{r.sessions_root}` ({n} session{'s' if n != 1 else ''} measured"
        + (f", {legacy} of them legacy sibling `agent-*.jsonl` transcripts akm lists as sessions" if legacy else "")
        + ", "
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
