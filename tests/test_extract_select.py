"""Which sessions the experiment sends (measure.extract.select)."""

import polars as pl
import pytest

from measure.extract.select import rank_sessions, select_sessions


def _sessions():
    rows = []
    for path, files, kept, fold_raw, link_raw in [
        ("p/a.jsonl", 0, 0, 100, 100),
        ("p/b.jsonl", 2, 500, 900, 300),
        ("p/c.jsonl", 5, 500, 800, 300),
        ("p/d.jsonl", 1, 900, 400, 300),
        ("p/e.jsonl", 0, 0, 50, 50),
    ]:
        sid = path[2:-len(".jsonl")] + "1d2e3f"
        rows.append({"session_path": path, "session_id": sid, "strategy": "fold", "subagent_files": files, "subagent_kept_chars": kept, "raw_chars": fold_raw})
        rows.append({"session_path": path, "session_id": sid, "strategy": "link", "subagent_files": files, "subagent_kept_chars": 0, "raw_chars": link_raw})
    return pl.DataFrame(rows)


def test_most_delegated_first_then_controls_in_path_order():
    assert rank_sessions(_sessions()) == ["p/d.jsonl", "p/c.jsonl", "p/b.jsonl", "p/a.jsonl", "p/e.jsonl"]
    assert select_sessions(_sessions(), limit=2) == ["p/d.jsonl", "p/c.jsonl"]


def test_named_sessions_and_random():
    assert select_sessions(_sessions(), wanted=["a1d2e3f", "p/c.jsonl"]) == ["p/c.jsonl", "p/a.jsonl"]
    # as `measure run --session` takes them: a short id (an id prefix) and a path without .jsonl
    assert select_sessions(_sessions(), wanted=["b1d", "p/e"]) == ["p/b.jsonl", "p/e.jsonl"]
    r = select_sessions(_sessions(), "random:7", 3)
    assert r == select_sessions(_sessions(), "random:7", 3) and len(r) == 3 and r == sorted(r)
    with pytest.raises(ValueError):
        select_sessions(_sessions(), "biggest")
