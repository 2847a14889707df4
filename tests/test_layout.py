"""The package's layers: imports flow one way (port ← measurements ← runner ← presentation ← tools)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "measure"

#: Lower numbers sit below: a module may import only from its own layer or layers below it.
LAYERS = {
    "measure.paths": 0,
    "measure.schema": 0,
    "measure.numbers": 0,
    "measure.akm": 1,
    "measure.options": 1,  # click types bounded by the port's limits (MAX_EXACT)
    "measure.measurements": 2,
    "measure.runner": 3,
    "measure.report": 4,
    "measure.inspection": 4,
    "measure.extract": 4,
    "measure.synth": 5,
    "measure.cli": 6,
    "measure.__main__": 6,
    "measure": 0,  # the package's own __init__ (version only)
}

LONG_MODULE_LINES = 500
"""A module longer than this says why in its docstring, on a line of its own starting "Long: "."""


def layer(module: str) -> int:
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        name = ".".join(parts[:i])
        if name in LAYERS:
            return LAYERS[name]
    raise KeyError(module)


def module_name(path: Path, package: Path = PACKAGE) -> str:
    rel = path.relative_to(package.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, known: set[str], package: Path = PACKAGE) -> set[str]:
    """Every module of `known` that the file imports at run time, at any depth (lazy imports
    count), whichever form the import takes: `import a.b`, `from a import b` (b a module or a
    name), `from . import b`, `from .b import c`."""
    me = module_name(path, package)
    here = me.split(".") if path.name == "__init__.py" else me.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(n) for block in ast.walk(tree)
        if isinstance(block, ast.If) and isinstance(block.test, (ast.Name, ast.Attribute))
        and (getattr(block.test, "id", None) or getattr(block.test, "attr", None)) == "TYPE_CHECKING"
        for stmt in block.body for n in ast.walk(stmt)
    }  # annotations only: not an import at run time
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = (node.module or "").split(".") if node.module else []
            if node.level:
                base = here[: len(here) - node.level + 1] + base
            module = ".".join(base)
            found.add(module)
            found |= {f"{module}.{a.name}" for a in node.names}
    return {m for m in found if m in known and m != me}


MODULES = sorted(PACKAGE.rglob("*.py"))


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the package's modules it imports (the package root's version-only __init__ left out)."""
    paths = sorted(package.rglob("*.py"))
    known = {module_name(p, package) for p in paths}
    root = package.name
    return {module_name(p, package): imports(p, known, package) - {root} for p in paths}


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph` (its modules in order, the first repeated at the end), or None."""
    state: dict[str, int] = {}
    for start in sorted(graph):
        if start in state:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        path = [start]
        state[start] = 1
        while stack:
            node, nexts = stack[-1]
            nxt = next(nexts, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(sorted(graph[nxt]))))
                path.append(nxt)
    return None


def subpackage(module: str) -> str:
    """The top-level part of the package a module belongs to (measure.report.views.x -> measure.report)."""
    return ".".join(module.split(".")[:2])


GRAPH = import_graph()


@pytest.mark.parametrize("me", sorted(GRAPH))
def test_no_module_imports_from_a_layer_above_it(me):
    upward = sorted(m for m in GRAPH[me] if layer(m) > layer(me))
    assert not upward, f"{me} (layer {layer(me)}) imports {upward}"


def test_there_is_no_import_cycle_between_modules():
    found = cycle(GRAPH)
    assert found is None, "import cycle: " + " → ".join(found)


def test_there_is_no_import_cycle_between_subpackages():
    graph: dict[str, set[str]] = {}
    for me, targets in GRAPH.items():
        graph.setdefault(subpackage(me), set()).update(subpackage(t) for t in targets if subpackage(t) != subpackage(me))
    found = cycle(graph)
    assert found is None, "import cycle between subpackages: " + " → ".join(found)


def test_presentation_shows_extraction_results_from_their_tables():
    """A view reads what `measure extract` wrote; it never runs the comparison again (measure.extract)."""
    found = sorted(f"{me} → {m}" for me, targets in GRAPH.items() if subpackage(me) == "measure.report"
                   for m in targets if subpackage(m) == "measure.extract")
    assert not found, found


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_every_module_says_what_it_is_in_one_line(path):
    """PEP 257: a summary line of its own (a sentence of at most 100 chars), then a blank line
    before anything more; a long module says why on a line starting "Long: "."""
    text = path.read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(text))
    assert doc and doc.strip(), f"{module_name(path)} has no docstring"
    lines = doc.strip().splitlines()
    summary = lines[0]
    assert summary.endswith("."), f"{module_name(path)}: the summary line is not one sentence: {summary!r}"
    assert len(summary) <= 100, f"{module_name(path)}: the summary line is {len(summary)} chars (at most 100)"
    assert len(lines) == 1 or not lines[1].strip(), f"{module_name(path)}: the summary runs onto a second line"
    if text.count("\n") > LONG_MODULE_LINES:
        assert any(line.startswith("Long: ") for line in lines[1:]), (
            f"{module_name(path)} has {text.count(chr(10))} lines (over {LONG_MODULE_LINES}) and its docstring does not say why"
        )


# The checks themselves, on a package made up for the purpose: each must fail where it should.


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    pkg = tmp_path / "measure"
    for name, body in files.items():
        p = pkg / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(body, encoding="utf-8")
    return pkg


@pytest.mark.parametrize(
    "source",
    [
        "from measure.report import plots\n",
        "import measure.report.plots\n",
        "from measure.report.plots import draw\n",
        "def f():\n    from measure.report import plots\n",
        "from ..report import plots\n",
        "from ..report.plots import draw\n",
    ],
)
def test_every_form_of_import_is_seen(tmp_path, source):
    pkg = _package(tmp_path, {
        "__init__.py": "", "report/__init__.py": "", "report/plots.py": "def draw(): pass\n",
        "akm/__init__.py": "", "akm/read.py": source,
    })
    graph = import_graph(pkg)
    assert "measure.report.plots" in graph["measure.akm.read"]
    assert layer("measure.report.plots") > layer("measure.akm.read")  # so the layer test fails


def test_type_checking_imports_are_not_imports(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "", "report/__init__.py": "", "report/plots.py": "",
        "akm/__init__.py": "", "akm/read.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from measure.report import plots\n",
    })
    assert import_graph(pkg)["measure.akm.read"] == set()


def test_a_cycle_is_found_and_named(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "", "synth/__init__.py": "",
        "synth/a.py": "from measure.synth import b\n",
        "synth/b.py": "def f():\n    from measure.synth.c import g\n",
        "synth/c.py": "from . import a\ndef g(): pass\n",
        "synth/d.py": "from measure.synth import a\n",
    })
    assert cycle(import_graph(pkg)) == ["measure.synth.a", "measure.synth.b", "measure.synth.c", "measure.synth.a"]


def test_no_cycle_in_a_tree(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "", "synth/__init__.py": "",
        "synth/a.py": "from measure.synth import b, c\n", "synth/b.py": "from measure.synth import c\n", "synth/c.py": "",
    })
    assert cycle(import_graph(pkg)) is None
