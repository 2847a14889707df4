"""The `measure extract` subcommand: its options and a thin run over `measure.extract.run`."""

from __future__ import annotations

import argparse
import os
import sys

from measure.akm.prefilter import DEFAULT_MAX_TOTAL_CHARS
from measure.extract.clients import CLIENTS, ClientUnavailable
from measure.runner import progress


def _positive(text: str) -> int:
    v = int(text)
    if v <= 0:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return v


def _strategies(text: str) -> tuple[str, ...]:
    names = tuple(s for s in text.replace(" ", "").split(",") if s)
    if len(names) < 1:
        raise argparse.ArgumentTypeError("give at least one strategy")
    return names


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`measure extract`'s options (the command line names the command and its help)."""
    p.add_argument("--root", help="sessions root (default: $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects)")
    p.add_argument("--out", required=True, help="directory for extraction_calls / extraction_ab (CSV + Parquet), extract.json and the reply store")
    p.add_argument("--strategies", type=_strategies, default=("fold", "hybrid"), metavar="S,S", help="strategies to send (default fold,hybrid; chunked sends several calls per session)")
    p.add_argument("--session", action="append", metavar="ID", help="only this session id or root-relative path (repeatable)")
    p.add_argument("--max-sessions", type=_positive, default=10, metavar="N", help="sessions to send (default 10)")
    p.add_argument("--select", default="most_delegated", metavar="RULE", help="most_delegated (default) or random:<seed>")
    p.add_argument("--client", choices=CLIENTS, default="anthropic", help="anthropic (ANTHROPIC_API_KEY), openai (any compatible server) or command")
    p.add_argument("--model", help="model name (defaults: anthropic claude-sonnet-5, openai gpt-4o-mini)")
    p.add_argument("--base-url", metavar="URL", help="API base URL, e.g. http://127.0.0.1:8080/v1 for a local OpenAI-compatible server")
    p.add_argument("--command", dest="shell_command", metavar="CMD", help="for --client command: a shell command reading the prompt on stdin and printing the reply")
    p.add_argument("--template", metavar="PATH", help="prompt template (default: the bundled one); its Output example is the reply contract")
    p.add_argument("--temperature", type=float, default=None, help="sampling temperature, e.g. 0 (default: not sent, the server's default)")
    p.add_argument("--max-tokens", type=_positive, default=4096, metavar="N", help="reply token limit (default 4096)")
    p.add_argument("--samples", type=_positive, default=1, metavar="K", help="samples per prompt; K > 1 measures sampling noise (default 1)")
    p.add_argument("--max-total-chars", type=_positive, default=DEFAULT_MAX_TOTAL_CHARS, metavar="N", help=f"pre-filter budget (default {DEFAULT_MAX_TOTAL_CHARS})")
    p.add_argument("--pin-file-times", type=int, metavar="MS", help="use MS as every file's mtime (default: pinned for roots under fixtures/)")
    p.add_argument("--price-per-mtok", type=float, default=3.0, metavar="USD", help="input price per million tokens for the --dry-run estimate (default 3.0)")
    p.add_argument("--max-retries", type=int, default=2, metavar="N", help="SDK retries per call (default 2)")
    p.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS", help="seconds per call (default 600)")
    p.add_argument("--jobs", type=_positive, metavar="N", help="worker processes for the selection's measurement (default: CPU count)")
    p.add_argument("--redact", action="store_true", help="hash session ids and paths in the tables and extract.json")
    p.add_argument("--offline", action="store_true", help="send nothing: rebuild the tables from the store (missing replies are error rows)")
    p.add_argument("--dry-run", action="store_true", help="print sessions, calls, prompt chars, estimated tokens and cost; send nothing")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar, no per-call lines and no summary line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from measure import paths  # noqa: PLC0415
    from measure.akm.read import resolve_root  # noqa: PLC0415
    from measure.extract.run import ExtractParams, run_extract  # noqa: PLC0415
    from measure.paths import file_time_for  # noqa: PLC0415

    try:
        root = resolve_root(args.root)
    except (OSError, ValueError) as exc:
        print(f"measure extract: {exc}", file=sys.stderr)
        return 2
    if not os.path.isdir(root):
        print(f"measure extract: sessions root not found: {root}", file=sys.stderr)
        return 2
    params = ExtractParams(
        strategies=args.strategies,
        sessions=tuple(args.session or ()),
        max_sessions=args.max_sessions,
        select=args.select,
        client=args.client,
        model=args.model,
        base_url=args.base_url,
        command=args.shell_command,
        template_path=os.path.abspath(args.template) if args.template else None,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        samples=args.samples,
        budget=args.max_total_chars,
        file_time_ms=args.pin_file_times if args.pin_file_times is not None else file_time_for(root),
        price_per_mtok=args.price_per_mtok,
        max_retries=args.max_retries,
        timeout=args.timeout,
        redact=args.redact,
    )
    bar = progress.for_terminal(quiet=args.quiet, what="calls")
    # On a terminal the bar shows each call; elsewhere one line per call sent, unless --quiet.
    log = None if bar.bar or args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    try:
        with progress.shown(bar):
            summary = run_extract(root, args.out, params, dry_run=args.dry_run, offline=args.offline, jobs=args.jobs, log=log)
    except ClientUnavailable as exc:
        bar.stop()
        print(f"measure extract: {exc}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        bar.stop()
        print(f"measure extract: {exc}", file=sys.stderr)
        return 2
    if not args.dry_run:
        bar.finish(
            f"extract: {summary.sessions} session(s), {summary.calls} call(s): {summary.sent} sent, "
            f"{summary.reused} from the store, {summary.errors} error row(s); tables in {paths.portable(summary.out_dir)}"
        )
    return 0
