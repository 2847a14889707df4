"""The output tables: one definition shared by the writer, the notebooks and the plots."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

Str, Int, Float, Bool = pl.String, pl.Int64, pl.Float64, pl.Boolean


@dataclass(frozen=True)
class Table:
    """A table's name, its columns in order (name, dtype, meaning) and its sort key."""

    name: str
    doc: str
    columns: tuple[tuple[str, pl.DataType, str], ...]
    sort: tuple[str, ...]

    @property
    def names(self) -> list[str]:
        return [c[0] for c in self.columns]

    @property
    def polars_schema(self) -> dict[str, pl.DataType]:
        return {c[0]: c[1] for c in self.columns}


_SESSION = (
    ("session_id", Str, "parent session id (file name without .jsonl; hashed under --redact)"),
    ("session_path", Str, "parent transcript path relative to the sessions root"),
)

SESSIONS = Table(
    "sessions",
    "One row per session x strategy at the run's budget: what one extraction would send.",
    _SESSION
    + (
        ("strategy", Str, "link, fold, fold_dedupe_scoped, fold_stub_raw, hybrid or chunked"),
        ("budget", Int, "maxTotalChars of the pre-filter"),
        ("llm_calls", Int, "extraction calls the strategy makes for this session"),
        ("prompt_chars", Int, "UTF-16 length of the prompt(s), summed over calls"),
        ("prompt_sha256", Str, "sha256 of the prompt's UTF-8; for chunked, sha256 of the calls' hex digests in order"),
        ("kept_events", Int, "events kept by the pre-filter (summed over chunks)"),
        ("kept_chars", Int, "UTF-16 chars kept by the pre-filter"),
        ("parent_kept_events", Int, "kept events whose file is the parent transcript"),
        ("parent_kept_chars", Int, "kept chars whose file is the parent transcript"),
        ("subagent_kept_events", Int, "kept events from subagent transcripts"),
        ("subagent_kept_chars", Int, "kept chars from subagent transcripts"),
        ("truncated", Int, "kept events cut to maxEventTextLength"),
        ("budget_dropped", Int, "events skipped by the recency budget pass"),
        ("stubbed", Int, "task notifications replaced by a stub"),
        ("inline_refs", Int, "akm remember/feedback refs listed as already preserved"),
        ("content_hash", Str, "sha256 of the canonical folded stream (akm's skip key)"),
        ("raw_events", Int, "events the strategy starts from"),
        ("raw_chars", Int, "UTF-16 chars the strategy starts from"),
        ("subagent_files", Int, "subagent transcripts folded (recursive under subagents/)"),
    ),
    ("session_path", "strategy"),
)

EVICTION = Table(
    "eviction",
    "Parent-origin content kept with the parent alone vs with the strategy (fold family, hybrid).",
    _SESSION
    + (
        ("strategy", Str, "strategy compared with the parent-alone pre-filter"),
        ("budget", Int, "maxTotalChars"),
        ("alone_parent_kept_chars", Int, "parent chars kept when the parent is read alone"),
        ("parent_kept_chars", Int, "parent chars kept under the strategy"),
        ("evicted_chars", Int, "alone - strategy, #840's definition (counts what stubs shorten too)"),
        ("evicted_chars_pct", Float, "evicted chars as % of max(1, alone), one decimal"),
        ("stub_saved_chars", Int, "kept parent chars that stubs replaced (dedupe by design, not eviction)"),
        ("budget_evicted_chars", Int, "evicted_chars - stub_saved_chars: parent content that lost its place to subagent text"),
        ("budget_evicted_pct", Float, "budget_evicted_chars as % of max(1, alone), one decimal"),
        ("alone_parent_kept_events", Int, "parent events kept alone"),
        ("parent_kept_events", Int, "parent events kept under the strategy"),
        ("evicted_events", Int, "alone - strategy"),
        ("evicted_events_pct", Float, "evicted events as % of max(1, alone), one decimal"),
    ),
    ("session_path", "strategy"),
)

DUPLICATES = Table(
    "duplicates",
    "One row per task-notification <-> subagent pair: how alike the copies are, which reach the fold prompt.",
    _SESSION
    + (
        ("agent_id", Str, "agent-<id> (the subagent file stem; the id hashed under --redact)"),
        ("subagent_path", Str, "subagent transcript relative to the root"),
        ("tool_use_id", Str, "tool_use id of the spawning call, when known (hashed under --redact; null when read through a link leaving the root)"),
        ("pairing", Str, "sidecar_tool_use_id (akm's #840 rule) or agent_id (task-id/agentId/file name)"),
        ("description", Str, "sidecar description: null unless --show-excerpts (hashed under --redact; null when read through a link leaving the root)"),
        ("overlap", Float, "word-set Jaccard of the notification and the subagent's final event"),
        ("notification_chars", Int, "UTF-16 chars of the parent's notification event"),
        ("final_chars", Int, "UTF-16 chars of the subagent's final event"),
        ("notification_in_prompt", Bool, "the notification survives the fold pre-filter"),
        ("final_in_prompt", Bool, "the subagent's own final event survives the fold pre-filter"),
        ("both_in_prompt", Bool, "both copies reach the fold prompt"),
        ("stub_saved_chars", Int, "raw chars a [subagent ... completed: ...] stub saves"),
    ),
    ("session_path", "agent_id", "pairing"),
)

LLM_CALLS = Table(
    "llm_calls",
    "Calls per session and strategy, and how much parent-origin content reaches any prompt.",
    _SESSION
    + (
        ("strategy", Str, "strategy"),
        ("budget", Int, "maxTotalChars"),
        ("llm_calls", Int, "calls for this session"),
        ("multiplier", Float, "calls / 1 (the single-call strategies)"),
        ("parent_windows", Int, "chunked: parent windows of at most budget raw chars"),
        ("subagent_chunks", Int, "chunked: one per subagent transcript with events"),
        ("prompt_chars_total", Int, "prompt chars summed over the calls"),
        ("parent_chars_in_prompts", Int, "parent-origin kept chars summed over the calls"),
    ),
    ("session_path", "strategy"),
)

RUN_COST = Table(
    "run_cost",
    "Run-level cost when akm processes at most `session_cap` sessions per run (maxSessionsPerRun).",
    (
        ("strategy", Str, "strategy"),
        ("session_cap", Int, "sessions per extraction run (akm default 25)"),
        ("sessions", Int, "sessions measured"),
        ("runs", Int, "runs needed to process them all"),
        ("llm_calls", Int, "calls over all sessions"),
        ("calls_per_run_mean", Float, "mean calls per run"),
        ("calls_per_run_max", Int, "calls in the most expensive run (newest-ended first batches)"),
        ("cap_multiplier", Float, "max calls per run / session_cap"),
    ),
    ("strategy",),
)

BUDGET_SWEEP = Table(
    "budget_sweep",
    "Eviction and calls at every budget of --budgets.",
    _SESSION
    + (
        ("strategy", Str, "strategy"),
        ("budget", Int, "maxTotalChars"),
        ("alone_parent_kept_chars", Int, "parent chars kept alone at this budget"),
        ("parent_kept_chars", Int, "parent chars kept under the strategy"),
        ("evicted_chars", Int, "alone - strategy"),
        ("evicted_chars_pct", Float, "% of max(1, alone), one decimal"),
        ("kept_chars", Int, "all kept chars"),
        ("prompt_chars", Int, "prompt chars (summed over calls)"),
        ("llm_calls", Int, "calls"),
    ),
    ("session_path", "strategy", "budget"),
)

SUBAGENTS = Table(
    "subagents",
    "One row per folded transcript under <session>/subagents/**.",
    _SESSION
    + (
        ("subagent_path", Str, "transcript relative to the root"),
        ("agent_id", Str, "file stem (agent-<id>, or journal; the id hashed under --redact)"),
        ("kind", Str, "task_agent, compaction_helper, workflow_agent, workflow_journal or other"),
        ("agent_type", Str, "sidecar agentType (hashed under --redact; null when read through a link leaving the root)"),
        ("description", Str, "sidecar description: null unless --show-excerpts (hashed under --redact; null when read through a link leaving the root)"),
        ("sidecar", Str, "ok, missing, broken or null"),
        ("events", Int, "events parsed from the file"),
        ("chars", Int, "UTF-16 chars of those events (unprefixed)"),
        ("first_ts", Str, "first event timestamp (ISO, UTC)"),
        ("last_ts", Str, "last event timestamp (ISO, UTC)"),
        ("launch", Str, "sync, background or unknown (from the parent's tool result)"),
        ("notifications", Int, "task notifications in the parent naming this agent"),
    ),
    ("session_path", "subagent_path"),
)

ERRORS = Table(
    "errors",
    "Everything that could not be read fully, with the reason. Nothing is skipped silently.",
    (
        ("path", Str, "file or folder relative to the root"),
        ("session_path", Str, "the session it belongs to, if any"),
        ("kind", Str, "unreadable, malformed_lines, invalid_utf8, broken_sidecar, orphan_subagents, empty, not_a_file (FIFO, device, socket: never read), outside_link (a symlink leaving the root, followed as akm does), render_error, internal_error"),
        ("count", Int, "how many lines/files the row stands for"),
        ("reason", Str, "what happened (under --redact, file names in it are hashed and exception messages withheld)"),
    ),
    ("path", "kind"),
)

QUIRKS = Table(
    "quirks",
    "How often akm's reproduced quirks change what it sends, per session and strategy.",
    _SESSION
    + (
        ("strategy", Str, "strategy"),
        ("quirk", Str, "dollar_pattern, placeholder_capture, ts_tie_across_files, journal_folded, lone_surrogate"),
        ("count", Int, "times it fired"),
    ),
    ("session_path", "strategy", "quirk"),
)

TABLES: dict[str, Table] = {
    t.name: t
    for t in (SESSIONS, EVICTION, DUPLICATES, LLM_CALLS, RUN_COST, BUDGET_SWEEP, SUBAGENTS, ERRORS, QUIRKS)
}
