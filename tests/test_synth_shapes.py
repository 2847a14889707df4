"""The shapes: mixed covers every layout, record shape and error path; s840 mirrors akm's #840 study."""

from __future__ import annotations

import re

import orjson
import pytest
from synth_corpus import DEFAULT_SEED, DEFAULT_SESSIONS, events_of, jsonl_files, lines_of

from measure import synth
from measure.measurements.pairs import jaccard
from measure.synth.stats import _layout_of

pytest_plugins = ["synth_fixtures"]


REMEMBER = re.compile(r"\bakm\s+remember\s+(?:\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)')")


FEEDBACK = re.compile(r"\bakm\s+feedback\s+(\S+)(?:\s+--[a-z-]+)*\s+(?:--note|-n)\s+(?:\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)')")


def count_refs(text: str) -> int:
    if len(text) < 10:
        return 0
    n = sum(1 for m in REMEMBER.finditer(text) if (m.group(1) or m.group(2) or "").strip())
    return n + sum(1 for _ in FEEDBACK.finditer(text))


def test_mixed_has_every_layout(mixed_root, mixed_stats):
    layouts = mixed_stats["layouts"]
    for layout in ("session", "sibling_agent", "subagent", "subagent_compaction", "workflow_agent", "workflow_journal"):
        assert layouts.get(layout, 0) > 0, layout
    assert mixed_stats["inline_sidechain_lines"] > 0
    assert mixed_stats["orphan_session_dirs"] >= 1
    sidecars = mixed_stats["sidecars"]
    assert sidecars["meta_with_toolUseId"] > 0
    assert sidecars["meta_unparseable"] >= 2  # one broken, one `null`
    subagent_files = [p for p in jsonl_files(mixed_root) if _layout_of(p.relative_to(mixed_root).parts) == "subagent"
                      and not p.name.startswith("agent-acompact-")]
    assert any(not p.with_name(p.name[:-6] + ".meta.json").exists() for p in subagent_files), "a subagent without sidecar"
    assert list(mixed_root.glob("*/*/workflows/*.json")), "workflow run snapshot"
    assert list(mixed_root.glob("*/*/tool-results/toolu_*.txt")), "persisted tool output"
    metas = [orjson.loads(p.read_bytes()) for p in mixed_root.rglob("*.meta.json") if p.read_bytes() not in (b"null",)
             and p.read_bytes().endswith(b"}")]
    assert any(m.get("spawnDepth") == 2 and "parentAgentId" in m for m in metas), "nested (depth-2) agent"


def test_mixed_has_every_error_path(mixed_root, mixed_stats):
    files = jsonl_files(mixed_root)
    assert mixed_stats["invalid_utf8_files"] >= 1
    assert any(p.stat().st_size == 0 and len(p.relative_to(mixed_root).parts) == 2 for p in files), "empty session file"
    assert any(p.stat().st_size == 0 and "subagents" in p.parts for p in files), "empty subagent file"
    assert any(p.is_dir() for p in mixed_root.glob("*/*.jsonl")), "a directory named like a session"
    torn = [p for p in files if p.stat().st_size and not p.read_bytes().endswith(b"\n")]
    assert torn, "a torn final line"
    assert 0 < mixed_stats["unparseable_lines"] < 0.01 * mixed_stats["lines"]


def test_mixed_has_every_record_shape(mixed_root):
    seen = set()
    notifications = {}
    msg_ids = {}
    for path in jsonl_files(mixed_root):
        for e in lines_of(path):
            kind = e.get("type")
            seen.add(kind)
            if kind == "system":
                seen.add("system/" + e.get("subtype", ""))
            if kind == "progress":
                seen.add("progress/" + e["data"]["type"])
            if kind == "queue-operation":
                seen.add("queue/" + e["operation"])
                content = e.get("content") or ""
                if e["operation"] == "enqueue" and "-notification>" in content:
                    task = re.search(r"<(?:task|agent)-id>([^<]+)<", content).group(1)
                    notifications.setdefault(task, []).append(content)
            if e.get("isCompactSummary"):
                seen.add("compact-summary")
            if kind == "assistant":
                m = e["message"]
                msg_ids.setdefault(m["id"], []).append(orjson.dumps(m["usage"]))
                for b in m["content"]:
                    seen.add("block/" + b["type"])
                    if b["type"] == "tool_use" and b["name"] == "Bash":
                        cmd = b["input"]["command"]
                        for op in ("remember", "feedback", "search", "show"):
                            if cmd.startswith(f"akm {op} "):
                                seen.add(("akm", op, "subagent" if e.get("isSidechain") else "parent"))
            if kind == "user":
                c = e["message"]["content"]
                text = c if isinstance(c, str) else orjson.dumps(c).decode()
                for tag in ("<system-reminder>", "<local-command-caveat>"):
                    if tag in text:
                        seen.add(tag)
                if isinstance(c, list):
                    for b in c:
                        if b.get("type") == "tool_result":
                            seen.add("tool_result/" + type(b["content"]).__name__)
                if not text.isascii():
                    seen.add("non-ascii")
    for need in ("file-history-snapshot", "custom-title", "summary", "system/compact_boundary", "compact-summary",
                 "system/turn_duration", "system/stop_hook_summary", "system/local_command", "progress/hook_progress",
                 "progress/agent_progress", "progress/bash_progress", "queue/enqueue", "queue/dequeue", "queue/remove",
                 "block/thinking", "block/text", "block/tool_use", "<system-reminder>", "<local-command-caveat>",
                 "tool_result/str", "tool_result/list", "non-ascii"):
        assert need in seen, need
    for op in ("remember", "feedback"):
        for where in ("parent", "subagent"):
            assert ("akm", op, where) in seen, (op, where)
    assert {("akm", "search", "parent"), ("akm", "show", "parent")} & seen
    # one API response = several lines sharing message.id and usage
    split = [u for u in msg_ids.values() if len(u) > 1]
    assert split and all(len(set(u)) == 1 for u in split)
    # each notification era appears; a resumed agent notifies twice with different results
    texts = [t for ts in notifications.values() for t in ts]
    assert any(t.startswith("<agent-notification>") for t in texts)
    assert any("<result>" in t and "Full transcript available at:" in t and "<usage>" not in t for t in texts)  # 2.1.17
    assert any("<usage>total_tokens:" in t for t in texts)  # 2.1.37
    assert any("<tool-use-id>" in t and "<note>" in t and "<subagent_tokens>" in t for t in texts)  # 2.1.2xx
    assert any("<status>killed</status>" in t for t in texts)
    twice = [ts for ts in notifications.values() if len(ts) == 2]
    assert any(a != b and "<result>" in a and "<result>" in b for a, b in twice)


def test_background_tasks_can_outlive_the_parent(tmp_path):
    """Fates late/lost: finished after the parent's last turn, notified but never delivered, or never notified."""
    from measure.akm.read import read_session
    from measure.measurements import tasks  # noqa: F401
    from measure.measurements.background import background_rows
    from measure.measurements.lines import SessionLines

    out = tmp_path / "m"
    synth.generate(out, seed=DEFAULT_SEED, sessions=DEFAULT_SESSIONS)
    first12 = tmp_path / "m12"
    synth.generate(first12, seed=DEFAULT_SEED, sessions=12)
    # the two sessions are appended: the first twelve and the root extras keep their bytes
    assert {p.relative_to(first12) for p in first12.rglob("*")} < {p.relative_to(out) for p in out.rglob("*")}
    rows = []
    for parent in sorted(out.glob("*/*.jsonl")):
        lines = SessionLines(("tasks",))
        try:
            session, _ = read_session(str(parent), str(out), file_time_ms=0, observe=lines.observe)
        except Exception:
            continue
        rows += background_rows(session, lines.get("tasks"))
    late = [(r["kind"], r["delivery"], r["completed_by"]) for r in rows if r["completed_after_parent_end"]]
    assert sorted(late) == sorted([("agent", "never", "notification"), ("agent", "never", "notification"),
                                   ("agent", "never", "transcript"), ("bash", "never", "notification")])
    assert any(r["killed"] and r["delivery"] == "removed" for r in rows)


S840_EXPECTED = {  # pipeline-spec §12.1/§12.2
    "4f7f80f8": {"top": 28, "chunks": 50, "pairs": 19, "refs": (2, 160), "windows": 17, "late": False},
    "578b2d47": {"top": 4, "chunks": 32, "pairs": 3, "refs": (4, 34), "windows": 15, "late": True},
    "f798f45f": {"top": 1, "chunks": 1, "pairs": 0, "refs": (1, 0), "windows": 8, "late": False},
    "393273fd": {"top": 74, "chunks": 129, "pairs": 55, "refs": (8, 0), "windows": 100, "late": True},
}


@pytest.mark.slow
def test_s840_sessions_match_the_study(s840_root):
    sessions = {p.name[:8]: p for p in s840_root.glob("*/*.jsonl")}
    assert set(sessions) == set(S840_EXPECTED)
    for prefix, want in S840_EXPECTED.items():
        parent = sessions[prefix]
        assert parent.stem == synth.S840_SESSIONS[prefix]
        subdir = parent.with_suffix("") / "subagents"
        assert len([p for p in subdir.iterdir() if p.suffix == ".jsonl"]) == want["top"], prefix
        sub_events = {p: events_of(p) for p in subdir.rglob("*.jsonl")}
        assert sum(1 for evs in sub_events.values() if evs) == want["chunks"], prefix
        parent_events = events_of(parent)
        windows, fill = 0, 0
        for _, text in parent_events:
            if windows == 0 or (fill + len(text) > 80_000 and fill > 0):
                windows, fill = windows + 1, 0
            fill += len(text)
        assert windows == want["windows"], prefix
        refs = (sum(count_refs(t) for _, t in parent_events), sum(count_refs(t) for evs in sub_events.values() for _, t in evs))
        assert refs == want["refs"], prefix
        # pairs: sidecar toolUseId joined to the first parent event holding a <task-notification> with it
        scores = []
        for meta_path in sorted(subdir.glob("*.meta.json")):
            meta = orjson.loads(meta_path.read_bytes())
            if not isinstance(meta, dict) or not isinstance(meta.get("toolUseId"), str):
                continue
            final = sub_events[meta_path.with_name(meta_path.name[:-10] + ".jsonl")][-1][1]
            note = next((t for _, t in parent_events if "<task-notification>" in t and meta["toolUseId"] in t), None)
            if note is not None:
                scores.append(jaccard(note, final))
        assert len(scores) == want["pairs"], prefix
        if scores:
            assert sum(scores) / len(scores) > 0.7 and max(scores) > 0.85, prefix
        if prefix == "393273fd":  # resumed agents: the first notification held an intermediate result
            assert min(scores) < 0.4
        # eviction pattern: late sessions have subagent events inside the parent's last 80k chars
        tail, start = 0, ""
        for ts, text in reversed(parent_events):
            tail += len(text)
            start = ts
            if tail >= 80_000:
                break
        newest_sub = max(ts for evs in sub_events.values() for ts, _ in evs)
        assert (newest_sub >= start) == want["late"], prefix


@pytest.mark.slow
def test_s840_orphan_and_raw_event_counts(s840_root):
    orphans = [d for d in s840_root.glob("*/*") if d.is_dir() and not d.with_suffix(".jsonl").exists()]
    assert [d.name[:8] for d in orphans] == ["4a0d9e9b"]
    assert len(list((orphans[0] / "subagents").glob("*.jsonl"))) == 78
    counts = {p.name[:8]: len(events_of(p)) for p in s840_root.glob("*/*.jsonl")}
    assert abs(counts["4f7f80f8"] - 1209) / 1209 < 0.25
    assert abs(counts["578b2d47"] - 1583) / 1583 < 0.25


def test_delegation_shapes_as_real_sessions_record_them(tmp_path):
    """Sessions 14-15 (#24): a side question replaying its parent, a fork with its sidecar, a named agent,
    a rejected launch echoed by agent_progress, an interrupted one named by its sidecar; sessions 0-13 keep their bytes."""
    out, first14 = tmp_path / "m", tmp_path / "m14"
    synth.generate(out, seed=DEFAULT_SEED, sessions=DEFAULT_SESSIONS)
    synth.generate(first14, seed=DEFAULT_SEED, sessions=14)
    old = [p.relative_to(first14) for p in first14.rglob("*") if p.is_file()]
    assert all((out / p).read_bytes() == (first14 / p).read_bytes() for p in old)
    subs = {p.name: p for p in out.rglob("subagents/*") if p.is_file()}

    def meta(stem):
        return orjson.loads(subs[f"{stem}.meta.json"].read_bytes())

    def parent_of(path):
        return lines_of(path.parent.parent.with_suffix(".jsonl"))

    aside = [n for n in subs if re.fullmatch(r"agent-aside_question-[0-9a-f]{16}\.jsonl", n)]
    assert len(aside) == 1 and aside[0].replace(".jsonl", ".meta.json") not in subs
    lines = lines_of(subs[aside[0]])
    assert {(x["isSidechain"], x["agentId"]) for x in lines} == {(True, aside[0][len("agent-"):-len(".jsonl")])}
    opening = [x["message"] for x in parent_of(subs[aside[0]]) if x.get("type") in ("user", "assistant")]
    assert [x["message"] for x in lines[:5]] == opening[:5]  # it replays the parent's own first lines
    assert lines[-1]["type"] == "assistant" and lines[-2]["message"]["content"].startswith("btw, ")

    fork = next(n[:-len(".jsonl")] for n in subs if re.fullmatch(r"agent-acode-review-[0-9a-f]{16}\.jsonl", n))
    m = meta(fork)
    assert list(m) == ["agentType", "isFork", "name", "description", "spawnDepth"] and (m["agentType"], m["isFork"], m["name"]) == ("fork", True, "code-review")
    acks = [x["toolUseResult"] for x in parent_of(subs[f"{fork}.jsonl"]) if isinstance(x.get("toolUseResult"), dict)]
    assert {"status": "forked", "background": True, "agentId": fork.removeprefix("agent-")}.items() <= next(a for a in acks if a.get("status") == "forked").items()

    named = next(n[:-len(".jsonl")] for n in subs if re.fullmatch(r"agent-aschema-audit-[0-9a-f]{16}\.jsonl", n))
    assert list(meta(named)) == ["agentType", "description"]

    parents = [lines_of(p) for p in out.glob("*/*.jsonl") if p.is_file()]
    stops = ("User rejected tool use", "Error: [Request interrupted by user for tool use]")
    stopped = {tur: x["message"]["content"][0]["tool_use_id"] for ls in parents for x in ls if (tur := x.get("toolUseResult")) in stops}
    echoed = {x["parentToolUseID"]: x["data"]["agentId"] for ls in parents for x in ls
              if x.get("type") == "progress" and x["data"].get("type") == "agent_progress"}
    assert set(stopped) == set(stops) and f"agent-{echoed[stopped[stops[0]]]}.jsonl" in subs
    assert any(meta(n[: -len(".meta.json")]).get("toolUseId") == stopped[stops[1]] for n, p in subs.items()
               if n.endswith(".meta.json") and p.read_bytes() not in (b"", b"null") and p.read_bytes().endswith(b"}"))
