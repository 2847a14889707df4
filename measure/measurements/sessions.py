"""The `sessions` table: what one extraction of a session would send, per strategy."""

from __future__ import annotations

from measure.measurements.delegation import TOTALS
from measure.measurements.strategies import SessionContext, StrategyResult

_NO_DELEGATION = dict.fromkeys(TOTALS, 0)


def is_legacy_agent(path: str) -> bool:
    """A sibling `agent-*.jsonl` (the layout before `<session>/subagents/`): akm lists it as a session."""
    return path.replace("\\", "/").rsplit("/", 1)[-1].startswith("agent-")


def session_rows(ctx: SessionContext, results: dict[str, StrategyResult], content_hash: str,
                 delegation: dict[str, dict]) -> list[dict]:
    """`delegation`: per strategy, the delegated-work totals (`delegation.delegation_totals`)."""
    s = ctx.session
    rows = []
    for name, r in results.items():
        pe, pc, se, sc = r.kept_by_origin
        rows.append({
            "strategy": name, "budget": r.budget, "llm_calls": len(r.calls),
            "prompt_chars": r.prompt_chars, "prompt_sha256": r.prompt_sha256,
            "kept_events": pe + se, "kept_chars": pc + sc, "parent_kept_events": pe, "parent_kept_chars": pc,
            "subagent_kept_events": se, "subagent_kept_chars": sc,
            "truncated": sum(c.kept.stats.truncatedCount for c in r.calls),
            "budget_dropped": sum(c.kept.stats.budgetDroppedCount for c in r.calls),
            "stubbed": r.stubbed, "inline_refs": r.inline_refs, "content_hash": content_hash,
            "raw_events": r.raw_events, "raw_chars": r.raw_chars, "subagent_files": len(s.subagents),
            "legacy_agent": is_legacy_agent(s.ref.path), "skipped": r.skipped or None,
            **delegation.get(name, _NO_DELEGATION),
        })
    return rows
