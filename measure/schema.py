"""The output tables: one definition shared by the writer, the notebooks and the plots.

Every rounded number in a table is rounded by `measure.numbers.ROUND_MODE` (half away from zero).

Long: it is data (every column of every table with its meaning), kept in one place so no column
is defined twice.
"""

from __future__ import annotations

import polars as pl

Str, Int, Float, Bool = pl.String, pl.Int64, pl.Float64, pl.Boolean


class Table:
    """A table's name, its sort key, what a row is, and its columns in order (name, dtype, meaning)."""

    def __init__(self, name: str, sort: tuple[str, ...], doc: str, *columns: tuple[str, pl.DataType, str]):
        self.name, self.sort, self.doc, self.columns = name, sort, doc, columns
        self.names: list[str] = [c[0] for c in columns]
        self.polars_schema: dict[str, pl.DataType] = {c[0]: c[1] for c in columns}


_SESSION = (
    ("session_id", Str, "parent session id (file name without .jsonl; hashed under --redact)"),
    ("session_path", Str, "parent transcript path relative to the sessions root"),
)

SESSIONS = Table(
    "sessions", ("session_path", "strategy"),
    "One row per session x strategy at the run's budget: what one extraction would send.",
    *_SESSION,
    ("strategy", Str, "a strategy of the registry (measurements.strategies.STRATEGIES); fold_dedupe_sync, parent_first and "
     "hybrid_undelivered are suite proposals, not akm's code (strategies.ORIGIN)"),
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
    ("stubbed", Int, "parent copies replaced by a stub: task notifications (fold_dedupe_scoped, fold_stub_raw), synchronous Task results (fold_dedupe_sync)"),
    ("inline_refs", Int, "akm remember/feedback refs listed as already preserved"),
    ("content_hash", Str, "sha256 of the canonical folded stream (akm's skip key)"),
    ("raw_events", Int, "events the strategy starts from"),
    ("raw_chars", Int, "UTF-16 chars the strategy starts from"),
    ("subagent_files", Int, "subagent transcripts folded (recursive under subagents/)"),
    ("legacy_agent", Bool, "the file is a legacy sibling agent-*.jsonl (an old-layout subagent transcript beside the parents), which akm lists as a session of its own"),
    ("skipped", Str, "min_content_chars when akm's minContentChars gate (10 chars of raw text; the full folded stream, the parent alone for link) skips the session: no call, 0 prompt chars; else null"),
    # the delegation table summed per session (delegated = task agents, workflow agents, forks)
    ("delegated_transcripts", Int, "task agent, workflow agent and fork transcripts (compaction helpers, side questions, journals and unknown kinds excluded)"),
    ("delegated_results", Int, "of those, transcripts with a final report (a last assistant event)"),
    ("delegated_results_in_prompt", Int, "delegated transcripts whose result reaches this strategy's prompt(s) (delegation.result_in_prompt)"),
    ("subagent_unique_chars_in_prompt", Int, "delegated subagent-origin kept chars that copy no parent content (delegation.unique_chars_in_prompt)"),
    ("rejected_launches", Int, "of the delegated transcripts, those whose launch the user rejected or interrupted: a result that never reached the parent (delegation.delivery = rejected)"),
    ("unknown_transcripts", Int, "subagent transcripts of kind unknown (no name, sidecar, launch or content says what they are): listed, never counted as delegated work"),
)

EVICTION = Table(
    "eviction", ("session_path", "strategy"),
    "Parent-origin content kept with the parent alone vs with the strategy (fold family, hybrid).",
    *_SESSION,
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
)

DUPLICATES = Table(
    "duplicates", ("session_path", "agent_id", "pairing"),
    "One row per task-notification <-> subagent pair: how alike the copies are, which reach the fold prompt.",
    *_SESSION,
    ("agent_id", Str, "agent-<id> (the subagent file stem; the id hashed under --redact)"),
    ("subagent_path", Str, "subagent transcript relative to the root"),
    ("tool_use_id", Str, "tool_use id of the spawning call, when known (hashed under --redact; null when read through a link leaving the root)"),
    ("pairing", Str, "sidecar_tool_use_id (akm's #840 rule: a top-level sidecar's toolUseId), agent_id_notification (the notification's <task-id> names the agent file) or agent_id_tool_result (the agentId in the spawning call's tool result)"),
    ("description", Str, "sidecar description: null unless --show-excerpts (hashed under --redact; null when read through a link leaving the root)"),
    ("overlap", Float, "word-set Jaccard of the notification and the subagent's final event"),
    ("notification_chars", Int, "UTF-16 chars of the parent's notification event"),
    ("final_chars", Int, "UTF-16 chars of the subagent's final event"),
    ("notification_in_prompt", Bool, "the notification survives the fold pre-filter"),
    ("final_in_prompt", Bool, "the subagent's own final event survives the fold pre-filter"),
    ("both_in_prompt", Bool, "both copies reach the fold prompt"),
    ("stub_would_save_chars", Int, "raw chars a [subagent ... completed: ...] stub would save on this pair (a counterfactual: what a strategy did stub is sessions.stubbed and eviction.stub_saved_chars)"),
)

LLM_CALLS = Table(
    "llm_calls", ("session_path", "strategy"),
    "Calls per session and strategy, and how much parent-origin content reaches any prompt.",
    *_SESSION,
    ("strategy", Str, "strategy"),
    ("budget", Int, "maxTotalChars"),
    ("llm_calls", Int, "calls for this session"),
    ("multiplier", Float, "calls / 1 (the single-call strategies)"),
    ("parent_windows", Int, "chunked: parent windows of at most budget raw chars"),
    ("subagent_chunks", Int, "chunked: one per subagent transcript with events"),
    ("prompt_chars_total", Int, "prompt chars summed over the calls"),
    ("parent_chars_in_prompts", Int, "parent-origin kept chars summed over the calls"),
    ("run_order", Int, "the session's place in akm's processing order (newest-ended first, from 0); run_cost's batches follow it"),
)

RUN_COST = Table(
    "run_cost", ("strategy",),
    "Run-level cost when akm processes at most `session_cap` sessions per run (maxSessionsPerRun).",
    ("strategy", Str, "strategy"),
    ("session_cap", Int, "sessions per extraction run (akm default 25)"),
    ("sessions", Int, "sessions measured"),
    ("runs", Int, "runs needed to process them all"),
    ("llm_calls", Int, "calls over all sessions"),
    ("calls_per_run_mean", Float, "mean calls per run"),
    ("calls_per_run_max", Int, "calls in the most expensive run (newest-ended first batches)"),
    ("cap_multiplier", Float, "max calls per run / session_cap (the report compares with a single-call strategy's max instead when a run holds fewer sessions than the cap)"),
)

BUDGET_SWEEP = Table(
    "budget_sweep", ("session_path", "strategy", "budget"),
    "Eviction and calls at every budget of --budgets.",
    *_SESSION,
    ("strategy", Str, "strategy"),
    ("budget", Int, "maxTotalChars"),
    ("alone_parent_kept_chars", Int, "parent chars kept alone at this budget"),
    ("parent_kept_chars", Int, "parent chars kept under the strategy"),
    ("evicted_chars", Int, "alone - strategy"),
    ("evicted_chars_pct", Float, "% of max(1, alone), one decimal"),
    ("kept_chars", Int, "all kept chars"),
    ("prompt_chars", Int, "prompt chars (summed over calls)"),
    ("llm_calls", Int, "calls"),
    ("stub_saved_chars", Int, "kept parent chars that stubs replaced at this budget (dedupe by design, not eviction)"),
    ("budget_evicted_chars", Int, "evicted_chars - stub_saved_chars: parent content that lost its place to subagent text (\"eviction\" in the report)"),
    ("budget_evicted_pct", Float, "budget_evicted_chars as % of max(1, alone), one decimal"),
)

SUBAGENTS = Table(
    "subagents", ("session_path", "subagent_path"),
    "One row per folded transcript under <session>/subagents/**.",
    *_SESSION,
    ("subagent_path", Str, "transcript relative to the root"),
    ("agent_id", Str, "file stem (agent-<id>, or journal; the id hashed under --redact)"),
    ("kind", Str, "task_agent, workflow_agent, fork (delegated work), compaction_helper, side_question, workflow_journal (listed, not counted) or unknown "
     "(nothing says what it is: counted apart). From the name and sidecar, then the launch, then the content (a replay of the parent "
     "no launch explains is a side question): measure.measurements.subagents.classify"),
    ("agent_type", Str, "sidecar agentType (hashed under --redact; null when read through a link leaving the root)"),
    ("description", Str, "sidecar description: null unless --show-excerpts (hashed under --redact; null when read through a link leaving the root)"),
    ("sidecar", Str, "ok, missing, broken or null"),
    ("events", Int, "events parsed from the file"),
    ("chars", Int, "UTF-16 chars of those events (unprefixed)"),
    ("first_ts", Str, "first event timestamp (ISO, UTC)"),
    ("last_ts", Str, "last event timestamp (ISO, UTC)"),
    ("launch", Str, "sync, background, fork, rejected, interrupted (the user stopped the launch) or unknown (no source names it)"),
    ("launch_source", Str, "what names the launch: tool_result_ack (toolUseResult.agentId), tool_result_text (the result text's agentId: line), "
     "sidecar_tool_use_id (the sidecar's toolUseId), agent_progress (the parent's agent_progress lines: agentId and parentToolUseID), none. "
     "Looked up in the parent, then in the other transcripts (a nested agent's spawn is in its parent agent's file)"),
    ("replayed_events", Int, "leading events that repeat the parent's opening events (a replay of the parent conversation); 0 when it is no replay"),
    ("notifications", Int, "task notifications in the parent naming this agent"),
)

ERRORS = Table(
    "errors", ("path", "kind"),
    "Everything that could not be read fully, with the reason. Nothing is skipped silently.",
    ("path", Str, "file or folder relative to the root"),
    ("session_path", Str, "the session it belongs to, if any"),
    ("kind", Str, "unreadable, malformed_lines, invalid_utf8, broken_sidecar, orphan_subagents, empty, not_a_file (FIFO, device, socket: never read), outside_link (a symlink leaving the root, followed as akm does), link_loop (subagents/ linked to the root or a folder holding it: not followed), link_limit (a link out of the root past 10,000 entries or 1 GiB: the rest unread), long_line (a line or sidecar over 16 MiB: skipped unread), not_listed (a file time before 1970: akm skips it), clamped (integers past 2^53 clamped), render_error, internal_error (the type and line of code only: the message may quote the input)"),
    ("count", Int, "how many lines/files the row stands for"),
    ("reason", Str, "what happened (under --redact, file names in it are hashed)"),
)

QUIRKS = Table(
    "quirks", ("session_path", "strategy", "quirk"),
    "How often akm's reproduced quirks change what it sends, per session and strategy.",
    *_SESSION,
    ("strategy", Str, "strategy"),
    ("quirk", Str, "dollar_pattern, placeholder_capture, ts_tie_across_files, journal_folded, lone_surrogate"),
    ("count", Int, "times it fired"),
)

# --- background tasks over time: launch stubs, late completions, replay ------------------------

BACKGROUND = Table(
    "background", ("session_path", "launched_at", "task_id", "tool_use_id"),
    "One row per background task a parent launched (background agents, forked skills, background Bash, monitors, workflows).",
    *_SESSION,
    ("task_id", Str, "agentId / backgroundTaskId / taskId / notification task-id (line:<n> when a notification names none)"),
    ("tool_use_id", Str, "the launching tool_use id (from the launch, else the notification's <tool-use-id>)"),
    ("kind", Str, "agent, forked_skill, bash, monitor, workflow or other (launch ack, else the notification's wording/id shape)"),
    ("cc_version", Str, "Claude Code version on the parent's lines, progress lines included (the last to appear)"),
    ("launched_at", Str, "the parent's tool_use line (ISO, UTC); empty when the launch is not in the file"),
    ("ack_at", Str, "the launch acknowledgement (tool_result) line: the launch stub (ISO, UTC)"),
    ("ack_chars", Int, "UTF-16 chars of the stub's tool_result text"),
    ("completed_at", Str, "first notification's enqueue (or delivered turn), else the subagent transcript's last line (ISO, UTC)"),
    ("completed_by", Str, "notification or transcript: where completed_at comes from"),
    ("stub_seconds", Float, "ack_at - launched_at: what a tool that trusts the launch result records as the run"),
    ("run_seconds", Float, "completed_at - launched_at: the true run time"),
    ("notifications", Int, "notifications for this task in the parent (a resumed task notifies again)"),
    ("delivered", Int, "notifications consumed as a user turn"),
    ("removed", Int, "notifications enqueued then removed with no user line (remove is not delivery)"),
    ("delivery", Str, "turn (any delivered), removed (only removed), never (no notification reached a turn or was removed)"),
    ("parent_end_at", Str, "the parent's last assistant line (ISO, UTC): when its last turn ended"),
    ("completed_after_parent_end", Bool, "completed_at is after parent_end_at"),
    ("status", Str, "the last notification's status: completed, failed, killed, stopped"),
    ("killed", Bool, "a notification says killed"),
    ("resumes", Int, "SendMessage resumes of this task acknowledged in the parent"),
    ("transcript_events", Int, "events in subagents/agent-<task_id>.jsonl (empty: no such file)"),
    ("transcript_chars", Int, "UTF-16 chars of those events"),
    ("transcript_end_at", Str, "the subagent transcript's last timestamped line (ISO, UTC)"),
    ("result_chars", Int, "UTF-16 chars of the last notification <result> (empty: no <result> tag)"),
)

REPLAY = Table(
    "replay", ("session_path", "strategy"),
    "One row per session x strategy when the run replays (--replay): akm's pipeline at each moment of the schedule.",
    *_SESSION,
    ("strategy", Str, "strategy"),
    ("schedule", Str, "turn_end, final or every:<minutes> (--replay-at)"),
    ("extraction_points", Int, "moments at which the session had content and the strategy ran"),
    ("moments_dropped", Int, "moments the per-session cap (replay.MAX_MOMENTS) thinned out"),
    ("extractions", Int, "moments whose content hash differs from the previous extraction's: akm extracts (the first counts); link hashes the parent alone, as akm did before folding, the others the folded stream"),
    ("re_extractions", Int, "extractions after the first"),
    ("distinct_prompts", Int, "distinct prompts those extractions send (kept events and preserved refs; Started/Ended header excluded)"),
    ("wasted_extractions", Int, "extractions whose prompt equals the previous extraction's: the hash moved, the prompt did not"),
    ("late_extractions", Int, "extractions at moments after the parent's last event: triggered only by other files' later lines"),
    ("late_results", Int, "background results completed after the parent's last turn (background.completed_after_parent_end)"),
    ("llm_calls", Int, "LLM calls the extractions imply (calls per extraction, summed)"),
    ("wasted_llm_calls", Int, "LLM calls of the wasted extractions"),
)

# --- what delegation costs the agent itself (tokens, wake-ups, repeat reads) -------------------

_USAGE = (
    ("input_tokens", Int, "usage.input_tokens summed over API calls (one per message.id, last line wins)"),
    ("cache_creation_tokens", Int, "usage.cache_creation_input_tokens, summed the same way"),
    ("cache_creation_5m_tokens", Int, "of which cache_creation.ephemeral_5m_input_tokens (0 where absent)"),
    ("cache_creation_1h_tokens", Int, "of which cache_creation.ephemeral_1h_input_tokens (0 where absent)"),
    ("cache_read_tokens", Int, "usage.cache_read_input_tokens, summed the same way"),
    ("output_tokens", Int, "usage.output_tokens, summed the same way (see output_tokens_is_lower_bound)"),
)

TOKENS = Table(
    "tokens", ("session_path", "origin_order"),
    "One row per session x origin: the session's own API usage, one call per message.id (format §6).",
    *_SESSION,
    ("origin", Str, "parent, task_agent, workflow_agent, fork, compaction_helper, side_question, other (subagent files by subagents.kind; "
     "other: unknown), or total; inline sidechain lines of CC 1.x parents count as parent"),
    ("origin_order", Int, "row order of the origin within a session (parent first, total last)"),
    ("files", Int, "transcripts of this origin with at least one API call"),
    ("api_calls", Int, "distinct message.id of assistant lines carrying usage (a line without an id is one call); progress lines never count"),
    *_USAGE,
    ("output_tokens_is_lower_bound", Bool, "true when a call was written by CC 2.1 or later (or no version): its JSONL output_tokens is a streaming placeholder"),
    ("models", Str, "message.model of the calls, sorted, comma-separated"),
    ("naive_lines", Int, "assistant lines carrying usage (what a per-line tool counts as calls)"),
    ("naive_input_tokens", Int, "input_tokens summed over every such line, without dedupe"),
    ("naive_cache_creation_tokens", Int, "cache_creation_tokens summed over every line"),
    ("naive_cache_read_tokens", Int, "cache_read_tokens summed over every line"),
    ("naive_output_tokens", Int, "output_tokens summed over every line"),
    ("progress_usage_lines", Int, "progress lines re-embedding a message with usage (agent_progress; excluded from every sum)"),
)

WAKEUPS = Table(
    "wakeups", ("session_path", "line"),
    "One row per notification the parent consumed as a turn (enqueue -> dequeue -> user line): what the turn it opened cost.",
    *_SESSION,
    ("line", Int, "line of the user line that delivered the notification"),
    ("task_id", Str, "notification task-id / agent-id (hashed under --redact)"),
    ("task_kind", Str, "agent, bash, workflow or other"),
    ("status", Str, "completed, failed, killed, stopped"),
    ("enqueued_at", Str, "timestamp of the matching queue enqueue (ISO, UTC); null when there is none"),
    ("delivered_at", Str, "timestamp of the delivering user line (ISO, UTC)"),
    ("waited_seconds", Float, "delivered_at - enqueued_at, seconds"),
    ("api_calls", Int, "API calls of the turn it opened (first line after it, before the next non-meta turn)"),
    ("input_tokens", Int, "input_tokens of those calls"),
    ("cache_creation_tokens", Int, "cache_creation_tokens of those calls"),
    ("cache_read_tokens", Int, "cache_read_tokens of those calls"),
    ("output_tokens", Int, "output_tokens of those calls (a lower bound on CC 2.1.x)"),
    ("batchable_with_previous", Bool, "enqueued before the previous notification's turn began (seed 003: batch only what is queued at the boundary)"),
    ("batch", Int, "counterfactual batch (1-based): a head and the following notifications enqueued before the head's turn began"),
)

REPEAT_READS = Table(
    "repeat_reads", ("session_path", "line", "task_id"),
    "One row per parent read of background work (TaskOutput, BashOutput, Read of tasks/<id>.output, SendMessage / resume, a task's repeat notification).",
    *_SESSION,
    ("line", Int, "line of the user line holding the result"),
    ("tool", Str, "TaskOutput, BashOutput, Read, SendMessage, Task, Agent, or notification"),
    ("task_id", Str, "task read (hashed under --redact)"),
    ("chars", Int, "UTF-16 length of the result text"),
    ("repeated_chars", Int, "chars of result lines the parent already received for this task (earlier read or notification; trimmed, Read line numbers removed, blank lines never count)"),
    ("repeated_pct", Float, "repeated_chars as % of chars, one decimal"),
)

COST_SESSIONS = Table(
    "cost_sessions", ("session_path",),
    "One row per session: wake-ups, the batching counterfactual and repeat reads, beside the session's calls.",
    *_SESSION,
    ("parent_api_calls", Int, "the parent's API calls (tokens, origin parent)"),
    ("parent_cache_read_tokens", Int, "the parent's cache_read_tokens"),
    ("total_api_calls", Int, "API calls of every origin (tokens, origin total)"),
    ("total_cache_read_tokens", Int, "cache_read_tokens of every origin"),
    ("notifications_enqueued", Int, "queue enqueue lines holding a notification"),
    ("notifications_undelivered", Int, "enqueued notifications matched to no delivered turn (enqueue + remove, or never delivered)"),
    ("wakeup_turns", Int, "rows of wakeups"),
    ("wakeup_calls", Int, "API calls of those turns"),
    ("wakeup_input_tokens", Int, "their input_tokens"),
    ("wakeup_cache_creation_tokens", Int, "their cache_creation_tokens"),
    ("wakeup_cache_read_tokens", Int, "their cache_read_tokens"),
    ("wakeup_output_tokens", Int, "their output_tokens (lower bound on CC 2.1.x)"),
    ("batchable_wakeups", Int, "wake-ups with batchable_with_previous"),
    ("batched_turns", Int, "wake-up turns had every counterfactual batch been one turn"),
    ("batch_saved_calls", Int, "calls of the non-head turns of each batch (assumption: a batch turn costs what its head's turn cost)"),
    ("batch_saved_cache_read_tokens", Int, "cache_read_tokens of those turns"),
    ("batch_saved_tokens", Int, "input + cache_creation + cache_read + output tokens of those turns"),
    ("background_reads", Int, "rows of repeat_reads"),
    ("repeat_reads", Int, "reads with repeated_chars > 0"),
    ("read_chars", Int, "chars of every background read"),
    ("repeated_chars", Int, "repeated chars of every background read"),
    ("repeat_fraction", Float, "repeated_chars / read_chars, four decimals; null without reads"),
)

# --- what link and hybrid lose, and the verdict as a dominance analysis -------------------------

COPY_RULE = (
    "copy: text B copies text A when the word-set Jaccard of the two (#840's word set: lowercase, runs "
    "outside a-z0-9 as one space, words over 3 chars; JSON escapes \\n \\t \\\" undone first) is >= 0.5 "
    "(measure.measurements.delegation.COPY_JACCARD)"
)
"""The one definition of "copy" the delegation columns use."""

DELEGATION = Table(
    "delegation", ("session_path", "subagent_path", "strategy"),
    "One row per subagent transcript x strategy: how its result reached the parent, and what of it reaches the prompt. "
    + COPY_RULE + ".",
    *_SESSION,
    ("subagent_path", Str, "subagent transcript relative to the root"),
    ("agent_id", Str, "file stem (agent-<id>, or journal)"),
    ("kind", Str, "subagents.kind: task_agent, workflow_agent, fork (delegated work), compaction_helper, side_question, workflow_journal or unknown (not counted)"),
    ("delegated", Bool, "kind is task_agent, workflow_agent or fork: counted as delegated work in sessions and verdict"),
    ("launch", Str, "subagents.launch: sync, background, fork, rejected, interrupted or unknown"),
    ("launch_source", Str, "subagents.launch_source: tool_result_ack, tool_result_text, sidecar_tool_use_id, agent_progress or none"),
    ("strategy", Str, "strategy"),
    ("budget", Int, "maxTotalChars"),
    ("result_chars", Int, "UTF-16 chars of the subagent's final report (its last assistant event in time order; 0 if none)"),
    ("delivery", Str, "how the result reached the parent transcript: rejected (the user rejected or interrupted the launch: the result "
     "never reached the parent), tool_result (foreground Task result), notification "
     "(a task/agent notification consumed as a turn; a queue `remove` is not delivery), launch_ack_only (background launch "
     "acknowledged, no result delivered), none (the parent never acknowledges the agent)"),
    ("completed_after_parent", Bool, "the subagent's last timestamped line is later than the parent's last (null when either has none)"),
    ("result_in_prompt", Bool, "a copy of the result reaches one of the strategy's prompts: the subagent's own final event, or a parent "
     "event naming the agent (task-id/agent-id/agentId) that copies it"),
    ("result_chars_in_prompt", Int, "kept UTF-16 chars of those copies, summed (both copies count when both are kept)"),
    ("subagent_chars_in_prompt", Int, "kept chars of this transcript's own events (fold's provenance line excluded)"),
    ("unique_chars_in_prompt", Int, "of those, subagent-only chars: tool calls, tool output and reasoning, plus the prompt (the "
     "first other event) and the report when they copy no parent event naming or launching the agent; a replay's opening "
     "events (subagents.replayed_events) are parent text and never count"),
)

VERDICT = Table(
    "verdict", ("criterion", "strategy"),
    "Run-level dominance (Pareto) analysis: one row per criterion x strategy, plus one decision row (criterion = decision).",
    ("criterion", Str, "parent_chars_evicted (budget eviction), delegated_results_in_prompt, subagent_unique_chars_in_prompt, "
     "inline_refs, llm_calls, calls_per_run_max, prompt_chars; or decision"),
    ("strategy", Str, "strategy; on the decision row the Pareto front, comma-separated in registry order (tied strategies joined by =)"),
    ("better", Str, "lower or higher (null on the decision row)"),
    ("value", Float, "the criterion summed over the run's sessions (calls_per_run_max: from run_cost)"),
    ("sessions", Int, "sessions where the per-session value is non-zero (null for calls_per_run_max and the decision row)"),
    ("best", Bool, "this strategy's value is the best of all strategies on this criterion"),
    ("pareto_front", Bool, "no other strategy is at least as good on every criterion and better on one"),
    ("dominated_by", Str, "strategies that dominate this one, comma-separated (empty when none)"),
    ("identity", Str, "why the value holds by construction, when it does (an identity, not a finding)"),
    ("decision", Str, "decision row only: the strategy that dominates every other (ties go to hybrid, akm's shipped path, "
     "then registry order), trade_off, no_delegated_work (no task agent, workflow agent or fork transcripts) or no_sessions"),
    ("origin", Str, "akm (akm's code or the #840 study) or suite proposal (this suite's, not akm's code): strategies.ORIGIN"),
    ("chosen", Bool, "the strategy the run's priorities choose (the choice table's chosen row); null on the decision row"),
)

CHOICE = Table(
    "choice", ("step",),
    "Run-level: the priorities (--priorities; default `calls_per_run_max<=cap, parent_chars_evicted, inline_refs, "
    "prompt_chars~1%`, #840's reasoning, encoded: measurements.priorities.DEFAULT) applied "
    "step by step to the verdict's totals, the strategy they choose, and each single change that would choose another.",
    ("step", Int, "row order: the walk, then the outcome, then the flips (tolerance flips smallest first)"),
    ("kind", Str, "constraint or criterion (a step of the walk); tie; chosen (exactly one, unless none_feasible); "
     "none_feasible (no strategy meets every constraint); flip_tolerance, flip_swap (two adjacent criteria), flip_insert "
     "(a criterion not listed, just before the deciding one) or flip_drop (a constraint): a change that changes the winner"),
    ("item", Str, "the item (grammar of --priorities): the step's; the deciding one on the chosen row; the item changed, "
     "swapped, inserted or dropped on a flip row"),
    ("priorities", Str, "the whole priorities text this row's outcome comes from (a flip row: the changed one)"),
    ("tolerance", Str, "a criterion's tolerance (absolute, or % of the best); on a flip_tolerance row the new one"),
    ("best", Float, "criterion steps: the best value among the strategies entering the step"),
    ("limit", Float, "the value a survivor must not exceed (lower is better, <=) or fall below (higher, >=): the bound, "
     "or the best plus or minus the tolerance"),
    ("survivors", Str, "strategies left after the step (outcome and flip rows: at the end), comma-separated in registry order"),
    ("eliminated", Str, "strategies the step removed"),
    ("winner", Str, "outcome and flip rows: the strategy chosen (a tie resolved to hybrid, akm's incumbent, when among "
     "them, else by registry order)"),
    ("change", Str, "flip rows: OLD→NEW in the grammar (e.g. prompt_chars~1%→prompt_chars~0.2%)"),
    ("note", Str, "outcome and flip rows: what decided (decided by ITEM, a tie and how it was resolved, none feasible); "
     "the chosen row also says when the root holds no delegated work"),
)

ROBUSTNESS = Table(
    "robustness", ("strategy_a", "strategy_b", "criterion"),
    "Run-level: per pair of strategies (the Pareto front's pairs, and the chosen strategy with each rival at the deciding "
    "step) and per-session criterion, how the run's difference is spread over sessions.",
    ("strategy_a", Str, "A: the chosen strategy in its pairs, else the earlier in registry order"),
    ("strategy_b", Str, "B"),
    ("criterion", Str, "a per-session verdict criterion (calls_per_run_max is run-level and has no row)"),
    ("better", Str, "lower or higher"),
    ("chosen_pair", Bool, "A is the strategy the priorities choose (the pairs the overview's choice rests on)"),
    ("sessions", Int, "sessions measured"),
    ("a_better", Int, "sessions where A is better on the criterion"),
    ("ties", Int, "sessions where A and B have the same value"),
    ("b_better", Int, "sessions where B is better"),
    ("total_difference", Float, "A - B summed over sessions (the verdict's totals' difference)"),
    ("ci_low", Float, "2.5th percentile of the total difference over 2,000 bootstrap resamples of the sessions "
     "(robustness.RESAMPLES, seed robustness.BOOTSTRAP_SEED, sessions in session_path order), one decimal"),
    ("ci_high", Float, "97.5th percentile, one decimal"),
    ("largest_session_path", Str, "the session that carries most of the total (largest difference in its direction); null when the total is 0"),
    ("largest_share", Float, "that session's difference / the total, four decimals"),
    ("rests_on_one_session", Bool, "that session carries >= 50% of the total (so does any session whose removal would change "
     "the total's sign or make it 0)"),
    ("majority_disagrees", Bool, "the total favours one strategy while more sessions favour the other"),
)

# --- breakdowns by project, Claude Code version and month -------------------------------------

SESSION_INFO = Table(
    "session_info", ("session_path",),
    "One row per session: what it can be grouped by (project, Claude Code version, month).",
    *_SESSION,
    ("project", Str, "first folder of session_path: the project folder (hashed under --redact); empty for a session at the root"),
    ("cc_version", Str, "Claude Code version: the `version` most of the parent's lines carry (ties: the newest); the subagents' when the parent has none; null when no line has one"),
    ("cc_versions", Int, "distinct `version` values over the session's files (more than 1: the session spans an upgrade)"),
    ("month", Str, "UTC month (YYYY-MM) of started_at; null when unknown"),
    ("started_at", Str, "akm's startedAt of the session (ISO, UTC)"),
)

BREAKDOWN = Table(
    "breakdown", ("dimension", "value"),
    "Run-level: per project, per Claude Code version and per month, sessions, subagent share, eviction and calls at the run's budget.",
    ("dimension", Str, "project, cc_version or month"),
    ("value", Str, "the project folder (hashed under --redact), version or YYYY-MM; `unknown` when sessions carry none"),
    ("sessions", Int, "sessions in the group"),
    ("sessions_with_subagents", Int, "of which with at least one subagent transcript"),
    ("subagent_files", Int, "subagent transcripts folded (subagents table rows)"),
    ("subagent_chars_pct", Float, "subagent chars as % of parent + subagent chars (subagents.chars vs link's raw_chars), one decimal"),
    ("fold_evicted_chars", Int, "fold's evicted parent chars, summed (eviction table)"),
    ("fold_evicted_pct", Float, "fold_evicted_chars as % of the summed parent chars kept alone, one decimal"),
    ("hybrid_evicted_pct", Float, "the same for hybrid, one decimal"),
    ("llm_calls_link", Int, "calls of link (one per session)"),
    ("llm_calls_chunked", Int, "calls of chunked"),
    ("chunked_multiplier", Float, "llm_calls_chunked / llm_calls_link, two decimals"),
)

TABLES: dict[str, Table] = {t.name: t for t in (
    SESSIONS, EVICTION, DUPLICATES, LLM_CALLS, RUN_COST, BUDGET_SWEEP, SUBAGENTS, ERRORS, QUIRKS,
    BACKGROUND, REPLAY, TOKENS, WAKEUPS, REPEAT_READS, COST_SESSIONS,
    DELEGATION, VERDICT, CHOICE, ROBUSTNESS, SESSION_INFO, BREAKDOWN,
)}

# --- measure extract: real extraction calls and the A/B diff of their candidates ------------
# Written by `measure extract` into its own --out, not by `measure run`: kept out of TABLES
# (which is what every run writes) and listed in EXTRACTION_TABLES.

EXTRACTION_CALLS = Table(
    "extraction_calls", ("session_path", "strategy", "call_index", "sample"),
    "One row per extraction call sent (or reused from the store): session x strategy x call x sample.",
    *_SESSION,
    ("strategy", Str, "strategy whose prompt was sent"),
    ("call_index", Int, "call of the strategy for this session, from 0 (chunked makes several)"),
    ("sample", Int, "sample of the same prompt, from 0 (--samples K)"),
    ("client", Str, "anthropic, openai or command"),
    ("model", Str, "model name sent to the client (a label for command)"),
    ("prompt_sha256", Str, "sha256 of the prompt's UTF-8 (the prompt text itself is never written)"),
    ("prompt_chars", Int, "UTF-16 length of the prompt"),
    ("reply_key", Str, "store key: sha256 of client, model, parameters, prompt digest and sample"),
    ("input_tokens", Int, "input tokens the server reported (null when it reports none, e.g. command)"),
    ("output_tokens", Int, "output tokens the server reported"),
    ("latency_ms", Int, "wall time of the call when it was sent (kept in the store; reruns reuse it)"),
    ("status", Str, "ok, call_failed, invalid_reply (not the template's JSON contract) or not_in_store (offline rebuild)"),
    ("error", Str, "why the call has no candidates (null when ok)"),
    ("candidates", Int, "candidates parsed from the reply (null unless ok)"),
)

EXTRACTION_AB = Table(
    "extraction_ab", ("session_path", "strategy_a", "strategy_b"),
    "One row per session x strategy pair: candidates matched and unique per arm (sample 0), where unique ones come from, sampling noise.",
    *_SESSION,
    ("strategy_a", Str, "first arm (earlier in --strategies)"),
    ("strategy_b", Str, "second arm"),
    ("samples", Int, "samples per prompt (--samples)"),
    ("complete", Bool, "every call of both arms' sample 0 gave candidates; false leaves the counts null"),
    ("candidates_a", Int, "candidates of arm a, sample 0 (summed over its calls)"),
    ("candidates_b", Int, "candidates of arm b, sample 0"),
    ("matched", Int, "one-to-one pairs with word-set Jaccard of title+body >= 0.5 (greedy, best first)"),
    ("unique_a", Int, "candidates of a matched by none of b"),
    ("unique_b", Int, "candidates of b matched by none of a"),
    ("unique_a_inline_ref", Int, "unique to a and restating an inline ref (>= 60% of its words in one ref)"),
    ("unique_a_notification", Int, "unique to a and restating one task notification's text"),
    ("unique_a_subagent_only", Int, "unique to a, its words covered by subagent-origin events and not by the parent"),
    ("unique_a_parent", Int, "unique to a, covered by parent-origin events"),
    ("unique_a_none", Int, "unique to a, covered by no source (>= 60% rule fails everywhere)"),
    ("unique_b_inline_ref", Int, "as unique_a_inline_ref, for b"),
    ("unique_b_notification", Int, "as unique_a_notification, for b"),
    ("unique_b_subagent_only", Int, "as unique_a_subagent_only, for b"),
    ("unique_b_parent", Int, "as unique_a_parent, for b"),
    ("unique_b_none", Int, "as unique_a_none, for b"),
    ("unmatched_pct", Float, "(unique_a + unique_b) / (candidates_a + candidates_b) in %, mean over samples i (a_i vs b_i)"),
    ("noise_a_unmatched_pct", Float, "the same between samples of a's own prompt, mean over sample pairs (null when K < 2)"),
    ("noise_b_unmatched_pct", Float, "the same for b"),
)

EXTRACTION_UNIQUE = Table(
    "extraction_unique", ("session_path", "strategy_a", "strategy_b", "arm", "candidate"),
    "One row per candidate of a complete pair's sample 0 that the other arm did not match (its title is model output "
    "about the transcript: reports show it only with --show-excerpts).",
    *_SESSION,
    ("strategy_a", Str, "first arm of the pair"),
    ("strategy_b", Str, "second arm"),
    ("arm", Str, "a or b: the arm that found it"),
    ("strategy", Str, "that arm's strategy"),
    ("candidate", Int, "its place among the arm's sample-0 candidates, from 0"),
    ("title", Str, "its title, or its title+body text when it has no title (hashed under --redact)"),
)

EXTRACTION_TABLES: dict[str, Table] = {t.name: t for t in (EXTRACTION_CALLS, EXTRACTION_AB, EXTRACTION_UNIQUE)}
