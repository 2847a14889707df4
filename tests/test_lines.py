"""measure.measurements.lines: each line reaches only the collectors that read its type."""

from __future__ import annotations

from measure.measurements import lines
from measure.measurements.lines import SessionLines, collector


def test_lines_are_routed_by_type(monkeypatch):
    monkeypatch.setattr(lines, "COLLECTORS", dict(lines.COLLECTORS))

    @collector("_untyped")  # a collector without TYPES sees every line
    class Untyped:
        def __init__(self, label):
            self.seen = []

        def __call__(self, record, line):
            self.seen.append(line)

        def result(self):
            return self.seen

    @collector("_only_user")
    class OnlyUser(Untyped):
        TYPES = frozenset({"user"})

    found = SessionLines(("_only_user", "_untyped"))
    observe = found.observe("f")
    for n, record in enumerate(
        [{"type": "user"}, {"type": "progress"}, {"type": "assistant"}, {}, {"type": ["x"]}, {"type": 5}, {"type": "user"}], 1
    ):
        observe(record, n)
    assert found.get("_only_user") == {"f": [1, 7]}
    assert found.get("_untyped") == {"f": [1, 2, 3, 4, 5, 6, 7]}

