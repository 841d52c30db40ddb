"""SVM-ACC: the accuracy plugin solves the standard soft-margin SVM with a free bias (checked
against an independent QP), its ACC2 cost ratio, the MAP-vs-accuracy example of the paper's
Section 2, and the ROC / ACC baselines through the command line on OHSUMED Fold1."""

import numpy as np
import pytest
from cvxopt import matrix, solvers

from svmmap import SVMMap, load_svmlight, metrics
from svmmap.commands.classify import classify_main
from svmmap.commands.learn import learn_main
from svmmap.core.collection import QueryCollection
from svmmap.core.plugins.accuracy import AccuracyPlugin

from conftest import data_file, random_collection


def _data(seed=0):
    """Small random ranking data; query 0 has no relevant document (it still holds
    classification examples)."""
    X, y, qid = random_collection(seed=seed, n_queries=7, docs=(4, 12), n_features=4)
    y[qid == 0] = 0.0
    return X, y, qid


def _standard_svm(X, y, C, cost):
    """min 1/2|w|^2 + C/n sum_d cost_d max(0, 1 - t_d (w.x_d + b)), t = +1 for y > 0, by
    cvxopt on its dual  max sum a - 1/2 a^T Q a,  0 <= a_d <= cost_d C/n,  t.a = 0;
    w = sum_d a_d t_d x_d, and b is the multiplier of the equality constraint."""
    t = np.where(y > 0, 1.0, -1.0)
    n = len(t)
    Q = (t[:, None] * X) @ (t[:, None] * X).T
    G = np.vstack([-np.eye(n), np.eye(n)])
    h = np.concatenate([np.zeros(n), cost * C / n])
    options = {"show_progress": False, "abstol": 1e-12, "reltol": 1e-12, "feastol": 1e-12}
    sol = solvers.qp(matrix(Q), matrix(-np.ones(n)), matrix(G), matrix(h),
                     matrix(t[None, :]), matrix(0.0), options=options)
    assert sol["status"] == "optimal"
    alpha = np.array(sol["x"]).ravel()
    return (alpha * t) @ X, float(np.array(sol["y"]).ravel()[0])


@pytest.mark.parametrize("algorithm", ["1-slack", "n-slack"])
@pytest.mark.parametrize("C, cost_ratio", [(0.3, 1.0), (30.0, 1.0), (5.0, 2.5)])
def test_acc_equals_the_standard_soft_margin_svm(algorithm, C, cost_ratio):
    X, y, qid = _data()
    model = SVMMap(C=C, loss="acc", algorithm=algorithm, epsilon=1e-9,
                   cost_ratio=cost_ratio).fit(X, y, qid)
    cost = np.where(y > 0, cost_ratio, 1.0)
    w, b = _standard_svm(X, y, C, cost)
    np.testing.assert_allclose(model.coef_, w, atol=1e-4)
    assert model.intercept_ == pytest.approx(b, abs=1e-4)
    np.testing.assert_allclose(model.decision_function(X), X @ w + b, atol=1e-3)


def test_acc_equals_scikit_learn_svc():
    svm = pytest.importorskip("sklearn.svm")
    X, y, qid = _data(seed=3)
    n, C, J = len(y), 10.0, 1.7
    model = SVMMap(C=C, loss="acc", epsilon=1e-9, cost_ratio=J).fit(X, y, qid)
    svc = svm.SVC(kernel="linear", C=C / n, class_weight={1: J}, tol=1e-10)
    svc.fit(X, np.where(y > 0, 1, -1))
    np.testing.assert_allclose(model.coef_, svc.coef_.ravel(), atol=1e-4)
    assert model.intercept_ == pytest.approx(svc.intercept_[0], abs=1e-4)


def test_balanced_cost_ratio_is_nonrelevant_over_relevant():
    X, y, qid = _data()
    collection = QueryCollection.from_arrays(X, y, qid)
    plugin = AccuracyPlugin(collection, cost_ratio="balanced")
    assert plugin.cost_ratio == pytest.approx(np.sum(y <= 0) / np.sum(y > 0))
    balanced = SVMMap(C=5, loss="acc", cost_ratio="balanced", epsilon=1e-9).fit(X, y, qid)
    explicit = SVMMap(C=5, loss="acc", cost_ratio=plugin.cost_ratio, epsilon=1e-9)
    np.testing.assert_allclose(balanced.coef_, explicit.fit(X, y, qid).coef_, atol=1e-6)


@pytest.mark.parametrize("params", [{"cost_ratio": 0}, {"cost_ratio": "auto"},
                                    {"cost_ratio": True},
                                    {"cost_ratio": 2.0, "loss": "map"}])
def test_bad_cost_ratio_fails_at_fit(params):
    with pytest.raises(ValueError, match="cost_ratio"):
        SVMMap(**{"loss": "acc", **params}).fit(*_data())


def test_per_example_hooks_agree_with_the_batch_hook():
    X, y, qid = _data(seed=5)
    plugin = AccuracyPlugin(QueryCollection.from_arrays(X, y, qid), cost_ratio=2.0)
    assert plugin.regularized.tolist() == [True] * 4 + [False]
    w = np.random.default_rng(1).normal(size=5)
    batch = plugin.most_violated_constraints(w)
    for i in range(plugin.n_examples):
        y_star, y_hat = plugin.true_output(i), plugin.find_most_violated_constraint(i, w)
        assert plugin.loss(i, y_star) == 0.0
        assert batch.loss[i] == pytest.approx(plugin.loss(i, y_hat))
        np.testing.assert_allclose(batch.dpsi[i],
                                   plugin.psi(i, y_star) - plugin.psi(i, y_hat), atol=1e-12)
        # y_hat maximises Delta(y) + w.psi(y) over all labellings of a small query
        lo, hi = plugin.collection.ptr[i], plugin.collection.ptr[i + 1]
        if hi - lo <= 8:
            best = max(plugin.loss(i, y) + w @ plugin.psi(i, y) for y in _labellings(hi - lo))
            assert plugin.loss(i, y_hat) + w @ plugin.psi(i, y_hat) == pytest.approx(best)
        decision = plugin.collection.X[lo:hi] @ w[:-1] + w[-1]
        np.testing.assert_array_equal(plugin.classify_example(i, w),
                                      np.where(decision > 0, 1, -1))


def _labellings(m):
    return [np.array([1 if (k >> d) & 1 else -1 for d in range(m)]) for k in range(2 ** m)]


def test_mean_loss_is_the_training_error_rate():
    X, y, qid = _data(seed=6)
    plugin = AccuracyPlugin(QueryCollection.from_arrays(X, y, qid))
    w = np.random.default_rng(2).normal(size=5)
    errors = [plugin.loss(i, plugin.classify_example(i, w)) for i in range(plugin.n_examples)]
    collection = plugin.collection
    predicted = np.where(collection.X @ w[:-1] + w[-1] > 0, 1.0, 0.0)
    assert np.mean(errors) == pytest.approx(np.mean(predicted != (collection.labels > 0)))


def test_training_needs_both_classes():
    X, y, qid = _data()
    with pytest.raises(ValueError, match="both relevant"):
        SVMMap(loss="acc").fit(X, np.zeros_like(y), qid)


# -- the paper's example: MAP and accuracy disagree ------------------------------------------
#
# Yue et al. (2007), Section 2, Tables 3 and 4, contrast two hypotheses on one query whose
# best-threshold accuracies are 0.64 (h1) and 0.73 (h2) while h1 has the higher MAP.  The
# table itself could not be retrieved here, so the rankings below are constructed to the
# paper's figures: 11 documents, 5 relevant (R) and 6 not (N).
#   h1: R N R N R N R N R N N   best accuracy 7/11 = 0.64, AP 0.679
#   h2: N R R R N N N N R N R   best accuracy 8/11 = 0.73, AP 0.563

RANKINGS = {"h1": "RNRNRNRNRNN", "h2": "NRRRNNNNRNR"}


def _example(name):
    labels = np.array([1.0 if c == "R" else 0.0 for c in RANKINGS[name]])
    return np.arange(len(labels), 0, -1, dtype=float), labels  # scores down the ranking


@pytest.mark.parametrize("name, accuracy", [("h1", 0.64), ("h2", 0.73)])
def test_table_4_best_threshold_accuracy(name, accuracy):
    assert round(metrics.best_threshold_accuracy(*_example(name)), 2) == accuracy


def test_map_prefers_h1_while_accuracy_prefers_h2():
    ap = {n: metrics.mean_average_precision(*_example(n)) for n in RANKINGS}
    acc = {n: metrics.best_threshold_accuracy(*_example(n)) for n in RANKINGS}
    assert ap["h1"] > ap["h2"] and acc["h1"] < acc["h2"]
    assert ap["h1"] == pytest.approx((1 + 2 / 3 + 3 / 5 + 4 / 7 + 5 / 9) / 5)


# -- the baselines through the command line on OHSUMED Fold1 ---------------------------------

BASELINES = {
    "roc": ["-l", "roc", "--bin", "20"],
    "acc": ["-l", "acc", "--bin", "20"],
    "acc2": ["-l", "acc", "--bin", "20", "--acc-variant", "2"],
    "acc3": ["-l", "acc", "--acc-variant", "3", "--bin", "20"],
    "acc4": ["-l", "acc", "--acc-variant", "4", "--bin", "20"],
}


@pytest.fixture(scope="module")
def ohsumed_fold1():
    train, test = data_file("OHSUMED", "Fold1", "train.txt"), data_file("OHSUMED", "Fold1",
                                                                        "test.txt")
    return train, test, load_svmlight(test)


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_baselines_train_and_predict_through_the_cli_on_ohsumed(name, ohsumed_fold1, tmp_path,
                                                                capsys):
    train, test, (X, y, qid) = ohsumed_fold1
    model_file, predictions = tmp_path / "model.json", tmp_path / "pred.txt"
    assert learn_main(["-c", "1", "-e", "0.01", "-v", "0", *BASELINES[name], str(train),
                       str(model_file)]) == 0
    assert classify_main([str(test), str(model_file), str(predictions)]) == 0
    scores = np.loadtxt(predictions)
    model = SVMMap.load(model_file)
    np.testing.assert_array_equal(scores, model.decision_function(X, qid))
    assert model.training_result_.status == "converged"
    assert (model.intercept_ == 0.0) == (name == "roc")
    assert model.cost_ratio == ("balanced" if name == "acc2" else 1.0)
    assert model.feature_map_.per_query == {"acc3": "percentile", "acc4": "minmax"}.get(name)
    test_map = metrics.mean_average_precision(scores, y, qid)
    assert f"MAP: {test_map:.4f}" in capsys.readouterr().out
    rng = np.random.default_rng(0)
    random_map = np.mean([metrics.mean_average_precision(rng.random(len(y)), y, qid)
                          for _ in range(10)])  # about 0.20
    assert test_map > random_map + 0.05
