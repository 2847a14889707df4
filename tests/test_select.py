"""measure.runner.select: --session values by id, short id, path; errors name the closest ids."""

from __future__ import annotations

import pytest

from measure.akm.records import Listing
from measure.runner.select import UnknownSessions, closest_ids, select_sessions

ROOT = "/r"
IDS = ("0b7c1e2a-0000-4000-8000-000000000001", "0b7d9999-0000-4000-8000-000000000002", "e88b7591-31db-4e32-98dc-b35f94c662cd")


def _listings():
    return [Listing(i, f"{ROOT}/-home-me-app/{i}.jsonl", None, None, None, None, 0.0) for i in IDS]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("0b7c1e2a", [IDS[0]]), ("0b7", list(IDS[:2])), (IDS[2], [IDS[2]]), (f"-home-me-app/{IDS[1]}.jsonl", [IDS[1]]),
     (f"-home-me-app/{IDS[1]}", [IDS[1]])],
)
def test_select(value, expected):
    assert [s.session_id for s in select_sessions(_listings(), [value], ROOT)] == expected


def test_unknown_names_the_closest_and_keeps_listing_order():
    with pytest.raises(UnknownSessions) as info:
        select_sessions(_listings(), ["0b7c1e2a", "0b7c1e2b", "zzz"], ROOT)
    assert set(info.value.missing) == {"0b7c1e2b", "zzz"}
    assert info.value.missing["0b7c1e2b"][0] == IDS[0]
    assert "no session matches '0b7c1e2b'; closest: 0b7c1e2a-" in str(info.value)


def test_unknown_names_an_odd_id_on_one_line_escaped():
    assert str(UnknownSessions({"zz": ["s\nfake line \x1b[2J", "plain-id"]}, 2)) == \
        "no session matches 'zz'; closest: s\\nfake line \\x1b[2J, plain-id"


def test_unknown_on_an_empty_root():
    with pytest.raises(UnknownSessions, match="no sessions were listed"):
        select_sessions([], ["x"], ROOT)


def test_closest_ids_prefers_a_shared_prefix():
    assert closest_ids("e88b", IDS, n=1) == [IDS[2]]
    assert closest_ids("-home-me-app/0b7d9998.jsonl", IDS, n=1) == [IDS[1]]
