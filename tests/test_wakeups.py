"""measure.measurements.wakeups: notification turns, their calls, batchability and the counterfactual."""

from __future__ import annotations

from pathlib import Path

import orjson

from measure.akm.read import read_session
from measure.measurements.cost import cost_tables
from measure.measurements.lines import SessionLines
from measure.measurements.subagents import classify
from measure.measurements.wakeups import wakeups

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"
TS = "2026-01-01T00:{:02d}:00.000Z"


def note(task: str, result: str = "done") -> str:
    return (f"<task-notification>\n<task-id>{task}</task-id>\n<status>completed</status>\n"
            f'<summary>Agent "{task}" completed</summary>\n<result>{result}</result>\n</task-notification>')


def user(n: int, content, **extra) -> dict:
    return {"type": "user", "timestamp": TS.format(n), "message": {"role": "user", "content": content}, **extra}


def call(n: int, mid: str, cr: int) -> dict:
    return {"type": "assistant", "version": "2.1.37", "timestamp": TS.format(n), "message": {
        "role": "assistant", "id": mid, "model": "m", "content": [{"type": "text", "text": "ok"}],
        "usage": {"input_tokens": 1, "cache_creation_input_tokens": 10, "cache_read_input_tokens": cr, "output_tokens": 2}}}


def queue(n: int, op: str, content: str = "") -> dict:
    return {"type": "queue-operation", "operation": op, "timestamp": TS.format(n), "content": content}


def measure(tmp_path: Path, records: list[dict]) -> dict[str, list[dict]]:
    proj = tmp_path / "root" / "-p"
    proj.mkdir(parents=True)
    path = proj / "s.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    lines = SessionLines()
    session, _ = read_session(str(path), str(tmp_path / "root"), file_time_ms=0.0, observe=lines.observe)
    return cost_tables(session, lines, classify(session, lines.get("tasks")))


def test_three_queued_notifications_two_batchable_and_a_removed_one(tmp_path):
    out = measure(tmp_path, [
        user(0, "review these"),
        call(1, "m1", 100),
        queue(2, "enqueue", note("a1")),
        queue(3, "enqueue", note("a2")),
        queue(4, "enqueue", note("a3")),
        queue(5, "enqueue", note("a4")),
        queue(5, "remove"),  # enqueue + remove (2.0.76 writes no content on remove): no turn, not a wake-up
        call(6, "m2", 200),  # the parent's own turn goes on: notifications wait for its end
        queue(10, "dequeue"),
        user(10, note("a1")),
        call(11, "m3", 1000), call(11, "m3", 1000), call(12, "m4", 1100),  # m3 streamed on two lines
        user(12, "<system-reminder>x</system-reminder>", isMeta=True),  # meta: not a turn boundary
        call(13, "m5", 1200),
        queue(14, "dequeue"),
        user(14, note("a2")),
        call(15, "m6", 1300),
        queue(16, "dequeue"),
        user(16, note("a3")),
        call(17, "m7", 1400),
        user(20, "thanks"),
        call(21, "m8", 1500),
    ])
    rows = out["wakeups"]
    assert [r["task_id"] for r in rows] == ["a1", "a2", "a3"]
    assert [r["api_calls"] for r in rows] == [3, 1, 1]
    assert [r["cache_read_tokens"] for r in rows] == [3300, 1300, 1400]
    assert [r["batchable_with_previous"] for r in rows] == [False, True, True]
    assert [r["batch"] for r in rows] == [1, 1, 1]
    assert rows[0]["enqueued_at"] == "2026-01-01T00:02:00.000Z" and rows[0]["delivered_at"] == "2026-01-01T00:10:00.000Z"
    assert [r["waited_seconds"] for r in rows] == [480.0, 660.0, 720.0]
    s = out["cost_sessions"][0]
    assert (s["notifications_enqueued"], s["notifications_undelivered"], s["wakeup_turns"]) == (4, 1, 3)
    assert (s["wakeup_calls"], s["wakeup_cache_read_tokens"]) == (5, 6000)
    assert (s["batchable_wakeups"], s["batched_turns"]) == (2, 1)
    # assumption: the batch turn costs what its head's turn cost, so the two later turns are saved
    assert (s["batch_saved_calls"], s["batch_saved_cache_read_tokens"]) == (2, 2700)
    assert s["batch_saved_tokens"] == 2700 + 2 * (1 + 10 + 2)


def test_notifications_that_arrive_one_at_a_time_are_not_batchable(tmp_path):
    out = measure(tmp_path, [
        user(0, "go"), call(1, "m1", 10),
        queue(2, "enqueue", note("a1")), queue(2, "dequeue"), user(2, note("a1")), call(3, "m2", 20),
        queue(4, "enqueue", note("a2")), queue(4, "dequeue"), user(4, note("a2")), call(5, "m3", 30),
        user(6, note("a3")),  # delivered with no queue line (older builds): no enqueue time
    ])
    rows = out["wakeups"]
    assert [r["batchable_with_previous"] for r in rows] == [False, False, False]
    assert [r["batch"] for r in rows] == [1, 2, 3]
    assert rows[2]["enqueued_at"] is None and rows[2]["waited_seconds"] is None and rows[2]["api_calls"] == 0
    assert out["cost_sessions"][0]["batch_saved_calls"] == 0


def test_a_chain_batches_only_what_was_queued_at_the_head(tmp_path):
    # a2 was queued before a1's turn; a3 only before a2's turn: pairwise both are batchable, but
    # at a1's boundary only a2 was queued, so the counterfactual makes two batches.
    out = measure(tmp_path, [
        user(0, "go"),
        queue(1, "enqueue", note("a1")), queue(1, "enqueue", note("a2")),
        queue(2, "dequeue"), user(2, note("a1")), call(3, "m1", 10),
        queue(4, "enqueue", note("a3")),
        queue(5, "dequeue"), user(5, note("a2")), call(6, "m2", 20),
        queue(7, "dequeue"), user(7, note("a3")), call(8, "m3", 30),
    ])
    rows = out["wakeups"]
    assert [r["batchable_with_previous"] for r in rows] == [False, True, True]
    assert [r["batch"] for r in rows] == [1, 1, 2]
    assert out["cost_sessions"][0]["batch_saved_calls"] == 1


def test_real_2_1_37_every_enqueue_is_matched_to_its_turn():
    root = REAL
    lines = SessionLines()
    session, _ = read_session(str(root / "entire" / "6d63c3a51594.jsonl"), str(root), file_time_ms=0.0, observe=lines.observe)
    label = session.parent.path
    found = wakeups(lines.get("tasks")[label], lines.get("usage")[label])
    assert found and all(w.enqueue is not None and w.enqueue.line < w.turn.line for w in found)
    assert all(w.turn.ts >= w.enqueue.ts for w in found)
    assert sum(len(w.calls) for w in found) <= 102  # the session's calls (entire's token_usage)
