"""The 04-background page: views and figures over background/replay rows built from hand-made transcripts."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure

from measure.measurements.background import background_rows
from measure.measurements.replay import replay_rows
from measure.measurements.strategies import STRATEGIES
from measure.report import plots
from measure.report.views import background as views
from measure.report.views.common import Report
from measure.runner.tables import frame
from measure.schema import TABLES
from tests.test_background import (
    ASYNC,
    ack,
    human,
    launch,
    note_2219,
    queue,
    read,
    say,
    sub_lines,
)
from tests.test_replay import context


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Report:
    tmp = tmp_path_factory.mktemp("bgreport")
    killed = note_2219("a2", "toolu_2", status="killed", result=None)
    parent = [human(0), launch(1, "toolu_1"), ack(2, "toolu_1", ASYNC), launch(3, "toolu_2"),
              ack(4, "toolu_2", {**ASYNC, "agentId": "a2"}), queue(10, "enqueue", killed), queue(11, "remove", killed),
              say(30, "I will wait."), queue(300, "enqueue", note_2219("a1", "toolu_1"))]
    session, timelines = read(tmp, parent, {"a1": sub_lines(2, 10, 20, 290)})
    bg = background_rows(session, timelines)
    rp = replay_rows(context(session), timelines, tuple(STRATEGIES), "every:1", bg)
    keyed = {"session_id": session.ref.session_id, "session_path": session.ref.path}
    rows = {name: [] for name in TABLES}
    rows["background"] = [{**keyed, **r} for r in bg]
    rows["replay"] = [{**keyed, **r} for r in rp]
    return Report(tables={name: frame(TABLES[name], rows[name]) for name in TABLES})


def test_summaries_are_computed_from_the_rows(report):
    text = views.background_summary(report).data
    assert text.startswith("2 background tasks in 1 sessions.") and "a median 1.0 s after the launch" in text
    delivery = views.delivery_summary(report).data
    assert "0 of 2 background results reached the parent as a turn. 1 were enqueued and removed" in delivery
    assert "1 completed after the parent's last turn; 1 of those have a subagent transcript" in delivery
    replay = views.replay_summary(report).data
    assert "- **hybrid** would extract 2 times, re-extracting 1 sessions 1 times" in replay
    assert "it would re-extract 1 sessions 1 times with an unchanged prompt: 1 LLM calls" in replay
    assert "- **fold** would extract 2 times" in replay and "\n1 background results completed after" in replay


def test_tables(report):
    assert views.deliveries_table(report).rows() == [("agent", "2.1.219", 0, 1, 1, 2)]
    assert views.undelivered_table(report).height == 2
    assert views.late_table(report)["task_id"].to_list() == ["a1"]
    t = views.replay_table(report)
    assert t["strategy"].to_list()[0] == "link" and t.filter(t["strategy"] == "hybrid")["wasted"].to_list() == [1]


def test_empty_run_says_so():
    empty = Report(tables={name: frame(TABLES[name], []) for name in TABLES})
    assert "launched a background task" in views.background_summary(empty).data
    assert "did not replay" in views.replay_summary(empty).data


@pytest.mark.parametrize("name", ["background_stub_vs_run", "background_deliveries", "replay_re_extractions"])
def test_figures(report, name, tmp_path):
    table, fn = plots.FIGURES[name]
    fig = fn(report[table])
    assert isinstance(fig, Figure) and fig.axes[0].get_title()
    a, b = plots.save(fig, tmp_path / "a.png").read_bytes(), plots.save(fn(report[table]), tmp_path / "b.png").read_bytes()
    assert a == b


def test_report_parser_takes_the_replay_schedule():
    from measure.cli import parse_args  # the report's options live in measure/cli.py (issue #14)

    assert parse_args(["report"]).replay_at == "turn_end"
    assert parse_args(["report", "--replay-at", "every:5"]).replay_at == "every:5"
    with pytest.raises(SystemExit):
        parse_args(["report", "--replay-at", "hourly"])
