"""Timing and memory: the parse floor, timed runs with process-tree RSS, per-session timing and growth."""

from __future__ import annotations

import csv
import gc
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from measure.bench.corpus import (
    _tree_bytes,
    folded_events,
    pick_linear_source,
    scale_session,
)
from measure.bench.results import LINEAR_MAX


def warm_page_cache(files: list[str]) -> int:
    """Read every file once so every timed step below starts from the same (warm) page cache."""
    total = 0
    for p in files:
        with open(p, "rb") as f:
            while chunk := f.read(1 << 20):
                total += len(chunk)
    return total


def _busy_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy (not idle, not waiting on I/O), from /proc/stat."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = [int(v) for v in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _own_seconds() -> float:
    """CPU seconds of this process plus every child (and grandchild) reaped so far."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class OtherLoad:
    """Context manager: cores kept busy by *other* processes while the block ran.

    The benchmark shares the machine; a value near 0 means the timings are clean, one near 1
    means another process took a whole core for the duration (timings are pessimistic).
    """

    def __enter__(self):
        self.t0, self.busy0, self.own0 = time.perf_counter(), _busy_seconds(), _own_seconds()
        self.cores = None
        self.own_cpu = 0.0
        return self

    def __exit__(self, *exc):
        wall = time.perf_counter() - self.t0
        busy1 = _busy_seconds()
        self.own_cpu = _own_seconds() - self.own0  # CPU seconds of the block (reaped children included)
        if self.busy0 is not None and busy1 is not None and wall > 0:
            self.cores = max(0.0, (busy1 - self.busy0 - self.own_cpu) / wall)
        return False


def count_file(path: str) -> tuple[int, int, int]:
    """orjson over every non-empty line of one file: (lines, lines that failed, bytes)."""
    lines = bad = 0
    loads = orjson.loads
    with open(path, "rb") as f:
        for raw in f:
            line = raw[:-1] if raw.endswith(b"\n") else raw
            if not line:
                continue
            lines += 1
            try:
                loads(line)
            except orjson.JSONDecodeError:
                bad += 1
    return lines, bad, os.path.getsize(path)


def parse_floor(files: list[str], procs: int = 1) -> dict:
    """Parse every line of every file with orjson alone; `procs` > 1 uses a process pool.

    The pool is scheduled like `measure run`'s (largest file first, one file per task) and
    its start-up is inside the timing, as it is for `measure run`.
    """
    t0 = time.perf_counter()
    if procs > 1 and len(files) > 1:
        order = sorted(files, key=lambda p: -os.path.getsize(p))
        with ProcessPoolExecutor(max_workers=procs) as pool:
            parts = list(pool.map(count_file, order, chunksize=1))
    else:
        parts = [count_file(p) for p in files]
    wall = time.perf_counter() - t0
    return {
        "procs": procs,
        "wall_s": wall,
        "lines": sum(p[0] for p in parts),
        "bad_lines": sum(p[1] for p in parts),
        "bytes": sum(p[2] for p in parts),
        "files": len(files),
    }


def best_of(runs: list[dict]) -> dict:
    """The fastest of several runs of one step, with every wall time kept and memory peaks maxed.

    Memory is not a noise to filter out: the peaks are the largest seen in any run.
    """
    best = dict(min(runs, key=lambda r: r["wall_s"]))
    best["runs"] = [r["wall_s"] for r in runs]
    for k in ("maxrss_bytes", "tree_rss_bytes", "tree_pss_bytes"):
        if k in best:
            best[k] = max(r[k] for r in runs)
    return best


def _proc_children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rfind(b")") + 2 :].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    return kids


def tree_pids(pid: int) -> list[int]:
    """`pid` and all its live descendants."""
    kids = _proc_children()
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, ()))
    return out


def _rss_pss(pid: int) -> tuple[int, int]:
    """(RSS, PSS) in bytes of one process; (0, 0) when it is gone."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    pss = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    return rss, pss


class TreeSampler(threading.Thread):
    """Samples the summed RSS and PSS of a process tree until stopped; keeps the peaks."""

    def __init__(self, pid: int, interval: float = 0.05):
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.peak_rss = self.peak_pss = 0
        self.peak_procs = 0
        self.samples = 0
        self._stop_event = threading.Event()

    def sample(self) -> None:
        pids = tree_pids(self.pid)
        rss = pss = 0
        for p in pids:
            r, s = _rss_pss(p)
            rss += r
            pss += s
        self.peak_rss = max(self.peak_rss, rss)
        self.peak_pss = max(self.peak_pss, pss)
        self.peak_procs = max(self.peak_procs, len(pids))
        self.samples += 1

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.sample()
            self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


@dataclass
class Timed:
    """One subprocess run: wall clock and memory."""

    cmd: list[str]
    returncode: int
    wall_s: float
    maxrss_bytes: int  # exact: the largest single process of the tree (wait4's ru_maxrss)
    tree_rss_bytes: int  # sampled: peak of the summed RSS of the live tree
    tree_pss_bytes: int  # sampled: peak of the summed PSS (shared pages split between sharers)
    procs: int
    samples: int
    stderr: str = ""
    extra: dict = field(default_factory=dict)


def timed_run(cmd: list[str], interval: float | None = 0.05, env: dict | None = None, cwd: str | None = None) -> Timed:
    """Run `cmd`, reaping it with wait4 so its rusage is its own (grandchildren included).

    Linux folds a reaped process's ru_maxrss into its parent's "children" maximum, so the
    wait4 figure covers the pool workers (grandchildren), which ProcessPoolExecutor joins.
    It is the largest *single* process, though, not the tree's sum: the sampler adds that,
    every `interval` s. `interval=None` samples nothing: reading /proc of every process
    costs CPU, which a run using every core pays for (--jobs 2 lost 0.1 s of 2 on 2 cores).
    """
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=cwd)
        sampler = TreeSampler(proc.pid, interval or 0.05)
        if interval:
            sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if interval:
            sampler.stop()
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    return Timed(
        cmd=cmd,
        returncode=proc.returncode,
        wall_s=wall,
        maxrss_bytes=usage.ru_maxrss * 1024,
        tree_rss_bytes=sampler.peak_rss,
        tree_pss_bytes=sampler.peak_pss,
        procs=sampler.peak_procs,
        samples=sampler.samples,
        stderr=text,
    )


def measure_cmd(root: Path | str, out: Path | str, cache: Path | str, jobs: int | None) -> list[str]:
    cmd = [sys.executable, "-m", "measure", "run", "--root", os.fspath(root), "--out", os.fspath(out), "--cache-dir", os.fspath(cache)]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    return cmd


def run_events(out_dir: Path) -> tuple[int, int]:
    """(sessions measured, folded events) from a run's sessions table."""
    path = out_dir / "sessions.csv"
    sessions: set[str] = set()
    events = 0
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["strategy"] == "fold":
                sessions.add(row["session_path"])
                events += int(row["raw_events"])
    return len(sessions), events


def same_tables(a: Path, b: Path) -> bool:
    """Whether two run directories hold byte-identical CSV tables."""
    names = sorted(p.name for p in a.glob("*.csv"))
    return names == sorted(p.name for p in b.glob("*.csv")) and all(
        (a / n).read_bytes() == (b / n).read_bytes() for n in names
    )


def clear_caches() -> None:
    """Empty every functools cache of measure's modules, as a fresh worker process has them.

    Repeating one session in one process would otherwise find its dates already rendered,
    which no worker does (its sessions do not share timestamps).
    """
    for name, mod in list(sys.modules.items()):
        if mod is None or not (name == "measure" or name.startswith("measure.")):
            continue
        for v in list(vars(mod).values()):
            if hasattr(v, "cache_info") and callable(getattr(v, "cache_clear", None)):
                v.cache_clear()
    from measure.akm import jscompat

    jscompat.clear_caches()


def call_counts(root: str, parents: list[str], params=None) -> list[dict]:
    """Python-level calls made by `measure_session` on each session (cProfile, caches cleared).

    Unlike times these do not depend on what else the machine runs: a function whose calls
    more than double when the events double is superlinear whatever the clock says.
    """
    import cProfile
    import pstats

    from measure.akm.prompt import load_template
    from measure.runner.job import RunParams, measure_session

    params = params or RunParams()
    template = load_template(None)
    out = []
    for parent in parents:
        clear_caches()
        prof = cProfile.Profile()
        prof.enable()
        measure_session(root, parent, params, template)
        prof.disable()
        stats = pstats.Stats(prof).stats
        per = {f"{os.path.basename(k[0])}:{k[1]}({k[2]})": v[1] for k, v in stats.items()}
        out.append({"total": sum(per.values()), "by_function": per})
    return out


def superlinear(small: dict[str, int], big: dict[str, int], top: int = 5) -> list[tuple[str, int, int]]:
    """Functions called more than twice as often in `big` (twice the events) as in `small`."""
    grew = [(k, small.get(k, 0), n) for k, n in big.items() if n > 2 * small.get(k, 0) + 2]
    return sorted(grew, key=lambda g: g[1] * 2 - g[2])[:top]


def time_sessions(root: str, parents: list[str], repeat: int = 3, collect: bool = True, params=None) -> list[list[float]]:
    """CPU times of `measure_session` (every strategy, default params), `repeat` rounds.

    CPU time of this process, not wall time: the question is how the work grows, and other
    processes on a 2-core machine add tens of percent of wall-clock noise.

    Rounds interleave the sessions (N, 2N, N, 2N, ...) so a drift of the machine's speed
    hits both alike. Returns one list of times per session. `collect=False` times with the
    cyclic garbage collector off (a diagnosis: how much of the time is GC).
    """
    from measure.akm.prompt import load_template
    from measure.runner.job import RunParams, measure_session

    params = params or RunParams()
    template = load_template(None)
    times: list[list[float]] = [[] for _ in parents]
    for _ in range(max(1, repeat)):
        for i, parent in enumerate(parents):
            clear_caches()
            gc.collect()
            if not collect:
                gc.disable()
            try:
                t0 = time.process_time()
                out = measure_session(root, parent, params, template)
                times[i].append(time.process_time() - t0)
            finally:
                gc.enable()
            del out
    return times


def linearity(root: str, work: Path, events: int, repeat: int = 3, steps: int = 3, source: str | None = None,
              calls: bool = True, replay: str | None = None) -> dict:
    """Time `measure_session` on sessions of exactly N, 2N, 4N, ... events (`steps` sizes).

    Each doubling should at most double the time; the worst step is the verdict. Several
    steps catch a cliff that only one doubling crosses (a bounded cache, say). `replay`
    (a --replay-at schedule) measures with the replay table on: its moments must not make
    the cost grow as events x moments.
    """
    from measure.runner.job import RunParams

    params = RunParams(replay=replay)
    src = source or pick_linear_source(root)
    base = folded_events(src, root)
    if base == 0:
        raise SystemExit(f"bench: {src} has no events to scale")
    copies = max(1, round(events / base))
    lin_root = work / ("linear-replay" if replay else "linear")
    sizes = []
    for k in range(max(2, steps)):
        path = scale_session(src, lin_root / "-bench-linear", copies << k, f"linear-{1 << k}n")
        sizes.append({"scale": 1 << k, "path": path, "events": folded_events(path, os.fspath(lin_root)), "bytes": _tree_bytes(path)})
    paths = [z["path"] for z in sizes]
    runs = time_sessions(os.fspath(lin_root), paths, repeat, params=params)
    for z, r in zip(sizes, runs):
        z.update(time_s=min(r), time_median_s=statistics.median(r), spread=max(r) / min(r) - 1)
        del z["path"]
    counts = call_counts(os.fspath(lin_root), paths, params) if calls else []
    for z, c in zip(sizes, counts):
        z["calls"] = c["total"]
    call_ratios = [b["total"] / a["total"] for a, b in zip(counts, counts[1:])]
    grew = [superlinear(a["by_function"], b["by_function"]) for a, b in zip(counts, counts[1:])]
    ratios = [b["time_s"] / a["time_s"] for a, b in zip(sizes, sizes[1:])]
    nogc = []
    if max(ratios) > LINEAR_MAX:  # diagnose a failure: is it the cyclic GC?
        quiet = time_sessions(os.fspath(lin_root), paths, min(3, repeat), collect=False, params=params)
        nogc = [min(b) / min(a) for a, b in zip(quiet, quiet[1:])]
        for z, r in zip(sizes, quiet):
            z["time_nogc_s"] = min(r)
    medians = [b["time_median_s"] / a["time_median_s"] for a, b in zip(sizes, sizes[1:])]
    return {
        "replay": replay,
        "source": os.path.relpath(src, root),
        "base_events": base,
        "copies": copies,
        "sizes": sizes,
        "ratios": ratios,
        "ratios_median": medians,
        "ratio": max(ratios),
        "repeat": max(1, repeat),
        "spread": max(z["spread"] for z in sizes),  # worst (slowest / best) - 1 over the repeats
        "exact": all(z["events"] == z["scale"] * copies * base for z in sizes),
        "ratios_nogc": nogc,
        "call_ratios": call_ratios,
        "call_ratio": max(call_ratios) if call_ratios else None,
        "superlinear_calls": [[list(g) for g in step] for step in grew],
    }
