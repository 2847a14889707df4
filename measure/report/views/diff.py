"""`measure diff RUN_A RUN_B`: what changed between two runs, as per-strategy deltas.

A run is a `measure run --out` or a report directory. Each metric is computed per strategy from each run's tables
at its own budget: A, B, B - A and the change in % of A.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import polars as pl

from measure.numbers import percent, rounded
from measure.report.style import ordered_strategies
from measure.runner.tables import read_tables
from measure.schema import TABLES


class RunDiffError(ValueError):
    """A directory is not a run, or a metric name is unknown."""


METRICS: dict[str, tuple[str, Callable[[pl.DataFrame], float], str]] = {
    "sessions": ("sessions", lambda df: df["session_id"].n_unique(), "sessions measured"),
    "llm_calls": ("sessions", lambda df: df["llm_calls"].sum(), "extraction calls over all sessions"),
    "prompt_chars": ("sessions", lambda df: df["prompt_chars"].sum(), "prompt chars over all sessions"),
    "parent_kept_chars": ("sessions", lambda df: df["parent_kept_chars"].sum(), "parent-origin chars kept over all sessions"),
    "subagent_kept_chars": ("sessions", lambda df: df["subagent_kept_chars"].sum(), "subagent chars kept over all sessions"),
    "evicted_chars": ("eviction", lambda df: df["evicted_chars"].sum(), "parent-origin chars evicted (fold family, hybrid)"),
    "evicted_pct": ("eviction", lambda df: percent(df["evicted_chars"].sum(), df["alone_parent_kept_chars"].sum()),
                    "evicted chars as % of parent chars kept alone"),
    "sessions_evicting": ("eviction", lambda df: df.filter(pl.col("evicted_chars") > 0).height,
                          "sessions where the strategy evicts parent content"),
    "calls_per_run_max": ("run_cost", lambda df: df["calls_per_run_max"][0], "calls in the most expensive akm run (session cap)"),
    "chosen": ("verdict", lambda df: float(df["chosen"].any()) if "chosen" in df.columns else None,
               "1 when the run's priorities choose the strategy (the choice table), else 0"),
}
"""Metric name -> (the table it reads, its value from one strategy's rows there, meaning). Order is the table's."""


def run_tables(directory: str | os.PathLike) -> tuple[dict[str, pl.DataFrame], dict]:
    """The tables and run.json of a `measure run --out` or report directory."""
    d = Path(directory).expanduser()
    if not d.is_dir():
        raise RunDiffError(f"not a directory: {directory}")
    run_json, csv = d / "run.json", d / "tables"
    if (d / "sessions.parquet").is_file():
        tables = read_tables(d)
    elif (csv / "sessions.csv").is_file():
        tables = {name: pl.read_csv(file, schema=table.polars_schema) if (file := csv / f"{name}.csv").is_file()
                  else pl.DataFrame(schema=table.polars_schema) for name, table in TABLES.items()}
    else:
        raise RunDiffError(f"{directory} holds no run: expected sessions.parquet (measure run --out) or tables/sessions.csv (a report)")
    return tables, json.loads(run_json.read_text(encoding="utf-8")) if run_json.is_file() else {}


def diff_tables(a: dict[str, pl.DataFrame], b: dict[str, pl.DataFrame], metrics: list[str] | None = None) -> pl.DataFrame:
    """One row per strategy and metric: a, b, delta (b - a) and delta_pct (% of a; null when a is 0 or missing)."""
    names = list(metrics or METRICS)
    if unknown := [m for m in names if m not in METRICS]:
        raise RunDiffError(f"unknown metric(s) {', '.join(unknown)}; metrics: {', '.join(METRICS)}")
    strategies = ordered_strategies(a["sessions"]["strategy"].to_list() + b["sessions"]["strategy"].to_list())
    rows = []
    for strategy in strategies:
        for name in names:
            table, fn, _ = METRICS[name]
            parts = [t[table].filter(pl.col("strategy") == strategy) for t in (a, b)]
            va, vb = (fn(df) if df.height else None for df in parts)
            if va is None and vb is None:
                continue
            delta = None if va is None or vb is None else rounded(float(vb) - float(va), 1)
            pct = rounded(100.0 * delta / abs(float(va)), 1) if delta is not None and va else None
            rows.append({"strategy": strategy, "metric": name, "a": _num(va), "b": _num(vb), "delta": delta, "delta_pct": pct})
    schema = {"strategy": pl.String, "metric": pl.String, "a": pl.Float64, "b": pl.Float64, "delta": pl.Float64, "delta_pct": pl.Float64}
    return pl.DataFrame(rows, schema=schema, orient="row")


def _num(v) -> float | None:
    return None if v is None else rounded(float(v), 1)


def parameter_changes(run_a: dict, run_b: dict) -> list[str]:
    """The run.json parameters (and template digest, root name) that differ, as `name: A -> B` lines."""
    def flat(run: dict) -> dict:
        given = run.get("input") or {}
        return {**{f"parameters.{k}": v for k, v in sorted((run.get("parameters") or {}).items())},
                "template_sha256": (run.get("template_sha256") or "")[:12] or None,
                "input.root_name": given.get("root_name"), "input.sessions_listed": given.get("sessions_listed")}

    fa, fb = flat(run_a), flat(run_b)
    return [f"{k}: {fa.get(k)!r} -> {fb.get(k)!r}" for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)]


def diff_runs(run_a: str | os.PathLike, run_b: str | os.PathLike, metrics: list[str] | None = None) -> tuple[pl.DataFrame, list[str]]:
    """The per-strategy deltas between two run directories, and what differs in their parameters."""
    (tables_a, json_a), (tables_b, json_b) = run_tables(run_a), run_tables(run_b)
    return diff_tables(tables_a, tables_b, metrics), parameter_changes(json_a, json_b)


def formatted(table: pl.DataFrame) -> pl.DataFrame:
    """The diff table as text: thousands separators, whole numbers without decimals, signed deltas, `n/a`."""

    def fmt(v: float | None, signed: bool = False, pct: bool = False) -> str:
        text = "n/a" if v is None else f"{v:+,.1f}" if signed else f"{v:,.1f}"
        return text + "%" if pct and v is not None else text.removesuffix(".0")

    columns = {"A": ("a", False, False), "B": ("b", False, False), "B - A": ("delta", True, False), "change": ("delta_pct", True, True)}
    rows = [{"strategy": r["strategy"], "metric": r["metric"], **{h: fmt(r[c], s, p) for h, (c, s, p) in columns.items()}}
            for r in table.iter_rows(named=True)]
    return pl.DataFrame(rows, schema=dict.fromkeys(("strategy", "metric", *columns), pl.String), orient="row")
