"""Parity with vectors produced by the real akm code (tests/parity, from ../shared/parity)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from measure.akm.hashing import content_hash
from measure.akm.jscompat import to_utf8, utf16_len
from measure.akm.prefilter import prefilter
from measure.akm.prompt import build_prompt
from measure.akm.read import list_sessions, read_session
from measure.measurements.strategies import Params, SessionContext, run_all

HERE = Path(__file__).parent / "parity"
TEMPLATE = (HERE / "template.md").read_text(encoding="utf-8")
STANDARDS = "  house rules: keep it short  "


def _event(e) -> dict:
    return {"role": e.role, "ts": e.ts, "file": e.file, "text": e.text}


def _ref(r) -> dict:
    return {"kind": r.kind, "text": r.text, "ts": r.ts, **({"ref": r.ref} if r.ref is not None else {})}


def _stats(s) -> dict:
    return {
        "inputCount": s.inputCount,
        "outputCount": s.outputCount,
        "droppedByRule": s.droppedByRule,
        "truncatedCount": s.truncatedCount,
        "totalChars": s.totalChars,
        "budgetDroppedCount": s.budgetDroppedCount,
    }


def compute_vector(root: Path, listing) -> dict:
    """The vector our reimplementation produces, in the shape akm's generator wrote."""
    path = listing.path
    session, _ = read_session(path, str(root))
    ctx = SessionContext(session, Params(template=TEMPLATE))
    results = run_all(ctx)
    parent = session.ref.path
    ref = session.ref
    vec: dict = {
        "session": parent,
        "sessionId": ref.session_id,
        "subagentFiles": sorted(t.path for t in session.subagents if not t.path.endswith("/journal.jsonl")),
        "listed": {
            "startedAt": listing.started_at,
            "endedAt": listing.ended_at,
            "projectHint": listing.project_hint,
            "title": listing.title,
        },
        "ref": {
            "harness": ref.harness,
            "sessionId": ref.session_id,
            "filePath": ref.path,
            "startedAt": ref.started_at,
            "endedAt": ref.ended_at,
            **({"projectHint": ref.project_hint} if ref.project_hint else {}),
            **({"title": ref.title} if ref.title else {}),
        },
        "rawEvents": {"alone": len(session.alone), "folded": len(session.folded)},
        "rawChars": {"alone": sum(e.chars for e in session.alone), "folded": sum(e.chars for e in session.folded)},
        "foldedEvents": [_event(e) for e in session.folded],
        "inlineRefs": {"alone": [_ref(r) for r in session.parent.refs], "folded": [_ref(r) for r in session.refs]},
        "contentHash": {
            "alone": content_hash(session.alone),
            "folded": content_hash(session.folded),
        },
    }
    prefilter(session.folded, max_total_chars=1000)
    vec["contentHash"]["foldedAfterTinyBudgetPrefilter"] = content_hash(session.folded)
    cands = {}
    for name in ("link", "fold", "fold_dedupe_scoped", "fold_stub_raw", "hybrid"):
        r = results[name]
        call = r.calls[0]
        pe, pc, se, sc = r.kept_by_origin
        cands[name] = {
            "name": name,
            "stats": _stats(call.kept.stats),
            "parentKeptEvents": pe,
            "subagentKeptEvents": se,
            "parentKeptChars": pc,
            "keptChars": pc + sc,
            "promptChars": call.prompt.chars,
            "prompt": call.prompt.text,
            "inlineRefs": r.inline_refs,
            "kept": [_event(e) for e in call.kept.events],
        }
    vec["candidates"] = cands
    vec["eviction"] = {
        "aloneParentKeptChars": cands["link"]["parentKeptChars"],
        "foldParentKeptChars": cands["fold"]["parentKeptChars"],
        "aloneParentKeptEvents": cands["link"]["parentKeptEvents"],
        "foldParentKeptEvents": cands["fold"]["parentKeptEvents"],
    }
    fold_kept = {(e.ts, e.file) for e in results["fold"].calls[0].kept.events}
    vec["duplicatePairs"] = [
        {
            "agentId": p.agent_id,
            "description": p.description,
            "toolUseId": p.tool_use_id,
            "parentEventIdx": p.parent_index,
            "parentChars": p.notification.chars,
            "overlap": p.overlap,
            "notificationSurvives": (p.notification.ts, p.notification.file) in fold_kept,
            "subagentOwnSurvives": (p.final.ts, p.final.file) in fold_kept,
        }
        for p in ctx.pairs if p.pairing == "sidecar_tool_use_id"
    ]
    variants = {}
    for total, per in ((80000, 2000), (6000, 2000), (1500, 300), (1, 2000)):
        kept = prefilter(session.folded, max_total_chars=total, max_event_text_length=per)
        variants[f"{total}/{per}"] = {"stats": _stats(kept.stats), "kept": [_event(e) for e in kept.events]}
    vec["preFilterVariants"] = variants
    vec["promptNoEventsWithStandards"] = build_prompt(TEMPLATE, session.ref, [], [], STANDARDS).text
    ch = results["chunked"]
    vec["chunked"] = {
        "parentWindows": ch.parent_windows,
        "subagentChunks": ch.subagent_chunks,
        "llmCalls": len(ch.calls),
        "parentKeptCharsAcrossChunks": sum(e.chars for c in ch.calls for e in c.kept.events if e.file == parent),
        "promptCharsTotal": ch.prompt_chars,
        "chunks": [
            {
                "events": c.raw_events,
                "rawChars": c.raw_chars,
                "keptChars": c.kept.stats.totalChars,
                "parentKeptChars": sum(e.chars for e in c.kept.events if e.file == parent),
                "promptChars": c.prompt.chars,
                "source": c.source,
            }
            for c in ch.calls
        ],
    }
    return vec


def _digest(s: str) -> dict:
    return {"len": utf16_len(s), "sha256": hashlib.sha256(to_utf8(s)).hexdigest()}


def assert_same(expected, actual, where: str = "") -> None:
    """Field-by-field equality; a {len, sha256} stub in a vector stands for a long string."""
    if isinstance(expected, dict) and set(expected) == {"len", "sha256"} and isinstance(actual, str):
        assert _digest(actual) == expected, f"{where}: long string differs"
        return
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: expected an object, got {actual!r:.200}"
        assert sorted(expected) == sorted(actual), f"{where}: keys {sorted(expected)} != {sorted(actual)}"
        for k in expected:
            assert_same(expected[k], actual[k], f"{where}.{k}")
        return
    if isinstance(expected, list):
        assert isinstance(actual, list), f"{where}: expected a list"
        assert len(expected) == len(actual), f"{where}: {len(expected)} items expected, got {len(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_same(e, a, f"{where}[{i}]")
        return
    if isinstance(expected, float) or isinstance(actual, float):
        assert expected == actual, f"{where}: {expected!r} != {actual!r}"
        return
    assert expected == actual, f"{where}: {expected!r:.300} != {actual!r:.300}"


def _cases(kind: str) -> list[str]:
    return json.loads((HERE / kind / "INDEX.json").read_text())


def _listing_for(root: Path, name: str):
    rel_path = name[: -len(".json")].replace("__", "/") + ".jsonl"
    listings = list_sessions(root / "projects")
    for lst in listings:
        if os.path.relpath(lst.path, root).replace(os.sep, "/") == rel_path:
            return lst
    raise AssertionError(f"{rel_path} not listed")


@pytest.mark.parametrize("name", _cases("expected"))
def test_synthetic_vector(parity_root, name):
    expected = json.loads((HERE / "expected" / name).read_text(encoding="utf-8"))
    actual = compute_vector(parity_root, _listing_for(parity_root, name))
    assert_same(expected, actual, name)


@pytest.mark.parametrize("name", _cases("expected-real"))
def test_real_vector(real_root, name):
    expected = json.loads((HERE / "expected-real" / name).read_text(encoding="utf-8"))
    actual = compute_vector(real_root, _listing_for(real_root, name))
    assert_same(expected, actual, name)


def test_listing_matches_index(parity_root):
    """Every vector is a listed session and every listed session has a vector."""
    listed = sorted(
        os.path.relpath(s.path, parity_root).replace(os.sep, "/")[: -len(".jsonl")].replace("/", "__") + ".json"
        for s in list_sessions(parity_root / "projects")
    )
    assert listed == sorted(_cases("expected"))
