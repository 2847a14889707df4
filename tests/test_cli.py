"""The command line: a thin shell whose every command is documented."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

from measure.cli import cli, main

README = Path(__file__).parent.parent / "README.md"
FOLD_SMALL = "-home-dev-fold-small/e88b7591-31db-4e32-98dc-b35f94c662cd.jsonl"


def test_inspect_json(parity_root, capsys):
    assert main(["inspect", str(parity_root / "projects" / FOLD_SMALL), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["strategies"]) == {"link", "fold", "fold_dedupe_scoped", "fold_stub_raw", "fold_dedupe_sync", "hybrid", "chunked",
                                         "parent_first", "hybrid_undelivered"}
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


def _command(name: str) -> click.Command:
    return cli.get_command(click.Context(cli), name)


def parse(argv: list[str]) -> dict:
    """The values a command line gives its command, parsed as `measure` parses them (nothing runs)."""
    return _command(argv[0]).make_context(argv[0], list(argv[1:])).params


def _options(command: str) -> set[str]:
    return {o for p in _command(command).params for o in p.opts if o.startswith("--")}


def test_every_command_and_flag_is_documented():
    readme = README.read_text(encoding="utf-8")
    for name in cli.list_commands(click.Context(cli)):
        assert f"measure {name}" in readme, f"`measure {name}` is not in the README"
        for opt in _options(name):
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


# ------------------------------------------------------------------------------------------------
# One grammar for run and report (issue #14)
# ------------------------------------------------------------------------------------------------

REPORT_ONLY = {"--extraction", "--timeout", "--golden"}
SID = "e88b7591-31db-4e32-98dc-b35f94c662cd"


def test_run_and_report_share_their_options():
    assert _options("report") - REPORT_ONLY == _options("run")
    assert {"--since", "--session-cap", "--quiet", "--cache-dir"} <= _options("report")


def test_run_and_report_have_the_same_default_root(monkeypatch, tmp_path):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    from measure.akm.read import resolve_root

    for argv in (["run", "--out", "o"], ["report"]):
        root = parse(argv)["root"]
        assert root is None and resolve_root(root) == tmp_path / "projects"


@pytest.mark.parametrize("command", ["run", "report"])
@pytest.mark.parametrize("bad", ["--jobs=0", "--budgets=1,,2", "--budgets=1,", "--budgets=,", "--session-cap=0", "--timeout=0"])
def test_bad_values_are_rejected_by_both(command, bad, capsys):
    if bad == "--timeout=0" and command == "run":
        bad = "--max-total-chars=0"
    with pytest.raises(SystemExit) as info:
        main([command, "--out", "o", bad])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"Usage: measure {command} [OPTIONS]\n")
    (error,) = [line for line in err.splitlines() if line.startswith("Error: ")]  # one line says what is wrong
    assert f"'{bad.split('=')[0]}'" in error
    if "budgets" in bad:
        assert "empty item" in error


@pytest.mark.parametrize("command", ["run", "report"])
def test_a_mistyped_option_prints_the_subcommands_usage(command, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, "--out", "o", "--jbos", "2"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"Usage: measure {command} [OPTIONS]\nTry 'measure {command} --help' for help.\n")
    assert err.splitlines()[-1] == "Error: No such option '--jbos'. Did you mean '--jobs'?"


def test_a_template_without_the_placeholders_is_an_error(tmp_path, capsys):
    bad = tmp_path / "t.md"
    bad.write_text("Summarize: {{TRANSCRIPT}}\n")
    for command in ("run", "report", "inspect"):
        argv = [command, "x.jsonl"] if command == "inspect" else [command, "--out", "o"]
        with pytest.raises(SystemExit):
            main([*argv, "--template", str(bad)])
        err = capsys.readouterr().err
        assert "lacks akm's placeholder(s) {{HARNESS}}" in err and "{{TRANSCRIPT}}" not in err.split("lacks")[1].split("(")[0]
    good = Path(__file__).parent / "parity" / "template.md"
    assert parse(["run", "--out", "o", "--template", str(good)])["template"] == str(good.resolve())


def _run(parity_root, tmp_path, *extra):
    return main(["run", "--root", str(parity_root / "projects"), "--out", str(tmp_path / "o"), "--no-cache", "--jobs", "1", *extra])


def test_session_matching_nothing_is_an_error_naming_the_closest_ids(parity_root, tmp_path, capsys):
    assert _run(parity_root, tmp_path, "--session", "e88b7599") == 2
    err = capsys.readouterr().err
    assert "no session matches 'e88b7599'; closest: e88b7591-3" in err
    assert not (tmp_path / "o" / "sessions.csv").exists()


@pytest.mark.parametrize(
    "value",
    [SID[:8], SID, FOLD_SMALL, FOLD_SMALL.removesuffix(".jsonl")],
    ids=["short id", "full id", "path", "path without .jsonl"],
)
def test_session_accepts_short_ids_and_paths(parity_root, tmp_path, value):
    import polars as pl

    assert _run(parity_root, tmp_path, f"--session={value}") == 0
    assert pl.read_parquet(tmp_path / "o" / "sessions.parquet")["session_id"].unique().to_list() == [SID]


def test_values_starting_with_a_dash(parity_root, tmp_path):
    import polars as pl

    # Claude Code's project folders all start with "-": `--session -home-…` works, as `--session=-home-…` does.
    assert parse(["run", "--out", "o", "--session", FOLD_SMALL])["sessions"] == (FOLD_SMALL,)
    assert parse(["run", "--out", "o", f"--session={FOLD_SMALL}"])["sessions"] == (FOLD_SMALL,)
    assert parse(["run", "--out", "o", "--session", FOLD_SMALL, "--jobs", "1"])["jobs"] == 1
    assert _run(parity_root, tmp_path, "--session", FOLD_SMALL) == 0
    assert pl.read_parquet(tmp_path / "o" / "sessions.parquet")["session_id"].unique().to_list() == [SID]
    with pytest.raises(SystemExit):  # `--jobs` is taken as the session's value, and the `1` after it is left over
        main(["run", "--out", "o", "--session", "--jobs", "1"])


def test_budgets_take_commas_and_spaces(parity_root, tmp_path):
    assert parse(["run", "--out", "o", "--budgets", "3000", "1000,2000", "--jobs", "1"])["budgets"] == (1000, 2000, 3000)
    assert parse(["run", "--out", "o", "--budgets=500", "--budgets", "40"])["budgets"] == (40, 500)
    assert parse(["report"])["budgets"] == ()


def test_report_missing_root_is_an_error(tmp_path, capsys):
    assert main(["report", "--root", str(tmp_path / "missing"), "--out", str(tmp_path / "r"), "--no-cache"]) == 2
    assert "sessions root not found" in capsys.readouterr().err


def test_report_unknown_session_is_an_error(parity_root, tmp_path, capsys):
    code = main(["report", "--root", str(parity_root / "projects"), "--out", str(tmp_path / "r"), "--no-cache", "--session", "zzzz"])
    assert code == 2
    assert "no session matches 'zzzz'; closest:" in capsys.readouterr().err


@pytest.mark.slow
def test_report_path_printed_is_where_the_report_is_even_with_spaces(parity_root, tmp_path, monkeypatch, capsys):
    import shlex

    here = tmp_path / "some where"
    here.mkdir()
    monkeypatch.chdir(here)
    code = main(["report", "--root", str(parity_root / "projects"), "--out", "my report", "--no-cache", "--jobs", "1",
                 f"--session={SID[:8]}", "--budgets", "40000,80000", "--quiet"])
    assert code == 0
    out = capsys.readouterr().out.strip().splitlines()[-1]
    assert out.startswith("Report written to 'my report' — open ")
    printed = shlex.split(out.split(" — open ", 1)[1])[0]
    assert (here / printed).is_file() and printed == "my report/00-overview.html"
    assert (here / "my report" / "tables" / "sessions.csv").is_file()


def test_session_accepts_the_short_id_of_a_redacted_report(parity_root, tmp_path):
    import polars as pl

    from measure.runner.redact import redact

    shown = redact(SID)[:16]  # "sha256:" and the first hex digits, as a --redact report shows the id
    assert _run(parity_root, tmp_path, "--redact", "--session", shown) == 0
    assert pl.read_parquet(tmp_path / "o" / "sessions.parquet")["session_id"].unique().to_list() == [redact(SID)]


@pytest.mark.slow
def test_report_of_one_redacted_session_by_its_short_id(parity_root, tmp_path):
    out = tmp_path / "r"
    code = main(["report", "--root", str(parity_root / "projects"), "--out", str(out), "--no-cache", "--jobs", "1",
                 "--redact", f"--session={SID[:8]}", "--budgets", "40000,80000", "--quiet"])
    assert code == 0
    assert (out / "tables" / "sessions.csv").read_text().count("sha256:") >= 1
    assert SID not in (out / "tables" / "sessions.csv").read_text()
    assert "(1 session measured" in (out / "00-overview.ipynb").read_text()  # the notebooks keep it too


@pytest.mark.slow
def test_measure_run_does_not_import_the_report_or_synth_modules():
    # `measure run` pays for what it runs: the synth and extract subcommands are imported only
    # when they run, the report's modules only inside its command (tens of ms of every run).
    code = (
        "import sys, click\n"
        "from measure.cli import cli\n"
        "command = lambda name: cli.get_command(click.Context(cli), name)\n"
        "assert command('run').make_context('run', ['--root', 'r', '--out', 'o']).params['root'] == 'r'\n"
        "loaded = [m for m in ('measure.synth', 'measure.report.build', 'measure.report.notebooks', 'measure.extract.command', 'polars') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "assert command('synth').callback.__module__ == 'measure.synth.cli'\n"
        "assert command('report').make_context('report', []).params['budgets'] == ()\n"
        "assert command('extract').callback.__module__ == 'measure.extract.command'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_allocator_setting_replaces_polars_own_default_but_not_the_users():
    # polars writes its default into os.environ when it loads: a `measure report` started by a
    # process that had loaded polars (the benchmark, a notebook) inherited it, and its kernels
    # kept freed memory (572 MiB instead of 450 at 20,000 sessions).
    import polars  # noqa: F401  (loaded: its default is in os.environ unless set before)

    from measure.cli import POLARS_MALLOC_CONF, POLARS_OWN_MALLOC_CONF, configure_allocator

    for given, expected in ((None, POLARS_MALLOC_CONF), (POLARS_OWN_MALLOC_CONF, POLARS_MALLOC_CONF), ("narenas:1", "narenas:1")):
        env = {} if given is None else {"_RJEM_MALLOC_CONF": given}
        configure_allocator(env)
        assert env["_RJEM_MALLOC_CONF"] == expected


@pytest.mark.slow
def test_the_program_exits_with_the_commands_code(parity_root, tmp_path):
    # `python -m measure` (the installed program's code) ends when the tables are complete, with
    # the command's exit code; a missing root is exit code 2 and one line.
    out = tmp_path / "out"
    args = ["run", "--root", str(parity_root / "projects"), "--out", str(out), "--no-cache", "--quiet", "--jobs", "2"]
    assert subprocess.run([sys.executable, "-m", "measure", *args]).returncode == 0
    assert (out / "run.json").is_file() and (out / "sessions.parquet").is_file()
    failed = subprocess.run([sys.executable, "-m", "measure", "run", "--root", str(tmp_path / "none"), "--out", str(tmp_path / "o2")],
                            capture_output=True, text=True)
    assert failed.returncode == 2 and len(failed.stderr.splitlines()) == 1 and "sessions root not found" in failed.stderr


def test_run_json_names_the_versions_of_the_libraries_that_wrote_it():
    import matplotlib
    import orjson
    import polars

    from measure import __version__
    from measure.runner.run import _versions

    expected = {"measure": __version__, "orjson": orjson.__version__, "polars": polars.__version__, "matplotlib": matplotlib.__version__}
    assert {k: v for k, v in _versions().items() if k != "python"} == expected
    assert _versions()["python"] == ".".join(map(str, sys.version_info[:3]))
