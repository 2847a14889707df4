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
# # Extraction: does the strategy change what the model finds?
#
# Every other page measures a proxy (characters kept, evicted, duplicated). Here the prompts of two
# strategies were sent to a model (`measure extract`; the summary below says which client answered, and
# whether a shell command stood in for the model) for the sessions with the most delegated work,
# and the candidate memories it returned are compared session by session. The question of the #840
# study: does fold find anything that hybrid misses and that is not a restatement of an inline ref
# or of a notification's text, i.e. something only present in subagent-origin events?
#
# Two candidates match when the word-set Jaccard of their title and body is at least 0.5 (one to
# one, best pairs first). A candidate found under one strategy only is attributed to the first
# source that holds at least 60% of its words: an inline ref, a notification, subagent-origin events
# (and not the parent), parent events, or none. With several samples per prompt, the same comparison
# between two samples of one prompt shows how much of the difference is sampling noise.

# %% tags=["parameters"]
sessions_root = "fixtures/default"  # sessions root: repo-relative, ~/..., or absolute
out_dir = None  # a `measure run --out` directory; `measure report --extraction O` copies O to its extraction/
max_total_chars = 80000  # maxTotalChars of akm's pre-filter (unused here)
budgets = [20000, 40000, 80000, 160000, 320000, 640000]  # budget sweep (unused here)
template_path = None  # extraction prompt template (unused here: extract.json records it)
sessions = []  # session ids (or prefixes) to keep; empty keeps all
show_excerpts = False  # show transcript-derived text (titles of candidates found by one arm only)
priorities = None  # the choice's priorities (00-overview's; unused here)

# %%
from measure.report import nbsetup
from measure.report.views import extraction

nbsetup.configure()
x = extraction.load(sessions_root, out_dir=out_dir, show_excerpts=show_excerpts)
extraction.summary(x)

# %% [markdown]
# ## Finding

# %%
extraction.verdict(x)

# %% [markdown]
# ## Per session
#
# `cand.`: candidates of sample 0 (all calls of the strategy); `unique`: matched by no candidate of
# the other arm; `subagent-only`: unique candidates whose words occur in subagent-origin events and
# not in the parent; `unmatched %`: unique candidates of both arms over all candidates (mean over
# samples); `noise %`: the same between two samples of one arm's prompt (empty with one sample).

# %%
extraction.ab_table(x) if x is not None else None

# %%
extraction.sources_bars(x)

# %%
extraction.sources_table(x) if x is not None else None

# %% [markdown]
# ## Calls

# %%
extraction.calls_table(x) if x is not None else None

# %%
extraction.errors(x) if x is not None else None

# %%
extraction.excerpts(x) if x is not None else None
