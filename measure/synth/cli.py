"""The `measure synth` subcommand (also `python -m measure.synth`): its options and a thin run."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import click

from measure.options import Finite
from measure.runner.outputs import OutputError, check_replaceable, write_manifest
from measure.synth.build import DEFAULT_REAL_SUBSET, copy_real, generate
from measure.synth.shapes import SHAPES
from measure.synth.stats import corpus_stats, stats_markdown

PATH = click.Path(path_type=Path)


@click.command("synth", help="generate a realistic synthetic sessions root (or, with --stats, describe roots)")
@click.option("--out", type=PATH, help="directory to create (must be new or empty, or an earlier --out of measure synth with --clean)")
@click.option("--seed", type=int, default=0, help="random seed (same seed, same bytes)")
@click.option("--sessions", type=click.IntRange(1, 10**6), default=12, help="number of main sessions (mixed, bench; s840 is fixed)")
@click.option("--size-mb", type=Finite(0, 10**6, min_open=True), help="keep adding sessions until this many MB (10^6 bytes) are written; overrides --sessions")
@click.option("--shape", type=click.Choice(sorted(SHAPES)), default="mixed", help="named shape of the root")
@click.option("--clean", is_flag=True, help="delete --out first if it is an earlier --out of measure synth (nothing else is ever deleted)")
@click.option("--copy-real", "real_root", type=PATH, metavar="REAL_ROOT",
              help="also copy the default subset of real transcripts from REAL_ROOT (fixtures/real)")
@click.option("--stats", is_flag=True, help="print a markdown statistics table for the ROOTs instead of generating")
@click.argument("roots", nargs=-1, type=PATH, metavar="[ROOT]...")
def command(out, seed, sessions, size_mb, shape, clean, real_root, stats, roots) -> int:
    if stats != bool(roots):
        raise click.UsageError("--stats takes the roots to describe: --stats ROOT ...")
    if stats:
        print(stats_markdown([(str(r), corpus_stats(r)) for r in roots]), end="")
        return 0
    if out is None:
        raise click.UsageError("--out is required (or --stats ROOT ...)")
    started = time.perf_counter()
    try:
        if clean and os.path.lexists(out):
            check_replaceable(out, "synth")  # the manifest lists what synth wrote: a folder holding more is refused
            shutil.rmtree(out)
        summary = generate(out, seed, sessions=sessions, size_mb=size_mb, shape=shape)
    except (OutputError, FileExistsError) as exc:
        print(f"measure synth: {exc}", file=sys.stderr)
        return 2
    if real_root is not None:
        copied = copy_real(real_root, out)
        print(f"copied {len(DEFAULT_REAL_SUBSET)} real transcripts ({copied / 1e6:.1f} MB) from {real_root}", file=sys.stderr)
    write_manifest(out, "synth")  # last: what --clean may delete next time
    print(f"{summary.shape} seed={summary.seed}: {summary.sessions} sessions, {summary.files} files, "
          f"{summary.bytes / 1e6:.1f} MB, {summary.lines} lines in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m measure.synth`: the options of `measure synth`; returns the exit code."""
    try:
        return command.main(argv, prog_name="measure synth", standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
