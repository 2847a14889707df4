"""Figures of the report: one function per figure, schema tables in, a matplotlib Figure out.

No function here reads files, computes a metric of its own, or calls pyplot: figures are
built on `matplotlib.figure.Figure` directly (no global figure registry, any backend), under
the project style `report.mplstyle`, with fixed sizes, sorted categories and one color per
strategy from `COLORS`. `save(fig, path)` writes PNG bytes that depend only on the data.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import matplotlib as mpl
import matplotlib.style
import polars as pl
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from measure.report.views.common import STRATEGY_LABELS, ordered_strategies, short_ids
from measure.report.views.duplication import OVERLAP_BINS, overlap_bins
from measure.report.views.eviction import fold_zero_budget, sweep_curve

__all__ = [
    "STYLE",
    "COLORS",
    "FIGURES",
    "eviction_bars",
    "budget_sweep_curve",
    "overlap_histogram",
    "llm_calls_bars",
    "run_cost_bars",
    "save",
]

STYLE = str(Path(__file__).with_name("report.mplstyle"))
"""Path of the project matplotlib style (fonts, dpi, svg.hashsalt...)."""

COLORS: dict[str, str] = {
    "link": "#56B4E9",
    "fold": "#E69F00",
    "fold_dedupe_scoped": "#CC79A7",
    "fold_stub_raw": "#D55E00",
    "hybrid": "#009E73",
    "chunked": "#0072B2",
}
"""One color per strategy (Okabe-Ito, colour-blind safe); the same everywhere."""

OTHER_COLOR = "#7F7F7F"
"""Color of a strategy missing from COLORS."""

PAIR_COLOR = "#9CB3C9"
"""Overlap histogram: pairs where at most one copy reaches the prompt."""

BOTH_COLOR = "#C0392B"
"""Overlap histogram: pairs where both copies reach the fold prompt (highlighted)."""

FIGSIZE = (9.0, 4.5)
"""Size of every single-panel figure, in inches."""


def _styled(fn):
    """Run a figure function under the project style, so rcParams never leak in from outside."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with mpl.style.context(STYLE, after_reset=True):
            return fn(*args, **kwargs)

    return wrapper


def _color(strategy: str) -> str:
    return COLORS.get(strategy, OTHER_COLOR)


def _label(strategy: str) -> str:
    return STRATEGY_LABELS.get(strategy, strategy)


def _sessions(df: pl.DataFrame) -> list[str]:
    """Session ids in table order (session_path, then id)."""
    if df.height == 0:
        return []
    ordered = df.sort("session_path", "session_id")["session_id"].to_list()
    return list(dict.fromkeys(ordered))


def _empty(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color=OTHER_COLOR)
    ax.set_xticks([])
    ax.set_yticks([])


def _thousands(x: float, _pos=None) -> str:
    if x >= 1000 and x % 1000 == 0:
        return f"{int(x) // 1000:,}k"
    return f"{x:,.0f}"


def _budgets_text(df: pl.DataFrame) -> str:
    budgets = sorted(set(df["budget"].unique().to_list())) if "budget" in df.columns else []
    return ", ".join(f"{b:,}" for b in budgets) if budgets else "n/a"


MAX_SESSIONS = 20
"""Per-session bar charts show at most this many sessions (those with the largest values)."""


def _top_sessions(df: pl.DataFrame, value: str, limit: int = MAX_SESSIONS) -> list[str]:
    """Session ids in table order, keeping only the `limit` with the largest `value` (ties: table order)."""
    sessions = _sessions(df)
    if len(sessions) <= limit:
        return sessions
    peak = {sid: v for sid, v in df.group_by("session_id").agg(pl.col(value).max()).iter_rows()}
    rank = sorted(sessions, key=lambda sid: (-(peak.get(sid) or 0), sessions.index(sid)))[:limit]
    keep = set(rank)
    return [sid for sid in sessions if sid in keep]


def _grouped_bars(ax, df: pl.DataFrame, value: str, strategies: list[str], label_fmt) -> int:
    """Bars per session (x) and strategy (hue) of column `value`; returns how many sessions are drawn.

    Value labels are drawn when there is room; with more than MAX_SESSIONS sessions only those
    with the largest values are drawn.
    """
    sessions = _top_sessions(df, value)
    short = short_ids(_sessions(df))
    width = 0.8 / max(1, len(strategies))
    labelled = len(sessions) * len(strategies) <= 48
    for j, s in enumerate(strategies):
        part = df.filter(pl.col("strategy") == s)
        lookup = dict(zip(part["session_id"].to_list(), part[value].to_list(), strict=True))
        xs = [i + (j - (len(strategies) - 1) / 2) * width for i in range(len(sessions))]
        ys = [lookup.get(sid) for sid in sessions]
        ys = [0 if y is None else y for y in ys]
        bars = ax.bar(xs, ys, width=width, color=_color(s), label=_label(s), edgecolor="white", linewidth=0.5)
        if labelled:
            ax.bar_label(bars, labels=[label_fmt(y) for y in ys], fontsize=7, padding=1)
    rotate = len(sessions) > 8
    ax.set_xticks(
        range(len(sessions)),
        [short[sid] for sid in sessions],
        rotation=45 if rotate else 0,
        ha="right" if rotate else "center",
    )
    ax.set_xlim(-0.6, len(sessions) - 0.4)
    return len(sessions)


def _session_axis_label(drawn: int, total: int, what: str) -> str:
    if drawn < total:
        return f"session ({drawn} of {total}: those with the most {what})"
    return "session"


@_styled
def eviction_bars(eviction: pl.DataFrame) -> Figure:
    """Parent-origin chars evicted (% of the parent-alone kept set) per session, one bar per strategy."""
    fig = Figure(figsize=FIGSIZE)
    ax = fig.subplots()
    ax.set_title(f"Parent-origin content evicted by strategy (maxTotalChars = {_budgets_text(eviction)})")
    if eviction.height == 0:
        _empty(ax, "no eviction rows")
        return fig
    strategies = ordered_strategies(eviction["strategy"].unique().to_list())
    drawn = _grouped_bars(ax, eviction, "evicted_chars_pct", strategies, lambda y: f"{y:.1f}" if y else "0")
    ax.set_xlabel(_session_axis_label(drawn, len(_sessions(eviction)), "eviction"))
    ax.set_ylabel("parent chars evicted (% of parent alone)")
    top = max(1.0, float(eviction["evicted_chars_pct"].max() or 0.0))
    ax.set_ylim(min(0.0, float(eviction["evicted_chars_pct"].min() or 0.0)) * 1.15, top * 1.15)
    ax.legend(loc="upper left", ncols=min(4, len(strategies)))
    return fig


@_styled
def budget_sweep_curve(budget_sweep: pl.DataFrame) -> Figure:
    """Evicted parent chars (% over all sessions) vs budget per strategy; marks where fold evicts nothing.

    link (the parent-alone reference, 0 by definition) and chunked (many calls) are left out,
    as in `report_views.sweep_curve`.
    """
    fig = Figure(figsize=FIGSIZE)
    ax = fig.subplots()
    ax.set_title("Budget sweep: parent-origin content evicted, all sessions pooled")
    curve = sweep_curve(budget_sweep)
    if curve.height == 0:
        _empty(ax, "no budget sweep rows")
        return fig
    markers = "osD^vP*X"
    styles = ("-", "--", ":", "-.")
    for k, s in enumerate(ordered_strategies(curve["strategy"].unique().to_list())):
        part = curve.filter(pl.col("strategy") == s).sort("budget")
        ax.plot(
            part["budget"].to_list(),
            part["evicted_pct"].to_list(),
            marker=markers[k % len(markers)],
            linestyle=styles[k % len(styles)],
            color=_color(s),
            label=_label(s),
        )
    budgets = sorted(set(curve["budget"].unique().to_list()))
    ax.set_xscale("log")
    ax.set_xticks(budgets)
    ax.xaxis.set_major_formatter(FuncFormatter(_thousands))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("maxTotalChars (budget)")
    ax.set_ylabel("parent chars evicted (% of parent alone)")
    zero = fold_zero_budget(budget_sweep)
    if zero is not None:
        ax.axvline(zero, color=_color("fold"), linestyle=":", linewidth=1.5)
        last = zero == budgets[-1]
        ax.annotate(
            f"fold evicts nothing from {_thousands(zero)}",
            xy=(zero, 0),
            xytext=(-6 if last else 6, 24),
            textcoords="offset points",
            ha="right" if last else "left",
            color="black",
            fontsize=9,
        )
    elif "fold" in set(curve["strategy"].to_list()):
        ax.text(
            0.99,
            0.97,
            f"fold still evicts at {_thousands(budgets[-1])}",
            ha="right",
            va="top",
            transform=ax.transAxes,
            fontsize=9,
        )
    ymax = float(curve["evicted_pct"].max() or 0.0)
    ymin = float(curve["evicted_pct"].min() or 0.0)
    ax.set_ylim(min(0.0, ymin) - 1, max(5.0, ymax * 1.15))
    ax.legend(loc="upper right")
    return fig


@_styled
def overlap_histogram(duplicates: pl.DataFrame) -> Figure:
    """Overlap (word-set Jaccard) of notification/subagent pairs, one panel per pairing method.

    Pairs whose both copies reach the fold prompt are stacked on top in a highlight color.
    """
    pairings = sorted(set(duplicates["pairing"].unique().to_list())) if duplicates.height else []
    fig = Figure(figsize=FIGSIZE)
    axes = fig.subplots(1, max(1, len(pairings)), squeeze=False, sharey=True)[0]
    fig.suptitle("Duplicate pairs: how alike the notification and the subagent's final report are")
    if not pairings:
        _empty(axes[0], "no notification / subagent pairs")
        return fig
    bins = overlap_bins(duplicates)
    width = OVERLAP_BINS[1] - OVERLAP_BINS[0]
    for ax, pairing in zip(axes, pairings, strict=True):
        part = bins.filter(pl.col("pairing") == pairing).sort("both_in_prompt", "bin_start")
        lower = part.filter(~pl.col("both_in_prompt"))
        upper = part.filter(pl.col("both_in_prompt"))
        starts = lower["bin_start"].to_list()
        ax.bar(starts, lower["pairs"].to_list(), width=width, align="edge", color=PAIR_COLOR,
               edgecolor="white", linewidth=0.5, label="at most one copy in the prompt")
        ax.bar(starts, upper["pairs"].to_list(), width=width, align="edge", bottom=lower["pairs"].to_list(),
               color=BOTH_COLOR, edgecolor="white", linewidth=0.5, label="both copies in the fold prompt")
        n = int(part["pairs"].sum())
        both = int(upper["pairs"].sum())
        ax.set_title(f"{pairing}: {n} pairs, {both} both in prompt", fontsize=10)
        ax.set_xlim(0, 1)
        ax.set_xticks([0, 0.2, 0.4, 0.6, 0.8, 1.0], ["0%", "20%", "40%", "60%", "80%", "100%"])
        ax.set_xlabel("word-set Jaccard overlap")
    axes[0].set_ylabel("pairs")
    axes[0].legend(loc="upper left")
    return fig


@_styled
def llm_calls_bars(llm_calls: pl.DataFrame) -> Figure:
    """Extraction LLM calls per session, one bar per strategy, on a log scale."""
    fig = Figure(figsize=FIGSIZE)
    ax = fig.subplots()
    ax.set_title(f"LLM calls per session and strategy (maxTotalChars = {_budgets_text(llm_calls)})")
    if llm_calls.height == 0:
        _empty(ax, "no llm_calls rows")
        return fig
    strategies = ordered_strategies(llm_calls["strategy"].unique().to_list())
    drawn = _grouped_bars(ax, llm_calls, "llm_calls", strategies, lambda y: f"{y:,}")
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _p: f"{y:,.0f}"))
    top = max(10, int(llm_calls["llm_calls"].max() or 1))
    ax.set_ylim(0.8, top * 3)
    ax.set_xlabel(_session_axis_label(drawn, len(_sessions(llm_calls)), "calls"))
    ax.set_ylabel("calls (log scale)")
    ax.legend(loc="upper left", ncols=min(3, len(strategies)))
    return fig


@_styled
def run_cost_bars(run_cost: pl.DataFrame) -> Figure:
    """Calls in the most expensive run (bar) and per run on average (dot) vs the session cap (line)."""
    fig = Figure(figsize=FIGSIZE)
    ax = fig.subplots()
    if run_cost.height == 0:
        ax.set_title("Run cost under the per-run session cap")
        _empty(ax, "no run_cost rows")
        return fig
    caps = sorted(set(run_cost["session_cap"].unique().to_list()))
    ax.set_title(f"Run cost with at most {', '.join(map(str, caps))} sessions per run (maxSessionsPerRun)")
    strategies = ordered_strategies(run_cost["strategy"].unique().to_list())
    rows = {r["strategy"]: r for r in run_cost.iter_rows(named=True)}
    xs = list(range(len(strategies)))
    maxes = [rows[s]["calls_per_run_max"] for s in strategies]
    means = [rows[s]["calls_per_run_mean"] for s in strategies]
    bars = ax.bar(xs, maxes, width=0.6, color=[_color(s) for s in strategies], label="calls in the most expensive run")
    ax.bar_label(bars, labels=[f"{m:,}" for m in maxes], fontsize=8, padding=6)
    ax.plot(xs, means, linestyle="none", marker="_", markersize=28, markeredgewidth=2, color="black",
            label="mean calls per run")
    for cap in caps:
        ax.axhline(cap, color="black", linestyle="--", linewidth=1)
        ax.annotate(f"cap: {cap} sessions = {cap} calls at one call each", xy=(-0.45, cap), xytext=(0, 4),
                    textcoords="offset points", fontsize=8)
    ax.set_xticks(xs, [_label(s) for s in strategies])
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _p: f"{y:,.0f}"))
    ax.set_ylim(0.8, max([10, *maxes, *caps]) * 3)
    ax.set_ylabel("LLM calls per run (log scale)")
    ax.legend(loc="upper left")
    return fig


FIGURES: dict[str, tuple[str, object]] = {
    "eviction_by_strategy": ("eviction", eviction_bars),
    "budget_sweep": ("budget_sweep", budget_sweep_curve),
    "overlap_distribution": ("duplicates", overlap_histogram),
    "llm_calls": ("llm_calls", llm_calls_bars),
    "run_cost": ("run_cost", run_cost_bars),
}
"""Figure name -> (the schema table it is drawn from, the function); the report saves each as PNG."""


def save(fig: Figure, path: str | os.PathLike) -> Path:
    """Write `fig` as PNG at `path` with no Software/date metadata, so the bytes depend only on the figure."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with mpl.style.context(STYLE, after_reset=True):
        fig.savefig(out, format="png", metadata={"Software": None})
    return out
