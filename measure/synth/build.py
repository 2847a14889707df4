"""generate() writes a sessions root from a shape, copy_real() adds real transcripts; seeded mtimes."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

from measure.synth.lines import Tally, write_file
from measure.synth.session import SessionSim
from measure.synth.shapes import SHAPES, ShapeContext


@dataclass(frozen=True)
class SynthSummary:
    """Counts describing one generated root."""

    shape: str
    seed: int
    sessions: int
    files: int
    bytes: int
    lines: int


def generate(out_dir: Path, seed: int, sessions: int = 12, size_mb: float | None = None,
             shape: str = "mixed") -> SynthSummary:
    """Write a sessions root into `out_dir` (new or empty). Same arguments, same bytes."""
    out_dir = Path(out_dir)
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; choose from {', '.join(SHAPES)}")
    if out_dir.exists() and any(out_dir.iterdir()):
        raise FileExistsError(f"{out_dir} is not empty")
    out_dir.mkdir(parents=True, exist_ok=True)
    tally = Tally()
    ctx = ShapeContext(seed, sessions, size_mb, tally, out_dir, random.Random(f"{seed}:{shape}:plan"))
    for k, (recipe, project) in enumerate(SHAPES[shape](ctx)):
        # Each session draws from its own stream, so one session's content does not shift the next.
        sim = SessionSim(out_dir, recipe, project, random.Random(f"{seed}:{shape}:session:{k}"), tally)
        if recipe.empty_subagent:
            write_file(sim.session_dir / "subagents" / f"agent-{sim.ids.agent(sim.era.agent_id)}.jsonl", b"", tally,
                       recipe.start_ms + 60_000)
        sim.run()
        if recipe.orphan:  # the parent rotated off disk: only its subagents/ folder is left
            tally.files -= 1
            tally.bytes -= sim.tr.path.stat().st_size
            sim.tr.path.unlink()
        else:
            tally.sessions += 1
    _set_mtimes(out_dir, tally, seed)
    return SynthSummary(shape, seed, tally.sessions, tally.files, tally.bytes, tally.lines)


# Real transcripts copied into fixtures/default next to the generated sessions (paths relative
# to fixtures/real): spotter's small samples, its real orphan subagents/ folder, and the newest
# (2.1.2xx) launch shapes from claudemux.
DEFAULT_REAL_SUBSET = (
    "spotter/short.jsonl", "spotter/subagent.jsonl", "spotter/tool_heavy.jsonl",
    "spotter/6c2214d7-b87e-4432-8e41-22ba294ea584/subagents/agent-afc096d.jsonl",
    *(f"claudemux/launch-{name}.jsonl"
      for name in ("agent", "agent-queued", "agent-resume", "monitor", "shell", "shell-timeout", "skill-fork")),
)
REAL_MTIME_MS = 1_780_000_000_000  # the mtime shared/parity/assemble_real.py gives real files


def copy_real(real_root: Path, out_dir: Path) -> int:
    """Copy DEFAULT_REAL_SUBSET byte for byte into a generated root; returns bytes copied."""
    total = 0
    for rel in DEFAULT_REAL_SUBSET:
        src = Path(real_root) / rel
        dst = Path(out_dir) / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        data = src.read_bytes()
        dst.write_bytes(data)
        os.utime(dst, ns=(REAL_MTIME_MS * 1_000_000, REAL_MTIME_MS * 1_000_000))
        total += len(data)
    return total


def _set_mtimes(root: Path, tally: Tally, seed: int) -> None:
    """Every file gets a seed-derived mtime (its last timestamp when it has one): reproducible on disk."""
    base = 1_780_000_000_000 + (seed % 1_000_003) * 1000
    for dirpath, _, filenames in os.walk(root, topdown=False):
        for name in filenames:
            path = os.path.join(dirpath, name)
            ms = tally.mtimes.get(path, base)
            os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))
        os.utime(dirpath, ns=(base * 1_000_000, base * 1_000_000))
