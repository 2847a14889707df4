"""Growth: one session at N, 2N, 4N events, its CPU time and Python call counts per doubling."""

from __future__ import annotations

import cProfile
import gc
import os
import pstats
import sys
import time
from pathlib import Path

from tests.bench.corpus import folded_events, pick_linear_source, scale_session, session_bytes


def clear_caches() -> None:
    """Empty every functools cache of measure's modules and the date caches, as a fresh worker has them."""
    # Measuring one session again would otherwise find its dates rendered, which no worker does.
    for name, mod in list(sys.modules.items()):
        if mod is not None and (name == "measure" or name.startswith("measure.")):
            for v in list(vars(mod).values()):
                if hasattr(v, "cache_info") and callable(getattr(v, "cache_clear", None)):
                    v.cache_clear()
    from measure.akm import jscompat

    jscompat.clear_caches()


def linearity(root: str, work: Path, events: int, repeat: int = 3, steps: int = 3, source: str | None = None,
              replay: str | None = None) -> dict:
    """Measure sessions of exactly N, 2N, 4N, ... events (`steps` sizes), each made of copies of one.

    Each doubling should at most double the CPU time and the Python calls; several steps catch
    a cliff that one doubling crosses. With `replay` (a --replay-at schedule), the moments must
    not make the cost grow as events x moments. CPU time, not wall time, in rounds
    interleaving the sizes, so other processes and a drift of the machine's speed hit every
    size alike; call counts (cProfile) do not depend on the machine at all.
    """
    from measure.akm.prompt import load_template
    from measure.runner.job import RunParams, measure_session

    params = RunParams.from_options(replay=replay)
    src = source or pick_linear_source(root)
    base = folded_events(src, root)
    if base == 0:
        raise SystemExit(f"bench: {src} has no events to scale")
    copies = max(1, round(events / base))
    lin_root = work / ("linear-replay" if replay else "linear")
    paths = [scale_session(src, lin_root / "-bench-linear", copies << k, f"linear-{1 << k}n") for k in range(max(2, steps))]
    template, times, calls = load_template(None), [[] for _ in paths], []
    for _ in range(max(1, repeat)):
        for i, parent in enumerate(paths):
            clear_caches()
            gc.collect()
            t0 = time.process_time()
            measure_session(os.fspath(lin_root), parent, params, template)
            times[i].append(time.process_time() - t0)
    for parent in paths:
        clear_caches()
        prof = cProfile.Profile()
        prof.runcall(measure_session, os.fspath(lin_root), parent, params, template)
        calls.append(sum(v[1] for v in pstats.Stats(prof).stats.values()))
    sizes = [{"scale": 1 << k, "events": folded_events(p, os.fspath(lin_root)), "bytes": session_bytes(p), "time_s": min(t),
              "spread": max(t) / min(t) - 1, "calls": c} for k, (p, t, c) in enumerate(zip(paths, times, calls))]
    ratios = [b["time_s"] / a["time_s"] for a, b in zip(sizes, sizes[1:])]
    call_ratios = [b["calls"] / a["calls"] for a, b in zip(sizes, sizes[1:])]
    return {"replay": replay, "source": os.path.relpath(src, root), "copies": copies, "repeat": max(1, repeat), "sizes": sizes,
            "exact": all(z["events"] == z["scale"] * copies * base for z in sizes), "ratios": ratios, "ratio": max(ratios),
            "spread": max(z["spread"] for z in sizes), "call_ratios": call_ratios, "call_ratio": max(call_ratios)}
