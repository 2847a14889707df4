"""measure.measurements.duplicates: only copies of a subagent's result are pairs (#10 defect 3)."""

from __future__ import annotations

from measure.akm.prompt import load_template
from measure.akm.read import list_sessions, read_session
from measure.measurements import tasks  # noqa: F401  (registers the "tasks" collector)
from measure.measurements.duplicates import duplicate_rows
from measure.measurements.lines import SessionLines
from measure.measurements.strategies import Params, SessionContext, run_all
from measure.paths import root as repo_root


def _rows(root: str):
    for listing in list_sessions(root):
        lines = SessionLines()
        session, _ = read_session(listing.path, root, observe=lines.observe)
        timelines = lines.get("tasks")
        ctx = SessionContext(session, Params(template=load_template(), keep_prompts=False), timelines=timelines)
        results = run_all(ctx, ["fold", "fold_dedupe_sync"])
        bare = SessionContext(session, ctx.params)  # no timelines: no tool result is known to be an acknowledgement
        yield timelines[session.ref.path], duplicate_rows(ctx, results), bare.pairs, results


def test_async_launch_acknowledgements_are_not_duplicates():
    """On fixtures/default five agents were paired with their "Async agent launched" result
    (overlap 0.02-0.04) and counted as copies; none is a pair now."""
    root = str(repo_root() / "fixtures" / "default")
    acked = blind = 0
    for parent, rows, unfiltered, _ in _rows(root):
        acks = {a.task_id for a in parent.acks if a.kind == "async_launched"}
        acked += len(acks)
        for row in rows:
            assert "stub_would_save_chars" in row
            if row["pairing"] == "agent_id_tool_result":
                assert row["agent_id"].removeprefix("agent-") not in acks
        blind += sum(p.pairing == "agent_id_tool_result" and p.agent_id.removeprefix("agent-") in acks for p in unfiltered)
    assert acked >= 5 and blind >= 5


def test_the_sync_dedupe_stubs_exactly_the_sync_pairs_with_both_copies_in_the_fold_prompt():
    stubbed = 0
    for root in ("default", "real"):
        for _, rows, _, results in _rows(str(repo_root() / "fixtures" / root)):
            both = sum(r["pairing"] == "agent_id_tool_result" and r["both_in_prompt"] for r in rows)
            assert results["fold_dedupe_sync"].stubbed == both
            stubbed += both
    assert stubbed >= 7  # fixtures/default holds 5 such pairs, fixtures/real 2
