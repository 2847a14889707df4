"""measure.runner.merge: rows merged as sessions arrive equal one sort of them all, spilled or not."""

from __future__ import annotations

import random
import sys

import pytest

from measure.runner.job import columns
from measure.runner.merge import Merged, TableBuilder
from measure.runner.tables import frame
from measure.schema import TABLES


def _sessions(n: int, seed: int) -> list[list[dict]]:
    """Rows of the `llm_calls`-shaped table for n sessions, with many ties in the sort key."""
    rnd = random.Random(seed)
    table = TABLES["budget_sweep"]
    out = []
    for s in range(n):
        rows = []
        shared = {"session_id": f"id{rnd.randint(0, 3)}", "session_path": f"p/{rnd.randint(0, 3)}.jsonl"}  # ties across sessions
        for k in range(rnd.randint(0, 5)):
            row = {}
            for name, dtype, _ in table.columns:
                kind = str(dtype)
                if name in shared:
                    row[name] = shared[name]  # a session's rows share its id and path
                elif "Int" in kind:
                    row[name] = rnd.choice([None, rnd.randint(0, 3)])
                elif "Float" in kind:
                    row[name] = rnd.choice([None, rnd.random()])
                elif "Bool" in kind:
                    row[name] = rnd.choice([None, True, False])
                else:
                    row[name] = rnd.choice([None, "a", "b", f"s{s}-{k}"])
            rows.append(row)
        out.append(rows)
    return out


@pytest.mark.parametrize("spill", [False, True])
def test_arrival_order_and_spilling_do_not_change_the_table(tmp_path, spill, monkeypatch):
    sessions = _sessions(300, seed=7)
    expected = frame(TABLES["budget_sweep"], [dict(r) for rows in sessions for r in rows])
    monkeypatch.setattr(Merged, "HOLD_ROWS", 25 if spill else 10**9)
    merged = Merged(tmp_path / "spill" if spill else None)
    arrival = list(range(len(sessions)))
    random.Random(1).shuffle(arrival)  # sessions finish in any order; the position says where they go
    for i in arrival:
        merged.add(i, {"budget_sweep": columns([dict(r) for r in sessions[i]])}, [])
    assert bool(merged.builders["budget_sweep"].chunks) == spill
    got = merged.frame("budget_sweep")
    assert got.equals(expected, null_equal=True)
    assert list((tmp_path / "spill").iterdir()) == [] if spill else not (tmp_path / "spill").exists()


def test_an_empty_table_has_its_columns():
    got = Merged(None).frame("eviction")
    assert got.height == 0 and got.columns == TABLES["eviction"].names


def test_errors_come_back_by_position():
    m = Merged(None)
    m.add(3, {"sessions": {}}, [{"kind": "late"}])
    m.add(1, {}, [{"kind": "early"}])
    assert "sessions" not in m.builders  # no rows, no builder
    assert [m.errors[p][0]["kind"] for p in sorted(m.errors)] == ["early", "late"]


@pytest.mark.slow
def test_rows_wait_without_polars(tmp_path):
    # A run that never spills must not load polars while its workers measure (the parent's
    # memory is part of the run's peak). Checked in a fresh interpreter.
    import subprocess

    code = (
        "import sys\n"
        "from measure.runner.merge import Merged\n"
        "m = Merged(None)\n"
        "m.add(0, {'sessions': {'session_id': ['a'], 'session_path': ['a']}}, [])\n"
        "assert 'polars' not in sys.modules, 'polars loaded'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_builder_without_rows_spills_nothing(tmp_path):
    b = TableBuilder("sessions", tmp_path)
    b.spill()
    assert b.chunks == [] and list(tmp_path.iterdir()) == []
