"""measure.measurements.replay: the session cut at earlier moments, and what akm would (re-)extract."""

from __future__ import annotations

import pytest

from measure.akm.hashing import content_hash
from measure.akm.jscompat import date_parse
from measure.akm.prompt import load_template
from measure.akm.read import list_sessions, read_session
from measure.measurements.background import background_rows
from measure.measurements.replay import (
    MAX_MOMENTS,
    Replayer,
    Schedule,
    moments,
    parse_schedule,
    replay_rows,
    timelines_at,
)
from measure.measurements.lines import SessionLines
from measure.measurements.strategies import STRATEGIES, Params, SessionContext
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
from tests.test_delegation import PIN, ts
from tests.test_verdict import copies_only_root

TEMPLATE = load_template(None)


def context(session, timelines=None, budget: int = 80_000) -> SessionContext:
    return SessionContext(session, Params(template=TEMPLATE, keep_prompts=False, budget=budget), timelines=timelines)


def plain(ctx: SessionContext) -> dict:
    """Every strategy on the plain session (those akm's prompt build would throw on left out), as the job runs them."""
    results = {}
    for name, fn in STRATEGIES.items():
        try:
            results[name] = fn(ctx)
        except ValueError:
            pass
    return results


def replayed(session, timelines, schedule, budget: int = 80_000) -> list[dict]:
    ctx = context(session, timelines, budget)
    return replay_rows(ctx, plain(ctx), schedule, background_rows(session, timelines))


def replay(tmp_path, parent, subagents, schedule):
    session, timelines = read(tmp_path, parent, subagents)
    return session, timelines, {r["strategy"]: r for r in replayed(session, timelines, schedule)}


LATE = (
    [human(0), launch(1, "toolu_1"), ack(2, "toolu_1", ASYNC), say(30, "I will wait for the reviewer.")],
    {"a1": sub_lines(2, 10, 20, 290)},  # the subagent keeps writing long after the parent's last turn
)


def test_late_subagent_completion_moves_the_hash_but_not_hybrids_prompt(tmp_path):
    session, timelines, rows = replay(tmp_path, *LATE, "every:1")
    # moments at 1, 2, 3, 4 minutes and the final state (290 s)
    hybrid, fold, link = rows["hybrid"], rows["fold"], rows["link"]
    assert hybrid["extraction_points"] == 5 and hybrid["schedule"] == "every:1"
    # minute 1 extracts; the subagent's last event at 290 s moves the folded hash once more
    assert (hybrid["extractions"], hybrid["re_extractions"], hybrid["wasted_extractions"]) == (2, 1, 1)
    assert hybrid["distinct_prompts"] == 1 and hybrid["late_extractions"] == 2  # both moments follow the parent's 30 s
    assert (hybrid["llm_calls"], hybrid["wasted_llm_calls"]) == (2, 1)
    # fold sends the new subagent text: a re-extraction, but not a wasted one
    assert (fold["extractions"], fold["wasted_extractions"], fold["distinct_prompts"]) == (2, 0, 2)
    # link hashes the parent alone, which did not change after minute 1
    assert (link["extractions"], link["wasted_extractions"]) == (1, 0)
    # chunked makes a parent window and a subagent chunk each time
    assert rows["chunked"]["llm_calls"] == 4
    # no notification reached the parent: the subagent file's last line is its completion, after the parent's end
    assert hybrid["late_results"] == 1
    assert [(r["completed_by"], r["completed_after_parent_end"]) for r in background_rows(session, timelines)] == [("transcript", True)]


def test_late_results_count_background_completions_after_the_parent_end(tmp_path):
    parent, subs = LATE
    _, _, rows = replay(tmp_path, parent + [queue(291, "enqueue", note_2219("a1", "toolu_1"))], subs, "final")
    assert {r["late_results"] for r in rows.values()} == {1}
    assert {r["extraction_points"] for r in rows.values()} == {1}
    assert {r["extractions"] for r in rows.values()} == {1}


def test_the_final_moment_is_the_plain_run(tmp_path):
    session, timelines = read(tmp_path, *LATE)
    r = Replayer(session)
    cut = r.cut(r.final)
    assert cut.folded == session.folded and cut.refs == session.refs and cut.ref == session.ref
    assert content_hash(cut.folded) == content_hash(session.folded)
    for name in STRATEGIES:
        assert STRATEGIES[name](context(cut)).prompt_sha256 == STRATEGIES[name](context(session)).prompt_sha256


def test_cut_keeps_what_was_written_and_leaves_out_files_not_yet_there(tmp_path):
    session, _ = read(tmp_path, *LATE)
    r = Replayer(session)
    assert r.cut(r.written[0][0] - 1) is None
    early = r.cut(1_767_225_600_000 + 1_500)  # parent up to 1.5 s, no subagent line yet
    assert early.subagents == () and [e.role for e in early.folded] == ["user", "assistant"]
    mid = r.cut(1_767_225_600_000 + 15_000)
    assert len(mid.subagents) == 1 and len(mid.subagents[0].events) == 2
    assert mid.ref.ended_at == mid.folded[-1].ts


def test_a_line_without_timestamp_belongs_to_the_moment_before_it(tmp_path):
    untimed = say(0, "no time")
    del untimed["timestamp"]
    session, _ = read(tmp_path, [human(0), say(5), untimed, say(9)], {})
    r = Replayer(session)
    assert r.written[0] == [r.written[0][0], r.written[0][0] + 5000, r.written[0][0] + 5000, r.written[0][0] + 9000]
    assert len(r.cut(r.written[0][0] + 5000).parent.events) == 3


def test_turn_end_moments_are_the_last_parent_event_before_each_human_prompt(tmp_path):
    parent = [human(0), say(5), human(100, "next"), say(120), say(130)]
    session, timelines = read(tmp_path, parent, {"a1": sub_lines(6, 50, 140)})
    points, dropped = moments(Replayer(session), timelines[session.ref.path], Schedule("turn_end"))
    assert points == [1_767_225_605_000, 1_767_225_730_000, 1_767_225_740_000] and dropped == 0  # + the last turn, + final


def test_moments_are_capped(tmp_path):
    session, timelines = read(tmp_path, [human(0), say(60 * 60 * 10)], {})
    points, dropped = moments(Replayer(session), timelines[session.ref.path], Schedule("every", 1))
    assert len(points) == MAX_MOMENTS and dropped == 600 - MAX_MOMENTS
    assert points[-1] == Replayer(session).final


@pytest.mark.parametrize("text, name", [("turn_end", "turn_end"), ("final", "final"), ("every:5", "every:5"), ("every:0.5", "every:0.5")])
def test_schedules(text, name):
    assert parse_schedule(text).name == name


@pytest.mark.parametrize("text", ["", "every:", "every:0", "every:-1", "every:x", "hourly", "every:nan"])
def test_bad_schedules(text):
    with pytest.raises(ValueError):
        parse_schedule(text)


def test_measure_run_writes_the_replay_table_only_with_replay(tmp_path):
    import polars as pl

    from measure.cli import main

    root = tmp_path / "root"
    from tests.test_background import write_session

    write_session(root, *LATE)
    for flags, expected in (([], 0), (["--replay", "--replay-at", "every:1"], len(STRATEGIES))):
        out = tmp_path / f"o{len(flags)}"
        assert main(["run", "--root", str(root), "--out", str(out), "--no-cache", "--jobs", "1", "--pin-file-times", "1767225600000", *flags]) == 0
        replay_df = pl.read_csv(out / "replay.csv")
        assert replay_df.height == expected
        assert pl.read_csv(out / "background.csv").height == 1
    assert replay_df.filter(pl.col("strategy") == "hybrid")["wasted_extractions"].to_list() == [1]


@pytest.mark.parametrize("bad", ["--replay-at=hourly", "--replay-at=every:0"])
def test_run_rejects_bad_schedules(bad, tmp_path):
    from measure.cli import main

    with pytest.raises(SystemExit):
        main(["run", "--out", str(tmp_path), "--replay", bad])


def test_hostile_timestamps_do_not_crash(tmp_path):
    weird = sub_lines(1, 2)
    weird[-1]["timestamp"] = 1e20  # beyond JS Date: akm's prompt build throws where a subagent's events are sent
    nan = say(6, "not a date")
    nan["timestamp"] = "yesterday"
    session, timelines = read(tmp_path, [human(0), nan, say(9)], {"a1": weird})
    rows = replayed(session, timelines, "every:0.01")
    assert {r["strategy"] for r in rows} == {"link"}  # the parent alone: every other prompt's header or events hold 1e20
    assert all(0 < r["extraction_points"] <= MAX_MOMENTS for r in rows)


# Out of order on purpose: the parent's fourth line is stamped 5 s, after a 30 s line. A cut at 20 s
# keeps the 10 s line but not that one (written at 30 s at the earliest), which the parent's
# alone sort and the folded stream both place before it: those cuts are not prefixes.
SKEWED = (
    [human(0), say(10, "first answer"), say(30, "a jump"), say(5, "stamped early, written late"), launch(31, "toolu_1"),
     ack(32, "toolu_1", ASYNC), say(40, "later"), human(50, "next"), say(60, "done")],
    {"a1": sub_lines(5, 15, 45, 70)},
)


@pytest.mark.parametrize("case", ["late", "skewed"])
def test_the_content_hash_moves_exactly_when_the_cut_gains_events(tmp_path, case):
    # A replay counts a cut's events instead of hashing it: the two must agree at every moment,
    # for the folded stream and for the parent read alone, skewed timestamps included.
    session, _ = read(tmp_path, *(LATE if case == "late" else SKEWED))
    r = Replayer(session)
    times = sorted({w for wa in r.written for w in wa} | {w + 0.5 for wa in r.written for w in wa})
    cuts = [c for c in map(r.cut, times) if c is not None]
    for stream in (lambda c: c.folded, lambda c: c.alone):
        for a, b in zip(cuts, cuts[1:]):
            assert (content_hash(stream(a)) != content_hash(stream(b))) == (len(stream(a)) != len(stream(b)))
    assert any(len(a.folded) == len(b.folded) for a, b in zip(cuts, cuts[1:]))  # both outcomes are seen
    assert any(len(a.folded) != len(b.folded) for a, b in zip(cuts, cuts[1:]))
    for t, cut in zip(times, cuts):
        assert cut.folded == tuple(e for e, w in zip(session.folded, r.folded_written) if w <= t)


def _from_scratch(session, timelines, budget: int, schedule: str, background: list[dict]) -> tuple[list, list]:
    """The replay table by its definition, every moment measured alone (a context of its own,
    akm's content hash taken, prompts compared by their kept events): (rows, each call seen)."""
    replayer = Replayer(session)
    points, dropped = moments(replayer, timelines.get(session.ref.path), parse_schedule(schedule))
    end = replayer.written[0][-1] if replayer.written[0] else None
    late_results = sum(1 for r in background if r.get("completed_after_parent_end"))
    rows, seen = [], []
    for name in STRATEGIES:
        n = dict(points=0, extractions=0, wasted=0, calls=0, wasted_calls=0, late=0)
        last_hash = last_prompt = None
        prompts = set()
        for t in points:
            cut = replayer.cut(t)
            if cut is None:
                continue
            try:
                result = STRATEGIES[name](SessionContext(cut, Params(template=TEMPLATE, keep_prompts=False, budget=budget),
                                                         timelines=timelines_at(timelines, t)))
            except ValueError:
                continue
            seen.append((t, _calls(result)))
            n["points"] += 1
            digest = content_hash(cut.alone if name == "link" else cut.folded)
            if digest == last_hash:
                continue
            prompt = (result.inline_refs, tuple(tuple((e.role, e.ts, e.text) for e in c.kept.events) for c in result.calls))
            n["extractions"] += 1
            n["calls"] += len(result.calls)
            n["late"] += end is not None and t > end
            if prompt == last_prompt:
                n["wasted"] += 1
                n["wasted_calls"] += len(result.calls)
            prompts.add(prompt)
            last_hash, last_prompt = digest, prompt
        rows.append({
            "strategy": name, "schedule": parse_schedule(schedule).name, "extraction_points": n["points"],
            "moments_dropped": dropped, "extractions": n["extractions"], "re_extractions": max(0, n["extractions"] - 1),
            "distinct_prompts": len(prompts), "wasted_extractions": n["wasted"], "late_extractions": n["late"],
            "late_results": late_results, "llm_calls": n["calls"], "wasted_llm_calls": n["wasted_calls"],
        })
    return rows, seen


def _calls(result) -> tuple:
    """Everything of a result that a moment's calls decide: what was kept, its stats, the raw chars."""
    return (result.raw_chars, result.stubbed, result.stub_saved_chars,
            [([(e.role, e.ts, e.text) for e in c.kept.events], c.kept.stats, c.raw_chars) for c in result.calls])


def _replayed_both_ways(session, timelines, budget: int, schedule: str, monkeypatch) -> None:
    """replay_rows (moments sharing the plain run's memo) against `_from_scratch`: the same rows,
    and the same calls moment by moment."""
    from measure.measurements import replay as replay_module

    background = background_rows(session, timelines)
    seen: list = []

    def recording(name, fn):
        def run(ctx):
            r = fn(ctx)
            seen.append((name, _calls(r)))
            return r
        return run

    ctx = context(session, timelines, budget)
    results = plain(ctx)  # fills the memo the moments share
    whole = {n: _calls(r) for n, r in results.items()}  # a final moment after which nothing was written: these
    with monkeypatch.context() as m:
        m.setattr(replay_module, "STRATEGIES", {n: recording(n, f) for n, f in STRATEGIES.items()})
        rows = replay_rows(ctx, results, schedule, background)
    want_rows, want_seen = _from_scratch(session, timelines, budget, schedule, background)
    assert rows == want_rows
    order = list(STRATEGIES)
    got = sorted(seen, key=lambda x: order.index(x[0]))  # stable: moments stay in order
    missing = len(want_seen) - len(got)  # one final moment per strategy, taken from the plain run
    assert missing in (0, len(whole))
    if missing:
        got = [c for n in order for c in [*(c for m, c in got if m == n), whole[n]]]
    else:
        got = [c for _, c in got]
    assert got == [c for _, c in want_seen]


@pytest.mark.parametrize("budget", [80_000, 60])
@pytest.mark.parametrize("case", ["late", "skewed"])
def test_replay_rows_are_those_of_moments_measured_from_scratch(tmp_path, case, budget, monkeypatch):
    session, timelines = read(tmp_path, *(LATE if case == "late" else SKEWED))
    _replayed_both_ways(session, timelines, budget, "every:0.1", monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("root", ["parity_root", "real_root", "fixtures/default"])
def test_replay_rows_are_those_measured_from_scratch_on_the_bundled_sessions(request, root, monkeypatch):
    # Sidecar pairs (fixtures/default), workflows, compaction agents and real timestamps:
    # every session, every moment, at two budgets.
    from pathlib import Path

    from measure.akm.read import list_sessions, read_session
    from measure.measurements.lines import SessionLines

    projects = Path(__file__).parent.parent / root if root.startswith("fixtures/") else request.getfixturevalue(root) / "projects"
    for budget in (80_000, 3_000):
        for listing in list_sessions(projects):
            lines = SessionLines()
            session, _ = read_session(listing.path, str(projects), file_time_ms=1_767_225_600_000, observe=lines.observe)
            _replayed_both_ways(session, lines.get("tasks"), budget, "turn_end", monkeypatch)


def test_each_moment_sees_the_deliveries_made_by_then(tmp_path):
    """A foreground agent's result reaches the parent at 60 s: before that, its report is undelivered."""
    copies_only_root(tmp_path / "projects")
    (listing,) = list_sessions(tmp_path / "projects")
    lines = SessionLines()
    session, _ = read_session(listing.path, str(tmp_path / "projects"), file_time_ms=PIN, observe=lines.observe)
    timelines = lines.get("tasks")
    before, after = date_parse(ts(59)), date_parse(ts(60))

    def acks(t):
        return [a.kind for a in timelines_at(timelines, t)[session.ref.path].acks]

    assert "sync_result" not in acks(before) and "sync_result" in acks(after)
    replayer = Replayer(session)
    for t, undelivered in ((before, 1), (after, 0)):
        ctx = SessionContext(replayer.cut(t), Params(template=TEMPLATE, keep_prompts=False), timelines=timelines_at(timelines, t))
        assert len(ctx.undelivered_reports) == undelivered
