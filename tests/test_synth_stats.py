"""corpus_stats: the generated mix stays within a band around fixtures/real, and the check can fail."""

from __future__ import annotations

import orjson

from measure import synth
from measure.akm.jscompat import to_iso
from measure.synth.stats import _layout_of

pytest_plugins = ["synth_fixtures"]


def realism_failures(gen: dict, real: dict) -> list[str]:
    """Where a corpus's statistics leave the tolerated band around the real corpus's."""
    failures = []
    for kind in ("progress", "assistant", "user"):
        g, r = gen["record_type_share"].get(kind, 0.0), real["record_type_share"][kind]
        if not r / 1.6 <= g <= r * 1.6:
            failures.append(f"record type {kind}: {g:.3f} vs real {r:.3f} (factor 1.6)")
    for kind, factor in (("tool_use", 1.5), ("tool_result", 1.5), ("text", 1.5), ("thinking", 2.5), ("string", 3.0)):
        g, r = gen["block_share"].get(kind, 0.0), real["block_share"][kind]
        if not r / factor <= g <= r * factor:
            failures.append(f"block {kind}: {g:.3f} vs real {r:.3f} (factor {factor})")
    for q in ("p25", "p50", "p75", "p90"):
        g, r = gen["event_len_quantiles"][q], real["event_len_quantiles"][q]
        if not r / 2 <= g <= r * 2:
            failures.append(f"event length {q}: {g} vs real {r} (factor 2)")
    return failures


def test_realism_record_block_and_length_mix(mixed_stats, real_stats):
    assert realism_failures(mixed_stats, real_stats) == []


def test_realism_check_rejects_an_unrealistic_corpus(tmp_path, real_stats):
    # Negative control: uniform one-line prompts and answers, no tools, no progress.
    root = tmp_path / "flat" / "proj"
    root.mkdir(parents=True)
    rows = []
    for i in range(200):
        kind = "user" if i % 2 == 0 else "assistant"
        content = "please fix the failing test in module x now" if kind == "user" else [{"type": "text", "text": "Done, the test passes now and CI is green."}]
        rows.append(orjson.dumps({"type": kind, "message": {"role": kind, "content": content}, "timestamp": to_iso(1_770_000_000_000 + i)}))
    (root / "s.jsonl").write_bytes(b"\n".join(rows) + b"\n")
    failures = realism_failures(synth.corpus_stats(tmp_path / "flat"), real_stats)
    assert len(failures) >= 8


def test_layout_of_names_where_claude_code_puts_a_file():
    cases = {
        ("p", "s.jsonl"): "session",
        ("p", "agent-a1b2c3.jsonl"): "sibling_agent",
        ("p", "s", "subagents", "agent-a1.jsonl"): "subagent",
        ("p", "s", "subagents", "agent-acompact-1f2e3d.jsonl"): "subagent_compaction",
        ("p", "s", "subagents", "workflows", "wf_1", "agent-a2.jsonl"): "workflow_agent",
        ("p", "s", "subagents", "workflows", "wf_1", "journal.jsonl"): "workflow_journal",
        ("p", "s", "tool-results", "x.jsonl"): "other",
    }
    assert {rel: _layout_of(rel) for rel in cases} == cases
