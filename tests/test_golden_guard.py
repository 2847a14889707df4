"""Guards against nbval's false passes on tests/golden/*.ipynb.

nbval passes a golden notebook whose outputs were stripped (it skips cells without an execution
count) and one whose sources are stale (it re-runs the stored source, never notebooks/*.py).
These tests fail in both cases, and check that the goldens ran with the fixture parameters.
Regenerate with `make golden` after changing a notebook or a computed number, review, commit.
"""

from __future__ import annotations

import ast
from pathlib import Path

import jupytext
import nbformat
import pytest

from measure import paths
from measure.report import build as report_build
from measure.report import notebooks

GOLDEN = paths.root() / report_build.GOLDEN_DIR
SOURCES = notebooks.notebook_sources()
PARAMETER_NAMES = set(report_build.golden_parameters())
# (golden path, sessions root, notebook source) for every golden notebook `make golden` writes.
CASES = [
    (folder / f"{source.stem}.ipynb", root_dir, source)
    for folder, root_dir, sources in report_build.golden_plan()
    for source in sources
]


def _golden(path: Path):
    if not path.exists():
        pytest.fail(f"{path.relative_to(paths.root())} is missing: run `make golden`")
    return nbformat.read(path, as_version=4)


def _tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _case_id(case) -> str:
    return case[0].relative_to(GOLDEN).as_posix() if isinstance(case, tuple) else str(case)


def test_goldens_are_exactly_the_planned_set():
    assert SOURCES, "no notebooks/*.py"
    on_disk = sorted(p.relative_to(GOLDEN).as_posix() for p in GOLDEN.rglob("*.ipynb"))
    assert on_disk == sorted(_case_id(case) for case in CASES)
    assert all(path.parent == GOLDEN for path, root_dir, _ in CASES if root_dir == report_build.FIXTURE_ROOT)
    assert {source.stem for path, _, source in CASES if path.parent == GOLDEN} == {s.stem for s in SOURCES}


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_golden_code_cells_have_execution_counts_and_outputs(case):
    path, _, _ = case
    nb = _golden(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    unrun = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.get("execution_count") is None]
    assert unrun == [], f"cells {unrun} have no execution count: nbval would not check them"
    empty = [
        i for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and not c.outputs and not {"parameters", "injected-parameters"} & set(_tags(c))
    ]
    assert empty == [], f"cells {empty} have no outputs (stripped golden?)"
    assert sum(1 for c in code if c.outputs) >= 3


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_golden_sources_match_the_notebook_source(case):
    path, _, source = case
    nb = _golden(path)
    golden = [(c.cell_type, c.source) for c in nb.cells if "injected-parameters" not in _tags(c)]
    current = [(c.cell_type, c.source) for c in jupytext.read(source).cells]
    assert golden == current, f"{source.name} changed since its golden was made: run `make golden`"


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_golden_ran_with_the_fixture_parameters(case):
    path, root_dir, _ = case
    nb = _golden(path)
    injected = [c for c in nb.cells if "injected-parameters" in _tags(c)]
    assert len(injected) == 1, "expected exactly one papermill injected-parameters cell"
    values = {}
    for node in ast.parse(injected[0].source).body:
        assert isinstance(node, ast.Assign) and len(node.targets) == 1
        values[node.targets[0].id] = ast.literal_eval(node.value)
    assert values == report_build.golden_parameters(root_dir)
    assert values["out_dir"] is None, "goldens must measure inside the notebook, so nbval checks fresh numbers"
    # It sits right after the parameters cell.
    index = nb.cells.index(injected[0])
    assert "parameters" in _tags(nb.cells[index - 1])


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_golden_is_normalized(case):
    path, _, _ = case
    nb = _golden(path)
    assert "papermill" not in nb.metadata and "jupytext" not in nb.metadata
    assert nb.metadata.kernelspec.name == "python3"
    assert "version" not in nb.metadata.get("language_info", {})
    assert [c.id for c in nb.cells] == [str(i) for i in range(len(nb.cells))]
    for cell in nb.cells:
        assert "papermill" not in cell.metadata and "execution" not in cell.metadata
    text = path.read_text(encoding="utf-8")
    assert str(paths.root()) not in text and "/tmp/" not in text


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.stem)
def test_notebook_sources_have_the_parameters_cell_first(source):
    nb = jupytext.read(source)
    assert nb.metadata.kernelspec.name == "python3", "papermill needs a kernelspec"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "parameters" in _tags(code[0]), "the first code cell must be tagged parameters"
    names = {node.targets[0].id for node in ast.parse(code[0].source).body if isinstance(node, ast.Assign)}
    assert names == PARAMETER_NAMES
    assert "nbsetup.configure()" in code[1].source, "configure() belongs in the cell after the parameters"
    for cell in code[1:]:
        tree = ast.parse(cell.source)
        defs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef | ast.Lambda)]
        assert defs == [], "notebooks stay thin: functions belong in measure/"


def test_golden_notebooks_are_protected_from_git_filters():
    lines = (paths.root() / ".gitattributes").read_text().splitlines()
    assert any(line.split()[:2] == ["tests/golden/*.ipynb", "-filter"] for line in lines)
