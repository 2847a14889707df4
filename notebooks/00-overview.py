# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-all
#     formats: ipynb,py:percent
#     notebook_metadata_filter: kernelspec,jupytext,-jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Overview: how should delegated work reach akm's extraction LLM?
#
# akm extracts memories from a Claude Code session by sending **one prompt per session** to an LLM.
# The prompt is built from the session's events after a pre-filter keeps at most `maxTotalChars`
# characters, newest first. When the agent delegates work, each subagent writes its own transcript
# under `<session>/subagents/`, and the parent receives a `<task-notification>` with the result.
# The #840 study compared four ways for that delegated work to reach the LLM:
#
# - **link (C2):** the parent transcript alone; delegated work is visible only through the parent's notifications.
# - **fold (C1):** subagent transcripts merged into the parent's stream (what #830 shipped); *fold + dedupe*
#   also drops a notification when the subagent's own copy is in the same kept set (#842).
# - **hybrid (C3):** inline refs (`akm remember` / `akm feedback`) are harvested from the folded stream,
#   but the prompt is built from parent-origin events only (what #843 implemented).
# - **chunked (C4):** one call per window of at most `maxTotalChars` raw chars of the parent and one per subagent transcript.
#
# Beside them, three **suite proposals** (this suite's, not akm's code), each aimed at a loss the tables measure:
# *fold + sync dedupe* (`fold_dedupe_sync`) applies #842's rule to synchronous Task results, whose copy sits in
# the parent's tool result rather than in a notification; **parent first** keeps the parent's events exactly as
# link keeps them and fills the room left with subagent events, newest first; **hybrid + undelivered** is hybrid
# plus the final report of each delegated subagent whose result never reached the parent (killed, lost, late,
# rejected…), pre-filtered together with the parent's events.
#
# This report recomputes that comparison on the sessions root below. Each number comes from running
# akm's reader, pre-filter and prompt builder (ported to Python) over the transcripts: no LLM is called.

# %% tags=["parameters"]
sessions_root = "fixtures/default"  # sessions root: repo-relative, ~/..., or absolute
out_dir = None  # a `measure run --out` directory to read; None measures sessions_root now
max_total_chars = 80000  # maxTotalChars of akm's pre-filter (used when measuring now)
budgets = [20000, 40000, 80000, 160000, 320000, 640000]  # budget sweep (used when measuring now)
template_path = None  # extraction prompt template; None uses the bundled one
sessions = []  # session ids (or prefixes) to keep; empty keeps all
show_excerpts = False  # show transcript-derived text (subagent descriptions)
priorities = None  # the choice's priorities (grammar of --priorities); None: the run's, or the default

# %%
from measure.report import nbsetup, plots
from measure.report.views import common, decision, overview, published

nbsetup.configure()
r = common.load(
    sessions_root,
    out_dir,
    max_total_chars=max_total_chars,
    budgets=budgets,
    template_path=template_path,
    sessions=sessions,
    show_excerpts=show_excerpts,
    priorities=priorities,
)
common.run_summary(r)

# %% [markdown]
# ## The choice under stated priorities
#
# A Pareto front rarely names one strategy: criteria that pull apart by nature (prompt size against
# delegated content) leave most strategies on it. The `choice` table applies an order of priorities
# instead: constraints first, then each criterion in order keeps the strategies within its tolerance of
# the best, until one is left. The default encodes #840's own reasoning: one call per session within akm's
# cap of sessions per run, then no parent-origin eviction, then the same inline refs as fold, then prompt
# size within 1% of the best. Below it, the smallest single changes that would choose another strategy,
# and how general each difference the choice rests on is, session by session.

# %%
decision.choice(r)

# %%
plots.tradeoff(r["verdict"])

# %%
decision.robustness_table(r)

# %%
plots.win_tie_loss(r["robustness"])

# %% [markdown]
# ## What the data supports without priorities
#
# The decision is a dominance (Pareto) analysis over the whole run, read from the `verdict` table: a
# strategy is named only if it is at least as good as every other on every criterion and better than
# each on one; otherwise the page names the trade-off. The criteria measure both sides: what fold loses
# (parent-origin chars *evicted*: kept when the parent is read alone, dropped under the strategy because
# subagent text took their place in the budget; stub savings are not eviction) and what link and hybrid
# lose (delegated results that never reach their prompt, subagent-only content they never send), plus
# inline refs, LLM calls (per session and per akm run) and prompt size. A value that holds by
# construction is labelled as an identity.

# %%
decision.verdict(r, out_dir)

# %%
decision.verdict_matrix(r)

# %% [markdown]
# ## Headline table
#
# One row per session. `link` … `hybrid`: characters of the prompt each strategy sends
# (`fold+dedupe` is the scoped dedupe of #842). `fold evicted` / `fold evicted %`: parent-origin
# characters the fold loses against the parent read alone. `refs …`: inline refs listed in the
# prompt as already preserved. `subagent files`: transcripts folded under `subagents/` (recursive).

# %%
common.top(overview.headline(r), table="sessions")

# %%
plots.eviction_bars(r["eviction"])

# %% [markdown]
# ## Side by side with the published #840 figures
#
# When the root is the #840-shaped fixture, each session gets three rows: the figure recomputed here,
# the figure published in the #840 study, and the difference.

# %%
published.published_comparison(r, "headline")

# %%
published.published_note(r, "headline")

# %% [markdown]
# ## Errors
#
# Everything that could not be read fully, with the reason. Nothing is skipped silently.

# %%
overview.errors(r)

# %% [markdown]
# ## Subagent inventory
#
# Each transcript under `subagents/` gets a kind: from its name and sidecar (compaction helpers, side
# questions, workflow agents, forks), else from its launch in the parent (a task agent), else from its content
# (one that opens with the parent's own opening events replays the parent: a side question), else `unknown`.
# Task agents, workflow agents and forks are delegated work; the other kinds are listed and never counted as such.

# %%
overview.classification_note(r)

# %% [markdown]
# How each transcript was launched (sync, background, fork, or rejected / interrupted by the user) and which
# record of the parent named the launch: its tool result (`toolUseResult` or the result text's `agentId:` line),
# the sidecar's `toolUseId`, or the parent's `agent_progress` lines.

# %%
overview.launches(r)

# %% [markdown]
# Per session and kind: size, whether the `.meta.json` sidecar was usable, how many ran in the
# background, how many launches were resolved, and how many task notifications in the parent name them.

# %%
common.top(overview.subagent_inventory(r), what="session × kind rows", table="subagents")

# %% [markdown]
# ### Legacy agent transcripts listed as sessions
#
# A subagent transcript written beside its parent as `agent-<id>.jsonl` (the layout before
# `<session>/subagents/`) is listed by akm as a session of its own. `measure` keeps akm's
# behaviour and marks those sessions (`legacy_agent` in the sessions table).

# %%
overview.legacy_agent_note(r)

# %%
common.top(overview.legacy_agent_sessions(r), table="sessions")

# %% [markdown]
# ## By project, Claude Code version and month
#
# Sessions grouped by project folder, by the Claude Code version their transcript lines carry, and by
# the month they started: how many have subagents, what share of the characters subagents wrote, the
# parent-origin content fold and hybrid evict (as % of the group's parent content kept alone), and
# the calls of link and chunked. `unknown`: sessions whose lines carry no version or no timestamp.

# %%
display(overview.breakdown(r))
plots.breakdown_bars(r["breakdown"])

# %% [markdown]
# ## akm quirks that fired
#
# The port reproduces a few akm behaviours that are almost certainly unintended (for example `$`
# patterns in prompt substitution); this counts how often they changed what would be sent.

# %%
overview.quirks(r)
