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
# # Eviction: does delegated work push the parent's own content out of the prompt?
#
# akm's pre-filter keeps at most `maxTotalChars` characters, newest first. Folding subagent
# transcripts into the parent's stream makes them compete for that budget. For each session and
# strategy this notebook compares the parent-origin characters kept **with the parent read alone**
# (what `link` sends) against those kept **under the strategy**. The #840 study counted
# evicted = alone − strategy, as a percentage of `max(1, alone)` (one decimal). The dedupe variants also shorten notifications to stubs on purpose, which that difference counts
# too; on this page **eviction** means only parent content that lost its place in the budget to
# subagent text: alone − strategy − stub-shortened chars (the `budget_evicted_chars` column).
# A negative number means the strategy keeps more parent text than the parent alone does (the
# budget pass skips what does not fit and keeps trying older events, so this can happen).

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
from measure.report.views import common, eviction

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
# ## At the run's budget

# %%
eviction.eviction_summary(r)

# %% [markdown]
# Parent-origin characters kept per session: alone (= link) and under each strategy.

# %%
common.top(eviction.parent_kept(r), table="eviction")

# %% [markdown]
# Parent-origin characters evicted per session and strategy (chars and percent): parent content
# that lost its place in the budget to subagent text. Where a strategy shortens notifications to
# stubs, a `stub-shortened (chars)` column shows those chars, which are not counted as eviction.

# %%
common.top(eviction.eviction_table(r), table="eviction")

# %%
plots.eviction_bars(r["eviction"])

# %% [markdown]
# ## Budget sweep: which budget would let fold evict nothing?
#
# The same comparison at every budget of the sweep, pooled over sessions (budget-evicted chars of
# all sessions as a percentage of their parent-alone chars, stub-shortened chars not counted; link
# and chunked are left out, see 03-llm-calls for what chunking keeps). When fold evicts at a smaller budget
# but not from some swept budget on, a dotted line marks that budget; the figure says so instead when fold still
# evicts at the largest budget, or when nothing is evicted at any budget. Raising `maxTotalChars` is a config change,
# but it also makes every prompt larger.

# %%
plots.budget_sweep_curve(r["budget_sweep"])

# %% [markdown]
# Per session: the smallest swept budget from which each strategy evicts no parent content
# (null: it still evicts at the largest budget of the sweep).

# %%
common.top(eviction.zero_eviction_budgets(r), table="budget_sweep")

# %%
eviction.sweep_table(r)
