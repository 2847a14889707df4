"""CLI: `measure synth ...` (wired by measure/cli.py) and `python -m measure.synth`."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from measure.synth.build import DEFAULT_REAL_SUBSET, copy_real, generate
from measure.synth.shapes import SHAPES
from measure.synth.stats import corpus_stats, stats_markdown

# ============================================================================================
# CLI: `measure synth ...` (wired by measure/cli.py) and `python -m measure.synth`.
# ============================================================================================


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, help="directory to create (must be new or empty)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (same seed, same bytes)")
    parser.add_argument("--sessions", type=int, default=12, help="number of main sessions (mixed, bench; s840 is fixed)")
    parser.add_argument("--size-mb", type=float, default=None,
                        help="keep adding sessions until this many MB (10^6 bytes) are written; overrides --sessions")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="mixed", help="named shape of the root")
    parser.add_argument("--clean", action="store_true", help="delete --out first if it exists")
    parser.add_argument("--copy-real", type=Path, metavar="REAL_ROOT",
                        help="also copy the default subset of real transcripts from REAL_ROOT (fixtures/real)")
    parser.add_argument("--stats", nargs="+", type=Path, metavar="ROOT",
                        help="print a markdown statistics table for these roots instead of generating")


def run(args: argparse.Namespace) -> int:
    if args.stats:
        print(stats_markdown([(str(r), corpus_stats(r)) for r in args.stats]), end="")
        return 0
    if args.out is None:
        print("measure synth: --out is required (or --stats ROOT)", file=sys.stderr)
        return 2
    if args.clean and args.out.exists():
        import shutil
        shutil.rmtree(args.out)
    started = time.perf_counter()
    summary = generate(args.out, args.seed, sessions=args.sessions, size_mb=args.size_mb, shape=args.shape)
    if args.copy_real is not None:
        copied = copy_real(args.copy_real, args.out)
        print(f"copied {len(DEFAULT_REAL_SUBSET)} real transcripts ({copied / 1e6:.1f} MB) from {args.copy_real}", file=sys.stderr)
    print(f"{summary.shape} seed={summary.seed}: {summary.sessions} sessions, {summary.files} files, "
          f"{summary.bytes / 1e6:.1f} MB, {summary.lines} lines in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    # The package docstring, as when this was the module measure/synth.py.
    parser = argparse.ArgumentParser(prog="measure synth", description=sys.modules[__package__].__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
