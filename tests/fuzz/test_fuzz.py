"""The bounded fuzzing profile `make test` runs: every property, a fixed seed, a few hundred inputs.

Each property draws its cases deterministically (`derandomize=True`: the same cases on every
run, nothing stored in the repository, `database=None`) and fails on any violation that
`known.KNOWN` does not account for (each of those has a reproduction test that fails until its
fix lands). No shrinking here, to stay within CI's time: a failure prints its case; run the
campaign (`make fuzz`) for a minimal one. The long campaign is `python -m tests.fuzz`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings

from . import known
from .properties import PROPERTIES
from .violations import Violation

pytestmark = pytest.mark.slow  # whole commands, about 40 s: make test runs them, make test-fast does not

BOUNDED_EXAMPLES = {"lines": 20, "sidecars": 15, "trees": 2, "options": 8, "inspect": 4, "redact": 1, "changes": 1, "signals": 1}
"""Examples per property (a lines example holds up to 12 transcripts, a sidecar one up to 15):
about 280 inputs in all (130 transcripts, 120 sidecars, 3 trees, 8 option sets, ...), in about
30 s on a shared 2-core machine."""


def _unexplained(violations: list[Violation]) -> list[Violation]:
    return [v for v in violations if not known.tolerated(v.signature)]


def _property_test(prop):
    def explicit(test):
        for case in prop.examples:
            test = example(case=case)(test)
        return test

    @explicit
    @settings(max_examples=BOUNDED_EXAMPLES[prop.name], derandomize=True, database=None, deadline=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(case=prop.cases("bounded"))
    def test(case, tmp_path_factory):
        work = tmp_path_factory.mktemp(prop.name)
        found = _unexplained(prop.check(case, Path(work)))
        assert not found, "\n\n".join(str(v) for v in found)

    test.__name__ = f"test_{prop.name}"
    test.__doc__ = f"Property `{prop.name}` on {BOUNDED_EXAMPLES[prop.name]} deterministic cases."
    return test


for _prop in PROPERTIES:
    globals()[f"test_{_prop.name}"] = _property_test(_prop)


def test_every_property_has_a_bounded_budget():
    assert sorted(BOUNDED_EXAMPLES) == sorted(p.name for p in PROPERTIES)


@pytest.mark.parametrize("entry", known.KNOWN, ids=lambda k: k.test.rsplit("::", 1)[-1])
def test_every_known_failure_names_a_reproduction_test_that_exists(entry):
    path, _, name = entry.test.partition("::")
    source = (Path(__file__).resolve().parent.parent.parent / path).read_text(encoding="utf-8")
    assert f"def {name.split('[')[0]}(" in source, entry.test
