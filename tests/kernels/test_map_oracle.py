"""Algorithm 2 (the most violated constraint for Delta_MAP) against brute force over every
ranking, and the psi closed form against the pairwise definition of the paper."""

from functools import partial

import numpy as np
import pytest

from svmmap.kernels._map_kernels import ideal_coefficients, most_violated_map, ranking_coefficients

from brute_force import (
    average_precision_of_orders,
    brute_force_max_h,
    pairwise_psi_dot_w,
    random_query,
    small_queries,
)

TIES = (2, [0.05, 0.3, 1.0])  # tied queries: integers in [-2, 2] times one of these steps
_random_query = partial(random_query, tie_grid=TIES)


def _oracle_h(scores, relevant, method):
    coef, loss = most_violated_map(scores, relevant, np.array([0, len(scores)]), method)
    return loss[0] + coef @ scores


@pytest.mark.parametrize("method", ["divide", "scan"])
def test_oracle_equals_brute_force_on_small_queries(method):
    for scores, relevant in small_queries(20071, 2000, TIES):
        assert _oracle_h(scores, relevant, method) == pytest.approx(
            brute_force_max_h(scores, relevant), abs=1e-12
        ), (scores, relevant)


def test_oracle_equals_brute_force_on_the_largest_small_queries():
    rng = np.random.default_rng(7)
    for trial in range(12):
        n_rel = 4
        n_non = 5 if trial % 3 else 4
        scores, relevant = _random_query(rng, n_rel, n_non, tied=trial % 2 == 0)
        expected = brute_force_max_h(scores, relevant)
        for method in ("divide", "scan"):
            assert _oracle_h(scores, relevant, method) == pytest.approx(expected, abs=1e-12)


def test_oracle_returns_a_consistent_ranking():
    """The coefficients returned are those of an actual ranking whose loss is the one returned:
    re-deriving them from the implied order gives the same numbers."""
    rng = np.random.default_rng(3)
    for _ in range(300):
        scores, relevant = _random_query(rng, rng.integers(1, 6), rng.integers(1, 9), False)
        ptr = np.array([0, len(scores)])
        coef, loss = most_violated_map(scores, relevant, ptr)
        p, n = relevant.sum(), (~relevant).sum()
        # c_i = (|N| - 2 a_i)/(|P||N|): recover a_i, b_j, then an order realising them
        above = np.where(relevant, (n - coef * p * n) / 2, (p - coef * p * n) / 2)
        assert np.allclose(above, np.round(above))
        key = np.where(relevant, -scores, 0.0)
        rel_order = np.flatnonzero(relevant)[np.argsort(key[relevant], kind="stable")]
        a = np.round(above[rel_order]).astype(int)
        ap = np.mean((np.arange(1, p + 1)) / (np.arange(1, p + 1) + a))
        assert loss[0] == pytest.approx(1 - ap, abs=1e-12)


def test_divide_and_conquer_equals_scan_on_large_queries():
    rng = np.random.default_rng(11)
    sizes = rng.integers(2, 400, 200)
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    scores = rng.normal(size=ptr[-1])
    relevant = rng.random(ptr[-1]) < rng.choice([0.02, 0.2, 0.6], ptr[-1])
    c_div, l_div = most_violated_map(scores, relevant, ptr, "divide")
    c_scan, l_scan = most_violated_map(scores, relevant, ptr, "scan")
    np.testing.assert_allclose(c_div, c_scan, atol=1e-12)
    np.testing.assert_allclose(l_div, l_scan, atol=1e-12)


def test_threads_do_not_change_results():
    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 60, 500)
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    scores = rng.normal(size=ptr[-1])
    relevant = rng.random(ptr[-1]) < 0.3
    one = most_violated_map(scores, relevant, ptr, n_threads=1)
    two = most_violated_map(scores, relevant, ptr, n_threads=2)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)


def test_psi_closed_form_equals_pairwise_definition():
    rng = np.random.default_rng(2)
    for _ in range(200):
        m = rng.integers(2, 8)
        scores = rng.integers(0, 3, m).astype(float)  # ties: broken by position
        relevant = rng.random(m) < 0.5
        if relevant.all() or not relevant.any():
            continue
        features = rng.normal(size=(m, 3))
        coef, ap = ranking_coefficients(scores, relevant, np.array([0, m]))
        order = np.lexsort((np.arange(m), -scores))[None, :]
        pairwise = np.array(
            [pairwise_psi_dot_w(order, features[:, f], relevant)[0] for f in range(3)]
        )
        np.testing.assert_allclose(features.T @ coef, pairwise, atol=1e-12)
        assert ap[0] == pytest.approx(average_precision_of_orders(order, relevant)[0])


def test_ideal_coefficients_are_those_of_the_perfect_ranking():
    relevant = np.array([1, 0, 0, 1, 1, 0, 1, 0, 0], dtype=bool)
    ptr = np.array([0, 3, 6, 6, 7, 9])
    perfect_scores = np.where(relevant, 1.0, 0.0)
    coef, ap = ranking_coefficients(perfect_scores, relevant, ptr)
    np.testing.assert_allclose(ideal_coefficients(relevant, ptr), coef)
    np.testing.assert_allclose(ap, [1.0, 1.0, 0.0, 1.0, 0.0])


def test_oracle_rejects_inconsistent_offsets():
    with pytest.raises(ValueError):
        most_violated_map(np.zeros(3), np.zeros(3), np.array([0, 2]))
    with pytest.raises(ValueError):
        most_violated_map(np.zeros(3), np.zeros(3), np.array([0, 3]), method="greedy")


@pytest.mark.parametrize("sparse", [None, np.int32, np.int64])
@pytest.mark.parametrize("threads", [1, 2])
def test_fused_pass_equals_oracle_plus_psi(sparse, threads):
    """map_constraints (scores, sort, Algorithm 2 and the coefficients of dpsi in one pass)
    against the separate steps: scores by numpy, most_violated_map, and dpsi =
    X_q^T (c* - c_hat) by scipy; dense X and CSR X with int32 or int64 indices (read in
    place)."""
    import scipy.sparse as sp

    from svmmap.kernels._map_kernels import csr_for_kernels, map_constraints

    rng = np.random.default_rng(8)
    sizes = rng.integers(2, 80, 150)
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    X = rng.normal(size=(ptr[-1], 7)) * (rng.random((ptr[-1], 7)) < 0.6)
    relevant = rng.random(ptr[-1]) < 0.3
    relevant[ptr[:-1]] = True  # every query has a relevant ...
    relevant[ptr[1:] - 1] = False  # ... and a non-relevant document
    w = rng.normal(size=7)
    coef, loss = most_violated_map(X @ w, relevant, ptr)
    blocks = sp.csr_matrix((ideal_coefficients(relevant, ptr) - coef, np.arange(ptr[-1]), ptr))
    expected = blocks @ X
    X_in = X
    if sparse is not None:
        csr = sp.csr_matrix(X)
        csr.indices, csr.indptr = csr.indices.astype(sparse), csr.indptr.astype(sparse)
        X_in = csr_for_kernels(csr)
        assert X_in.indices.dtype == sparse and X_in.indices is csr.indices  # no copy
    fused_loss, fused_coef, fused_margin = map_constraints(X_in, w, relevant, ptr,
                                                           n_threads=threads)
    fused_dpsi = sp.csr_matrix((fused_coef, np.arange(ptr[-1]), ptr)) @ X
    np.testing.assert_allclose(fused_loss, loss, atol=1e-12)
    np.testing.assert_allclose(fused_dpsi, expected, atol=1e-12)
    np.testing.assert_allclose(fused_margin, expected @ w, atol=1e-12)
