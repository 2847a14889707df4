"""Deterministic generator of realistic Claude Code sessions roots (`~/.claude/projects`), and stats."""

# Reading order (each module imports only those before it): vocab, text, lines, plans, actor,
# tasks, session, shapes, build, stats, cli.

from measure.synth.build import DEFAULT_REAL_SUBSET, SynthSummary, copy_real, generate
from measure.synth.cli import main
from measure.synth.lines import flat_text
from measure.synth.shapes import S840_SESSIONS, SHAPES, _mixed_fixed  # noqa: F401  (fixtures/README.md points at it)
from measure.synth.stats import corpus_stats, stats_markdown

__all__ = [
    "DEFAULT_REAL_SUBSET", "S840_SESSIONS", "SHAPES", "SynthSummary", "copy_real", "corpus_stats",
    "flat_text", "generate", "main", "stats_markdown",
]
