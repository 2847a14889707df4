"""Benchmark `measure run` and `measure report` against the Performance targets (`make bench`)."""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from tests.bench.corpus import DEFAULT_CORPUS, REPO, ensure_corpus, jsonl_files, session_sizes
from tests.bench.growth import clear_caches, linearity
from tests.bench.results import DEFAULT_OUT, PEAK_SESSION_MB, build_rows, fmt, machine_info, summary, write_csv
from tests.bench.scale import REPORT_BUDGETS, SCALE_SESSIONS, scale_report
from tests.bench.timing import Stopwatch, best_of_rounds, checked_run, parse_floor

REPLAY_ROOTS = ("default", "s840")  # fixtures/<name>: --replay over a plain run
INTERVAL = 0.05  # seconds between two samples of a process tree's memory


def measure_run(root: Path, out: Path, *options: str, interval: float | None = None) -> dict:
    """`measure run` over `root` with `options`, timed (its memory sampled every `interval` s)."""
    cmd = [sys.executable, "-m", "measure", "run", "--root", os.fspath(root), "--out", os.fspath(out), *options]
    return checked_run(cmd, interval, cwd=os.fspath(REPO))


def cached_run(root: Path, out: Path, cache: Path, jobs: int, interval: float | None = None) -> dict:
    """`measure run --jobs JOBS` over `root` with `cache` as its cache dir (cold while it is empty), timed."""
    return measure_run(root, out, "--cache-dir", os.fspath(cache), "--jobs", str(jobs), interval=interval)


def in_process_cpu(root: Path, work: Path, rounds: int) -> float:
    """CPU seconds of the fastest of `rounds` in-process `run_measurement --jobs 1` runs without a cache."""
    from measure.runner.job import RunParams
    from measure.runner.run import run_measurement

    best = float("inf")
    for i in range(max(1, rounds)):
        clear_caches()
        with Stopwatch() as watch:
            run_measurement(root, work / f"in-process{i}", RunParams.from_options(), jobs=1)
        best = min(best, watch.own_cpu_s)
    return best


def bench_corpus(name: str, root: Path, how: str, size_mb: float | None, added: dict | None, work: Path, args, jobs: int, log) -> dict:
    """The 1-process floor and a cold `measure run --jobs 1` over one corpus, best of the rounds.

    The bench corpus also gets the parallel floor, cold and warm runs with `jobs` workers, and
    a cold run of each width with the memory sampler on (sampling costs the timed runs CPU).
    """
    w, files = work / name, jsonl_files(root)
    log(f"bench: {name}: {len(files)} .jsonl files under {root}; {args.rounds} round(s) of floor and cold runs ...")
    steps = {"floor": lambda i: parse_floor(files, 1), "cold_1": lambda i: cached_run(root, w / f"cold1-{i}", w / f"cache1-{i}", 1)}
    if name == "bench":
        steps |= {"floor_np": lambda i: parse_floor(files, jobs), "cold": lambda i: cached_run(root, w / f"cold-{i}", w / f"cache-{i}", jobs),
                  "warm": lambda i: cached_run(root, w / f"warm-{i}", w / f"cache-{i}", jobs)}
    best = best_of_rounds(steps, args.rounds)
    sizes, fl = session_sizes(root), best["floor"]
    best["corpus"] = {"root": os.path.relpath(root, REPO) if root.is_relative_to(REPO) else os.fspath(root), "how": how, "size_mb": size_mb,
                      "files": len(files), "sessions": len(sizes), "bytes": fl["bytes"], "lines": fl["lines"],
                      "malformed_lines": fl["bad_lines"], "largest_session_bytes": max((s for _, s in sizes), default=0),
                      "added_session": added}
    if name == "real":
        best["in_process_cpu_s"] = in_process_cpu(root, w, args.rounds)
    if name == "bench":
        log(f"bench: {name}: memory: cold runs again, sampling the process tree every {INTERVAL:g} s ...")
        best["memory"] = {f"cold_jobs{n}": cached_run(root, w / f"memory{n}", w / f"memory-cache{n}", n, INTERVAL) for n in dict.fromkeys((jobs, 1))}
    return best


def replay_cost(name: str, work: Path, rounds: int) -> dict:
    """`measure run` over fixtures/<name> without and with `--replay` (no cache, one job), best of `rounds`."""
    root, opts = REPO / "fixtures" / name, ("--no-cache", "--jobs", "1", "--budgets", REPORT_BUDGETS)
    return best_of_rounds({"plain": lambda i: measure_run(root, work / f"{name}-plain{i}", *opts),
                           "replay": lambda i: measure_run(root, work / f"{name}-replay{i}", *opts, "--replay")}, rounds)


def run_bench(args, log=print) -> dict:
    """Every measurement of the bench, as one dict (see `results.build_rows`)."""
    # Byte-compiled as installing a package does: with PYTHONDONTWRITEBYTECODE (set on this project's
    # machines) every timed command would compile measure's modules from source.
    bytecode = bool(compileall.compile_dir(REPO / "measure", quiet=1))
    corpus_dir, jobs = Path(args.corpus).resolve(), args.jobs or os.cpu_count() or 1
    synth = f"measure synth --seed {args.seed} --size-mb {args.size_mb:g}"
    mixed, _ = ensure_corpus(corpus_dir, "mixed", args.size_mb, args.seed, log=log)
    bench, marker = ensure_corpus(corpus_dir, "bench", args.size_mb, args.seed, args.big_session_mb, log)
    roots = {"mixed": (mixed, synth, args.size_mb, None),
             "bench": (bench, f"{synth} --shape bench, plus a {args.big_session_mb:g} MB session", args.size_mb, marker["added_session"]),
             "real": (REPO / "fixtures" / "real", "the real transcripts in git", None, None)}
    work = Path(tempfile.mkdtemp(prefix="measure-bench-"))
    try:
        res = {"jobs": jobs, "interval": INTERVAL, "bytecode_compiled": bytecode,
               "cold": {name: bench_corpus(name, *spec, work, args, jobs, log) for name, spec in roots.items()}}
        for key, replay, repeat in (("linear", None, args.linear_repeat), ("linear_replay", "turn_end", max(1, args.linear_repeat // 2))):
            log(f"bench: growth{' with --replay-at ' + replay if replay else ''}: ~{args.linear_events} events, doubled twice ...")
            with Stopwatch() as watch:
                res[key] = linearity(os.fspath(bench), work, args.linear_events, repeat, replay=replay)
            res[key]["other_load"] = watch.cores
        res["replay"] = {}
        for name in REPLAY_ROOTS:
            if (REPO / "fixtures" / name).is_dir():
                log(f"bench: replay: measure run on fixtures/{name}, plain and with --replay ...")
                res["replay"][name] = replay_cost(name, work, args.rounds)
            else:
                log(f"bench: replay: no fixtures/{name} (make fixtures): left out")
        res["scale"] = None if args.skip_scale else scale_report(SCALE_SESSIONS, INTERVAL, os.fspath(REPO), log)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return res


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tests.bench", description=__doc__)
    p.add_argument("--corpus", default=os.fspath(DEFAULT_CORPUS), help="where the generated corpora live (default bench-corpus/)")
    p.add_argument("--size-mb", type=float, default=300, help="size of each generated corpus (default 300, the targets' corpora)")
    p.add_argument("--seed", type=int, default=5, help="seed of the generated corpora (default 5)")
    p.add_argument("--jobs", type=int, help="worker processes of the parallel runs and floor (default: CPU count)")
    p.add_argument("--rounds", type=int, default=5,
                   help="rounds of every timed run; the fastest is kept (default 5: other tenants only ever add time)")
    p.add_argument("--linear-events", type=int, default=20_000, help="N of the growth check (default 20000)")
    p.add_argument("--linear-repeat", type=int, default=7, help="timings of each growth session, best kept (default 7)")
    p.add_argument("--big-session-mb", type=float, default=PEAK_SESSION_MB,
                   help="a session this big is added to the bench corpus if it has none (0: never; default 90)")
    p.add_argument("--out", default=os.fspath(DEFAULT_OUT), help="where bench.csv and machine.json go (default build/bench/)")
    p.add_argument("--skip-scale", action="store_true", help="skip measure report over 20,000 generated small sessions (about a minute)")
    p.add_argument("--check", action="store_true", help="exit 1 unless every target passes; an untested target fails")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    info = machine_info()  # before the bench writes anything: the commit measured, and whether it was clean
    res = run_bench(args, log=lambda msg: print(msg, file=sys.stderr, flush=True))
    rows = build_rows(res)
    out = Path(args.out)
    write_csv(rows, out / "bench.csv")
    (out / "machine.json").write_text(json.dumps(info | {"results": res}, indent=1, sort_keys=True) + "\n")  # every number
    print(f"{info['date']}: {info['cpu_model']}, {info['cpus_usable']} cpu(s), {fmt(info['memory_bytes'] / 2**30)} GiB, "
          f"Python {info['python']}, commit {info['git_commit']}{' (dirty)' if info['git_dirty'] else ''}\n")
    by_name = {r.name: r for r in rows}
    print("cold measure run --jobs 1 over its own 1-process floor: "
          + ", ".join(f"{n} {fmt(by_name[f'cold_jobs1_over_floor_{n}'].value)}x" for n in res["cold"]) + "\n")
    print(summary(rows))
    print(f"\nwrote {out / 'bench.csv'} and {out / 'machine.json'}")
    return 1 if args.check and any(r.status != "PASS" for r in rows if r.section == "target") else 0


if __name__ == "__main__":
    sys.exit(main())
