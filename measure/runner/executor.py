"""Where sessions are measured: in this process, a local process pool, or a Dask cluster.

Work is handed out largest first by bytes read, so a big session starts early instead of ending the
run alone, and small sessions travel in batches of similar total size. Each outcome comes back with
its task's index: the tables do not depend on where, or in which order, sessions were measured.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from measure.runner.cache import store_entry
from measure.runner.job import RunParams, SessionOutcome, internal_error, measure_session

EXECUTORS = ("local", "dask")
#: Batches aim at this share of the work per worker, so the last batches are small.
BATCHES_PER_WORKER = 8
#: At most this many sessions per batch: a batch's outcomes travel and wait as one piece, so
#: a root of 20,000 tiny sessions is not returned in 16 pieces of 1,250 sessions' rows.
MAX_BATCH_TASKS = 200
#: Batches submitted to the local pool ahead of the results read, per worker.
IN_FLIGHT_PER_WORKER = 2


@dataclass(frozen=True)
class Task:
    """One session to measure and the bytes it will read."""

    root: str
    path: str
    params: RunParams
    template: str
    size: int
    entry: Path | None = None  # the cache entry its outcome is stored in where it is measured (local workers)


def measure_task(task: Task) -> SessionOutcome:
    outcome = measure_session(task.root, task.path, task.params, task.template)
    if task.entry is not None and not internal_error(outcome.errors):  # a fixed measure should try again
        store_entry(task.entry, outcome)
    return outcome


def measure_batch(tasks: list[Task]) -> list[SessionOutcome]:
    return [measure_task(t) for t in tasks]


def batches(order: list[int], sizes: list[int], workers: int) -> list[list[int]]:
    """Task indices (largest first) packed in order into batches of about total/(workers*8) bytes,
    at most MAX_BATCH_TASKS each; a session at least that big is a batch of its own."""
    total = sum(sizes[i] for i in order)
    target = max(1, total // max(1, workers * BATCHES_PER_WORKER))
    out, current, size = [], [], 0
    for i in order:
        current.append(i)
        size += sizes[i]
        if size >= target or len(current) >= MAX_BATCH_TASKS:
            out.append(current)
            current, size = [], 0
    if current:
        out.append(current)
    return out


def run_tasks(tasks: list[Task], jobs: int | None = None, executor: str = "local",
              scheduler: str | None = None) -> Iterator[tuple[int, SessionOutcome]]:
    """Measure every task: (task index, outcome) pairs as they finish, in any order."""
    if executor not in EXECUTORS:
        raise ValueError(f"unknown executor {executor!r} (expected one of {', '.join(EXECUTORS)})")
    order = sorted(range(len(tasks)), key=lambda i: -tasks[i].size)
    if executor == "dask":
        return _dask(tasks, order, jobs, scheduler)
    workers = jobs or os.cpu_count() or 1
    if workers > 1 and len(tasks) > 1:
        return _pool(tasks, order, min(workers, len(tasks)))
    return ((i, measure_task(tasks[i])) for i in order)


def _pool(tasks: list[Task], order: list[int], workers: int) -> Iterator[tuple[int, SessionOutcome]]:
    groups = batches(order, [t.size for t in tasks], workers)
    # fork where there is one: workers inherit the measuring code, nothing to boot or import
    # (spawn re-imports the caller's __main__ in every worker: seconds in a notebook kernel).
    # `measure run` forks before it loads polars; in a caller that holds polars (a notebook)
    # workers never call it, so its threads cannot hold a lock a worker needs.
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    pool = ProcessPoolExecutor(max_workers=min(workers, len(groups)), mp_context=context, initializer=_worker_init,
                               initargs=(os.getpid(),))
    try:
        # At most IN_FLIGHT_PER_WORKER batches per worker at a time: finished batches wait for the caller, so a
        # caller slower than the workers (merging 20,000 sessions' rows) would otherwise hold every outcome.
        queue = iter(groups)
        futures: dict = {}

        def submit_next() -> None:
            g = next(queue, None)
            if g is not None:
                futures[pool.submit(measure_batch, [tasks[i] for i in g])] = g

        for _ in range(workers * IN_FLIGHT_PER_WORKER):
            submit_next()
        while futures:
            finished, _ = wait(futures, return_when=FIRST_COMPLETED)
            for f in finished:
                g = futures.pop(f)  # a finished future holds its outcomes while it is referenced
                submit_next()
                yield from zip(g, f.result())
            del finished
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _worker_init(run_pid: int) -> None:
    """Make a worker end when the run (process `run_pid`, its parent) ends, even a SIGKILLed one:
    Linux sends PR_SET_PDEATHSIG's signal; everywhere a watchdog thread sees the worker orphaned."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    def watch() -> None:
        while os.getppid() == run_pid:
            time.sleep(0.5)
        os._exit(70)

    threading.Thread(target=watch, name="measure-orphan-watch", daemon=True).start()


def _dask(tasks: list[Task], order: list[int], jobs: int | None, scheduler: str | None):
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise RuntimeError("--executor dask needs Dask distributed: pip install 'measure[dask]'") from None
    with contextlib.ExitStack() as stack:  # closed in reverse: the client, then a cluster of our own
        cluster = scheduler or stack.enter_context(LocalCluster(n_workers=jobs or os.cpu_count() or 1, threads_per_worker=1,
                                                                host="127.0.0.1", dashboard_address=None))
        client = stack.enter_context(Client(cluster))
        groups = batches(order, [t.size for t in tasks], len(client.scheduler_info().get("workers", {})) or jobs or 1)
        futures = {client.submit(measure_batch, [tasks[i] for i in g], pure=False, priority=len(groups) - rank): g
                   for rank, g in enumerate(groups)}
        for fut in as_completed(futures):
            yield from zip(futures[fut], fut.result())
