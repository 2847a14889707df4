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
# # Duplication: do subagent results reach the prompt twice?
#
# A finished subagent's result exists twice: in the subagent's own final event and in the parent's
# `<task-notification>` (or, for a synchronous agent, its Task tool result). Each parent copy is
# paired with its subagent transcript by the first of three methods that applies (the `pairing`
# column):
#
# - `sidecar_tool_use_id`: the top-level sidecar `agent-<id>.meta.json` carries the `toolUseId` the
#   notification names (akm's #840 rule, exact by id; the only #840-comparable pairs);
# - `agent_id_notification`: the notification's `<task-id>` names the agent file;
# - `agent_id_tool_result`: the `agentId:` of the spawning call's tool result names it. A tool
#   result that only acknowledges an asynchronous launch ("Async agent launched successfully…",
#   `toolUseResult.status = async_launched`) holds no copy of the result and is not a pair.
#
# Totals are kept per pairing method and never summed across methods.
#
# Overlap is the word-set Jaccard similarity of the two texts (lower-cased, words longer than three
# characters). "Both in prompt" means both copies survive the fold's pre-filter, i.e. the LLM would
# read the result twice. "A stub would save" is what replacing the parent copy with a one-line
# `[subagent … completed: …]` stub would save in raw characters: a counterfactual per pair, not the
# stub savings of 01-eviction (the parent chars a strategy's stubs did replace in its kept set). The
# last section sets the two side by side.

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
from measure.report.views import common, duplication, published

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
# ## Summary by pairing method

# %%
duplication.duplication_summary(r)

# %%
duplication.pair_totals(r)

# %% [markdown]
# ## Per session

# %%
common.top(duplication.pair_summary(r), what="session × pairing rows", table="duplicates", order="pairing method, then " + common.RELEVANCE_ORDER)

# %% [markdown]
# ## Overlap distribution
#
# How alike the two copies are, per pairing method; pairs whose both copies reach the fold prompt
# are stacked on top in red.

# %%
plots.overlap_histogram(r["duplicates"])

# %% [markdown]
# The most alike pairs (subagent descriptions are shown only with `show_excerpts`).

# %%
duplication.top_pairs(r, 10)

# %% [markdown]
# ## Side by side with the published #840 figures (sidecar pairing)

# %%
published.published_comparison(r, "duplicates")

# %%
published.published_note(r, "duplicates")

# %% [markdown]
# ## What a stub would save, and what was stubbed
#
# The scoped dedupe (#842) and #840's raw stub replace notifications only; *fold + sync dedupe*, a suite
# proposal, replaces a synchronous Task result whose subagent report the fold keeps too, then pre-filters again.

# %%
duplication.stubs_note(r)

# %%
duplication.stubs_table(r)
