"""The `budget_sweep` table: eviction, kept and prompt chars at every budget of the sweep."""

from __future__ import annotations

from measure.akm.prefilter import DEFAULT_MAX_TOTAL_CHARS
from measure.measurements.eviction import evicted
from measure.measurements.strategies import StrategyResult

DEFAULT_BUDGETS: tuple[int, ...] = tuple(DEFAULT_MAX_TOTAL_CHARS * k // 4 for k in (1, 2, 4, 8, 16, 32))
"""The budgets `measure report` sweeps unless told otherwise: a quarter to eight times akm's default."""


def sweep_rows(by_budget: dict[int, dict[str, StrategyResult]]) -> list[dict]:
    rows = []
    for budget, results in sorted(by_budget.items()):
        if "link" not in results:
            continue  # the baseline could not be built at this budget (an errors row says why)
        for name, r in results.items():
            _, pc, _, sc = r.kept_by_origin
            rows.append({"strategy": name, "budget": budget, **evicted(results["link"], r), "kept_chars": pc + sc,
                         "prompt_chars": r.prompt_chars, "llm_calls": len(r.calls)})
    return rows
