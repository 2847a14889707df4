"""measure.measurements.tasks: launches, acknowledgements, queue operations and turns, by shape."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from measure.akm.read import read_transcript
from measure.measurements.lines import SessionLines
from measure.measurements.tasks import Timeline, ack_kind, parse_notification, task_kind

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"


def timeline(path: Path) -> Timeline:
    lines = SessionLines(("tasks",))
    read_transcript(str(path), 0.0, "f", lines.observe("f"))
    return lines.get("tasks")["f"]


def write(tmp_path: Path, records: list[dict]) -> Path:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return p


V2037 = (
    "<task-notification>\n<task-id>ab7e996</task-id>\n<status>completed</status>\n"
    '<summary>Agent "Add t.Parallel" completed</summary>\n<result>done: 3 files</result>\n'
    "<usage>total_tokens: 69606\ntool_uses: 22\nduration_ms: 211308</usage>\n</task-notification>\n"
    "Full transcript available at: /tmp/x/tasks/ab7e996.output"
)
V2219 = (
    "<task-notification>\n<task-id>af485a27dc52b445a</task-id>\n<tool-use-id>toolu_01Q</tool-use-id>\n"
    "<output-file>/tmp/t.output</output-file>\n<status>completed</status>\n"
    '<summary>Agent "research" finished</summary>\n<note>may notify more than once</note>\n<result>R</result>\n'
    "<usage><subagent_tokens>29468</subagent_tokens><tool_uses>0</tool_uses></usage>\n</task-notification>"
)
V2076 = (
    "<agent-notification>\n<agent-id>a9614d3</agent-id>\n<output-file>/tmp/a.output</output-file>\n"
    '<status>completed</status>\n<summary>Agent "Security review" completed.</summary>\n'
    "Read the output file to retrieve the full result.\n</agent-notification>"
)
BASH = (
    "<task-notification>\n<task-id>bbb49d4</task-id>\n<output-file>/tmp/b.output</output-file>\n"
    '<status>failed</status>\n<summary>Background command "Rebase" failed with exit code 1</summary>\n'
    "</task-notification>\nRead the output file to retrieve the result: /tmp/b.output"
)
STOPPED = (
    "<task-notification>\n<task-id>a1b2c3d</task-id>\n<status>stopped</status>\n"
    "<summary>No completion record was found for background agent a1b2c3d</summary>\n</task-notification>"
)


@pytest.mark.parametrize(
    "text, expected",
    [
        (V2037, ("task-notification", "ab7e996", None, "completed", "agent", 13, 69606)),
        (V2219, ("task-notification", "af485a27dc52b445a", "toolu_01Q", "completed", "agent", 1, 29468)),
        (V2076, ("agent-notification", "a9614d3", None, "completed", "agent", None, None)),
        (BASH, ("task-notification", "bbb49d4", None, "failed", "bash", None, None)),
        (STOPPED, ("task-notification", "a1b2c3d", None, "stopped", "agent", None, None)),
    ],
)
def test_every_notification_version_parses_to_the_same_fields(text, expected):
    n = parse_notification(text)
    assert (n.tag, n.task_id, n.tool_use_id, n.status, n.task_kind, n.result_chars, n.usage_tokens) == expected
    assert n.chars == len(text)


def test_text_that_only_mentions_a_notification_is_not_one():
    assert parse_notification("see <task-notification> above") is None
    assert parse_notification("are we missing t.Parallel?") is None


def test_task_kind_falls_back_to_the_id_shape():
    assert task_kind("wh9gntw8t", None) == "workflow"
    assert task_kind("bxtsitwyy", None) == "bash"
    assert task_kind("zzz", "Dynamic workflow \"x\" completed") == "workflow"
    assert task_kind(None, None) == "other"


@pytest.mark.parametrize(
    "name, kind, task_id",
    [
        ("launch-agent.jsonl", "async_launched", "a99a8221a00c2d373"),
        ("launch-skill-fork.jsonl", "forked_skill", "aaba848fe04645123"),
        ("launch-shell.jsonl", "background_bash", "boigiwsir"),
        ("launch-shell-timeout.jsonl", "background_bash", "bgk9vrtgb"),
        ("launch-monitor.jsonl", "monitor", "bxtsitwyy"),
        ("launch-agent-resume.jsonl", "resumed", "aad446f291008f662"),
        ("launch-agent-queued.jsonl", "message_queued", "aae6f316ac814766f"),
    ],
)
def test_real_launch_shapes_of_cc_2_1_2xx(name, kind, task_id):
    t = timeline(REAL / "claudemux" / name)
    assert [(a.kind, a.task_id) for a in t.acks] == [(kind, task_id)]
    assert len(t.launches) == 1 and t.launches[0].tool_use_id == t.acks[0].tool_use_id
    assert t.acks[0].chars > 0


def test_real_2_1_37_queue_and_delivered_turns():
    t = timeline(REAL / "entire" / "6d63c3a51594.jsonl")
    enq = [q for q in t.queue if q.operation == "enqueue" and q.notification]
    delivered = [x for x in t.turns if x.source == "task_notification"]
    assert enq and delivered
    # format §12: each agent notification has an enqueue and a user line with the identical string
    agent_enq = {q.notification.task_id for q in enq if q.notification.task_kind == "agent"}
    agent_turns = {x.notification.task_id for x in delivered if x.notification.task_kind == "agent"}
    assert agent_enq <= agent_turns
    # a plain prompt typed while busy is queued too, and is not a notification
    assert any(q.operation == "enqueue" and q.notification is None for q in t.queue)
    assert t.last_ts is not None


def test_sync_result_remove_and_turn_sources(tmp_path):
    ts = "2026-01-01T00:00:0{}.000Z"
    p = write(tmp_path, [
        {"type": "user", "timestamp": ts.format(0), "message": {"role": "user", "content": "please review"}},
        {"type": "assistant", "timestamp": ts.format(1), "message": {"role": "assistant", "id": "m1", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Task", "input": {"description": "d", "prompt": "p", "run_in_background": True}}]}},
        {"type": "user", "timestamp": ts.format(2), "toolUseResult": {"isAsync": True, "status": "async_launched", "agentId": "a1"},
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "Async agent launched successfully."}]}]}},
        {"type": "progress", "timestamp": ts.format(3), "data": {"type": "agent_progress", "message": {"type": "user", "message": {"role": "user", "content": "x"}}}},
        {"type": "queue-operation", "operation": "enqueue", "timestamp": ts.format(4), "content": V2076},
        {"type": "queue-operation", "operation": "remove", "timestamp": ts.format(5), "content": V2076},
        {"type": "user", "isMeta": True, "timestamp": ts.format(6), "message": {"role": "user", "content": "<system-reminder>"}},
        {"type": "user", "timestamp": ts.format(7), "message": {"role": "user", "content": V2037}},
        {"type": "user", "timestamp": ts.format(8), "toolUseResult": {"status": "completed", "agentId": "a2", "totalTokens": 10},
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "final"}]}},
    ])
    t = timeline(p)
    assert [(x.tool, x.background) for x in t.launches] == [("Task", True)]
    assert [(a.kind, a.task_id, a.chars) for a in t.acks] == [("async_launched", "a1", 34), ("sync_result", "a2", 5)]
    assert [(q.operation, q.notification.task_id) for q in t.queue] == [("enqueue", "a9614d3"), ("remove", "a9614d3")]
    assert [x.source for x in t.turns] == ["human", "meta", "task_notification"]
    assert t.last_ts == 1767225608000.0


def test_ack_kind_of_unknown_results():
    assert ack_kind({"stdout": "x"}) == ("other", None)


def test_last_ts_is_the_last_valid_timestamp(tmp_path):
    # Lines that keep no record have their timestamps parsed late (TaskCollector.TAIL): the
    # result must be what parsing every line would give, across many lines and bad values.
    from measure.akm.jscompat import date_parse
    from measure.measurements.tasks import TaskCollector

    stamps = ["bad", None] + [f"2026-01-01T00:{m:02d}:{s:02d}.000Z" for m in range(10) for s in range(60)]
    stamps[300:305] = ["nope", 5, 7.5, True, "2026-13-01T00:00:00.000Z"]
    for tail in ([], ["x", "2026-02-30T00:00:00.000Z"], [12345], ["2026-01-02T00:00:00.000Z", "junk"]):
        records = [{"type": "assistant", "message": {"content": [{"type": "text", "text": "t"}]}, "timestamp": t} for t in stamps + tail]
        records.insert(400, {"type": "user", "message": {"content": "hi"}, "timestamp": "2026-01-01T09:00:00.000Z"})
        records.append({"type": "progress", "timestamp": "2030-01-01T00:00:00.000Z"})
        c = TaskCollector("f")
        for n, r in enumerate(records, 1):
            c(r, n)
        valid = []
        for r in records[:-1]:
            t = r["timestamp"]
            ms = date_parse(t) if type(t) is str else float(t) if type(t) in (int, float) else None
            if ms is not None and ms == ms:
                valid.append(ms)
        tl = c.result()
        assert tl.last_ts == valid[-1]
        assert tl.turns[0].ts == date_parse("2026-01-01T09:00:00.000Z")


def test_an_ordinary_tool_result_keeps_no_ack_but_its_time_counts(tmp_path):
    # Read/Bash/Edit results acknowledge no task: no Ack is kept, but the line is still the
    # transcript's last activity.
    last = "2026-01-01T00:05:00.000Z"
    p = write(tmp_path, [
        {"type": "assistant", "timestamp": "2026-01-01T00:00:00.000Z",
         "message": {"content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}}]}},
        {"type": "user", "timestamp": last, "toolUseResult": {"stdout": "x"},
         "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}},
    ])
    tl = timeline(p)
    assert tl.acks == ()
    assert tl.last_ts == date_parse_ms(last)


def date_parse_ms(s: str) -> float:
    from measure.akm.jscompat import date_parse

    return date_parse(s)


@pytest.mark.parametrize("name", [["Task"], {"a": 1}, 7, None])
def test_a_tool_name_that_is_not_a_string_is_no_launch(tmp_path, name):
    # A list or object `name` is unhashable: a set lookup on it raised, and the session was lost.
    p = write(tmp_path, [
        {"type": "assistant", "timestamp": "2026-01-01T00:00:00.000Z",
         "message": {"content": [{"type": "tool_use", "id": "t1", "name": name, "input": {}}]}},
    ])
    assert timeline(p).launches == ()


def test_agent_progress_names_the_spawning_call_of_each_agent():
    # Real 2.1.38: every sync Task's agent_progress lines carry its agentId and the Task's tool_use id.
    t = timeline(REAL / "spotter" / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
    progress = dict(t.agent_progress)
    assert len(progress) == len(t.agent_progress)  # one entry per agent, its first line's
    sync = [a for a in t.acks if a.kind == "sync_result"]
    assert len(sync) >= 2 and all(progress[a.task_id] == a.tool_use_id for a in sync)
    assert all(x.source != "progress" for x in t.turns)


def test_a_stopped_spawn_and_a_footer_only_result_are_acknowledgements(tmp_path):
    ts = "2026-01-01T00:00:0{}.000Z"

    def call(i, tid, name):
        return {"type": "assistant", "timestamp": ts.format(i), "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": tid, "name": name, "input": {"description": "d", "prompt": "p"}}]}}

    def res(i, tid, content, tur, is_error=True):
        block = {"type": "tool_result", "tool_use_id": tid, "content": content, **({"is_error": True} if is_error else {})}
        return {"type": "user", "timestamp": ts.format(i), "toolUseResult": tur, "message": {"role": "user", "content": [block]}}

    rejected = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit)."
    p = write(tmp_path, [
        call(0, "t1", "Task"), res(1, "t1", rejected, "User rejected tool use"),
        call(2, "t2", "Agent"), res(3, "t2", "[Request interrupted by user for tool use]", "Error: [Request interrupted by user for tool use]"),
        call(4, "t3", "Task"), res(5, "t3", [{"type": "text", "text": "done"}, {"type": "text", "text": "agentId: a3 (for resuming)"}],
                                   {"status": "completed"}, is_error=False),
        call(6, "t4", "Edit"), res(7, "t4", rejected, "User rejected tool use"),  # not a spawn: no ack
        call(8, "t5", "Agent"), res(9, "t5", rejected, None),  # no toolUseResult: the error text says it
    ])
    t = timeline(p)
    assert [(a.kind, a.tool_use_id, a.task_id, a.from_text) for a in t.acks] == [
        ("rejected", "t1", None, False), ("interrupted", "t2", None, False), ("sync_result", "t3", "a3", True),
        ("rejected", "t5", None, False)]
    assert [(x.tool, x.description) for x in t.launches] == [("Task", "d"), ("Agent", "d"), ("Task", "d"), ("Agent", "d")]  # Edit is no task tool
