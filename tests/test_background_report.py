"""The 04-background page: views and figures over background/replay rows built from hand-made transcripts."""

from __future__ import annotations

import polars as pl
import pytest
from matplotlib.figure import Figure

from measure.measurements.background import background_rows
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
from tests.test_plots import png
from tests.test_replay import replayed


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Report:
    tmp = tmp_path_factory.mktemp("bgreport")
    killed = note_2219("a2", "toolu_2", status="killed", result=None)
    parent = [human(0), launch(1, "toolu_1"), ack(2, "toolu_1", ASYNC), launch(3, "toolu_2"),
              ack(4, "toolu_2", {**ASYNC, "agentId": "a2"}), queue(10, "enqueue", killed), queue(11, "remove", killed),
              say(30, "I will wait."), queue(300, "enqueue", note_2219("a1", "toolu_1"))]
    session, timelines = read(tmp, parent, {"a1": sub_lines(2, 10, 20, 290)})
    bg = background_rows(session, timelines)
    rp = replayed(session, timelines, "every:1")
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
    assert views.late_table(report)["task id"].to_list() == ["a1"]
    t = views.replay_table(report)
    assert t["strategy"].to_list()[0] == "link" and t.filter(t["strategy"] == "hybrid")["wasted"].to_list() == [1]


def test_empty_run_says_so():
    empty = Report(tables={name: frame(TABLES[name], []) for name in TABLES})
    assert "launched a background task" in views.background_summary(empty).data
    # An empty root was replayed like any other: nothing to replay is not "did not replay".
    assert views.replay_summary(empty).data == "No sessions were measured, so there was nothing to replay."


def test_a_run_without_replay_says_so(report):
    no_replay = Report(tables={**report.tables, "replay": report.tables["replay"].clear()})
    assert "did not replay" in views.replay_summary(no_replay).data


def test_stub_sentence_follows_the_data(report):
    """'A tool that trusts the launch result records the stub' only where a task ran longer than its stub."""
    assert "records the stub, not the work" in views.background_summary(report).data
    bg = report.tables["background"].with_columns(run_seconds=pl.col("stub_seconds"))
    same = Report(tables={**report.tables, "background": bg})
    text = views.background_summary(same).data
    assert "records the stub" not in text and "never understates" in text


@pytest.mark.parametrize("name", ["background_stub_vs_run", "background_deliveries", "replay_re_extractions"])
def test_figures(report, name, tmp_path):
    table, fn = plots.FIGURES[name]
    fig = fn(report[table])
    assert isinstance(fig, Figure) and fig.axes[0].get_title()
    a, b = png(fig, tmp_path / "a.png").read_bytes(), png(fn(report[table]), tmp_path / "b.png").read_bytes()
    assert a == b


def test_report_parser_takes_the_replay_schedule():
    import click

    from measure.cli import cli, main  # the report's options live in measure/cli.py

    report_command = cli.get_command(click.Context(cli), "report")
    assert report_command.make_context("report", []).params["replay_at"] == "turn_end"
    assert report_command.make_context("report", ["--replay-at", "every:5"]).params["replay_at"] == "every:5"
    with pytest.raises(SystemExit):
        main(["report", "--replay-at", "hourly"])


def test_never_delivered_breakdown_only_when_some_were_never_delivered(report):
    text = views.delivery_summary(report).data
    assert "1 never reached a turn nor were removed (1 with a notification still in the queue, 0 with none at all)." in text
    bg = report.tables["background"].filter(pl.col("delivery") != "never")
    text = views.delivery_summary(Report(tables={**report.tables, "background": bg})).data
    assert "0 never reached a turn nor were removed." in text and "the rest with none at all" not in text


def test_no_background_tasks_does_not_call_the_replay_empty(report):
    none = Report(tables={**report.tables, "background": report.tables["background"].clear()})
    text = views.background_summary(none).data
    assert "the rest of this page is empty" not in text and "The replay at the end covers every session" in text


def test_late_results_sentence_follows_the_data(report):
    assert "\n1 background results completed after" in views.replay_summary(report).data
    rp = report.tables["replay"].with_columns(pl.lit(0).alias("late_results"))
    text = views.replay_summary(Report(tables={**report.tables, "replay": rp})).data
    assert "completed after their parent's last turn" not in text
    assert "No background result completed after its parent's last turn" in text
