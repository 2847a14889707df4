"""Per-session robustness: wins, ties and losses, the bootstrap interval, and the flags the overview states."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from measure.measurements import robustness
from measure.measurements.priorities import parse, walk
from measure.measurements.robustness import bootstrap_totals, pairs, robustness_rows
from measure.measurements.strategies import registry_order
from measure.measurements.verdict import CRITERIA, Summary
from measure.numbers import rounded
from measure.report.views import common, decision
from measure.runner.job import RunParams
from measure.runner.run import run_measurement
from measure.schema import ROBUSTNESS

try:
    from test_delegation import PIN, assistant, filler, text, user, write_session
except ImportError:  # run from the repository root as a package
    from tests.test_delegation import PIN, assistant, filler, text, user, write_session


def summary(values: dict[str, dict[str, list[float]]]) -> Summary:
    """Per-session values by hand: strategy -> criterion -> one value per session (s0, s1, ...)."""
    names = tuple(sorted(values, key=registry_order))
    per: dict = {c: {n: {} for n in names} for c, _ in CRITERIA if c != "calls_per_run_max"}
    for n, by in values.items():
        for c, vals in by.items():
            per[c][n] = {f"s{k}": v for k, v in enumerate(vals)}
    n_sessions = max(len(v) for by in values.values() for v in by.values())
    for c in per:
        for n in names:
            for k in range(n_sessions):
                per[c][n].setdefault(f"s{k}", 0)
    totals = {n: {c: float(sum(per[c][n].values())) if c in per else 0.0 for c, _ in CRITERIA} for n in names}
    return Summary(names, per, totals, {}, 1)


def row(rows: list[dict], a: str, b: str, c: str) -> dict:
    (r,) = [r for r in rows if (r["strategy_a"], r["strategy_b"], r["criterion"]) == (a, b, c)]
    return r


def test_wins_ties_losses_and_the_flags():
    # hybrid is lower (better) in four sessions by 1, worse in one by 100: the total favours link, most sessions hybrid
    s = summary({"link": {"prompt_chars": [10, 10, 10, 10, 10, 10]}, "hybrid": {"prompt_chars": [9, 9, 9, 9, 110, 10]}})
    chosen = walk(parse("prompt_chars"), s, 25)
    rows = robustness_rows(s, chosen)
    assert all(set(r) == set(ROBUSTNESS.names) for r in rows)
    r = row(rows, "link", "hybrid", "prompt_chars")  # link is chosen: it comes first
    assert (r["a_better"], r["ties"], r["b_better"], r["total_difference"]) == (1, 1, 4, -96.0)
    assert r["chosen_pair"] and r["majority_disagrees"] and r["rests_on_one_session"]
    assert (r["largest_session_path"], r["largest_share"]) == ("s4", pytest.approx(100 / 96, abs=1e-4))
    assert r["ci_low"] <= r["total_difference"] <= r["ci_high"]
    # one session carries it, the others tie: it rests on that session, and no majority disagrees
    s = summary({"link": {"prompt_chars": [10, 10, 10, 10]}, "hybrid": {"prompt_chars": [10, 10, 10, 50]}})
    r = row(robustness_rows(s, walk(parse("prompt_chars"), s, 25)), "link", "hybrid", "prompt_chars")
    assert r["rests_on_one_session"] and not r["majority_disagrees"] and r["largest_share"] == 1.0
    # spread evenly, neither flag; higher is better counts the other way round
    s = summary({"link": {"inline_refs": [1, 1, 1, 1]}, "hybrid": {"inline_refs": [2, 2, 2, 2]}})
    r = row(robustness_rows(s, walk(parse("inline_refs"), s, 25)), "hybrid", "link", "inline_refs")
    assert (r["a_better"], r["b_better"], r["total_difference"], r["largest_share"]) == (4, 0, 4.0, 0.25)
    assert not r["rests_on_one_session"] and not r["majority_disagrees"]
    # a difference of 0 everywhere: no largest session, an interval of [0, 0]
    z = row(robustness_rows(s, walk(parse("inline_refs"), s, 25)), "hybrid", "link", "prompt_chars")
    assert (z["largest_session_path"], z["largest_share"], z["ci_low"], z["ci_high"]) == (None, None, 0.0, 0.0)
    assert not z["rests_on_one_session"]


def test_the_largest_session_is_the_one_carrying_the_total():
    # +150, -250, +200: the total +100 rests on the +200 session (removing it gives -100) though -250 is larger
    s = summary({"link": {"subagent_unique_chars_in_prompt": [150, 0, 200]}, "hybrid": {"subagent_unique_chars_in_prompt": [0, 250, 0]}})
    r = row(robustness_rows(s, walk(parse("subagent_unique_chars_in_prompt"), s, 25)), "link", "hybrid",
            "subagent_unique_chars_in_prompt")
    assert r["total_difference"] == 100 and r["largest_session_path"] == "s2" and r["rests_on_one_session"]
    # +6 and +4: removing the larger keeps the sign, but it carries 60%: it rests on one session all the same
    s = summary({"link": {"inline_refs": [6, 4]}, "hybrid": {"inline_refs": [0, 0]}})
    r = row(robustness_rows(s, walk(parse("inline_refs"), s, 25)), "link", "hybrid", "inline_refs")
    assert (r["largest_share"], r["rests_on_one_session"], r["majority_disagrees"]) == (0.6, True, False)


def test_most_sessions_against_the_total_either_way():
    # the chosen one (A) better in three sessions by 1, B better in one by 10: the total favours B
    s = summary({"link": {"inline_refs": [2, 2, 2, 0]}, "hybrid": {"inline_refs": [1, 1, 1, 10]}})
    chosen = walk(parse("llm_calls"), s, 25)  # a tie of both: hybrid, the incumbent, is chosen
    r = row(robustness_rows(s, chosen), "hybrid", "link", "inline_refs")
    assert (r["a_better"], r["b_better"], r["total_difference"], r["majority_disagrees"]) == (1, 3, 7.0, True)
    s = summary({"link": {"inline_refs": [1, 1, 1, 10]}, "hybrid": {"inline_refs": [2, 2, 2, 0]}})
    r = row(robustness_rows(s, chosen), "hybrid", "link", "inline_refs")
    assert (r["a_better"], r["b_better"], r["total_difference"], r["majority_disagrees"]) == (3, 1, -7.0, True)


def test_pairs_are_the_front_and_the_chosen_ones_rivals():
    s = summary({"link": {"prompt_chars": [1]}, "fold": {"prompt_chars": [5], "inline_refs": [3]},
                 "hybrid": {"prompt_chars": [2], "inline_refs": [3]}, "chunked": {"prompt_chars": [9]}})
    chosen = walk(parse("inline_refs, prompt_chars"), s, 25)
    assert chosen.winner == "hybrid" and chosen.rivals == ("fold",)
    # link and hybrid are on the front (chunked and fold are dominated): their pair, and hybrid with its rival fold
    assert pairs(s, chosen) == {("hybrid", "link"): True, ("hybrid", "fold"): True}
    assert pairs(s, None) == {("link", "hybrid"): False}


def test_the_bootstrap_is_seeded_shared_and_chunk_independent(monkeypatch):
    d = np.arange(60, dtype=np.float64).reshape(20, 3) - 25
    a = bootstrap_totals(d)
    assert a.shape == (robustness.RESAMPLES, 3) and np.array_equal(a, bootstrap_totals(d))
    monkeypatch.setattr(robustness, "CHUNK", 7)  # the counts are drawn in other slices: the same resamples
    assert np.array_equal(a, bootstrap_totals(d))
    monkeypatch.setattr(robustness, "BOOTSTRAP_SEED", robustness.BOOTSTRAP_SEED + 1)
    assert not np.array_equal(a, bootstrap_totals(d))
    assert np.allclose(a.mean(axis=0), d.sum(axis=0), rtol=0.05)  # resampled totals centre on the total


# ------------------------------------------------------------------------------------------------
# Hand-built roots: the page says what the rows say
# ------------------------------------------------------------------------------------------------

REF = ('Recording it: akm remember "the release checklist lives in docs/release.md, not in the wiki; tag builds are cut '
       'from main on Tuesdays and the changelog entry is written before the tag, never after it"')
"""An inline ref longer than akm's "none" line: a prompt listing it is longer than chunked's, which lists none."""


def small(root: Path, k: int, with_ref: bool) -> None:
    lines = [user(0, f"Tidy the release checklist, part {k}."), assistant(1, text(filler(k, 20)))]
    if with_ref:
        lines.append(assistant(2, text(REF)))
    write_session(root, f"7777777{k}-aaaa-4000-8000-00000000000{k}", lines)


def big(root: Path) -> None:
    """A parent many budgets long: chunked sends it in many windows, every other strategy in one call."""
    write_session(root, "88888888-bbbb-4000-8000-000000000008",
                  [user(0, "Rewrite the whole release tooling.")] + [assistant(i, text(filler(i, 30))) for i in range(1, 120)])


def measured(root: Path, out: Path, jobs: int = 1) -> common.Report:
    params = RunParams.from_options(max_total_chars=6_000, file_time_ms=PIN, priorities="prompt_chars")
    run_measurement(root, out, params, jobs=jobs, cache_dir=None)
    return common.load(root, out)


@pytest.fixture(scope="module")
def disagreeing(tmp_path_factory) -> tuple[Path, common.Report]:
    """Four short sessions where chunked sends less (it lists no inline refs) and one where it sends far more."""
    base = tmp_path_factory.mktemp("disagree")
    for k in range(4):
        small(base / "projects", k, with_ref=True)
    big(base / "projects")
    return base, measured(base / "projects", base / "out")


def test_a_total_against_most_sessions_is_said(disagreeing):
    _, r = disagreeing
    x = r["robustness"].filter((pl.col("strategy_b") == "chunked") & (pl.col("criterion") == "prompt_chars")).to_dicts()[0]
    assert x["strategy_a"] == "hybrid" and x["chosen_pair"]
    assert (x["a_better"], x["b_better"]) == (1, 4) and x["total_difference"] < 0 and x["majority_disagrees"]
    page = decision.choice(r).data
    assert ("- vs chunked (C4) on `prompt_chars`: the total difference (hybrid (C3) − chunked (C4)) "
            f"{x['total_difference']:+,.0f} favours one side, but **most sessions favour the other** (1 favour hybrid (C3), "
            "4 chunked (C4)).") in page


def test_a_conclusion_resting_on_one_session_says_so(tmp_path):
    for k in range(4):
        small(tmp_path / "projects", k, with_ref=False)
    big(tmp_path / "projects")
    r = measured(tmp_path / "projects", tmp_path / "out")
    x = r["robustness"].filter((pl.col("strategy_b") == "chunked") & (pl.col("criterion") == "prompt_chars")).to_dicts()[0]
    assert (x["a_better"], x["ties"], x["b_better"]) == (1, 4, 0) and x["rests_on_one_session"]
    assert not x["majority_disagrees"] and x["largest_share"] == 1.0
    assert x["largest_session_path"] == "-home-dev-app/88888888-bbbb-4000-8000-000000000008.jsonl"
    page = decision.choice(r).data
    assert (f"**rests on one session**, `{x['largest_session_path']}` carrying 100.0% of it (1 session(s) favour "
            "hybrid (C3), 0 chunked (C4)).") in page
    assert "most sessions favour the other" not in page


def test_intervals_are_byte_identical_across_runs_and_jobs(disagreeing):
    base, _ = disagreeing
    first = (base / "out" / "robustness.parquet").read_bytes()
    for k, jobs in enumerate((1, 2)):
        measured(base / "projects", base / f"again{k}", jobs=jobs)
        assert (base / f"again{k}" / "robustness.parquet").read_bytes() == first
        assert (base / f"again{k}" / "robustness.csv").read_bytes() == (base / "out" / "robustness.csv").read_bytes()


def test_the_interval_is_the_bootstraps_percentiles_in_session_path_order():
    link = [5, 0, 7, 1, 9, 2, 0, 4]
    s = summary({"link": {"prompt_chars": link, "llm_calls": [2] * 8}, "hybrid": {"prompt_chars": [0] * 8, "llm_calls": [1] * 8}})
    rows = robustness_rows(s, walk(parse("inline_refs"), s, 25))
    calls = row(rows, "hybrid", "link", "llm_calls")  # -1 in every session: every resample totals -8
    assert (calls["ci_low"], calls["ci_high"], calls["total_difference"]) == (-8.0, -8.0, -8.0)
    prompt = row(rows, "hybrid", "link", "prompt_chars")
    ordered = np.array([[-v] for _, v in sorted(zip(s.sessions, link))], dtype=np.float64)  # s0, s1, ... sorted
    low, high = np.percentile(bootstrap_totals(ordered), [2.5, 97.5], axis=0)
    assert (prompt["ci_low"], prompt["ci_high"]) == (rounded(float(low[0]), 1), rounded(float(high[0]), 1))
    assert prompt["ci_low"] < prompt["total_difference"] < prompt["ci_high"]
