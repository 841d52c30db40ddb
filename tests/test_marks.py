"""The marks of a house a new engineer can live in (issue 34), checked on every Python module of
svmmap and svmstruct_api by reading its source (ast: nothing is imported):

* no module over :data:`MAX_MODULE_LINES` lines, no function over :data:`MAX_FUNCTION_LINES`;
* a docstring on every public name: the module, its public classes and functions, and the public
  methods of its public classes;
* type hints on every public function and method: every parameter but ``self``/``cls``, and the
  return (``__init__``'s is None by definition).

"Public" means that neither the name nor any package or module on its path starts with an
underscore.  The Cython modules (.pyx) are outside these counts: their signatures are typed C.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import ROOT

MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
PACKAGES = ("svmmap", "svmstruct_api")
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def modules(root: Path = ROOT) -> list[Path]:
    """Every Python module of the packages, relative to ``root``."""
    return sorted(path.relative_to(root) for package in PACKAGES
                  for path in (root / package).rglob("*.py"))


def is_public_module(relative: Path) -> bool:
    """No package or module on the path starts with an underscore (``__init__.py`` is the
    package itself)."""
    return not any(part.startswith("_") and part != "__init__.py" for part in relative.parts)


def public_definitions(tree: ast.Module):
    """(qualified name, node) of the module's public classes and functions, and of the public
    methods and ``__init__`` of its public classes."""
    for node in tree.body:
        if isinstance(node, (*FUNCTIONS, ast.ClassDef)) and not node.name.startswith("_"):
            yield node.name, node
            if isinstance(node, ast.ClassDef):
                for member in node.body:
                    if isinstance(member, FUNCTIONS) and (
                            not member.name.startswith("_") or member.name == "__init__"):
                        yield f"{node.name}.{member.name}", member


def long_functions(tree: ast.Module) -> list[str]:
    """``name (lines)`` of every function, nested or not, longer than MAX_FUNCTION_LINES,
    decorators excluded."""
    return [f"{node.name}:{node.lineno} ({node.end_lineno - node.lineno + 1} lines)"
            for node in ast.walk(tree) if isinstance(node, FUNCTIONS)
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]


def undocumented(tree: ast.Module) -> list[str]:
    """The module (as ``<module>``) and the public names without a docstring (``__init__``
    is documented by its class)."""
    missing = [] if ast.get_docstring(tree) else ["<module>"]
    return missing + [name for name, node in public_definitions(tree)
                      if not name.endswith(".__init__") and not ast.get_docstring(node)]


def unannotated(tree: ast.Module) -> list[str]:
    """``name(parameters)`` of the public functions and methods missing a hint, ``-> ?`` for a
    missing return hint."""
    missing = []
    for name, node in public_definitions(tree):
        if not isinstance(node, FUNCTIONS):
            continue
        args = node.args
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs,
                 *(a for a in (args.vararg, args.kwarg) if a is not None)]
        bare = [a.arg for a in every if a.annotation is None and a.arg not in ("self", "cls")]
        if node.returns is None and node.name != "__init__":
            bare.append("-> ?")
        if bare:
            missing.append(f"{name}({', '.join(bare)})")
    return missing


def parsed(relative: Path) -> tuple[str, ast.Module]:
    text = (ROOT / relative).read_text(encoding="utf-8")
    return text, ast.parse(text)


MODULES = modules()
PUBLIC_MODULES = [m for m in MODULES if is_public_module(m)]


def _ids(paths):
    return [str(p) for p in paths]


@pytest.mark.parametrize("relative", MODULES, ids=_ids(MODULES))
def test_module_and_its_functions_are_short(relative):
    text, tree = parsed(relative)
    n_lines = len(text.splitlines())
    assert n_lines <= MAX_MODULE_LINES, f"{relative}: {n_lines} lines"
    assert not long_functions(tree), f"{relative}: {long_functions(tree)}"


@pytest.mark.parametrize("relative", PUBLIC_MODULES, ids=_ids(PUBLIC_MODULES))
def test_every_public_name_is_documented_and_annotated(relative):
    _, tree = parsed(relative)
    assert not undocumented(tree), f"{relative}: no docstring on {undocumented(tree)}"
    assert not unannotated(tree), f"{relative}: missing hints in {unannotated(tree)}"


def test_the_checks_find_what_they_look_for():
    """Each check on a module that breaks it, and on one that keeps it: they can fail."""
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    bad = ast.parse(f"def long(a, *, b=1):\n{body}\n\nclass Open:\n    def run(self, c: int):\n"
                    "        return c\n\ndef _private(d):\n    pass\n")
    assert long_functions(bad) == [f"long:1 ({MAX_FUNCTION_LINES + 1} lines)"]
    assert undocumented(bad) == ["<module>", "long", "Open", "Open.run"]
    assert unannotated(bad) == ["long(a, b, -> ?)", "Open.run(-> ?)"]
    good = ast.parse('"""A module."""\n\nclass Open:\n    """A class."""\n\n'
                     '    def __init__(self, c: int):\n        self.c = c\n\n'
                     '    def run(self, d: int = 1) -> int:\n        """Run."""\n'
                     '        return d\n')
    assert (long_functions(good), undocumented(good), unannotated(good)) == ([], [], [])
    assert not is_public_module(Path("svmmap/kernels/_csr.py"))
    assert not is_public_module(Path("svmmap/core/_typing.py"))
    assert is_public_module(Path("svmmap/core/plugins/__init__.py"))
