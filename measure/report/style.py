"""What pages and figures share: strategy order and names, colours, short ids, the plot style."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from measure.measurements.breakdown import version_key
from measure.measurements.strategies import STRATEGIES

STYLE = str(Path(__file__).with_name("report.mplstyle"))
"""Path of the project matplotlib style (fonts, dpi, svg.hashsalt...)."""

FIGSIZE = (9.0, 4.5)
"""Size of every single-panel figure, in inches."""

STRATEGY_ORDER: tuple[str, ...] = tuple(STRATEGIES)
"""Display order of the strategies everywhere (tables, legends, bars): the registry's."""

STRATEGY_LABELS: dict[str, str] = {
    "link": "link (C2)",
    "fold": "fold (C1)",
    "fold_dedupe_scoped": "fold + scoped dedupe",
    "fold_stub_raw": "fold + raw stub",
    "fold_dedupe_sync": "fold + sync dedupe (proposal)",
    "hybrid": "hybrid (C3)",
    "chunked": "chunked (C4)",
    "parent_first": "parent first (proposal)",
    "hybrid_undelivered": "hybrid + undelivered (proposal)",
}
"""Human names; C1..C4 are the candidate numbers of the #840 study, "(proposal)" a suite proposal
(strategies.ORIGIN), not akm's code."""

COLORS: dict[str, str] = {
    "link": "#56B4E9",
    "fold": "#E69F00",
    "fold_dedupe_scoped": "#CC79A7",
    "fold_stub_raw": "#D55E00",
    "fold_dedupe_sync": "#F0E442",
    "hybrid": "#009E73",
    "chunked": "#0072B2",
    "parent_first": "#332288",
    "hybrid_undelivered": "#999933",
}
"""One color per strategy (Okabe-Ito, then Tol's muted indigo and olive: colour-blind safe); the same everywhere."""

OTHER_COLOR = "#7F7F7F"
"""Color of anything without a color of its own (a strategy missing from COLORS, notes)."""

PAIR_COLOR = "#9CB3C9"
"""A part of a whole that is not the finding (pairs with at most one copy in the prompt, new reads)."""

BOTH_COLOR = "#C0392B"
"""The highlighted part (both copies in the prompt, what batching saves, repeated reads)."""

KIND_COLORS: dict[str, str] = {
    "agent": "#0072B2",
    "forked_skill": "#CC79A7",
    "bash": "#E69F00",
    "monitor": "#56B4E9",
    "workflow": "#009E73",
    "other": OTHER_COLOR,
}
"""One color per background task kind (background table)."""

DELIVERY_COLORS: dict[str, str] = {"turn": "#009E73", "removed": "#D55E00", "never": "#7F7F7F"}
"""How a background task's result reached the parent (a user turn, removed from the queue, not at
all), in display order, with its color."""

ORIGIN_LABELS: dict[str, str] = {
    "parent": "parent",
    "task_agent": "task agents",
    "workflow_agent": "workflow agents",
    "fork": "forks",
    "compaction_helper": "compaction",
    "side_question": "side questions",
    "other": "other subagents",
    "total": "total",
}
"""Display names of the tokens table's origins."""

ORIGIN_COLORS: dict[str, str] = {
    "parent": "#0072B2",
    "task_agent": "#E69F00",
    "workflow_agent": "#009E73",
    "fork": "#D55E00",
    "compaction_helper": "#CC79A7",
    "side_question": "#56B4E9",
    "other": OTHER_COLOR,
}
"""One color per token origin, in stacking order."""

SOURCE_LABELS: dict[str, str] = {
    "inline_ref": "restates an inline ref",
    "notification": "restates a notification",
    "subagent_only": "only in subagent events",
    "parent": "in parent events",
    "none": "in no source",
}
"""Where a candidate found under one strategy only comes from (measure.extract.compare.SOURCES, in its order)."""

SOURCE_COLORS = ("#56B4E9", "#CC79A7", "#E69F00", "#009E73", "#7F7F7F")
"""One color per source of SOURCE_LABELS, in its order."""

BREAKDOWN_DIMENSIONS: dict[str, str] = {"project": "project", "cc_version": "Claude Code version", "month": "month"}
"""The breakdown table's dimensions in display order, with their headings."""

UNKNOWN = "unknown"
"""The value of a version (or other group) that sessions do not carry."""


def label(strategy: str) -> str:
    """The human name of a strategy (its id when it has none)."""
    return STRATEGY_LABELS.get(strategy, strategy)


def color(strategy: str) -> str:
    return COLORS.get(strategy, OTHER_COLOR)


def ordered_strategies(names) -> list[str]:
    """Return the distinct strategy names in display order (unknown ones last, sorted)."""
    present = set(names)
    known = [s for s in STRATEGY_ORDER if s in present]
    return known + sorted(present - set(STRATEGY_ORDER))


def strategy_rank(names) -> pl.Expr:
    """The display place of each row's `strategy` among `names`, to sort rows by."""
    order = {s: i for i, s in enumerate(ordered_strategies(names))}
    return pl.col("strategy").replace_strict(order, return_dtype=pl.Int64)


def task_group_key(kind: str, version: str) -> tuple:
    """Display order of background tasks grouped by kind and Claude Code version (unknown first)."""
    return kind, version != UNKNOWN, version_key(version)


def short_ids(ids) -> dict[str, str]:
    """Map each session id to its shortest prefix (at least 8 chars) that no other id starts with.

    UUIDs come out as their first 8 hex digits; ids sharing a long prefix keep what tells them apart.
    Linear after one sort: the other id sharing the longest prefix with an id is a sorted neighbour.
    """
    ids = sorted(set(ids))
    shared = [-1] * len(ids)  # longest common prefix with any other id (-1: there is none)
    for k in range(1, len(ids)):
        a, b = ids[k - 1], ids[k]
        n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        shared[k - 1] = max(shared[k - 1], n)
        shared[k] = max(shared[k], n)
    return {i: i[: max(8, shared[k] + 1)] for k, i in enumerate(ids)}
