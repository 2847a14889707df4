"""The `duplicates` table: notification ↔ subagent pairs and the copies that reach the prompt."""

from __future__ import annotations

from measure.akm.records import Session
from measure.measurements.strategies import SessionContext, StrategyResult, stub_text


def async_launch_ids(timelines: dict) -> frozenset[str]:
    """Agent ids whose tool result in the parent (the first timeline, read order) is an async
    launch acknowledgement (`toolUseResult.status == "async_launched"`, format §8.3)."""
    parent = next(iter(timelines.values()), None)
    if parent is None:
        return frozenset()
    return frozenset(a.task_id for a in parent.acks if a.kind == "async_launched" and a.task_id)


def duplicate_rows(
    ctx: SessionContext, results: dict[str, StrategyResult], launch_acks: frozenset[str] = frozenset()
) -> list[dict]:
    """One row per pair whose parent side copies the subagent's result.

    A pair joined by `agentId:` in a tool result whose agent is in `launch_acks` is left out:
    "Async agent launched successfully…" acknowledges a launch and holds no copy of the result
    (the delegation table classifies such deliveries).
    """
    fold = results.get("fold")
    kept = {(e.ts, e.file) for e in fold.calls[0].kept.events} if fold and fold.calls else set()  # gated: no prompt
    rows = []
    for p in ctx.pairs:
        if p.pairing == "agent_id_tool_result" and p.agent_id.removeprefix("agent-") in launch_acks:
            continue
        n_in = (p.notification.ts, p.notification.file) in kept
        f_in = (p.final.ts, p.final.file) in kept
        rows.append(
            {
                "agent_id": p.agent_id,
                "subagent_path": p.subagent_path,
                "tool_use_id": p.tool_use_id or _launch_tool_use(ctx.session, p.agent_id),
                "pairing": p.pairing,
                "description": p.description,
                "overlap": p.overlap,
                "notification_chars": p.notification.chars,
                "final_chars": p.final.chars,
                "notification_in_prompt": n_in,
                "final_in_prompt": f_in,
                "both_in_prompt": n_in and f_in,
                "stub_saved_chars": p.notification.chars - len(stub_text(p)),
            }
        )
    return rows


def _launch_tool_use(session: Session, agent_id: str) -> str | None:
    aid = agent_id.removeprefix("agent-")
    for a, _, tool_use in session.parent.launches:
        if a == aid and tool_use:
            return tool_use
    return None
