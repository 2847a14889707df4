"""The one rounding rule of every number the suite prints with fewer digits than it has."""

from __future__ import annotations

import math

ROUND_MODE = "half_away_from_zero"
"""Half away from zero on the value as computed (as JS's Math.round does for positives, and as
#840's published percentages were printed). Python code calls `rounded`/`percent`; polars
expressions call `.round(digits, mode=ROUND_MODE)`; Python's own `round` (half to even) is never
used for a printed number, so no two tables can disagree in the last digit."""


def rounded(value: float, digits: int = 1) -> float:
    """`value` rounded to `digits` decimals by ROUND_MODE."""
    scale = 10**digits
    return math.copysign(math.floor(abs(value) * scale + 0.5) / scale, value)


def percent(part: float, whole: float, digits: int = 1) -> float:
    """100 * part / max(1, whole), rounded by ROUND_MODE (a share of nothing is 0, not an error)."""
    return rounded(100 * part / max(1, whole), digits)
