"""Query weights: 1/2 |w|^2 + C/V sum_q v_q xi_q.  Weights of 1 give the unweighted problem
exactly; a weight of 2 is the query appearing twice (n-slack and 1-slack, every loss)."""

import numpy as np
import pytest

from svmmap import InputFormatError, SVMMap

from conftest import random_collection

LOSSES = ["map", "roc", "ndcg@5", "mrr", "p@3", "rprec", "acc"]


def _data(seed=3):
    X, y, qid = random_collection(seed=seed, n_queries=8, docs=(4, 12), n_features=4,
                                  rate=0.35)
    return X, y * (1 + qid % 2), qid  # graded labels on every other query


@pytest.mark.parametrize("algorithm", ["n-slack", "1-slack"])
@pytest.mark.parametrize("loss", LOSSES)
def test_weights_of_one_give_the_unweighted_problem_exactly(loss, algorithm):
    X, y, qid = _data()
    plain = SVMMap(C=10.0, loss=loss, algorithm=algorithm).fit(X, y, qid)
    ones = SVMMap(C=10.0, loss=loss, algorithm=algorithm).fit(X, y, qid,
                                                               sample_weight=np.ones(len(y)))
    np.testing.assert_array_equal(ones.coef_, plain.coef_)
    assert ones.training_result_.primal_objective == plain.training_result_.primal_objective


@pytest.mark.parametrize("algorithm", ["n-slack", "1-slack"])
@pytest.mark.parametrize("loss", LOSSES)
def test_a_weight_of_two_is_the_query_appearing_twice(loss, algorithm):
    X, y, qid = _data()
    twice = qid == 2
    X2 = np.vstack([X, X[twice]])
    y2 = np.concatenate([y, y[twice]])
    qid2 = np.concatenate([qid, np.full(twice.sum(), 99)])
    C, epsilon = 10.0, 1e-4
    duplicated = SVMMap(C=C, loss=loss, algorithm=algorithm, epsilon=epsilon).fit(X2, y2, qid2)
    weights = {q: 2.0 if q == 2 else 1.0 for q in np.unique(qid).tolist()}
    weighted = SVMMap(C=C, loss=loss, algorithm=algorithm, epsilon=epsilon).fit(
        X, y, qid, sample_weight=weights)
    a, b = duplicated.training_result_, weighted.training_result_
    # both reach the optimum of the same problem: within 1.01 C epsilon of it
    bound = 1.01 * C * epsilon
    assert a.primal_objective >= b.dual_objective - 1e-6
    assert b.primal_objective >= a.dual_objective - 1e-6
    assert abs(a.primal_objective - b.primal_objective) <= bound + 1e-9
    # strong convexity: 1/2 |w - w*|^2 <= P(w) - P*
    np.testing.assert_allclose(weighted.coef_, duplicated.coef_, atol=2 * np.sqrt(2 * bound))


def test_per_document_weights_and_the_mapping_agree():
    X, y, qid = _data()
    per_query = {q: 1.0 + q for q in np.unique(qid).tolist()}
    by_map = SVMMap(C=5.0).fit(X, y, qid, sample_weight=per_query)
    by_doc = SVMMap(C=5.0).fit(X, y, qid, sample_weight=1.0 + qid)
    np.testing.assert_array_equal(by_map.coef_, by_doc.coef_)


def test_zero_weight_leaves_a_query_out():
    X, y, qid = _data()
    keep = qid != 3
    without = SVMMap(C=5.0).fit(X[keep], y[keep], qid[keep])
    with pytest.warns(UserWarning, match="weight 0"):
        zero = SVMMap(C=5.0).fit(X, y, qid, sample_weight=np.where(qid == 3, 0.0, 1.0))
    np.testing.assert_allclose(zero.coef_, without.coef_, atol=1e-12)


@pytest.mark.parametrize("bad,match", [
    (np.ones(3), "rows"),
    ("varying", "varies within query"),
    ({0: 1.0}, "no weight for query"),
    ("negative", "non-negative"),
    ("zeros", "nothing to train on"),
])
def test_bad_weights_are_refused(bad, match):
    X, y, qid = _data()
    if isinstance(bad, str):
        bad = {"varying": np.arange(len(y), dtype=float), "negative": -np.ones(len(y)),
               "zeros": np.zeros(len(y))}[bad]
    with pytest.raises(InputFormatError, match=match):
        SVMMap().fit(X, y, qid, sample_weight=bad)


def test_command_line_query_weights(tmp_path, capsys):
    from svmmap import dump_svmlight
    from svmmap.commands.learn import learn_main

    X, y, qid = _data()
    train = tmp_path / "train.txt"
    dump_svmlight(train, X, y, qid)
    weights = {q: 1.0 + (q % 3) for q in np.unique(qid).tolist()}
    (tmp_path / "w.txt").write_text("# qid weight\n" + "".join(
        f"{q} {v}\n" for q, v in weights.items()))
    assert learn_main(["-c", "5", "-l", "ndcg@5", "-v", "0", "--query-weights",
                       str(tmp_path / "w.txt"), str(train), str(tmp_path / "m")]) in (0, None)
    expected = SVMMap(C=5.0, loss="ndcg@5").fit(X, y, qid, sample_weight=weights)
    np.testing.assert_allclose(SVMMap.load(tmp_path / "m").coef_, expected.coef_, rtol=1e-9)
    for text, message in [("0 1\n1 x\n", "w2.txt:2: weight 'x' is not a number"),
                          ("0 1\n0 2\n", "w2.txt:2: query '0' listed twice"),
                          ("0 1 2\n", "w2.txt:1: expected 'qid weight'"),
                          ("0 -1\n", "w2.txt:1: weight '-1' must be finite"),
                          ("0 1\n", "w2.txt: no weight for query 1")]:
        (tmp_path / "w2.txt").write_text(text)
        assert learn_main(["--query-weights", str(tmp_path / "w2.txt"), str(train),
                           str(tmp_path / "m2")]) == 1
        assert message in capsys.readouterr().err
        assert not (tmp_path / "m2").exists()
