"""Benchmark `measure run` against the Performance targets: parse floor, cold/warm runs, peak memory, linearity."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from measure.bench.corpus import (
    DEFAULT_CORPUS,
    REPO,
    augment_root,
    ensure_corpus,
    jsonl_files,
    session_sizes,
)
from measure.bench.results import (
    DEFAULT_OUT,
    PEAK_SESSION_MB,
    _fmt,
    build_rows,
    machine_info,
    render,
    write_csv,
)
from measure.bench.scale import SCALE_SESSIONS, scale_report
from measure.bench.stages import render_split, stage_split
from measure.bench.timing import (
    OtherLoad,
    best_of,
    linearity,
    measure_cmd,
    parse_floor,
    run_events,
    same_tables,
    timed_run,
    warm_page_cache,
)


def _measure(cmd: list[str], interval: float | None):
    """One `measure` command from the repository, timed (and sampled every `interval` s); a failure ends the bench."""
    t = timed_run(cmd, interval, cwd=os.fspath(REPO))
    if t.returncode != 0:
        raise SystemExit(f"bench: measure run failed ({t.returncode}):\n{t.stderr}")
    return t


def real_split(work: Path, interval: float, rounds: int) -> dict | None:
    """fixtures/real (small real transcripts): in-process stage split (the fastest of `rounds`,
    against the fastest of as many floor parses) and the CLI's start-up."""
    real = REPO / "fixtures" / "real"
    if not real.is_dir():
        return None
    split = stage_split(real, repeat=rounds)
    cli = _measure(measure_cmd(real, work / "out-real", work / "cache-real", 1), interval)
    startup = timed_run([sys.executable, "-m", "measure", "--version"], interval, cwd=os.fspath(REPO))
    return {**split, "root": "fixtures/real", "cli_wall_s": cli.wall_s, "startup_s": startup.wall_s}


def replay_cost(work: Path, rounds: int, interval: float) -> dict:
    """Wall time of `measure run` over fixtures/default without and with `--replay` (no cache, one job)."""
    root = REPO / "fixtures" / "default"
    out: dict[str, list[float]] = {"plain": [], "replay": []}
    for i in range(max(1, rounds)):
        for key, extra in (("plain", []), ("replay", ["--replay"])):
            cmd = [sys.executable, "-m", "measure", "run", "--root", os.fspath(root), "--out", os.fspath(work / f"replay-{key}{i}"),
                   "--no-cache", "--jobs", "1", "--pin-file-times", "1780000000000", "--budgets", "20000,40000,80000,160000,320000,640000", *extra]
            t = _measure(cmd, interval)
            out[key].append(t.wall_s)
    return {"plain_s": min(out["plain"]), "replay_s": min(out["replay"]), "rounds": max(1, rounds)}


STAGE_REPEAT = 3
"""In-process runs of the bench corpus's stage split to take the fastest of (each is 4 s)."""


def compile_bytecode() -> bool:
    """Byte-compile measure's modules, as installing a package does: an editable checkout run
    with PYTHONDONTWRITEBYTECODE (set on this project's machines) would otherwise compile every
    module from source in every timed command (40 ms of each start-up, not what users pay).
    Returns whether every module compiled."""
    import compileall  # noqa: PLC0415

    import measure  # noqa: PLC0415

    return bool(compileall.compile_dir(os.path.dirname(measure.__file__), quiet=1))


def run_bench(args, log=print) -> tuple[dict, list[dict]]:
    bytecode = compile_bytecode()
    corpus = Path(args.corpus).resolve()
    corpus_dir = ensure_corpus(corpus, args.size_mb, args.seed, args.regenerate, log=log)
    jobs = args.jobs or os.cpu_count() or 1
    work = Path(tempfile.mkdtemp(prefix="measure-bench-"))
    try:
        root, added = augment_root(corpus_dir, work, args.big_session_mb, log=log)
        files = jsonl_files(root)
        log(f"bench: {len(files)} .jsonl files under {root}; warming the page cache ...")
        warm_page_cache(files)
        sizes = session_sizes(root)
        runs: dict[str, list[dict]] = {"floor_1p": [], "floor_np": [], "cold": [], "warm": [], "cold_1": []}
        identical = None
        for i in range(max(1, args.rounds)):
            log(f"bench: round {i + 1}/{args.rounds}: parse floor (1 and {jobs} processes), measure run cold and warm ...")
            for key, procs in (("floor_1p", 1), ("floor_np", jobs)):
                with OtherLoad() as load:
                    fl = parse_floor(files, procs)
                runs[key].append({**fl, "cpu_s": load.own_cpu, "other_load": load.cores})
            cache, out_cold, out_warm = work / f"cache{i}", work / f"out-cold{i}", work / f"out-warm{i}"
            steps = [("cold", out_cold, cache, jobs), ("warm", out_warm, cache, jobs)]
            if jobs > 1:
                steps.append(("cold_1", work / f"out-cold1-{i}", work / f"cache1-{i}", 1))
            for key, out, cdir, j in steps:
                with OtherLoad() as load:  # timed without the memory sampler (it costs CPU): see below
                    t = _measure(measure_cmd(root, out, cdir, j), None)
                runs[key].append({**vars(t), "cpu_s": load.own_cpu, "other_load": load.cores})
            if identical is None:
                n_sessions, events = run_events(out_cold)
                identical = same_tables(out_cold, out_warm)
            shutil.rmtree(cache, ignore_errors=True)
            shutil.rmtree(work / f"cache1-{i}", ignore_errors=True)
        # Memory: one more run of each step with the process-tree sampler on (not timed).
        log("bench: memory: measure run cold and warm again, sampling the process tree ...")
        for key, j in (("cold", jobs), ("warm", jobs), ("cold_1", 1)):
            if not runs[key]:
                continue
            cdir = work / "cache-mem" if key != "cold_1" else work / "cache-mem1"
            t = _measure(measure_cmd(root, work / f"out-mem-{key}", cdir, j), args.interval)
            for r in runs[key]:
                r.update(maxrss_bytes=max(r["maxrss_bytes"], t.maxrss_bytes), tree_rss_bytes=t.tree_rss_bytes, tree_pss_bytes=t.tree_pss_bytes)
        shutil.rmtree(work / "cache-mem", ignore_errors=True)
        shutil.rmtree(work / "cache-mem1", ignore_errors=True)
        fl1, fln, cold, warm = (best_of(runs[k]) for k in ("floor_1p", "floor_np", "cold", "warm"))
        cold_1 = best_of(runs["cold_1"]) if runs["cold_1"] else {**cold}
        log("bench: per-stage split (one in-process --jobs 1 run, CPU time) ...")
        with OtherLoad() as load:
            stages = stage_split(root, files, repeat=STAGE_REPEAT)
        stages["other_load"] = load.cores
        real = real_split(work, args.interval, args.rounds)
        log(f"bench: linearity, ~{args.linear_events} events doubled {args.linear_steps - 1} time(s) ...")
        with OtherLoad() as load:
            lin = linearity(os.fspath(root), work, args.linear_events, repeat=args.linear_repeat, steps=args.linear_steps)
        lin["other_load"] = load.cores
        log(f"bench: linearity with --replay-at turn_end (#11), ~{args.linear_events} events doubled {args.linear_steps - 1} time(s) ...")
        with OtherLoad() as load:
            lin_replay = linearity(os.fspath(root), work, args.linear_events, repeat=max(1, args.linear_repeat // 2),
                                   steps=args.linear_steps, replay="turn_end")
        lin_replay["other_load"] = load.cores
        log("bench: replay (#11): measure run on fixtures/default, plain and with --replay ...")
        replay = replay_cost(work, args.rounds, args.interval)
        scale = None if args.skip_scale else scale_report(args.scale_sessions, interval=args.interval, cwd=os.fspath(REPO), log=log)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    corpus_stats = {
        "root": os.path.relpath(corpus_dir, REPO) if corpus_dir.is_relative_to(REPO) else os.fspath(corpus_dir),
        "added_session": added,
        "files": len(files),
        "sessions": len(sizes),
        "sessions_measured": n_sessions,
        "bytes": fl1["bytes"],
        "lines": fl1["lines"],
        "malformed_lines": fl1["bad_lines"],
        "events": events,
        "largest_session_bytes": max((s for _, s in sizes), default=0),
        "largest_session": os.path.relpath(max(sizes, key=lambda s: s[1])[0], root) if sizes else None,
    }
    res = {
        "interval": args.interval,
        "corpus": corpus_stats,
        "floor_1p": fl1,
        "floor_np": fln,
        "cold": cold,
        "warm": warm,
        "cold_1": cold_1,
        "stages": stages,
        "real": real,
        "warm_tables_identical": identical,
        "linear": lin,
        "linear_replay": lin_replay,
        "jobs": jobs,
        "replay": replay,
        "scale": scale,
        "bytecode_compiled": bytecode,
    }
    return res, build_rows(res)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m measure.bench", description=__doc__)
    p.add_argument("--corpus", default=os.fspath(DEFAULT_CORPUS), help="benchmark corpus directory (generated once if absent; default bench-corpus/)")
    p.add_argument("--size-mb", type=float, default=300, help="size of a generated corpus (default 300, the issue #15 corpus)")
    p.add_argument("--seed", type=int, default=5, help="seed of a generated corpus (default 5)")
    p.add_argument("--regenerate", action="store_true", help="rebuild a corpus this benchmark generated")
    p.add_argument("--jobs", type=int, help="worker processes for measure run and the parallel floor (default: CPU count)")
    p.add_argument("--rounds", type=int, default=5, help="rounds of floor + cold + warm runs; the fastest of each is kept (default 5: other tenants of a shared machine only ever add time)")
    p.add_argument("--linear-events", type=int, default=20_000, help="N of the linearity check (default 20000)")
    p.add_argument("--linear-steps", type=int, default=3, help="session sizes N, 2N, 4N, ... of the linearity check (default 3)")
    p.add_argument("--linear-repeat", type=int, default=7, help="timings of each linearity session, best kept (default 7)")
    p.add_argument("--big-session-mb", type=float, default=PEAK_SESSION_MB,
                   help="if the corpus has no session this big, benchmark it plus one scaled-up session of that size (0: never; default 90)")
    p.add_argument("--interval", type=float, default=0.05, help="process-tree memory sampling interval in s (default 0.05)")
    p.add_argument("--out", default=os.fspath(DEFAULT_OUT), help="where bench.csv and machine.json go (default build/bench/; pass reports/bench to update the committed results)")
    p.add_argument("--skip-scale", action="store_true", help="skip measure report over 20,000 generated small sessions (#17; about a minute)")
    p.add_argument("--scale-sessions", type=int, default=SCALE_SESSIONS, help=argparse.SUPPRESS)
    p.add_argument("--check", action="store_true", help="exit 1 unless every target passes; an untested target fails")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    res, rows = run_bench(args, log=log)
    out = Path(args.out)
    write_csv(rows, out / "bench.csv")
    info = {**machine_info(), "jobs": res["jobs"], "corpus": res["corpus"], "linear": res["linear"], "linear_replay": res["linear_replay"],
            "stages": res["stages"], "real": res["real"], "scale": res["scale"],
            "bytecode_compiled": res["bytecode_compiled"]}
    (out / "machine.json").write_text(json.dumps(info, indent=1, sort_keys=True) + "\n")
    m = info
    print(f"machine: {m['cpu_model']}, {m['cpus_usable']} cpu(s), {(m['memory_bytes'] or 0) / 2**30:.1f} GiB, "
          f"Python {m['python']}, orjson {m['packages']['orjson']}, polars {m['packages']['polars']}")
    c = res["corpus"]
    print(f"corpus: {c['root']}: {c['sessions']} sessions, {c['files']} .jsonl files, {c['bytes'] / 1e6:.0f} MB, "
          f"{c['lines']} lines, {c['events']} events; largest session {c['largest_session_bytes'] / 1e6:.1f} MB ({c['largest_session']})")
    if c.get("added_session"):
        a = c["added_session"]
        print(f"  (the corpus had no {args.big_session_mb:g} MB session: all figures are over a hard-linked mirror of it plus "
              f"{a['path']}, {a['copies']} copies of {a['source']}: {a['bytes'] / 1e6:.1f} MB, {a['events']} events)")
    print(f"measure run with --jobs {res['jobs']}; the cold/floor target ratio uses the {res['floor_np']['procs']}-process floor "
          f"(same parallelism); warm-run tables identical to cold: {res['warm_tables_identical']}")
    print()
    print(f"where a one-core cold run's CPU goes ({c['root']}, in-process, no cache):")
    print(render_split(res["stages"]))
    if res.get("real"):
        print(f"\nthe same on {res['real']['root']}:")
        print(render_split(res["real"]))
    print()
    print(render(rows))
    print()
    busy = [r for r in rows if r["name"] == "other_load" and (r["value"] or 0) > 0.25]
    if busy:
        print("WARNING: other processes used CPU during " + ", ".join(f"{r['section']} ({r['value']:.2f} cores)" for r in busy)
              + f" of {os.cpu_count()}: those timings are pessimistic; re-run on a quiet machine\n")
    verdicts = [r for r in rows if r["section"] == "target"]
    for r in verdicts:
        print(f"{r['status']:8} {r['name']}: {_fmt(r['value'])} {r['unit']} (threshold {_fmt(r['threshold'])})")
    print(f"\nwrote {out / 'bench.csv'} and {out / 'machine.json'}")
    if args.check and any(r["status"] != "PASS" for r in verdicts):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
