"""measure/runner/redact.py: --redact leaves no name or id of the input (issue #17)."""

from __future__ import annotations

from pathlib import Path

from measure.runner.job import SessionOutcome, columns
from measure.runner.redact import (
    protect_outcome,
    redact,
    redact_name,
    redact_path,
    redact_reason,
)


def test_paths_keep_their_layout_and_lose_every_name():
    p = redact_path("proj/sess/subagents/workflows/wf_abc/agent-xyz.meta.json")
    parts = p.split("/")
    assert parts[0] == redact("proj") and parts[1] == redact("sess")
    assert parts[2:4] == ["subagents", "workflows"] and parts[4] == "wf_" + redact("abc")
    assert parts[5] == "agent-" + redact("xyz") + ".meta.json"
    # a legacy top-level agent-* session: the id is hashed too
    assert redact_path("proj/agent-legacy1.jsonl") == redact("proj") + "/agent-" + redact("legacy1") + ".jsonl"
    assert redact_path("subagents/s.jsonl").split("/")[0] == redact("subagents")  # a project folder
    assert redact_name("agent-xyz") == "agent-" + redact("xyz")
    assert redact_path("p/name\udcff.jsonl").endswith(".jsonl")  # a name that is not UTF-8


def test_reasons_lose_the_file_names_they_carry():
    r = redact_reason("readSession failed: proj/sess/subagents/agent-x.jsonl: No such device or address")
    assert "proj" not in r and "agent-x" not in r and r.endswith(": No such device or address")
    assert redact_reason("2 line(s) are not JSON and were skipped") == "2 line(s) are not JSON and were skipped"


def _outcome():
    o = SessionOutcome("p/s.jsonl")
    o.tables["subagents"] = columns([
        {"session_id": "s", "session_path": "p/s.jsonl", "subagent_path": "p/s/subagents/agent-a.jsonl", "agent_id": "agent-a",
         "agent_type": "Explore", "description": "fix the login bug"},
        {"session_id": "s", "session_path": "p/s.jsonl", "subagent_path": "p/s/subagents/agent-b.jsonl", "agent_id": "agent-b",
         "agent_type": "outside type", "description": "outside text"},
    ])
    o.tables["duplicates"] = columns([{"session_path": "p/s.jsonl", "subagent_path": "p/s/subagents/agent-b.jsonl",
                                       "tool_use_id": "toolu_1", "agent_id": "agent-b", "description": "outside text"}])
    o.errors = [{"path": "p/s/subagents/agent-b.meta.json", "session_path": "p/s.jsonl", "kind": "outside_link", "count": 1, "reason": "x"}]
    return o


def test_descriptions_only_with_show_excerpts_and_never_from_outside():
    o = _outcome()
    protect_outcome(o, redact_names=False, show_excerpts=False)
    assert o.tables["subagents"]["description"] == [None, None]
    assert o.tables["subagents"]["agent_type"] == ["Explore", None]
    o = _outcome()
    protect_outcome(o, redact_names=False, show_excerpts=True)
    assert o.tables["subagents"]["description"] == ["fix the login bug", None]
    assert o.tables["duplicates"]["tool_use_id"] == [None]


def test_redacted_outcomes_hold_no_name():
    o = _outcome()
    protect_outcome(o, redact_names=True, show_excerpts=True)
    text = repr(o)
    for name in ("login", "Explore", "agent-a'", "'p/", "toolu_1", "'s'"):
        assert name not in text, name
    assert o.session_path == redact_path("p/s.jsonl")


def test_versions_models_and_statuses_are_kept_and_every_id_beside_them_hashed(tmp_path):
    """The README's choice: Claude Code versions, model names and notification statuses are a public
    vocabulary, kept under --redact; the session ids of the same rows are hashed."""
    import polars as pl

    from measure.runner.job import RunParams
    from measure.runner.run import run_measurement

    root = Path(__file__).resolve().parent.parent / "fixtures" / "default"
    kept = {("session_info", "cc_version"), ("background", "cc_version"), ("tokens", "models"), ("background", "status")}
    seen = {}
    for redacted in (False, True):
        run_measurement(root, tmp_path / str(redacted), RunParams(redact=redacted, file_time_ms=1.7e12), jobs=1)
        seen[redacted] = {t: pl.read_parquet(tmp_path / str(redacted) / f"{t}.parquet") for t, _ in kept}
    for table, column in sorted(kept):
        plain, hidden = seen[False][table], seen[True][table]
        assert plain[column].drop_nulls().n_unique() > 1, (table, column)  # the fixture has several to compare
        assert sorted(plain[column].drop_nulls()) == sorted(hidden[column].drop_nulls()), (table, column)
        assert set(plain["session_id"]).isdisjoint(hidden["session_id"]) and all(i.startswith("sha256:") for i in hidden["session_id"])
