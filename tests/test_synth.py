"""measure.synth as a command: `measure synth` generates a root and prints statistics tables."""

from __future__ import annotations

from measure import synth


def test_cli_generates_and_prints_stats(tmp_path, capsys):
    out = tmp_path / "cli"
    assert synth.main(["--out", str(out), "--seed", "2", "--sessions", "2"]) == 0
    assert list(out.glob("*/*.jsonl"))
    assert synth.main(["--stats", str(out)]) == 0
    table = capsys.readouterr().out
    assert table.startswith("| |") and "record_type share: assistant" in table
