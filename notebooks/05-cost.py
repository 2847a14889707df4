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
# # Cost: what does delegation cost the agent itself?
#
# The other pages measure what akm would send to its own LLM. This one reads what the sessions
# spent: the API usage Claude Code recorded, counted once per `message.id` (the last line of each
# id wins; `agent_progress` re-embeds are never counted; subagent spend comes from the subagent
# files). Then two costs of background work: the turns that completion notifications open in the
# parent, and reads of background work that re-send what the parent already held.

# %% tags=["parameters"]
sessions_root = "fixtures/default"  # sessions root: repo-relative, ~/..., or absolute
out_dir = None  # a `measure run --out` directory to read; None measures sessions_root now
max_total_chars = 80000  # maxTotalChars of akm's pre-filter (used when measuring now)
budgets = [20000, 40000, 80000, 160000, 320000, 640000]  # budget sweep (used when measuring now)
template_path = None  # extraction prompt template; None uses the bundled one
sessions = []  # session ids (or prefixes) to keep; empty keeps all
show_excerpts = False  # show transcript-derived text (subagent descriptions)
priorities = None  # the choice's priorities (00-overview shows it); None: the run's, or the default

# %%
from measure.report import nbsetup, plots
from measure.report.views import common, cost

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
# ## Native tokens by origin
#
# `cache write` is cache creation; `output is a lower bound` marks rows with calls from Claude
# Code 2.1 or later, whose transcripts store a streaming placeholder for `output_tokens`.

# %%
cost.tokens_summary(r)

# %%
plots.tokens_by_origin_bars(r["tokens"])

# %%
common.top(cost.tokens_table(r), what="session × origin rows", table="tokens", n=40)

# %% [markdown]
# ## The over-count of per-line sums

# %%
cost.overcount_summary(r)

# %%
plots.naive_overcount_bars(r["tokens"])

# %% [markdown]
# ## Notification wake-ups and their cache reads
#
# A wake-up is a notification the parent consumed as a turn of its own (queue `enqueue`, `dequeue`,
# then the user line). Its cost is the API calls of the turn it opened.

# %%
cost.wakeups_summary(r)

# %%
common.top(cost.wakeups_table(r), what="sessions with notifications", table="cost_sessions", n=40, order="session path")

# %% [markdown]
# ## Batching what is already queued
#
# Seed 003's rule: at a turn boundary, deliver every notification already queued as one turn; no
# waiting window. The saving assumes a batch turn costs what the first turn of its batch cost.

# %%
cost.batching_summary(r)

# %%
plots.wakeup_cost_bars(r["cost_sessions"])

# %% [markdown]
# ## Repeat reads of background work
#
# Reads are `TaskOutput`, `BashOutput`, a `Read` of a task's output file, resumed-agent messages and
# a task's repeat notification. A line counts as repeated when the parent had already received the
# same line for the same task, from an earlier read or from the notification.

# %%
cost.repeat_summary(r)

# %%
plots.repeat_reads_bars(r["cost_sessions"])

# %%
common.top(cost.repeat_table(r), what="sessions that read background work", table="cost_sessions", n=40, order="session path")
