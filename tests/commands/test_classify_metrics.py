"""svmmap_classify --metrics: the chosen measures, in the chosen order, in both conventions;
the trec_eval figures equal pytrec_eval's, the letor ones svmmap.metrics' (tested against the
LETOR scripts' logic in test_metrics.py)."""

import shutil
import subprocess

import numpy as np
import pytest

from svmmap import SVMMap, dump_svmlight, metrics
from svmmap.core.measures import parse_metrics

from conftest import random_collection

CHOSEN = "map,ndcg@1,ndcg@10,p@5,mrr"
TREC = {"MAP": "map", "NDCG@1": "ndcg_cut_1", "NDCG@10": "ndcg_cut_10", "P@5": "P_5",
        "MRR": "recip_rank"}


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("metrics")
    X, y, qid = random_collection(seed=8, n_queries=10, docs=(6, 15))
    y = y * np.random.default_rng(8).integers(1, 3, len(y))  # graded 0/1/2
    y[qid == 0] = 0  # a query judged all non-relevant
    dump_svmlight(tmp / "test.txt", X, y, qid)
    SVMMap(C=1).fit(X[qid > 0], y[qid > 0], qid[qid > 0]).save(tmp / "m.json")
    return tmp, y, qid


def classify(tmp, *options):
    proc = subprocess.run([shutil.which("svmmap_classify"), *options, str(tmp / "test.txt"),
                           str(tmp / "m.json"), str(tmp / "p.txt")], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    return lines[0], {k: float(v) for k, v in (line.split(": ") for line in lines[1:])}


def test_trec_eval_convention_equals_pytrec_eval(scored):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    tmp, y, qid = scored
    header, shown = classify(tmp, "--metrics", CHOSEN, "--convention", "trec_eval")
    assert list(shown) == list(TREC) and "10 queries averaged" in header
    scores = np.loadtxt(tmp / "p.txt")
    qrels, run = {}, {}
    width = len(str(len(y) - 1))
    for i, (s, label, q) in enumerate(zip(scores, y, qid)):
        qrels.setdefault(str(q), {})[f"{i:0{width}d}"] = int(label)
        run.setdefault(str(q), {})[f"{i:0{width}d}"] = float(s)
    ref = pytrec_eval.RelevanceEvaluator(qrels, set(TREC.values())).evaluate(run)
    assert len(ref) == 10 and ref["0"]["map"] == 0.0
    for label, measure in TREC.items():
        assert shown[label] == pytest.approx(np.mean([v[measure] for v in ref.values()]),
                                             abs=5e-5)


def test_letor_convention_equals_the_metrics_module(scored):
    tmp, y, qid = scored
    _, shown = classify(tmp, "--metrics", "P@5, mrr,map@3,roc")
    scores = np.loadtxt(tmp / "p.txt")
    expected = {"P@5": metrics.precision_at_k(scores, y, qid, 5),
                "MRR": metrics.mean_reciprocal_rank(scores, y, qid),
                "MAP@3": metrics.mean_average_precision(scores, y, qid, k=3),
                "ROC": metrics.roc_area(scores, y, qid)}
    assert list(shown) == list(expected)
    for label, value in expected.items():
        assert shown[label] == pytest.approx(value, abs=5e-5)


@pytest.mark.parametrize("text", ["map,foo", "p", "ndcg@0", "mrr@3", ""])
def test_unknown_metrics_are_refused_with_the_accepted_names(text, tmp_path):
    with pytest.raises(ValueError, match="expected map, map@k, ndcg"):
        parse_metrics(text)
    proc = subprocess.run([shutil.which("svmmap_classify"), "--metrics", text, "t", "m", "p"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "argument --metrics: unknown metric" in proc.stderr


def test_parse_metrics_order_case_and_duplicates():
    assert parse_metrics("MAP, ndcg@10,map,P@5") == (("map", None), ("ndcg", 10), ("p", 5))
