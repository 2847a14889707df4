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
    assert list(STRATEGIES) == ["link", "fold", "fold_dedupe_scoped", "fold_stub_raw", "hybrid", "chunked",
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
        assert ctx.parent_events == ctx.alone  # same events, same order
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
    rows = session_rows(ctx, gated, content_hash(session.folded))
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
    assert r["hybrid"].kept_by_origin()[3] == 0 < r["parent_first"].kept_by_origin()[3]
    assert r["parent_first"].kept_by_origin()[:2] == r["hybrid"].kept_by_origin()[:2]


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
