"""The `quirks` table: how often each reproduced akm quirk changed what akm sends."""

from __future__ import annotations

from measure.akm.records import Session
from measure.measurements.strategies import StrategyResult


def quirk_rows(session: Session, results: dict[str, StrategyResult]) -> list[dict]:
    rows = []
    for name, r in results.items():
        for quirk, field in (("dollar_pattern", "dollar_patterns"), ("placeholder_capture", "placeholder_capture"),
                             ("lone_surrogate", "lone_surrogate")):
            if count := sum(getattr(c.prompt, field) for c in r.calls):
                rows.append({"strategy": name, "quirk": quirk, "count": count})
    journals = [t for t in session.subagents if t.path.endswith("/journal.jsonl")]
    f = session.folded  # adjacent folded events with equal ts from different files: their order is walk order
    ties = sum(1 for a, b in zip(f, f[1:]) if a.ts == b.ts and a.file != b.file)
    for quirk, count in (("ts_tie_across_files", ties), ("journal_folded", len(journals)),
                         ("journal_events", sum(len(t.events) for t in journals))):
        if count:
            rows.append({"strategy": "*", "quirk": quirk, "count": count})
    return rows
