"""measure.report.build (the papermill driver) and measure.report_views (what the notebooks show).

- two report runs on the same root give byte-identical notebooks, HTML, CSVs, figures and params;
- a failing notebook fails naming the notebook and the cell (error, timeout, dead kernel);
- normalization strips exactly the volatile fields;
- the views compute what the notebooks claim, from small hand-made tables.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import nbformat
import polars as pl
import pytest
import yaml

from measure import paths
from measure.report import build as report_build
from measure.report import notebooks
from measure.report.views import common, duplication, eviction, llm_calls, overview, published
from measure.runner.tables import write_tables

try:
    from test_plots import small_tables
except ImportError:  # collected as a package
    from tests.test_plots import small_tables

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
    expected |= {f"params/{s}.yaml" for s in stems} | {"run.json", ".measure-output.json"}
    expected |= {f"figures/{name}.png" for name in ("budget_sweep", "eviction_by_strategy", "llm_calls", "overlap_distribution", "run_cost")}
    expected |= {f"tables/{name}.csv" for name in ("budget_sweep", "duplicates", "errors", "eviction", "llm_calls", "quirks", "run_cost", "sessions", "subagents")}
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


def test_cli_reports_failures_and_returns_1(tmp_path, capsys):
    code = report_build.main(["--root", str(tmp_path / "missing"), "--out", str(tmp_path / "r"), "--no-cache"])
    assert code == 1
    assert "measure run failed" in capsys.readouterr().err


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
    a, _ = notebooks.build_notebook(source, tmp_path / "a")
    b, _ = notebooks.build_notebook(source, tmp_path / "b")
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
    }
    assert json.loads(json.dumps(params)) == params


def test_nbclient_options_are_real_traits():
    notebooks._check_nbclient_options()


def test_cli_budgets_accept_commas_and_spaces():
    import argparse

    parser = report_build.add_arguments(argparse.ArgumentParser())
    args = parser.parse_args(["--budgets", "40000,80000", "20000"])
    assert sorted({b for group in args.budgets for b in group}) == [20_000, 40_000, 80_000]


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


def test_verdict_is_computed_from_the_tables(small_report):
    text = overview.verdict(small_report).data
    assert text.startswith("**The data supports C3, hybrid**")
    assert "hybrid evicted 0 parent-origin chars in 2/2 sessions" in text
    assert "fold evicted parent content in 1/2 sessions, up to 25.0%" in text
    assert "3 notification/subagent pairs; 1 reaches the fold prompt with both copies" in text
    assert "chunked needs 3.0×–12.0× the calls" in text


def test_verdict_says_so_when_hybrid_evicts(small_report):
    tables = dict(small_report.tables)
    tables["eviction"] = tables["eviction"].with_columns(
        pl.when(pl.col("strategy") == "hybrid").then(pl.lit(5)).otherwise(pl.col("evicted_chars")).alias("evicted_chars")
    )
    text = overview.verdict(common.Report(tables=tables)).data
    assert "does not cleanly support C3" in text and "hybrid evicts parent content in 2 session(s)" in text


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
    assert first["link"].to_list() == [90_000, 92_678, 90_000 - 92_678]


def test_eviction_views(small_report):
    z = eviction.zero_eviction_budgets(small_report)
    assert z.columns == ["session", "fold", "fold_dedupe_scoped", "fold_stub_raw", "hybrid"]
    assert z.row(0) == ("11111111", 160_000, 160_000, 160_000, 20_000)
    curve = eviction.sweep_curve(small_report["budget_sweep"])
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
    assert llm_calls.run_cost_table(small_report)["strategy"].to_list() == list(common.STRATEGY_ORDER)


def test_sessions_filter_keeps_prefix_matches(tmp_path):
    run_dir = tmp_path / "run"
    write_tables(small_tables(), run_dir)
    (run_dir / "run.json").write_text("{}\n")
    r = common.load("fixtures/default", run_dir, sessions=["2222"])
    assert set(r["sessions"]["session_id"].to_list()) == {"22222222-bbbb-4000-8000-000000000002"}
    assert r["run_cost"].height == 6  # run-level tables are kept as measured


def test_readme_documents_every_table_notebook_figure_and_report_option():
    import argparse

    from measure.report import plots
    from measure.schema import TABLES

    readme = (paths.root() / "README.md").read_text(encoding="utf-8")
    for name in TABLES:
        assert f"`{name}`" in readme, name
    for source in notebooks.notebook_sources():
        assert f"`{source.stem}`" in readme, source.stem
    for name in plots.FIGURES:
        assert name in readme, name
    parser = report_build.add_arguments(argparse.ArgumentParser())
    for action in parser._actions:
        for flag in action.option_strings:
            if flag.startswith("--") and flag != "--help":
                assert f"`{flag}" in readme, flag
    assert "## Performance" in readme


def test_short_ids_are_the_shortest_unique_prefixes():
    ids = ["aaaaaaaa1", "aaaaaaaa2", "abcdefgh99", "abcdefgh", "b", "aaaaaaaa1"]
    assert common.short_ids(ids) == {
        "aaaaaaaa1": "aaaaaaaa1", "aaaaaaaa2": "aaaaaaaa2", "abcdefgh": "abcdefgh", "abcdefgh99": "abcdefgh9", "b": "b",
    }
    many = [f"{i:032x}" for i in range(20_000)]  # linear: 20,000 ids are instant
    assert len(set(common.short_ids(many).values())) == 20_000


def test_zero_eviction_budget_is_the_start_of_the_evict_nothing_suffix():
    import random

    from measure.report.views.eviction import _zero_budget_expr

    r = random.Random(17)
    for _ in range(200):
        rows, want = [], {}
        for sid in ("s1", "s2"):
            for strat in ("fold", "hybrid"):
                budgets = sorted(r.sample([10, 20, 30, 40], r.randint(1, 4)))
                evicted = [r.choice([None, 0, -5, 3, 0]) for _ in budgets]
                rows += [{"session_id": sid, "strategy": strat, "budget": b, "evicted_chars": e} for b, e in zip(budgets, evicted)]
                answer = None
                for b, e in reversed(list(zip(budgets, evicted))):
                    if e is None or e > 0:
                        break
                    answer = b
                want[(sid, strat)] = answer
        r.shuffle(rows)
        df = pl.DataFrame(rows, schema={"session_id": pl.String, "strategy": pl.String, "budget": pl.Int64, "evicted_chars": pl.Int64})
        got = {(a, b): z for a, b, z in _zero_budget_expr(df).iter_rows()}
        assert got == want
