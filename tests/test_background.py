"""measure.measurements.background: one row per background task, on every delivery shape of format §8–9."""

from __future__ import annotations

from pathlib import Path

import orjson

from measure.akm.jscompat import to_iso
from measure.akm.read import read_session
from measure.measurements import tasks  # noqa: F401  (registers the "tasks" collector)
from measure.measurements.background import background_rows
from measure.measurements.lines import SessionLines

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
SID = "11111111-2222-3333-4444-555555555555"


def ts(seconds: float) -> str:
    return to_iso(T0 + int(seconds * 1000))


def human(s: float, text: str = "please review", version: str = "2.1.219") -> dict:
    return {"type": "user", "timestamp": ts(s), "version": version, "message": {"role": "user", "content": text}}


def say(s: float, text: str = "working on it") -> dict:
    return {"type": "assistant", "timestamp": ts(s), "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}


def launch(s: float, tuid: str, tool: str = "Agent", background: bool = True, **inp) -> dict:
    inp = {"description": "d", "prompt": "p", **({"run_in_background": True} if background else {}), **inp}
    return {"type": "assistant", "timestamp": ts(s),
            "message": {"role": "assistant", "content": [{"type": "tool_use", "id": tuid, "name": tool, "input": inp}]}}


def ack(s: float, tuid: str, result: dict, text: str = "Async agent launched successfully.") -> dict:
    return {"type": "user", "timestamp": ts(s), "toolUseResult": result,
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tuid, "content": [{"type": "text", "text": text}]}]}}


def queue(s: float, op: str, content: str | None = None) -> dict:
    d = {"type": "queue-operation", "operation": op, "timestamp": ts(s), "sessionId": SID}
    if content is not None:
        d["content"] = content
    return d


def delivered(s: float, content: str) -> dict:
    return {"type": "user", "timestamp": ts(s), "origin": {"kind": "task-notification"}, "message": {"role": "user", "content": content}}


def note_2219(task_id: str, tuid: str | None, status: str = "completed", result: str | None = "R" * 40) -> str:
    tu = f"<tool-use-id>{tuid}</tool-use-id>\n" if tuid else ""
    res = f"<result>{result}</result>\n" if result is not None else ""
    return (f"<task-notification>\n<task-id>{task_id}</task-id>\n{tu}<output-file>/tmp/{task_id}.output</output-file>\n"
            f"<status>{status}</status>\n<summary>Agent \"d\" {'finished' if status == 'completed' else 'was stopped by user'}</summary>\n"
            f"{res}</task-notification>")


def note_2017(task_id: str) -> str:
    return (f"<task-notification>\n<task-id>{task_id}</task-id>\n<status>completed</status>\n"
            f"<summary>Agent \"d\" completed</summary>\n<result>done</result>\n</task-notification>\n"
            f"Full transcript available at: /tmp/{task_id}.output")


def note_2076(agent_id: str) -> str:
    return (f"<agent-notification>\n<agent-id>{agent_id}</agent-id>\n<output-file>/tmp/a.output</output-file>\n"
            "<status>completed</status>\n<summary>Agent \"d\" completed.</summary>\n"
            "Read the output file to retrieve the full result.\n</agent-notification>")


def note_bash(task_id: str, tuid: str | None = None) -> str:
    tu = f"<tool-use-id>{tuid}</tool-use-id>\n" if tuid else ""
    return (f"<task-notification>\n<task-id>{task_id}</task-id>\n{tu}<output-file>/tmp/b.output</output-file>\n"
            "<status>failed</status>\n<summary>Background command \"x\" failed with exit code 1</summary>\n</task-notification>")


def write_session(tmp: Path, parent: list[dict], subagents: dict[str, list[dict]] | None = None) -> Path:
    proj = tmp / "-home-me-app"
    proj.mkdir(parents=True, exist_ok=True)
    p = proj / f"{SID}.jsonl"
    p.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in parent))
    for name, records in (subagents or {}).items():
        sp = proj / SID / "subagents" / f"agent-{name}.jsonl"
        sp.parent.mkdir(parents=True, exist_ok=True)
        sp.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return p


def read(tmp: Path, parent: list[dict], subagents: dict[str, list[dict]] | None = None):
    path = write_session(tmp, parent, subagents)
    lines = SessionLines()
    session, _ = read_session(str(path), str(tmp), file_time_ms=T0, observe=lines.observe)
    return session, lines.get("tasks")


def rows_of(tmp: Path, parent: list[dict], subagents: dict[str, list[dict]] | None = None) -> list[dict]:
    session, timelines = read(tmp, parent, subagents)
    return background_rows(session, timelines)


def sub_lines(*seconds: float, text: str = "sub work") -> list[dict]:
    out = [{"type": "user", "timestamp": ts(seconds[0]), "isSidechain": True, "message": {"role": "user", "content": "task"}}]
    out += [{"type": "assistant", "timestamp": ts(s), "isSidechain": True,
             "message": {"role": "assistant", "content": [{"type": "text", "text": f"{text} {i}"}]}} for i, s in enumerate(seconds[1:])]
    return out


ASYNC = {"isAsync": True, "status": "async_launched", "agentId": "a1", "description": "d", "prompt": "p", "outputFile": "/tmp/a1.output"}


def test_2_1_2xx_notification_with_tool_use_id_delivered_as_a_turn(tmp_path):
    n = note_2219("a1", "toolu_1")
    rows = rows_of(tmp_path, [
        human(0), launch(1, "toolu_1"), ack(3, "toolu_1", ASYNC), say(4),
        queue(100, "enqueue", n), queue(101, "dequeue", ""), delivered(101, n), say(110, "the agent is done"),
    ], {"a1": sub_lines(2, 50, 99)})
    assert len(rows) == 1
    r = rows[0]
    assert (r["task_id"], r["tool_use_id"], r["kind"], r["cc_version"]) == ("a1", "toolu_1", "agent", "2.1.219")
    assert (r["stub_seconds"], r["run_seconds"]) == (2.0, 99.0)
    assert r["ack_chars"] == len("Async agent launched successfully.")
    assert (r["notifications"], r["delivered"], r["removed"], r["delivery"]) == (1, 1, 0, "turn")
    assert r["completed_by"] == "notification" and r["completed_at"] == ts(100)
    assert r["completed_after_parent_end"] is False and r["parent_end_at"] == ts(110)
    assert (r["status"], r["killed"], r["result_chars"]) == ("completed", False, 40)
    assert (r["transcript_events"], r["transcript_end_at"]) == (3, ts(99))


def test_2_1_17_notification_without_tool_use_id_joins_by_task_id(tmp_path):
    n = note_2017("a1")
    rows = rows_of(tmp_path, [
        human(0), launch(1, "toolu_1", tool="Task"), ack(2, "toolu_1", ASYNC), say(3),
        queue(60, "enqueue", n), queue(61, "dequeue", ""), delivered(61, n), say(70),
    ])
    assert [(r["task_id"], r["delivery"], r["notifications"], r["result_chars"]) for r in rows] == [("a1", "turn", 1, 4)]


def test_a_delivered_turn_without_queue_lines_is_one_notification(tmp_path):
    rows = rows_of(tmp_path, [human(0), launch(1, "toolu_1"), ack(2, "toolu_1", ASYNC), say(3), delivered(60, note_2017("a1")), say(70)])
    assert [(r["notifications"], r["delivered"], r["delivery"], r["run_seconds"]) for r in rows] == [(1, 1, "turn", 59.0)]


def test_2_0_76_agent_notification_enqueue_then_remove_is_not_delivery(tmp_path):
    n1, n2 = note_2076("a9614d3"), note_2076("a7777777")
    legacy = {**ASYNC, "agentId": "a9614d3"}
    rows = rows_of(tmp_path, [
        human(0, version="2.0.76"), launch(1, "toolu_1", tool="Task"), ack(2, "toolu_1", legacy),
        launch(3, "toolu_2", tool="Task"), ack(4, "toolu_2", {**ASYNC, "agentId": "a7777777"}),
        queue(30, "enqueue", n1), queue(31, "remove", n1),
        queue(40, "enqueue", n2), queue(41, "remove"),  # no content: the queue's oldest pending item
        say(50, "TaskOutput says done"),
    ])
    got = [(r["task_id"], r["cc_version"], r["notifications"], r["delivered"], r["removed"], r["delivery"], r["result_chars"]) for r in rows]
    assert got == [("a9614d3", "2.0.76", 1, 0, 1, "removed", None), ("a7777777", "2.0.76", 1, 0, 1, "removed", None)]


def test_double_notification_after_a_resume(tmp_path):
    n1, n2 = note_2219("a1", "toolu_1", result="first"), note_2219("a1", "toolu_1", result="second, longer")
    resumed = {"success": True, "message": "Resuming agent a1", "resumedAgentId": "a1", "pin": {"id": "a1"}}
    rows = rows_of(tmp_path, [
        human(0), launch(1, "toolu_1"), ack(2, "toolu_1", ASYNC), say(3),
        queue(40, "enqueue", n1), queue(41, "dequeue", ""), delivered(41, n1), say(42),
        launch(50, "toolu_2", tool="SendMessage", background=False, to="a1"), ack(51, "toolu_2", resumed, text="{}"),
        queue(90, "enqueue", n2), queue(91, "dequeue", ""), delivered(91, n2), say(95),
    ])
    assert len(rows) == 1
    r = rows[0]
    assert (r["notifications"], r["delivered"], r["resumes"], r["delivery"]) == (2, 2, 1, "turn")
    assert r["completed_at"] == ts(40) and r["result_chars"] == len("second, longer")


def test_killed_agent_enqueue_remove_never_delivered(tmp_path):
    n = note_2219("a1", "toolu_1", status="killed", result=None)
    rows = rows_of(tmp_path, [human(0), launch(1, "toolu_1"), ack(2, "toolu_1", ASYNC), say(3),
                              queue(20, "enqueue", n), queue(21, "remove", n), say(30)], {"a1": sub_lines(2, 10)})
    r = rows[0]
    assert (r["status"], r["killed"], r["delivery"], r["removed"], r["result_chars"]) == ("killed", True, "removed", 1, None)


def test_background_bash_with_and_without_tool_use_id(tmp_path):
    bash = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False, "backgroundTaskId": "bbb49d4"}
    n_old, n_new = note_bash("bbb49d4"), note_bash("bq2", "toolu_2")
    rows = rows_of(tmp_path, [
        human(0), launch(1, "toolu_1", tool="Bash", command="make"), ack(2, "toolu_1", bash, text="Command running in background"),
        launch(3, "toolu_2", tool="Bash", command="make"), ack(4, "toolu_2", {**bash, "backgroundTaskId": "bq2"}, text="running"),
        queue(20, "enqueue", n_old), queue(21, "dequeue", ""), delivered(21, n_old),
        queue(30, "enqueue", n_new), queue(31, "dequeue", ""), delivered(31, n_new), say(40),
    ])
    got = [(r["task_id"], r["kind"], r["status"], r["result_chars"], r["transcript_events"], r["run_seconds"]) for r in rows]
    assert got == [("bbb49d4", "bash", "failed", None, None, 19.0), ("bq2", "bash", "failed", None, None, 27.0)]


def test_forked_skill_and_monitor_without_notification(tmp_path):
    fork = {"success": True, "commandName": "code-review", "status": "forked", "background": True, "agentId": "af1", "result": ""}
    monitor = {"taskId": "bxtsitwyy", "timeoutMs": 600000, "persistent": False}
    rows = rows_of(tmp_path, [
        human(0), launch(1, "toolu_1", tool="Skill", background=False, skill="code-review"), ack(2, "toolu_1", fork, text="forked"),
        launch(3, "toolu_2", tool="Monitor", background=False), ack(4, "toolu_2", monitor, text="monitoring"), say(5),
    ], {"af1": sub_lines(2, 30, 400)})
    got = [(r["task_id"], r["kind"], r["delivery"], r["notifications"], r["completed_by"], r["completed_after_parent_end"]) for r in rows]
    assert got == [("af1", "forked_skill", "never", 0, "transcript", True), ("bxtsitwyy", "monitor", "never", 0, None, None)]


def test_late_completion_after_the_parent_ended_is_never_delivered(tmp_path):
    n = note_2219("a1", "toolu_1")
    rows = rows_of(tmp_path, [human(0), launch(1, "toolu_1"), ack(2, "toolu_1", ASYNC), say(10, "done for now"),
                              queue(600, "enqueue", n)], {"a1": sub_lines(2, 300, 599)})
    r = rows[0]
    assert (r["delivery"], r["notifications"], r["completed_after_parent_end"], r["run_seconds"]) == ("never", 1, True, 599.0)
    assert r["stub_seconds"] == 1.0 and r["parent_end_at"] == ts(10)


def test_foreground_tasks_and_plain_sessions_have_no_rows(tmp_path):
    sync = {"status": "completed", "agentId": "a2", "content": [], "totalTokens": 5}
    assert rows_of(tmp_path, [human(0), launch(1, "toolu_1", background=False), ack(5, "toolu_1", sync, text="final"), say(6)]) == []
    assert rows_of(tmp_path / "b", [human(0), say(1)]) == []
