"""The `measure` command: a thin shell over the library (parse, call, print)."""

from __future__ import annotations

import argparse
import difflib
import os
import shlex
import sys
from datetime import datetime, timezone

from measure import __version__
from measure.akm.prefilter import DEFAULT_MAX_EVENT_TEXT_LENGTH, DEFAULT_MAX_TOTAL_CHARS
from measure.measurements.budget_sweep import DEFAULT_BUDGETS


def _budgets(text: str) -> tuple[int, ...]:
    """`N,N,...` -> positive ints; an empty item (`1,,2`, `1,`) is an error, not skipped."""
    items = text.split(",")
    if any(not item.strip() for item in items):
        raise argparse.ArgumentTypeError(f"empty item in {text!r}: write N,N,... (positive integers)")
    try:
        values = tuple(int(item.strip()) for item in items)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"budgets must be positive integers, got {text!r}")
    return values


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return v


def _date_ms(text: str) -> float:
    for fmt in ("%Y-%m-%d", "%Y%m%d", "%Y-%m-%dT%H:%M:%S"):
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=timezone.utc).timestamp() * 1000
        except ValueError:
            continue
    raise argparse.ArgumentTypeError(f"expected YYYY-MM-DD or YYYYMMDD, got {text!r}")


def _template(text: str) -> str:
    """A readable prompt template holding every placeholder akm substitutes; returned absolute."""
    from measure.akm.prompt import PLACEHOLDERS  # noqa: PLC0415

    path = os.path.abspath(os.path.expanduser(text))
    try:
        with open(path, encoding="utf-8") as f:
            body = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise argparse.ArgumentTypeError(f"cannot read template {text!r}: {exc}") from None
    missing = [name for name in PLACEHOLDERS if "{{" + name + "}}" not in body]
    if missing:
        which = "any of akm's placeholders" if len(missing) == len(PLACEHOLDERS) else "akm's placeholder(s)"
        raise argparse.ArgumentTypeError(
            f"template {text!r} lacks {which} {' '.join('{{' + m + '}}' for m in missing)} "
            "(buildExtractPrompt substitutes all eight)"
        )
    return path


def _flat_budgets(groups) -> tuple[int, ...]:
    return tuple(sorted({b for group in groups or () for b in group}))


def _add_pipeline_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-total-chars", type=_positive, default=DEFAULT_MAX_TOTAL_CHARS, metavar="N", help=f"pre-filter budget (akm's maxTotalChars; default {DEFAULT_MAX_TOTAL_CHARS})")
    p.add_argument("--max-event-chars", type=_positive, default=DEFAULT_MAX_EVENT_TEXT_LENGTH, metavar="N", help=f"per-event cap before truncation (default {DEFAULT_MAX_EVENT_TEXT_LENGTH})")
    p.add_argument("--template", type=_template, metavar="PATH", help="prompt template with akm's placeholders (default: the package's own; point at akm's extract-session.md for akm's exact lengths)")


def _schedule(text: str) -> str:
    from measure.measurements.replay import parse_schedule  # noqa: PLC0415

    try:
        return parse_schedule(text).name
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_replay_options(p: argparse.ArgumentParser, *, always: bool = False) -> None:
    """--replay / --replay-at, shared by `run` and `report` (a report always replays)."""
    p.add_argument("--replay", action="store_true", help="(a report always replays: accepted, changes nothing)" if always else "also write the replay table: akm's pipeline at earlier moments of each session")
    p.add_argument("--replay-at", type=_schedule, default="turn_end", metavar="WHEN",
                   help="replay moments: turn_end (each parent turn's end, and the final state; default), final, or every:<minutes>")



def _add_measure_options(p: argparse.ArgumentParser, *, budgets_default: str, always_replay: bool = False) -> None:
    """The options `measure run` and `measure report` share, with the same meaning and checks."""
    p.add_argument("--root", help="sessions root (default: $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects)")
    _add_pipeline_options(p)
    p.add_argument("--budgets", type=_budgets, nargs="+", metavar="N,N,...", help=f"budgets of the budget_sweep table, as N,N,... or N N ... ({budgets_default})")
    p.add_argument("--session", action="append", metavar="ID", help="only this session: id, short id as the reports show it (a prefix), or root-relative path; repeatable. Use --session=ID for values starting with '-'")
    p.add_argument("--since", type=_date_ms, metavar="DATE", help="only sessions whose file changed on or after DATE (UTC)")
    p.add_argument("--session-cap", type=_positive, default=25, metavar="N", help="sessions per akm run for the run_cost table (maxSessionsPerRun, default 25)")
    p.add_argument("--jobs", type=_positive, metavar="N", help="worker processes (default: CPU count)")
    p.add_argument("--redact", action="store_true", help="hash descriptions, session ids and project folder names")
    p.add_argument("--pin-file-times", type=int, metavar="MS", help="use MS (epoch ms) as every file's mtime/ctime: for bundled fixtures, whose times git does not keep")
    p.add_argument("--walk-order", choices=("name", "fs"), default="name", help="directory entry order: name (descending, the same on every machine; default) or fs (this filesystem's readdir order, akm's exact order here)")
    p.add_argument("--executor", choices=("local", "dask"), default="local",
                   help="where sessions are measured: local processes (default) or a Dask cluster (needs measure[dask])")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="the Dask scheduler to use with --executor dask (default: a LocalCluster of --jobs workers)")
    p.add_argument("--cache-dir", help="incremental cache (default: $XDG_CACHE_HOME/measure or ~/.cache/measure)")
    p.add_argument("--no-cache", action="store_true", help="measure everything again and write no cache")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar and no summary line")
    add_replay_options(p, always=always_replay)


def _run_params(args: argparse.Namespace, budgets: tuple[int, ...]):
    from measure.runner.job import RunParams  # noqa: PLC0415

    return RunParams.from_options(
        max_total_chars=args.max_total_chars,
        budgets=budgets,
        max_event_chars=args.max_event_chars,
        template=args.template,
        session_cap=args.session_cap,
        redact=args.redact,
        sessions=args.session,
        since_ms=args.since,
        file_time_ms=args.pin_file_times,
        walk_order=args.walk_order,
        replay=args.replay_at if args.replay else None,
        show_excerpts=args.show_excerpts,
    )


def _where(path: str | os.PathLike) -> str:
    """A path as the user can use it from here: relative to the current directory when below it, shell-quoted."""
    absolute = os.path.abspath(os.fspath(path))
    relative = os.path.relpath(absolute)
    shown = relative if not relative.startswith("..") else absolute
    return shlex.quote(shown)


def _scheduler_without_dask(args: argparse.Namespace) -> bool:
    if args.scheduler and args.executor != "dask":
        print(f"measure {args.command}: --scheduler needs --executor dask", file=sys.stderr)
        return True
    return False


def cmd_run(args: argparse.Namespace) -> int:
    from measure.akm.read import resolve_root  # noqa: PLC0415
    from measure.runner import progress  # noqa: PLC0415
    from measure.runner.cache import default_cache_dir  # noqa: PLC0415
    from measure.runner.outputs import OutputError  # noqa: PLC0415
    from measure.runner.run import run_measurement  # noqa: PLC0415
    from measure.runner.select import UnknownSessions  # noqa: PLC0415

    if _scheduler_without_dask(args):
        return 2
    root = resolve_root(args.root)
    params = _run_params(args, _flat_budgets(args.budgets))
    cache = None if args.no_cache else (args.cache_dir or default_cache_dir())
    bar = progress.for_terminal(quiet=args.quiet)
    try:
        with progress.shown(bar):
            summary = run_measurement(
                root, args.out, params, jobs=args.jobs, cache_dir=cache, executor=args.executor, scheduler=args.scheduler
            )
    except (FileNotFoundError, RuntimeError, UnknownSessions, OutputError) as exc:  # OutputError: --out refused before any work
        bar.stop()
        print(f"measure run: {exc}", file=sys.stderr)
        return 2
    bar.finish(
        f"measured {summary.measured} of {summary.sessions} sessions under {root.name}/; "
        f"{summary.errors} error row(s); tables in {_where(summary.out_dir)}"
    )
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from measure import paths  # noqa: PLC0415
    from measure.akm.read import resolve_root  # noqa: PLC0415
    from measure.report.build import golden, report  # noqa: PLC0415
    from measure.report.notebooks import ReportError  # noqa: PLC0415
    from measure.runner import progress  # noqa: PLC0415
    from measure.runner.outputs import OutputError  # noqa: PLC0415
    from measure.runner.select import UnknownSessions  # noqa: PLC0415

    if _scheduler_without_dask(args):
        return 2
    show = not args.quiet and sys.stdout.isatty()

    def log(message: str) -> None:
        if show:
            print(message, flush=True)

    bar = progress.for_terminal(quiet=args.quiet)
    try:
        if args.golden:
            written = golden(timeout=args.timeout, log=log)
            print(f"golden notebooks written: {', '.join(_where(p) for p in written)}")
            return 0
        root = resolve_root(args.root).absolute()
        # Relative paths on the command line are taken from the current directory, not the repository's.
        out = os.path.abspath(os.path.expanduser(args.out)) if args.out else None
        with progress.shown(bar):
            written = report(
                root,
                out,
                max_total_chars=args.max_total_chars,
                budgets=list(_flat_budgets(args.budgets) or DEFAULT_BUDGETS),
                template_path=args.template,
                sessions=args.session,
                jobs=args.jobs,
                redact=args.redact,
                cache=not args.no_cache,
                file_time_ms=args.pin_file_times,
                show_excerpts=args.show_excerpts,
                replay_at=args.replay_at,
                walk_order=args.walk_order,
                extraction_dir=os.path.abspath(os.path.expanduser(args.extraction)) if args.extraction else None,
                timeout=args.timeout,
                log=log,
                run_options={
                    "since_ms": args.since or 0,
                    "session_cap": args.session_cap,
                    "max_event_chars": args.max_event_chars,
                    "cache_dir": args.cache_dir,
                    "executor": args.executor,
                    "scheduler": args.scheduler,
                },
            )
    except ReportError as exc:
        bar.stop()
        print(f"measure report: {len(exc.failures)} notebook(s) failed:", file=sys.stderr)
        for failure in exc.failures:
            print(f"  {failure}", file=sys.stderr)
        return 1
    except (UnknownSessions, OutputError) as exc:  # OutputError: --out refused before any work
        bar.stop()
        print(f"measure report: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:  # measure run failed (e.g. no such root)
        bar.stop()
        print(f"measure report: {exc}", file=sys.stderr)
        return 2
    bar.finish(f"measured {bar.done} of {bar.total} sessions under {paths.report_name(root)}/")
    where = _where(written)
    print(f"Report written to {where} — open {_where(os.path.join(written, '00-overview.html'))}")
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    import polars as pl  # noqa: PLC0415

    from measure.report.views.diff import RunDiffError, diff_runs, formatted  # noqa: PLC0415

    try:
        table, changes = diff_runs(args.run_a, args.run_b, metrics=args.metric)
    except RunDiffError as exc:
        print(f"measure diff: {exc}", file=sys.stderr)
        return 2
    if args.csv:
        sys.stdout.write(table.write_csv(float_precision=None))
        return 0
    print(f"A = {args.run_a}\nB = {args.run_b}")
    print("what differs: " + ("; ".join(changes) if changes else "no parameter (same options and template)"))
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, tbl_hide_dataframe_shape=True,
                   tbl_hide_column_data_types=True, tbl_formatting="ASCII_MARKDOWN", fmt_str_lengths=100,
                   tbl_cell_alignment="RIGHT"):
        print(formatted(table))
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from measure.inspection import inspect_session, render_json, render_text

    try:
        report = inspect_session(
            args.session,
            strategies=args.strategy,
            budget=args.max_total_chars,
            max_event_text_length=args.max_event_chars,
            template_path=args.template,
            show_prompt=args.show_prompt,
        )
    except (OSError, ValueError) as exc:
        print(f"measure inspect: {exc}", file=sys.stderr)
        return 2
    if args.json:
        sys.stdout.write(render_json(report))
    else:
        sys.stdout.write(render_text(report))
    return 0


COMMANDS = ("run", "report", "diff", "inspect", "synth", "extract")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or (with `command`) only that subcommand's options: `report`,
    `synth` and `extract` import their modules to define theirs (tens of ms a `measure run` need not pay);
    every subcommand is still listed, so usage and errors read the same."""
    parser = argparse.ArgumentParser(
        prog="measure",
        description="How should subagent transcripts reach akm's extraction LLM? Measure every strategy on real sessions.",
    )
    parser.add_argument("--version", action="version", version=f"measure {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="measure every strategy over a sessions root and write the tables")
    p.add_argument("--out", required=True, help="directory for the tables (CSV + Parquet) and run.json")
    _add_measure_options(p, budgets_default="default: none")
    p.add_argument("--show-excerpts", action="store_true", help="keep transcript-derived text (subagent descriptions) in the tables")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("report", help="run the measurement once and render every notebook into a report")
    if command in (None, "report"):
        _add_report_options(p)

    p = sub.add_parser("diff", help="per-strategy deltas between two runs (measure run --out or report directories)")
    p.add_argument("run_a", metavar="RUN_A", help="the first run: a measure run --out directory or a report directory")
    p.add_argument("run_b", metavar="RUN_B", help="the second run")
    p.add_argument("--metric", action="append", metavar="NAME", help="only this metric (repeatable; default: all)")
    p.add_argument("--csv", action="store_true", help="print CSV instead of a text table")
    p.set_defaults(func=cmd_diff)

    p = sub.add_parser("inspect", help="show what each strategy would send for one session")
    p.add_argument("session", help="a parent session .jsonl file")
    p.add_argument("--strategy", action="append", metavar="S", help="only this strategy (repeatable)")
    _add_pipeline_options(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--show-prompt", action="store_true", help="include the full prompt text (transcript content!)")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser("synth", help="generate a realistic synthetic sessions root")
    if command in (None, "synth"):
        from measure import synth

        synth.add_arguments(p)
        p.set_defaults(func=synth.run)

    p = sub.add_parser("extract", help="send the strategies' prompts to a real model and diff what it extracts (#840's experiment)")
    if command in (None, "extract"):
        from measure.extract.command import add_arguments

        add_arguments(p)
    return parser


def _add_report_options(p: argparse.ArgumentParser) -> None:
    from measure.report.notebooks import EXECUTION_TIMEOUT

    p.add_argument("--out", help="report directory (default: reports/<last part of the root>)")
    _add_measure_options(p, budgets_default="default: " + ",".join(str(b) for b in DEFAULT_BUDGETS), always_replay=True)
    p.add_argument("--show-excerpts", action="store_true", help="allow transcript-derived text (subagent descriptions) in the notebooks")
    p.add_argument("--extraction", metavar="DIR", help="a `measure extract --out` directory for 06-extraction (default: <report>/extraction when it holds one, else the recorded store of a fixture root)")
    p.add_argument("--timeout", type=_positive, default=EXECUTION_TIMEOUT, metavar="SECONDS", help="seconds one cell may run")
    p.add_argument("--golden", action="store_true", help="regenerate the golden notebooks under tests/golden/ from the bundled fixtures instead of writing a report")
    p.set_defaults(func=cmd_report)


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _join_dash_values(argv: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """`--session -home-me-app/x.jsonl` -> `--session=-home-me-app/x.jsonl`.

    argparse takes a value starting with `-` for an option and fails ("expected one argument");
    project folders of Claude Code all start with `-`. A value is joined only when it is not
    itself an option of the subcommand.
    """
    if not argv or argv[0] not in _subparsers(parser):
        return argv
    sub = _subparsers(parser)[argv[0]]
    takes_value = {s for a in sub._actions if a.nargs != 0 for s in a.option_strings}
    known = {s for a in sub._actions for s in a.option_strings}
    out = [argv[0]]
    i = 1
    while i < len(argv):
        token = argv[i]
        if token == "--":
            out += argv[i:]
            break
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if (
            token in takes_value
            and nxt is not None
            and nxt.startswith("-")
            and not nxt.startswith("--")
            and nxt not in known
            and not _is_number(nxt)
            and len(nxt) > 2
        ):
            out.append(f"{token}={nxt}")
            i += 2
            continue
        out.append(token)
        i += 1
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse `argv`; an unknown option is reported by the subcommand's parser, with its usage."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    argv = _join_dash_values(argv, parser)
    args, extra = parser.parse_known_args(argv)
    if extra:
        sub = _subparsers(parser)[args.command]
        options = sorted({s for a in sub._actions for s in a.option_strings if s.startswith("--")})
        hints = []
        for token in extra:
            if token.startswith("-"):
                close = difflib.get_close_matches(token.split("=", 1)[0], options, n=1)
                if close:
                    hints.append(f"{token.split('=', 1)[0]} (did you mean {close[0]}?)")
                    continue
            hints.append(token)
        sub.error(f"unrecognized arguments: {' '.join(hints)}")
    return args


POLARS_MALLOC_CONF = "dirty_decay_ms:0,muzzy_decay_ms:0"
"""jemalloc options of polars (read when polars loads; the notebooks' kernels inherit them): memory
polars frees goes back to the system at once, instead of staying in the process for seconds and
adding up, table after table, in a report's peak (issue #17: 500 MB at 20,000 sessions)."""


POLARS_OWN_MALLOC_CONF = "dirty_decay_ms:500,muzzy_decay_ms:1000"
"""What polars writes into os.environ when it loads and finds no setting: a `measure` started by a
process that had loaded polars (a notebook, the benchmark) inherits it, and is not the user's choice."""


def configure_allocator(environ=os.environ) -> None:
    """Polars' allocator returns freed memory at once, unless the user chose otherwise."""
    if environ.get("_RJEM_MALLOC_CONF") in (None, POLARS_OWN_MALLOC_CONF):
        environ["_RJEM_MALLOC_CONF"] = POLARS_MALLOC_CONF


QUICK_EXIT = ("run", "diff", "inspect", "synth")
"""Commands after which the program ends without the interpreter's teardown (see `entry`):
they start no process or thread that outlives them, and close every file they write."""


def main(argv: list[str] | None = None, *, program: bool = False) -> int:
    """Run one command; `program` (the installed `measure` and `python -m measure`) lets a
    QUICK_EXIT command end the process as soon as it has returned."""
    configure_allocator()  # before anything loads polars
    args = parse_args(argv)
    code = args.func(args)
    if program and args.command in QUICK_EXIT:
        quick_exit(code)
    return code


def quick_exit(code: int) -> None:
    """End the process now, when nothing is left running: tearing the interpreter down frees
    every module one by one (polars' alone take 50 ms), work a finished command has no use for.
    Returns, for the ordinary exit, when another thread or a child process is still there."""
    import threading  # noqa: PLC0415

    mp = sys.modules.get("multiprocessing")
    if threading.active_count() > 1 or (mp is not None and mp.active_children()):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed or broken stream: let the ordinary exit report it
        return
    os._exit(code)


def entry() -> None:
    """The installed `measure` program."""
    sys.exit(main(program=True))


if __name__ == "__main__":
    entry()
