"""Tests for measure.synth: determinism, layout coverage, realism against fixtures/real, the s840 shape."""

from __future__ import annotations

import hashlib
import html
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from measure import synth
from measure.measurements.pairs import jaccard

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "fixtures" / "real"
DEFAULT = ROOT / "fixtures" / "default"
DEFAULT_SEED = 20260826  # the seed fixtures/default was generated with (fixtures/README.md)
DEFAULT_SESSIONS = 14  # and its --sessions

# akm's inline-ref patterns (pipeline-spec §8), used to count refs the way the study did.
REMEMBER = re.compile(r"\bakm\s+remember\s+(?:\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)')")
FEEDBACK = re.compile(r"\bakm\s+feedback\s+(\S+)(?:\s+--[a-z-]+)*\s+(?:--note|-n)\s+(?:\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)')")


# -- helpers ----------------------------------------------------------------------------------

def tree_digest(root: Path) -> str:
    """Hash of every path, its bytes and its mtime under root."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
            h.update(str(path.stat().st_mtime_ns).encode())
    return h.hexdigest()


def lines_of(path: Path) -> list[dict]:
    out = []
    for raw in path.read_bytes().split(b"\n"):
        if not raw:
            continue
        try:
            entry = orjson.loads(raw.decode("utf-8", "replace"))
        except orjson.JSONDecodeError:
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out


def events_of(path: Path) -> list[tuple[str, str]]:
    """(timestamp, text) of every line akm's reader turns into an event, sorted by time."""
    evs = [(e.get("timestamp", ""), synth.flat_text(e)) for e in lines_of(path)]
    return sorted((ts, t) for ts, t in evs if t)


def jsonl_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.jsonl") if p.is_file())


def count_refs(text: str) -> int:
    if len(text) < 10:
        return 0
    n = sum(1 for m in REMEMBER.finditer(text) if (m.group(1) or m.group(2) or "").strip())
    return n + sum(1 for _ in FEEDBACK.finditer(text))


def realism_failures(gen: dict, real: dict) -> list[str]:
    """Where a corpus's statistics leave the tolerated band around the real corpus's."""
    failures = []
    for kind in ("progress", "assistant", "user"):
        g, r = gen["record_type_share"].get(kind, 0.0), real["record_type_share"][kind]
        if not r / 1.6 <= g <= r * 1.6:
            failures.append(f"record type {kind}: {g:.3f} vs real {r:.3f} (factor 1.6)")
    for kind, factor in (("tool_use", 1.5), ("tool_result", 1.5), ("text", 1.5), ("thinking", 2.5), ("string", 3.0)):
        g, r = gen["block_share"].get(kind, 0.0), real["block_share"][kind]
        if not r / factor <= g <= r * factor:
            failures.append(f"block {kind}: {g:.3f} vs real {r:.3f} (factor {factor})")
    for q in ("p25", "p50", "p75", "p90"):
        g, r = gen["event_len_quantiles"][q], real["event_len_quantiles"][q]
        if not r / 2 <= g <= r * 2:
            failures.append(f"event length {q}: {g} vs real {r} (factor 2)")
    return failures


# -- fixtures ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def mixed_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mixed") / "projects"
    synth.generate(root, seed=11)
    return root


@pytest.fixture(scope="module")
def mixed_stats(mixed_root) -> dict:
    return synth.corpus_stats(mixed_root)


@pytest.fixture(scope="module")
def real_stats() -> dict:
    return synth.corpus_stats(REAL)


@pytest.fixture(scope="module")
def s840_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("s840") / "projects"
    synth.generate(root, seed=840, shape="s840")
    return root


# -- determinism ------------------------------------------------------------------------------

def test_same_seed_same_bytes_and_mtimes(tmp_path, mixed_root):
    again = tmp_path / "again"
    synth.generate(again, seed=11)
    assert tree_digest(again) == tree_digest(mixed_root)


def test_same_seed_same_bytes_across_hash_seeds(tmp_path):
    # String hashing is salted per process; a generator that leaked set/dict order would differ here.
    code = "import sys; from pathlib import Path; from measure.synth import generate; generate(Path(sys.argv[1]), seed=5, sessions=6)"
    for name, hash_seed in (("a", "1"), ("b", "2")):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        subprocess.run([sys.executable, "-c", code, str(tmp_path / name)], check=True, env=env, cwd=ROOT)
    assert tree_digest(tmp_path / "a") == tree_digest(tmp_path / "b")


def test_different_seed_different_bytes(tmp_path, mixed_root):
    other = tmp_path / "other"
    synth.generate(other, seed=12)
    assert tree_digest(other) != tree_digest(mixed_root)


def test_refuses_non_empty_directory(tmp_path):
    (tmp_path / "x.txt").write_text("keep me")
    with pytest.raises(FileExistsError):
        synth.generate(tmp_path, seed=1)


def test_mtime_is_last_timestamp(mixed_root):
    from datetime import datetime
    path = max((p for p in jsonl_files(mixed_root) if p.read_bytes().endswith(b"\n")), key=lambda p: p.stat().st_size)
    last = max(e["timestamp"] for e in lines_of(path) if isinstance(e.get("timestamp"), str))
    last_ms = int(datetime.fromisoformat(last.replace("Z", "+00:00")).timestamp() * 1000)
    assert 0 <= path.stat().st_mtime_ns // 1_000_000 - last_ms < 1000


# -- every layout and error path in a mixed root ------------------------------------------------

def test_mixed_has_every_layout(mixed_root, mixed_stats):
    layouts = mixed_stats["layouts"]
    for layout in ("session", "sibling_agent", "subagent", "subagent_compaction", "workflow_agent", "workflow_journal"):
        assert layouts.get(layout, 0) > 0, layout
    assert mixed_stats["inline_sidechain_lines"] > 0
    assert mixed_stats["orphan_session_dirs"] >= 1
    sidecars = mixed_stats["sidecars"]
    assert sidecars["meta_with_toolUseId"] > 0
    assert sidecars["meta_unparseable"] >= 2  # one broken, one `null`
    subagent_files = [p for p in jsonl_files(mixed_root) if synth._layout_of(p.relative_to(mixed_root).parts) == "subagent"
                      and not p.name.startswith("agent-acompact-")]
    assert any(not p.with_name(p.name[:-6] + ".meta.json").exists() for p in subagent_files), "a subagent without sidecar"
    assert list(mixed_root.glob("*/*/workflows/*.json")), "workflow run snapshot"
    assert list(mixed_root.glob("*/*/tool-results/toolu_*.txt")), "persisted tool output"
    metas = [orjson.loads(p.read_bytes()) for p in mixed_root.rglob("*.meta.json") if p.read_bytes() not in (b"null",)
             and p.read_bytes().endswith(b"}")]
    assert any(m.get("spawnDepth") == 2 and "parentAgentId" in m for m in metas), "nested (depth-2) agent"


def test_mixed_has_every_error_path(mixed_root, mixed_stats):
    files = jsonl_files(mixed_root)
    assert mixed_stats["invalid_utf8_files"] >= 1
    assert any(p.stat().st_size == 0 and len(p.relative_to(mixed_root).parts) == 2 for p in files), "empty session file"
    assert any(p.stat().st_size == 0 and "subagents" in p.parts for p in files), "empty subagent file"
    assert any(p.is_dir() for p in mixed_root.glob("*/*.jsonl")), "a directory named like a session"
    torn = [p for p in files if p.stat().st_size and not p.read_bytes().endswith(b"\n")]
    assert torn, "a torn final line"
    assert 0 < mixed_stats["unparseable_lines"] < 0.01 * mixed_stats["lines"]


def test_mixed_has_every_record_shape(mixed_root):
    seen = set()
    notifications = {}
    msg_ids = {}
    for path in jsonl_files(mixed_root):
        for e in lines_of(path):
            kind = e.get("type")
            seen.add(kind)
            if kind == "system":
                seen.add("system/" + e.get("subtype", ""))
            if kind == "progress":
                seen.add("progress/" + e["data"]["type"])
            if kind == "queue-operation":
                seen.add("queue/" + e["operation"])
                content = e.get("content") or ""
                if e["operation"] == "enqueue" and "-notification>" in content:
                    task = re.search(r"<(?:task|agent)-id>([^<]+)<", content).group(1)
                    notifications.setdefault(task, []).append(content)
            if e.get("isCompactSummary"):
                seen.add("compact-summary")
            if kind == "assistant":
                m = e["message"]
                msg_ids.setdefault(m["id"], []).append(orjson.dumps(m["usage"]))
                for b in m["content"]:
                    seen.add("block/" + b["type"])
                    if b["type"] == "tool_use" and b["name"] == "Bash":
                        cmd = b["input"]["command"]
                        for op in ("remember", "feedback", "search", "show"):
                            if cmd.startswith(f"akm {op} "):
                                seen.add(("akm", op, "subagent" if e.get("isSidechain") else "parent"))
            if kind == "user":
                c = e["message"]["content"]
                text = c if isinstance(c, str) else orjson.dumps(c).decode()
                for tag in ("<system-reminder>", "<local-command-caveat>"):
                    if tag in text:
                        seen.add(tag)
                if isinstance(c, list):
                    for b in c:
                        if b.get("type") == "tool_result":
                            seen.add("tool_result/" + type(b["content"]).__name__)
                if not text.isascii():
                    seen.add("non-ascii")
    for need in ("file-history-snapshot", "custom-title", "summary", "system/compact_boundary", "compact-summary",
                 "system/turn_duration", "system/stop_hook_summary", "system/local_command", "progress/hook_progress",
                 "progress/agent_progress", "progress/bash_progress", "queue/enqueue", "queue/dequeue", "queue/remove",
                 "block/thinking", "block/text", "block/tool_use", "<system-reminder>", "<local-command-caveat>",
                 "tool_result/str", "tool_result/list", "non-ascii"):
        assert need in seen, need
    for op in ("remember", "feedback"):
        for where in ("parent", "subagent"):
            assert ("akm", op, where) in seen, (op, where)
    assert {("akm", "search", "parent"), ("akm", "show", "parent")} & seen
    # one API response = several lines sharing message.id and usage
    split = [u for u in msg_ids.values() if len(u) > 1]
    assert split and all(len(set(u)) == 1 for u in split)
    # each notification era appears; a resumed agent notifies twice with different results
    texts = [t for ts in notifications.values() for t in ts]
    assert any(t.startswith("<agent-notification>") for t in texts)
    assert any("<result>" in t and "Full transcript available at:" in t and "<usage>" not in t for t in texts)  # 2.1.17
    assert any("<usage>total_tokens:" in t for t in texts)  # 2.1.37
    assert any("<tool-use-id>" in t and "<note>" in t and "<subagent_tokens>" in t for t in texts)  # 2.1.2xx
    assert any("<status>killed</status>" in t for t in texts)
    twice = [ts for ts in notifications.values() if len(ts) == 2]
    assert any(a != b and "<result>" in a and "<result>" in b for a, b in twice)


def test_killed_agents_are_never_delivered(mixed_root):
    for path in mixed_root.glob("*/*.jsonl"):
        if not path.is_file():
            continue
        lines = lines_of(path)
        delivered = {e["message"]["content"] for e in lines if e.get("type") == "user" and isinstance(e["message"]["content"], str)}
        for e in lines:
            if e.get("type") == "queue-operation" and e["operation"] == "enqueue" and "<status>killed</status>" in e["content"]:
                assert e["content"] not in delivered


def test_notification_result_copies_final_report(mixed_root):
    """The parent's first notification carries the subagent's final text: XML-escaped (2.1.2xx) or verbatim (2.1.1x/2.1.3x)."""
    checked = 0
    for session in mixed_root.glob("*/*.jsonl"):
        if not session.is_file():
            continue
        subdir = session.with_suffix("") / "subagents"
        notes = [e["message"]["content"] for e in lines_of(session)
                 if e.get("type") == "user" and str(e["message"]["content"]).startswith("<task-notification>")]
        for note in notes:
            task = re.search(r"<task-id>([^<]+)</task-id>", note).group(1)
            agent = subdir / f"agent-{task}.jsonl"
            if "<result>" not in note or not agent.exists():
                continue
            result = note[note.index("<result>") + 8: note.rindex("</result>")]
            finals = [synth.flat_text(e) for e in lines_of(agent) if e.get("type") == "assistant"
                      and e["message"]["content"][0]["type"] == "text"]
            decoded = html.unescape(result) if "<tool-use-id>" in note else result
            assert decoded in finals
            checked += 1
    assert checked >= 5


def test_sync_task_result_invariants(mixed_root):
    """The real-data invariants of claude-code-format.md §8.2 hold for generated sync results."""
    checked = 0
    for session in mixed_root.glob("*/*.jsonl"):
        if not session.is_file():
            continue
        for e in lines_of(session):
            tur = e.get("toolUseResult")
            if not (isinstance(tur, dict) and "totalTokens" in tur and "agentId" in tur):
                continue
            u = tur["usage"]
            assert tur["totalTokens"] == (u["input_tokens"] + u["cache_creation_input_tokens"]
                                          + u["cache_read_input_tokens"] + u["output_tokens"])
            agent = next((p for p in (session.with_suffix("") / "subagents" / f"agent-{tur['agentId']}.jsonl",
                                      session.parent / f"agent-{tur['agentId']}.jsonl") if p.exists()), None)
            assert agent is not None
            tool_uses = sum(1 for x in lines_of(agent) if x.get("type") == "assistant"
                            for b in x["message"]["content"] if b["type"] == "tool_use")
            assert tool_uses == tur["totalToolUseCount"]
            checked += 1
    assert checked >= 4


def test_sidecars_use_only_guide_keys(mixed_root):
    allowed = {"agentType", "description", "toolUseId", "spawnDepth", "model", "parentAgentId", "workflowPhase"}
    for path in mixed_root.rglob("*.meta.json"):
        try:
            meta = orjson.loads(path.read_bytes())
        except orjson.JSONDecodeError:
            continue
        if meta is None:
            continue
        assert set(meta) <= allowed and "agentType" in meta
        if "workflows" in path.parts:
            assert meta["agentType"] == "workflow-subagent" and "toolUseId" not in meta
        elif "toolUseId" in meta:
            assert meta["toolUseId"].startswith("toolu_") and meta["spawnDepth"] in (1, 2)
    for journal in mixed_root.rglob("journal.jsonl"):
        for e in lines_of(journal):
            assert e["type"] in ("started", "result") and list(e)[:3] == ["type", "key", "agentId"]


# -- realism against fixtures/real ---------------------------------------------------------------

def test_realism_record_block_and_length_mix(mixed_stats, real_stats):
    assert realism_failures(mixed_stats, real_stats) == []


def test_realism_check_rejects_an_unrealistic_corpus(tmp_path, real_stats):
    # Negative control: uniform one-line prompts and answers, no tools, no progress.
    root = tmp_path / "flat" / "proj"
    root.mkdir(parents=True)
    rows = []
    for i in range(200):
        kind = "user" if i % 2 == 0 else "assistant"
        content = "please fix the failing test in module x now" if kind == "user" else [{"type": "text", "text": "Done, the test passes now and CI is green."}]
        rows.append(orjson.dumps({"type": kind, "message": {"role": kind, "content": content}, "timestamp": synth.iso(1_770_000_000_000 + i)}))
    (root / "s.jsonl").write_bytes(b"\n".join(rows) + b"\n")
    failures = realism_failures(synth.corpus_stats(tmp_path / "flat"), real_stats)
    assert len(failures) >= 8


def test_unrelated_events_share_few_words(mixed_root):
    events = [(str(p), t) for p in jsonl_files(mixed_root) for _, t in events_of(p)]
    rng = random.Random(5)
    scores = []
    while len(scores) < 2000:
        (pa, a), (pb, b) = rng.sample(events, 2)
        if pa != pb:
            scores.append(jaccard(a, b))
    scores.sort()
    # fixtures/real measures a median of 0.024 and a p90 of 0.105
    assert scores[1000] < 0.06 and scores[1800] < 0.2


def test_key_order_matches_real_files(mixed_root):
    """Classic-era lines use key orders seen in the real 2.1.3x files (modulo the optional slug)."""
    def orders(paths, want_version):
        out = {}
        for p in paths:
            for e in lines_of(p):
                if not str(e.get("version", "")).startswith(want_version):
                    continue
                t = e["type"]
                sub = e.get("subtype") or (e.get("data") or {}).get("type") if t in ("system", "progress") else None
                if t == "user":
                    sub = "tool_result" if "toolUseResult" in e else ("meta" if e.get("isMeta") else "prompt")
                out.setdefault((t, sub), set()).add(tuple(k for k in e if k != "slug"))
        return out
    real = orders(jsonl_files(REAL / "spotter") + jsonl_files(REAL / "entire"), "2.1.")
    gen = orders([p for p in mixed_root.glob("*/*.jsonl") if p.is_file()], "2.1.3")
    for key in (("assistant", None), ("user", "prompt"), ("user", "tool_result"), ("progress", "hook_progress"),
                ("progress", "agent_progress"), ("system", "turn_duration"), ("system", "stop_hook_summary")):
        assert key in gen, key
        assert gen[key] <= real[key], (key, gen[key] - real[key])
    # 2.1.2xx: every main-thread and subagent shape in the claudemux lines (2.1.211-2.1.283) is produced
    claudemux = orders(jsonl_files(REAL / "claudemux"), "2.1.2")
    modern = orders(jsonl_files(mixed_root), "2.1.2")
    for key in (("assistant", None), ("user", "tool_result")):
        plain = {t for t in claudemux[key] if "advisorModel" not in t and "apiBlockIndex" not in t}
        assert plain <= modern[key], (key, plain - modern[key])


def test_compact_json_like_claude_code(mixed_root):
    path = max((p for p in mixed_root.glob("*/*.jsonl") if p.is_file()), key=lambda p: p.stat().st_size)
    first = path.read_bytes().split(b"\n", 1)[0]
    assert b'": ' not in first[:200] and b'", "' not in first[:200]
    assert orjson.dumps(orjson.loads(first)) == first


# -- the s840 shape mirrors akm's #840 study ------------------------------------------------------

S840_EXPECTED = {  # pipeline-spec §12.1/§12.2
    "4f7f80f8": {"top": 28, "chunks": 50, "pairs": 19, "refs": (2, 160), "windows": 17, "late": False},
    "578b2d47": {"top": 4, "chunks": 32, "pairs": 3, "refs": (4, 34), "windows": 15, "late": True},
    "f798f45f": {"top": 1, "chunks": 1, "pairs": 0, "refs": (1, 0), "windows": 8, "late": False},
    "393273fd": {"top": 74, "chunks": 129, "pairs": 55, "refs": (8, 0), "windows": 100, "late": True},
}


def test_s840_sessions_match_the_study(s840_root):
    sessions = {p.name[:8]: p for p in s840_root.glob("*/*.jsonl")}
    assert set(sessions) == set(S840_EXPECTED)
    for prefix, want in S840_EXPECTED.items():
        parent = sessions[prefix]
        assert parent.stem == synth.S840_SESSIONS[prefix]
        subdir = parent.with_suffix("") / "subagents"
        assert len([p for p in subdir.iterdir() if p.suffix == ".jsonl"]) == want["top"], prefix
        sub_events = {p: events_of(p) for p in subdir.rglob("*.jsonl")}
        assert sum(1 for evs in sub_events.values() if evs) == want["chunks"], prefix
        parent_events = events_of(parent)
        windows, fill = 0, 0
        for _, text in parent_events:
            if windows == 0 or (fill + len(text) > 80_000 and fill > 0):
                windows, fill = windows + 1, 0
            fill += len(text)
        assert windows == want["windows"], prefix
        refs = (sum(count_refs(t) for _, t in parent_events), sum(count_refs(t) for evs in sub_events.values() for _, t in evs))
        assert refs == want["refs"], prefix
        # pairs: sidecar toolUseId joined to the first parent event holding a <task-notification> with it
        scores = []
        for meta_path in sorted(subdir.glob("*.meta.json")):
            meta = orjson.loads(meta_path.read_bytes())
            if not isinstance(meta, dict) or not isinstance(meta.get("toolUseId"), str):
                continue
            final = sub_events[meta_path.with_name(meta_path.name[:-10] + ".jsonl")][-1][1]
            note = next((t for _, t in parent_events if "<task-notification>" in t and meta["toolUseId"] in t), None)
            if note is not None:
                scores.append(jaccard(note, final))
        assert len(scores) == want["pairs"], prefix
        if scores:
            assert sum(scores) / len(scores) > 0.7 and max(scores) > 0.85, prefix
        if prefix == "393273fd":  # resumed agents: the first notification held an intermediate result
            assert min(scores) < 0.4
        # eviction pattern: late sessions have subagent events inside the parent's last 80k chars
        tail, start = 0, ""
        for ts, text in reversed(parent_events):
            tail += len(text)
            start = ts
            if tail >= 80_000:
                break
        newest_sub = max(ts for evs in sub_events.values() for ts, _ in evs)
        assert (newest_sub >= start) == want["late"], prefix


def test_s840_orphan_and_raw_event_counts(s840_root):
    orphans = [d for d in s840_root.glob("*/*") if d.is_dir() and not d.with_suffix(".jsonl").exists()]
    assert [d.name[:8] for d in orphans] == ["4a0d9e9b"]
    assert len(list((orphans[0] / "subagents").glob("*.jsonl"))) == 78
    counts = {p.name[:8]: len(events_of(p)) for p in s840_root.glob("*/*.jsonl")}
    assert abs(counts["4f7f80f8"] - 1209) / 1209 < 0.25
    assert abs(counts["578b2d47"] - 1583) / 1583 < 0.25


# -- bench and CLI --------------------------------------------------------------------------------

def test_bench_stops_near_size(tmp_path):
    summary = synth.generate(tmp_path / "b", seed=3, shape="bench", size_mb=4)
    assert 4_000_000 <= summary.bytes < 9_000_000
    assert summary.bytes == sum(p.stat().st_size for p in (tmp_path / "b").rglob("*") if p.is_file())


def test_sessions_argument(tmp_path):
    summary = synth.generate(tmp_path / "m", seed=3, sessions=3)
    assert summary.sessions == 3


def test_size_mb_overrides_sessions_for_mixed(tmp_path):
    summary = synth.generate(tmp_path / "m", seed=3, sessions=2, size_mb=8)
    assert summary.bytes >= 8_000_000 and summary.sessions > 12


def test_cli_generates_and_prints_stats(tmp_path, capsys):
    out = tmp_path / "cli"
    assert synth.main(["--out", str(out), "--seed", "2", "--sessions", "2"]) == 0
    assert list(out.glob("*/*.jsonl"))
    assert synth.main(["--stats", str(out)]) == 0
    table = capsys.readouterr().out
    assert table.startswith("| |") and "record_type share: assistant" in table


def test_default_fixture_is_reproducible(tmp_path):
    """fixtures/default = `mixed` at DEFAULT_SEED plus byte copies of a few real transcripts."""
    if not DEFAULT.exists():
        pytest.skip("fixtures/default not built")
    regen = tmp_path / "default"
    synth.generate(regen, seed=DEFAULT_SEED, sessions=DEFAULT_SESSIONS)
    synth.copy_real(REAL, regen)

    def contents(root: Path) -> list:  # git keeps no mtimes, so compare paths and bytes only
        return sorted((str(p.relative_to(root)), hashlib.sha256(p.read_bytes()).hexdigest())
                      for p in root.rglob("*") if p.is_file() and p.name != "README.md")
    assert contents(regen) == contents(DEFAULT)


def test_background_tasks_can_outlive_the_parent(tmp_path):
    """Fates late/lost (#11): finished after the parent's last turn, notified but never delivered, or never notified."""
    from measure.akm.read import read_session
    from measure.measurements import tasks  # noqa: F401
    from measure.measurements.background import background_rows
    from measure.measurements.lines import SessionLines

    out = tmp_path / "m"
    synth.generate(out, seed=DEFAULT_SEED, sessions=DEFAULT_SESSIONS)
    first12 = tmp_path / "m12"
    synth.generate(first12, seed=DEFAULT_SEED, sessions=12)
    # the two sessions are appended: the first twelve and the root extras keep their bytes
    assert {p.relative_to(first12) for p in first12.rglob("*")} < {p.relative_to(out) for p in out.rglob("*")}
    rows = []
    for parent in sorted(out.glob("*/*.jsonl")):
        lines = SessionLines(("tasks",))
        try:
            session, _ = read_session(str(parent), str(out), file_time_ms=0, observe=lines.observe)
        except Exception:
            continue
        rows += background_rows(session, lines.get("tasks"))
    late = [(r["kind"], r["delivery"], r["completed_by"]) for r in rows if r["completed_after_parent_end"]]
    assert sorted(late) == sorted([("agent", "never", "notification"), ("agent", "never", "notification"),
                                   ("agent", "never", "transcript"), ("bash", "never", "notification")])
    assert any(r["killed"] and r["delivery"] == "removed" for r in rows)
