"""The benchmark's helpers on tiny roots; no timing target is ever asserted."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

import measure
from measure.akm.read import read_session, subagents_dir
from tests.bench import corpus as bench_corpus
from tests.bench import growth, results, scale, timing
from tests.bench.corpus import MIB

REPO = Path(__file__).resolve().parents[2]
PARITY = REPO / "tests" / "parity" / "inputs" / "projects"
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
    assert timing.count_file(str(p)) == (4, 1, p.stat().st_size)


def test_parse_floor_one_and_two_processes_agree(tmp_path):
    files = [str(_write(tmp_path / "x" / "a.jsonl", b'{"a":1}\n{"a":2}\n')), str(_write(tmp_path / "y" / "b.jsonl", b'{"b":1}\n{oops\n{"b":3}\n'))]
    one, two = timing.parse_floor(files, 1), timing.parse_floor(files, 2)
    for r in (one, two):
        assert (r["lines"], r["bad_lines"], r["files"]) == (5, 1, 2)
        assert r["bytes"] == sum(Path(f).stat().st_size for f in files)
        assert r["wall_s"] > 0
    assert (one["procs"], two["procs"]) == (1, 2)


def test_parse_floor_counts_its_workers_cpu(tmp_path):
    files = [str(_write(tmp_path / f"{i}.jsonl", b'{"a":1,"b":[1,2,3]}\n' * 150_000)) for i in range(2)]
    one, two = timing.parse_floor(files, 1), timing.parse_floor(files, 2)
    assert one["cpu_s"] > 0.05
    assert two["cpu_s"] > 0.6 * one["cpu_s"]  # the pool's workers are reaped inside the timing: their CPU is counted


def test_best_of_rounds_interleaves_the_steps_and_keeps_the_fastest():
    walls, order = iter([3.0, 9.0, 2.0, 8.0, 4.0, 1.0]), []
    steps = {k: (lambda i, k=k: order.append((k, i)) or {"wall_s": next(walls), "round": i}) for k in "ab"}
    best = timing.best_of_rounds(steps, 3)
    assert order == [("a", 0), ("b", 0), ("a", 1), ("b", 1), ("a", 2), ("b", 2)]
    assert best == {"a": {"wall_s": 2.0, "round": 1, "runs": [3.0, 2.0, 4.0]}, "b": {"wall_s": 1.0, "round": 2, "runs": [9.0, 8.0, 1.0]}}


def test_jsonl_files_walks_everything_sorted(corpus):
    files = bench_corpus.jsonl_files(corpus)
    assert files == sorted(str(p) for p in corpus.rglob("*.jsonl")) and len(files) > 10


def test_session_sizes_include_subagents(corpus):
    sizes = dict(bench_corpus.session_sizes(corpus))
    parent = str(corpus / FOLD_SMALL)
    sub = Path(subagents_dir(parent))
    assert sizes[parent] == Path(parent).stat().st_size + sum(p.stat().st_size for p in sub.rglob("*") if p.is_file())
    assert sizes[parent] > Path(parent).stat().st_size


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
    bench_corpus.scale_session(src, root / "-p", 2, "n")  # rebuilt in place, not appended to
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
    tool_ids = [t for m in Path(subagents_dir(out)).rglob("*.meta.json") if (t := json.loads(m.read_text()).get("toolUseId"))]
    assert len(set(tool_ids)) == len(tool_ids)
    ts = [e.ts for e in session.folded]
    assert ts == sorted(ts)
    assert max(e.ts for e in src_session.folded) < ts[-1]  # the second copy starts after the first ends


def test_shift_moves_only_timestamps_that_parse():
    data = b'{"timestamp":"2025-01-01T00:00:00.000Z","x":"2025-01-01T00:00:00.000Z"}\n{"timestamp": "soon"}\n'
    shifted = bench_corpus._shift(data, 1000)
    assert shifted == data.replace(b'"timestamp":"2025-01-01T00:00:00.000Z"', b'"timestamp":"2025-01-01T00:00:01.000Z"')
    assert bench_corpus._shift(data, 0) == data
    assert bench_corpus._stamps(shifted) == [1735689601000.0]


def _run(wall, cpu=None, rss=200 * MIB, tree=250 * MIB, load=0.01):
    return {"wall_s": wall, "cpu_s": cpu if cpu is not None else wall, "other_load": load, "runs": [wall, wall + 1],
            "peak_process_bytes": rss, "tree_rss_bytes": tree, "tree_pss_bytes": tree - MIB, "procs": 3}


def _corpus(mb, largest_mb=10, how="measure synth --seed 5 --size-mb 300", size_mb=None):
    return {"root": "bench-corpus/x/projects", "how": how, "size_mb": size_mb, "files": 3, "sessions": 2, "bytes": int(mb * 1e6) - 1, "lines": 1000,
            "largest_session_bytes": int(largest_mb * 1e6), "added_session": None}


def _fake_result(mb: float = 300, largest_mb: float = 95, sessions: int = 20_000) -> dict:
    linear = {"replay": None, "source": "p/s.jsonl", "copies": 2, "repeat": 3, "exact": True, "spread": 0.05, "other_load": 0.0,
              "sizes": [{"scale": s, "events": 10 * s, "time_s": t, "calls": 100 * s} for s, t in ((1, 1.0), (2, 1.9), (4, 4.75))],
              "ratios": [1.9, 2.5], "ratio": 2.5, "call_ratios": [1.99, 2.01], "call_ratio": 2.01}
    return {
        "jobs": 2, "interval": 0.05,
        "cold": {
            "mixed": {"corpus": _corpus(mb, size_mb=mb), "floor": _run(1.0), "cold_1": _run(4.9)},  # 4.9x: PASS
            "bench": {"corpus": _corpus(mb, largest_mb, size_mb=mb), "floor": _run(4.0), "cold_1": _run(21.0),  # 5.25x: FAIL
                      "floor_np": _run(2.5), "cold": _run(11.0), "warm": _run(1.0),
                      "memory": {"cold_jobs2": _run(11.0), "cold_jobs1": _run(21.0, tree=150 * MIB)}},
            "real": {"corpus": _corpus(29, how="git"), "floor": _run(0.06, cpu=0.05), "cold_1": _run(0.5, cpu=0.45),
                     "in_process_cpu_s": 0.2},  # 4x: FAIL
        },
        "linear": linear,
        "linear_replay": linear | {"replay": "turn_end", "ratios": [2.1], "ratio": 2.1, "call_ratios": [2.4], "call_ratio": 2.4},
        "replay": {"default": {"plain": _run(1.0), "replay": _run(1.25)}, "s840": {"plain": _run(2.0), "replay": _run(6.5)}},
        "scale": {"sessions": sessions, "files": 28_000, "bytes": 26e6, "wall_s": 61.0, "cpu_s": 70.0, "tree_rss_bytes": 450 * MIB,
                  "tree_pss_bytes": 300 * MIB, "peak_process_bytes": 400 * MIB, "procs": 4, "other_load": 0.1},
    }


def test_rows_give_each_corpus_its_own_floor_ratio_and_every_verdict(tmp_path):
    rows = results.build_rows(_fake_result())
    path = tmp_path / "bench" / "bench.csv"
    results.write_csv(rows, path)
    with open(path, newline="") as f:
        got = list(csv.DictReader(f))
    assert tuple(got[0]) == results.CSV_COLUMNS and len(got) == len(rows)
    status = {r["name"]: r["status"] for r in got if r["section"] == "target"}
    assert status == {
        "cold_jobs1_over_floor_mixed": "PASS", "cold_jobs1_over_floor_bench": "FAIL", "in_process_over_floor_real": "FAIL",
        "speedup_jobs": "PASS",  # 21 / 11 = 1.91 >= 1.8
        "warm_over_cold": "PASS", "warm_wall": "PASS", "peak_memory": "PASS",
        "linearity_calls": "PASS", "linearity": "FAIL", "linearity_replay_calls": "FAIL", "linearity_replay": "PASS",
        "replay_over_plain_default": "PASS", "replay_over_plain_s840": "FAIL", "report_20k_wall": "FAIL", "report_20k_peak": "PASS",
    }
    value = {r["name"]: float(r["value"]) for r in got if r["value"]}
    assert value["cold_jobs1_over_floor_mixed"] == 4.9 and value["cold_jobs1_over_floor_bench"] == 5.25
    assert value["cold_jobs1_over_floor_real"] == pytest.approx(0.5 / 0.06, rel=1e-3)  # the CLI's ratio, beside the in-process target
    assert value["in_process_over_floor_real"] == 4.0  # against the floor's CPU, not its wall
    assert value["floor_speedup"] == 1.6 and value["peak_memory"] == 250
    assert [r["section"] for r in got][-len(status):] == ["target"] * len(status)  # the verdicts come last
    assert not re.search(r"\d{4}-\d\d-\d\d|\d\d:\d\d:\d\d", path.read_text())  # no timestamps in the table
    summary = results.summary(rows)
    assert "FAIL     cold_jobs1_over_floor_bench" in summary and "WARNING" not in summary


def test_targets_untested_when_the_inputs_are_too_small():
    rows = results.build_rows(_fake_result(mb=5, largest_mb=1, sessions=50))
    status = {r.name: r.status for r in rows if r.section == "target"}
    for name in ("cold_jobs1_over_floor_mixed", "cold_jobs1_over_floor_bench", "speedup_jobs", "peak_memory", "report_20k_wall", "report_20k_peak"):
        assert status[name] == "UNTESTED", name
    assert status["warm_wall"] == "PASS"


def test_a_peak_is_the_largest_process_when_the_samples_missed_it():
    res = _fake_result()
    res["scale"]["peak_process_bytes"] = 536 * MIB  # one process's own peak, above the sampled sum of the tree (450 MiB)
    peak = next(r for r in results.build_rows(res) if r.name == "report_20k_peak")
    assert (peak.value, peak.status) == (536, "FAIL")


def test_summary_warns_when_other_processes_were_busy():
    res = _fake_result()
    res["cold"]["mixed"]["floor"]["other_load"] = 0.9
    assert "WARNING: other processes used CPU during mixed floor_other_load (0.9 cores)" in results.summary(results.build_rows(res))


def test_numbers_are_printed_by_the_one_rounding_rule():
    assert [results.fmt(v) for v in (1.0625, -1.0625, 0.009551, 250.0, 12345.5, 0.0, 7, None)] == [
        "1.063", "-1.063", "0.009551", "250", "12346", "0", "7", ""]  # half away from zero, not to even


def test_a_ratio_over_a_zero_time_is_untested():
    res = _fake_result()
    res["cold"]["real"]["floor"]["cpu_s"] = 0.0
    assert next(r for r in results.build_rows(res) if r.name == "in_process_over_floor_real").status == "UNTESTED"


_ALLOCATE = """
import sys, time
from concurrent.futures import ProcessPoolExecutor
def hold(mib):
    b = bytearray(mib << 20)
    for i in range(0, len(b), 4096): b[i] = 1
    time.sleep(float(sys.argv[1]))
    return len(b)
if __name__ == '__main__':
    mine = bytearray(32 << 20)
    for i in range(0, len(mine), 4096): mine[i] = 1
    with ProcessPoolExecutor(1) as p: print(list(p.map(hold, [64])))
"""


def test_timed_run_sees_the_grandchildren_and_sums_the_tree():
    # A pool worker (a grandchild of the bench) holds 64 MiB while its parent holds 32 MiB.
    r = timing.timed_run([sys.executable, "-c", _ALLOCATE, "0.5"], interval=0.02)
    assert r.returncode == 0 and r.stderr == ""
    assert r.peak_process_bytes >= 64 * MIB  # the worker's own peak (VmHWM)
    assert r.tree_rss_bytes >= 96 * MIB  # sampled: both at once
    assert r.tree_pss_bytes >= 90 * MIB  # their private pages count whole
    assert r.procs >= 2 and r.cpu_s > 0
    unsampled = timing.timed_run([sys.executable, "-c", _ALLOCATE, "0"], interval=None)
    assert unsampled.peak_process_bytes == unsampled.tree_rss_bytes == unsampled.procs == 0


def test_the_bench_own_peak_is_not_a_timed_commands():
    """wait4's ru_maxrss of a child starts at its parent's peak on Linux: a bench that once held
    256 MiB would report it for every command it times. VmHWM is each process's own."""
    held = bytearray(256 * MIB)
    held[::4096] = b"x" * len(held[::4096])
    del held
    r = timing.timed_run([sys.executable, "-c", "import time; time.sleep(0.3)"], interval=0.02)
    assert 0 < r.peak_process_bytes < 64 * MIB


_NEST = "import subprocess, sys; n = int(sys.argv[1]); subprocess.run([sys.executable, '-c', sys.argv[2], str(n - 1), sys.argv[2]]) if n else __import__('time').sleep(5)"


def test_tree_pids_lists_every_descendant():
    child = subprocess.Popen([sys.executable, "-c", _NEST, "2", _NEST])  # a child, its child and their grandchild
    try:
        deadline = time.time() + 10
        while len(pids := timing.tree_pids(child.pid)) < 3 and time.time() < deadline:
            time.sleep(0.05)
        assert pids[0] == child.pid and len(pids) == 3
    finally:
        for pid in reversed(timing.tree_pids(child.pid)):
            subprocess.run(["kill", str(pid)])
        child.wait()
    assert timing.tree_pids(child.pid) == []


_SPIN = "import sys, time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\nprint('done', flush=True)\n"


def test_stopwatch_counts_an_unreaped_busy_process_as_other_and_a_reaped_one_as_own():
    # A child that spins for 0.5 s of CPU and is not reaped inside the block is another process's load.
    busy = subprocess.Popen([sys.executable, "-c", _SPIN.format(s=0.5) + "sys.stdin.read()"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        with timing.Stopwatch() as load:
            assert busy.stdout.readline() == "done\n"
    finally:
        busy.communicate("")
    assert load.other_cpu_s >= 0.4
    assert load.own_cpu_s < 0.3
    # The same child reaped inside the block is the block's own CPU.
    with timing.Stopwatch() as load:
        subprocess.run([sys.executable, "-c", _SPIN.format(s=0.5)], check=True, capture_output=True)
    assert load.own_cpu_s >= 0.5
    assert load.wall_s >= 0.5


def test_ensure_corpus_generates_once_and_reuses(tmp_path, monkeypatch):
    calls = []

    def generate(out_dir, seed, size_mb=None, shape=None):
        calls.append((seed, size_mb, shape))
        assert not Path(out_dir).exists() or not any(Path(out_dir).iterdir())
        shutil.copytree(PARITY / "-home-dev-fold-small", Path(out_dir) / "-home-dev-fold-small")

    fake = types.SimpleNamespace(generate=generate)
    monkeypatch.setitem(sys.modules, "measure.synth", fake)
    monkeypatch.setattr(measure, "synth", fake, raising=False)  # `from measure import synth` reads the attribute
    corpora = tmp_path / "bench-corpus"
    root, marker = bench_corpus.ensure_corpus(corpora, "mixed", 3, 7, log=lambda m: None)
    assert root == corpora / "mixed" / "projects" and (root / "-home-dev-fold-small").is_dir()
    assert calls == [(7, 3, "mixed")] and marker["added_session"] is None
    assert not (corpora / "mixed" / "projects.partial").exists()
    assert bench_corpus.ensure_corpus(corpora, "mixed", 3, 7, log=lambda m: None) == (root, marker)
    assert len(calls) == 1
    bench_corpus.ensure_corpus(corpora, "mixed", 3, 8, log=lambda m: None)  # another seed: rebuilt
    monkeypatch.setattr(bench_corpus, "_synth_digest", lambda: "another generator")
    bench_corpus.ensure_corpus(corpora, "mixed", 3, 8, log=lambda m: None)  # rebuilt again
    assert calls[1:] == [(8, 3, "mixed"), (8, 3, "mixed")]
    # Asked for a bigger session than any: one is added to the generated root, and the marker says so.
    biggest = max(s for _, s in bench_corpus.session_sizes(root))
    root, marker = bench_corpus.ensure_corpus(corpora, "bench", 3, 7, big_session_mb=2.5 * biggest / 1e6, log=lambda m: None)
    added = marker["added_session"]
    assert added["bytes"] >= 2.5 * biggest and added["copies"] >= 3
    assert max(s for _, s in bench_corpus.session_sizes(root)) == added["bytes"]
    assert added["events"] == added["copies"] * bench_corpus.folded_events(str(root / added["source"]), str(root))


def test_ensure_corpus_never_writes_into_a_folder_it_did_not_generate(corpus, monkeypatch):
    monkeypatch.setitem(sys.modules, "measure.synth", None)  # importing it would fail
    shutil.move(corpus, corpus.parent / "mixed")
    with pytest.raises(SystemExit, match="not generated by the bench"):
        bench_corpus.ensure_corpus(corpus.parent, "mixed", 3, 7, log=lambda m: None)
    assert any((corpus.parent / "mixed").rglob("*.jsonl"))


def test_add_big_session_leaves_a_root_that_has_one(corpus):
    biggest = max(s for _, s in bench_corpus.session_sizes(corpus))
    assert bench_corpus.add_big_session(corpus, biggest / 1e6) is None
    assert not (corpus / "-bench-big-session").exists()


def test_linearity_builds_exact_doublings(corpus, tmp_path):
    src = str(corpus / FOLD_SMALL)
    base = bench_corpus.folded_events(src, str(corpus))
    lin = growth.linearity(str(corpus), tmp_path, 2 * base, repeat=1, steps=3, source=src)
    assert [z["events"] for z in lin["sizes"]] == [2 * base, 4 * base, 8 * base] and lin["exact"]
    assert len(lin["ratios"]) == len(lin["call_ratios"]) == 2
    assert all(z["calls"] > 0 and z["time_s"] > 0 for z in lin["sizes"])
    assert 1.5 < lin["call_ratio"] < 2.5  # the work of a session grows with its events


def test_clear_caches_empties_measure_caches():
    from measure.akm import jscompat

    jscompat.to_iso(0.0)
    jscompat.date_parse("2026-01-01T00:00:00Z")
    assert jscompat._MINUTE_STAMPS and jscompat._MINUTES
    growth.clear_caches()
    assert not jscompat._MINUTE_STAMPS and not jscompat._MINUTES


def test_machine_info_has_the_provenance():
    info = results.machine_info()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", info["date"])
    assert info["cpu_count"] >= 1 and info["memory_bytes"] > 2**28 and info["packages"]["psutil"] == "7.2.2"
    if (REPO / ".git").exists() and shutil.which("git"):
        assert re.fullmatch(r"[0-9a-f]{40}", info["git_commit"])


def test_make_bench_writes_no_tracked_file():
    """`make bench` writes under build/, which git ignores; reports/bench/ changes only with BENCH_OUT=reports/bench."""
    assert results.DEFAULT_OUT == REPO / "build" / "bench"
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "BENCH_OUT ?= build/bench" in makefile and '-m tests.bench --out "$(BENCH_OUT)"' in makefile
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    for name in ("bench.csv", "machine.json"):
        rel = (results.DEFAULT_OUT / name).relative_to(REPO).as_posix()
        assert subprocess.run(["git", "check-ignore", "-q", rel], cwd=REPO).returncode == 0, rel
        assert subprocess.run(["git", "ls-files", "--error-unmatch", rel], cwd=REPO, capture_output=True).returncode != 0


def test_scale_root_is_small_sessions_all_measured_and_the_same_every_time(tmp_path):
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


@pytest.mark.slow
def test_the_whole_bench_on_tiny_corpora(tmp_path, monkeypatch, capsys):
    from tests.bench import __main__ as bench_main

    monkeypatch.setattr(bench_main, "REPLAY_ROOTS", ("default",))
    argv = ["--corpus", str(tmp_path / "corpora"), "--size-mb", "1", "--rounds", "1", "--skip-scale", "--linear-events", "200",
            "--linear-repeat", "1", "--big-session-mb", "1.5", "--out", str(tmp_path / "out")]
    assert bench_main.main(argv) == 0
    printed = capsys.readouterr().out
    assert re.search(r"cold measure run --jobs 1 over its own 1-process floor: mixed [\d.]+x, bench [\d.]+x, real [\d.]+x", printed)
    with open(tmp_path / "out" / "bench.csv", newline="") as f:
        rows = {(r["section"], r["name"]): r for r in csv.DictReader(f)}
    for name in ("mixed", "bench", "real"):
        assert float(rows[name, "floor_wall"]["value"]) > 0 and float(rows[name, "cold_jobs1_wall"]["value"]) > 0
    assert rows["mixed", "files"]["note"].endswith("measure synth --seed 5 --size-mb 1")
    assert float(rows["bench", "largest_session_bytes"]["value"]) >= 1.5e6  # the big session was added
    assert rows["target", "cold_jobs1_over_floor_mixed"]["status"] == "UNTESTED"  # 1 MB, not 300
    assert rows["target", "in_process_over_floor_real"]["status"] in ("PASS", "FAIL")
    assert rows["target", "replay_over_plain_default"]["status"] in ("PASS", "FAIL")
    info = json.loads((tmp_path / "out" / "machine.json").read_text())
    assert set(info["results"]["cold"]) == {"mixed", "bench", "real"} and info["git_commit"] and info["date"]
    assert info["results"]["cold"]["bench"]["corpus"]["added_session"]["bytes"] >= 1.5e6
