"""measure.report.shaping: the tables a page and a figure both show, from the run's tables."""

from __future__ import annotations

import polars as pl

from measure.report import shaping
from measure.runner.tables import frame
from measure.schema import TABLES


def test_zero_eviction_budget_is_the_start_of_the_evict_nothing_suffix():
    import random

    r = random.Random(17)
    for _ in range(200):
        rows, want = [], {}
        for sid in ("s1", "s2"):
            for strat in ("fold", "hybrid"):
                budgets = sorted(r.sample([10, 20, 30, 40], r.randint(1, 4)))
                evicted = [r.choice([None, 0, -5, 3, 0]) for _ in budgets]
                rows += [{"session_id": sid, "strategy": strat, "budget": b, "budget_evicted_chars": e} for b, e in zip(budgets, evicted)]
                answer = None
                for b, e in reversed(list(zip(budgets, evicted))):
                    if e is None or e > 0:
                        break
                    answer = b
                want[(sid, strat)] = answer
        r.shuffle(rows)
        schema = {"session_id": pl.String, "strategy": pl.String, "budget": pl.Int64, "budget_evicted_chars": pl.Int64}
        got = {(a, b): z for a, b, z in shaping.zero_budgets(pl.DataFrame(rows, schema=schema)).iter_rows()}
        assert got == want


def test_the_pooled_sweep_rounds_half_away_from_zero():
    """1 of 400 parent chars is 0.25%: printed 0.3 by measure.numbers' rule (half to even would print 0.2)."""
    row = dict(session_id="s", session_path="p/s.jsonl", strategy="fold", budget=80_000, alone_parent_kept_chars=400,
               parent_kept_chars=399, evicted_chars=1, stub_saved_chars=0, budget_evicted_chars=1)
    curve = shaping.sweep_curve(frame(TABLES["budget_sweep"], [row]))
    assert curve["evicted_pct"].to_list() == [0.3]
