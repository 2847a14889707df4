"""Per-session measurements as table rows: eviction, duplicates, calls, subagents, quirks."""

from __future__ import annotations

import math
import re
from collections import Counter

from measure.jscompat import to_iso
from measure.pairs import stem
from measure.records import Session, TranscriptFile
from measure.strategies import STRATEGIES, SessionContext, StrategyResult, stub_text

#: Strategies whose parent-origin content is compared with the parent read alone.
EVICTION_STRATEGIES = ("fold", "fold_dedupe_scoped", "fold_stub_raw", "hybrid")


def pct(part: int, whole: int) -> float:
    """Percent of max(1, whole), one decimal, rounded half away from zero as JS toFixed does."""
    v = part * 100 / max(1, whole)
    return math.copysign(math.floor(abs(v) * 10 + 0.5) / 10, v)


def session_rows(ctx: SessionContext, results: dict[str, StrategyResult], content_hash: str) -> list[dict]:
    s = ctx.session
    rows = []
    for name, r in results.items():
        pe, pc, se, sc = r.kept_by_origin()
        rows.append(
            {
                "strategy": name,
                "budget": r.budget,
                "llm_calls": len(r.calls),
                "prompt_chars": r.prompt_chars,
                "prompt_sha256": r.prompt_sha256,
                "kept_events": pe + se,
                "kept_chars": pc + sc,
                "parent_kept_events": pe,
                "parent_kept_chars": pc,
                "subagent_kept_events": se,
                "subagent_kept_chars": sc,
                "truncated": sum(c.kept.stats.truncatedCount for c in r.calls),
                "budget_dropped": sum(c.kept.stats.budgetDroppedCount for c in r.calls),
                "stubbed": r.stubbed,
                "inline_refs": r.inline_refs,
                "content_hash": content_hash,
                "raw_events": r.raw_events,
                "raw_chars": r.raw_chars,
                "subagent_files": len(s.subagents),
            }
        )
    return rows


def eviction_rows(results: dict[str, StrategyResult]) -> list[dict]:
    link = results["link"]
    ape, apc, _, _ = link.kept_by_origin()
    rows = []
    for name in EVICTION_STRATEGIES:
        if name not in results:
            continue
        r = results[name]
        pe, pc, _, _ = r.kept_by_origin()
        budget_evicted = apc - pc - r.stub_saved_chars
        rows.append(
            {
                "strategy": name,
                "budget": link.budget,
                "alone_parent_kept_chars": apc,
                "parent_kept_chars": pc,
                "evicted_chars": apc - pc,
                "evicted_chars_pct": pct(apc - pc, apc),
                "stub_saved_chars": r.stub_saved_chars,
                "budget_evicted_chars": budget_evicted,
                "budget_evicted_pct": pct(budget_evicted, apc),
                "alone_parent_kept_events": ape,
                "parent_kept_events": pe,
                "evicted_events": ape - pe,
                "evicted_events_pct": pct(ape - pe, ape),
            }
        )
    return rows


def duplicate_rows(ctx: SessionContext, results: dict[str, StrategyResult]) -> list[dict]:
    fold = results.get("fold")
    kept = {(e.ts, e.file) for e in fold.calls[0].kept.events} if fold else set()
    rows = []
    for p in ctx.pairs:
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
    aid = agent_id[len("agent-") :] if agent_id.startswith("agent-") else agent_id
    for a, _, tool_use in session.parent.launches:
        if a == aid and tool_use:
            return tool_use
    return None


def llm_rows(results: dict[str, StrategyResult]) -> list[dict]:
    rows = []
    for name, r in results.items():
        rows.append(
            {
                "strategy": name,
                "budget": r.budget,
                "llm_calls": len(r.calls),
                "multiplier": float(len(r.calls)),
                "parent_windows": r.parent_windows if name == "chunked" else 0,
                "subagent_chunks": r.subagent_chunks if name == "chunked" else 0,
                "prompt_chars_total": r.prompt_chars,
                "parent_chars_in_prompts": r.kept_by_origin()[1],
            }
        )
    return rows


def sweep_rows(by_budget: dict[int, dict[str, StrategyResult]]) -> list[dict]:
    rows = []
    for budget, results in sorted(by_budget.items()):
        if "link" not in results:
            continue  # the baseline could not be built at this budget (an errors row says why)
        _, apc, _, _ = results["link"].kept_by_origin()
        for name, r in results.items():
            pe, pc, se, sc = r.kept_by_origin()
            rows.append(
                {
                    "strategy": name,
                    "budget": budget,
                    "alone_parent_kept_chars": apc,
                    "parent_kept_chars": pc,
                    "evicted_chars": apc - pc,
                    "evicted_chars_pct": pct(apc - pc, apc),
                    "kept_chars": pc + sc,
                    "prompt_chars": r.prompt_chars,
                    "llm_calls": len(r.calls),
                }
            )
    return rows


_COMPACT = re.compile(r"^agent-acompact")
_TASK_ID = re.compile(r"<task-id>([^<]*)</task-id>")


def subagent_kind(tf: TranscriptFile, session: Session) -> str:
    name = tf.path.rsplit("/", 1)[-1]
    if name == "journal.jsonl":
        return "workflow_journal"
    if _COMPACT.match(name):
        return "compaction_helper"
    inside = tf.path[len(session.ref.path) - len(".jsonl") + len("/subagents/") :]
    if inside.startswith("workflows/") or (tf.sidecar and tf.sidecar.agent_type == "workflow-subagent"):
        return "workflow_agent"
    if name.startswith("agent-"):
        return "task_agent"
    return "other"


def subagent_rows(session: Session) -> list[dict]:
    launches = {a: mode for a, mode, _ in session.parent.launches}
    rows = []
    notified = Counter(tid for e in session.parent.events if "<task-id>" in e.text for tid in _TASK_ID.findall(e.text))
    for tf in session.subagents:
        agent_id = stem(tf.path)
        bare = agent_id[len("agent-") :] if agent_id.startswith("agent-") else agent_id
        sc = tf.sidecar
        ts = [e.ts for e in tf.events]
        mode = launches.get(bare)
        rows.append(
            {
                "subagent_path": tf.path,
                "agent_id": agent_id,
                "kind": subagent_kind(tf, session),
                "agent_type": sc.agent_type if sc else None,
                "description": sc.description if sc else None,
                "sidecar": sc.state if sc else "missing",
                "events": len(tf.events),
                "chars": sum(e.chars for e in tf.events),
                "first_ts": _iso(min(ts)) if ts else None,
                "last_ts": _iso(max(ts)) if ts else None,
                "launch": mode or "unknown",
                "notifications": notified[bare],
            }
        )
    return rows


def _iso(ms: float) -> str | None:
    try:
        return to_iso(ms)
    except ValueError:
        return None


def quirk_rows(session: Session, results: dict[str, StrategyResult]) -> list[dict]:
    rows = []
    for name, r in results.items():
        dollars = sum(c.prompt.dollar_patterns for c in r.calls)
        capture = sum(c.prompt.placeholder_capture for c in r.calls)
        lone = sum(c.prompt.lone_surrogate for c in r.calls)
        for quirk, count in (("dollar_pattern", dollars), ("placeholder_capture", capture), ("lone_surrogate", lone)):
            if count:
                rows.append({"strategy": name, "quirk": quirk, "count": count})
    ties = ts_ties_across_files(session)
    if ties:
        rows.append({"strategy": "*", "quirk": "ts_tie_across_files", "count": ties})
    journals = sum(1 for t in session.subagents if t.path.endswith("/journal.jsonl"))
    if journals:
        rows.append({"strategy": "*", "quirk": "journal_folded", "count": journals})
    journal_events = sum(len(t.events) for t in session.subagents if t.path.endswith("/journal.jsonl"))
    if journal_events:
        rows.append({"strategy": "*", "quirk": "journal_events", "count": journal_events})
    return rows


def ts_ties_across_files(session: Session) -> int:
    """Adjacent folded events with equal ts from different files: their order is walk order."""
    f = session.folded
    return sum(1 for a, b in zip(f, f[1:]) if a.ts == b.ts and a.file != b.file)


def run_cost_rows(llm: list[dict], order: list[str], cap: int) -> list[dict]:
    """akm processes `cap` sessions per run, newest-ended first: calls per run by strategy."""
    by: dict[str, dict[str, int]] = {}
    for row in llm:
        by.setdefault(row["strategy"], {})[row["session_path"]] = row["llm_calls"]
    rows = []
    for name in sorted(by, key=lambda n: list(STRATEGIES).index(n) if n in STRATEGIES else 99):
        calls = [by[name][p] for p in order if p in by[name]]
        batches = [calls[i : i + cap] for i in range(0, len(calls), cap)] or [[]]
        per_run = [sum(b) for b in batches]
        rows.append(
            {
                "strategy": name,
                "session_cap": cap,
                "sessions": len(calls),
                "runs": len(batches) if calls else 0,
                "llm_calls": sum(calls),
                "calls_per_run_mean": round(sum(per_run) / len(per_run), 2),
                "calls_per_run_max": max(per_run),
                "cap_multiplier": round(max(per_run) / cap, 2),
            }
        )
    return rows
