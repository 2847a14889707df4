"""The `llm_calls` and `run_cost` tables: calls per session and per akm run."""

from __future__ import annotations

from measure.measurements.strategies import StrategyResult, registry_order
from measure.numbers import rounded


def llm_rows(results: dict[str, StrategyResult]) -> list[dict]:
    return [
        {
            "strategy": name, "budget": r.budget, "llm_calls": len(r.calls), "multiplier": float(len(r.calls)),
            "parent_windows": r.parent_windows,  # chunked's; 0 for every other strategy
            "subagent_chunks": r.subagent_chunks, "prompt_chars_total": r.prompt_chars,
            "parent_chars_in_prompts": r.kept_by_origin[1],
        }
        for name, r in results.items()
    ]


def run_cost_rows(llm: list[dict], order: list[str], cap: int) -> list[dict]:
    """akm processes `cap` sessions per run, newest-ended first: calls per run by strategy."""
    by: dict[str, dict[str, int]] = {}
    for row in llm:
        by.setdefault(row["strategy"], {})[row["session_path"]] = row["llm_calls"]
    rows = []
    for name in sorted(by, key=registry_order):
        calls = [by[name][p] for p in order if p in by[name]]
        batches = [calls[i : i + cap] for i in range(0, len(calls), cap)] or [[]]
        per_run = [sum(b) for b in batches]
        rows.append({
            "strategy": name, "session_cap": cap, "sessions": len(calls), "runs": len(batches) if calls else 0,
            "llm_calls": sum(calls), "calls_per_run_mean": rounded(sum(per_run) / len(per_run), 2),
            "calls_per_run_max": max(per_run), "cap_multiplier": rounded(max(per_run) / cap, 2),
        })
    return rows
