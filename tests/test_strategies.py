"""Properties every strategy must keep, checked on every parity and real session."""

from __future__ import annotations

import pytest

from measure.akm.hashing import content_hash
from measure.akm.prefilter import prefilter
from measure.akm.prompt import load_template
from measure.akm.read import list_sessions, read_session
from measure.measurements.strategies import STRATEGIES, Params, SessionContext, run_all

try:
    from test_delegation import delivered_root, undelivered_root
    from test_verdict import copies_only_root
except ImportError:  # run from the repository root as a package
    from tests.test_delegation import delivered_root, undelivered_root
    from tests.test_verdict import copies_only_root


def _sessions(root):
    for listing in list_sessions(root / "projects"):
        session, _ = read_session(listing.path, str(root))
        yield session


@pytest.fixture(scope="module", params=["parity_root", "real_root"])
def sessions(request):
    return list(_sessions(request.getfixturevalue(request.param)))


def test_registry_has_every_candidate():
    assert list(STRATEGIES) == ["link", "fold", "fold_dedupe_scoped", "fold_stub_raw", "fold_dedupe_sync", "hybrid", "chunked",
                                "parent_first", "hybrid_undelivered"]


def test_content_hash_does_not_move_with_the_budget(sessions):
    template = load_template()
    for s in sessions:
        before = content_hash(s.folded)
        for budget in (1000, 80_000):
            run_all(SessionContext(s, Params(template=template, budget=budget)))
        assert content_hash(s.folded) == before


def test_hybrid_keeps_exactly_what_link_keeps(sessions):
    """hybrid reuses link's pre-filter result; check the premise on a fresh pre-filter."""
    template = load_template()
    for s in sessions:
        ctx = SessionContext(s, Params(template=template))
        assert ctx.parent_events == ctx.session.alone  # same events, same order
        for budget in (6000, 80_000):
            r = run_all(SessionContext(s, Params(template=template, budget=budget)), ["link", "hybrid"])
            link = [(e.ts, e.file, e.text) for e in r["link"].calls[0].kept.events]
            fresh = [(e.ts, e.file, e.text) for e in prefilter(ctx.parent_events, max_total_chars=budget).events]
            assert fresh == link == [(e.ts, e.file, e.text) for e in r["hybrid"].calls[0].kept.events]
            assert r["hybrid"].inline_refs == len(s.refs)


def test_dedupe_reuse_matches_a_fresh_prefilter(sessions):
    """fold_dedupe_scoped reuses fold's kept list; a full pre-filter with the post-pass agrees."""
    template = load_template()
    for s in sessions:
        for budget in (6000, 80_000):
            ctx = SessionContext(s, Params(template=template, budget=budget))
            call = STRATEGIES["fold_dedupe_scoped"](ctx).calls[0]
            fresh = prefilter(s.folded, max_total_chars=budget, dedupe=True)
            assert [(e.ts, e.file, e.text) for e in fresh.events] == [(e.ts, e.file, e.text) for e in call.kept.events]
            assert fresh.stats == call.kept.stats


def test_scoped_dedupe_never_stubs_without_the_kept_copy(sessions):
    template = load_template()
    for s in sessions:
        for budget in (6000, 80_000):
            ctx = SessionContext(s, Params(template=template, budget=budget))
            call = STRATEGIES["fold_dedupe_scoped"](ctx).calls[0]
            agents = {e.file.rsplit("/agent-", 1)[-1][: -len(".jsonl")] for e in call.kept.events if "/agent-" in e.file}
            for e in call.kept.events:
                if e.text.startswith("[subagent ") and e.file == s.ref.path:
                    task_id = e.text[len("[subagent ") :].split(" completed:", 1)[0]
                    assert task_id in agents


def test_chunked_covers_every_parent_event_once(sessions):
    template = load_template()
    for s in sessions:
        r = STRATEGIES["chunked"](SessionContext(s, Params(template=template, budget=20_000)))
        windows = r.calls[: r.parent_windows]
        assert sum(c.raw_events for c in windows) == sum(1 for e in s.folded if e.file == s.ref.path)
        assert all(c.raw_chars <= 20_000 or c.raw_events == 1 for c in windows)
        assert len(r.calls) == r.parent_windows + r.subagent_chunks


def test_min_content_gate_skips_an_empty_session_without_a_call(tmp_path):
    """#10 defect 5: akm's minContentChars gate (10 chars of the full folded raw text) skips a
    near-empty session: no call, no prompt chars, and the sessions table says why."""
    import json

    from measure.measurements.sessions import session_rows
    from measure.measurements.strategies import (
        MIN_CONTENT_CHARS,
        apply_min_content_gate,
    )

    root = tmp_path / "projects"
    (root / "-home-dev-x").mkdir(parents=True)
    short = root / "-home-dev-x" / "0f0f0f0f-0000-4000-8000-000000000002.jsonl"
    line = {"type": "user", "uuid": "u1", "sessionId": short.stem, "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": "hi there"}}
    short.write_text(json.dumps(line) + "\n", encoding="utf-8")
    session, _ = read_session(str(short), str(tmp_path))
    ctx = SessionContext(session, Params(template=load_template()))
    assert sum(e.chars for e in session.folded) < MIN_CONTENT_CHARS
    gated = apply_min_content_gate(ctx, run_all(ctx))
    assert {n: len(r.calls) for n, r in gated.items()} == dict.fromkeys(STRATEGIES, 0)
    rows = session_rows(ctx, gated, content_hash(session.folded), {})
    assert {r["skipped"] for r in rows} == {"min_content_chars"}
    assert {r["prompt_chars"] for r in rows} == {0}


def test_min_content_gate_keeps_every_parity_and_real_session_with_content(sessions):
    from measure.measurements.strategies import apply_min_content_gate

    template = load_template()
    for s in sessions:
        ctx = SessionContext(s, Params(template=template))
        results = run_all(ctx, ["fold", "hybrid"])
        gated = apply_min_content_gate(ctx, results)
        if sum(e.chars for e in s.folded) >= 10:
            assert gated == results


def test_shrinking_an_event_keeps_every_newer_decision_and_its_own_place():
    """What makes fold_dedupe_sync's re-run safe for its stubs: the recency budget decides each event
    from the newer ones alone, so an event that only shrinks keeps its place, and so does every newer one."""
    import random

    from measure.akm.records import Event

    rng = random.Random(24)
    for _ in range(2000):
        sizes = [rng.randint(10, 60) for _ in range(rng.randint(1, 12))]  # oldest first
        events = [Event("user", i, "x" * n, "f", n) for i, n in enumerate(sizes)]
        budget = rng.randint(10, sum(sizes))
        k = rng.randrange(len(events))
        small = rng.randint(10, sizes[k])
        shrunk = events[:k] + [Event("user", k, "y" * small, "f", small)] + events[k + 1:]
        before = {e.ts for e in prefilter(events, max_total_chars=budget, max_event_text_length=100).events}
        after = {e.ts for e in prefilter(shrunk, max_total_chars=budget, max_event_text_length=100).events}
        assert {t for t in before if t >= k} <= after and {t for t in after if t > k} == {t for t in before if t > k}


def test_a_report_the_freed_budget_displaces_keeps_its_copy(tmp_path):
    """The budget pass skips what does not fit and keeps trying older events: a stub's freed room can
    admit an older event ahead of the subagent's final report. fold_dedupe_sync then un-stubs the copy
    (a single re-run would have left the result in the prompt only as a stub)."""
    import json

    from measure.akm.jscompat import utf16_len
    from measure.measurements import tasks  # noqa: F401  (registers the "tasks" collector)
    from measure.measurements.lines import SessionLines
    from measure.measurements.strategies import _stubbed, stub_text

    report = "The cache is keyed by the full request path; " * 8
    sid = "0e0e0e0e-0000-4000-8000-000000000024"

    def read(x_chars: int):
        proj = tmp_path / f"x{x_chars}" / "-home-dev-x"
        (proj / sid / "subagents").mkdir(parents=True)

        def line(t, role, content, **extra):
            return json.dumps({"type": role, "timestamp": f"2026-01-01T00:00:0{t}.000Z", "message": {"role": role, "content": content}, **extra})

        call = {"type": "tool_use", "id": "toolu_1", "name": "Agent", "input": {"description": "Map the cache", "prompt": "Map the cache keys."}}
        footer = {"type": "text", "text": "agentId: a0123456 (for resuming to continue this agent's work if needed)"}
        (proj / f"{sid}.jsonl").write_text("\n".join([
            line(0, "user", "Please map how the cache is keyed."),
            line(1, "assistant", [call]),
            line(4, "assistant", [{"type": "text", "text": "w " * (x_chars // 2)}]),  # X: between the report and its copy
            line(5, "user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": report}, footer]}],
                 toolUseResult={"status": "completed", "agentId": "a0123456"}),
            line(6, "assistant", [{"type": "text", "text": "Understood, the cache is keyed by path."}]),
        ]) + "\n")
        (proj / sid / "subagents" / "agent-a0123456.jsonl").write_text("\n".join([
            line(2, "user", "Map the cache keys.", isSidechain=True), line(3, "assistant", [{"type": "text", "text": report}], isSidechain=True),
        ]) + "\n")
        lines = SessionLines(("tasks",))
        s, _ = read_session(str(proj / f"{sid}.jsonl"), str(proj.parent), observe=lines.observe)
        return s, lines.get("tasks")

    def context(s, tl, budget):
        return SessionContext(s, Params(template=load_template(), budget=budget, max_event_text_length=10**6), timelines=tl)

    s, tl = read(10)
    (pair, description), = context(s, tl, 80_000).sync_pairs
    f = next(e.chars for e in s.folded if (e.ts, e.file) == (pair.final.ts, pair.final.file))  # with fold's provenance line
    p, stub = pair.notification.chars, utf16_len(stub_text(pair, description))
    newer = sum(e.chars for e in s.folded if e.ts > pair.notification.ts)
    x = max(f, p - stub) + 6  # too big to fit beside the copy, small enough to fit beside its stub
    assert x + f > p - stub + f >= x  # ... and then too big to leave room for the report
    s, tl = read(x)
    ctx = context(s, tl, budget=newer + p + f)
    (pair, _), = ctx.sync_pairs

    def kept(call):
        return call.kept_keys()

    copy, final = (pair.notification.ts, pair.notification.file), (pair.final.ts, pair.final.file)
    assert {copy, final} <= kept(ctx.fold_call) and len(kept(ctx.fold_call)) == 3  # the copy, the report and the newest line
    once, _ = _stubbed(ctx, {pair.parent_index: stub_text(pair, description)})
    assert final not in kept(once)  # a single re-run loses the report
    r = STRATEGIES["fold_dedupe_sync"](ctx)
    assert r.stubbed == 0 and final in kept(r.calls[0]) and r.prompt_sha256 == STRATEGIES["fold"](ctx).prompt_sha256
    # scoped, as #842: a copy the budget did not keep is left alone, though its report is kept (and a
    # stub in its place would leave room for the report)
    assert p > f + stub
    ctx = context(s, tl, budget=newer + f + stub)
    assert final in kept(ctx.fold_call) and copy not in kept(ctx.fold_call)
    r = STRATEGIES["fold_dedupe_sync"](ctx)
    assert r.stubbed == 0 and r.prompt_sha256 == STRATEGIES["fold"](ctx).prompt_sha256
# ------------------------------------------------------------------------------------------------
# The suite proposals
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("budget", [2_000, 20_000, 80_000, 10**9])
def test_parent_first_keeps_links_parent_events_then_fills_the_room_left(sessions, budget):
    template = load_template()
    for s in sessions:
        ctx = SessionContext(s, Params(template=template, budget=budget))
        link, first, fold = (STRATEGIES[n](ctx) for n in ("link", "parent_first", "fold"))
        kept = first.calls[0].kept
        parent = [e for e in kept.events if e.file == s.ref.path]
        assert parent == list(link.calls[0].kept.events)  # zero parent eviction, by construction
        assert list(kept.events) == sorted(kept.events, key=lambda e: e.ts)  # merged in stream order
        # each subagent event is what akm's per-event rules keep of a folded subagent event, in stream order
        place = {id(v[1]): i for i, src in enumerate(s.folded) if src.file != s.ref.path
                 and (v := ctx.memo.verdicts.get(id(src))) is not None and v[0] is None}
        subagent = [place[id(e)] for e in kept.events if e.file != s.ref.path]
        assert subagent == sorted(subagent)
        st, alone = kept.stats, link.calls[0].kept.stats
        assert st.totalChars == sum(e.chars for e in kept.events) and st.outputCount == len(kept.events)
        assert st.inputCount == len(s.folded) and st.budgetDroppedCount == alone.budgetDroppedCount + len(place) - len(subagent)
        if parent:
            assert kept.stats.totalChars <= max(budget, link.calls[0].kept.stats.totalChars)  # within the budget
        assert first.inline_refs == fold.inline_refs
        if budget == 10**9:  # nothing is dropped by the budget: the same events and prompt as fold
            assert kept.events == fold.calls[0].kept.events and first.prompt_sha256 == fold.prompt_sha256
            assert st == fold.calls[0].kept.stats  # truncations and drops by rule counted as akm counts them


def _proposals(root, build):
    from measure.measurements import tasks  # noqa: F401  (registers the "tasks" collector)
    from measure.measurements.lines import SessionLines

    build(root / "projects")
    (listing,) = list_sessions(root / "projects")
    lines = SessionLines()
    session, _ = read_session(listing.path, str(root / "projects"), observe=lines.observe)
    ctx = SessionContext(session, Params(template=load_template()), timelines=lines.get("tasks"))
    return session, ctx, run_all(ctx, ["hybrid", "parent_first", "hybrid_undelivered"])


def test_parent_first_sends_delegated_content_where_room_is_left(tmp_path):
    session, ctx, r = _proposals(tmp_path, undelivered_root)
    assert r["hybrid"].kept_by_origin[3] == 0 < r["parent_first"].kept_by_origin[3]
    assert r["parent_first"].kept_by_origin[:2] == r["hybrid"].kept_by_origin[:2]


def test_hybrid_undelivered_adds_the_reports_that_never_reached_the_parent(tmp_path):
    session, ctx, r = _proposals(tmp_path / "u", undelivered_root)
    added = [e for e in r["hybrid_undelivered"].calls[0].kept.events if e.file != session.ref.path]
    assert sorted(e.file.rsplit("/", 1)[-1] for e in added) == ["agent-a1111111111111111.jsonl", "agent-a2222222222222222.jsonl"]
    assert all(e.role == "assistant" and e.text.startswith("[subagent:") for e in added)  # the folded final reports
    assert r["hybrid_undelivered"].inline_refs == r["hybrid"].inline_refs
    # delivered by a Task result or a consumed notification: not added; removed from the queue unread, a compaction
    # helper (not delegated work): only the first is added
    session, ctx, r = _proposals(tmp_path / "d", delivered_root)
    added = [e for e in r["hybrid_undelivered"].calls[0].kept.events if e.file != session.ref.path]
    assert [e.file.rsplit("/", 1)[-1] for e in added] == ["agent-a7777777777777777.jsonl"]
    # without the timelines nothing is known to be delivered: every delegated report is added
    assert len(SessionContext(session, Params(template=load_template())).undelivered_reports) == 3
    # every result delivered: hybrid's prompt exactly
    _, _, r = _proposals(tmp_path / "c", copies_only_root)
    assert r["hybrid_undelivered"].prompt_sha256 == r["hybrid"].prompt_sha256



def test_budgets_that_keep_the_same_events_share_one_prompt_and_others_get_their_own(sessions):
    """A memo shared by every budget (as a run shares it) gives each call the prompt a memo of its
    own would: reused only when the kept events, ref and refs are the same objects."""
    from measure.measurements.strategies import Memo

    template = load_template()
    budgets = (2000, 80_000, 10**8, 10**9)
    for s in sessions:
        memo = Memo()
        shared = {b: run_all(SessionContext(s, Params(template=template, budget=b), memo)) for b in budgets}
        for b in budgets:
            alone = run_all(SessionContext(s, Params(template=template, budget=b)))
            for name, r in alone.items():
                assert [c.prompt for c in shared[b][name].calls] == [c.prompt for c in r.calls], (s.ref.path, name, b)
        whole = shared[10**9]["fold"].calls[0]
        assert shared[10**8]["fold"].calls[0].prompt is whole.prompt  # both keep every event: built once
        for b in (2000, 80_000):
            call = shared[b]["fold"].calls[0]
            assert (call.prompt is whole.prompt) == (call.kept.events == whole.kept.events)



@pytest.mark.parametrize("root_name", ["parity_root", "real_root"])
def test_a_budget_sweep_reusing_whole_results_equals_each_budget_run_on_its_own(request, root_name):
    """The run computes a budget only until every strategy fits whole (`fits_whole`); its sweep rows
    must be those of every budget run from scratch, fitting or not."""
    from measure.measurements import tasks  # noqa: F401  (registers the "tasks" line collector)
    from measure.measurements.budget_sweep import sweep_rows
    from measure.measurements.lines import SessionLines
    from measure.measurements.strategies import apply_min_content_gate, fits_whole
    from measure.runner.job import RunParams, columns, measure_session

    root = request.getfixturevalue(root_name)
    template = load_template()
    budgets = [300, 2000, 6000, 20_000, 80_000, 640_000]
    params = RunParams.from_options(budgets=budgets)
    compared = reused = 0
    for listing in list_sessions(root / "projects"):
        lines = SessionLines()
        s, _ = read_session(listing.path, str(root), observe=lines.observe)
        alone = {}
        for b in sorted({params.budget, *budgets}):
            ctx = SessionContext(s, Params(template=template, budget=b, keep_prompts=False), None, lines.get("tasks"))
            alone[b] = apply_min_content_gate(ctx, run_all(ctx))
            reused += all(map(fits_whole, alone[b].values()))
        table = measure_session(str(root), listing.path, params, template).tables.get("budget_sweep", {})
        measured = {k: v for k, v in table.items() if k not in ("session_id", "session_path")}
        assert measured == (columns(sweep_rows(alone)) if table else {}), s.ref.path
        compared += bool(table)
    assert compared and reused  # sessions compared, and some fit whole below the largest budget
