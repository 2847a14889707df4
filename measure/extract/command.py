"""The `measure extract` subcommand: its options and a thin run over `measure.extract.run`."""

from __future__ import annotations

import os
import sys

import click

from measure.akm.prefilter import DEFAULT_MAX_TOTAL_CHARS
from measure.extract.clients import CLIENTS, ClientUnavailable
from measure.options import COUNT, EPOCH_MS, JOBS, Finite
from measure.runner import progress


def _strategies(ctx, param, text: str) -> tuple[str, ...]:
    names = tuple(s for s in text.replace(" ", "").split(",") if s)
    if not names:
        raise click.BadParameter("give at least one strategy")
    return names


@click.command("extract", help="send the strategies' prompts to a real model and diff what it extracts (#840's experiment)")
@click.option("--root", help="sessions root (default: $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects)")
@click.option("--out", required=True,
              help="directory for extraction_calls / extraction_ab (CSV + Parquet), extract.json and the reply store")
@click.option("--strategies", default="fold,hybrid", callback=_strategies, metavar="S,S",
              help="strategies to send (default fold,hybrid; chunked sends several calls per session)")
@click.option("--session", "sessions", multiple=True, metavar="ID",
              help="only this session id or root-relative path (repeatable)")
@click.option("--max-sessions", type=COUNT, default=10, metavar="N", help="sessions to send (default 10)")
@click.option("--select", default="most_delegated", metavar="RULE", help="most_delegated (default) or random:<seed>")
@click.option("--client", type=click.Choice(CLIENTS), default="anthropic",
              help="anthropic (ANTHROPIC_API_KEY), openai (any compatible server) or command")
@click.option("--model", help="model name (defaults: anthropic claude-sonnet-5, openai gpt-4o-mini)")
@click.option("--base-url", metavar="URL",
              help="API base URL, e.g. http://127.0.0.1:8080/v1 for a local OpenAI-compatible server")
@click.option("--command", metavar="CMD",
              help="for --client command: a shell command reading the prompt on stdin and printing the reply")
@click.option("--template", metavar="PATH",
              help="prompt template (default: the bundled one); its Output example is the reply contract")
@click.option("--temperature", type=Finite(0, 2),
              help="sampling temperature, e.g. 0 (default: not sent, the server's default)")
@click.option("--max-tokens", type=click.IntRange(1, 2**31), default=4096, metavar="N",
              help="reply token limit (default 4096)")
@click.option("--samples", type=click.IntRange(1, 1000), default=1, metavar="K",
              help="samples per prompt; K > 1 measures sampling noise (default 1)")
@click.option("--max-total-chars", "budget", type=COUNT, default=DEFAULT_MAX_TOTAL_CHARS, metavar="N",
              help=f"pre-filter budget (default {DEFAULT_MAX_TOTAL_CHARS})")
@click.option("--pin-file-times", "file_time_ms", type=EPOCH_MS, metavar="MS",
              help="use MS as every file's mtime (default: pinned for roots under fixtures/)")
@click.option("--price-per-mtok", type=Finite(0, 10**6), default=3.0, metavar="USD",
              help="input price per million tokens for the --dry-run estimate (default 3.0)")
@click.option("--max-retries", type=click.IntRange(0, 100), default=2, metavar="N",
              help="SDK retries per call (default 2)")
@click.option("--timeout", type=Finite(0, 2**31, min_open=True), default=600.0, metavar="SECONDS",
              help="seconds per call (default 600)")
@click.option("--jobs", type=JOBS, metavar="N",
              help="worker processes for the selection's measurement (default: CPU count)")
@click.option("--redact", is_flag=True,
              help="hash session ids, paths and titles in every output; store no reply (a rerun sends again)")
@click.option("--offline", is_flag=True,
              help="send nothing: rebuild the tables from the store (missing replies are error rows)")
@click.option("--dry-run", is_flag=True,
              help="print sessions, calls, prompt chars, estimated tokens and cost; send nothing")
@click.option("--quiet", "-q", is_flag=True, help="no progress bar, no per-call lines and no summary line")
def command(root, out, template, file_time_ms, jobs, offline, dry_run, quiet, **options) -> int:
    from measure import paths  # noqa: PLC0415
    from measure.akm.read import resolve_root  # noqa: PLC0415
    from measure.extract.run import ExtractParams, run_extract  # noqa: PLC0415

    bar = progress.for_terminal(quiet=quiet, what="calls")
    # On a terminal the bar shows each call; elsewhere one line per call sent, unless --quiet.
    log = None if bar.bar or quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    try:
        root_path = resolve_root(root)
        if not os.path.isdir(root_path):
            raise ValueError(f"sessions root not found: {root_path}")
        params = ExtractParams(template_path=os.path.abspath(template) if template else None, **options,
                               file_time_ms=paths.file_time_for(root_path) if file_time_ms is None else file_time_ms)
        with progress.shown(bar):
            summary = run_extract(root_path, out, params, dry_run=dry_run, offline=offline, jobs=jobs, log=log)
    except (ClientUnavailable, OSError, ValueError) as exc:
        print(f"measure extract: {exc}", file=sys.stderr)
        return 2
    if not dry_run:
        bar.finish(f"extract: {summary.sessions} session(s), {summary.calls} call(s): {summary.sent} sent, "
                   f"{summary.reused} from the store, {summary.errors} error row(s); tables in {paths.portable(out)}")
    return 0
