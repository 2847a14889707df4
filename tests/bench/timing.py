"""Timing and memory: the parse floor, timed commands with their process tree's memory, machine load."""

from __future__ import annotations

import os
import resource
import subprocess
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass

import orjson
import psutil


def _machine_busy_s() -> float:
    """CPU seconds the whole machine has spent busy (neither idle nor waiting on I/O)."""
    t = psutil.cpu_times()
    return t.user + t.nice + t.system + getattr(t, "irq", 0) + getattr(t, "softirq", 0) + getattr(t, "steal", 0)


def _own_cpu_s() -> float:
    """CPU seconds of this process plus every child (and grandchild) reaped so far."""
    # getrusage, to the microsecond: psutil's process times come in 10 ms ticks, a fifth of fixtures/real's floor.
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class Stopwatch:
    """Context manager: the block's wall and own CPU time, and the CPU other processes used meanwhile.

    `cores` near 0: the block's timings are clean; near 1: another process took a whole core.
    """

    def __enter__(self):
        self._t0, self._busy0, self._own0 = time.perf_counter(), _machine_busy_s(), _own_cpu_s()
        return self

    def __exit__(self, *exc):
        self.wall_s = time.perf_counter() - self._t0
        self.own_cpu_s = _own_cpu_s() - self._own0
        self.other_cpu_s = max(0.0, _machine_busy_s() - self._busy0 - self.own_cpu_s)
        self.cores = self.other_cpu_s / self.wall_s if self.wall_s > 0 else 0.0


def count_file(path: str) -> tuple[int, int, int]:
    """orjson over every non-empty line of one file: (lines, lines that failed, bytes)."""
    lines = bad = 0
    loads = orjson.loads
    with open(path, "rb") as f:
        for raw in f:
            if raw == b"\n":
                continue
            lines += 1
            try:
                loads(raw)
            except orjson.JSONDecodeError:
                bad += 1
    return lines, bad, os.path.getsize(path)


def parse_floor(files: list[str], procs: int = 1) -> dict:
    """orjson alone over every line of `files`, timed; `procs` > 1 parses in a pool scheduled like `measure run`'s."""
    # largest file first, one file per task, the pool's start-up inside the timing
    with Stopwatch() as watch:
        if procs > 1:
            with ProcessPoolExecutor(max_workers=procs) as pool:
                parts = list(pool.map(count_file, sorted(files, key=lambda p: -os.path.getsize(p)), chunksize=1))
        else:
            parts = [count_file(p) for p in files]
    lines, bad, size = (sum(col) for col in zip(*parts)) if parts else (0, 0, 0)
    return {"procs": procs, "wall_s": watch.wall_s, "cpu_s": watch.own_cpu_s,
            "other_load": watch.cores, "lines": lines, "bad_lines": bad, "bytes": size, "files": len(files)}


def best_of_rounds(steps: dict, rounds: int) -> dict[str, dict]:
    """Every step once per round, in order (a drift of the machine's speed hits all alike); the fastest of each.

    Other processes only ever add time, so the fastest is the one kept; every wall time is in `runs`.
    """
    runs: dict[str, list[dict]] = {k: [] for k in steps}
    for i in range(max(1, rounds)):
        for key, step in steps.items():
            runs[key].append(step(i))
    return {k: dict(min(v, key=lambda r: r["wall_s"]), runs=[r["wall_s"] for r in v]) for k, v in runs.items()}


def tree_pids(pid: int) -> list[int]:
    """`pid` and all its live descendants (none when `pid` is gone)."""
    try:
        return [pid, *(c.pid for c in psutil.Process(pid).children(recursive=True))]
    except psutil.NoSuchProcess:
        return []


def tree_memory(pid: int) -> tuple[int, int, int, int]:
    """(summed RSS, summed PSS, processes, the largest process's own peak RSS) of `pid` and its live
    descendants, in bytes. The peak is the kernel's VmHWM of each: it misses no spike of a process
    sampled after it, as a sampled sum can."""
    rss = pss = procs = peak = 0
    for p in tree_pids(pid):
        try:
            mem = psutil.Process(p).memory_full_info()
            with open(f"/proc/{p}/status", encoding="ascii") as f:
                hwm = next((int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:")), 0)
        except (psutil.Error, OSError):  # gone, a zombie, or not ours to read
            continue
        rss, pss, procs, peak = rss + mem.rss, pss + mem.pss, procs + 1, max(peak, hwm)
    return rss, pss, procs, peak


@dataclass(frozen=True)
class Timed:
    """One command run: wall clock, CPU and memory of its whole process tree."""

    returncode: int
    wall_s: float
    cpu_s: float  # user + system of the command and every descendant it reaped (wait4)
    tree_rss_bytes: int  # sampled: peak of the summed RSS of the live tree (0 when not sampled)
    tree_pss_bytes: int  # sampled: the same with shared pages split between their sharers
    procs: int  # sampled: the most processes the tree had at once
    peak_process_bytes: int  # sampled: the largest single process's own peak RSS (VmHWM)
    stderr: str


def timed_run(cmd: list[str], interval: float | None = 0.05, cwd: str | None = None) -> Timed:
    """Run `cmd`, reaped with wait4 so its CPU time is its own, grandchildren included.

    With an `interval` the tree's memory is sampled that often (and the wall time known to that
    interval): sampling costs CPU. wait4's ru_maxrss is not used: on Linux a child's starts at its
    parent's own peak (the mm it execs from), so a bench that held 500 MiB once would see it in
    every command it times.
    """
    peak = [0, 0, 0, 0]
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=cwd)
        while not (done := os.wait4(proc.pid, os.WNOHANG if interval else 0))[0]:
            peak = [max(a, b) for a, b in zip(peak, tree_memory(proc.pid))]
            time.sleep(interval)
        wall = time.perf_counter() - t0
        _, status, usage = done
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    return Timed(proc.returncode, wall, usage.ru_utime + usage.ru_stime, *peak, text)


def checked_run(cmd: list[str], interval: float | None = None, cwd: str | None = None) -> dict:
    """`timed_run` as a dict, with the load other processes put on the machine meanwhile; a failure ends the bench."""
    with Stopwatch() as watch:
        t = timed_run(cmd, interval, cwd)
    if t.returncode != 0:
        raise SystemExit(f"bench: {' '.join(cmd[1:])} failed ({t.returncode}):\n{t.stderr[-4000:]}")
    return {k: v for k, v in asdict(t).items() if k != "stderr"} | {"other_load": watch.cores}
