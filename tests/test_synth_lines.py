"""Records on disk: each era's key order as in real files, compact JSON as Claude Code writes it."""

from __future__ import annotations

import orjson
from synth_corpus import REAL, jsonl_files, lines_of

pytest_plugins = ["synth_fixtures"]


def test_key_order_matches_real_files(mixed_root):
    """Classic-era lines use key orders seen in the real 2.1.3x files (modulo the optional slug)."""
    def orders(paths, want_version):
        out = {}
        for p in paths:
            for e in lines_of(p):
                if not str(e.get("version", "")).startswith(want_version):
                    continue
                t = e["type"]
                sub = e.get("subtype") or (e.get("data") or {}).get("type") if t in ("system", "progress") else None
                if t == "user":
                    sub = "tool_result" if "toolUseResult" in e else ("meta" if e.get("isMeta") else "prompt")
                out.setdefault((t, sub), set()).add(tuple(k for k in e if k != "slug"))
        return out
    real = orders(jsonl_files(REAL / "spotter") + jsonl_files(REAL / "entire"), "2.1.")
    gen = orders([p for p in mixed_root.glob("*/*.jsonl") if p.is_file()], "2.1.3")
    for key in (("assistant", None), ("user", "prompt"), ("user", "tool_result"), ("progress", "hook_progress"),
                ("progress", "agent_progress"), ("system", "turn_duration"), ("system", "stop_hook_summary")):
        assert key in gen, key
        assert gen[key] <= real[key], (key, gen[key] - real[key])
    # 2.1.2xx: every main-thread and subagent shape in the claudemux lines (2.1.211-2.1.283) is produced
    claudemux = orders(jsonl_files(REAL / "claudemux"), "2.1.2")
    modern = orders(jsonl_files(mixed_root), "2.1.2")
    for key in (("assistant", None), ("user", "tool_result")):
        plain = {t for t in claudemux[key] if "advisorModel" not in t and "apiBlockIndex" not in t}
        assert plain <= modern[key], (key, plain - modern[key])


def test_compact_json_like_claude_code(mixed_root):
    path = max((p for p in mixed_root.glob("*/*.jsonl") if p.is_file()), key=lambda p: p.stat().st_size)
    first = path.read_bytes().split(b"\n", 1)[0]
    assert b'": ' not in first[:200] and b'", "' not in first[:200]
    assert orjson.dumps(orjson.loads(first)) == first
