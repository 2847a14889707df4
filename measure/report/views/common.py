"""What every page shares: load a run's tables, order sessions, format numbers, the run summary."""

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
from measure.measurements.priorities import canonical
from measure.numbers import rounded
from measure.report.style import STRATEGY_ORDER, ordered_strategies, short_ids
from measure.runner.tables import read_table, read_tables
from measure.schema import TABLES


@dataclass(frozen=True)
class Report:
    """The tables of one measurement (sorted by the schema's key) and how they were made."""

    tables: Mapping[str, pl.DataFrame]  # a LazyTables when read from a run directory
    run: dict[str, Any] = field(default_factory=dict)  # run.json
    sessions_root: str = ""  # portable: repo-relative or `~/...`
    show_excerpts: bool = False  # whether transcript-derived text (descriptions) may be shown
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)  # derived once per report

    def __getitem__(self, name: str) -> pl.DataFrame:
        return self.tables[name]

    def pandas(self, name: str | None = None):
        """Table `name` as a pandas DataFrame of `pd.ArrowDtype` columns (numbers not copied); None: every table."""
        try:
            import pandas  # noqa: F401, PLC0415
            import pyarrow  # noqa: F401, PLC0415
        except ImportError as exc:
            raise ImportError("Report.pandas needs pandas and pyarrow: "
                              "pip install -e '.[pandas]' (make lab installs them)") from exc
        if name is None:
            return {n: self.pandas(n) for n in self.tables}
        if name not in self.tables:
            raise KeyError(f"no table {name!r}; tables: {', '.join(self.tables)}")
        return self.tables[name].to_pandas(use_pyarrow_extension_array=True)


def load(sessions_root: str | os.PathLike, out_dir: str | os.PathLike | None = None, *,
         max_total_chars: int | None = None, budgets: list[int] | None = None,
         template_path: str | os.PathLike | None = None, sessions: list[str] | None = None,
         show_excerpts: bool = False, replay: str | None = None, priorities: str | None = None) -> Report:
    """Return the tables of a measurement of `sessions_root` (repo-relative or `~/...`).

    `out_dir` is a `measure run` directory to read (the root its run.json names wins); None measures the root now,
    into a temporary directory without the cache (so golden notebooks check fresh numbers) with the other options.
    A run made for other `sessions` or `priorities` is measured again with these, so its run-level tables (run_cost,
    breakdown, verdict) are over exactly them. `replay` None makes no replay table (only 04-background needs one).
    Raises FileNotFoundError for an `out_dir` without run.json or a missing root, and
    `measure.runner.select.UnknownSessions` when a `sessions` value names no session.
    """
    sessions, tables = list(sessions or []), None
    if out_dir:
        directory = paths.resolve(out_dir)
        if not (directory / "run.json").is_file():
            # A mistyped out_dir must not silently measure another root.
            raise FileNotFoundError(f"out_dir {paths.portable(directory)} holds no run.json: not a `measure run` directory")
        run = json.loads((directory / "run.json").read_text(encoding="utf-8"))
        sessions_root = run.get("input", {}).get("root") or sessions_root
        made = run.get("parameters") or {}
        priorities = priorities or made.get("priorities")  # measured again below, the run's own priorities carry over
        # Under --redact a run.json holds its --session values hashed: a redacted, filtered run is taken as asked for.
        same_sessions = not sessions or list(made.get("sessions") or []) == sessions or (made.get("redact") and made.get("sessions"))
        if same_sessions and (priorities is None or made.get("priorities") == canonical(priorities)):
            tables = LazyTables(directory)
    if tables is None:
        from measure.runner.job import RunParams  # noqa: PLC0415
        from measure.runner.run import run_measurement  # noqa: PLC0415

        params = RunParams.from_options(
            max_total_chars=max_total_chars, budgets=budgets, sessions=sessions, show_excerpts=show_excerpts,
            replay=replay, priorities=priorities, template=paths.resolve(template_path) if template_path else None,
            file_time_ms=paths.file_time_for(sessions_root))
        with tempfile.TemporaryDirectory(prefix="measure-nb-") as tmp:
            run_measurement(paths.resolve(sessions_root), tmp, params)
            tables = read_tables(tmp)  # read now: the folder goes with the block
            run = json.loads((Path(tmp) / "run.json").read_text(encoding="utf-8"))
    root = sessions_root if str(sessions_root).startswith("~") else paths.portable(sessions_root)
    return Report(tables=tables, run=run, sessions_root=root, show_excerpts=show_excerpts)


class LazyTables(Mapping):
    """Every table of a run directory, read from its Parquet file each time it is asked for: nothing is held between
    views (a 20,000-session budget_sweep has 1,080,000 rows). `scan(r, name)` reads only the columns a query selects."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)

    def __getitem__(self, name: str) -> pl.DataFrame:
        if name not in TABLES:
            raise KeyError(name)
        return read_table(self.directory, name)

    def __iter__(self):
        return iter(TABLES)

    def __len__(self) -> int:
        return len(TABLES)


def scan(r: Report, name: str) -> pl.LazyFrame | None:
    """Table `name` as a LazyFrame (None when there is none): from a run directory, only the columns a query selects."""
    if isinstance(r.tables, LazyTables) and (r.tables.directory / f"{name}.parquet").is_file():
        return pl.scan_parquet(r.tables.directory / f"{name}.parquet")
    df = r.tables.get(name)
    return None if df is None else df.lazy()


def session_order(r: Report) -> list[str]:
    """Return session ids in the order of the sessions table (session_path), then any others."""
    if "session_order" not in r.memo:
        seen: dict[str, None] = {}  # insertion-ordered set: membership in O(1)
        for name in ("sessions", "eviction", "llm_calls", "duplicates", "subagents", "budget_sweep"):
            lf = scan(r, name)  # two columns read, not the table
            if lf is None or "session_id" not in lf.collect_schema().names():
                continue
            # Distinct (path, id) pairs only: the first occurrences keep the same order, and a
            # budget_sweep of 20,000 sessions is never sorted or listed row by row.
            pairs = lf.select("session_path", "session_id").unique().sort("session_path", "session_id").collect()
            seen.update(dict.fromkeys(pairs["session_id"].to_list()))
        r.memo["session_order"] = list(seen)
    return list(r.memo["session_order"])


RELEVANCE_ORDER = "most parent content evicted, then most subagent transcripts, then most LLM calls"
"""How per-session tables are ordered (largest first; ties by session path)."""

TOP_N = 20
"""Rows a per-session table shows; the caption gives the total and where every row is."""


def relevance_rank(r: Report) -> dict[str, int]:
    """Session id -> place in RELEVANCE_ORDER: sessions whose delegated work matters come first."""
    if "relevance_rank" not in r.memo:
        order = session_order(r)
        key: dict[str, list] = {sid: [0, 0, 0] for sid in order}
        for slot, (table, value) in enumerate((("eviction", "budget_evicted_chars"), ("sessions", "subagent_files"),
                                               ("llm_calls", "llm_calls"))):
            lf = scan(r, table)  # two columns read, not the table
            if lf is None:
                continue
            for sid, v in lf.group_by("session_id").agg(pl.col(value).max()).collect().iter_rows():
                if sid in key and v is not None:
                    key[sid][slot] = max(key[sid][slot], v)
        ranked = sorted(order, key=lambda sid: [-v for v in key[sid]])  # stable: ties keep session order
        r.memo["relevance_rank"] = {sid: i for i, sid in enumerate(ranked)}
    return r.memo["relevance_rank"]


def per_session(df: pl.DataFrame, r: Report, relevance: bool = True) -> pl.DataFrame:
    """`df` with a short `session` column first instead of session_id, rows in RELEVANCE_ORDER (else session order)."""

    def place(rank: dict[str, int]) -> pl.Expr:
        return pl.col("session_id").replace_strict(rank, default=len(rank), return_dtype=pl.Int64)

    out = df.with_columns(session_column(r))
    out = out.sort(place({sid: i for i, sid in enumerate(session_order(r))}), "session_id", maintain_order=True)
    if relevance:  # after the session order, so that sessions of equal relevance stay in path order
        out = out.sort(place(relevance_rank(r)), maintain_order=True)
    return out.select("session", pl.exclude("session", "session_id"))


def headed(columns: dict[str, str]) -> list[pl.Expr]:
    """Each column of `columns` (name -> header) under its header, in order: what a view selects."""
    return [pl.col(name).alias(header) for name, header in columns.items()]


def session_column(r: Report) -> pl.Expr:
    """A short `session` column (see style.short_ids) from each row's session_id."""
    return pl.col("session_id").replace_strict(short_ids(session_order(r)), default=pl.col("session_id")).alias("session")


def session_ids(r: Report) -> pl.DataFrame:
    """A one-column frame of every session_id, in session order: the left side of a per-session join."""
    return pl.DataFrame({"session_id": session_order(r)}, schema={"session_id": pl.String})


def wide(df: pl.DataFrame, value: str, strategies: list[str], r: Report, rename=None) -> pl.DataFrame:
    """One row per session, one column per strategy holding `value` (null when absent)."""
    base = session_ids(r)
    for s in strategies:  # the two columns, then the strategy's rows: a filter copies only what it keeps
        part = df.select("session_id", "strategy", value).filter(pl.col("strategy") == s).select(
            "session_id", pl.col(value).alias((rename or {}).get(s, s)))
        base = base.join(part.unique("session_id", keep="first", maintain_order=True), on="session_id", how="left",
                         maintain_order="left")
    return base


@dataclass(frozen=True)
class Top:
    """The first `n` rows of a per-session table, with a caption saying the total, the order and where every row is."""

    df: pl.DataFrame
    n: int
    what: str  # "sessions", "pairs", ...
    table: str  # the schema table holding every row
    order: str = RELEVANCE_ORDER

    def caption(self) -> str:
        n = self.df.height
        if n == 0:
            return f"No {self.what} here."
        head = f"{self.n} of {n}" if n > self.n else "The one row of" if n == 1 else f"All {n}"
        return f"{head} {self.what}, ordered by {self.order}. Every row: tables/{self.table}.csv of the report."

    def _repr_html_(self) -> str:
        csv = f"tables/{self.table}.csv"  # named by the caption of a table with rows only
        caption = html.escape(self.caption()).replace(csv, f'<a href="{csv}">{csv}</a>')
        return (frame_html(self.df.head(self.n)) if self.df.height else "") + f"<p><em>{caption}</em></p>"

    def __repr__(self) -> str:
        return self.caption()


def top(df, what: str = "sessions", table: str = "sessions", n: int = TOP_N, order: str = RELEVANCE_ORDER):
    """`df` (already in `order`) as a Top; anything but a DataFrame (a "no rows" note) as it is."""
    return Top(df, n, what, table, order) if isinstance(df, pl.DataFrame) else df


HTML_TABLE_ROWS = 40
"""Rows an HTML table shows at most (more rows: a "… N more rows" line)."""

HTML_FLOAT_DIGITS = 1
"""Decimals of floats in tables."""

COLUMN_LABELS: dict[str, str] = {
    "subagent_path": "subagent transcript", "both_in_prompt": "both copies in prompt",
    "notification_chars": "notification (chars)", "final_chars": "final report (chars)",
    "stub_saved_chars": "stub saves (chars)", "llm_calls": "LLM calls",
    "calls_per_run_mean": "calls per run (mean)", "calls_per_run_max": "calls per run (max)",
    "cap_multiplier": "max calls per run / cap (×)",
    "x_single_call_run": "max calls per run / single-call strategy's (×)",
}
"""Human headers (with units) of raw schema columns, where underscores as spaces are not enough."""


def column_label(name: str) -> str:
    """The header a page shows for column `name` (strategy ids stay as they are: they are names, in every sentence)."""
    if name in COLUMN_LABELS:
        return COLUMN_LABELS[name]
    return name if any(name == sid or name.startswith(sid + " ") for sid in STRATEGY_ORDER) else name.replace("_", " ")


def frame_html(df: pl.DataFrame) -> str:
    """A plain HTML table of `df` with human headers (polars' own HTML quotes every string cell)."""
    rows = min(df.height, HTML_TABLE_ROWS)
    head = "".join(f"<th>{html.escape(column_label(c))}</th>" for c in df.columns)
    align = [' style="text-align:right"' if dt.is_numeric() else ' style="text-align:left"' for dt in df.dtypes]
    body = "".join("<tr>" + "".join(f"<td{a}>{html.escape(_cell(v))}</td>" for v, a in zip(row, align)) + "</tr>"
                   for row in df.head(rows).iter_rows())
    more = f"<p>… {df.height - rows} more rows</p>" if df.height > rows else ""
    return f'<table class="dataframe"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}'


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


def plural(n: int, word: str, many: str | None = None) -> str:
    """`word` as `n` of it are said: `many` (default `word` + "s") unless n is 1."""
    return word if n == 1 else many or word + "s"


def fmt_int(n: int | float | None) -> str:
    return "n/a" if n is None else f"{int(n):,}"


def fmt_pct(x: float | None) -> str:
    return "n/a" if x is None else f"{rounded(x, 1):.1f}%"


def fmt_x(x: float | None) -> str:
    return "n/a" if x is None else f"{rounded(x, 1):,.1f}×"


def markdown(text: str):
    """Markdown text, for display in a notebook (its `.data` is the text)."""
    from IPython.display import Markdown  # noqa: PLC0415

    return Markdown(text)


def run_summary(r: Report):
    """Markdown: what was measured (root, sessions, budgets, template, tool versions)."""
    # the columns a line needs, not the tables (budget_sweep alone is 1,080,000 rows at 20,000 sessions)
    s = scan(r, "sessions").select("session_id", "budget", "strategy", "legacy_agent").collect()
    n = s["session_id"].n_unique()
    budgets = sorted(set(scan(r, "budget_sweep").select("budget").collect()["budget"].unique().to_list()))
    budget = sorted(set(s["budget"].unique().to_list()))
    strategies = ordered_strategies(s["strategy"].unique().to_list())
    legacy = s.filter(pl.col("legacy_agent"))["session_id"].n_unique()
    subagents, errors = (scan(r, name).select(pl.len()).collect().item() for name in ("subagents", "errors"))
    lines = [
        f"- **Sessions root:** `{r.sessions_root}` ({n} {plural(n, 'session')} measured"
        + (f", {legacy} of them legacy sibling `agent-*.jsonl` transcripts akm lists as sessions" if legacy else "")
        + f", {subagents} subagent transcripts, {errors} error rows)",
        f"- **Budget (`maxTotalChars`):** {', '.join(fmt_int(b) for b in budget) or 'n/a'}; "
        f"**budget sweep:** {', '.join(fmt_int(b) for b in budgets) or 'none'}",
        f"- **Strategies:** {', '.join(f'`{x}`' for x in strategies) or 'none'}",
    ]
    if r.run:
        template = (r.run.get("parameters") or {}).get("template_path") or "the bundled template"
        digest = r.run.get("template_sha256")
        lines.append(f"- **Prompt template:** {template}" + (f" (sha256 `{digest[:12]}…`)" if digest else ""))
        if fingerprint := (r.run.get("input") or {}).get("fingerprint"):
            lines.append(f"- **Input fingerprint:** `{str(fingerprint)[:16]}…` (paths, sizes and contents of the files read)")
        if version := (r.run.get("versions") or {}).get("measure"):
            lines.append(f"- **measure version:** {version}")
    return markdown("\n".join(lines))
