"""Views of 06-extraction and the overview's extraction section (measure.report.views.extraction)."""

import shutil
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest

from measure.extract.compare import SOURCES
from measure.extract.run import rebuild
from measure.report import plots
from measure.report.style import SOURCE_LABELS
from measure.report.views import extraction
from measure.report.views.common import Report
from measure.schema import EXTRACTION_TABLES

RECORDED = Path(__file__).parent / "extraction" / "default"


@pytest.fixture(scope="module")
def x():
    return extraction.load("fixtures/default")


def test_recorded_store_rebuilds_to_the_committed_tables(tmp_path):
    """The page shows the committed tables: they must be what the current code makes of the store."""
    rebuild(RECORDED, "fixtures/default", tmp_path)
    for name in [*(f"{t}.{ext}" for t in EXTRACTION_TABLES for ext in ("csv", "parquet")), "extract.json"]:
        assert (tmp_path / name).read_bytes() == (RECORDED / name).read_bytes(), f"{name}: re-record the store (README)"


def test_the_recorded_store_is_read_for_a_fixture(x):
    assert x is not None and x.recorded
    for name, df in (("extraction_calls", x.calls), ("extraction_ab", x.ab), ("extraction_unique", x.unique)):
        assert df.equals(pl.read_parquet(RECORDED / f"{name}.parquet"))
    assert x.calls["status"].unique().to_list() == ["ok"]
    assert x.ab.height == 10 and x.ab["complete"].all()


def test_views_are_counts_and_text_only_with_excerpts(x):
    ab = extraction.ab_table(x)
    assert ab.height == 10 and "title" not in ab.columns
    sources = extraction.sources_table(x)
    assert tuple(SOURCE_LABELS) == SOURCES  # one label per source the comparison tells apart, in its order
    labels = list(SOURCE_LABELS.values())
    assert (sources.select(labels).sum_horizontal() == sources["unique"]).all()
    assert extraction.calls_table(x)["calls"].sum() == x.calls.height
    assert extraction.calls_table(x)["input tokens"].null_count() == 2  # command reports no usage
    assert extraction.errors(x).data == "Every one of the 40 calls gave candidates."
    assert "--show-excerpts" in extraction.excerpts(x).data
    shown = extraction.excerpts(replace(x, show_excerpts=True))
    assert shown.height == int(x.ab["unique_a"].sum() + x.ab["unique_b"].sum())
    assert shown["only under"].to_list() == x.unique["strategy"].to_list() and shown["title"].str.len_chars().max() <= 120


def test_median_latency_rounds_half_away_from_zero_as_every_printed_number(x):
    """Two calls of 196 and 197 ms have a median of 196.5: shown as 197 (numbers.ROUND_MODE), not banker's 196."""
    calls = x.calls.filter(pl.col("strategy") == "fold").head(2).with_columns(latency_ms=pl.Series([196, 197]))
    assert extraction.calls_table(replace(x, calls=calls))["median latency ms"].to_list() == [197.0]


def test_verdict_and_overview_section(x):
    text = extraction.verdict_text(x)
    done = x.ab.filter(pl.col("complete"))
    assert f"{int(done['matched'].sum())} candidates matched" in text
    assert "sampling noise" in text
    section = extraction.verdict_section(Report(tables={}, sessions_root="fixtures/default"))
    # The recorded store was answered by a shell command: the overview must not call that a model.
    assert section.startswith("**What a stand-in for the model returned**") and text in section
    assert "say nothing about what a real model extracts" in section and "recorded store" in section
    assert extraction.verdict_section(Report(tables={}, sessions_root="fixtures/s840")) == ""
    assert extraction.load("fixtures/s840") is None
    assert "No extraction results" in extraction.summary(None).data


def test_a_measure_extract_dir_is_read_as_written(tmp_path, x):
    assert extraction.find_results("fixtures/default", RECORDED) == (RECORDED.resolve(), False)
    y = extraction.load("fixtures/default", RECORDED)
    assert not y.recorded and y.ab.equals(x.ab)
    assert extraction.find_results(None, tmp_path) is None
    shutil.copytree(RECORDED, tmp_path / "run" / "extraction")  # what `measure report --extraction` does
    assert extraction.find_results(None, out_dir=tmp_path / "run") == (tmp_path / "run" / "extraction", False)
    report = Report(tables={}, sessions_root="fixtures/s840")
    assert extraction.verdict_section(report) == ""
    assert extraction.verdict_section(report, tmp_path / "run").startswith("**What a stand-in for the model returned**")


def test_results_without_the_unique_table_say_how_to_rebuild_it(tmp_path, x):
    shutil.copytree(RECORDED, tmp_path / "old")
    (tmp_path / "old" / "extraction_unique.parquet").unlink()
    old = extraction.load(None, tmp_path / "old", show_excerpts=True)
    assert old.unique.is_empty() and "`--offline`" in extraction.excerpts(old).data
    assert extraction.excerpts(replace(x, show_excerpts=True)).height == x.unique.height > 0


def test_sources_bars_draws_with_and_without_results(x):
    ax = extraction.sources_bars(x).axes[0]
    assert ax.get_title().startswith("Candidates found") and not ax.texts
    assert [t.get_text() for t in plots.sources_bars(None).axes[0].texts] == ["no complete session pairs"]
    assert [t.get_text() for t in extraction.sources_bars(None).axes[0].texts] == ["no complete session pairs"]


def test_overview_section_names_a_real_model_only_when_a_model_answered(x, monkeypatch):
    """The same replies read as a model's when the run used a model client (the test root where the
    overview's wording comes out differently from the recorded command store)."""
    meta = {**x.meta, "model": "claude-x", "params": {**x.meta.get("params", {}), "client": "anthropic", "model": "claude-x"}}
    monkeypatch.setattr(extraction, "load", lambda *a, **k: replace(x, meta=meta, recorded=False))
    section = extraction.verdict_section(Report(tables={}, sessions_root="fixtures/default"))
    assert section.startswith("**What a model extracted** (`anthropic` / `claude-x`")
    assert "stand-in" not in section and "recorded store" not in section
