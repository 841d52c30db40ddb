"""The most violated constraints of p@k, rprec, mrr and ndcg@k (svmmap.kernels._loss_kernels)
against
brute force over every ranking of small queries, ties in the scores and graded labels
included; the fused pass against the separate steps."""

import numpy as np
import pytest
import scipy.sparse as sp

from svmmap.core.measures import MEASURES
from svmmap.kernels._kernel_inputs import csr_for_kernels
from svmmap.kernels._loss_kernels import KINDS, loss_constraints, most_violated, ranking_losses
from svmmap.kernels._map_kernels import ideal_coefficients

from brute_force import (
    all_orders,
    brute_force_max_h_loss,
    gains_of_labels,
    loss_of_orders,
)

#: the cutoffs tried per cutoff rule of the kernels' table, on small (brute-forced) queries
#: and on large ones: a new kind is tested under its rule
CUTOFFS = {"required": (1, 2, 3, 10), "optional": (None, 1, 2, 3), "relevant": (None,),
           "none": (None,)}
LARGE_CUTOFFS = {"required": (10,), "optional": (10, None), "relevant": (None,),
                 "none": (None,)}
#: every kind of the kernels' table with the cutoffs of its rule
LOSSES = [(kind, k) for kind, rec in KINDS.items() for k in CUTOFFS[rec.cutoff]]
LARGE = [(kind, k) for kind, rec in KINDS.items() for k in LARGE_CUTOFFS[rec.cutoff]]
#: every kind with a cutoff of 3 where it takes one, and the whole ranking where it may
SOME = [(kind, k) for kind, rec in KINDS.items()
        for k in {"required": (3,), "optional": (3, None)}.get(rec.cutoff, (None,))]


def test_the_kernels_table_serves_every_measure_plugin_record():
    """Every measure MeasurePlugin trains for names a kind of the kernels' table, graded
    exactly when the measure is."""
    trained = [m for m in MEASURES.values() if m.plugin == "MeasurePlugin"]
    assert sorted(m.oracle for m in trained) == sorted(KINDS)
    for m in trained:
        assert KINDS[m.oracle].graded == m.graded, m.name


def _random_query(rng, m, tied):
    labels = rng.integers(0, 4, m).astype(float)  # graded: 1, 2, 3 relevant
    first, second = rng.choice(m, 2, replace=False)
    labels[first] = rng.integers(1, 4)  # a relevant document
    labels[second] = 0 if rng.random() < 0.5 else -1  # a non-relevant document
    if tied:  # few distinct values: ties within and across classes are common
        scores = rng.integers(-2, 3, m) * rng.choice([0.05, 0.3, 1.0])
    else:
        scores = rng.normal(scale=rng.choice([0.01, 0.3, 3.0]), size=m)
    return scores.astype(float), labels


def _psi_coefficients_of_orders(order, relevant):
    """c(y) of every ranking: c_i = (|N| - 2 a_i)/(|P||N|), c_j = (|P| - 2 b_j)/(|P||N|)."""
    hits = relevant[order]
    n_rel, n_non = relevant.sum(), (~relevant).sum()
    above_rel = np.cumsum(hits, axis=1) - hits  # relevant documents above each rank
    above_non = np.cumsum(~hits, axis=1) - ~hits
    coef_by_rank = np.where(hits, n_non - 2.0 * above_non, n_rel - 2.0 * above_rel)
    coef = np.empty_like(coef_by_rank)
    coef[np.arange(len(order))[:, None], order] = coef_by_rank
    return coef / (n_rel * n_non)


@pytest.mark.parametrize("kind,k", LOSSES)
def test_oracle_equals_brute_force_on_small_queries(kind, k):
    rng = np.random.default_rng(17 + (k or 0) + 100 * len(kind))
    for trial in range(250):
        scores, labels = _random_query(rng, rng.integers(2, 7), tied=trial % 2 == 0)
        coef, loss = most_violated(scores, gains_of_labels(labels), np.array([0, len(scores)]),
                                   kind, k)
        assert loss[0] + coef @ scores == pytest.approx(
            brute_force_max_h_loss(scores, labels, kind, k), abs=1e-12), (scores, labels)


@pytest.mark.parametrize("kind,k", SOME)
def test_oracle_returns_an_actual_ranking_and_its_loss(kind, k):
    """(c_hat, Delta) are the psi coefficients and the loss of one and the same ranking."""
    rng = np.random.default_rng(5)
    for trial in range(60):
        scores, labels = _random_query(rng, 6, tied=trial % 2 == 0)
        coef, loss = most_violated(scores, gains_of_labels(labels), np.array([0, 6]), kind, k)
        orders = all_orders(6)
        same_psi = np.all(np.isclose(_psi_coefficients_of_orders(orders, labels > 0), coef,
                                     atol=1e-12), axis=1)
        losses = loss_of_orders(orders[same_psi], labels, kind, k)
        assert np.any(np.isclose(losses, loss[0], atol=1e-12)), (scores, labels)


def test_oracle_on_the_largest_brute_forced_queries():
    rng = np.random.default_rng(7)
    for trial in range(4):
        scores, labels = _random_query(rng, 7, tied=trial % 2 == 0)
        for kind, k in SOME:
            coef, loss = most_violated(scores, gains_of_labels(labels), np.array([0, 7]),
                                       kind, k)
            assert loss[0] + coef @ scores == pytest.approx(
                brute_force_max_h_loss(scores, labels, kind, k), abs=1e-12)


@pytest.mark.parametrize("kind,k", LOSSES)
def test_ranking_losses_follow_the_definitions(kind, k):
    """Delta of the ranking by score, ties broken by position, over many queries at once."""
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 9, 300)
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    labels = rng.integers(0, 4, ptr[-1]) * (rng.random(ptr[-1]) < 0.5)
    scores = rng.integers(0, 4, ptr[-1]).astype(float)
    losses = ranking_losses(scores, gains_of_labels(labels), ptr, kind, k)
    for q in range(len(sizes)):
        s, lab = scores[ptr[q]:ptr[q + 1]], labels[ptr[q]:ptr[q + 1]]
        if (lab > 0).all() or not (lab > 0).any():
            assert losses[q] == 0.0
            continue
        order = np.lexsort((np.arange(len(s)), -s))[None, :]
        assert losses[q] == pytest.approx(loss_of_orders(order, lab, kind, k)[0], abs=1e-12)


@pytest.mark.parametrize("kind,k", LARGE)
@pytest.mark.parametrize("sparse", [False, True])
def test_fused_pass_equals_oracle_plus_psi(kind, k, sparse):
    rng = np.random.default_rng(8)
    sizes = rng.integers(2, 60, 80)
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    X = rng.normal(size=(ptr[-1], 5)) * (rng.random((ptr[-1], 5)) < 0.6)
    labels = rng.integers(0, 3, ptr[-1]) * (rng.random(ptr[-1]) < 0.4)
    gains = gains_of_labels(labels)
    w = rng.normal(size=5)
    coef, loss = most_violated(X @ w, gains, ptr, kind, k)
    blocks = sp.csr_matrix((ideal_coefficients(gains > 0, ptr) - coef, np.arange(ptr[-1]), ptr))
    X_in = csr_for_kernels(sp.csr_matrix(X)) if sparse else X
    for threads in (1, 2):
        fused_loss, fused_coef, fused_margin = loss_constraints(X_in, w, gains, ptr, kind, k,
                                                                threads)
        fused_dpsi = sp.csr_matrix((fused_coef, np.arange(ptr[-1]), ptr)) @ X
        np.testing.assert_allclose(fused_loss, loss, atol=1e-12)
        np.testing.assert_allclose(fused_dpsi, blocks @ X, atol=1e-12)
        np.testing.assert_allclose(fused_margin, blocks @ X @ w, atol=1e-12)


def test_bad_arguments_are_refused():
    gains = np.array([1.0, 0.0, 3.0])
    with pytest.raises(ValueError, match="kind"):
        most_violated(np.zeros(3), gains, np.array([0, 3]), "ndgc")
    with pytest.raises(ValueError, match="cutoff"):
        most_violated(np.zeros(3), gains, np.array([0, 3]), "p@k", 0)
    with pytest.raises(ValueError, match="gains"):
        most_violated(np.zeros(3), np.array([1.0, -1.0, 0.0]), np.array([0, 3]), "mrr")


@pytest.mark.parametrize("kind,k", LARGE)
def test_no_adjacent_swap_improves_the_oracle_ranking_on_large_queries(kind, k):
    """Beyond brute force: on queries of 30-80 documents the oracle's ranking y_hat is at
    least as violated as every ranking one adjacent swap away, the ranking by score and
    the correct ranking."""
    from svmmap.core.plugins.ranking import ranking_from_coefficients
    from svmmap.kernels._map_kernels import ranking_coefficients

    rng = np.random.default_rng(21)

    def h(order, scores, gains):
        fake = np.empty(len(order))
        fake[order] = -np.arange(len(order), dtype=float)
        ptr = np.array([0, len(order)])
        coef, _ = ranking_coefficients(fake, gains > 0, ptr)
        return ranking_losses(fake, gains, ptr, kind, k)[0] + coef @ scores

    for _ in range(6):
        m = int(rng.integers(30, 80))
        labels = rng.integers(0, 4, m) * (rng.random(m) < 0.4)
        labels[0], labels[1] = 2, 0
        gains = gains_of_labels(labels)
        scores = np.round(rng.normal(scale=0.05, size=m), 2)  # ties
        coef, loss = most_violated(scores, gains, np.array([0, m]), kind, k)
        y_hat = ranking_from_coefficients(coef, scores, gains)
        best = h(y_hat, scores, gains)
        assert best == pytest.approx(loss[0] + coef @ scores, abs=1e-12)
        others = [np.lexsort((np.arange(m), -scores)), np.argsort(-gains, kind="stable")]
        for r in range(m - 1):
            swapped = y_hat.copy()
            swapped[[r, r + 1]] = swapped[[r + 1, r]]
            others.append(swapped)
        for order in others:
            assert h(order, scores, gains) <= best + 1e-12
