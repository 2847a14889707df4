"""The `quirks` table: how often each reproduced akm quirk changed what akm sends."""

from __future__ import annotations

from measure.akm.records import Session
from measure.measurements.strategies import StrategyResult


def quirk_rows(session: Session, results: dict[str, StrategyResult]) -> list[dict]:
    rows = []
    for name, r in results.items():
        dollars = sum(c.prompt.dollar_patterns for c in r.calls)
        capture = sum(c.prompt.placeholder_capture for c in r.calls)
        lone = sum(c.prompt.lone_surrogate for c in r.calls)
        for quirk, count in (("dollar_pattern", dollars), ("placeholder_capture", capture), ("lone_surrogate", lone)):
            if count:
                rows.append({"strategy": name, "quirk": quirk, "count": count})
    journals = [t for t in session.subagents if t.path.endswith("/journal.jsonl")]
    for quirk, count in (("ts_tie_across_files", ts_ties_across_files(session)), ("journal_folded", len(journals)),
                         ("journal_events", sum(len(t.events) for t in journals))):
        if count:
            rows.append({"strategy": "*", "quirk": quirk, "count": count})
    return rows


def ts_ties_across_files(session: Session) -> int:
    """Adjacent folded events with equal ts from different files: their order is walk order."""
    f = session.folded
    return sum(1 for a, b in zip(f, f[1:]) if a.ts == b.ts and a.file != b.file)
