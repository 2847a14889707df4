"""The verdict: a Pareto analysis whose decision each test root can move."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from measure.measurements.verdict import CRITERIA, decide, dominates, summarise
from measure.measurements.verdict import verdict_rows as rows_of
from measure.schema import VERDICT

try:
    from test_delegation import (
        REPORT,
        assistant,
        filler,
        launch,
        measure,
        subagent,
        sync_result,
        text,
        undelivered_root,
        user,
        write_session,
    )
except ImportError:  # run from the repository root as a package
    from tests.test_delegation import (
        REPORT,
        assistant,
        filler,
        launch,
        measure,
        subagent,
        sync_result,
        text,
        undelivered_root,
        user,
        write_session,
    )


def verdict_rows(sessions, eviction, run_cost) -> list[dict]:
    return rows_of(summarise(sessions, eviction, run_cost))


def vec(**kw) -> dict:
    base = {c: 0.0 for c, _ in CRITERIA}
    return {**base, **kw}


def test_dominance_respects_each_criterion_direction():
    assert dominates(vec(llm_calls=1), vec(llm_calls=2))
    assert dominates(vec(inline_refs=3), vec(inline_refs=1))
    assert not dominates(vec(llm_calls=1, inline_refs=0), vec(llm_calls=2, inline_refs=1))
    assert not dominates(vec(), vec())  # equal is not dominance


def test_decide_names_a_dominator_a_tie_or_a_trade_off():
    decision, front, _ = decide({"link": vec(llm_calls=1), "fold": vec(llm_calls=2)})
    assert decision == "link" and front == [["link"]]
    decision, front, _ = decide({"link": vec(llm_calls=1), "hybrid": vec(llm_calls=1), "chunked": vec(llm_calls=9)})
    assert decision == "hybrid" and front == [["link", "hybrid"]]  # ties go to akm's shipped path
    decision, front, dominated = decide({"hybrid": vec(prompt_chars=1), "fold": vec(prompt_chars=2, subagent_unique_chars_in_prompt=5),
                                         "chunked": vec(prompt_chars=3, subagent_unique_chars_in_prompt=5)})
    assert decision == "trade_off" and front == [["fold"], ["hybrid"]] and dominated["chunked"] == ["fold"]


def _row(sp, st, **kw):
    base = dict(session_path=sp, strategy=st, parent_kept_chars=100, delegated_transcripts=1, delegated_results_in_prompt=0,
                subagent_unique_chars_in_prompt=0, inline_refs=0, llm_calls=1, prompt_chars=100)
    return {**base, **kw}


def test_verdict_rows_from_rows():
    assert verdict_rows([], [], []) == [{**dict.fromkeys(VERDICT.names), "criterion": "decision", "decision": "no_sessions"}]
    sessions = [_row("s", "link"), _row("s", "hybrid"), _row("s", "fold", delegated_results_in_prompt=1, prompt_chars=120)]
    eviction = [{"session_path": "s", "strategy": "fold", "budget_evicted_chars": 30},
                {"session_path": "s", "strategy": "hybrid", "budget_evicted_chars": 0}]
    cost = [{"strategy": n, "calls_per_run_max": 1} for n in ("link", "hybrid", "fold")]
    rows = verdict_rows(sessions, eviction, cost)
    assert all(set(r) == set(VERDICT.names) for r in rows)
    decision = rows[-1]
    assert decision["decision"] == "trade_off" and decision["strategy"] == "link=hybrid,fold"
    ev = {r["strategy"]: r for r in rows if r["criterion"] == "parent_chars_evicted"}
    assert ev["fold"]["value"] == 30 and ev["fold"]["sessions"] == 1 and not ev["fold"]["best"]
    assert "by construction" in ev["hybrid"]["identity"]
    # an identity is labelled only where it holds: a hybrid that evicted would be a finding
    odd = verdict_rows(sessions, eviction[:1] + [{**eviction[1], "budget_evicted_chars": 5}], cost)
    assert next(r for r in odd if r["criterion"] == "parent_chars_evicted" and r["strategy"] == "hybrid")["identity"] is None
    no_work = verdict_rows([_row("s", "link", delegated_transcripts=0)], [], [])
    assert no_work[-1]["decision"] == "no_delegated_work"


def test_every_identity_is_labelled_where_it_holds_and_only_there():
    # The verdict table labels every identity the overview shows (one list: verdict.IDENTITIES).
    from measure.measurements.verdict import IDENTITIES

    holding = [_row("s", "link", delegated_results_in_prompt=1), _row("s", "hybrid", delegated_results_in_prompt=1, inline_refs=2),
               _row("s", "fold", inline_refs=2, subagent_unique_chars_in_prompt=9), _row("s", "chunked"),
               _row("s", "fold_dedupe_sync", inline_refs=2, subagent_unique_chars_in_prompt=9),
               _row("s", "parent_first", inline_refs=2), _row("s", "hybrid_undelivered", inline_refs=2)]
    eviction = [{"session_path": "s", "strategy": n, "budget_evicted_chars": 0}
                for n in ("link", "hybrid", "fold", "chunked", "parent_first", "hybrid_undelivered", "fold_dedupe_sync")]
    labelled = {(r["criterion"], r["strategy"]) for r in verdict_rows(holding, eviction, []) if r["identity"]}
    assert labelled == set(IDENTITIES)
    # each broken in turn: a hybrid with subagent text, results link lacks, refs fold lacks; a chunked with refs;
    # a sync dedupe whose prompt is not fold's
    broken = [_row("s", "link", delegated_results_in_prompt=1),
              _row("s", "hybrid", delegated_results_in_prompt=2, inline_refs=3, subagent_unique_chars_in_prompt=4),
              _row("s", "fold", inline_refs=2), _row("s", "chunked", inline_refs=1), _row("s", "fold_dedupe_sync", prompt_chars=90),
              _row("s", "parent_first", inline_refs=1), _row("s", "hybrid_undelivered", inline_refs=3)]
    broken_eviction = [*eviction[:4], {**eviction[4], "budget_evicted_chars": 7}, *eviction[5:]]  # a parent_first that evicts
    labelled = {(r["criterion"], r["strategy"]) for r in verdict_rows(broken, broken_eviction, []) if r["identity"]}
    assert labelled == {("parent_chars_evicted", "link"), ("parent_chars_evicted", "hybrid"), ("subagent_unique_chars_in_prompt", "link")}


# ------------------------------------------------------------------------------------------------
# Every decision value is reached by a root
# ------------------------------------------------------------------------------------------------


def no_subagents_root(root: Path) -> Path:
    write_session(root, "55555555-eeee-4000-8000-000000000005",
                  [user(0, "Rename the configuration flag everywhere."), assistant(1, text("Renamed the flag in seven files."))])
    return root


def copies_only_root(root: Path) -> Path:
    """Sync agents whose transcripts hold only copies of what the parent has; fold evicts for them."""
    aid = "a8888888888888888"
    report = " ".join([REPORT] * 4)  # about 1,500 chars, each copy
    parent = [user(0, "Clean up the flaky cache tests, then tidy the module.")]
    parent += [assistant(i, text(filler(i, 30))) for i in range(1, 13)]
    parent += [launch(40, "toolu_c", False), sync_result(60, "toolu_c", aid, report),
               assistant(61, text("Applied the monotonic counter fix the investigation recommended."))]
    write_session(root, "66666666-ffff-4000-8000-000000000006", parent,
                  {f"agent-{aid}": subagent(aid, 41, 59, with_tools=False, report=report)})
    return root


def decision(tables) -> tuple[str, str]:
    row = tables["verdict"].filter(pl.col("criterion") == "decision").row(0, named=True)
    return row["decision"], row["strategy"]


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    out = {}
    for name, build, budget in (
        ("empty", lambda p: (p.mkdir(parents=True), p)[1], 80_000),
        ("no_subagents", no_subagents_root, 80_000),
        ("undelivered", undelivered_root, 80_000),
        ("copies_only", copies_only_root, 6_200),
    ):
        base = tmp_path_factory.mktemp(name)
        out[name] = measure(build(base / "projects"), base / "out", budget)
    return out


def test_every_decision_value_is_reachable(roots):
    assert decision(roots["empty"]) == ("no_sessions", None)
    assert decision(roots["no_subagents"]) == ("no_delegated_work", None)
    value, front = decision(roots["undelivered"])
    assert value == "trade_off" and "hybrid" in front and "fold" in front
    # hybrid_undelivered is hybrid where every result was delivered: it ties with it
    assert decision(roots["copies_only"]) == ("hybrid", "link=hybrid=hybrid_undelivered")


def test_copies_only_root_is_what_it_claims(roots):
    t = roots["copies_only"]
    ev = t["eviction"].filter(pl.col("strategy") == "fold")
    assert ev["budget_evicted_chars"].to_list()[0] > 0  # fold evicts parent content
    d = t["delegation"]
    assert d.filter(pl.col("strategy") == "fold")["unique_chars_in_prompt"].to_list() == [0]  # subagents add nothing unique
    assert d.filter(pl.col("strategy") == "hybrid")["result_in_prompt"].to_list() == [True]  # the parent's copy is kept


def test_undelivered_front_states_what_each_side_gives_up(roots):
    v = roots["undelivered"]["verdict"]
    val = {(r["criterion"], r["strategy"]): r["value"] for r in v.iter_rows(named=True) if r["strategy"]}
    assert val["delegated_results_in_prompt", "fold"] == 2 and val["delegated_results_in_prompt", "hybrid"] == 0
    assert val["prompt_chars", "fold"] > val["prompt_chars", "hybrid"]


def test_verdict_table_is_sorted_and_deterministic(roots, tmp_path):
    v = roots["undelivered"]["verdict"]
    assert v.columns == VERDICT.names
    again = measure(undelivered_root(tmp_path / "projects"), tmp_path / "out")["verdict"]
    assert again.equals(v)
