"""Corpus statistics (record/block mix, event lengths, layouts) and their markdown table."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import orjson

from measure.numbers import rounded
from measure.synth.lines import flat_text

QUANTILES = (0.25, 0.5, 0.75, 0.9, 0.99)


def _layout_of(rel: tuple[str, ...]) -> str:
    """Classify a .jsonl path (relative to the root) by where Claude Code would have put it."""
    name = rel[-1]
    if "subagents" in rel[1:-1]:
        if name == "journal.jsonl":
            return "workflow_journal"
        if "workflows" in rel[rel.index("subagents") + 1:-1]:
            return "workflow_agent"
        return "subagent_compaction" if name.startswith("agent-acompact-") else "subagent"
    if len(rel) == 2:
        return "sibling_agent" if name.startswith("agent-") else "session"
    return "other"


def _by_count(counts: Counter, total: int | None = None) -> dict:
    """Counts (or their share of `total`) from the most frequent kind down, ties by name."""
    keys = sorted(counts, key=lambda k: (-counts[k], k))
    return {k: counts[k] for k in keys} if total is None else {k: rounded(counts[k] / (total or 1), 4) for k in keys}


def corpus_stats(root: Path) -> dict:
    """Record-type mix, content-block mix, event text lengths and layout counts of a root."""
    root = Path(root)
    types, blocks, layouts, n = Counter(), Counter(), Counter(), Counter()
    lengths: list[int] = []
    sidecars = dict.fromkeys(("meta_json", "meta_unparseable", "meta_with_toolUseId"), 0)
    notifications = dict.fromkeys(("task-notification user", "agent-notification enqueue", "task-notification enqueue"), 0)
    sessions, session_dirs = set(), set()
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).parts
            if name.endswith(".meta.json"):
                try:
                    meta = orjson.loads(path.read_bytes())
                except orjson.JSONDecodeError:
                    meta = None
                sidecars["meta_json"] += 1
                sidecars["meta_unparseable"] += not isinstance(meta, dict)
                sidecars["meta_with_toolUseId"] += isinstance(meta, dict) and isinstance(meta.get("toolUseId"), str)
                continue
            if not name.endswith(".jsonl"):
                continue
            layout = _layout_of(rel)
            layouts[layout] += 1
            if layout == "session":
                sessions.add((rel[0], name[:-6]))
            if "subagents" in rel:
                session_dirs.add((rel[0], rel[rel.index("subagents") - 1]))
            data = path.read_bytes()
            n["files"] += 1
            n["bytes"] += len(data)
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                n["invalid_utf8_files"] += 1
            if layout == "workflow_journal":
                continue  # a run log, not a transcript
            for raw in filter(None, data.split(b"\n")):
                n["lines"] += 1
                try:
                    entry = orjson.loads(raw.decode("utf-8", "replace"))
                except orjson.JSONDecodeError:
                    n["unparseable_lines"] += 1
                    continue
                if not isinstance(entry, dict):
                    continue
                kind = entry.get("type") if isinstance(entry.get("type"), str) else "?"
                types[kind] += 1
                if kind == "queue-operation" and entry.get("operation") == "enqueue":
                    note = entry.get("content") or ""
                    if note.startswith(("<agent-notification>", "<task-notification>")):
                        notifications[note[1:note.index(">")] + " enqueue"] += 1
                if kind not in ("user", "assistant"):
                    continue
                n["inline_sidechain_lines"] += entry.get("isSidechain") is True and layout == "session"
                content = (entry.get("message") or {}).get("content")
                if isinstance(content, str):
                    blocks["string"] += 1
                    notifications["task-notification user"] += content.startswith("<task-notification>")
                elif isinstance(content, list):
                    blocks.update(b.get("type") if isinstance(b.get("type"), str) else "?" for b in content if isinstance(b, dict))
                if length := len(flat_text(entry)):
                    lengths.append(length)
    lengths.sort()

    def q(p: float) -> int:
        return lengths[min(len(lengths) - 1, int(p * (len(lengths) - 1) + 0.5))] if lengths else 0

    return {
        **{k: n[k] for k in ("files", "bytes", "lines", "unparseable_lines", "invalid_utf8_files")},
        "sessions": len(sessions),
        "orphan_session_dirs": len(session_dirs - sessions),
        "layouts": dict(sorted(layouts.items())),
        "sidecars": sidecars,
        "inline_sidechain_lines": n["inline_sidechain_lines"],
        "notifications": notifications,
        "record_types": _by_count(types),
        "record_type_share": _by_count(types, sum(types.values())),
        "block_types": _by_count(blocks),
        "block_share": _by_count(blocks, sum(blocks.values())),
        "events": len(lengths),
        "event_chars": sum(lengths),
        "event_len_quantiles": {f"p{int(p * 100)}": q(p) for p in QUANTILES},
        "event_len_mean": rounded(sum(lengths) / len(lengths), 1) if lengths else 0.0,
    }


def stats_markdown(named: list[tuple[str, dict]]) -> str:
    """Markdown tables comparing roots side by side (one column per root)."""
    names = [n for n, _ in named]
    out = ["| | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]

    def row(label: str, values: list) -> None:
        out.append(f"| {label} | " + " | ".join(str(v) for v in values) + " |")

    for key in ("sessions", "orphan_session_dirs", "files", "bytes", "lines", "unparseable_lines", "invalid_utf8_files",
                "inline_sidechain_lines", "events", "event_chars", "event_len_mean"):
        row(key, [s[key] for _, s in named])
    for key in ("layouts", "sidecars", "notifications"):
        for k in sorted({k for _, s in named for k in s[key]}):
            row(f"{key}: {k}", [s[key].get(k, 0) for _, s in named])
    for p in QUANTILES:
        k = f"p{int(p * 100)}"
        row(f"event length {k}", [s["event_len_quantiles"][k] for _, s in named])
    for key in ("record_type_share", "block_share"):
        keys = sorted({k for _, s in named for k in s[key]}, key=lambda k: (-max(s[key].get(k, 0) for _, s in named), k))
        for k in keys:
            row(f"{key.replace('_share', '')} share: {k}", [f"{s[key].get(k, 0):.3f}" for _, s in named])
    return "\n".join(out) + "\n"
