"""measure.measurements.tokens: one call per message.id, progress never counted, the entire oracle."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from measure.akm.read import read_session, read_transcript
from measure.measurements.lines import SessionLines
from measure.measurements.subagents import classify
from measure.measurements.tokens import (
    Usage,
    placeholder_version,
    token_rows,
    usage_tuple,
)

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"
TS = "2026-01-01T00:00:{:02d}.000Z"


def usage_of(path: Path) -> Usage:
    lines = SessionLines(("usage",))
    read_transcript(str(path), 0.0, "f", lines.observe("f"))
    return lines.get("usage")["f"]


def write(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def usage(inp=1, cc=10, cr=100, out=2, m5=None, h1=None) -> dict:
    u = {"input_tokens": inp, "cache_creation_input_tokens": cc, "cache_read_input_tokens": cr, "output_tokens": out}
    if m5 is not None:
        u["cache_creation"] = {"ephemeral_5m_input_tokens": m5, "ephemeral_1h_input_tokens": h1}
    return u


def assistant(n: int, mid: str | None, u: dict, block: str = "text", version: str = "2.1.37", model: str = "claude-opus-4-6") -> dict:
    msg = {"role": "assistant", "model": model, "content": [{"type": block, "text": "x"}], "usage": u}
    if mid is not None:
        msg["id"] = mid
    return {"type": "assistant", "version": version, "timestamp": TS.format(n), "message": msg}


def test_a_streamed_message_is_one_call_and_its_last_line_wins(tmp_path):
    p = write(tmp_path / "s.jsonl", [
        {"type": "user", "timestamp": TS.format(0), "message": {"role": "user", "content": "go"}},
        assistant(1, "msg_1", usage(out=1), "thinking"),
        assistant(2, "msg_1", usage(out=1), "text"),
        assistant(3, "msg_1", usage(out=7, m5=4, h1=6), "tool_use"),  # the final line of the response
        assistant(4, "msg_2", usage(inp=3, cc=0, cr=200, out=1)),
    ])
    u = usage_of(p)
    assert len(u.calls) == 2
    assert u.calls[0].line == 2 and u.calls[0].usage == (1, 10, 4, 6, 100, 7)
    assert u.naive_lines == 4
    assert u.naive == (6, 30, 4, 6, 500, 10)


def test_agent_progress_re_embeds_are_never_counted(tmp_path):
    embedded = {"type": "assistant", "message": {"role": "assistant", "id": "msg_sub", "usage": usage(cr=9999)}}
    p = write(tmp_path / "s.jsonl", [
        assistant(1, "msg_1", usage()),
        {"type": "progress", "timestamp": TS.format(2), "data": {"type": "agent_progress", "agentId": "a1", "message": embedded}},
        {"type": "progress", "timestamp": TS.format(3), "data": {"type": "hook_progress"}},
    ])
    u = usage_of(p)
    assert [c.usage for c in u.calls] == [(1, 10, 0, 0, 100, 2)]
    assert u.naive_lines == 1 and u.progress_usage_lines == 1


def test_placeholder_output_tokens_by_version():
    assert placeholder_version("2.1.17") and placeholder_version("2.1.283") and placeholder_version(None)
    assert not placeholder_version("2.0.76") and not placeholder_version("1.0.113")


def test_lines_without_an_id_are_calls_of_their_own_and_bad_values_count_zero(tmp_path):
    p = write(tmp_path / "s.jsonl", [assistant(1, None, usage()), assistant(2, None, usage()),
                                     assistant(3, "m", {"input_tokens": "7", "output_tokens": -3, "cache_creation": []})])
    u = usage_of(p)
    assert len(u.calls) == 3
    assert usage_tuple({"input_tokens": True}) == (0, 0, 0, 0, 0, 0)


def test_rows_per_origin_with_subagent_files_and_totals(tmp_path):
    root = tmp_path / "root"
    proj = root / "-p"
    write(proj / "sess.jsonl", [
        {"type": "user", "timestamp": TS.format(0), "message": {"role": "user", "content": "go"}},
        assistant(1, "m1", usage(out=5), version="2.0.76"),
        {"type": "progress", "timestamp": TS.format(2), "data": {"type": "agent_progress", "message": {"type": "assistant", "message": {"id": "s1", "usage": usage()}}}},
    ])
    write(proj / "sess" / "subagents" / "agent-a1111111111111111.jsonl", [
        {"type": "user", "isSidechain": True, "timestamp": TS.format(1), "message": {"role": "user", "content": "task"}},
        assistant(2, "s1", usage(out=1)), assistant(3, "s1", usage(out=1)), assistant(4, "s2", usage(out=1), model="claude-haiku"),
    ])
    write(proj / "sess" / "subagents" / "agent-acompact-x1.jsonl", [assistant(5, "c1", usage(cr=0))])
    lines = SessionLines(("usage",))
    session, _ = read_session(str(proj / "sess.jsonl"), str(root), file_time_ms=0.0, observe=lines.observe)
    rows = {r["origin"]: r for r in token_rows(session, lines.get("usage"), classify(session, None))}
    assert list(rows) == ["parent", "task_agent", "compaction_helper", "total"]
    assert rows["parent"]["api_calls"] == 1 and not rows["parent"]["output_tokens_is_lower_bound"]
    assert rows["parent"]["progress_usage_lines"] == 1
    assert rows["task_agent"]["api_calls"] == 2 and rows["task_agent"]["naive_lines"] == 3
    assert rows["task_agent"]["models"] == "claude-haiku,claude-opus-4-6"
    assert rows["task_agent"]["output_tokens_is_lower_bound"]
    assert rows["total"]["api_calls"] == 4 and rows["total"]["files"] == 3
    assert rows["total"]["cache_read_tokens"] == 300
    assert rows["total"]["naive_cache_read_tokens"] == 400


def _entire_metadata() -> list[tuple[str, dict]]:
    out = []
    for p in sorted((REAL / "entire").glob("*.metadata.json")):
        meta = orjson.loads(p.read_bytes())
        out.append((p.name.split(".")[0], meta))
    return out


@pytest.mark.parametrize("checkpoint, meta", _entire_metadata(), ids=[c for c, _ in _entire_metadata()])
def test_deduplicated_parent_usage_equals_entire_token_usage(checkpoint, meta):
    """Format §12: Entire's recorded token_usage is the sum over unique message.id, last line wins.

    A checkpoint whose metadata starts at a transcript line (`checkpoint_transcript_start`) covers
    a window only, not the whole file (18/4069756ffc): there the whole file must hold more.
    """
    u = usage_of(REAL / "entire" / f"{checkpoint}.jsonl")
    got = {
        "api_call_count": len(u.calls),
        "input_tokens": sum(c.usage[0] for c in u.calls),
        "cache_creation_tokens": sum(c.usage[1] for c in u.calls),
        "cache_read_tokens": sum(c.usage[4] for c in u.calls),
        "output_tokens": sum(c.usage[5] for c in u.calls),
    }
    want = meta["token_usage"]
    if meta.get("checkpoint_transcript_start"):
        assert got["api_call_count"] > want["api_call_count"]
        assert all(got[k] >= want[k] for k in want)
    else:
        assert got == want


def test_the_oracle_covers_the_three_whole_file_checkpoints():
    whole = [c for c, m in _entire_metadata() if not m.get("checkpoint_transcript_start")]
    assert whole == ["35111b46167b", "6d63c3a51594", "7e72a8d8fdb8"]
