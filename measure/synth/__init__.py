"""Deterministic generator of realistic Claude Code sessions roots (`~/.claude/projects`), plus corpus statistics."""

# The modules, in reading order (each one imports only modules above it):
#   vocab    word pools and sentence/code templates
#   text     fictional projects (Project, make_project) and TextForge, the text builder
#   lines    Claude Code's on-disk lines per version: Era/ERAS, Ids, Envelope, Transcript, flat_text, iso
#   plans    AgentPlan and SessionRecipe: what a session or subagent should contain
#   actor    Actor (one conversation thread: API calls, tools, results) and Meter (token usage)
#   agents   Running and SubagentsMixin: launching, writing, resuming and polling subagents
#   session  SessionSim: one main session in time order, with its subagents and sidecars
#   shapes   the mixed, s840 and bench plans of whole roots (SHAPES)
#   build    generate(), copy_real() and reproducible mtimes
#   stats    corpus_stats() and stats_markdown()
#   cli      `measure synth ...` and `python -m measure.synth`

from measure.synth.build import DEFAULT_REAL_SUBSET, SynthSummary, copy_real, generate
from measure.synth.cli import main
from measure.synth.lines import flat_text, iso

# Private names the tests (synth._layout_of) and fixtures/README.md (synth._mixed_fixed) point at.
from measure.synth.shapes import (
    S840_SESSIONS,
    SHAPES,
    _mixed_fixed,  # noqa: F401
)
from measure.synth.stats import (
    _layout_of,  # noqa: F401
    corpus_stats,
    stats_markdown,
)

__all__ = [
    "DEFAULT_REAL_SUBSET", "S840_SESSIONS", "SHAPES", "SynthSummary", "copy_real", "corpus_stats",
    "flat_text", "generate", "iso", "main", "stats_markdown",
]
