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
# # Background tasks: launch stubs, late completions, and what akm re-extracts
#
# A background agent, forked skill, background Bash or workflow is acknowledged seconds after its
# launch; its real result arrives later, out of band, as a `<task-notification>` — or not at all.
# Meanwhile its subagent transcript keeps growing, possibly after the parent's last turn. akm's
# content hash covers the whole folded stream, so those late lines move the hash and trigger a new
# extraction even for hybrid, whose prompt holds only the parent's events.

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
from measure.report.views import background, common

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
    replay="turn_end",  # used when measuring now; a report's run replays with its --replay-at
)
common.run_summary(r)

# %% [markdown]
# ## Launch stub vs true run time
#
# `stub`: launch → the tool result that acknowledges it; `run`: launch → the first notification's
# `enqueue`, else the subagent transcript's last line. Diamonds completed after the parent's last turn.

# %%
background.background_summary(r)

# %%
common.top(background.stub_table(r), what="task kinds", table="background", order="kind")

# %%
plots.stub_vs_run(r["background"])

# %% [markdown]
# ## Deliveries by kind and Claude Code version
#
# `turn`: the notification became a user turn; `removed`: `enqueue` then `remove` with no user line;
# `never`: neither (still queued when the files end, or no notification written).

# %%
common.top(background.deliveries_table(r), what="kind × version rows", table="background", order="kind, then Claude Code version")

# %%
plots.deliveries_bars(r["background"])

# %%
background.delivery_summary(r)

# %% [markdown]
# ## Results never delivered

# %%
common.top(background.undelivered_table(r), what="undelivered tasks", table="background", n=40, order="session path")

# %% [markdown]
# ## Results after the parent's last turn

# %%
common.top(background.late_table(r), what="late tasks", table="background", n=40, order="session path")

# %% [markdown]
# ## What akm would extract while the session is written
#
# The replay cuts every file at each moment and runs akm's pipeline; per strategy, summed over sessions.

# %%
background.replay_summary(r)

# %%
common.top(background.replay_table(r), what="strategies", table="replay", order="strategy")

# %%
plots.replay_bars(r["replay"])
