"""Figures of the report: one function per figure, schema tables in, a matplotlib Figure out.

Built on `matplotlib.figure.Figure` (no pyplot, files or views) under the project style, with fixed sizes,
sorted categories and one color per strategy; what a page shows too comes from `shaping`. A notebook shows
each as PNG bytes that depend only on the data (`nbsetup.PNG_KWARGS`), which the report saves.

Long: one short function per figure of every page (the FIGURES registry), around the helpers they share;
split per page, each part would need those helpers from a third module.
"""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.style
import polars as pl
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter
from matplotlib.transforms import blended_transform_factory

from measure.numbers import rounded
from measure.report import shaping, style
from measure.report.style import color as _color
from measure.report.style import label as _label


# A decorator too (a contextmanager): each figure function runs under the project style, so rcParams
# never leak in from outside.
_styled = mpl.style.context(style.STYLE, after_reset=True)


def _figure(title: str, figsize: tuple[float, float] = style.FIGSIZE, layout: str | None = None) -> tuple:
    """A single-panel figure and its axes, titled `title`."""
    fig = Figure(figsize=figsize, layout=layout)
    ax = fig.subplots()
    ax.set_title(title)
    return fig, ax


def _sessions(df: pl.DataFrame) -> list[str]:
    """Session ids in table order (session_path, then id)."""
    return df.sort("session_path", "session_id")["session_id"].unique(maintain_order=True).to_list()


def _empty(ax, text: str) -> Figure:
    """Say `text` on `ax` instead of drawing data; return its figure."""
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color=style.OTHER_COLOR)
    ax.set_xticks([])
    ax.set_yticks([])
    return ax.figure


def _thousands(x: float, _pos=None) -> str:
    if x >= 1000 and x % 1000 == 0:
        return f"{int(x) // 1000:,}k"
    return f"{x:,.0f}"


def _budgets_text(df: pl.DataFrame) -> str:
    return ", ".join(f"{b:,}" for b in sorted(df["budget"].unique().to_list())) or "n/a"


MAX_SESSIONS = 20
"""Per-session bar charts show at most this many sessions (those with the largest values)."""


def _top_sessions(df: pl.DataFrame, value: str, limit: int = MAX_SESSIONS) -> list[str]:
    """Session ids in table order; with more than `limit`, the `limit` with the largest `value`,
    largest first (ties: table order), so an axis saying "those with the most …" is ordered so."""
    sessions = _sessions(df)
    if len(sessions) <= limit:
        return sessions
    peak = dict(df.group_by("session_id").agg(pl.col(value).max()).iter_rows())
    # sorted() is stable: ties keep table order
    return sorted(sessions, key=lambda sid: -(peak.get(sid) or 0))[:limit]


def _grouped_bars(ax, df: pl.DataFrame, value: str, label_fmt, what: str, ncols: int) -> None:
    """Bars per session (x) and strategy (hue) of column `value` (labelled when there is room), `what` naming
    it on the session axis (see _top_sessions), and their legend in at most `ncols` columns."""
    strategies = style.ordered_strategies(df["strategy"].unique().to_list())
    sessions = _top_sessions(df, value)
    width = 0.8 / max(1, len(strategies))
    labelled = len(sessions) * len(strategies) <= 48
    for j, s in enumerate(strategies):
        part = df.filter(pl.col("strategy") == s)
        lookup = dict(zip(part["session_id"].to_list(), part[value].to_list(), strict=True))
        xs = [i + (j - (len(strategies) - 1) / 2) * width for i in range(len(sessions))]
        ys = [0 if y is None else y for y in map(lookup.get, sessions)]  # a missing bar is 0; a 0.0 stays a float
        bars = ax.bar(xs, ys, width=width, color=_color(s), label=_label(s), edgecolor="white", linewidth=0.5)
        if labelled:
            ax.bar_label(bars, labels=[label_fmt(y) for y in ys], fontsize=7, padding=1)
    _session_axis(ax, df, sessions, what)
    ax.legend(loc="upper left", ncols=min(ncols, len(strategies)))


def _stack(ax, xs, layers, across: bool = False, counts: dict | None = None, **bar_style) -> tuple[object, list]:
    """Bars (horizontal ones `across`) at `xs` of each (values, color, label) layer on top of those before; `counts`
    (bar_label options): each nonzero value written inside its bar. The last bars, and the totals."""
    total = [0] * len(xs)
    for values, color, label in layers:
        if across:
            bars = ax.barh(xs, values, left=total, color=color, label=label, **bar_style)
        else:
            bars = ax.bar(xs, values, bottom=total, color=color, label=label, **bar_style)
        if counts is not None:
            ax.bar_label(bars, labels=[str(v) if v else "" for v in values], label_type="center", **counts)
        total = [t + v for t, v in zip(total, values, strict=True)]
    return bars, total


def _millions(y: float, _pos=None) -> str:
    if y >= 1e6:
        return f"{y / 1e6:,.1f}M"
    if y >= 1e3:
        return f"{y / 1e3:,.0f}k"
    return f"{y:,.0f}"


def _session_axis(ax, df: pl.DataFrame, sessions: list[str], what: str) -> None:
    """The x axis of `sessions` drawn out of those of `df`: short ids, and a label saying how many
    are drawn when not all are (those with the most `what`)."""
    drawn, total, short = len(sessions), len(_sessions(df)), style.short_ids(_sessions(df))
    ax.set_xticks(range(drawn), [short[sid] for sid in sessions], rotation=45 if drawn > 8 else 0,
                  ha="right" if drawn > 8 else "center")
    ax.set_xlim(-0.6, drawn - 0.4)
    ax.set_xlabel(f"session ({drawn} of {total}: those with the most {what})" if drawn < total else "session")


@_styled
def eviction_bars(eviction: pl.DataFrame) -> Figure:
    """Parent-origin chars evicted (% of the parent-alone kept set) per session, one bar per strategy."""
    fig, ax = _figure(f"Parent-origin content evicted by strategy (maxTotalChars = {_budgets_text(eviction)})")
    if eviction.height == 0:
        return _empty(ax, "no eviction rows")
    if not eviction.filter(pl.col("budget_evicted_pct") != 0).height:
        return _empty(ax, f"no strategy evicts parent content in any of the {len(_sessions(eviction))} sessions")
    _grouped_bars(ax, eviction, "budget_evicted_pct", lambda y: f"{rounded(y, 1):.1f}" if y else "0", "eviction", 4)
    low, high = (float(v or 0.0) for v in (eviction["budget_evicted_pct"].min(), eviction["budget_evicted_pct"].max()))
    ax.set(ylim=(min(0.0, low) * 1.15, max(1.0, high) * 1.15), ylabel="parent chars evicted (% of parent alone)")
    return fig


@_styled
def budget_sweep_curve(budget_sweep: pl.DataFrame) -> Figure:
    """Evicted parent chars (% over all sessions, `shaping.sweep_curve`) vs budget per strategy; marks where
    fold evicts nothing."""
    fig, ax = _figure("Budget sweep: parent-origin content evicted, all sessions pooled")
    curve = shaping.sweep_curve(budget_sweep)
    if curve.height == 0:
        return _empty(ax, "no budget sweep rows")
    budgets = sorted(set(curve["budget"].to_list()))
    if not curve.filter(pl.col("evicted_chars") != 0).height:
        # Flat lines at 0 with a "fold evicts nothing from <smallest budget>" marker would dress up
        # a root where nothing can be evicted (no subagent text) as a finding.
        return _empty(ax, f"no strategy evicts parent content at any swept budget ({_thousands(budgets[0])}–{_thousands(budgets[-1])})")
    markers = "osD^vP*X"
    styles = ("-", "--", ":", "-.")
    for k, s in enumerate(style.ordered_strategies(curve["strategy"].unique().to_list())):
        part = curve.filter(pl.col("strategy") == s).sort("budget")
        ax.plot(part["budget"].to_list(), part["evicted_pct"].to_list(), marker=markers[k % len(markers)],
                linestyle=styles[k % len(styles)], color=_color(s), label=_label(s))
    ax.set(xscale="log", xticks=budgets, xlabel="maxTotalChars (budget)",
           ylabel="parent chars evicted (% of parent alone)")
    ax.xaxis.set_major_formatter(FuncFormatter(_thousands))
    ax.xaxis.set_minor_formatter(NullFormatter())
    zero = shaping.fold_zero_budget(budget_sweep)
    if zero is not None:
        ax.axvline(zero, color=_color("fold"), linestyle=":", linewidth=1.5)
        # Along the line, at the top: data there is at or near 0 (fold evicts nothing from here),
        # and the legend sits outside the axes, so the note covers neither.
        ax.text(zero, 0.97, f"fold evicts nothing from {_thousands(zero)}", rotation=90, ha="right", va="top",
                transform=blended_transform_factory(ax.transData, ax.transAxes), color="black", fontsize=9)
    elif "fold" in set(curve["strategy"].to_list()):
        ax.text(0.99, 0.97, f"fold still evicts at {_thousands(budgets[-1])}", ha="right", va="top", transform=ax.transAxes,
                fontsize=9)
    ymin, ymax = float(curve["evicted_pct"].min() or 0.0), float(curve["evicted_pct"].max() or 0.0)
    ax.set_ylim(min(0.0, ymin) - 1, max(5.0, ymax * 1.15))
    fig.legend(*ax.get_legend_handles_labels(), loc="outside right upper")
    return fig


OVERLAP_BINS = 20
"""Equal-width bins of the overlap histogram from 0 to 1 (an overlap of 1 falls in the last)."""


def _overlap_counts(pairs: pl.DataFrame) -> list[int]:
    """How many of `pairs` fall in each of the OVERLAP_BINS bins."""
    counts = [0] * OVERLAP_BINS
    for v in pairs["overlap"].drop_nulls().to_list():
        counts[max(min(int(v * OVERLAP_BINS), OVERLAP_BINS - 1), 0)] += 1
    return counts


@_styled
def overlap_histogram(duplicates: pl.DataFrame) -> Figure:
    """Overlap (word-set Jaccard) of notification/subagent pairs, one panel per pairing method; pairs whose
    both copies reach the fold prompt are stacked on top in a highlight color."""
    pairings = sorted(set(duplicates["pairing"].unique().to_list()))
    fig = Figure(figsize=style.FIGSIZE)
    axes = fig.subplots(1, max(1, len(pairings)), squeeze=False, sharey=True)[0]
    fig.suptitle("Duplicate pairs: how alike the notification and the subagent's final report are")
    if not pairings:
        return _empty(axes[0], "no notification / subagent pairs")
    width, starts = 1 / OVERLAP_BINS, [i / OVERLAP_BINS for i in range(OVERLAP_BINS)]
    for ax, pairing in zip(axes, pairings, strict=True):
        part = duplicates.filter(pl.col("pairing") == pairing)
        lower, upper = (_overlap_counts(part.filter(pl.col("both_in_prompt") == both)) for both in (False, True))
        _stack(ax, starts, [(lower, style.PAIR_COLOR, "at most one copy in the prompt"),
                            (upper, style.BOTH_COLOR, "both copies in the fold prompt")],
               width=width, align="edge", edgecolor="white", linewidth=0.5)
        ax.set_title(f"{pairing}\n{sum(lower) + sum(upper)} pairs, {sum(upper)} both in prompt", fontsize=9)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set(xlim=(0, 1), xlabel="word-set Jaccard overlap")
        ax.set_xticks([0, 0.2, 0.4, 0.6, 0.8, 1.0], ["0%", "20%", "40%", "60%", "80%", "100%"])
    axes[0].set_ylabel("pairs")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=2)
    return fig


@_styled
def llm_calls_bars(llm_calls: pl.DataFrame) -> Figure:
    """Extraction LLM calls per session, one bar per strategy, on a log scale."""
    fig, ax = _figure(f"LLM calls per session and strategy (maxTotalChars = {_budgets_text(llm_calls)})")
    if llm_calls.height == 0:
        return _empty(ax, "no llm_calls rows")
    _grouped_bars(ax, llm_calls, "llm_calls", lambda y: f"{y:,}", "calls", 3)
    ax.set(yscale="log", ylim=(0.8, max(10, int(llm_calls["llm_calls"].max() or 1)) * 3), ylabel="calls (log scale)")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _p: f"{y:,.0f}"))
    return fig


@_styled
def run_cost_bars(run_cost: pl.DataFrame) -> Figure:
    """Calls in the most expensive run (bar) and per run on average (dot) vs the session cap (line)."""
    fig, ax = _figure("Run cost under the per-run session cap")
    if run_cost.height == 0:
        return _empty(ax, "no run_cost rows")
    caps = sorted(set(run_cost["session_cap"].unique().to_list()))
    ax.set_title(f"Run cost with at most {', '.join(map(str, caps))} sessions per run (maxSessionsPerRun)")
    ordered = run_cost.sort(style.strategy_rank(run_cost["strategy"]))
    strategies, maxes, means = (ordered[c].to_list() for c in ("strategy", "calls_per_run_max", "calls_per_run_mean"))
    xs = list(range(len(strategies)))
    bars = ax.bar(xs, maxes, width=0.6, color=[_color(s) for s in strategies], label="calls in the most expensive run")
    ax.bar_label(bars, labels=[f"{m:,}" for m in maxes], fontsize=8, padding=6)
    ax.plot(xs, means, linestyle="none", marker="_", markersize=28, markeredgewidth=2, color="black",
            label="mean calls per run")
    for cap in caps:
        # In the legend, not on the plot: a caption on the line collides with the bar labels.
        ax.axhline(cap, color="black", linestyle="--", linewidth=1, label=f"cap: {cap} sessions = {cap} calls at one call each")
    ax.set_xticks(xs, [_label(s) for s in strategies])
    ax.set(yscale="log", ylim=(0.8, max([10, *maxes, *caps]) * 3), ylabel="LLM calls per run (log scale)")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _p: f"{y:,.0f}"))
    ax.legend(loc="upper left")
    return fig


MAX_GROUPS = 12
"""Each panel of the breakdown figure shows at most this many groups (the most sessions first)."""


def _short(text: str) -> str:
    return text if len(text) <= 26 else text[:25] + "…"


@_styled
def breakdown_bars(breakdown: pl.DataFrame) -> Figure:
    """Per project, Claude Code version and month: % of parent content fold and hybrid evict, with session counts."""
    fig = Figure(figsize=(13.0, 5.5), layout="constrained")
    axes = fig.subplots(1, len(style.BREAKDOWN_DIMENSIONS), sharex=True)
    fig.suptitle("Parent-origin content evicted, by project, Claude Code version and month (at the run's budget)")
    ordered = shaping.breakdown_ordered(breakdown)
    peak = max([1.0, *ordered["fold_evicted_pct"].fill_null(0).to_list()])
    for ax, (dim, heading) in zip(axes, style.BREAKDOWN_DIMENSIONS.items()):
        rows = ordered.filter(pl.col("dimension") == dim).to_dicts()
        ax.set_title(heading)
        if not rows:
            _empty(ax, "no sessions")
            continue
        if len(rows) > MAX_GROUPS:
            ax.set_title(f"{heading} (top {MAX_GROUPS} of {len(rows)} by sessions)")
            keep = {id(r) for r in sorted(rows, key=lambda r: -r["sessions"])[:MAX_GROUPS]}
            rows = [r for r in rows if id(r) in keep]
        ys = list(range(len(rows)))
        height = 0.38
        for offset, strategy in enumerate(("fold", "hybrid")):
            values = [r[f"{strategy}_evicted_pct"] or 0.0 for r in rows]
            bars = ax.barh([y + (offset - 0.5) * height for y in ys], values, height=height, color=_color(strategy),
                           label=f"{_label(strategy)} evicted %")
            ax.bar_label(bars, labels=[f"{rounded(v, 1):.1f}%" if v else "" for v in values], fontsize=7, padding=2)
        ax.set_yticks(ys, [f"{_short(r['value'])} ({r['sessions']})" for r in rows], fontsize=8)
        ax.invert_yaxis()
        ax.set(xlim=(0, peak * 1.25), xlabel="% of parent chars kept alone")
    if ordered.height:
        axes[0].legend(loc="lower right", fontsize=8)
    fig.text(0.5, -0.01, "(n) = sessions in the group; no bar = 0%", ha="center", fontsize=8, color=style.OTHER_COLOR)
    return fig


@_styled
def stub_vs_run(background: pl.DataFrame) -> Figure:
    """Launch stub (x) vs true run time (y) of each background task, log-log, with the line where they agree."""
    fig, ax = _figure("Background tasks: what the launch stub says vs how long the task ran")
    timed = background.filter((pl.col("stub_seconds") > 0) & (pl.col("run_seconds") > 0))  # null > 0 is not true
    if timed.height == 0:
        return _empty(ax, "no background task with both a launch stub and a completion")
    late = pl.col("completed_after_parent_end").fill_null(False)
    for kind in sorted(set(timed["kind"].to_list())):
        part = timed.filter(pl.col("kind") == kind)
        on_time, after = part.filter(~late), part.filter(late)
        color = style.KIND_COLORS.get(kind, style.OTHER_COLOR)
        ax.scatter(on_time["stub_seconds"].to_list(), on_time["run_seconds"].to_list(), s=28, color=color,
                   label=f"{kind} ({part.height})", edgecolor="white", linewidth=0.5)
        if after.height:
            ax.scatter(after["stub_seconds"].to_list(), after["run_seconds"].to_list(), s=46, facecolor="none",
                       edgecolor=color, linewidth=1.5, marker="D")
    x_lo, x_hi = timed["stub_seconds"].min() / 2, timed["stub_seconds"].max() * 2
    y_lo, y_hi = min(x_lo, timed["run_seconds"].min() / 2), timed["run_seconds"].max() * 2
    ax.plot([x_lo, x_hi], [x_lo, x_hi], color="black", linestyle="--", linewidth=1, label="run = stub")
    if timed.filter(late).height:
        ax.scatter([], [], s=46, facecolor="none", edgecolor="black", marker="D", label="completed after the parent's last turn")
    ax.set(xscale="log", yscale="log", xlim=(x_lo, x_hi), ylim=(y_lo, y_hi))
    fmt = FuncFormatter(lambda v, _p: f"{v:,.0f} s" if v >= 1 else f"{v:g} s")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(fmt)
        axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("launch stub: launch → acknowledgement (seconds, log scale)")
    ax.set_ylabel("true run: launch → completion (seconds, log scale)")
    ax.legend(loc="upper left", fontsize=8)
    return fig


@_styled
def deliveries_bars(background: pl.DataFrame) -> Figure:
    """Background results by kind and Claude Code version, stacked by delivery (turn, removed, never)."""
    fig, ax = _figure("How background results reached the parent, by kind and Claude Code version")
    if background.height == 0:
        return _empty(ax, "no background rows")
    table = shaping.deliveries(background)
    groups = list(zip(table["kind"].to_list(), table["Claude Code"].to_list(), strict=True))
    xs = list(range(len(groups)))
    _, bottom = _stack(ax, xs, [(table[d].to_list(), color, d) for d, color in style.DELIVERY_COLORS.items()],
                       counts={"fontsize": 8, "color": "white"}, width=0.6, edgecolor="white", linewidth=0.5)
    rotate = len(groups) > 6
    ax.set_xticks(xs, [f"{k}\n{v}" for k, v in groups], rotation=45 if rotate else 0, ha="right" if rotate else "center",
                  fontsize=8)
    ax.set(ylim=(0, max(bottom) * 1.15 + 0.5), ylabel="background tasks")
    ax.legend(loc="upper left", title="delivery")
    return fig


@_styled
def replay_bars(replay: pl.DataFrame) -> Figure:
    """Per strategy: re-extractions the replay implies and how many of them send an unchanged prompt."""
    fig, ax = _figure("Re-extractions while sessions are written")
    if replay.height == 0:
        return _empty(ax, "no replay rows (measure run --replay)")
    schedules = ", ".join(sorted(set(replay["schedule"].to_list())))
    ax.set_title(f"Re-extractions while sessions are written (replayed at {schedules})")
    totals = shaping.replay_totals(replay)
    strategies, re, wasted = (totals[c].to_list() for c in ("strategy", "re-extractions", "wasted"))
    xs = list(range(len(strategies)))
    bars = ax.bar([x - 0.2 for x in xs], re, width=0.4, color=[_color(s) for s in strategies], label="re-extractions")
    ax.bar_label(bars, labels=[str(v) for v in re], fontsize=8, padding=1)
    bars = ax.bar([x + 0.2 for x in xs], wasted, width=0.4, color="white", edgecolor=[_color(s) for s in strategies],
                  hatch="//", linewidth=1, label="of which the prompt did not change")
    ax.bar_label(bars, labels=[str(v) for v in wasted], fontsize=8, padding=1)
    ax.set_xticks(xs, [_label(s) for s in strategies])
    ax.set(ylim=(0, max([1, *re]) * 1.2), ylabel="extractions after a session's first")
    ax.legend(loc="upper left")
    return fig


@_styled
def tokens_by_origin_bars(tokens: pl.DataFrame) -> Figure:
    """Native tokens (input + cache write + cache read + output) per session, stacked by origin."""
    df = tokens.filter(pl.col("origin") != "total").with_columns(shaping.all_tokens().alias("_tokens"))
    totals = df.group_by("session_id", "session_path").agg(pl.col("_tokens").sum()).filter(pl.col("_tokens") > 0)
    by_origin = totals.join(df.pivot(on="origin", index="session_id", values="_tokens"), on="session_id", how="left")
    layers = [(lambda row, o=o: row[o] or 0, color, style.ORIGIN_LABELS[o])
              for o, color in style.ORIGIN_COLORS.items() if o in by_origin.columns]
    # One legend row above the tallest stack: the tallest bar is drawn first, where an upper-left
    # legend stacked in a column would cover it.
    return _session_stacks("Native tokens per session by origin (one API call per message.id)", by_origin,
                           "no API calls", "_tokens", layers, None, "tokens",
                           "tokens (input + cache write + cache read + output)",
                           {"loc": "upper center", "ncols": max(1, len(layers)), "frameon": False},
                           edgecolor="white", linewidth=0.5)


@_styled
def naive_overcount_bars(tokens: pl.DataFrame) -> Figure:
    """Per session: tokens a per-line sum reports over the deduplicated tokens (1.0 = no over-count)."""
    fig, ax = _figure("Over-count of per-line usage sums (every assistant line) vs one call per message.id")
    df = (tokens.filter(pl.col("origin") == "total")
          .with_columns(shaping.all_tokens().alias("_dedup"), shaping.all_tokens("naive_").alias("_naive"))
          .filter(pl.col("_dedup") > 0).with_columns((pl.col("_naive") / pl.col("_dedup")).alias("_x")))
    if df.height == 0:
        return _empty(ax, "no API calls")
    sessions = _top_sessions(df, "_x")
    lookup = dict(zip(df["session_id"].to_list(), df["_x"].to_list(), strict=True))
    ys = [lookup[sid] for sid in sessions]
    bars = ax.bar(range(len(sessions)), ys, width=0.7, color=_color("fold"))
    if len(sessions) <= 30:
        ax.bar_label(bars, labels=[f"{rounded(y, 2):.2f}" for y in ys], fontsize=7, padding=1)
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1)
    _session_axis(ax, df, sessions, "over-count")
    ax.set(ylim=(0, max(2.0, max(ys) * 1.15)), ylabel="per-line tokens ÷ deduplicated tokens")
    return fig


def _session_stacks(title: str, df: pl.DataFrame, empty: str, value: str, layers, labels, what: str, ylabel: str,
                    legend: dict, **bar_style) -> Figure:
    """Per session of `df` (one row each; those with the largest `value`), `layers` of (row -> height, color,
    legend label) stacked bottom up; `labels(row)`, when given, labels the stack when there is room. Without
    rows, `empty` said instead."""
    fig, ax = _figure(title)
    if df.height == 0:
        return _empty(ax, empty)
    sessions = _top_sessions(df, value)
    rows = {r["session_id"]: r for r in df.iter_rows(named=True)}
    bars, bottom = _stack(ax, range(len(sessions)), [([height(rows[s]) for s in sessions], color, label)
                                                         for height, color, label in layers], width=0.7, **bar_style)
    if labels is not None and len(sessions) <= 30:
        ax.bar_label(bars, labels=[labels(rows[s]) for s in sessions], fontsize=7, padding=1)
    _session_axis(ax, df, sessions, what)
    ax.yaxis.set_major_formatter(FuncFormatter(_millions))
    ax.set(ylim=(0, max(1, max(bottom)) * 1.2), ylabel=ylabel)
    ax.legend(**legend)
    return fig


@_styled
def wakeup_cost_bars(cost_sessions: pl.DataFrame) -> Figure:
    """Per session with wake-ups: cache-read tokens of the wake-up turns, and the part batching saves."""
    saved = "batch_saved_cache_read_tokens"
    return _session_stacks(
        "Notification wake-ups: cache reads of the turns they opened, and what batching saves",
        cost_sessions.filter(pl.col("wakeup_turns") > 0), "no notification was delivered as a turn",
        "wakeup_cache_read_tokens",
        [(lambda r: r["wakeup_cache_read_tokens"] - r[saved], _color("link"), "cache read, batched delivery"),
         (lambda r: r[saved], style.BOTH_COLOR, "saved by batching what was queued")],
        lambda r: f"{r['wakeup_turns']}→{r['batched_turns']} turns", "wake-up cache reads",
        "cache-read tokens of wake-up turns", {"loc": "upper left"},
    )


@_styled
def repeat_reads_bars(cost_sessions: pl.DataFrame) -> Figure:
    """Per session with reads of background work: chars read, split into new and already held."""
    return _session_stacks(
        "Reads of background work: chars the parent already held", cost_sessions.filter(pl.col("read_chars") > 0),
        "no reads of background work", "read_chars",
        [(lambda r: r["read_chars"] - r["repeated_chars"], style.PAIR_COLOR, "new to the parent"),
         (lambda r: r["repeated_chars"], style.BOTH_COLOR, "already received (earlier read or notification)")],
        lambda r: f"{rounded(100 * r['repeat_fraction'], 0):.0f}%", "chars read", "UTF-16 chars of read results",
        {"loc": "upper left"},
    )


@_styled
def sources_bars(ab: pl.DataFrame | None) -> Figure:
    """Candidates found by one arm only (extraction_ab), stacked by where their words come from."""
    fig, ax = _figure("Candidates found under one strategy only, by source (sample 0)")
    table = shaping.sources_table(ab) if ab is not None else None
    if table is None or table.height == 0:
        return _empty(ax, "no complete session pairs")
    labels = [f"only {r['unique to']}\n({r['arms']})" for r in table.iter_rows(named=True)]
    layers = [(table[text].to_list(), color, text) for text, color in style.SOURCE_LOOKS.values()]
    _, bottom = _stack(ax, range(table.height), layers)
    ax.set_xticks(range(table.height), labels)
    ax.set(ylabel="candidates", ylim=(0, max(1, max(bottom)) * 1.25))
    ax.legend(loc="upper right", ncols=3)
    return fig


def _labels_apart(ax, points: list[tuple[float, float, str, bool]]) -> None:
    """Annotate each (x, y, text, bold) point to its right, moving a label down until it overlaps none
    placed before it (labels are placed top to bottom, in display pixels)."""
    fig = ax.figure
    placed: list[tuple[float, float, float]] = []
    for x, y, text, bold in sorted(points, key=lambda p: (-p[1], p[0])):
        px, py = ax.transData.transform((x, y))
        height = (text.count("\n") + 1) * 12 * fig.dpi / 72
        width = max(len(line) for line in text.split("\n")) * 6 * fig.dpi / 72
        top = py + 10
        while any(abs(px - qx) < max(width, w) and top > q_bottom and top - height < q_top for qx, q_top, w, q_bottom in placed):
            top -= 4
        placed.append((px, top, width, top - height))
        note = ax.annotate(text, (x, y), xytext=(12, (top - py) * 72 / fig.dpi), textcoords="offset points", fontsize=8,
                           va="top", fontweight="bold" if bold else "normal")
        note.set_in_layout(False)  # inside the limits set for them: the layout must not chase them from draw to draw


@_styled
def tradeoff(verdict: pl.DataFrame) -> Figure:
    """Parent-origin chars lost (x) against delegated content reaching the prompt (y), one marker per
    strategy sized by its LLM calls: Pareto front filled, dominated hollow, the chosen one ringed."""
    # constrained: the outside legend keeps its place from draw to draw
    fig, ax = _figure("The trade-off: parent content lost vs delegated content reaching the prompt", layout="constrained")
    value = {(r["criterion"], r["strategy"]): r for r in verdict.iter_rows(named=True) if r["criterion"] != "decision"}
    names = style.ordered_strategies({s for _, s in value})
    if not names:
        return _empty(ax, "no verdict rows")
    xs = {n: value["parent_chars_evicted", n]["value"] for n in names}
    ys = {n: value["subagent_unique_chars_in_prompt", n]["value"] for n in names}
    calls = {n: value["llm_calls", n]["value"] for n in names}
    size = {n: 40 + 360 * calls[n] / max(max(calls.values()), 1) for n in names}
    for n in names:
        row = value["prompt_chars", n]
        filled = row["pareto_front"] is not False  # null: no front without delegated work
        ax.scatter([xs[n]], [ys[n]], s=size[n], color=_color(n) if filled else "none", edgecolor=_color(n), linewidth=1.8,
                   label=_label(n), zorder=3 if filled else 4)  # a hollow marker stays visible on a filled one
        if row["chosen"]:
            ax.scatter([xs[n]], [ys[n]], s=size[n] * 3, facecolor="none", edgecolor="black", linewidth=1.5, zorder=2)
    span_x, span_y = max(max(xs.values()), 1), max(max(ys.values()), 1)
    ax.set(xlim=(-0.08 * span_x, span_x * 1.45), ylim=(-0.12 * span_y, span_y * 1.15))
    at: dict[tuple[float, float], list[str]] = {}
    for n in names:
        at.setdefault((xs[n], ys[n]), []).append(n)
    chosen = {n for n in names if value["prompt_chars", n]["chosen"]}
    _labels_apart(ax, [(x, y, ", ".join(g) + "".join(f"\n(chosen: {n})" for n in g if n in chosen), bool(chosen & set(g)))
                       for (x, y), g in at.items()])
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(MaxNLocator(integer=True))
        axis.set_major_formatter(FuncFormatter(_millions))
    ax.set_xlabel("parent-origin chars evicted, summed (verdict: parent_chars_evicted)")
    ax.set_ylabel("subagent-only chars reaching the prompt, summed\n(verdict: subagent_unique_chars_in_prompt)")
    ax.scatter([], [], s=40, facecolor="none", edgecolor=style.OTHER_COLOR, label="hollow: dominated (off the front)")
    ax.scatter([], [], s=120, facecolor="none", edgecolor="black", label="ring: chosen under the priorities")
    legend = fig.legend(*ax.get_legend_handles_labels(), loc="outside right upper", fontsize=8,
                        title="marker area ∝ LLM calls", title_fontsize=8)
    for handle in legend.legend_handles:
        handle.set_sizes([40])
    return fig


@_styled
def win_tie_loss(robustness: pl.DataFrame) -> Figure:
    """Per pair that matters (the chosen strategy vs each other front member and rival) and criterion where
    some session differs: sessions where the chosen one is better, tied or worse, as stacked horizontal bars."""
    rows = shaping.chosen_pairs(robustness, differing=True).to_dicts()
    fig, ax = _figure("Sessions where the chosen strategy is better, tied or worse",
                      (style.FIGSIZE[0], max(style.FIGSIZE[1], 1.4 + 0.24 * len(rows))), "constrained")
    if not rows:
        return _empty(ax, "no session differs between the chosen strategy and another")
    ax.set_title(f"Sessions where {rows[0]['strategy_a']}, the chosen strategy, is better, tied or worse\n"
                 "(criteria where every session ties are left out)")
    ys = list(range(len(rows)))
    outcomes = (("a_better", "chosen better", "#009E73"), ("ties", "tie", "#BBBBBB"),
                ("b_better", "other better", "#D55E00"))
    layers = [([r[key] for r in rows], color, name) for key, name, color in outcomes]
    _, left = _stack(ax, ys, layers, True, {"fontsize": 7}, edgecolor="white", linewidth=0.5)
    for k in range(1, len(rows)):
        if rows[k]["strategy_b"] != rows[k - 1]["strategy_b"]:
            ax.axhline(k - 0.5, color="black", linewidth=0.8)
    ax.set_yticks(ys, [f"vs {r['strategy_b']} · {r['criterion']}" for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set(xlim=(0, max(left)), xlabel="sessions")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=3, fontsize=8)
    return fig


FIGURES: dict[str, tuple[str, object]] = {
    "tradeoff": ("verdict", tradeoff),
    "win_tie_loss": ("robustness", win_tie_loss),
    "eviction_by_strategy": ("eviction", eviction_bars),
    "budget_sweep": ("budget_sweep", budget_sweep_curve),
    "overlap_distribution": ("duplicates", overlap_histogram),
    "llm_calls": ("llm_calls", llm_calls_bars),
    "run_cost": ("run_cost", run_cost_bars),
    "breakdown": ("breakdown", breakdown_bars),
    "background_stub_vs_run": ("background", stub_vs_run),
    "background_deliveries": ("background", deliveries_bars),
    "replay_re_extractions": ("replay", replay_bars),
    "tokens_by_origin": ("tokens", tokens_by_origin_bars),
    "naive_overcount": ("tokens", naive_overcount_bars),
    "wakeup_cost": ("cost_sessions", wakeup_cost_bars),
    "repeat_reads": ("cost_sessions", repeat_reads_bars),
}
"""Figure name -> (the schema table it is drawn from, the function); the report saves each as the notebooks show it."""
