"""What the main thread is told about background tasks: notifications, launch and Task results."""

from __future__ import annotations

import html
import re

from synth_corpus import lines_of

from measure import synth

pytest_plugins = ["synth_fixtures"]


def test_killed_agents_are_never_delivered(mixed_root):
    for path in mixed_root.glob("*/*.jsonl"):
        if not path.is_file():
            continue
        lines = lines_of(path)
        delivered = {e["message"]["content"] for e in lines if e.get("type") == "user" and isinstance(e["message"]["content"], str)}
        for e in lines:
            if e.get("type") == "queue-operation" and e["operation"] == "enqueue" and "<status>killed</status>" in e["content"]:
                assert e["content"] not in delivered


def test_notification_result_copies_final_report(mixed_root):
    """The parent's first notification carries the subagent's final text: XML-escaped (2.1.2xx) or verbatim (2.1.1x/2.1.3x)."""
    checked = 0
    for session in mixed_root.glob("*/*.jsonl"):
        if not session.is_file():
            continue
        subdir = session.with_suffix("") / "subagents"
        notes = [e["message"]["content"] for e in lines_of(session)
                 if e.get("type") == "user" and str(e["message"]["content"]).startswith("<task-notification>")]
        for note in notes:
            task = re.search(r"<task-id>([^<]+)</task-id>", note).group(1)
            agent = subdir / f"agent-{task}.jsonl"
            if "<result>" not in note or not agent.exists():
                continue
            result = note[note.index("<result>") + 8: note.rindex("</result>")]
            finals = [synth.flat_text(e) for e in lines_of(agent) if e.get("type") == "assistant"
                      and e["message"]["content"][0]["type"] == "text"]
            decoded = html.unescape(result) if "<tool-use-id>" in note else result
            assert decoded in finals
            checked += 1
    assert checked >= 5


def test_sync_task_result_invariants(mixed_root):
    """The real-data invariants of claude-code-format.md §8.2 hold for generated sync results."""
    checked = 0
    for session in mixed_root.glob("*/*.jsonl"):
        if not session.is_file():
            continue
        for e in lines_of(session):
            tur = e.get("toolUseResult")
            if not (isinstance(tur, dict) and "totalTokens" in tur and "agentId" in tur):
                continue
            u = tur["usage"]
            assert tur["totalTokens"] == (u["input_tokens"] + u["cache_creation_input_tokens"]
                                          + u["cache_read_input_tokens"] + u["output_tokens"])
            agent = next((p for p in (session.with_suffix("") / "subagents" / f"agent-{tur['agentId']}.jsonl",
                                      session.parent / f"agent-{tur['agentId']}.jsonl") if p.exists()), None)
            assert agent is not None
            tool_uses = sum(1 for x in lines_of(agent) if x.get("type") == "assistant"
                            for b in x["message"]["content"] if b["type"] == "tool_use")
            assert tool_uses == tur["totalToolUseCount"]
            checked += 1
    assert checked >= 4
