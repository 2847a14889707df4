"""The actor's tool choice: one weighted draw per call, the same tool the running-subtraction rule picks."""

from __future__ import annotations

import random

import pytest

from measure.synth.actor import EXPLORE_TOOLS, IMPLEMENT_TOOLS, PARENT_TOOLS, REVIEW_TOOLS, _weighted


def _subtracting(rng: random.Random, table: tuple) -> str:
    """The rule the generator's bytes were first made with: subtract each weight from random() * total."""
    x = rng.random() * sum(w for _, w in table)
    for name, w in table:
        x -= w
        if x < 0:
            return name
    return table[-1][0]


@pytest.mark.parametrize("table", [PARENT_TOOLS, EXPLORE_TOOLS, REVIEW_TOOLS, IMPLEMENT_TOOLS])
def test_weighted_draw_is_the_subtracting_rule(table):
    a, b = random.Random(7), random.Random(7)
    picks = [_weighted(a, table) for _ in range(20_000)]
    assert picks == [_subtracting(b, table) for _ in range(20_000)]
    assert a.random() == b.random()  # and it used the stream the same way
    assert set(picks) == {name for name, _ in table}
