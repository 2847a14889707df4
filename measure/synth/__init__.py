"""Deterministic generator of realistic Claude Code sessions roots (`~/.claude/projects`), and stats."""

# The modules, in reading order (each one imports only modules above it):
#   vocab, text  word pools and templates; fictional projects and TextForge, which writes their text
#   lines        Claude Code's on-disk records per version (Era), ids, envelopes, the transcript writer
#   plans        SessionRecipe and AgentPlan: what a session or subagent should contain
#   actor        Actor: one conversation thread (API calls, tools, results, token usage)
#   tasks        background tasks as the main thread sees them (launch results, notifications)
#   agents       Subagents: a session's subagent transcripts, sidecars and workflow runs
#   session      SessionSim: one main session in time order, launching and hearing from its tasks
#   shapes       the mixed, s840 and bench plans of whole roots (SHAPES)
#   build        generate(), copy_real() and reproducible mtimes
#   stats        corpus_stats() and stats_markdown()
#   cli          `measure synth ...` and `python -m measure.synth`

from measure.synth.build import DEFAULT_REAL_SUBSET, SynthSummary, copy_real, generate
from measure.synth.cli import main
from measure.synth.lines import flat_text, iso
from measure.synth.shapes import (
    S840_SESSIONS,
    SHAPES,
    _mixed_fixed,  # noqa: F401  (fixtures/README.md points at measure.synth._mixed_fixed)
)
from measure.synth.stats import corpus_stats, stats_markdown

__all__ = [
    "DEFAULT_REAL_SUBSET", "S840_SESSIONS", "SHAPES", "SynthSummary", "copy_real", "corpus_stats",
    "flat_text", "generate", "iso", "main", "stats_markdown",
]
