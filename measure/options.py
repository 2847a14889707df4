"""The bounds of every command's numeric options: past these a value would fail mid-run."""

from __future__ import annotations

import click

from measure.akm.jscompat import MAX_EXACT

# Bounded where the command line is read, so a bad value is one line and exit code 2: past these
# a value would fail mid-run (an Int64 column, a timer, a worker pool, JS's Date range).
COUNT = click.IntRange(1, MAX_EXACT)
SECONDS = click.IntRange(1, 2**31)
JOBS = click.IntRange(1, 1024)
EPOCH_MS = click.IntRange(-8_640_000_000_000_000, 8_640_000_000_000_000)


class Finite(click.FloatRange):
    """A float range that also refuses NaN, which every comparison of a plain FloatRange lets through."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if number != number:
            self.fail(f"{value!r} is not a number", param, ctx)
        return number
