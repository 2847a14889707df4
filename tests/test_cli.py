"""The command line: a thin shell whose every command is documented."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from measure.cli import build_parser, main

README = Path(__file__).parent.parent / "README.md"
FOLD_SMALL = "-home-dev-fold-small/e88b7591-31db-4e32-98dc-b35f94c662cd.jsonl"


def test_inspect_json(parity_root, capsys):
    assert main(["inspect", str(parity_root / "projects" / FOLD_SMALL), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["strategies"]) == {"link", "fold", "fold_dedupe_scoped", "fold_stub_raw", "hybrid", "chunked"}
    assert report["raw_events"] == {"parent": 72, "folded": 96}
    assert "prompts" not in report["strategies"]["fold"]  # no transcript text unless asked


def test_inspect_text_and_prompt(parity_root, capsys):
    path = str(parity_root / "projects" / FOLD_SMALL)
    assert main(["inspect", path, "--strategy", "hybrid", "--show-prompt", "--template", str(Path(__file__).parent / "parity" / "template.md")]) == 0
    out = capsys.readouterr().out
    assert "hybrid" in out and "fold_stub_raw" not in out
    assert "--- hybrid prompt 1 ---\nPARITY TEMPLATE" in out and "25365" in out


def test_inspect_rejects_unknown_strategy(parity_root, capsys):
    assert main(["inspect", str(parity_root / "projects" / FOLD_SMALL), "--strategy", "nope"]) == 2
    assert "unknown strategy" in capsys.readouterr().err


def test_run_command(parity_root, tmp_path, capsys):
    code = main(["run", "--root", str(parity_root / "projects"), "--out", str(tmp_path / "o"), "--no-cache", "--jobs", "1", "--budgets", "1000,2000"])
    assert code == 0 and (tmp_path / "o" / "sessions.csv").exists()
    assert "measured 15 of 15 sessions" in capsys.readouterr().err


def test_run_missing_root(tmp_path, capsys):
    assert main(["run", "--root", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 2


@pytest.mark.parametrize("bad", ["--budgets=1,x", "--budgets=-5", "--max-total-chars=0", "--since=yesterday"])
def test_run_rejects_bad_values(bad, tmp_path):
    with pytest.raises(SystemExit):
        main(["run", "--out", str(tmp_path), bad])


def test_every_command_and_flag_is_documented():
    readme = README.read_text(encoding="utf-8")
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, p in sub.choices.items():
        assert f"measure {name}" in readme, f"`measure {name}` is not in the README"
        for action in p._actions:
            for opt in action.option_strings:
                if opt.startswith("--") and opt != "--help":
                    assert opt in readme, f"{name} {opt} is not in the README"


def test_run_filters_by_session_and_date(parity_root, tmp_path):
    import polars as pl

    out = tmp_path / "o"
    sid = "e88b7591-31db-4e32-98dc-b35f94c662cd"
    assert main(["run", "--root", str(parity_root / "projects"), "--out", str(out), "--no-cache", "--jobs", "1", "--session", sid]) == 0
    assert pl.read_parquet(out / "sessions.parquet")["session_id"].unique().to_list() == [sid]
    # every parity file's mtime is in 2026; a later --since keeps none
    assert main(["run", "--root", str(parity_root / "projects"), "--out", str(out), "--no-cache", "--since", "2030-01-01"]) == 0
    assert pl.read_parquet(out / "sessions.parquet").height == 0


def test_inspect_json_writes_a_lone_surrogate_as_js_does(tmp_path, monkeypatch):
    """#10 defect 13: truncation cuts an emoji in half; JSON.stringify writes the half as `\\ud83d`."""
    import io
    import sys

    session = tmp_path / "-home-dev-x" / "0f0f0f0f-0000-4000-8000-000000000001.jsonl"
    session.parent.mkdir()
    lines = [
        {"type": "user", "uuid": f"u{i}", "sessionId": session.stem, "timestamp": f"2026-01-01T00:00:0{i}.000Z",
         "message": {"role": "user", "content": "a" + "\U0001f600" * 3000 + " tail"}}
        for i in range(2)
    ]
    session.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    buffer = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(buffer, encoding="utf-8"))
    assert main(["inspect", str(session), "--strategy", "link", "--json", "--show-prompt"]) == 0
    sys.stdout.flush()
    out = buffer.getvalue().decode("utf-8")
    assert "\\ud83d" in out or "\\ude00" in out
    assert "\U0001f600" in out  # whole emoji stay as they are
    json.loads(out)
