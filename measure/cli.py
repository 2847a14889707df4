"""The `measure` command: a thin shell over the library."""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime, timezone

from measure import __version__, synth
from measure.report import build as reports


def _ints(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.replace(" ", "").split(",") if v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError("budgets must be positive")
    return values


def _positive(text: str) -> int:
    v = int(text)
    if v <= 0:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return v


def _date_ms(text: str) -> float:
    for fmt in ("%Y-%m-%d", "%Y%m%d", "%Y-%m-%dT%H:%M:%S"):
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=timezone.utc).timestamp() * 1000
        except ValueError:
            continue
    raise argparse.ArgumentTypeError(f"expected YYYY-MM-DD or YYYYMMDD, got {text!r}")


def _add_pipeline_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-total-chars", type=_positive, default=80_000, metavar="N", help="pre-filter budget (akm's maxTotalChars; default 80000)")
    p.add_argument("--max-event-chars", type=_positive, default=2_000, metavar="N", help="per-event cap before truncation (default 2000)")
    p.add_argument("--template", metavar="PATH", help="prompt template (default: the package's own; point at akm's extract-session.md for akm's exact lengths)")


def cmd_run(args: argparse.Namespace) -> int:
    from measure.akm.read import resolve_root
    from measure.runner.cache import default_cache_dir
    from measure.runner.job import RunParams
    from measure.runner.outputs import OutputError
    from measure.runner.run import run_measurement

    root = resolve_root(args.root)
    params = RunParams(
        budget=args.max_total_chars,
        budgets=args.budgets,
        max_event_text_length=args.max_event_chars,
        template_path=os.path.abspath(args.template) if args.template else None,
        session_cap=args.session_cap,
        redact=args.redact,
        sessions=tuple(args.session or ()),
        since_ms=args.since or 0,
        file_time_ms=args.pin_file_times,
        show_excerpts=args.show_excerpts,
    )
    cache = None if args.no_cache else (args.cache_dir or default_cache_dir())
    try:
        summary = run_measurement(root, args.out, params, jobs=args.jobs, cache_dir=cache)
    except (FileNotFoundError, OutputError) as exc:  # OutputError: --out/--cache-dir refused before any work
        print(f"measure: {exc}", file=sys.stderr)
        return 2
    print(
        f"measured {summary.measured} of {summary.sessions} sessions under {root.name}/; "
        f"{summary.errors} error row(s); tables in {summary.out_dir}",
        file=sys.stderr,
    )
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from measure.inspect import inspect_session, render_text

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
        json.dump(report, sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_text(report))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="measure",
        description="How should subagent transcripts reach akm's extraction LLM? Measure every strategy on real sessions.",
    )
    parser.add_argument("--version", action="version", version=f"measure {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="measure every strategy over a sessions root and write the tables")
    p.add_argument("--root", help="sessions root (default: $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects)")
    p.add_argument("--out", required=True, help="directory for the tables (CSV + Parquet) and run.json")
    _add_pipeline_options(p)
    p.add_argument("--budgets", type=_ints, default=(), metavar="N,N,...", help="extra budgets for the budget_sweep table, e.g. 20000,40000,80000,160000")
    p.add_argument("--jobs", type=_positive, help="worker processes (default: CPU count)")
    p.add_argument("--session", action="append", metavar="ID", help="only this session id or root-relative path (repeatable)")
    p.add_argument("--since", type=_date_ms, metavar="DATE", help="only sessions whose file changed on or after DATE (UTC)")
    p.add_argument("--session-cap", type=_positive, default=25, metavar="N", help="sessions per akm run for the run_cost table (maxSessionsPerRun, default 25)")
    p.add_argument("--redact", action="store_true", help="hash every name and id of the input (project folders, session and agent ids, agent types, tool-use ids) in every output")
    p.add_argument("--show-excerpts", action="store_true", help="keep transcript-derived text (subagent descriptions) in the tables")
    p.add_argument("--pin-file-times", type=int, metavar="MS", help="use MS (epoch ms) as every file's mtime/ctime: for bundled fixtures, whose times git does not keep")
    p.add_argument("--cache-dir", help="incremental cache (default: $XDG_CACHE_HOME/measure or ~/.cache/measure)")
    p.add_argument("--no-cache", action="store_true", help="measure everything again and write no cache")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("inspect", help="show what each strategy would send for one session")
    p.add_argument("session", help="a parent session .jsonl file")
    p.add_argument("--strategy", action="append", metavar="S", help="only this strategy (repeatable)")
    _add_pipeline_options(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--show-prompt", action="store_true", help="include the full prompt text (transcript content!)")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser("synth", help="generate a realistic synthetic sessions root")
    synth.add_arguments(p)
    p.set_defaults(func=synth.run)

    p = sub.add_parser("report", help="run the measurement and render the notebooks into a report")
    reports.add_arguments(p)
    p.set_defaults(func=reports.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
