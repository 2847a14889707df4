"""The `robustness` table: whether a difference between strategies is general or rests on one session.

For each pair of strategies on the Pareto front, and each pair of the chosen strategy with a rival
at the deciding step (`priorities.Walk.rivals`), per criterion: sessions where A is better, tied or
worse, the run's total difference A - B, a bootstrap interval of that total over sessions, and the
share the single largest session carries. The bootstrap is seeded and resamples sessions in
session_path order, so its interval is the same for the same tables whatever measured them.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from measure.measurements.priorities import BETTER, Walk
from measure.measurements.verdict import Summary, decide
from measure.numbers import rounded

BOOTSTRAP_SEED = 840
"""Seed of the bootstrap's generator (numpy's default_rng)."""

RESAMPLES = 2000
"""Bootstrap resamples of the sessions; the interval is their 2.5th and 97.5th percentiles."""

CHUNK = 50
"""Resamples drawn at a time: CHUNK x sessions counts in memory (8 MB at 20,000 sessions)."""


def pairs(summary: Summary, chosen: Walk | None) -> dict[tuple[str, str], bool]:
    """(A, B) -> whether A is the chosen strategy: the front's pairs (registry order) and the chosen one's."""
    front = [n for g in decide(summary.totals)[1] for n in g]
    out = dict.fromkeys(combinations(front, 2), False)
    winner = chosen.winner if chosen else None
    if winner is not None:
        for other in dict.fromkeys([*front, *chosen.rivals]):
            if other != winner:
                out.pop((other, winner), None)
                out[winner, other] = True
    return out


def bootstrap_totals(d: np.ndarray) -> np.ndarray:
    """RESAMPLES x columns: the column sums of `d` (sessions x columns) over resampled sessions.

    One resample-count matrix serves every column; `d` holds whole numbers, so the sums are exact
    in float64 and independent of summation order.
    """
    n = d.shape[0]
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    out = np.empty((RESAMPLES, d.shape[1]))
    for start in range(0, RESAMPLES, CHUNK):
        k = min(CHUNK, RESAMPLES - start)
        picks = rng.integers(0, n, size=(k, n)) + (np.arange(k) * n)[:, None]
        counts = np.bincount(picks.ravel(), minlength=k * n).reshape(k, n).astype(np.float64)  # BLAS: int @ float is not
        out[start : start + k] = counts @ d
    return out


def robustness_rows(summary: Summary | None, chosen: Walk | None) -> list[dict]:
    """One row per pair x per-session criterion (see schema.ROBUSTNESS)."""
    if summary is None:
        return []
    sessions = summary.sessions
    keys = [(a, b, c, is_chosen) for (a, b), is_chosen in pairs(summary, chosen).items() for c in BETTER if c in summary.per]
    if not keys:
        return []
    def values(c: str, n: str) -> np.ndarray:
        return np.array([summary.per[c][n].get(sp, 0) for sp in sessions], dtype=np.float64)

    d = np.stack([values(c, a) - values(c, b) for a, b, c, _ in keys], axis=1)
    low, high = np.zeros(len(keys)), np.zeros(len(keys))
    varies = np.flatnonzero(d.any(axis=0))  # a column of zeros has the interval [0, 0]
    if varies.size:
        low[varies], high[varies] = np.percentile(bootstrap_totals(d[:, varies]), [2.5, 97.5], axis=0)
    rows = []
    for k, (a, b, c, is_chosen) in enumerate(keys):
        col = d[:, k]
        sign = 1 if BETTER[c] == "higher" else -1  # a difference times sign > 0: A is better
        a_better, b_better = int((col * sign > 0).sum()), int((col * sign < 0).sum())
        total = float(col.sum())
        top = int(np.argmax(col * np.sign(total))) if total else None
        share = float(col[top] / total) if top is not None else None
        favours = np.sign(total) * sign  # 1: A, -1: B
        rows.append({
            "strategy_a": a, "strategy_b": b, "criterion": c, "better": BETTER[c], "chosen_pair": is_chosen,
            "sessions": len(sessions), "a_better": a_better, "ties": len(sessions) - a_better - b_better, "b_better": b_better,
            "total_difference": total, "ci_low": rounded(float(low[k]), 1), "ci_high": rounded(float(high[k]), 1),
            "largest_session_path": sessions[top] if top is not None else None,
            "largest_share": None if share is None else rounded(share, 4),
            # Removing a session that changes the total's sign carries more than all of it: share >= 0.5 covers both.
            "rests_on_one_session": bool(share is not None and share >= 0.5),
            "majority_disagrees": bool((favours > 0 and b_better > a_better) or (favours < 0 and a_better > b_better)),
        })
    return rows
