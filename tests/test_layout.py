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
    "measure.akm": 1,
    "measure.measurements": 2,
    "measure.runner": 3,
    "measure.report": 4,
    "measure.inspect": 4,
    "measure.extract": 4,
    "measure.synth": 5,
    "measure.bench": 5,
    "measure.cli": 6,
    "measure.__main__": 6,
    "measure": 0,  # the package's own __init__ (version only)
}


def layer(module: str) -> int:
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        name = ".".join(parts[:i])
        if name in LAYERS:
            return LAYERS[name]
    raise KeyError(module)


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> set[str]:
    """Every `measure...` module a file imports, at any depth (lazy imports count too)."""
    found = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(n) for block in ast.walk(tree)
        if isinstance(block, ast.If) and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"
        for stmt in block.body for n in ast.walk(stmt)
    }  # annotations only: not an import at run time
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("measure")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("measure"):
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names if (PACKAGE.parent / f"{node.module}.{a.name}".replace(".", "/")).exists()}
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_no_module_imports_from_a_layer_above_it(path):
    me = module_name(path)
    upward = sorted(m for m in imports(path) if m != "measure" and layer(m) > layer(me))
    assert not upward, f"{me} (layer {layer(me)}) imports {upward}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_every_module_says_what_it_is_in_one_line(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    assert doc and doc.strip(), f"{module_name(path)} has no docstring"


def test_there_is_no_import_cycle():
    graph = {module_name(p): {m for m in imports(p) if m != "measure"} for p in MODULES}
    graph = {k: {m for m in v if m in graph} for k, v in graph.items()}
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                raise AssertionError(" → ".join(stack[stack.index(nxt):] + [node, nxt]) if nxt in stack else f"{node} → {nxt}")
            if nxt not in state:
                visit(nxt, stack + [node])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
