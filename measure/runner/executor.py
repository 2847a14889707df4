"""Where sessions are measured: in this process, a local process pool, or a Dask cluster.

Every executor gets the same tasks (one session each, with its size in bytes) and returns
the outcomes in task order, so the tables do not depend on where or in which order the
sessions were measured. Work is handed out largest first by bytes read (parent plus
subagent files), so a big session starts early instead of ending the run alone, and small
sessions travel in batches of similar total size, so a root of many tiny sessions does not
pay one round trip per session.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass

from measure.akm.read import rel
from measure.runner.job import RunParams, SessionOutcome, _error, measure_session
from measure.runner.outputs import pid_alive
from measure.runner.progress import Progress

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


def measure_task(task: Task) -> SessionOutcome:
    """Measure one session; a surprise becomes an `internal_error` row, not a failed run."""
    try:
        return measure_session(task.root, task.path, task.params, task.template)
    except Exception as exc:  # noqa: BLE001 - one session's surprise must not end the run
        session_path = rel(task.path, task.root)
        outcome = SessionOutcome(session_path)
        outcome.errors.append(_error(session_path, session_path, "internal_error", f"{type(exc).__name__}: {exc}"))
        return outcome


def measure_batch(tasks: list[Task]) -> list[SessionOutcome]:
    return [measure_task(t) for t in tasks]


def batches(order: list[int], sizes: list[int], workers: int) -> list[list[int]]:
    """Task indices grouped, largest first, into batches of about total/(workers*8) bytes.

    A session at least that big is a batch of its own; smaller ones are packed in the same
    descending order until the batch reaches the target or MAX_BATCH_TASKS sessions.
    """
    total = sum(sizes[i] for i in order)
    target = max(1, total // max(1, workers * BATCHES_PER_WORKER))
    out: list[list[int]] = []
    current: list[int] = []
    size = 0
    for i in order:
        current.append(i)
        size += sizes[i]
        if size >= target or len(current) >= MAX_BATCH_TASKS:
            out.append(current)
            current, size = [], 0
    if current:
        out.append(current)
    return out


def run_tasks(
    tasks: list[Task],
    jobs: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    progress: Progress | Callable[[int, int], None] | None = None,
    sink: Callable[[int, SessionOutcome], None] | None = None,
) -> list[SessionOutcome]:
    """Measure every task; outcomes in task order. `progress` advances by each finished task's size
    (a `measure.runner.progress.Progress`) or is called as `progress(done, total)`.

    With `sink`, each outcome is handed to `sink(task index, outcome)` as it arrives (in any
    order) and not kept: the list returned holds None for each task.
    """
    if executor not in EXECUTORS:
        raise ValueError(f"unknown executor {executor!r} (expected one of {', '.join(EXECUTORS)})")
    order = sorted(range(len(tasks)), key=lambda i: -tasks[i].size)
    results: list[SessionOutcome | None] = [None] * len(tasks)
    done = 0

    def collect(pairs: Iterator[tuple[int, SessionOutcome]]) -> None:
        nonlocal done
        for i, outcome in pairs:
            if sink is None:
                results[i] = outcome
            else:
                sink(i, outcome)
            done += 1
            if isinstance(progress, Progress):
                progress.advance(tasks[i].size)
            elif progress:
                progress(done, len(tasks))

    if executor == "dask":
        collect(_dask(tasks, order, jobs, scheduler))
    else:
        workers = jobs if jobs is not None else (os.cpu_count() or 1)
        if workers > 1 and len(tasks) > 1:
            collect(_pool(tasks, order, min(workers, len(tasks))))
        else:
            collect((i, measure_task(tasks[i])) for i in order)
    return results  # type: ignore[return-value]


# --- local process pool --------------------------------------------------------------------


def _pool_context():
    # fork where there is one: workers inherit the measuring code, nothing to boot or import
    # (a fork server, or spawn, re-imports the caller's __main__ in every worker: seconds in a
    # notebook kernel). `measure run` forks before it loads polars; in a caller that holds
    # polars (a notebook) workers never call it, so its threads cannot hold a lock a worker
    # needs. Elsewhere: a fork server that imported only the measuring code, else spawn.
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["measure.runner.executor"])
        return ctx
    return multiprocessing.get_context("spawn")


def _pool(tasks: list[Task], order: list[int], workers: int) -> Iterator[tuple[int, SessionOutcome]]:
    groups = batches(order, [t.size for t in tasks], workers)
    pool = ProcessPoolExecutor(
        max_workers=min(workers, len(groups)), mp_context=_pool_context(), initializer=_worker_init, initargs=(os.getpid(),)
    )
    try:
        # Submitted largest first, at most IN_FLIGHT_PER_WORKER batches per worker at a time:
        # finished batches wait for the caller as outcomes, so a caller slower than the workers
        # (merging 20,000 sessions' rows) would otherwise hold every outcome at once.
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
        _stop_forkserver()


def _stop_forkserver() -> None:
    """End the fork server with the pool: nothing lingers, and waiting for it folds the
    workers' CPU time and peak memory into this process's rusage (as a benchmark reads them)."""
    from multiprocessing import forkserver

    stop = getattr(getattr(forkserver, "_forkserver", None), "_stop", None)
    if stop is not None:
        try:
            stop()
        except OSError:
            pass


def _worker_init(run_pid: int) -> None:
    """Make a worker end when the run ends, even when the run was SIGKILLed.

    Linux sends PR_SET_PDEATHSIG's signal when the parent dies; everywhere a watchdog thread
    also checks that the run's process is still there.
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    parent = os.getppid()

    def watch() -> None:
        while True:
            threading.Event().wait(0.5)
            if os.getppid() != parent or not pid_alive(run_pid):
                os._exit(70)

    threading.Thread(target=watch, name="measure-orphan-watch", daemon=True).start()


# --- Dask ------------------------------------------------------------------------------------


def _dask(tasks: list[Task], order: list[int], jobs: int | None, scheduler: str | None):
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise RuntimeError("--executor dask needs Dask distributed: pip install 'measure[dask]'") from None
    cluster = None
    if scheduler:
        client = Client(scheduler)
    else:
        cluster = LocalCluster(
            n_workers=jobs or os.cpu_count() or 1,
            threads_per_worker=1,
            host="127.0.0.1",
            dashboard_address=None,
        )
        client = Client(cluster)
    try:
        groups = batches(order, [t.size for t in tasks], max(1, len(client.scheduler_info().get("workers", {})) or (jobs or 1)))
        futures = []
        for rank, g in enumerate(groups):
            fut = client.submit(measure_batch, [tasks[i] for i in g], pure=False, priority=len(groups) - rank)
            futures.append((fut, g))
        by_key = {f.key: g for f, g in futures}
        for fut in as_completed([f for f, _ in futures]):
            yield from zip(by_key[fut.key], fut.result())
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
