"""Today's failures that issue #26 lists, each with the reproduction test that pins it down.

The bounded profile tolerates a violation whose signature matches one of these (its test is
the one that fails until the fix lands) and fails on any other; the campaign reports every
violation and marks these as known. Delete an entry with the fix that makes its test pass.
`MEASURE_KNOWN_BUGS=fail` in the environment tolerates none (and runs the reproduction tests
as plain tests instead of expected failures), to see everything that is still broken.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import pytest

SHOW_ALL = os.environ.get("MEASURE_KNOWN_BUGS") == "fail"


@dataclass(frozen=True)
class Known:
    pattern: str  # a regex searched in a violation's signature
    test: str  # the reproduction test (path::name)


KNOWN: tuple[Known, ...] = ()
"""Empty: every failure issue #26 listed is fixed and its reproduction test in tests/hostile passes."""


def explain(signature: str) -> Known | None:
    """The entry that accounts for `signature`, or None."""
    for k in KNOWN:
        if re.search(k.pattern, signature):
            return k
    return None


def tolerated(signature: str) -> bool:
    return not SHOW_ALL and explain(signature) is not None


issue26 = pytest.mark.xfail(not SHOW_ALL, reason="issue #26: fails until its fix lands (then delete this mark)",
                            strict=True, raises=AssertionError)
"""The mark of a reproduction test: expected to fail with an AssertionError until its fix lands,
then XPASS(strict) fails the suite so that the mark (and the KNOWN entry) go with the fix."""
