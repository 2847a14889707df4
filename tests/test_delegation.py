"""The delegation table on hand-written roots: delivery shapes, what reaches each prompt, the copy rule."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from measure.akm.records import Event, Sidecar
from measure.measurements.delegation import (
    COPY_JACCARD,
    copy_words,
    delivery,
    final_report,
    is_copy,
)
from measure.measurements.subagents import Launches, Subagent
from measure.measurements.tasks import Ack, Launch, Notification, Timeline, Turn
from measure.runner.job import RunParams
from measure.runner.run import run_measurement
from measure.schema import COPY_RULE, DELEGATION, SESSIONS

PIN = 1_780_000_000_000
PROJECT = "-home-dev-app"

# ------------------------------------------------------------------------------------------------
# Building small roots from hand-written JSONL
# ------------------------------------------------------------------------------------------------


def ts(sec: int) -> str:
    return f"2026-03-01T10:{sec // 60:02d}:{sec % 60:02d}.000Z"


def user(t: int, content, **extra) -> dict:
    return {"type": "user", "timestamp": ts(t), "message": {"role": "user", "content": content}, **extra}


def assistant(t: int, *blocks) -> dict:
    return {"type": "assistant", "timestamp": ts(t), "message": {"role": "assistant", "content": list(blocks)}}


def text(s: str) -> dict:
    return {"type": "text", "text": s}


def tool_use(tid: str, name: str, inp: dict) -> dict:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp}


def tool_result(tid: str, content) -> dict:
    return {"type": "tool_result", "tool_use_id": tid, "content": content}


def write_session(root: Path, sid: str, parent: list[dict], subagents: dict[str, list[dict]] | None = None) -> None:
    proj = root / PROJECT
    proj.mkdir(parents=True, exist_ok=True)
    (proj / f"{sid}.jsonl").write_text("".join(json.dumps(l) + "\n" for l in parent))
    for name, lines in (subagents or {}).items():
        d = proj / sid / "subagents"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{name}.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))


WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec "
    "romeo sierra tango uniform victor whiskey xray yankee zulu"
).split()


def filler(i: int, n: int = 12) -> str:
    """A distinct sentence of about 100 chars (no copy of anything else)."""
    return f"Step {i}: " + " ".join(f"{WORDS[(i * 7 + k) % len(WORDS)]}{i}{k}" for k in range(n)) + "."


PROMPT = (
    "Investigate why the cache eviction tests fail intermittently on the continuous integration runners, "
    "reproduce the failure locally, find the root cause and report the smallest fix with evidence."
)
REPORT = (
    "Root cause found: the eviction ordering test depends on wall clock timestamps; under clock skew two "
    "entries compare equal and their ordering flips. Fix: inject a monotonic insertion counter into every "
    "cache entry and break ties with it. Verified with twenty repeated runs, all passing after the change."
)


def launch(t: int, tid: str, background: bool) -> dict:
    inp = {"description": "Investigate flaky cache tests", "prompt": PROMPT, "subagent_type": "general-purpose"}
    if background:
        inp["run_in_background"] = True
    return assistant(t, text("Delegating the investigation."), tool_use(tid, "Agent", inp))


def async_ack(t: int, tid: str, aid: str) -> dict:
    body = f"Async agent launched successfully.\nagentId: {aid} (use SendMessage to continue)\noutput_file: /tmp/tasks/{aid}.output"
    return user(t, [tool_result(tid, body)], toolUseResult={"isAsync": True, "status": "async_launched", "agentId": aid,
                                                           "description": "Investigate flaky cache tests", "prompt": PROMPT})


def sync_result(t: int, tid: str, aid: str, report: str = REPORT) -> dict:
    content = [text(report), text(f"agentId: {aid} (for resuming to continue this agent's work if needed)\n"
                                  "<usage>total_tokens: 4100\ntool_uses: 1\nduration_ms: 5000</usage>")]
    return user(t, [tool_result(tid, content)], toolUseResult={"status": "completed", "agentId": aid, "content": content,
                                                              "totalTokens": 4100, "totalToolUseCount": 1})


def notification(aid: str, report: str = REPORT) -> str:
    return (f"<task-notification>\n<task-id>{aid}</task-id>\n<status>completed</status>\n"
            f"<summary>Agent \"Investigate flaky cache tests\" completed</summary>\n<result>{report}</result>\n</task-notification>")


def subagent(aid: str, start: int, end: int, with_tools: bool = True, report: str = REPORT) -> list[dict]:
    side = {"isSidechain": True, "agentId": aid}
    lines = [user(start, PROMPT, **side)]
    if with_tools:
        lines.append({**assistant(start + 1, tool_use("toolu_sub1", "Bash", {"command": "pytest tests/cache -x --count 20 -p no:randomly"})), **side})
        lines.append({**user(start + 2, [tool_result("toolu_sub1", "FAILED tests/cache/test_lru.py::test_order_under_skew - "
                                                     "AssertionError: expected [k1, k2] got [k2, k1] (clock skew 3ms)")]), **side})
    lines.append({**assistant(end, text(report)), **side})
    return lines


def undelivered_root(root: Path) -> Path:
    """Background agents acknowledged at launch whose results never come back to the parent."""
    a1, a2 = "a1111111111111111", "a2222222222222222"
    parent = [
        user(0, "Please look into the flaky cache tests while you update the changelog."),
        launch(1, "toolu_1", True),
        async_ack(2, "toolu_1", a1),
        launch(3, "toolu_2", True),
        async_ack(4, "toolu_2", a2),
        assistant(5, text("Meanwhile I am rewording the changelog entry for the release notes.")),
    ]
    subs = {f"agent-{a1}": subagent(a1, 2, 30), f"agent-{a2}": subagent(a2, 4, 5, with_tools=False)}
    write_session(root, "33333333-cccc-4000-8000-000000000003", parent, subs)
    return root


def delivered_root(root: Path) -> Path:
    """One sync result, one consumed notification, one notification only enqueued+removed, a compaction helper."""
    s, b, r = "a5555555555555555", "a6666666666666666", "a7777777777777777"
    note_b, note_r = notification(b), notification(r)
    parent = [
        user(0, "Investigate the flaky cache tests three ways and compare."),
        launch(1, "toolu_s", False),
        sync_result(9, "toolu_s", s),
        launch(10, "toolu_b", True),
        async_ack(11, "toolu_b", b),
        launch(12, "toolu_r", True),
        async_ack(13, "toolu_r", r),
        {"type": "queue-operation", "operation": "enqueue", "timestamp": ts(20), "content": note_b},
        {"type": "queue-operation", "operation": "dequeue", "timestamp": ts(21), "content": ""},
        user(21, note_b),
        {"type": "queue-operation", "operation": "enqueue", "timestamp": ts(22), "content": note_r},
        {"type": "queue-operation", "operation": "remove", "timestamp": ts(23), "content": note_r},
        assistant(24, text("All three investigations agree on the monotonic counter fix; applying it now.")),
    ]
    subs = {
        f"agent-{s}": subagent(s, 2, 8),
        f"agent-{b}": subagent(b, 12, 19),
        f"agent-{r}": subagent(r, 14, 22),
        "agent-acompact-1234567": [user(15, "Summarize the conversation so far for compaction purposes please."),
                                   assistant(16, text("Summary: the user asked for three investigations of flaky tests."))],
    }
    write_session(root, "44444444-dddd-4000-8000-000000000004", parent, subs)
    return root


def measure(root: Path, out: Path, budget: int = 80_000) -> dict[str, pl.DataFrame]:
    run_measurement(root, out, RunParams(budget=budget, file_time_ms=PIN), jobs=1, cache_dir=None)
    return {n: pl.read_parquet(out / f"{n}.parquet") for n in ("sessions", "delegation", "verdict", "eviction")}


def by(df: pl.DataFrame, **where) -> pl.DataFrame:
    for k, v in where.items():
        df = df.filter(pl.col(k) == v)
    return df


# ------------------------------------------------------------------------------------------------
# The copy rule
# ------------------------------------------------------------------------------------------------


def test_copy_rule_is_documented_once_and_tested():
    assert "Jaccard" in COPY_RULE and str(COPY_JACCARD) in COPY_RULE and COPY_RULE in DELEGATION.doc
    assert is_copy(copy_words(REPORT), copy_words(REPORT + "\nagentId: a1 (for resuming)"))
    assert not is_copy(copy_words(REPORT), copy_words(PROMPT))
    # a tool result rendered by JSON.stringify: \n escapes do not glue words together
    rendered = "[tool_result] " + json.dumps([{"type": "text", "text": REPORT.replace(". ", ".\n")}])
    assert is_copy(copy_words(REPORT), copy_words(rendered))
    assert not is_copy(frozenset(), frozenset())


def test_final_report_is_the_last_assistant_event():
    e = [Event("user", 1, "prompt text", "f", 11), Event("assistant", 2, "the report", "f", 10), Event("user", 3, "late", "f", 4)]
    assert final_report(tuple(e)).text == "the report"
    assert final_report((e[0],)) is None


def test_delivery_reads_the_resolved_launch():
    def note(aid):
        return Notification("task-notification", aid, None, "completed", "agent", 10, None, 100)

    tl = Timeline(
        launches=(Launch(1, None, "t4", "Agent", False), Launch(2, None, "t5", "Agent", False)),
        acks=(Ack(3, None, "t1", "sync_result", "s1", 50), Ack(5, None, "t2", "async_launched", "b1", 40),
              Ack(6, None, "t3", "async_launched", "b2", 40), Ack(7, None, "t5", "rejected", None, 40)),
        queue=(),
        turns=(Turn(9, None, "task_notification", note("b1")),),
        last_ts=None,
        agent_progress=(("r1", "t5"),),
    )
    launches = Launches({"parent": tl})

    def got(aid, sidecar=None):
        launch, source, tool_use, acked = launches.resolve(aid, sidecar)
        return delivery(Subagent("task_agent", launch, source, tool_use, acked, 0), aid == "b1"), launch, source

    assert got("s1") == ("tool_result", "sync", "tool_result_ack")
    assert got("b1") == ("notification", "background", "tool_result_ack")
    assert got("b2") == ("launch_ack_only", "background", "tool_result_ack")
    assert got("r1") == ("rejected", "rejected", "agent_progress")
    # a sidecar naming a call whose result never came: launched, nothing delivered
    assert got("c1", Sidecar("ok", "general-purpose", "d", "t4")) == ("none", "sync", "sidecar_tool_use_id")
    assert got("zz") == ("none", "unknown", "none")
    assert Launches(None).resolve("s1", None) == ("unknown", "none", None, False)


# ------------------------------------------------------------------------------------------------
# End to end on small roots
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def undelivered(tmp_path_factory):
    base = tmp_path_factory.mktemp("undelivered")
    return measure(undelivered_root(base / "projects"), base / "out")


@pytest.fixture(scope="module")
def delivered(tmp_path_factory):
    base = tmp_path_factory.mktemp("delivered")
    return measure(delivered_root(base / "projects"), base / "out")


def test_undelivered_results_reach_fold_but_never_link_or_hybrid(undelivered):
    d = undelivered["delegation"]
    assert d.columns == DELEGATION.names
    assert set(d["delivery"]) == {"launch_ack_only"} and set(d["launch"]) == {"background"}
    for st in ("link", "hybrid"):
        rows = by(d, strategy=st)
        assert rows.height == 2 and not any(rows["result_in_prompt"]) and rows["result_chars_in_prompt"].sum() == 0
        assert rows["unique_chars_in_prompt"].sum() == 0
    for st in ("fold", "fold_dedupe_scoped", "chunked"):
        rows = by(d, strategy=st)
        assert all(rows["result_in_prompt"])  # the budget keeps everything here
        assert rows["result_chars_in_prompt"].to_list() == rows["result_chars"].to_list()
    fold = by(d, strategy="fold").sort("agent_id")
    # the report is unique (the parent never got it); the tool call and its output are too; the prompt is a copy
    assert fold["unique_chars_in_prompt"][0] > fold["result_chars"][0] and fold["unique_chars_in_prompt"][1] == fold["result_chars"][1]
    assert fold["completed_after_parent"].to_list() == [True, False]


def test_session_totals_sum_the_delegated_rows(undelivered, delivered):
    assert SESSIONS.names[-6:] == ["delegated_transcripts", "delegated_results", "delegated_results_in_prompt",
                                   "subagent_unique_chars_in_prompt", "rejected_launches", "unknown_transcripts"]
    s = undelivered["sessions"]
    assert by(s, strategy="link")["delegated_results_in_prompt"].to_list() == [0]
    assert by(s, strategy="fold")["delegated_results_in_prompt"].to_list() == [2]
    assert set(s["delegated_transcripts"]) == {2} and set(s["delegated_results"]) == {2}
    d = delivered["delegation"]
    for st, total in by(delivered["sessions"]).select("strategy", "subagent_unique_chars_in_prompt").iter_rows():
        assert total == by(d, strategy=st, delegated=True)["unique_chars_in_prompt"].sum()
    assert set(delivered["sessions"]["delegated_transcripts"]) == {3}  # the compaction helper is not delegated work


def test_each_delivery_shape_is_classified(delivered):
    d = by(delivered["delegation"], strategy="link").sort("agent_id")
    got = dict(zip(d["agent_id"], zip(d["kind"], d["delivery"], d["launch"], d["result_in_prompt"])))
    assert got == {
        "agent-a5555555555555555": ("task_agent", "tool_result", "sync", True),
        "agent-a6666666666666666": ("task_agent", "notification", "background", True),
        "agent-a7777777777777777": ("task_agent", "launch_ack_only", "background", False),  # `remove` is not delivery
        "agent-acompact-1234567": ("compaction_helper", "none", "unknown", False),
    }
    assert not by(delivered["delegation"], agent_id="agent-acompact-1234567")["delegated"].any()


def test_dedupe_stub_is_not_a_copy_of_the_result(delivered):
    d = delivered["delegation"]
    fold = by(d, strategy="fold", agent_id="agent-a6666666666666666").row(0, named=True)
    dedupe = by(d, strategy="fold_dedupe_scoped", agent_id="agent-a6666666666666666").row(0, named=True)
    # fold keeps both copies; the scoped dedupe stubs the notification, leaving the subagent's own copy
    assert fold["result_chars_in_prompt"] > dedupe["result_chars_in_prompt"] > 0
    assert by(delivered["sessions"], strategy="fold_dedupe_scoped")["stubbed"].to_list() == [1]


def test_sync_dedupe_stubs_a_sync_copy_whose_report_is_kept(delivered):
    """A root with a synchronous result whose both copies fit the budget: fold_dedupe_sync's prompt differs from fold's."""
    s = delivered["sessions"]
    fold, sync = (by(s, strategy=st).row(0, named=True) for st in ("fold", "fold_dedupe_sync"))
    assert sync["stubbed"] == 1 and sync["prompt_sha256"] != fold["prompt_sha256"] and sync["prompt_chars"] < fold["prompt_chars"]
    assert by(delivered["eviction"], strategy="fold_dedupe_sync")["stub_saved_chars"].to_list()[0] > 0
    d = by(delivered["delegation"], agent_id="agent-a5555555555555555")
    f, x = (by(d, strategy=st).row(0, named=True) for st in ("fold", "fold_dedupe_sync"))
    assert x["result_in_prompt"] and 0 < x["result_chars_in_prompt"] < f["result_chars_in_prompt"]  # the report's own copy stays
    v = by(delivered["verdict"], criterion="prompt_chars", strategy="fold_dedupe_sync")
    assert v["identity"].to_list() == [None]


def test_sync_dedupe_without_sync_pairs_is_fold_an_identity_labelled(undelivered):
    """No synchronous result (only background launches): fold_dedupe_sync sends fold's prompt, byte for byte."""
    s = undelivered["sessions"]
    assert by(s, strategy="fold_dedupe_sync")["prompt_sha256"].to_list() == by(s, strategy="fold")["prompt_sha256"].to_list()
    assert by(s, strategy="fold_dedupe_sync")["stubbed"].to_list() == [0]
    v = by(undelivered["verdict"], criterion="prompt_chars", strategy="fold_dedupe_sync")
    assert "equal to fold by construction" in v["identity"][0]
