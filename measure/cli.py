"""The `measure` command: a thin shell over the library (parse, call, print)."""

from __future__ import annotations

import functools
import importlib
import os
import shlex
import sys
from datetime import timezone

import click

from measure import __version__
from measure.akm.jscompat import MAX_EXACT
from measure.akm.prefilter import DEFAULT_MAX_EVENT_TEXT_LENGTH, DEFAULT_MAX_TOTAL_CHARS
from measure.measurements.budget_sweep import DEFAULT_BUDGETS
from measure.measurements.priorities import DEFAULT as DEFAULT_PRIORITIES, canonical
from measure.options import COUNT, EPOCH_MS, JOBS, SECONDS


def _budgets(ctx, param, values: tuple[str, ...]) -> tuple[int, ...]:
    """`N,N,...` (or `N N`) -> the sorted budgets; an empty item (`1,,2`, `1,`) is an error, not skipped."""
    items = [item.strip() for text in values for item in text.split(",")]
    if not all(item.isdecimal() and 0 < int(item) <= MAX_EXACT for item in items):
        raise click.BadParameter(f"write integers 1..2^53 as N,N,... (an empty item is an error), got {' '.join(values)!r}")
    return tuple(sorted({int(item) for item in items}))


class _OneOrMore(click.Option):
    """An option that also takes the values after its first one, up to the next option (`--budgets 1 2`)."""

    def add_to_parser(self, parser, ctx) -> None:
        super().add_to_parser(parser, ctx)
        option = parser._long_opt[self.opts[0]]  # click's parser has no public hook for this
        take = option.process

        def process(value, state) -> None:
            take(value, state)
            while state.rargs and not state.rargs[0].startswith("-"):
                take(state.rargs.pop(0), state)

        option.process = process


def _date_ms(ctx, param, value):
    return value and value.replace(tzinfo=timezone.utc).timestamp() * 1000


def _parsed(parse):
    """A click callback: `parse(value)` (None stays None), its ValueError one usage error line (exit code 2)."""
    def callback(ctx, param, text: str | None):
        try:
            return None if text is None else parse(text)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None
    return callback


def _template(text: str) -> str:
    """A readable prompt template holding every placeholder akm substitutes; returned absolute."""
    from measure.akm.prompt import PLACEHOLDERS, load_template  # noqa: PLC0415

    path = os.path.abspath(os.path.expanduser(text))
    try:
        body = load_template(path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read template {text!r}: {exc}") from None
    missing = [name for name in PLACEHOLDERS if "{{" + name + "}}" not in body]
    if missing:
        which = "any of akm's placeholders" if len(missing) == len(PLACEHOLDERS) else "akm's placeholder(s)"
        raise ValueError(f"template {text!r} lacks {which} {' '.join('{{' + m + '}}' for m in missing)} "
                         "(buildExtractPrompt substitutes all eight)")
    return path


def _schedule(text: str) -> str:
    from measure.measurements.replay import parse_schedule  # noqa: PLC0415

    return parse_schedule(text).name


def _options(*options):
    """One decorator applying `options` (click.option decorators) in the order given."""
    return lambda f: functools.reduce(lambda decorated, option: option(decorated), reversed(options), f)


PIPELINE_OPTIONS = (
    click.option("--max-total-chars", type=COUNT, default=DEFAULT_MAX_TOTAL_CHARS, metavar="N",
                 help=f"pre-filter budget (akm's maxTotalChars; default {DEFAULT_MAX_TOTAL_CHARS})"),
    click.option("--max-event-chars", type=COUNT, default=DEFAULT_MAX_EVENT_TEXT_LENGTH, metavar="N",
                 help=f"per-event cap before truncation (default {DEFAULT_MAX_EVENT_TEXT_LENGTH})"),
    click.option("--template", callback=_parsed(_template), metavar="PATH",
                 help="prompt template with akm's placeholders (default: the package's own; point at akm's "
                      "extract-session.md for akm's exact lengths)"),
)


def _measure_options(budgets_default: str, replay_help: str):
    """The options `measure run` and `measure report` share, with the same meaning and checks."""
    return _options(
        click.option("--root", help="sessions root (default: $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects)"),
        *PIPELINE_OPTIONS,
        click.option("--budgets", cls=_OneOrMore, multiple=True, callback=_budgets, metavar="N,N,...",
                     help=f"budgets of the budget_sweep table, as N,N,... or N N ... ({budgets_default})"),
        click.option("--session", "sessions", multiple=True, metavar="ID",
                     help="only this session: id, short id as the reports show it (a prefix), or root-relative path; "
                          "repeatable"),
        click.option("--since", "since_ms", type=click.DateTime(["%Y-%m-%d", "%Y%m%d", "%Y-%m-%dT%H:%M:%S"]),
                     callback=_date_ms, metavar="DATE", help="only sessions whose file changed on or after DATE (UTC)"),
        click.option("--session-cap", type=COUNT, default=25, metavar="N",
                     help="sessions per akm run for the run_cost table (maxSessionsPerRun, default 25)"),
        click.option("--priorities", callback=_parsed(canonical), metavar="TEXT",
                     help="the order of priorities the choice table applies: constraints (NAME<=BOUND, NAME>=BOUND; BOUND "
                          "a number or cap) and criteria (NAME or NAME~TOL, TOL a number or N%), comma-separated (default: "
                          f"{DEFAULT_PRIORITIES}, #840's reasoning)"),
        click.option("--jobs", type=JOBS, metavar="N", help="worker processes (default: CPU count)"),
        click.option("--redact", is_flag=True, help="hash descriptions, session ids and project folder names"),
        click.option("--show-excerpts", is_flag=True,
                     help="keep transcript-derived text (subagent descriptions) in the tables and notebooks"),
        click.option("--pin-file-times", "file_time_ms", type=EPOCH_MS, metavar="MS",
                     help="use MS (epoch ms) as every file's mtime/ctime: for bundled fixtures, whose times git does not keep"),
        click.option("--walk-order", type=click.Choice(["name", "fs"]), default="name",
                     help="directory entry order: name (descending, the same on every machine; default) or fs (this "
                          "filesystem's readdir order, akm's exact order here)"),
        click.option("--executor", type=click.Choice(["local", "dask"]), default="local",
                     help="where sessions are measured: local processes (default) or a Dask cluster (needs measure[dask])"),
        click.option("--scheduler", metavar="tcp://HOST:PORT",
                     help="the Dask scheduler to use with --executor dask (default: a LocalCluster of --jobs workers)"),
        click.option("--cache-dir", help="incremental cache (default: $XDG_CACHE_HOME/measure or ~/.cache/measure)"),
        click.option("--no-cache", is_flag=True, help="measure everything again and write no cache"),
        click.option("--quiet", "-q", is_flag=True, help="no progress bar and no summary line"),
        click.option("--replay", is_flag=True, help=replay_help),
        click.option("--replay-at", default="turn_end", callback=_parsed(_schedule), metavar="WHEN",
                     help="replay moments: turn_end (each parent turn's end, and the final state; default), final, "
                          "or every:<minutes>"),
    )


def _where(path: str | os.PathLike) -> str:
    """A path as the user can use it from here: relative to the current directory when below it, shell-quoted."""
    absolute = os.path.abspath(os.fspath(path))
    relative = os.path.relpath(absolute)
    return shlex.quote(relative if not relative.startswith("..") else absolute)


def _root_name(name: str, redacted: bool) -> str:
    """The root's name as the summary line shows it: hashed under --redact, as run.json holds it."""
    from measure.runner.redact import redact  # noqa: PLC0415

    return redact(name) if redacted else name


def _failed(command: str, exc: Exception) -> int:
    print(f"measure {command}: {exc}", file=sys.stderr)
    return 2


def _check_scheduler(scheduler: str | None, executor: str) -> None:
    if scheduler and executor != "dask":
        raise click.UsageError("--scheduler needs --executor dask")


class _Commands(click.Group):
    """The subcommands; `synth` and `extract` are imported only when they run (or --help lists them):
    defining their options imports their modules, tens of ms a `measure run` need not pay."""

    LAZY = {"synth": "measure.synth.cli", "extract": "measure.extract.command"}

    def list_commands(self, ctx) -> list[str]:
        return sorted([*self.commands, *self.LAZY])

    def get_command(self, ctx, name: str):
        if name in self.LAZY:
            return importlib.import_module(self.LAZY[name]).command
        return super().get_command(ctx, name)


@click.group(cls=_Commands)
@click.version_option(__version__, prog_name="measure", message="%(prog)s %(version)s")
def cli() -> None:
    """How should subagent transcripts reach akm's extraction LLM? Measure every strategy on real sessions."""


@cli.command("run", help="measure every strategy over a sessions root and write the tables")
@click.option("--out", required=True, help="directory for the tables (CSV + Parquet) and run.json")
@_measure_options("default: none", "also write the replay table: akm's pipeline at earlier moments of each session")
def run_command(out, root, jobs, cache_dir, no_cache, executor, scheduler, quiet, replay, replay_at, **options) -> int:
    from measure.akm.read import resolve_root  # noqa: PLC0415
    from measure.runner import progress  # noqa: PLC0415
    from measure.runner.cache import default_cache_dir  # noqa: PLC0415
    from measure.runner.job import RunParams  # noqa: PLC0415
    from measure.runner.outputs import OutputError  # noqa: PLC0415
    from measure.runner.run import run_measurement  # noqa: PLC0415
    from measure.runner.select import UnknownSessions  # noqa: PLC0415

    _check_scheduler(scheduler, executor)
    root_path = resolve_root(root)
    params = RunParams.from_options(replay=replay_at if replay else None, **options)
    cache = None if no_cache else (cache_dir or default_cache_dir())
    bar = progress.for_terminal(quiet=quiet)
    try:
        with progress.shown(bar):
            summary = run_measurement(root_path, out, params, jobs=jobs, cache_dir=cache, executor=executor, scheduler=scheduler)
    except (FileNotFoundError, RuntimeError, UnknownSessions, OutputError) as exc:  # OutputError: --out refused before any work
        return _failed("run", exc)
    bar.finish(f"measured {summary.measured} of {summary.sessions} sessions under {_root_name(root_path.name, params.redact)}/; "
               f"{summary.errors} error row(s); tables in {_where(summary.out_dir)}")
    return 0


@cli.command("report", help="run the measurement once and render every notebook into a report")
@click.option("--out", help="report directory (default: reports/<last part of the root>)")
@_measure_options("default: " + ",".join(str(b) for b in DEFAULT_BUDGETS), "(a report always replays: accepted, changes nothing)")
@click.option("--extraction", metavar="DIR",
              help="a `measure extract --out` directory for 06-extraction (default: <report>/extraction when it holds "
                   "one, else the recorded store of a fixture root)")
@click.option("--timeout", type=SECONDS, metavar="SECONDS", help="seconds one cell may run")
@click.option("--golden", is_flag=True,
              help="regenerate the golden notebooks under tests/golden/ from the bundled fixtures instead of writing a report")
def report_command(out, root, budgets, sessions, since_ms, session_cap, max_event_chars, priorities, cache_dir, no_cache,
                   executor, scheduler, quiet, replay, replay_at, extraction, timeout, golden, template, **options) -> int:
    from measure import paths  # noqa: PLC0415
    from measure.akm.read import resolve_root  # noqa: PLC0415
    from measure.report import build  # noqa: PLC0415
    from measure.report.notebooks import EXECUTION_TIMEOUT, ReportError  # noqa: PLC0415
    from measure.runner import progress  # noqa: PLC0415
    from measure.runner.outputs import OutputError  # noqa: PLC0415
    from measure.runner.select import UnknownSessions  # noqa: PLC0415

    _check_scheduler(scheduler, executor)
    log = functools.partial(print, flush=True) if not quiet and sys.stdout.isatty() else (lambda message: None)
    bar = progress.for_terminal(quiet=quiet)
    try:
        if golden:
            written = build.golden(timeout=timeout or EXECUTION_TIMEOUT, log=log)
            print(f"golden notebooks written: {', '.join(_where(p) for p in written)}")
            return 0
        root_path = resolve_root(root).absolute()
        # Relative paths on the command line are taken from the current directory, not the repository's.
        out, extraction = (os.path.abspath(os.path.expanduser(p)) if p else None for p in (out, extraction))
        run_options = {"since_ms": since_ms or 0, "session_cap": session_cap, "max_event_chars": max_event_chars,
                       "priorities": priorities, "cache_dir": cache_dir, "executor": executor, "scheduler": scheduler}
        with progress.shown(bar):
            written = build.report(root_path, out, budgets=list(budgets or DEFAULT_BUDGETS), sessions=list(sessions),
                                   cache=not no_cache, replay_at=replay_at, extraction_dir=extraction, log=log,
                                   timeout=timeout or EXECUTION_TIMEOUT, template_path=template,
                                   run_options=run_options, **options)
    except ReportError as exc:
        print(f"measure report: {len(exc.failures)} notebook(s) failed:", file=sys.stderr)
        for failure in exc.failures:
            print(f"  {failure}", file=sys.stderr)
        return 1
    except (UnknownSessions, OutputError, RuntimeError) as exc:  # RuntimeError: measure run failed (e.g. no such root)
        return _failed("report", exc)
    bar.finish(f"measured {bar.done} of {bar.total} sessions under {_root_name(paths.report_name(root_path), options['redact'])}/")
    print(f"Report written to {_where(written)} — open {_where(os.path.join(written, '00-overview.html'))}")
    return 0


@cli.command("diff", help="per-strategy deltas between two runs RUN_A and RUN_B (measure run --out or report directories)")
@click.argument("run_a", metavar="RUN_A")
@click.argument("run_b", metavar="RUN_B")
@click.option("--metric", multiple=True, metavar="NAME", help="only this metric (repeatable; default: all)")
@click.option("--csv", is_flag=True, help="print CSV instead of a text table")
def diff_command(run_a: str, run_b: str, metric: tuple[str, ...], csv: bool) -> int:
    import polars as pl  # noqa: PLC0415

    from measure.report.views.diff import RunDiffError, diff_runs, formatted  # noqa: PLC0415

    try:
        table, changes = diff_runs(run_a, run_b, metrics=list(metric))
    except RunDiffError as exc:
        return _failed("diff", exc)
    if csv:
        sys.stdout.write(table.write_csv(float_precision=None))
        return 0
    print(f"A = {run_a}\nB = {run_b}")
    print("what differs: " + ("; ".join(changes) if changes else "no parameter (same options and template)"))
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, tbl_hide_dataframe_shape=True,
                   tbl_hide_column_data_types=True, tbl_formatting="ASCII_MARKDOWN", fmt_str_lengths=100,
                   tbl_cell_alignment="RIGHT"):
        print(formatted(table))
    return 0


@cli.command("inspect", help="show what each strategy would send for one session (a parent session .jsonl file)")
@click.argument("session", metavar="SESSION")
@click.option("--strategy", multiple=True, metavar="S", help="only this strategy (repeatable)")
@_options(*PIPELINE_OPTIONS)
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
@click.option("--show-prompt", is_flag=True, help="include the full prompt text (transcript content!)")
def inspect_command(session, strategy, max_total_chars, max_event_chars, template, as_json, show_prompt) -> int:
    from measure.inspection import inspect_session, render_json, render_text  # noqa: PLC0415

    try:
        report = inspect_session(session, strategies=list(strategy) or None, budget=max_total_chars,
                                 max_event_text_length=max_event_chars, template_path=template, show_prompt=show_prompt)
    except (OSError, ValueError) as exc:
        return _failed("inspect", exc)
    sys.stdout.write(render_json(report) if as_json else render_text(report))
    return 0


POLARS_MALLOC_CONF = "dirty_decay_ms:0,muzzy_decay_ms:0"
"""jemalloc options of polars (read when polars loads; the notebooks' kernels inherit them): memory
polars frees goes back to the system at once, instead of staying in the process for seconds and
adding up, table after table, in a report's peak (500 MB at 20,000 sessions without it)."""


POLARS_OWN_MALLOC_CONF = "dirty_decay_ms:500,muzzy_decay_ms:1000"
"""What polars writes into os.environ when it loads and finds no setting: a `measure` started by a
process that had loaded polars (a notebook, the benchmark) inherits it, and is not the user's choice."""


INTERRUPTED = "measure: interrupted; outputs appear whole or not at all, so the previous one is intact"


def configure_allocator(environ=os.environ) -> None:
    """Polars' allocator returns freed memory at once, unless the user chose otherwise."""
    if environ.get("_RJEM_MALLOC_CONF") in (None, POLARS_OWN_MALLOC_CONF):
        environ["_RJEM_MALLOC_CONF"] = POLARS_MALLOC_CONF


def main(argv: list[str] | None = None) -> int:
    """Run one command line and return its exit code; a bad option or value prints click's usage
    line and one error line, then raises SystemExit(2)."""
    configure_allocator()  # before anything loads polars
    try:
        return cli.main(argv, prog_name="measure", standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        raise SystemExit(exc.exit_code) from None
    except click.Abort:  # Ctrl-C (click has printed the blank line that ends the terminal's ^C)
        print(INTERRUPTED, file=sys.stderr)
        return 130


def entry() -> None:
    """The installed `measure` program."""
    sys.exit(main())


if __name__ == "__main__":
    entry()
