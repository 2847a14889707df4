"""The benchmark's helpers on tiny corpora (no timing is ever asserted)."""

from __future__ import annotations

import csv
import json
import re
import shutil
import sys
import types
from pathlib import Path

import pytest

import measure
from measure.akm.read import read_session, subagents_dir
from measure.bench import corpus as bench_corpus
from measure.bench import results, timing

PARITY = Path(__file__).parent / "parity" / "inputs" / "projects"
FOLD_SMALL = "-home-dev-fold-small/e88b7591-31db-4e32-98dc-b35f94c662cd.jsonl"
FOLD_LAYOUTS = "-home-dev-fold-layouts/8fe8003a-a254-4baf-9c31-6ab6d5ae55e1.jsonl"


@pytest.fixture()
def corpus(tmp_path) -> Path:
    root = tmp_path / "corpus"
    shutil.copytree(PARITY, root)
    return root


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_count_file_counts_nonempty_lines_and_failures(tmp_path):
    p = _write(tmp_path / "a.jsonl", b'{"a":1}\n\n[1,2]\nnot json\n{"b":"x"}')
    lines, bad, size = timing.count_file(str(p))
    assert (lines, bad, size) == (4, 1, p.stat().st_size)


def test_parse_floor_one_and_two_processes_agree(tmp_path):
    files = [
        str(_write(tmp_path / "x" / "a.jsonl", b'{"a":1}\n{"a":2}\n')),
        str(_write(tmp_path / "y" / "b.jsonl", b'{"b":1}\n{oops\n{"b":3}\n')),
    ]
    one = timing.parse_floor(files, 1)
    two = timing.parse_floor(files, 2)
    for r in (one, two):
        assert (r["lines"], r["bad_lines"], r["files"]) == (5, 1, 2)
        assert r["bytes"] == sum(Path(f).stat().st_size for f in files)
    assert (one["procs"], two["procs"]) == (1, 2)


def test_best_of_keeps_the_fastest_run_and_the_largest_memory():
    runs = [{"wall_s": 3.0, "tree_rss_bytes": 10}, {"wall_s": 2.0, "tree_rss_bytes": 5}, {"wall_s": 4.0, "tree_rss_bytes": 7}]
    best = timing.best_of(runs)
    assert best["wall_s"] == 2.0 and best["runs"] == [3.0, 2.0, 4.0] and best["tree_rss_bytes"] == 10


def test_jsonl_files_walks_everything_sorted(corpus):
    files = bench_corpus.jsonl_files(corpus)
    assert files == sorted(files)
    assert all(f.endswith(".jsonl") for f in files)
    expected = sorted(str(p) for p in corpus.rglob("*.jsonl"))
    assert sorted(files) == expected


def test_session_sizes_include_subagents(corpus):
    sizes = dict(bench_corpus.session_sizes(corpus))
    parent = str(corpus / FOLD_SMALL)
    sub = Path(subagents_dir(parent))
    assert sizes[parent] == Path(parent).stat().st_size + sum(p.stat().st_size for p in sub.rglob("*") if p.is_file())


@pytest.mark.parametrize("source", [FOLD_SMALL, FOLD_LAYOUTS])
def test_scale_session_has_exactly_n_and_2n_events(corpus, tmp_path, source):
    src = str(corpus / source)
    base = bench_corpus.folded_events(src, str(corpus))
    assert base > 0
    root = tmp_path / "linear"
    small = bench_corpus.scale_session(src, root / "-p", 2, "n")
    big = bench_corpus.scale_session(src, root / "-p", 4, "2n")
    assert bench_corpus.folded_events(small, str(root)) == 2 * base
    assert bench_corpus.folded_events(big, str(root)) == 4 * base
    # Rebuilding in place does not append to the previous copy.
    bench_corpus.scale_session(src, root / "-p", 2, "n")
    assert bench_corpus.folded_events(small, str(root)) == 2 * base


def test_scale_session_keeps_copies_paired_and_ordered(corpus, tmp_path):
    src = str(corpus / FOLD_SMALL)
    root = tmp_path / "linear"
    out = bench_corpus.scale_session(src, root / "-p", 2, "s")
    session, problems = read_session(out, str(root))
    assert not [p for p in problems if p[1] in ("malformed_lines", "broken_sidecar")]
    src_session, _ = read_session(src, str(corpus))
    assert len(session.subagents) == 2 * len(src_session.subagents)
    agents = [Path(s.path).name for s in session.subagents]
    assert len(set(agents)) == len(agents)  # renamed, not overwritten
    metas = list(Path(subagents_dir(out)).rglob("*.meta.json"))
    tool_ids = [json.loads(m.read_text()).get("toolUseId") for m in metas]
    tool_ids = [t for t in tool_ids if t]
    assert len(set(tool_ids)) == len(tool_ids)
    ts = [e.ts for e in session.folded]
    assert ts == sorted(ts)
    # The second copy starts after the first ends.
    assert max(e.ts for e in src_session.folded) < ts[-1]


def test_shift_line_moves_only_iso_timestamps():
    line = b'{"timestamp":"2025-01-01T00:00:00.000Z","x":1}'
    assert json.loads(bench_corpus._shift_line(line, 1000))["timestamp"] == "2025-01-01T00:00:01.000Z"
    assert bench_corpus._shift_line(line, 0) == line
    assert bench_corpus._shift_line(b"not json", 1000) == b"not json"
    assert bench_corpus._shift_line(b'{"x":1}', 1000) == b'{"x":1}'


def _fake_result(mb: float = 600, largest_mb: float = 95) -> dict:
    run = {"wall_s": 10.0, "maxrss_bytes": 200 * bench_corpus.MIB, "tree_rss_bytes": 250 * bench_corpus.MIB, "tree_pss_bytes": 220 * bench_corpus.MIB}
    return {
        "interval": 0.05,
        "corpus": {"files": 3, "sessions": 2, "bytes": int(mb * 1e6), "lines": 1000, "events": 900, "largest_session_bytes": int(largest_mb * 1e6)},
        "floor_1p": {"procs": 1, "wall_s": 4.0, "runs": [4.0, 4.1]},
        "floor_np": {"procs": 2, "wall_s": 2.0, "runs": [2.0]},
        "cold": run,
        "warm": {**run, "wall_s": 1.0},
        "cold_1": {**run, "wall_s": 18.0},
        "jobs": 2,
        "stages": {
            "floor_cpu_s": 4.0,
            "total_cpu_s": 16.0,
            "cpu_s": {"read": 5.0, "collectors": 1.0, "prefilter": 3.0, "prompt": 3.0, "metrics": 2.0, "tables": 1.0, "other": 1.0},
            "over_floor": {"read": 1.25, "collectors": 0.25, "prefilter": 0.75, "prompt": 0.75, "metrics": 0.5, "tables": 0.25,
                           "other": 0.25},
            "total_over_floor": 4.0,
        },
        "real": {"root": "fixtures/real", "floor_cpu_s": 0.1, "total_cpu_s": 0.35, "cli_wall_s": 0.6, "startup_s": 0.2},
        "linear": {
            "source": "p/s.jsonl",
            "copies": 2,
            "sizes": [{"scale": 1, "events": 10, "time_s": 1.0}, {"scale": 2, "events": 20, "time_s": 1.9}, {"scale": 4, "events": 40, "time_s": 4.75}],
            "ratios": [1.9, 2.5],
            "ratio": 2.5,
            "exact": True,
            "call_ratios": [1.99, 2.01],
            "call_ratio": 2.01,
        },
        "linear_replay": {
            "replay": "turn_end",
            "source": "p/s.jsonl",
            "copies": 2,
            "sizes": [{"scale": 1, "events": 10, "time_s": 1.0}, {"scale": 2, "events": 20, "time_s": 2.1}],
            "ratios": [2.1],
            "ratio": 2.1,
            "exact": True,
            "call_ratios": [2.4],
            "call_ratio": 2.4,
        },
    }


def test_csv_has_the_expected_columns_and_verdicts(tmp_path):
    rows = results.build_rows(_fake_result())
    path = tmp_path / "bench" / "bench.csv"
    results.write_csv(rows, path)
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames) == results.CSV_COLUMNS
        got = list(reader)
    assert len(got) == len(rows)
    targets = {r["name"]: r for r in got if r["section"] == "target"}
    assert set(targets) == {"cold_jobs1_over_floor", "speedup_jobs", "real_over_floor", "warm_over_cold", "warm_wall",
                            "peak_memory", "linearity", "linearity_calls", "linearity_replay", "linearity_replay_calls"}
    assert targets["cold_jobs1_over_floor"]["status"] == "PASS"  # 18 s / 4 s = 4.5x <= 5
    assert targets["speedup_jobs"]["status"] == "PASS"  # 18 / 10 = 1.8 >= 1.8
    assert targets["real_over_floor"]["status"] == "FAIL"  # 3.5x > 3
    assert targets["warm_over_cold"]["status"] == "PASS"  # 0.1
    assert targets["warm_wall"]["status"] == "PASS"  # 1 s
    assert targets["peak_memory"]["status"] == "PASS"  # 250 MiB tree
    stages = {r["name"] for r in got if r["section"] == "stages"}
    assert {"read_over_floor", "collectors_over_floor", "prefilter_over_floor", "prompt_over_floor", "metrics_over_floor",
            "tables_over_floor"} <= stages
    assert targets["linearity"]["status"] == "FAIL"  # the worst doubling: 2.5 > 2.2
    assert targets["linearity_calls"]["status"] == "PASS"  # 2.01 <= 2.05
    assert targets["linearity_replay"]["status"] == "PASS"  # 2.1 <= 2.2
    assert targets["linearity_replay_calls"]["status"] == "FAIL"  # 2.4: events x moments
    names = {r["name"] for r in got if r["section"] == "linear"}
    assert {"events_N", "events_2N", "events_4N", "time_N", "time_2N", "time_4N"} <= names
    info = {r["name"]: r for r in got if r["section"] == "info"}
    assert float(info["cold_over_floor"]["value"]) == 5.0  # 10 s / 2 s floor: informational
    assert float(info["floor_speedup"]["value"]) == 2.0  # 4 s / 2 s: the machine's own ceiling, beside the target
    assert "the floor's own speed-up: 2.00x" in targets["speedup_jobs"]["note"]
    assert not re.search(r"\d{4}-\d\d-\d\d|\d\d:\d\d:\d\d", path.read_text())  # no timestamps
    assert results.render(rows).count("\n") >= len(rows)


def test_targets_untested_when_the_corpus_is_too_small():
    rows = results.build_rows(_fake_result(mb=5, largest_mb=1))
    status = {r["name"]: r["status"] for r in rows if r["section"] == "target"}
    assert status["cold_jobs1_over_floor"] == "UNTESTED"
    assert status["speedup_jobs"] == "UNTESTED"
    assert status["peak_memory"] == "UNTESTED"


def test_run_events_reads_the_fold_rows(tmp_path):
    with open(tmp_path / "sessions.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["session_path", "strategy", "raw_events"])
        w.writerows([["a", "fold", 5], ["a", "link", 3], ["b", "fold", 7]])
    assert timing.run_events(tmp_path) == (2, 12)


def test_timed_run_sees_the_grandchildren(tmp_path):
    # A pool worker (a grandchild of the benchmark) touches 64 MiB: wait4's ru_maxrss must see it.
    code = (
        "from concurrent.futures import ProcessPoolExecutor\n"
        "def f(n):\n"
        "    b = bytearray(n << 20)\n"
        "    for i in range(0, len(b), 4096): b[i] = 1\n"
        "    return len(b)\n"
        "if __name__ == '__main__':\n"
        "    with ProcessPoolExecutor(1) as p: print(list(p.map(f, [64])))\n"
    )
    r = timing.timed_run([sys.executable, "-c", code], interval=0.01)
    assert r.returncode == 0
    assert r.maxrss_bytes >= 64 * bench_corpus.MIB
    assert r.samples >= 1


def test_ensure_corpus_generates_once_and_reuses(tmp_path, monkeypatch):
    calls = []

    def generate(out_dir, seed, sessions=None, size_mb=None, shape=None):
        calls.append((seed, size_mb, shape))
        assert not Path(out_dir).exists() or not any(Path(out_dir).iterdir())
        _write(Path(out_dir) / "-p" / "s.jsonl", b'{"a":1}\n')

    fake = types.SimpleNamespace(generate=generate, __file__=str(tmp_path / "synth.py"))
    (tmp_path / "synth.py").write_text("# stand-in\n")
    monkeypatch.setitem(sys.modules, "measure.synth", fake)
    # `from measure import synth` reads the package attribute once the real module was imported
    monkeypatch.setattr(measure, "synth", fake, raising=False)
    corpus = tmp_path / "bench-corpus"
    root = bench_corpus.ensure_corpus(corpus, 3, 7, log=lambda m: None)
    assert root == corpus / "projects"
    assert calls == [(7, 3, "bench")]
    assert (corpus / bench_corpus.MARKER).exists()
    assert (root / "-p" / "s.jsonl").exists()
    assert not (corpus / "projects.partial").exists()
    assert bench_corpus.ensure_corpus(corpus, 3, 7, log=lambda m: None) == root
    assert len(calls) == 1
    bench_corpus.ensure_corpus(corpus, 3, 7, regenerate=True, log=lambda m: None)
    assert len(calls) == 2
    bench_corpus.ensure_corpus(corpus, 3, 8, log=lambda m: None)  # another seed: rebuilt
    assert calls[-1] == (8, 3, "bench")


def test_ensure_corpus_uses_a_foreign_corpus_as_is(corpus, monkeypatch):
    monkeypatch.setitem(sys.modules, "measure.synth", None)  # importing it would fail
    assert bench_corpus.ensure_corpus(corpus, 500, 0, regenerate=True, log=lambda m: None) == corpus
    assert any(corpus.rglob("*.jsonl"))  # never removed: no marker


def test_time_sessions_returns_every_repeat(corpus):
    parents = [str(corpus / FOLD_SMALL), str(corpus / FOLD_LAYOUTS)]
    times = timing.time_sessions(str(corpus), parents, repeat=2)
    assert [len(t) for t in times] == [2, 2]
    import gc

    assert [len(t) for t in timing.time_sessions(str(corpus), parents, repeat=1, collect=False)] == [1, 1]
    assert gc.isenabled()


def test_augment_root_adds_one_big_session_by_hard_links(corpus, tmp_path):
    sizes = dict(bench_corpus.session_sizes(corpus))
    biggest = max(sizes.values())
    want_mb = 2.5 * biggest / 1e6
    root, added = bench_corpus.augment_root(corpus, tmp_path / "work", want_mb, log=lambda m: None)
    assert root == tmp_path / "work" / "root"
    assert added["bytes"] >= want_mb * 1e6
    new_sizes = dict(bench_corpus.session_sizes(root))
    assert len(new_sizes) == len(sizes) + 1
    assert max(new_sizes.values()) == added["bytes"]
    some = next(iter(sizes))
    mirrored = root / Path(some).relative_to(corpus)
    assert mirrored.stat().st_ino == Path(some).stat().st_ino  # a hard link, not a copy
    # Nothing to add when the corpus already holds a session that big.
    assert bench_corpus.augment_root(corpus, tmp_path / "w2", biggest / 1e6, log=lambda m: None) == (corpus, None)


def test_other_load_is_measured():
    with timing.OtherLoad() as load:
        sum(range(10_000))
    assert load.cores is None or load.cores >= 0


def test_linearity_builds_exact_doublings(corpus, tmp_path):
    src = str(corpus / FOLD_SMALL)
    base = bench_corpus.folded_events(src, str(corpus))
    lin = timing.linearity(str(corpus), tmp_path, 2 * base, repeat=1, steps=3, source=src)
    assert [z["events"] for z in lin["sizes"]] == [2 * base, 4 * base, 8 * base]
    assert lin["exact"] and len(lin["ratios"]) == 2
    assert len(lin["call_ratios"]) == 2 and all(z["calls"] > 0 for z in lin["sizes"])


def test_superlinear_names_functions_whose_calls_more_than_double():
    small = {"a": 10, "b": 10, "c": 0}
    big = {"a": 20, "b": 40, "c": 1, "d": 9}
    assert timing.superlinear(small, big) == [("b", 10, 40), ("d", 0, 9)]


def test_clear_caches_empties_measure_caches():
    from measure.akm import jscompat

    jscompat.to_iso(0.0)
    jscompat.date_parse("2026-01-01T00:00:00Z")
    assert jscompat._DATES and jscompat._MINUTES
    timing.clear_caches()
    assert not jscompat._DATES and not jscompat._MINUTES


@pytest.mark.parametrize("repeat", [1, 2])
def test_stage_split_accounts_for_the_whole_run(corpus, repeat):
    # With repeat, the split kept is one run's, whole: its stages still add up to its total.
    from measure.bench import stages

    split = stages.stage_split(corpus, repeat=repeat)
    assert set(split["cpu_s"]) == set(stages.STAGES)
    assert all(v >= 0 for v in split["cpu_s"].values())
    assert split["cpu_s"]["read"] > 0 and split["cpu_s"]["prompt"] > 0 and split["cpu_s"]["tables"] > 0
    assert abs(sum(split["cpu_s"].values()) - split["total_cpu_s"]) < 0.05 + 0.1 * split["total_cpu_s"]
    assert "read" in stages.render_split(split)
    # the timers are removed afterwards
    from measure.runner import job

    assert job.read_session.__name__ == "read_session"


def test_replay_target_is_reported_when_measured():
    rows = results.build_rows({**_fake_result(), "replay": {"plain_s": 1.0, "replay_s": 1.25, "rounds": 2}})
    target = next(r for r in rows if r["name"] == "replay_over_plain")
    assert (target["value"], target["threshold"], target["status"]) == (1.25, results.REPLAY_OVER_PLAIN_MAX, "PASS")
    rows = results.build_rows({**_fake_result(), "replay": {"plain_s": 1.0, "replay_s": 3.5, "rounds": 1}})
    assert next(r for r in rows if r["name"] == "replay_over_plain")["status"] == "FAIL"


def test_make_bench_writes_no_tracked_file():
    """`make bench` (and `python -m measure.bench`) write under build/, which git ignores; the committed
    results under reports/bench/ change only with BENCH_OUT=reports/bench."""
    import shutil
    import subprocess

    from measure.bench.results import DEFAULT_OUT

    repo = Path(__file__).parent.parent
    assert DEFAULT_OUT == repo / "build" / "bench"
    makefile = (repo / "Makefile").read_text(encoding="utf-8")
    assert "BENCH_OUT ?= build/bench" in makefile and '-m measure.bench --out "$(BENCH_OUT)"' in makefile
    if shutil.which("git") is None or not (repo / ".git").exists():
        pytest.skip("not a git checkout")
    for name in ("bench.csv", "machine.json"):
        rel = (DEFAULT_OUT / name).relative_to(repo).as_posix()
        assert subprocess.run(["git", "check-ignore", "-q", rel], cwd=repo).returncode == 0, rel
        assert subprocess.run(["git", "ls-files", "--error-unmatch", rel], cwd=repo, capture_output=True).returncode != 0


def test_scale_root_is_small_sessions_all_measured_and_the_same_every_time(tmp_path):
    from measure.bench import scale
    from measure.runner.job import RunParams
    from measure.runner.run import run_measurement

    a = scale.build_root(tmp_path / "a", sessions=50, projects=5)
    scale.build_root(tmp_path / "b", sessions=50, projects=5)
    assert a == {"sessions": 50, "files": 70, "bytes": a["bytes"]} and a["bytes"] < 50 * 4000
    listing = lambda d: {p.relative_to(d).as_posix(): (p.read_bytes(), p.stat().st_mtime) for p in sorted(d.rglob("*")) if p.is_file()}  # noqa: E731
    assert listing(tmp_path / "a") == listing(tmp_path / "b")
    summary = run_measurement(tmp_path / "a", tmp_path / "out", RunParams(), jobs=1)
    assert (summary.measured, summary.errors) == (50, 0)
    subagents = (tmp_path / "out" / "subagents.csv").read_text().splitlines()
    assert len(subagents) == 1 + 10  # every 5th session delegates to one background subagent
    cmd = scale.report_cmd(tmp_path / "a", tmp_path / "r", tmp_path / "c")
    assert cmd[1:4] == ["-m", "measure", "report"] and scale.SCALE_BUDGETS in cmd


def test_scale_rows_and_their_two_targets():
    run = {"sessions": 20_000, "files": 28_000, "bytes": 26e6, "wall_s": 45.0, "tree_rss_bytes": 450 * 2**20,
           "tree_pss_bytes": 300 * 2**20, "maxrss_bytes": 400 * 2**20, "procs": 4, "cpu_s": 70.0, "other_load": 0.1}
    rows = {r["name"]: r for r in results.scale_rows(run)}
    assert rows["report_20k_wall"]["status"] == "PASS" and rows["report_20k_wall"]["threshold"] == 60.0
    assert rows["report_20k_peak"]["status"] == "PASS" and rows["report_20k_peak"]["threshold"] == 500.0
    rows = {r["name"]: r for r in results.scale_rows({**run, "wall_s": 61.0, "tree_rss_bytes": 501 * 2**20})}
    assert rows["report_20k_wall"]["status"] == rows["report_20k_peak"]["status"] == "FAIL"
    rows = {r["name"]: r for r in results.scale_rows({**run, "sessions": 50})}
    assert rows["report_20k_wall"]["status"] == "UNTESTED"
    assert results.scale_rows(None) == []
