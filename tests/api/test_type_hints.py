"""The public API is annotated (issue 24): every parameter and the return of the public
functions and methods below, read from the source with ast (nothing is evaluated: the
annotations' names exist only for a type checker, svmmap.core._typing under TYPE_CHECKING), and
the modules defer their annotations (``from __future__ import annotations``), so that
annotating adds nothing to start-up."""

import ast

import pytest

from conftest import ROOT

PACKAGE = ROOT / "svmmap"


#: module -> the public classes (all their public methods and __init__) and functions
PUBLIC = {
    "estimator.py": ["SVMMap"],
    "model_selection.py": ["SVMMapCV"],
    "core/base.py": ["BaseRanker.score", "BaseRanker.save", "BaseRanker.load"],
    "baselines/adarank.py": ["AdaRank"],
    "baselines/rankboost.py": ["RankBoost"],
    "baselines/prank.py": ["PRank"],
    "data/io.py": ["load_svmlight"],
    "data/writer.py": ["dump_svmlight"],
    "metrics.py": ["average_precision", "mean_average_precision", "precision_at_k",
                   "ndcg_at_k", "reciprocal_rank", "mean_reciprocal_rank", "r_precision",
                   "roc_area", "best_threshold_accuracy", "expected_reciprocal_rank",
                   "per_query", "evaluate", "measure_mean", "interpolated_precision"],
    "export.py": ["linear_weights", "to_ltr_linear", "to_solr_linear", "read_rank_features",
                  "to_vespa_profile", "to_ranklib_linear", "export", "read_feature_names"],
    "dask.py": ["DaskSVMMap.__init__", "DaskSVMMap.fit", "DaskSVMMap.to_local",
                "DaskSVMMap.decision_function", "DaskSVMMap.score", "DaskSVMMap.save",
                "DaskSVMMap.load", "cluster_client", "read_svmlight"],
    "pyterrier.py": ["SVMMapRanker", "letor_frames"],
    "core/training.py": ["fit"],
}


def functions(module, names):
    """(qualified name, FunctionDef) of ``names`` in ``module``: a class name stands for its
    __init__ and public methods, ``Class.method`` for one method."""
    tree = ast.parse((PACKAGE / module).read_text())
    top = {node.name: node for node in tree.body
           if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    for name in names:
        owner, _, method = name.partition(".")
        node = top[owner]
        if isinstance(node, ast.FunctionDef):
            yield name, node
            continue
        methods = {m.name: m for m in node.body if isinstance(m, ast.FunctionDef)}
        chosen = [method] if method else [m for m in methods
                                          if not m.startswith("_") or m == "__init__"]
        assert chosen, f"{module}: {owner} has no public method"
        for m in chosen:
            yield f"{owner}.{m}", methods[m]


CASES = [(module, qualified, node) for module, names in PUBLIC.items()
         for qualified, node in functions(module, names)]


@pytest.mark.parametrize("module, qualified, node", CASES,
                         ids=[f"{m}:{q}" for m, q, _ in CASES])
def test_public_signature_is_annotated(module, qualified, node):
    args = node.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs,
             *(a for a in (args.vararg, args.kwarg) if a is not None)]
    missing = [a.arg for a in every if a.annotation is None and a.arg not in ("self", "cls")]
    assert not missing, f"{module}: {qualified} has unannotated parameters {missing}"
    assert node.returns is not None, f"{module}: {qualified} has no return annotation"


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_annotations_are_deferred(module):
    """No annotation is evaluated at import: ``from __future__ import annotations``."""
    tree = ast.parse((PACKAGE / module).read_text())
    assert any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
               and any(alias.name == "annotations" for alias in node.names)
               for node in tree.body), module


def test_the_type_names_exist_only_for_a_type_checker():
    """svmmap.core._typing defines its names under TYPE_CHECKING: importing it imports neither
    numpy nor scipy and defines none of them."""
    import subprocess
    import sys

    code = ("import sys, svmmap.core._typing as t\n"
            "print(sorted({'numpy', 'scipy'} & {m.split('.')[0] for m in sys.modules}),"
            " hasattr(t, 'Matrix'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[] False", out
