"""The measure registry (svmmap.core.measures): every list of measure names follows from its
records,
and ERR@k, added as one record plus its kernel in svmmap.metrics, is reported and selects models
like the measures before it, equal to ir_measures' ERR@k."""

import argparse
import shutil
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svmmap import SVMMap, dump_svmlight, metrics
from svmmap.core import measures
from svmmap.core.params import check_svmmap
from svmmap.core.rules import ParameterError
from svmmap.model_selection import SVMMapCV, choose, validation_measure

from conftest import random_collection


def graded_collection(seed, n_queries=14, docs=(4, 16)):
    """random_collection with grades 0..4 (relevant documents get a random grade 1..4)."""
    X, y, qid = random_collection(seed, n_queries=n_queries, docs=docs)
    grades = np.random.default_rng(seed).integers(1, 5, len(y))
    return X, y * grades, qid


def err_by_definition(scores, labels, k):
    """ERR@k of one query (ties in input order), the cascade model spelled out: the user
    stops at rank r with probability R_r = (2^g - 1) / 16 having passed ranks 1..r-1."""
    order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
    value, go_on = 0.0, 1.0
    for r, i in enumerate(order[:k], start=1):
        stop = (2.0 ** max(labels[i], 0) - 1) / 16
        value += go_on * stop / r
        go_on *= 1 - stop
    return value


# -- ERR@k, the metric -----------------------------------------------------------------------


def test_err_of_a_hand_computed_ranking():
    # ranked grades 0, 2, 1: ERR = (3/16)/2 + (1 - 3/16) (1/16)/3
    expected = 3 / 32 + (13 / 16) * (1 / 16) / 3
    assert metrics.expected_reciprocal_rank([2.0, 1.0, 0.5], [0, 2, 1]) == \
        pytest.approx(expected, abs=1e-15)
    assert metrics.expected_reciprocal_rank([2.0, 1.0, 0.5], [0, 2, 1], k=1) == 0.0
    # a query without a relevant document counts 0 in the mean
    assert metrics.expected_reciprocal_rank([2.0, 1.0, 0.5, 1.0], [0, 2, 1, 0],
                                            [1, 1, 1, 2]) == pytest.approx(expected / 2)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(-1, 4), st.integers(0, 5)),
                min_size=1, max_size=40),
       st.integers(1, 12))
def test_err_equals_the_cascade_model(rows, k):
    qid, labels, scores = (np.array(column) for column in zip(*rows))
    scores = scores.astype(float)
    ids, values = metrics.per_query("err", scores, labels, qid, k=k)
    for q, value in zip(ids, values):
        rows_q = qid == q
        assert value == pytest.approx(err_by_definition(scores[rows_q], labels[rows_q], k),
                                      abs=1e-12)


def test_err_refuses_grades_beyond_gdevals_scale():
    with pytest.raises(metrics.InputFormatError, match="ERR takes grades 0 to 4"):
        metrics.evaluate([1.0, 0.0], [5, 0], measures="err@10")
    with pytest.raises(metrics.InputFormatError, match="cut-off"):
        metrics.expected_reciprocal_rank([1.0, 0.0], [1, 0], k=None)


@pytest.mark.parametrize("k", [1, 3, 10, 20])
def test_err_equals_ir_measures(k):
    """ir_measures computes ERR@k with gdeval (the TREC Web track's Perl script): R =
    (2^g - 1) / 2^4, ties by docno descending -- svmmap's trec_eval convention.  gdeval
    prints 5 decimals; a query without a relevant document is 0 (ir_measures fills it in)
    and counts in the mean."""
    import ir_measures

    if shutil.which("perl") is None:
        pytest.skip("ir_measures computes ERR@k with gdeval, a Perl script: perl not found")
    rng = np.random.default_rng(k)
    qid = np.repeat(np.arange(1, 26), rng.integers(1, 30, 25))
    labels = rng.integers(0, 5, len(qid)) * (rng.random(len(qid)) < 0.4)
    scores = rng.integers(0, 6, len(qid)).astype(float)  # many ties
    docnos = np.array([f"d{i:04d}" for i in rng.permutation(len(qid))])
    qrels = [ir_measures.Qrel(str(q), d, int(g)) for q, d, g in zip(qid, docnos, labels)]
    run = [ir_measures.ScoredDoc(str(q), d, s) for q, d, s in zip(qid, docnos, scores)]
    measure = ir_measures.ERR @ k
    reference = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
    ids, values = metrics.per_query("err", scores, labels, qid, k=k, docnos=docnos,
                                    convention="trec_eval")
    assert sorted(reference, key=int) == [str(q) for q in ids.tolist()]
    assert any(labels[qid == q].max() == 0 for q in ids)  # such queries are compared too
    for q, value in zip(ids.tolist(), values):
        assert abs(value - reference[str(q)]) <= 5e-6 + 1e-12  # gdeval's %.5f
    mean = metrics.expected_reciprocal_rank(scores, labels, qid, k=k, docnos=docnos,
                                            convention="trec_eval")
    assert abs(mean - ir_measures.calc_aggregate([measure], qrels, run)[measure]) <= 5e-6


# -- ERR@k, reported and selecting ---------------------------------------------------------


def test_classify_reports_err(tmp_path):
    X, y, qid = graded_collection(seed=2)
    data, model, predictions = tmp_path / "d.txt", tmp_path / "m.json", tmp_path / "p.txt"
    dump_svmlight(data, X, y, qid)
    SVMMap(C=1.0).fit(X, y, qid).save(model)
    proc = subprocess.run([shutil.which("svmmap_classify"), "--metrics", "map,ERR@5", data,
                           model, predictions], capture_output=True, text=True, check=True)
    scores = np.loadtxt(predictions)
    assert f"ERR@5: {metrics.expected_reciprocal_rank(scores, y, qid, k=5):.4f}\n" in \
        proc.stdout
    assert list(metrics.evaluate(scores, y, qid, measures="map,err@5")) == \
        ["MAP", "ERR@5", "queries"]


def test_classify_refuses_err_of_grades_beyond_4_in_one_line(tmp_path):
    data, model = tmp_path / "d.txt", tmp_path / "m.json"
    data.write_text("5 qid:1 1:1\n0 qid:1 1:0\n")
    SVMMap().fit(np.array([[1.0], [0.0]]), np.array([5.0, 0.0])).save(model)
    proc = subprocess.run([shutil.which("svmmap_classify"), "--metrics", "err@3", data, model,
                           tmp_path / "p.txt"], capture_output=True, text=True)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr == f"svmmap_classify: error: {data}:1: ERR takes grades 0 to 4 " \
        "(gdeval's scale: stopping probability (2^g - 1) / 2^4), got label 5\n"
    assert not (tmp_path / "p.txt").exists()  # checked while reading, before any output


def test_models_are_selected_by_err():
    X, y, qid = graded_collection(seed=3, n_queries=30)
    train, vali = qid < 20, qid >= 20
    cv = SVMMapCV(Cs=[0.01, 1.0, 100.0], select_metric="err@5", select_tol=0.0).fit(
        X[train], y[train], qid[train], eval_set=(X[vali], y[vali], qid[vali]))
    path = [row["vali"] for row in cv.path_]
    assert cv.C_ == [0.01, 1.0, 100.0][choose(path)]
    chosen = next(row["vali"] for row in cv.path_ if row["C"] == cv.C_)
    assert chosen == metrics.expected_reciprocal_rank(cv.decision_function(X[vali]), y[vali],
                                                      qid[vali], k=5)
    with pytest.raises(ValueError, match="select_metric must be"):
        validation_measure("err")  # ERR takes a cutoff, as ir_measures' ERR@k does


def test_the_experiments_select_by_the_same_measures_and_tie_rule():
    """svmmap.core.selection.select (the experiments' grid) chooses by the method's measure and
    gives ties to the earliest grid value, as select_c does."""
    import scipy.sparse as sp

    from svmmap.core.selection import select
    from svmmap.experiments.datasets import Split
    from svmmap.experiments.registry import Method, SingleFeature

    X, y, qid = graded_collection(seed=5)
    good = y + np.random.default_rng(5).normal(scale=0.1, size=len(y))
    columns = np.column_stack([-good, good, good, X[:, 0]])  # 1 and 2 tie, 0 is worst
    split = Split(sp.csr_matrix(columns), y, qid)
    for measure in ("err@5", "map", "ndcg@3"):
        method = Method("f", "F", SingleFeature, [0, 3, 2, 1], "feature", measure)
        chosen = select(method, split, split)
        assert chosen.value == 2 and chosen.vali_map[2] == chosen.vali_map[1]
        assert chosen.vali_map[3] == validation_measure(measure)(X[:, 0], y, qid)


# -- one record is a new measure ------------------------------------------------------------


@pytest.fixture()
def fake_measure(monkeypatch):
    """A measure "fake" registered as one record: NDCG under another name and label."""
    record = measures.MEASURES["ndcg"]._replace(name="fake", label="FAKE")
    monkeypatch.setitem(measures.MEASURES, "fake", record)
    return record


def _help(parser):
    return " ".join(parser.format_help().split())


def test_a_new_record_is_a_loss_a_reported_and_a_selection_measure(fake_measure):
    from svmmap.commands import classify
    from svmmap.commands import learn as cli
    from svmmap.core import text_values

    learn, classify = _help(cli.learn_parser()), _help(classify.classify_parser("x"))
    assert "what is optimised: map, ndcg, ndcg@k, mrr, p@k, rprec, roc, acc, fake or " \
           "fake@k" in learn
    assert "chooses C: map, map@k, ndcg, ndcg@k, mrr, p@k, rprec, roc, err@k, fake or " \
           "fake@k" in learn
    assert "in this order: map, map@k, ndcg, ndcg@k, mrr, p@k, rprec, roc, acc, err@k, " \
           "fake or fake@k" in classify
    assert text_values.select_metric("FAKE@3") == "fake@3"
    assert text_values.loss("fake@3") == "fake@3"
    # the parameter rule of the estimator and of svmmap_learn
    params = {**SVMMap().get_params(), "loss": "fake@3"}
    check_svmmap("SVMMap", params)
    with pytest.raises(ParameterError, match="fake or fake@k"):
        check_svmmap("SVMMap", {**params, "loss": "fake@0"})
    # trained by the record's plugin and oracle, reported and selected by its metric
    X, y, qid = graded_collection(seed=4)
    fake = SVMMap(loss="fake@3").fit(X, y, qid)
    np.testing.assert_array_equal(fake.coef_, SVMMap(loss="ndcg@3").fit(X, y, qid).coef_)
    scores = fake.decision_function(X)
    ndcg = metrics.ndcg_at_k(scores, y, qid, k=3)
    assert metrics.evaluate(scores, y, qid, measures="fake@3") == \
        {"FAKE@3": ndcg, "queries": 14}
    assert validation_measure("fake@3")(scores, y, qid) == ndcg
    # the experiments' SVMs for the measures beyond MAP
    from svmmap.experiments import registry

    assert list(registry._measure_losses())[-2:] == ["fake@10", "fake"]


def test_without_the_record_the_name_is_refused_everywhere():
    from svmmap.core import text_values

    with pytest.raises(ValueError, match="unknown metric"):
        measures.parse_metrics("fake@3")
    with pytest.raises(ValueError, match="select_metric must be"):
        validation_measure("fake@3")
    with pytest.raises(argparse.ArgumentTypeError):
        text_values.loss("fake@3")
    with pytest.raises(ParameterError):
        check_svmmap("SVMMap", {**SVMMap().get_params(), "loss": "fake@3"})


@pytest.mark.parametrize("use, text, parsed", [
    ("loss", "map", ("map", None)), ("loss", "ndcg", ("ndcg", None)),
    ("loss", "p@10", ("p", 10)), ("report", "map@3", ("map", 3)),
    ("report", "err@20", ("err", 20)), ("select", "rprec", ("rprec", None)),
])
def test_cutoff_rules(use, text, parsed):
    assert measures.parse(text, use) == parsed


@pytest.mark.parametrize("use, text", [
    ("loss", "map@3"), ("loss", "p"), ("loss", "err@10"), ("loss", "mrr@1"),
    ("report", "err"), ("report", "ndcg@0"), ("report", "ndcg@x"), ("select", "acc"),
    ("loss", "MAP"), ("loss", None),
])
def test_names_outside_the_rules_are_refused(use, text):
    with pytest.raises(ValueError, match="expected"):
        measures.parse(text, use)


def test_the_registry_imports_no_numpy():
    code = ("import sys, svmmap.core.measures, svmmap.core.options, svmmap.core.params; "
            "print(sorted(m for m in ('numpy', 'scipy', 'sklearn') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
