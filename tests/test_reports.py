"""measure.report.build (the papermill driver) and measure.report_views (what the notebooks show).

- two report runs on the same root give byte-identical notebooks, HTML, CSVs, figures and params;
- a failing notebook fails naming the notebook and the cell (error, timeout, dead kernel);
- normalization strips exactly the volatile fields;
- the views compute what the notebooks claim, from small hand-made tables.
"""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import nbformat
import polars as pl
import pytest
import yaml

from measure import paths
from measure.measurements.strategies import STRATEGIES
from measure.report import build as report_build
from measure.report import notebooks, shaping, style
from measure.report.views import (
    common,
    cost,
    decision,
    duplication,
    eviction,
    llm_calls,
    overview,
    published,
)
from measure.runner.tables import write_tables

try:
    from test_plots import small_tables, with_verdict
except ImportError:  # collected as a package
    from tests.test_plots import small_tables, with_verdict

HEADER = textwrap.dedent(
    """\
    # ---
    # jupyter:
    #   kernelspec:
    #     display_name: Python 3 (ipykernel)
    #     language: python
    #     name: python3
    # ---
    """
)


def _notebook(directory: Path, name: str, body: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.py"
    path.write_text(HEADER + textwrap.dedent(body), encoding="utf-8")
    return path


def _files(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------------------------------------
# Determinism of a whole report
# ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_two_reports_on_the_same_root_are_byte_identical(parity_root, tmp_path):
    out = tmp_path / "reports" / "projects"
    build = tmp_path / "build"
    logs: list[str] = []
    kwargs = dict(budgets=[4_000, 8_000], build_dir=build, cache=False, log=logs.append)
    report_build.report(parity_root / "projects", out, **kwargs)
    first = _files(out)
    report_build.report(parity_root / "projects", out, **kwargs)
    second = _files(out)

    stems = [p.stem for p in notebooks.notebook_sources()]
    expected = {f"{s}.{ext}" for s in stems for ext in ("ipynb", "html")}
    expected |= {f"params/{s}.yaml" for s in stems} | {"run.json", "index.html", ".measure-output.json"}
    from measure.report import plots
    from measure.schema import TABLES

    expected |= {f"figures/{name}.png" for name in plots.FIGURES}  # every registered figure
    expected |= {f"tables/{name}.csv" for name in TABLES}  # every table of the run
    assert set(first) == expected
    assert first.keys() == second.keys()
    different = sorted(k for k in first if first[k] != second[k])
    assert different == []

    # Nothing machine-specific or time-specific in what a reader gets.
    for name, data in first.items():
        if name.endswith((".ipynb", ".html", ".yaml", ".json", ".csv")):
            text = data.decode("utf-8")
            assert str(paths.root()) not in text, name
            assert str(Path.home()) + "/" not in text, name
    nb = nbformat.reads(first[f"{stems[0]}.ipynb"].decode(), as_version=4)
    assert "papermill" not in nb.metadata
    assert [c.id for c in nb.cells] == [str(i) for i in range(len(nb.cells))]
    html = first[f"{stems[0]}.html"].decode()
    assert "common.load(" not in html  # code cells are not rendered (--no-input)
    params = yaml.safe_load(first[f"params/{stems[0]}.yaml"])
    assert params["budgets"] == [4_000, 8_000] and params["show_excerpts"] is False
    injected = next(c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
    scope: dict = {}
    exec(injected.source, scope)  # noqa: S102 - our own generated cell
    assert {k: scope[k] for k in params} == params
    assert any(line.startswith("[1/") and "ok" in line for line in logs)


def test_report_tables_are_the_run_tables(tmp_path):
    tables = small_tables()
    run_dir = tmp_path / "run"
    write_tables(tables, run_dir)
    (run_dir / "run.json").write_text("{}\n")
    r = common.load("fixtures/default", run_dir)
    assert set(r.tables) == set(tables)
    for name, df in tables.items():
        assert r[name].equals(df), name


@pytest.mark.slow
def test_figures_are_the_notebooks_and_one_no_notebook_shows_is_drawn_alike(tmp_path):
    """build.save_figures: the report's figures are the PNGs the golden notebooks show; leave notebooks
    out and the figures they showed are drawn from the run's tables, byte for byte the same."""
    from measure.measurements.budget_sweep import DEFAULT_BUDGETS
    from measure.report import plots
    from measure.report.build import save_figures
    from measure.runner.job import RunParams
    from measure.runner.run import run_measurement

    params = RunParams.from_options(budgets=DEFAULT_BUDGETS, replay="turn_end", file_time_ms=paths.FIXTURE_FILE_TIME_MS)
    run_measurement(paths.root() / "fixtures" / "default", tmp_path / "run", params, jobs=1)
    goldens = sorted((paths.root() / "tests" / "golden").glob("*.ipynb"))
    save_figures(goldens, tmp_path / "shown", tmp_path / "run")
    save_figures(goldens[2:], tmp_path / "drawn", tmp_path / "run")  # 00-overview and 01-eviction left out
    shown = {p.name: p.read_bytes() for p in (tmp_path / "shown").iterdir()}
    assert sorted(shown) == sorted(f"{name}.png" for name in plots.FIGURES)
    assert shown == {p.name: p.read_bytes() for p in (tmp_path / "drawn").iterdir()}


# ------------------------------------------------------------------------------------------------
# Failures name the notebook and the cell
# ------------------------------------------------------------------------------------------------

BROKEN = """
# %% [markdown]
# # A notebook that fails

# %% tags=["parameters"]
x = 1

# %%
y = x + 1

# %%
raise ValueError(f"boom {y}")

# %%
print("never")
"""

OK = """
# %% tags=["parameters"]
x = 1

# %%
print(x * 2)
"""


@pytest.mark.slow
def test_a_failing_cell_is_named_and_the_other_notebooks_still_run(tmp_path):
    sources = [_notebook(tmp_path / "nb", "a-broken", BROKEN), _notebook(tmp_path / "nb", "b-ok", OK)]
    out = tmp_path / "out"
    with pytest.raises(notebooks.ReportError) as info:
        notebooks.run_notebooks(sources, {"x": 41}, out, build_dir=tmp_path / "build", log=lambda _m: None)
    (failure,) = info.value.failures
    assert failure.notebook.endswith("a-broken.py")
    assert failure.cell == 3  # markdown 0, parameters 1, `y = ...` 2, the raise 3
    lines = sources[0].read_text().splitlines()
    assert lines[failure.line - 1] == "# %%" and lines[failure.line] == 'raise ValueError(f"boom {y}")'
    assert failure.kind == "error"
    assert "ValueError: boom 42" in failure.message
    text = str(info.value)
    assert f"a-broken.py:{failure.line}: cell 3 failed (error): ValueError: boom 42" in text
    assert (out / "b-ok.ipynb").exists() and (out / "b-ok.html").exists()
    assert (out / "a-broken.ipynb").exists()  # the partial notebook is kept for the reader
    assert not (out / "a-broken.html").exists()


def test_kernels_run_over_ipc_in_a_folder_of_their_own_without_the_tcp_warning(tmp_path, capfd):
    # Never the kernel's working folder (the repository), where a killed report would leave its
    # sockets and two reports at once would race for their names.
    where = '\n# %%\nfrom ipykernel.connect import get_connection_info\nprint(get_connection_info(unpack=True))\n'
    source = _notebook(tmp_path / "nb", "ok", OK + where)
    out = tmp_path / "out"
    notebooks.run_notebooks([source], {"x": 1}, out, build_dir=tmp_path / "build", html=False, log=lambda _m: None)
    err = capfd.readouterr().err  # the kernel writes to this process's stderr (fd 2)
    assert "without encryption" not in err and "Kernel is running over TCP" not in err
    printed = nbformat.read(out / "ok.ipynb", as_version=4).cells[-1].outputs[0].text
    connection = ast.literal_eval(printed)
    sockets = Path(connection["ip"]).parent
    assert connection["transport"] == "ipc" and sockets.is_absolute() and sockets.name.startswith("measure-kernel-")
    assert not sockets.exists()  # removed with the kernel


def test_the_kernels_own_log_never_reaches_the_terminal(tmp_path, capfd):
    # jupyter_client interrupts each kernel before shutting it down, and a kernel still busy logs
    # that as an ERROR: the report's stderr must not carry the kernel's log (failures come through papermill).
    source = _notebook(tmp_path / "nb", "logs", OK + '\n# %%\nget_ipython().kernel.log.error("the kernel logs an error")\n')
    notebooks.run_notebooks([source], {"x": 1}, tmp_path / "out", build_dir=tmp_path / "build", html=False, log=lambda _m: None)
    assert "the kernel logs an error" not in capfd.readouterr().err


def test_kernels_fall_back_to_tcp_when_the_socket_path_is_too_long(tmp_path):
    assert notebooks._kernel_config(Path("/tmp/measure-kernel-x")).KernelManager.ip == "/tmp/measure-kernel-x/kernel"
    assert notebooks._kernel_config(tmp_path / ("r" * 100)).KernelManager.transport == "tcp"


@pytest.mark.slow
def test_a_cell_timeout_is_named(tmp_path):
    source = _notebook(
        tmp_path / "nb",
        "slow",
        """
        # %% tags=["parameters"]
        x = 1

        # %%
        import time
        time.sleep(60)
        """,
    )
    with pytest.raises(notebooks.ReportError) as info:
        notebooks.run_notebooks([source], {}, tmp_path / "out", build_dir=tmp_path / "build", timeout=3, log=lambda _m: None)
    (failure,) = info.value.failures
    assert (failure.notebook.endswith("slow.py"), failure.cell, failure.kind) == (True, 1, "timeout")
    assert "slow.py" in str(info.value) and "cell 1" in str(info.value)


@pytest.mark.slow
def test_a_dead_kernel_is_named(tmp_path):
    source = _notebook(
        tmp_path / "nb",
        "dies",
        """
        # %% tags=["parameters"]
        x = 1

        # %%
        print("alive")

        # %%
        import os
        os._exit(1)

        # %%
        print("never runs")
        """,
    )
    with pytest.raises(notebooks.ReportError) as info:
        notebooks.run_notebooks([source], {}, tmp_path / "out", build_dir=tmp_path / "build", timeout=30, log=lambda _m: None)
    (failure,) = info.value.failures
    assert failure.notebook.endswith("dies.py") and failure.kind == "dead_kernel"
    assert failure.cell == 2


# ------------------------------------------------------------------------------------------------
# Normalization and parameters
# ------------------------------------------------------------------------------------------------


def test_normalize_strips_volatile_fields_and_keeps_outputs():
    nb = nbformat.v4.new_notebook()
    nb.metadata.update(
        papermill={"start_time": "2026-01-01T00:00:00", "parameters": {"a": 1}},
        widgets={"x": 1},
        jupytext={"formats": "ipynb,py:percent"},
        kernelspec={"name": "python3", "display_name": "Python 3", "language": "python"},
        language_info={"name": "python", "version": "3.11.7"},
    )
    cell = nbformat.v4.new_code_cell("1 + 1", execution_count=3)
    cell.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=3)]
    cell.metadata.update(papermill={"duration": 0.1}, execution={"iopub.status.busy": "2026"}, tags=["x"])
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), cell]
    out = notebooks.normalize(nb)
    assert set(out.metadata) == {"kernelspec", "language_info"}
    assert out.metadata.language_info == {"name": "python"}
    assert [c.id for c in out.cells] == ["0", "1"]
    assert out.cells[1].metadata == {"tags": ["x"]}
    assert out.cells[1].execution_count == 3 and out.cells[1].outputs[0]["data"] == {"text/plain": "2"}


def test_build_is_stable_and_carries_no_pairing_metadata(tmp_path):
    source = notebooks.notebook_sources()[0]
    a = notebooks.build_notebook(source, tmp_path / "a")
    b = notebooks.build_notebook(source, tmp_path / "b")
    assert a.read_bytes() == b.read_bytes()
    nb = nbformat.read(a, as_version=4)
    assert set(nb.metadata) == {"kernelspec"} and nb.metadata.kernelspec.name == "python3"
    assert (nb.nbformat, nb.nbformat_minor) == (4, 5)


def test_report_parameters_are_plain_and_repo_relative():
    params = report_build.report_parameters(
        paths.root() / "fixtures" / "default", paths.root() / "build" / "runs" / "default", budgets=[1, 2]
    )
    assert params == {
        "sessions_root": "fixtures/default",
        "out_dir": "build/runs/default",
        "max_total_chars": 80_000,
        "budgets": [1, 2],
        "template_path": None,
        "sessions": [],
        "show_excerpts": False,
        "priorities": None,
    }
    assert json.loads(json.dumps(params)) == params


def test_nbclient_options_are_real_traits():
    from nbclient import NotebookClient

    assert set(notebooks.NBCLIENT_OPTIONS) <= set(NotebookClient.class_trait_names())  # nbclient ignores a misspelt one


# ------------------------------------------------------------------------------------------------
# Views: what the notebooks claim
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_report():
    return common.Report(tables=small_tables(), sessions_root="fixtures/default")


def test_headline_columns_and_values(small_report):
    h = small_report and overview.headline(small_report)
    assert h.columns == [
        "session", "subagent files", "link", "fold", "fold+dedupe", "hybrid",
        "fold evicted", "fold evicted %", "refs link", "refs fold", "refs hybrid",
    ]
    assert h["session"].to_list() == ["11111111", "22222222"]
    assert h["fold evicted"].to_list() == [20_000, 0]
    assert h["fold evicted %"].to_list() == [25.0, 0.0]
    assert h["refs link"].to_list() == [1, 1] and h["refs hybrid"].to_list() == [5, 5]


def _with_delegation(r: common.Report, **by_strategy) -> common.Report:
    """small_report with the delegated-work columns of `sessions` filled in, per strategy (results, unique chars)."""
    s = r.tables["sessions"]
    results = {k: v[0] for k, v in by_strategy.items()}
    unique = {k: v[1] for k, v in by_strategy.items()}
    s = s.with_columns(
        pl.lit(2).alias("delegated_transcripts"),
        pl.lit(2).alias("delegated_results"),
        pl.col("strategy").replace_strict(results, default=0, return_dtype=pl.Int64).alias("delegated_results_in_prompt"),
        pl.col("strategy").replace_strict(unique, default=0, return_dtype=pl.Int64).alias("subagent_unique_chars_in_prompt"),
    )
    return common.Report(tables=with_verdict({**r.tables, "sessions": s}), sessions_root=r.sessions_root)


def test_verdict_is_computed_from_the_tables(small_report):
    text = decision.verdict(small_report).data  # the small tables hold no delegated work
    assert text.startswith("**No delegated work under this root** (2 session(s))")
    s = small_report.tables["sessions"]
    sent = {x: f"{s.filter(pl.col('strategy') == x)['prompt_chars'].sum():,}" for x in ("link", "fold", "hybrid")}
    assert (f"The single-call strategies send {sent['link']} (link), {sent['fold']} (fold) and {sent['hybrid']} (hybrid) "
            "prompt chars in all.") in text
    r = _with_delegation(small_report, fold=(2, 5_000), hybrid=(1, 0), link=(1, 0), chunked=(2, 5_000))
    v = r["verdict"]
    assert v.filter(pl.col("criterion") == "decision")["decision"].to_list() == ["trade_off"]
    text = decision.verdict(r).data
    assert text.startswith("**No strategy dominates on this root: the data shows a trade-off**")
    assert "- **fold or hybrid.** fold gets 2 more delegated results into the prompt (4 vs 2); sends 10,000 more chars of " \
        "subagent-only content (10,000 vs 0) — while hybrid evicts 20,000 fewer parent-origin chars (budget eviction: 0 vs " \
        "20,000, fold evicting in 1 session(s))" in text
    assert "- **Dominated.** fold_dedupe_scoped (by fold, hybrid); fold_stub_raw (by fold, hybrid); link (by hybrid)." in text
    assert "chunked 10." in text  # chunked's refs are not 0 here, so no identity is claimed for them
    assert "hybrid 0 *(identity: hybrid's prompt events are link's kept set: 0 by construction)*" in text
    # Duplication per pairing method, never summed across methods (#10 defect 3)
    assert "`agent_id`: 1 pairs, 0 with both copies in the fold prompt" in text
    assert "`sidecar_tool_use_id`: 2 pairs, 1 with both copies in the fold prompt, 1,920 raw chars a stub would save" in text


def test_the_decision_changes_with_the_data(small_report):
    # subagents add nothing hybrid lacks: fold only evicts, chunked only costs, link lists fewer refs
    r = _with_delegation(small_report, fold=(1, 0), hybrid=(1, 0), link=(1, 0), chunked=(1, 0), fold_dedupe_scoped=(1, 0),
                         fold_stub_raw=(1, 0))
    s = r.tables["sessions"].with_columns(
        pl.when(pl.col("strategy") == "link").then(pl.lit(90_000)).otherwise(pl.col("prompt_chars")).alias("prompt_chars")
    )
    r = common.Report(tables=with_verdict({**r.tables, "sessions": s}))
    assert decision.verdict(r).data.startswith("**The data supports hybrid (C3)**")
    # the decision printed is the verdict table's, whatever it says
    v = r["verdict"].with_columns(
        pl.when(pl.col("criterion") == "decision").then(pl.lit("fold")).otherwise(pl.col("decision")).alias("decision")
    )
    assert decision.verdict(common.Report(tables={**r.tables, "verdict": v})).data.startswith("**The data supports fold (C1)**")
    empty = with_verdict({k: df.clear() for k, df in r.tables.items()})
    assert decision.verdict(common.Report(tables=empty, sessions_root="x")).data.startswith("**No sessions were measured")


def test_published_figures_only_for_the_840_fixture(small_report):
    note = published.published_comparison(small_report)
    assert "not the #840-shaped fixture" in note.data
    ids = {"11111111-aaaa-4000-8000-000000000001": "4f7f80f8-f0bc-4709-9534-f8b6ea18b2f2",
           "22222222-bbbb-4000-8000-000000000002": "578b2d47-2382-4593-9423-950c7f4826f1"}
    tables = {k: (v.with_columns(pl.col("session_id").replace(ids)) if "session_id" in v.columns else v)
              for k, v in small_report.tables.items()}
    assert not published.is_840_fixture(common.Report(tables=tables))  # two of the four sessions only
    extra = {**ids, "x": "f798f45f-af76-4566-a0cb-5a0c52c76526", "y": "393273fd-d81c-47cb-9132-99912f15a35c"}
    tables["sessions"] = pl.concat([
        tables["sessions"],
        tables["sessions"].head(2).with_columns(pl.Series("session_id", [extra["x"], extra["y"]])),
    ])
    r = common.Report(tables=tables)
    assert published.is_840_fixture(r)
    side = published.published_comparison(r)
    assert side["source"].to_list()[:3] == ["here", "#840", "Δ"]
    assert side.filter(pl.col("source") == "#840")["link"].to_list() == [92_678, 92_044, 93_395, 91_573]
    first = side.filter(pl.col("session") == "4f7f80f8")
    assert first["link"].to_list() == [90_000, 92_678, None]  # bundled template: no Δ of absolute prompt chars
    assert first["fold − link"].to_list() == [500, 97_529 - 92_678, 500 - (97_529 - 92_678)]


def test_eviction_views(small_report):
    z = eviction.zero_eviction_budgets(small_report)
    assert z.columns == ["session", "fold", "fold_dedupe_scoped", "fold_stub_raw", "hybrid"]
    assert z.row(0) == ("11111111", 160_000, 160_000, 160_000, 20_000)
    curve = shaping.sweep_curve(small_report["budget_sweep"])
    fold = curve.filter(pl.col("strategy") == "fold").sort("budget")
    assert fold["evicted_pct"].to_list() == [22.5, 15.0, 12.5, 0.0]  # pooled over both sessions
    assert "fold evicts nothing in any session from maxTotalChars = 160,000" in eviction.eviction_summary(small_report).data


def test_duplication_and_call_views(small_report):
    totals = duplication.pair_totals(small_report)
    assert totals["pairing"].to_list() == ["agent_id", "sidecar_tool_use_id"]
    assert totals["both in prompt"].to_list() == [0, 1]
    assert "description" not in duplication.top_pairs(small_report).columns
    shown = common.Report(tables=small_report.tables, show_excerpts=True)
    assert "description" in duplication.top_pairs(shown).columns
    chunk = llm_calls.chunking_table(small_report)
    assert chunk["recovered ×"].to_list() == [3.8, 3.8]  # 300,000 across chunks vs 80,000 in one call
    measured = set(small_report.tables["run_cost"]["strategy"])  # the small tables predate fold_dedupe_sync
    assert llm_calls.run_cost_table(small_report)["strategy"].to_list() == [x for x in style.STRATEGY_ORDER if x in measured]


def test_cost_views(small_report):
    t = cost.tokens_table(small_report)
    assert t["origin"].to_list() == ["parent", "task agents", "total", "parent", "total"]
    assert t["per-line ÷ deduplicated tokens"].to_list() == [2.0] * 5
    assert "790,240 tokens" in cost.tokens_summary(small_report).data  # 700,000 + 16 x 12 + 90,000 + 4 x 12
    assert "(2.0×)" in cost.overcount_summary(small_report).data
    w = cost.wakeups_table(small_report)
    assert w["session"].to_list() == ["11111111"] and w["% of parent cache read"].to_list() == [30.0]
    assert "**3 notifications** woke a parent in 1 sessions" in cost.wakeups_summary(small_report).data
    assert "need 2 turns instead of 3 and save **1 calls** and 40,000" in cost.batching_summary(small_report).data
    assert cost.repeat_table(small_report)["% repeated"].to_list() == [40.0]
    assert "**40.0% of those chars** (4,000)" in cost.repeat_summary(small_report).data


def test_breakdown_view_orders_each_dimension():
    from test_plots import _breakdown

    r = common.Report(tables={**small_tables(), "breakdown": _breakdown()})
    view = overview.breakdown(r)
    assert view.columns[:3] == ["by", "value", "sessions"]
    assert view["by"].unique(maintain_order=True).to_list() == ["project", "Claude Code version", "month"]
    assert view.filter(pl.col("by") == "project")["sessions"].to_list() == [3, 2, 1]  # most sessions first
    assert view.filter(pl.col("by") == "month")["value"].to_list() == ["2026-01", "2026-02"]


def test_pandas_view_of_every_table(small_report):
    pd = pytest.importorskip("pandas")
    frames = small_report.pandas()
    assert set(frames) == set(small_report.tables)
    ev = small_report.pandas("eviction")
    assert list(ev.columns) == small_report["eviction"].columns and len(ev) == small_report["eviction"].height
    assert isinstance(ev["evicted_chars"].dtype, pd.ArrowDtype)  # Arrow-backed: the numbers are not copied
    assert ev["evicted_chars"].tolist() == small_report["eviction"]["evicted_chars"].to_list()
    assert ev[ev["strategy"] == "fold"]["evicted_chars_pct"].max() == 25.0
    with pytest.raises(KeyError, match="no table 'nope'"):
        small_report.pandas("nope")


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    """fixtures/default measured by `measure run` (no --session), as a report's run directory."""
    from measure.runner.job import RunParams
    from measure.runner.run import run_measurement

    run_dir = tmp_path_factory.mktemp("default") / "run"
    run_measurement("fixtures/default", run_dir, RunParams(file_time_ms=paths.FIXTURE_FILE_TIME_MS), jobs=1)
    return run_dir


SESSION = "ba23a864-03d9-4a85-a1b4-3f4608d2bbda"
"""A session of fixtures/default."""


@pytest.mark.parametrize("value", [SESSION[:6], f"-Users-dana-src-ridgeback/{SESSION}.jsonl"])
def test_sessions_of_a_run_made_for_all_are_measured_again_with_their_run_level_tables(default_run, value):
    r = common.load("fixtures/default", default_run, sessions=[value])
    assert set(r["sessions"]["session_id"].to_list()) == {SESSION}  # by id prefix or by path
    assert r.run["parameters"]["sessions"] == [value]
    assert r["run_cost"]["sessions"].to_list() == [1] * len(STRATEGIES)  # computed by measure run over that session alone
    assert r["verdict"].equals(with_verdict(dict(r.tables))["verdict"])  # over the sessions shown
    assert r["breakdown"].filter(pl.col("dimension") == "month")["sessions"].sum() == 1
    assert common.load("fixtures/default", default_run)["run_cost"]["sessions"].to_list() == [30] * len(STRATEGIES)


def test_the_classification_and_the_stubs_are_stated_from_the_tables(default_run):
    r = common.load("fixtures/default", default_run)
    sub, s = r["subagents"], r["sessions"]
    text = overview.classification_note(r).data
    delegated = sub.filter(pl.col("kind").is_in(["task_agent", "workflow_agent", "fork"])).height
    assert text.startswith(f"**{sub.height} subagent transcripts, {delegated} counted as delegated work**")
    assert delegated == s.filter(pl.col("strategy") == "fold")["delegated_transcripts"].sum()
    assert "- 1 side question: replays of the parent conversation" in text and "- 2 compaction helpers:" in text
    assert "- 2 delegated transcript(s) whose launch the user rejected or interrupted" in text
    launches = overview.launches(r)
    assert launches["transcripts"].sum() == sub.height
    assert {"agent_progress", "sidecar_tool_use_id", "tool_result_ack"} <= set(launches["launch_source"])
    stubs = duplication.stubs_table(r)
    for name, n in zip(stubs["strategy"], stubs["copies stubbed"]):
        assert n == s.filter(pl.col("strategy") == name)["stubbed"].sum()
    would = r["duplicates"]["stub_would_save_chars"].sum()
    assert f"would save {would:,} raw chars" in duplication.stubs_note(r).data


def test_readme_documents_every_table_notebook_figure_and_report_option():
    import click

    from measure.cli import cli
    from measure.report import plots
    from measure.schema import TABLES

    readme = (paths.root() / "README.md").read_text(encoding="utf-8")
    for name in TABLES:
        assert f"`{name}`" in readme, name
    for source in notebooks.notebook_sources():
        assert f"`{source.stem}`" in readme, source.stem
    for name in plots.FIGURES:
        assert name in readme, name
    for param in cli.get_command(click.Context(cli), "report").params:
        for flag in param.opts:
            if flag.startswith("--"):
                assert f"`{flag}" in readme, flag
    assert "## Performance" in readme


def test_a_run_made_with_the_sessions_asked_for_is_read_as_it_is(tmp_path):
    run_dir = tmp_path / "run"
    tables = small_tables()
    write_tables(tables, run_dir)
    # A run restricted with the same values (e.g. under --redact, where ids are hashed) is not filtered again.
    (run_dir / "run.json").write_text(json.dumps({"parameters": {"sessions": ["sha-of-nothing"]}}))
    assert common.load("fixtures/default", run_dir, sessions=["sha-of-nothing"])["sessions"].height == tables["sessions"].height
