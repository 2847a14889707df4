"""Subagent files: sidecars with only the keys real roots hold, workflow journals in their real shape."""

from __future__ import annotations

import orjson
from synth_corpus import lines_of

pytest_plugins = ["synth_fixtures"]


def test_sidecars_use_only_guide_keys(mixed_root):
    allowed = {"agentType", "description", "toolUseId", "spawnDepth", "model", "parentAgentId", "workflowPhase"}
    for path in mixed_root.rglob("*.meta.json"):
        try:
            meta = orjson.loads(path.read_bytes())
        except orjson.JSONDecodeError:
            continue
        if meta is None:
            continue
        assert set(meta) <= allowed and "agentType" in meta
        if "workflows" in path.parts:
            assert meta["agentType"] == "workflow-subagent" and "toolUseId" not in meta
        elif "toolUseId" in meta:
            assert meta["toolUseId"].startswith("toolu_") and meta["spawnDepth"] in (1, 2)
    for journal in mixed_root.rglob("journal.jsonl"):
        for e in lines_of(journal):
            assert e["type"] in ("started", "result") and list(e)[:3] == ["type", "key", "agentId"]
