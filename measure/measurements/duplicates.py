"""The `duplicates` table: parent copy <-> subagent result pairs and the copies that reach the prompt."""

from __future__ import annotations

from measure.measurements.strategies import SessionContext, StrategyResult, stub_text


def duplicate_rows(ctx: SessionContext, results: dict[str, StrategyResult]) -> list[dict]:
    """One row per pair whose parent side copies the subagent's result (`SessionContext.pairs`)."""
    fold = results.get("fold")
    kept = fold.calls[0].kept_keys() if fold and fold.calls else set()  # gated: no prompt
    rows = []
    for p in ctx.pairs:
        n_in = (p.notification.ts, p.notification.file) in kept
        f_in = (p.final.ts, p.final.file) in kept
        sub = ctx.subagents.get(p.subagent_path)
        rows.append({
            "agent_id": p.agent_id, "subagent_path": p.subagent_path,
            "tool_use_id": p.tool_use_id or (sub.tool_use_id if sub else None),
            "pairing": p.pairing, "description": p.description, "overlap": p.overlap,
            "notification_chars": p.notification.chars, "final_chars": p.final.chars,
            "notification_in_prompt": n_in, "final_in_prompt": f_in, "both_in_prompt": n_in and f_in,
            "stub_would_save_chars": p.notification.chars - len(stub_text(p)),
        })
    return rows
