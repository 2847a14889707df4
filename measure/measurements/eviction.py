"""The `eviction` table: parent-origin content each strategy keeps and evicts at the budget."""

from __future__ import annotations

from measure.measurements.strategies import StrategyResult
from measure.numbers import percent as pct

#: Strategies whose parent-origin content is compared with the parent read alone.
EVICTION_STRATEGIES = ("fold", "fold_dedupe_scoped", "fold_stub_raw", "fold_dedupe_sync", "hybrid", "parent_first", "hybrid_undelivered")


def evicted(link: StrategyResult, r: StrategyResult) -> dict:
    """The parent-origin chars `r` keeps against link's (the parent read alone), and what it evicts."""
    apc, pc = link.kept_by_origin[1], r.kept_by_origin[1]
    budget_evicted = apc - pc - r.stub_saved_chars  # stub savings are not eviction
    return {"alone_parent_kept_chars": apc, "parent_kept_chars": pc, "evicted_chars": apc - pc,
            "evicted_chars_pct": pct(apc - pc, apc), "stub_saved_chars": r.stub_saved_chars,
            "budget_evicted_chars": budget_evicted, "budget_evicted_pct": pct(budget_evicted, apc)}


def eviction_rows(results: dict[str, StrategyResult]) -> list[dict]:
    link = results["link"]
    ape = link.kept_by_origin[0]
    rows = []
    for name in EVICTION_STRATEGIES:
        if name in results:
            r = results[name]
            pe = r.kept_by_origin[0]
            rows.append({"strategy": name, "budget": link.budget, **evicted(link, r), "alone_parent_kept_events": ape,
                         "parent_kept_events": pe, "evicted_events": ape - pe, "evicted_events_pct": pct(ape - pe, ape)})
    return rows
