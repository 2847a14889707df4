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
# # LLM calls: what does chunked extraction cost?
#
# link, fold, fold + dedupe and hybrid send one prompt per session. Chunked extraction sends one
# prompt per parent window of at most `maxTotalChars` raw characters, plus one per subagent
# transcript. It can keep much more parent-origin content, at the price of many calls. akm bounds
# a run by `maxSessionsPerRun` (default 25 sessions), so the cost that matters is the calls per run.

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
from measure.report.views import common, llm_calls, published

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

# %%
llm_calls.calls_summary(r)

# %% [markdown]
# Sessions akm's `minContentChars` gate skips (fewer than 10 chars of raw text: the full folded
# stream, or the parent alone for link): they cost no call and are left out of every call count.

# %%
common.top(llm_calls.skipped_sessions(r), table="sessions")

# %% [markdown]
# ## Calls per session and strategy

# %%
common.top(llm_calls.calls_table(r), table="llm_calls")

# %%
plots.llm_calls_bars(r["llm_calls"])

# %% [markdown]
# ## Parent content recovered by chunking
#
# `parent chars across chunks`: parent-origin characters kept summed over all chunk prompts;
# `baseline parent chars`: what one parent-alone call keeps; `recovered ×`: their ratio.

# %%
common.top(llm_calls.chunking_table(r), table="llm_calls")

# %%
published.published_comparison(r, "chunking")

# %%
published.published_note(r, "chunking")

# %% [markdown]
# ## Cost under the per-run session cap
#
# Sessions are processed newest-ended first in batches of the session cap; "calls per run (max)" is
# the most expensive batch, "max calls per run / cap" its calls over the cap, and "max calls per run /
# single-call strategy's" its calls over the most expensive batch of a single-call strategy (the
# fairer comparison when the root holds fewer sessions than the cap). Computed over the sessions
# this page shows.

# %%
llm_calls.run_cost_table(r)

# %%
plots.run_cost_bars(r["run_cost"])
