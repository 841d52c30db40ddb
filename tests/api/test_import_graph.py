"""No module of the package imports one that imports it back, directly or through others.

The graph is read from the source with ast: an edge for every ``import`` / ``from ... import``
statement naming a module of svmmap or svmstruct_api, at the top of a module or inside a
function (an import deferred for start-up time is still a dependency).  Code loaded by name
on demand (svmmap.data.model_file's kinds, svmmap.core.rules.InstanceOf) is not an import edge: the
registry names it, it does not depend on it.  A package's ``__init__`` importing its own
submodules is the usual layout, and a submodule does not import its package back here."""

import ast
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGES = ("svmmap", "svmstruct_api")


def modules():
    """Dotted module name -> source path, for every module of PACKAGES."""
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imported(name, path, node, known):
    """The known modules an import statement of module ``name`` (at ``path``) names."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        if node.level:
            base = name.split(".")[:len(name.split(".")) - node.level
                                    + (path.name == "__init__.py")]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module
        # "from package import module" names the module; "from module import name" the module
        targets = [f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in known else prefix
                   for alias in node.names]
    found = set()
    for target in targets:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target:
            found.add(target)
    return found


def import_graph():
    known = modules()
    graph = {}
    for name, path in known.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges |= imported(name, path, node, known)
        graph[name] = edges - {name}
    return graph


def find_cycle(graph):
    """One cycle of ``graph`` as a list of modules (first == last), or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for child in sorted(graph[node]):
            if state.get(child) == "open":
                return stack[stack.index(child):] + [child]
            if child not in state:
                cycle = visit(child)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_the_package_imports_no_cycle():
    graph = import_graph()
    assert {"svmmap.core.training", "svmmap.data.model_file", "svmmap.metrics"} <= set(graph)
    assert "svmmap.core.measures" in graph["svmmap.core.params"]  # "from . import measures"
    assert "svmmap.data.model_file" in graph["svmmap.core.training"]
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


@pytest.mark.parametrize("graph, cycle", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ({"a": {"b"}, "b": set(), "c": {"c"}}, ["c", "c"]),
    ({"a": {"b", "c"}, "b": {"c"}, "c": set()}, None),
])
def test_find_cycle(graph, cycle):
    assert find_cycle(graph) == cycle


def test_a_deferred_import_is_an_edge():
    """The cycle the issue found ran through imports inside functions: such an import counts."""
    source = "def load():\n    from ..core import training\n"
    node = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom))
    known = {"svmmap", "svmmap.core", "svmmap.data.model_file", "svmmap.core.training"}
    assert imported("svmmap.data.model_file", Path("model_file.py"), node, known) == \
        {"svmmap.core.training"}
