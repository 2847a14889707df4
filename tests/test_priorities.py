"""Priorities as data: the grammar, the walk, the flips, and hand-built roots whose choice each outcome needs."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from measure.cli import main
from measure.measurements.priorities import DEFAULT, PrioritiesError, canonical, choice, flips, parse, walk
from measure.measurements.strategies import registry_order
from measure.measurements.verdict import CRITERIA, Summary
from measure.report.views import common, decision
from measure.runner.job import RunParams
from measure.runner.run import run_measurement
from measure.schema import CHOICE

try:
    from test_delegation import PIN, assistant, async_ack, filler, launch, subagent, sync_result, text, user, write_session
except ImportError:  # run from the repository root as a package
    from tests.test_delegation import PIN, assistant, async_ack, filler, launch, subagent, sync_result, text, user, write_session


def summary(delegated: int = 1, **strategies: dict) -> Summary:
    """A run's totals by hand: strategy -> {criterion: value} (absent criteria are 0)."""
    names = tuple(sorted(strategies, key=registry_order))
    totals = {n: {c: float(strategies[n].get(c, 0)) for c, _ in CRITERIA} for n in names}
    return Summary(names, {}, totals, {}, delegated)


def winner(text: str, s: Summary, cap: int = 25) -> str | None:
    return walk(parse(text), s, cap).winner


# ------------------------------------------------------------------------------------------------
# The grammar
# ------------------------------------------------------------------------------------------------


def test_the_default_is_840s_reasoning_and_canonical():
    items = parse(DEFAULT)
    assert [(i.name, i.op, i.bound, i.tol, i.relative) for i in items] == [
        ("calls_per_run_max", "<=", None, 0, False), ("parent_chars_evicted", None, None, 0, False),
        ("inline_refs", None, None, 0, False), ("prompt_chars", None, None, 1, True)]
    assert canonical(DEFAULT) == DEFAULT
    assert canonical(" prompt_chars ~ 0.50% ,inline_refs>= 2,llm_calls~3") == "prompt_chars~0.5%, inline_refs>=2, llm_calls~3"
    assert DEFAULT.replace(", ", ", ") in CHOICE.doc  # schema.py documents the same default


@pytest.mark.parametrize("bad, item, says", [
    ("", "item 1", "is empty"),
    ("inline_refs,,prompt_chars", "item 2", "is empty"),
    ("inline_refs,", "item 2", "is empty"),
    ("prompt_char~1%", "item 1 ('prompt_char~1%')", "did you mean prompt_chars?"),
    ("inline_refs, bogus", "item 2 ('bogus')", "unknown criterion 'bogus'; criteria: parent_chars_evicted"),
    ("calls_per_run_max<=lots", "item 1", "the bound 'lots' is neither a number nor cap"),
    ("calls_per_run_max<=-1", "item 1", "the bound '-1'"),
    ("calls_per_run_max<=cap~1%", "item 1", "the bound 'cap~1%'"),
    ("prompt_chars~x%", "item 1", "the tolerance 'x%'"),
    ("prompt_chars~1%%", "item 1", "the tolerance '1%%'"),
    ("prompt_chars~", "item 1", "the tolerance ''"),
    ("inline_refs<3", "item 1", "write NAME, NAME~TOL, NAME<=BOUND or NAME>=BOUND"),
    ("inline_refs, llm_calls, inline_refs~2", "item 3", "inline_refs is already a criterion"),
])
def test_every_error_names_the_bad_item_on_one_line(bad, item, says):
    with pytest.raises(PrioritiesError) as info:
        parse(bad)
    message = str(info.value)
    assert item in message and says in message and "\n" not in message


@pytest.mark.parametrize("command", ["run", "report"])
@pytest.mark.parametrize("bad", ["prompt_char", "inline_refs,,llm_calls", "llm_calls<=x"])
def test_a_bad_value_is_refused_at_parse_time(command, bad, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, "--out", "o", "--priorities", bad])
    assert info.value.code == 2
    (error,) = [line for line in capsys.readouterr().err.splitlines() if line.startswith("Error: ")]
    assert "'--priorities'" in error and "item " in error


def test_options_become_run_params_with_the_canonical_text():
    assert RunParams.from_options().priorities == DEFAULT
    assert RunParams.from_options(priorities="inline_refs ,prompt_chars~2%").priorities == "inline_refs, prompt_chars~2%"
    with pytest.raises(PrioritiesError):
        RunParams.from_options(priorities="nope")


# ------------------------------------------------------------------------------------------------
# The walk
# ------------------------------------------------------------------------------------------------


def test_constraints_apply_first_wherever_written():
    s = summary(link={"prompt_chars": 100, "llm_calls": 1}, fold={"prompt_chars": 90, "llm_calls": 2})
    assert winner("prompt_chars", s) == "fold"
    assert winner("prompt_chars, llm_calls<=1", s) == "link"
    w = walk(parse("prompt_chars, llm_calls<=1"), s, 25)
    assert [st.item.text for st in w.steps] == ["llm_calls<=1"]  # link alone after it: the constraint decides
    assert winner("inline_refs>=1", summary(link={"inline_refs": 0}, fold={"inline_refs": 1})) == "fold"


def test_the_cap_is_the_runs_session_cap():
    s = summary(hybrid={"calls_per_run_max": 3, "prompt_chars": 9}, chunked={"calls_per_run_max": 5, "prompt_chars": 1})
    assert winner("calls_per_run_max<=cap, prompt_chars", s, cap=4) == "hybrid"
    assert winner("calls_per_run_max<=cap, prompt_chars", s, cap=5) == "chunked"


def test_tolerances_absolute_relative_and_by_direction():
    s = summary(link={"prompt_chars": 1000, "inline_refs": 5}, hybrid={"prompt_chars": 1004, "inline_refs": 4},
                fold={"prompt_chars": 1200, "inline_refs": 3})
    assert winner("prompt_chars", s) == "link"
    assert winner("prompt_chars~4", s) == "hybrid"  # link and hybrid within 4 chars: a tie, to the incumbent
    assert winner("prompt_chars~3", s) == "link"
    assert winner("prompt_chars~0.4%", s) == "hybrid" and winner("prompt_chars~0.39%", s) == "link"
    assert walk(parse("inline_refs~1"), s, 25).survivors == ("link", "hybrid")  # higher is better: 5 and 4 are within 1
    assert walk(parse("inline_refs~2"), s, 25).survivors == ("link", "fold", "hybrid")


def test_a_tie_goes_to_the_incumbent_else_registry_order_and_nothing_feasible_is_said():
    s = summary(link={"prompt_chars": 10}, fold={"prompt_chars": 10}, hybrid={"prompt_chars": 10})
    assert winner("prompt_chars", s) == "hybrid"
    assert winner("prompt_chars", summary(link={"prompt_chars": 10}, fold={"prompt_chars": 10})) == "link"
    _, rows = choice(s, "prompt_chars", 25)
    assert [r["kind"] for r in rows] == ["criterion", "tie", "chosen"]
    assert rows[-1]["note"] == "a tie of link, fold, hybrid, resolved to hybrid, akm's incumbent"
    _, rows = choice(summary(link={"prompt_chars": 10}, fold={"prompt_chars": 10}), "prompt_chars", 25)
    assert rows[-1]["winner"] == "link" and rows[-1]["note"].endswith("resolved by registry order")
    w, rows = choice(s, "inline_refs>=1", 25)
    assert w.winner is None and [r["kind"] for r in rows] == ["constraint", "none_feasible", "flip_drop"]
    assert not any(r["kind"] == "chosen" for r in rows) and rows[-1]["winner"] == "hybrid"


def test_exactly_one_chosen_row_naming_the_deciding_item():
    s = summary(link={"prompt_chars": 100, "inline_refs": 1}, hybrid={"prompt_chars": 110, "inline_refs": 2})
    _, rows = choice(s, "inline_refs, prompt_chars", 25)
    chosen = [r for r in rows if r["kind"] == "chosen"]
    assert len(chosen) == 1 and chosen[0]["winner"] == "hybrid" and chosen[0]["item"] == "inline_refs"
    assert chosen[0]["note"] == "decided by inline_refs"
    assert all(set(r) == set(CHOICE.names) for r in rows)
    assert [r["step"] for r in rows] == list(range(len(rows)))
    _, none_at_all = choice(None, DEFAULT, 25)
    assert [r["kind"] for r in none_at_all] == ["none_feasible"]
    _, no_work = choice(summary(delegated=0, link={"prompt_chars": 1}), DEFAULT, 25)
    assert "no delegated work under this root" in no_work[-1]["note"]


# ------------------------------------------------------------------------------------------------
# The flips
# ------------------------------------------------------------------------------------------------


def _flips(text: str, s: Summary, cap: int = 25) -> list[tuple[str, str, str]]:
    return [(f["kind"], f["change"], f["winner"]) for f in flips(walk(parse(text), s, cap), s, cap)]


def test_tolerance_flips_up_and_down_smallest_first():
    s = summary(link={"prompt_chars": 100}, hybrid={"prompt_chars": 103})
    assert _flips("prompt_chars", s) == [("flip_tolerance", "prompt_chars→prompt_chars~3", "hybrid")]
    assert _flips("prompt_chars~5", s) == [("flip_tolerance", "prompt_chars~5→prompt_chars~2", "link")]
    s = summary(link={"prompt_chars": 1000}, hybrid={"prompt_chars": 1004})
    assert _flips("prompt_chars~1%", s) == [("flip_tolerance", "prompt_chars~1%→prompt_chars~0.39%", "link")]
    # two criteria, each with its flip: the smaller move (as a share of the best value) comes first
    s = summary(link={"prompt_chars": 100, "llm_calls": 1}, hybrid={"prompt_chars": 103, "llm_calls": 1},
                chunked={"prompt_chars": 50, "llm_calls": 3})
    assert [f for f in _flips("llm_calls, prompt_chars", s) if f[0] == "flip_tolerance"] == [  # 3 of 100 < 2 of 1
        ("flip_tolerance", "prompt_chars→prompt_chars~3", "hybrid"), ("flip_tolerance", "llm_calls→llm_calls~2", "chunked")]


def test_swap_insert_and_drop_flips():
    s = summary(link={"prompt_chars": 100, "inline_refs": 1}, hybrid={"prompt_chars": 110, "inline_refs": 2},
                fold={"prompt_chars": 150, "inline_refs": 2, "delegated_results_in_prompt": 3})
    found = _flips("inline_refs, prompt_chars", s)
    assert ("flip_swap", "inline_refs, prompt_chars→prompt_chars, inline_refs", "link") in found
    assert ("flip_insert", "prompt_chars→delegated_results_in_prompt, prompt_chars", "fold") in found
    w = walk(parse("inline_refs, prompt_chars"), s, 25)
    insert = next(f for f in flips(w, s, 25) if f["kind"] == "flip_insert")
    assert insert["priorities"] == "inline_refs, delegated_results_in_prompt, prompt_chars"
    s = summary(link={"llm_calls": 1}, chunked={"llm_calls": 4, "subagent_unique_chars_in_prompt": 9})
    assert _flips("llm_calls<=1, subagent_unique_chars_in_prompt", s) == [
        ("flip_drop", "llm_calls<=1→(dropped)", "chunked")]
    assert _flips("prompt_chars", summary(link={"prompt_chars": 1}, fold={"prompt_chars": 1})) == []  # nothing moves it
    # a percentage of a best of 0 is 0: no tolerance reaches a non-zero gap, and none is offered
    s = summary(link={"parent_chars_evicted": 0}, fold={"parent_chars_evicted": 10})
    assert [f[0] for f in _flips("parent_chars_evicted~5%", s)] == []


# ------------------------------------------------------------------------------------------------
# Hand-built roots: each outcome the data can overturn
# ------------------------------------------------------------------------------------------------

BUDGET = 6_200
REMEMBER = 'Noting it: akm remember "cache entries need a monotonic insertion counter to order ties"'


def big_session(root: Path, sid: str, aid: str, delivered: bool = True) -> None:
    """A parent over the budget, then a foreground agent (result delivered) or a background one (never delivered)
    whose transcript holds an inline ref the parent lacks."""
    parent = [user(0, "Clean up the flaky cache tests, then tidy the module.")]
    parent += [assistant(i, text(filler(i, 30))) for i in range(1, 31)]
    if delivered:
        parent += [launch(100, "toolu_a", False), sync_result(130, "toolu_a", aid)]
    else:
        parent += [launch(100, "toolu_a", True), async_ack(101, "toolu_a", aid)]
    parent.append(assistant(131, text("Applied the monotonic counter fix the investigation recommended.")))
    sub = subagent(aid, 102, 129)
    sub.insert(1, {**assistant(103, text(REMEMBER)), "isSidechain": True, "agentId": aid})
    write_session(root, sid, parent, {f"agent-{aid}": sub})


def small_undelivered(root: Path, sid: str, aid: str) -> None:
    """A short parent whose background agent's result never comes back."""
    parent = [user(0, "Look into the flaky cache tests while I write the changelog."), launch(1, "toolu_b", True),
              async_ack(2, "toolu_b", aid), assistant(3, text("I am rewording the changelog entry meanwhile."))]
    write_session(root, sid, parent, {f"agent-{aid}": subagent(aid, 2, 40)})


def run(root: Path, out: Path, priorities: str | None = None, cap: int | None = None) -> common.Report:
    params = RunParams.from_options(max_total_chars=BUDGET, file_time_ms=PIN, priorities=priorities, session_cap=cap)
    run_measurement(root, out, params, jobs=1, cache_dir=None)
    return common.load(root, out)


def chosen(r: common.Report) -> dict:
    (row,) = r["choice"].filter(pl.col("kind") == "chosen").to_dicts()
    return row


@pytest.fixture(scope="module")
def hybrid_root(tmp_path_factory) -> common.Report:
    base = tmp_path_factory.mktemp("hybrid")
    big_session(base / "projects", "11111111-aaaa-4000-8000-000000000001", "a1111111111111111")
    small_undelivered(base / "projects", "22222222-bbbb-4000-8000-000000000002", "a2222222222222222")
    return run(base / "projects", base / "out")


def test_hybrid_is_chosen_when_parents_overflow_and_results_arrive(hybrid_root):
    row = chosen(hybrid_root)
    assert (row["winner"], row["item"], row["note"]) == ("hybrid", "prompt_chars~1%", "decided by prompt_chars~1%")
    steps = {r["item"]: r for r in hybrid_root["choice"].filter(pl.col("kind") == "criterion").to_dicts()}
    assert "fold" in steps["parent_chars_evicted"]["eliminated"]  # the overflowing parent loses content under fold
    assert "link" in steps["inline_refs"]["eliminated"]  # the subagent's inline ref reaches hybrid, not link
    # valuing the undelivered result would choose the proposal that carries it
    flip = hybrid_root["choice"].filter(pl.col("kind") == "flip_insert").to_dicts()
    assert {(f["item"], f["winner"]) for f in flip} >= {("delegated_results_in_prompt", "hybrid_undelivered")}
    text = decision.choice(hybrid_root).data
    assert "**Under the stated priorities, the choice is hybrid (C3)**, decided by `prompt_chars~1%`." in text
    assert "valuing `delegated_results_in_prompt` just before `prompt_chars~1%` chooses hybrid + undelivered (proposal)" in text
    assert "(the default, #840's reasoning encoded)" in text
    assert next(line for line in text.splitlines() if "**this decides**" in line).startswith("- `prompt_chars~1%`")
    kinds = set(hybrid_root["choice"]["kind"])
    assert not kinds & {"flip_tolerance", "flip_swap", "flip_drop"}  # so the page says so, in one sentence
    assert "- No change of one tolerance, no swap of two adjacent criteria and no dropped constraint changes the choice." in text
    assert hybrid_root["verdict"].filter(pl.col("chosen"))["strategy"].unique().to_list() == ["hybrid"]


def test_a_tie_goes_to_the_incumbent_and_the_page_says_so(tmp_path):
    big_session(tmp_path / "projects", "11111111-aaaa-4000-8000-000000000001", "a1111111111111111")
    r = run(tmp_path / "projects", tmp_path / "out")
    row = chosen(r)
    assert row["winner"] == "hybrid" and row["item"] is None and "hybrid_undelivered" in row["survivors"].split(",")
    assert row["note"].endswith("resolved to hybrid, akm's incumbent")
    assert r["choice"].filter(pl.col("kind") == "tie").height == 1
    assert "and the tie goes to hybrid, akm's incumbent (#843)" in decision.choice(r).data


FOLD_PRIORITIES = "calls_per_run_max<=cap, parent_chars_evicted, delegated_results_in_prompt, subagent_unique_chars_in_prompt"


def test_fold_is_chosen_when_parents_are_short_and_results_stay_in_the_transcripts(tmp_path):
    for k, aid in enumerate(("a3333333333333333", "a4444444444444444")):
        small_undelivered(tmp_path / "projects", f"3333333{k}-cccc-4000-8000-000000000003", aid)
    r = run(tmp_path / "projects", tmp_path / "out", FOLD_PRIORITIES, cap=1)
    row = chosen(r)
    assert row["winner"] == "fold"
    assert "chunked" in r["choice"].filter(pl.col("kind") == "constraint")["eliminated"][0]  # several calls per run
    assert "hybrid" not in row["survivors"].split(",")  # the results never reached the parent
    text = decision.choice(r).data
    assert "**Under the stated priorities, the choice is fold (C1)**" in text
    if row["item"] is None:  # fold's family (and parent_first, which keeps the same events here) tie with it
        assert "the tie goes to fold (C1), first in registry order" in text
    default = run(tmp_path / "projects", tmp_path / "out2")
    assert chosen(default)["winner"] != "fold"  # #840's priorities do not value delegated content


def test_chunked_is_chosen_once_the_run_cap_constraint_is_lifted(tmp_path):
    big_session(tmp_path / "projects", "55555555-eeee-4000-8000-000000000005", "a5555555555555555", delivered=False)
    capped = run(tmp_path / "projects", tmp_path / "out", "calls_per_run_max<=cap, parent_chars_evicted, "
                 "subagent_unique_chars_in_prompt", cap=1)
    assert chosen(capped)["winner"] != "chunked"
    # hybrid_undelivered's report took room from the overflowing parent: measured, not zero by construction
    evicted = capped["choice"].filter(pl.col("item") == "parent_chars_evicted")["eliminated"][0].split(",")
    assert "hybrid_undelivered" in evicted and capped["eviction"].filter(pl.col("strategy") == "hybrid_undelivered")[
        "budget_evicted_chars"].sum() > 0
    assert set(capped["eviction"]["strategy"]) >= {"parent_first", "hybrid_undelivered"}
    drop = capped["choice"].filter(pl.col("kind") == "flip_drop").to_dicts()
    assert [(d["item"], d["winner"]) for d in drop] == [("calls_per_run_max<=cap", "chunked")]
    assert "dropping the constraint `calls_per_run_max<=cap` chooses chunked (C4)" in decision.choice(capped).data
    lifted = run(tmp_path / "projects", tmp_path / "out2", "parent_chars_evicted, subagent_unique_chars_in_prompt", cap=1)
    assert chosen(lifted)["winner"] == "chunked"


def test_a_root_without_delegated_work_still_chooses_and_says_what_about(tmp_path):
    write_session(tmp_path / "projects", "66666666-ffff-4000-8000-000000000006",
                  [user(0, "Rename the configuration flag everywhere."), assistant(1, text("Renamed the flag in seven files."))])
    r = run(tmp_path / "projects", tmp_path / "out")
    assert chosen(r)["winner"] == "hybrid" and "no delegated work under this root" in chosen(r)["note"]
    page = decision.choice(r).data
    assert page.startswith("**No delegated work under this root**: the choice below is about sessions without subagents.")
    assert "without delegated work the verdict makes no dominance analysis" in page


def test_a_report_reads_its_runs_priorities_and_a_notebook_can_ask_for_others(hybrid_root, tmp_path):
    out = Path(hybrid_root.run["input"]["root"]).parent / "out"
    assert hybrid_root.run["parameters"]["priorities"] == DEFAULT
    valued = "calls_per_run_max<=cap, parent_chars_evicted, delegated_results_in_prompt, prompt_chars~1%"
    again = common.load(hybrid_root.sessions_root, out, priorities=valued, max_total_chars=BUDGET)  # measured again
    assert chosen(again)["winner"] == "hybrid_undelivered" and again.run["parameters"]["priorities"] == valued
    assert common.load(hybrid_root.sessions_root, out, priorities=DEFAULT)["choice"].equals(hybrid_root["choice"])


def _page(rows: list[dict], eviction: list[dict], cost: list[dict]) -> str:
    from measure.runner.run import decision_rows
    from measure.runner.tables import frame
    from measure.schema import TABLES

    tables = {name: frame(TABLES[name], r) for name, r in decision_rows(rows, eviction, cost).items()}
    return decision.choice(common.Report(tables=tables)).data


def _row(st, **kw):
    base = dict(session_path="p/s.jsonl", strategy=st, parent_kept_chars=100, delegated_transcripts=1, delegated_results_in_prompt=1,
                subagent_unique_chars_in_prompt=0, inline_refs=1, llm_calls=1, prompt_chars=100)
    return base | kw


def test_the_page_says_whether_a_suite_proposal_dominates_840s_four():
    four = [_row("link"), _row("fold", subagent_unique_chars_in_prompt=50, prompt_chars=150), _row("hybrid", prompt_chars=101),
            _row("chunked", subagent_unique_chars_in_prompt=60, llm_calls=3, prompt_chars=300)]
    eviction = [dict(session_path="p/s.jsonl", strategy="fold", budget_evicted_chars=20)]
    cost = [dict(strategy=r["strategy"], calls_per_run_max=r["llm_calls"]) for r in four]
    better = _row("parent_first", subagent_unique_chars_in_prompt=60, inline_refs=2, delegated_results_in_prompt=2)
    page = _page([*four, better], eviction, [*cost, dict(strategy="parent_first", calls_per_run_max=1)])
    assert ("**parent first (proposal) dominates all of #840's candidates** (link (C2), fold (C1), hybrid (C3), chunked (C4)): "
            "parent first (proposal) dominates link (C2), fold (C1), hybrid (C3), chunked (C4)") in page
    assert "**Under the stated priorities, the choice is parent first (proposal)** (a suite proposal, not akm's code)" in page
    worse = _row("parent_first", subagent_unique_chars_in_prompt=60, inline_refs=2, prompt_chars=120)
    page = _page([*four, worse], eviction, [*cost, dict(strategy="parent_first", calls_per_run_max=1)])
    assert "**No suite proposal dominates all of #840's candidates** (link (C2), fold (C1), hybrid (C3), chunked (C4)) on this root: " \
           "parent first (proposal) dominates fold (C1)" in page
