"""What pages and figures share: strategy order and names, colours, short ids, the plot style."""

from __future__ import annotations

import os
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

STRATEGY_LOOKS: dict[str, tuple[str, str]] = {
    "link": ("link (C2)", "#56B4E9"),
    "fold": ("fold (C1)", "#E69F00"),
    "fold_dedupe_scoped": ("fold + scoped dedupe", "#CC79A7"),
    "fold_stub_raw": ("fold + raw stub", "#D55E00"),
    "fold_dedupe_sync": ("fold + sync dedupe (proposal)", "#F0E442"),
    "hybrid": ("hybrid (C3)", "#009E73"),
    "chunked": ("chunked (C4)", "#0072B2"),
    "parent_first": ("parent first (proposal)", "#332288"),
    "hybrid_undelivered": ("hybrid + undelivered (proposal)", "#999933"),
}
"""Human name and color of each strategy. C1..C4 are the candidate numbers of the #840 study, "(proposal)" a
suite proposal (strategies.ORIGIN), not akm's code; the colors (Okabe-Ito, then Tol's muted indigo and olive:
colour-blind safe) are the same everywhere."""

STRATEGY_LABELS: dict[str, str] = {s: name for s, (name, _) in STRATEGY_LOOKS.items()}
COLORS: dict[str, str] = {s: color for s, (_, color) in STRATEGY_LOOKS.items()}

OTHER_COLOR = "#7F7F7F"
"""Color of anything without a color of its own (a strategy missing from COLORS, notes)."""

PAIR_COLOR = "#9CB3C9"
"""A part of a whole that is not the finding (pairs with at most one copy in the prompt, new reads)."""

BOTH_COLOR = "#C0392B"
"""The highlighted part (both copies in the prompt, what batching saves, repeated reads)."""

KIND_COLORS: dict[str, str] = {"agent": "#0072B2", "forked_skill": "#CC79A7", "bash": "#E69F00", "monitor": "#56B4E9",
                               "workflow": "#009E73", "other": OTHER_COLOR}
"""One color per background task kind (background table)."""

DELIVERY_COLORS: dict[str, str] = {"turn": "#009E73", "removed": "#D55E00", "never": OTHER_COLOR}
"""How a background task's result reached the parent (a user turn, removed from the queue, not at
all), in display order, with its color."""

ORIGIN_LOOKS: dict[str, tuple[str, str | None]] = {
    "parent": ("parent", "#0072B2"),
    "task_agent": ("task agents", "#E69F00"),
    "workflow_agent": ("workflow agents", "#009E73"),
    "fork": ("forks", "#D55E00"),
    "compaction_helper": ("compaction", "#CC79A7"),
    "side_question": ("side questions", "#56B4E9"),
    "other": ("other subagents", OTHER_COLOR),
    "total": ("total", None),
}
"""Display name and color of each origin of the tokens table, in stacking order (the total is not stacked)."""

ORIGIN_LABELS: dict[str, str] = {o: name for o, (name, _) in ORIGIN_LOOKS.items()}
ORIGIN_COLORS: dict[str, str] = {o: color for o, (_, color) in ORIGIN_LOOKS.items() if color}

SOURCE_LOOKS: dict[str, tuple[str, str]] = {
    "inline_ref": ("restates an inline ref", "#56B4E9"),
    "notification": ("restates a notification", "#CC79A7"),
    "subagent_only": ("only in subagent events", "#E69F00"),
    "parent": ("in parent events", "#009E73"),
    "none": ("in no source", OTHER_COLOR),
}
"""Where a candidate found under one strategy only comes from (measure.extract.compare.SOURCES, in its order),
with its label and color."""

SOURCE_LABELS: dict[str, str] = {s: text for s, (text, _) in SOURCE_LOOKS.items()}

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
    """Map each session id to its shortest prefix (at least 8 chars) that no other id starts with: UUIDs come out
    as their first 8 hex digits; ids sharing a long prefix keep what tells them apart. Linear after one sort: the
    other id sharing the longest prefix with an id is a sorted neighbour."""
    ids = sorted(set(ids))
    shared = [-1] * len(ids)  # longest common prefix with any other id (-1: there is none)
    for k in range(1, len(ids)):
        a, b = ids[k - 1], ids[k]
        n = len(os.path.commonprefix((a, b)))
        shared[k - 1] = max(shared[k - 1], n)
        shared[k] = max(shared[k], n)
    return {i: i[: max(8, shared[k] + 1)] for k, i in enumerate(ids)}
