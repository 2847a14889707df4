"""measure.measurements.duplicates: only copies of a subagent's result are pairs (#10 defect 3)."""

from __future__ import annotations

from measure.akm.prompt import load_template
from measure.akm.read import list_sessions, read_session
from measure.measurements import tasks  # noqa: F401  (registers the "tasks" collector)
from measure.measurements.duplicates import async_launch_ids, duplicate_rows
from measure.measurements.lines import SessionLines
from measure.measurements.strategies import Params, SessionContext, run_all
from measure.paths import root as repo_root


def _rows(root: str):
    for listing in list_sessions(root):
        lines = SessionLines()
        session, _ = read_session(listing.path, root, observe=lines.observe)
        ctx = SessionContext(session, Params(template=load_template(), keep_prompts=False))
        results = run_all(ctx, ["fold"])
        yield lines, duplicate_rows(ctx, results, async_launch_ids(lines.get("tasks")))


def test_async_launch_acknowledgements_are_not_duplicates():
    """On fixtures/default five agents were paired with their "Async agent launched" result
    (overlap 0.02-0.04) and counted as copies; none is a pair now."""
    root = str(repo_root() / "fixtures" / "default")
    acked = 0
    for lines, rows in _rows(root):
        acks = async_launch_ids(lines.get("tasks"))
        acked += len(acks)
        for row in rows:
            if row["pairing"] == "agent_id_tool_result":
                assert row["agent_id"].removeprefix("agent-") not in acks
    assert acked >= 5
