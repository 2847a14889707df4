"""Where a one-core run's CPU time goes: read, pre-filter, prompt, metrics, tables, the rest.

The run is `run_measurement` in this process (`--jobs 1`, no cache) with thin timers around
the functions each stage calls; the timers cost one clock read per call (per strategy, not
per event), so the split is the run's own. Each stage is reported as a multiple of the
one-process parse floor over the same files, the unit of the targets.
"""

from __future__ import annotations

import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from measure.bench.results import STAGE_NOTES, STAGES


class _Clock:
    def __init__(self):
        self.spent: dict[str, float] = {}

    def wrap(self, name: str, fn):
        clock = time.process_time
        spent = self.spent

        def timed(*args, **kwargs):
            t0 = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + clock() - t0

        return timed


@contextmanager
def _patched(pairs):
    saved = [(mod, attr, getattr(mod, attr)) for mod, attr, _ in pairs]
    for mod, attr, new in pairs:
        setattr(mod, attr, new)
    try:
        yield
    finally:
        for mod, attr, old in saved:
            setattr(mod, attr, old)


def clear_caches() -> None:
    from measure.bench.timing import clear_caches as clear

    clear()


def floor_cpu(files: list[str]) -> float:
    """CPU seconds of orjson over every line of `files` in this process (the 1-process floor)."""
    from measure.bench.timing import count_file

    t0 = time.process_time()
    for p in files:
        count_file(p)
    return time.process_time() - t0


def stage_split(root: str | os.PathLike, files: list[str] | None = None, params=None, repeat: int = 1) -> dict:
    """CPU seconds per stage of an in-process cold run, and each over the parse floor.

    With `repeat`, the floor is the fastest of that many parses and the split the run with the
    smallest total of that many (other load only ever adds time; a split is one run's, whole).
    """
    from measure.bench.corpus import jsonl_files
    from measure.measurements import strategies
    from measure.runner import executor, job, merge, tables

    files = files if files is not None else jsonl_files(Path(root))
    clock = _Clock()
    patches = [
        (job, "read_session", clock.wrap("read", job.read_session)),
        (strategies, "prefilter", clock.wrap("prefilter", strategies.prefilter)),
        (strategies, "dedupe_notifications", clock.wrap("prefilter", strategies.dedupe_notifications)),
        (strategies, "build_prompt", clock.wrap("prompt", strategies.build_prompt)),
        (executor, "measure_session", clock.wrap("session", executor.measure_session)),
        # run.py imports these when it builds the tables, so patching their module reaches it
        (tables, "frame", clock.wrap("tables", tables.frame)),
        (tables, "write_tables", clock.wrap("tables", tables.write_tables)),
        (merge.TableBuilder, "frame", clock.wrap("tables", merge.TableBuilder.frame)),
    ]
    reads: list[tuple] = []
    timed_read = patches[0][2]

    def recording_read(path, root, *args, **kwargs):
        reads.append((path, root, kwargs.get("file_time_ms")))
        return timed_read(path, root, *args, **kwargs)

    patches[0] = (job, "read_session", recording_read)
    from measure.bench.timing import warm_page_cache  # noqa: PLC0415

    warm_page_cache(files)  # a small root (fixtures/real) may not be in the page cache yet
    floor = min(floor_cpu(files) for _ in range(max(1, repeat)))
    best = None
    for _ in range(max(1, repeat)):
        clock.spent.clear()
        reads.clear()
        split = _one_split(root, params, patches, clock, reads)
        if best is None or split["total_cpu_s"] < best["total_cpu_s"]:
            best = split
    cpu, total = best["cpu_s"], best["total_cpu_s"]
    return {
        "floor_cpu_s": floor,
        "total_cpu_s": total,
        "cpu_s": cpu,
        "over_floor": {k: (v / floor if floor > 0 else None) for k, v in cpu.items()},
        "total_over_floor": total / floor if floor > 0 else None,
    }


def _one_split(root, params, patches, clock: _Clock, reads: list) -> dict:
    from measure.runner import job, run  # noqa: PLC0415
    from measure.runner.job import RunParams  # noqa: PLC0415

    clear_caches()
    with tempfile.TemporaryDirectory(prefix="measure-stages-") as out, _patched(patches):
        t0 = time.process_time()
        run.run_measurement(root, out, params or RunParams(), jobs=1, cache_dir=None)
        total = time.process_time() - t0
    # The collectors run inside the read, line by line (timing them there would cost more than
    # they do): read the same sessions again without them; the difference is theirs.
    clear_caches()
    t0 = time.process_time()
    for path, r, file_time_ms in reads:
        job.read_session(path, r, file_time_ms=file_time_ms)
    bare = time.process_time() - t0
    s = clock.spent
    cpu = {
        "read": min(bare, s.get("read", 0.0)),
        "collectors": max(0.0, s.get("read", 0.0) - bare),
        "prefilter": s.get("prefilter", 0.0),
        "prompt": s.get("prompt", 0.0),
    }
    cpu["metrics"] = max(0.0, s.get("session", 0.0) - s.get("read", 0.0) - cpu["prefilter"] - cpu["prompt"])
    cpu["tables"] = s.get("tables", 0.0)
    cpu["other"] = max(0.0, total - s.get("session", 0.0) - cpu["tables"])
    return {"total_cpu_s": total, "cpu_s": cpu}


def render_split(split: dict) -> str:
    """One line per stage: CPU seconds, share of the run and multiple of the floor."""
    total = split["total_cpu_s"] or 1e-9
    lines = [f"{'stage':10} {'cpu s':>8} {'share':>7} {'x floor':>8}"]
    for k in STAGES:
        v = split["cpu_s"][k]
        r = split["over_floor"][k]
        lines.append(f"{k:10} {v:8.3f} {v / total:7.1%} {r if r is not None else float('nan'):8.2f}  {STAGE_NOTES[k]}")
    lines.append(f"{'total':10} {split['total_cpu_s']:8.3f} {1:7.1%} {split['total_over_floor'] or float('nan'):8.2f}"
                 f"  (floor: {split['floor_cpu_s']:.3f} s CPU)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m measure.bench.stages", description=__doc__)
    p.add_argument("root", help="sessions root")
    p.add_argument("--repeat", type=int, default=3, help="runs (and floor parses) to take the fastest of (default 3)")
    args = p.parse_args(argv)
    print(render_split(stage_split(args.root, repeat=args.repeat)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
