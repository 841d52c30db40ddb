"""SVM-ROC: the separation oracle against brute force over every ranking, its coefficients
against the pairwise definition, the ranking loss against the ROC-area metric, and the plugin
trained by both learners."""

from functools import partial

import numpy as np
import pytest

from svmmap import SVMMap, metrics
from svmmap.core.collection import QueryCollection
from svmmap.core.plugins.roc import RocPlugin
from svmmap.kernels._map_kernels import ranking_coefficients
from svmmap.kernels._roc_kernels import most_violated_roc, ranking_roc_loss

from brute_force import all_orders, pairwise_psi_dot_w, random_query, small_queries
from conftest import random_collection


def _roc_loss_of_orders(order, relevant):
    """1 - ROC-area of every ranking, from the definition: swapped pairs / (|P||N|)."""
    hits = relevant[order]
    non_above = np.cumsum(~hits, axis=1)  # non-relevant documents at or above each rank
    swapped = np.where(hits, non_above, 0).sum(axis=1)
    return swapped / (relevant.sum() * (~relevant).sum())


def _brute_force_max_h(scores, relevant):
    orders = all_orders(len(scores))
    h = _roc_loss_of_orders(orders, relevant) + pairwise_psi_dot_w(orders, scores, relevant)
    return h.max()


# tied queries on a dyadic grid: equal scores, and differences of exactly 1/2
TIES = (3, [0.125, 0.25, 0.5])
_random_query = partial(random_query, tie_grid=TIES)


def _oracle_h(scores, relevant):
    coef, loss = most_violated_roc(scores, relevant, np.array([0, len(scores)]))
    return loss[0] + coef @ scores


def test_oracle_equals_brute_force_on_small_queries():
    for scores, relevant in small_queries(2005, 2000, TIES):
        assert _oracle_h(scores, relevant) == pytest.approx(
            _brute_force_max_h(scores, relevant), abs=1e-12), (scores, relevant)


def test_oracle_equals_brute_force_on_the_largest_small_queries():
    rng = np.random.default_rng(9)
    for trial in range(6):
        scores, relevant = _random_query(rng, 4, 5, tied=trial % 2 == 0)
        assert _oracle_h(scores, relevant) == pytest.approx(
            _brute_force_max_h(scores, relevant), abs=1e-12)


def test_oracle_attains_the_pairwise_maximum_on_large_queries():
    """H decouples over pairs, so its maximum over rankings is
    1/(|P||N|) sum_{i, j} max(s_i - s_j, 1 - (s_i - s_j)); the oracle must attain it, and
    its loss must be the fraction of pairs with s_i - s_j < 1/2."""
    rng = np.random.default_rng(4)
    sizes = rng.integers(2, 300, 60)
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    scores = rng.normal(scale=0.7, size=ptr[-1])
    scores[rng.random(ptr[-1]) < 0.3] = 0.5  # exact ties and differences of exactly 1/2
    scores[rng.random(ptr[-1]) < 0.2] = 0.0
    relevant = rng.random(ptr[-1]) < rng.choice([0.05, 0.3, 0.7], ptr[-1])
    coef, loss = most_violated_roc(scores, relevant, ptr, n_threads=2)
    for q in range(len(sizes)):
        s, r = scores[ptr[q]:ptr[q + 1]], relevant[ptr[q]:ptr[q + 1]]
        if r.all() or not r.any():
            assert loss[q] == 0 and not coef[ptr[q]:ptr[q + 1]].any()
            continue
        diff = s[r][:, None] - s[~r][None, :]
        best = np.maximum(diff, 1 - diff).mean()
        assert loss[q] + coef[ptr[q]:ptr[q + 1]] @ s == pytest.approx(best, abs=1e-12)
        assert loss[q] == pytest.approx((diff < 0.5).mean(), abs=1e-15)


def test_oracle_coefficients_are_those_of_a_ranking_with_the_returned_loss():
    """Rank by the shifted scores (relevant - 1/4, non-relevant + 1/4; relevant first on a
    tie): psi coefficients and ROC loss of that ranking equal the oracle's output."""
    rng = np.random.default_rng(12)
    for trial in range(300):
        scores, relevant = _random_query(rng, rng.integers(1, 8), rng.integers(1, 12),
                                         tied=trial % 2 == 0)
        ptr = np.array([0, len(scores)])
        coef, loss = most_violated_roc(scores, relevant, ptr)
        shifted = np.where(relevant, scores - 0.25, scores + 0.25)
        order = np.lexsort((~relevant, -shifted))  # shifted score desc, relevant first
        rank_scores = np.empty(len(scores))
        rank_scores[order] = -np.arange(len(scores), dtype=float)
        expected_coef, _ = ranking_coefficients(rank_scores, relevant, ptr)
        np.testing.assert_allclose(coef, expected_coef, atol=1e-15)
        assert loss[0] == pytest.approx(ranking_roc_loss(rank_scores, relevant, ptr)[0])


def test_ranking_loss_breaks_ties_by_position_like_psi():
    rng = np.random.default_rng(21)
    for trial in range(500):
        scores, relevant = _random_query(rng, rng.integers(1, 6), rng.integers(1, 7),
                                         tied=trial % 2 == 0)
        order = np.lexsort((np.arange(len(scores)), -scores))  # ties: earlier row first
        expected = _roc_loss_of_orders(order[None, :], relevant)[0]
        loss = ranking_roc_loss(scores, relevant, np.array([0, len(scores)]))[0]
        assert loss == pytest.approx(expected, abs=1e-15)
        if len(np.unique(scores)) == len(scores):
            assert loss == pytest.approx(1 - metrics.roc_area(scores, relevant), abs=1e-12)


def test_degenerate_queries_and_threads():
    ptr = np.array([0, 0, 1, 4, 7, 12])
    rng = np.random.default_rng(1)
    scores = rng.normal(size=12)
    relevant = np.array([1, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 0], dtype=bool)
    one = most_violated_roc(scores, relevant, ptr, n_threads=1)
    two = most_violated_roc(scores, relevant, ptr, n_threads=2)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    coef, loss = one
    assert loss[:4].tolist() == [0.0, 0.0, 0.0, 0.0] and not coef[:7].any()
    assert ranking_roc_loss(scores, relevant, ptr)[:4].tolist() == [0.0] * 4
    with pytest.raises(ValueError, match="ptr"):
        most_violated_roc(scores, relevant, np.array([0, 5]))


def test_plugin_hooks_agree_with_brute_force():
    X, y, qid = random_collection(seed=3, n_queries=8, docs=(3, 7), n_features=3)
    collection = QueryCollection.from_arrays(X, y, qid).trainable()[0]
    plugin = RocPlugin(collection)
    w = np.random.default_rng(0).normal(size=3)
    batch = plugin.most_violated_constraints(w)
    for i in range(plugin.n_examples):
        y_hat = plugin.find_most_violated_constraint(i, w)
        y_star = plugin.true_output(i)
        h = plugin.loss(i, y_hat) + w @ (plugin.psi(i, y_hat) - plugin.psi(i, y_star))
        assert h == pytest.approx(batch.violations(w)[i], abs=1e-12)
        lo, hi = collection.ptr[i], collection.ptr[i + 1]
        relevant = collection.labels[lo:hi] > 0
        scores = collection.X[lo:hi] @ w
        assert plugin.loss(i, y_hat) + w @ plugin.psi(i, y_hat) == pytest.approx(
            _brute_force_max_h(scores, relevant), abs=1e-12)


def test_both_formulations_reach_the_same_optimum():
    X, y, qid = random_collection(seed=8, n_queries=10)
    n_slack = SVMMap(C=5, loss="roc", algorithm="n-slack", epsilon=1e-4).fit(X, y, qid)
    one_slack = SVMMap(C=5, loss="roc", algorithm="1-slack", epsilon=1e-4).fit(X, y, qid)
    objectives = [m.training_result_.primal_objective for m in (n_slack, one_slack)]
    assert objectives[0] == pytest.approx(objectives[1], abs=5 * 1e-4)
    assert one_slack.intercept_ == 0.0
    untrained = metrics.roc_area(X @ np.zeros(X.shape[1]), y, qid)
    assert metrics.roc_area(one_slack.decision_function(X), y, qid) > untrained
