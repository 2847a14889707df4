"""Executors: the same tables wherever sessions are measured; work by bytes; no orphans."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.bench.timing import tree_pids
from measure.runner.executor import Task, batches, run_tasks
from measure.runner.job import RunParams
from measure.runner.run import run_measurement
from measure.schema import TABLES

REPO = Path(__file__).parent.parent
PARITY = Path(__file__).parent / "parity"
TEMPLATE = str(PARITY / "template.md")
DEFAULT = REPO / "fixtures" / "default"
PIN_MS = 1_780_000_000_000


def _same_tables(a: Path, b: Path) -> None:
    for name in TABLES:
        assert (a / f"{name}.csv").read_bytes() == (b / f"{name}.csv").read_bytes(), name
        assert (a / f"{name}.parquet").read_bytes() == (b / f"{name}.parquet").read_bytes(), name


def test_batches_go_largest_first_and_cover_every_task():
    sizes = [5, 100, 1, 1, 1, 50, 2, 3, 1, 1]
    order = sorted(range(len(sizes)), key=lambda i: -sizes[i])
    groups = batches(order, sizes, workers=2)
    assert sorted(i for g in groups for i in g) == list(range(len(sizes)))
    assert groups[0] == [1] and groups[1] == [5]  # the big sessions alone, first
    target = sum(sizes) // 16
    assert all(sum(sizes[i] for i in g) >= target for g in groups[:-1])
    flat = [i for g in groups for i in g]
    assert [sizes[i] for i in flat] == sorted(sizes, reverse=True)


def test_outcomes_come_back_with_their_task_index(parity_root):
    root = os.fspath(parity_root / "projects")
    from measure.akm.prompt import load_template
    from measure.akm.read import rel
    from measure.runner.inputs import session_files

    paths = sorted(str(p) for p in (parity_root / "projects").glob("*/*.jsonl"))
    tmpl = load_template(TEMPLATE)
    tasks = [Task(root, p, RunParams(template_path=TEMPLATE), tmpl, sum(os.path.getsize(f) for f in session_files(p, root))) for p in paths]
    serial, pooled = dict(run_tasks(tasks, jobs=1)), dict(run_tasks(tasks, jobs=2))
    assert sorted(serial) == sorted(pooled) == list(range(len(tasks)))  # every task, once
    assert [serial[i].session_path for i in range(len(tasks))] == [rel(p, root) for p in paths]  # each outcome its task's
    assert serial == pooled


@pytest.mark.slow
def test_local_pool_matches_one_process(tmp_path):
    params = RunParams(file_time_ms=PIN_MS, budgets=(20_000, 160_000))
    run_measurement(DEFAULT, tmp_path / "one", params, jobs=1, cache_dir=None)
    run_measurement(DEFAULT, tmp_path / "two", params, jobs=2, cache_dir=None)
    _same_tables(tmp_path / "one", tmp_path / "two")


@pytest.fixture(scope="module")
def dask_distributed():
    return pytest.importorskip(
        "distributed", reason="Dask distributed is not installed: `pip install -e '.[dask]'` (make install does)"
    )


@pytest.mark.slow
def test_dask_local_cluster_gives_the_local_tables(dask_distributed, tmp_path):
    params = RunParams(file_time_ms=PIN_MS)
    run_measurement(DEFAULT, tmp_path / "local", params, jobs=1, cache_dir=None)
    run_measurement(DEFAULT, tmp_path / "dask", params, jobs=1, cache_dir=None, executor="dask")
    _same_tables(tmp_path / "local", tmp_path / "dask")


@pytest.mark.slow
def test_dask_scheduler_address_gives_the_local_tables(dask_distributed, tmp_path):
    from distributed import LocalCluster

    params = RunParams(file_time_ms=PIN_MS)
    run_measurement(DEFAULT, tmp_path / "local", params, jobs=1, cache_dir=None)
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:  # inproc: no socket
        assert cluster.scheduler_address.startswith(("tcp://127.0.0.1:", "inproc://"))
        run_measurement(DEFAULT, tmp_path / "dask", params, cache_dir=None, executor="dask", scheduler=cluster.scheduler_address)
    _same_tables(tmp_path / "local", tmp_path / "dask")


def test_unknown_executor_is_refused(tmp_path):
    with pytest.raises(ValueError):
        run_tasks([], executor="spark")


@pytest.fixture(scope="module")
def slow_root(tmp_path_factory) -> Path:
    """A root that keeps two workers busy for a while."""
    out = tmp_path_factory.mktemp("killroot") / "root"
    subprocess.run(
        [sys.executable, "-m", "measure", "synth", "--shape", "bench", "--size-mb", "40", "--seed", "3", "--out", os.fspath(out)],
        check=True, capture_output=True, cwd=REPO,
    )
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in (b"Z", b"X")


# The command line forks its workers before it loads polars; a library caller may hold it.
_LIBRARY_RUN = (
    "import polars, sys\n"
    "from measure.runner.run import run_measurement\n"
    "run_measurement(sys.argv[1], sys.argv[2], jobs=2, cache_dir=None)\n"
)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", ["cli", "library_holding_polars"])
def test_a_sigkilled_run_leaves_no_worker_processes(slow_root, tmp_path, how):
    if how == "cli":
        cmd = [sys.executable, "-m", "measure", "run", "--root", os.fspath(slow_root), "--out", os.fspath(tmp_path / "out"),
               "--jobs", "2", "--no-cache"]
    else:
        cmd = [sys.executable, "-c", _LIBRARY_RUN, os.fspath(slow_root), os.fspath(tmp_path / "out")]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    descendants: set[int] = set()
    deadline = time.time() + 60
    try:
        while time.time() < deadline and proc.poll() is None:
            descendants |= set(tree_pids(proc.pid)) - {proc.pid}
            if len(descendants) >= 2:  # both workers
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the run ended before its workers were seen; make slow_root bigger"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.time() + 10
        while time.time() < deadline and any(_alive(p) for p in descendants):
            time.sleep(0.1)
        left = [p for p in descendants if _alive(p)]
        assert not left, f"orphans: {left}"
    finally:
        if proc.poll() is None:
            proc.kill()
        for p in descendants:
            if _alive(p):
                os.kill(p, signal.SIGKILL)


def test_cli_refuses_a_scheduler_without_the_dask_executor(tmp_path, capsys):
    from measure.cli import main

    with pytest.raises(SystemExit) as info:
        main(["run", "--root", os.fspath(DEFAULT), "--out", os.fspath(tmp_path / "o"), "--scheduler", "tcp://127.0.0.1:1"])
    assert info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == "Error: --scheduler needs --executor dask"
    assert not (tmp_path / "o").exists()
