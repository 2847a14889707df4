"""measure.report.style: the order, names and short ids every page and figure shares."""

from __future__ import annotations

from measure.report import style


def test_short_ids_are_the_shortest_unique_prefixes():
    ids = ["aaaaaaaa1", "aaaaaaaa2", "abcdefgh99", "abcdefgh", "b", "aaaaaaaa1"]
    assert style.short_ids(ids) == {
        "aaaaaaaa1": "aaaaaaaa1", "aaaaaaaa2": "aaaaaaaa2", "abcdefgh": "abcdefgh", "abcdefgh99": "abcdefgh9", "b": "b",
    }
    many = [f"{i:032x}" for i in range(20_000)]  # linear: 20,000 ids are instant
    assert len(set(style.short_ids(many).values())) == 20_000


def test_strategies_are_in_display_order_and_unknown_ones_last():
    assert style.ordered_strategies(["zeta", "hybrid", "link", "alpha", "link"]) == ["link", "hybrid", "alpha", "zeta"]
    assert list(style.STRATEGY_LABELS) == list(style.STRATEGY_ORDER) and set(style.COLORS) == set(style.STRATEGY_ORDER)


def test_unknown_tasks_come_first_then_versions_as_numbers():
    groups = [("bash", "2.1.10"), ("agent", "2.1.9"), ("bash", style.UNKNOWN), ("agent", "2.1.10")]
    assert sorted(groups, key=lambda g: style.task_group_key(*g)) == [
        ("agent", "2.1.9"), ("agent", "2.1.10"), ("bash", style.UNKNOWN), ("bash", "2.1.10"),
    ]
