"""measure.measurements.reads: reads of background work and what the parent already held."""

from __future__ import annotations

from pathlib import Path

import orjson

from measure.akm.read import read_transcript
from measure.measurements.lines import SessionLines
from measure.measurements.reads import read_target, repeat_rows, repeat_summary

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"
RESULT = "Found 3 issues:\n1. SQL built by string concatenation\n\n2. token logged at debug level\n3. no rate limit"
NOTE = ("<task-notification>\n<task-id>a1</task-id>\n<status>completed</status>\n"
        f'<summary>Agent "review" completed</summary>\n<result>{RESULT}</result>\n</task-notification>')


def tool_use(tid: str, name: str, inp: dict) -> dict:
    return {"type": "assistant", "message": {"role": "assistant", "id": "m" + tid, "content": [
        {"type": "tool_use", "id": tid, "name": name, "input": inp}]}}


def tool_result(tid: str, text: str) -> dict:
    return {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tid, "content": [{"type": "text", "text": text}]}]}}


def reads_of(tmp_path: Path, records: list[dict]):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    lines = SessionLines(("reads",))
    read_transcript(str(p), 0.0, "f", lines.observe("f"))
    return lines.get("reads")["f"]


def test_a_task_output_that_repeats_the_notifications_result(tmp_path):
    wrapped = f"<retrieval_status>success</retrieval_status>\n\n<task_id>a1</task_id>\n\n<output>\n{RESULT}\n</output>"
    reads = reads_of(tmp_path, [
        {"type": "user", "message": {"role": "user", "content": NOTE}},
        tool_use("t1", "TaskOutput", {"task_id": "a1", "block": True}),
        tool_result("t1", wrapped),
        tool_use("t2", "Grep", {"pattern": "x"}),  # not background work: not a read
        tool_result("t2", RESULT),
    ])
    assert [(r.tool, r.task_id) for r in reads] == [("TaskOutput", "a1")]
    r = reads[0]
    assert r.chars == len(wrapped)
    # the four non-blank result lines, each with its newline; the wrapper lines were never received
    assert r.repeated_chars == sum(len(x) + 1 for x in RESULT.split("\n") if x)


def test_growing_output_read_again_and_read_from_the_output_file(tmp_path):
    first = "line one\nline two"
    second = "line one\nline two\nline three"
    numbered = "     1\u2192line one\n     2\u2192line two\n     3\u2192line three\n     4\u2192line four"
    reads = reads_of(tmp_path, [
        tool_use("t1", "BashOutput", {"bash_id": "b7"}), tool_result("t1", first),
        tool_use("t2", "TaskOutput", {"task_id": "b7"}), tool_result("t2", second),
        tool_use("t3", "Read", {"file_path": "/tmp/claude/-p/tasks/b7.output"}), tool_result("t3", numbered),
        tool_use("t4", "TaskOutput", {"task_id": "b8"}), tool_result("t4", second),  # another task: nothing held
    ])
    assert [(r.tool, r.task_id, r.repeated_chars) for r in reads] == [
        ("BashOutput", "b7", 0),
        ("TaskOutput", "b7", 18),
        ("Read", "b7", len(numbered.split("\n")[0]) + len(numbered.split("\n")[1]) + len(numbered.split("\n")[2]) + 3),
        ("TaskOutput", "b8", 0),
    ]
    s = repeat_summary(reads)
    assert s["background_reads"] == 4 and s["repeat_reads"] == 2
    assert s["repeat_fraction"] == round(s["repeated_chars"] / s["read_chars"], 4)
    assert [r["repeated_pct"] for r in repeat_rows(reads)][0] == 0.0


def test_a_second_notification_of_a_resumed_agent_is_a_read(tmp_path):
    reads = reads_of(tmp_path, [
        {"type": "user", "message": {"role": "user", "content": NOTE}},
        tool_use("t1", "SendMessage", {"to": "a1", "message": "go on"}),
        tool_result("t1", "Resuming agent a1"),
        {"type": "user", "message": {"role": "user", "content": NOTE.replace("no rate limit", "rate limit added")}},
        {"type": "queue-operation", "operation": "enqueue", "content": NOTE},  # queue lines are not received text
    ])
    assert [r.tool for r in reads] == ["SendMessage", "notification"]
    assert reads[1].repeated_chars > 0 and reads[1].repeated_chars < reads[1].chars


def test_read_targets():
    assert read_target("Read", {"file_path": "/x/tasks/abc.output"}) == "abc"
    assert read_target("Read", {"file_path": "/x/src/abc.py"}) is None
    assert read_target("Task", {"resume": "a9"}) == "a9" and read_target("Task", {"prompt": "p"}) is None
    assert read_target("Bash", {"command": "ls"}) is None


def test_real_2_0_76_polls_repeat_their_earlier_reads():
    lines = SessionLines(("reads",))
    read_transcript(str(REAL / "entire" / "9878b713483d.jsonl"), 0.0, "f", lines.observe("f"))
    reads = lines.get("reads")["f"]
    s = repeat_summary(reads)
    assert s["background_reads"] == 15
    # the second round of blocking TaskOutput calls re-sends finished results the parent already held
    assert 0.4 < s["repeat_fraction"] < 0.7
    assert all(r.repeated_chars <= r.chars for r in reads)
