"""The binned features held implicitly (svmmap.kernels._kernel_inputs.BinnedArrays): every product
the training and prediction paths take of X equals the explicit indicator matrix's
(BinnedFeatureMap.transform), and a fit through the bins reaches the model a fit on the
explicit matrix reaches, for every loss and both learners."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from svmmap import SVMMap
from svmmap.core.plugins.rows import DocumentBasis, QueryRows
from svmmap.experiments.registry import CANDIDATES
from svmmap.features import BinnedFeatureMap
from svmmap.kernels._binned_rows import binned_lookup, binned_transpose
from svmmap.kernels._csr import indicator_matrix, row_block, scores, take_rows, training_scores
from svmmap.kernels._kernel_inputs import BinnedArrays, CSRArrays, csr_for_kernels
from svmmap.kernels._loss_kernels import loss_constraints
from svmmap.kernels._map_kernels import combine_rows, map_constraints
from svmmap.kernels._roc_kernels import roc_constraints
from svmmap.metrics import mean_average_precision
from svmmap.model_selection import SVMMapCV

from conftest import traced_peak

# generated queries without a relevant document are skipped, as they should be
pytestmark = pytest.mark.filterwarnings("ignore:.*carry no constraint")


def _scores_data(seed, dtype=np.float64):
    """Base scores with ties, a column of few values, a constant column, a column that is 0
    for most documents; queries of 1 to 30 documents (one-document queries included),
    shuffled qids; binary labels that follow the first column."""
    rng = np.random.default_rng(seed)
    sizes = np.concatenate([[1, 1], rng.integers(1, 31, 10)])
    qid = rng.permutation(np.repeat(np.arange(len(sizes)) * 5 + 2, sizes))
    m = len(qid)
    X = np.column_stack([rng.normal(size=m).round(1), rng.integers(0, 5, m) * 0.25,
                         np.full(m, 3.0), rng.exponential(size=m) * (rng.random(m) < 0.3),
                         rng.normal(size=m)]).astype(dtype)
    y = (X[:, 0] + rng.normal(scale=0.7, size=m) > 0.6).astype(float)
    y[:2] = [1.0, 0.0]
    return X, y, qid


def _binned(seed, n_thresholds=7, per_query=None, dtype=np.float64):
    """(implicit BinnedArrays, explicit scipy CSR, the map, X, y, qid) of generated data."""
    X, y, qid = _scores_data(seed, dtype)
    fitted = BinnedFeatureMap(n_thresholds, per_query=per_query).fit(X, qid)
    return fitted.transform_bins(X, qid), fitted.transform(X, qid), fitted, X, y, qid


def _naive(X, fitted):
    """phi from the definition: [1[f > k] for k in K_f] for every base column f."""
    return np.hstack([(X[:, [c]] > k[None, :]).astype(float)
                      for c, k in zip(fitted.base_columns_, fitted.thresholds_)])


CASES = [(seed, n, per_query, dtype) for seed in range(4)
         for n, per_query, dtype in [(7, None, np.float64), (3, None, np.float32),
                                     (12, "percentile", np.float64), (5, "minmax", np.float32)]]


@pytest.mark.parametrize("seed, n_thresholds, per_query, dtype", CASES)
def test_the_bins_stand_for_the_indicator_matrix(seed, n_thresholds, per_query, dtype):
    implicit, explicit, fitted, X, _, qid = _binned(seed, n_thresholds, per_query, dtype)
    assert isinstance(implicit, BinnedArrays) and implicit.bins.dtype == np.uint8
    assert implicit.bins.flags.c_contiguous and implicit.shape == explicit.shape
    widths = [len(k) for k in fitted.thresholds_]
    np.testing.assert_array_equal(implicit.widths, widths)
    if per_query is None:  # widths differ; a constant column has none
        assert len(set(widths)) > 1 and 0 in widths
    assert np.any(implicit.bins[:, 0] == 0)  # documents below every threshold
    np.testing.assert_array_equal(indicator_matrix(implicit).toarray(), explicit.toarray())
    if per_query is None:  # scores equal to thresholds (observed values) count as below
        np.testing.assert_array_equal(explicit.toarray(), _naive(X, fitted))


@pytest.mark.parametrize("seed, n_thresholds, per_query, dtype", CASES)
def test_products_equal_the_explicit_matrix(seed, n_thresholds, per_query, dtype):
    implicit, explicit, *_ = _binned(seed, n_thresholds, per_query, dtype)
    rng = np.random.default_rng(100 + seed)
    dense = explicit.toarray()
    m, d = dense.shape
    w = rng.normal(size=d)
    # scoring: the bits of the indicator matrix's product; training: the lookup's sums
    np.testing.assert_array_equal(scores(implicit, w), explicit @ w)
    np.testing.assert_allclose(training_scores(implicit, w), dense @ w, rtol=1e-12,
                               atol=1e-12)
    ptr = np.array([0, m // 3, m // 3, m], dtype=np.intp)  # an empty query too
    coef, weights = rng.normal(size=m), np.array([0.5, 2.0, -1.0])
    coef[::4] = 0.0
    u = np.repeat(weights, np.diff(ptr)) * coef
    np.testing.assert_allclose(combine_rows(implicit, coef, ptr, weights), dense.T @ u,
                               rtol=1e-12, atol=1e-12)
    rows = rng.integers(0, m, 25)
    taken = take_rows(implicit, rows)
    np.testing.assert_array_equal(indicator_matrix(taken).toarray(), dense[rows])
    np.testing.assert_array_equal(row_block(implicit, 3, 9).toarray(), dense[3:9])
    basis = DocumentBasis(implicit, ptr)
    np.testing.assert_allclose(basis.forward(w), dense @ w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(basis.backward(coef), dense.T @ coef, rtol=1e-12, atol=1e-12)


def test_the_lookup_tables_and_histograms_follow_their_formulas():
    w = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0])
    widths = np.array([2, 0, 3, 1], dtype=np.intp)
    # L_f[b] = sum_{j < b} w_{off_f + j}, b = 0 .. W_f, base after base
    np.testing.assert_array_equal(binned_lookup(w, widths),
                                  [0, 1, 3, 0, 0, 4, 12, 28, 0, 32])
    bins = np.array([[2, 0, 3, 1], [1, 0, 0, 0], [0, 0, 2, 1]], dtype=np.uint8)
    u = np.array([1.0, 10.0, 100.0])
    # (X^T u)_{off_f + j} = sum of u over the documents with b_f > j; two groups of rows
    out = binned_transpose(bins, widths, u, np.array([0, 2, 3], dtype=np.intp))
    np.testing.assert_array_equal(out, [[11, 1, 1, 1, 1, 1], [0, 0, 100, 100, 0, 100]])


@pytest.mark.parametrize("seed", range(3))
def test_the_fused_passes_equal_the_explicit_matrix(seed):
    implicit, explicit, _, _, y, qid = _binned(seed, n_thresholds=9)
    order = np.argsort(qid, kind="stable")  # the kernels read grouped documents
    implicit, explicit, y = take_rows(implicit, order), explicit[order], y[order]
    ptr = np.concatenate([[0], np.cumsum(np.unique(qid, return_counts=True)[1])])
    relevant = (y > 0).astype(np.uint8)
    w = np.random.default_rng(seed).normal(size=explicit.shape[1])
    arrays = csr_for_kernels(explicit)
    passes = [lambda X, t: map_constraints(X, w, relevant, ptr, n_threads=t),
              lambda X, t: roc_constraints(X, w, relevant, ptr, n_threads=t),
              lambda X, t: loss_constraints(X, w, relevant * 1.0, ptr, "mrr", n_threads=t),
              lambda X, t: loss_constraints(X, w, relevant * 3.0, ptr, "ndcg", 5,
                                            n_threads=t)]
    for run in passes:
        want = run(arrays, 1)
        for threads in (1, 2):
            got = run(implicit, threads)
            for a, b in zip(got, want):
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_wide_bins_are_uint16_and_give_the_same_products():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(3000, 3))
    qid = np.repeat(np.arange(30), 100)
    fitted = BinnedFeatureMap(400).fit(X)
    implicit, dense = fitted.transform_bins(X), fitted.transform(X).toarray()
    assert implicit.bins.dtype == np.uint16 and max(implicit.widths) >= 256
    w, u = rng.normal(size=dense.shape[1]), rng.normal(size=len(X))
    np.testing.assert_array_equal(scores(implicit, w), sp.csr_matrix(dense) @ w)
    np.testing.assert_allclose(training_scores(implicit, w), dense @ w, rtol=1e-12,
                               atol=1e-12)
    ptr = np.arange(0, 3001, 100)
    np.testing.assert_allclose(combine_rows(implicit, u, ptr, np.ones(30)), dense.T @ u,
                               rtol=1e-12, atol=1e-12)
    relevant = (X[:, 0] > 1).astype(np.uint8)
    for got, want in zip(map_constraints(implicit, w, relevant, ptr, n_threads=2),
                         map_constraints(csr_for_kernels(dense), w, relevant, ptr)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    del qid


@pytest.mark.parametrize("bias", [False, True])
def test_query_rows_equal_the_explicit_rows(bias):
    implicit, explicit, _, _, y, qid = _binned(5, n_thresholds=6)
    order = np.argsort(qid, kind="stable")
    implicit, dense = take_rows(implicit, order), explicit[order].toarray()
    sizes = np.unique(qid, return_counts=True)[1]
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    query_of_doc = np.repeat(np.arange(len(sizes)), sizes)
    rng = np.random.default_rng(5)
    coef = rng.normal(size=len(order))
    queries = np.array([3, 0, 7, 1], dtype=np.intp)
    made = [QueryRows(X, coef, ptr, query_of_doc, queries, bias=bias)
            for X in (implicit, CSRArrays(*csr_for_kernels(sp.csr_matrix(dense))))]
    w, v = rng.normal(size=made[0].shape[1]), rng.normal(size=len(queries))
    np.testing.assert_allclose(made[0][[2, 0]], made[1][[2, 0]], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(made[0][1], made[1][1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(made[0]), np.asarray(made[1]), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(made[0] @ w, made[1] @ w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(v @ made[0], v @ made[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("form", ["binned", "csr int32", "csr int64", "dense", "dense float32"])
def test_group_sums_are_every_groups_own_product(form, bias):
    """QueryRows.group_sums, one pass over X for all groups, equals each group's own product
    v_g @ D (v zero outside the group) to the bit, on the rows of a subset of the queries in
    a shuffled order, with and without a bias column (that column to rounding: a bincount,
    not a dot product), an empty group included; and it refuses weights that do not fit."""
    implicit, explicit, _, X, y, qid = _binned(6, n_thresholds=5)
    order = np.argsort(qid, kind="stable")
    sizes = np.unique(qid, return_counts=True)[1]
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    query_of_doc = np.repeat(np.arange(len(sizes)), sizes)
    dense = X[order]
    csr = sp.csr_matrix(dense)
    features = {
        "binned": take_rows(implicit, order),
        "csr int32": CSRArrays(csr.data, csr.indices.astype(np.int32),
                               csr.indptr.astype(np.int32), csr.shape),
        "csr int64": CSRArrays(csr.data, csr.indices.astype(np.intp),
                               csr.indptr.astype(np.intp), csr.shape),
        "dense": np.ascontiguousarray(dense),
        "dense float32": np.ascontiguousarray(dense, dtype=np.float32)}[form]
    rng = np.random.default_rng(6)
    queries = rng.permutation(len(sizes))[:9].astype(np.intp)
    rows = QueryRows(features, rng.normal(size=len(order)), ptr, query_of_doc, queries,
                     bias=bias)
    v, groups, n_groups = rng.normal(size=len(queries)), rng.integers(0, 3, len(queries)), 4
    sums = rows.group_sums(v, groups, n_groups)
    expected = np.array([np.where(groups == g, v, 0.0) @ rows for g in range(n_groups)])
    d = features.shape[1]
    assert sums.shape == (n_groups, d + int(bias))
    np.testing.assert_array_equal(sums[:, :d], expected[:, :d])
    np.testing.assert_allclose(sums[:, d:], expected[:, d:], rtol=1e-12, atol=1e-12)
    assert not sums[3].any()
    with pytest.raises(ValueError, match="one weight and one group per row"):
        rows.group_sums(v[1:], groups[1:], n_groups)
    with pytest.raises(ValueError, match="do not fit"):
        rows.group_sums(v, groups, 2)  # a group number beyond n_groups


# -- whole fits: through the bins, and on the explicit indicator matrix -----------------------

METHODS = ["svm-map", "svm-roc", "svm-acc", "svm-acc2", "svm-acc3", "svm-acc4", "svm-ndcg",
           "svm-mrr", "svm-p@5"]


def _method_estimator(name, C):
    """The registry's estimator of ``name`` (binned features, 8 thresholds) at C."""
    if name in ("svm-ndcg", "svm-mrr", "svm-p@5"):
        loss = name[4:]
        return SVMMap(C=C, loss=loss, epsilon=1e-3, algorithm="1-slack",
                      feature_map=BinnedFeatureMap(8))
    return CANDIDATES[name](8).factory(C)


@pytest.mark.parametrize("algorithm", ["1-slack", "n-slack"])
@pytest.mark.parametrize("name", METHODS)
def test_a_fit_through_the_bins_equals_a_fit_on_the_indicator_matrix(name, algorithm):
    X, y, qid = _scores_data(11)
    y[(X[:, 4] > 1.2) & (y > 0)] = 2.0  # graded labels for NDCG
    C, epsilon = 10.0, 1e-6
    binned = _method_estimator(name, C).set_params(algorithm=algorithm, epsilon=epsilon)
    binned.fit(X, y, qid=qid)
    explicit_X = binned.feature_map_.transform(X, qid)
    assert isinstance(explicit_X, sp.csr_matrix)
    explicit = clone(binned).set_params(feature_map=None).fit(explicit_X, y, qid=qid)
    a, b = binned.training_result_, explicit.training_result_
    assert a.converged and b.converged
    # both certified within C epsilon of the optimum, so their objectives are that close
    assert abs(a.primal_objective - b.primal_objective) <= C * epsilon
    # the objective is 1-strongly convex in w: |w - w*|^2 / 2 <= P(w) - P* <= the duality
    # gap, so the two weight vectors are within sqrt(2 gap) of w* each
    bound = np.sqrt(2 * max(a.duality_gap, 0)) + np.sqrt(2 * max(b.duality_gap, 0)) + 1e-9
    assert np.linalg.norm(binned.coef_ - explicit.coef_) <= bound
    scores_binned = binned.decision_function(X, qid)
    scores_explicit = explicit.decision_function(explicit_X)
    # |x.(w_a - w_b)| <= |x| |w_a - w_b|; the intercept (unregularised) set apart
    row_norms = np.sqrt(np.asarray(explicit_X.sum(axis=1)).ravel())
    offset = binned.intercept_ - explicit.intercept_
    assert np.all(np.abs(scores_binned - scores_explicit - offset) <= row_norms * bound + 1e-9)
    # the same weights rank the same through the bins as through the indicator matrix ...
    assert mean_average_precision(scores_binned, y, qid) == pytest.approx(
        mean_average_precision(explicit_X @ binned.coef_ + binned.intercept_, y, qid),
        abs=1e-12)
    # ... and the two models, within the bound above of each other, rank alike (documents
    # whose scores are that close -- many at an optimum -- may swap)
    assert mean_average_precision(scores_binned, y, qid) == pytest.approx(
        mean_average_precision(scores_explicit, y, qid), abs=0.01)


def test_a_binned_model_saves_loads_and_scores_through_the_bins(tmp_path):
    X, y, qid = _scores_data(3)
    model = SVMMap(C=5.0, feature_map=BinnedFeatureMap(6, per_query="minmax")).fit(X, y, qid)
    model.save(tmp_path / "model.json")
    again = SVMMap.load(tmp_path / "model.json")
    np.testing.assert_array_equal(again.decision_function(X, qid),
                                  model.decision_function(X, qid))
    np.testing.assert_array_equal(model.decision_function(X, qid),
                                  model.feature_map_.transform(X, qid) @ model.coef_)


@pytest.mark.parametrize("algorithm, loss", [("1-slack", "map"), ("n-slack", "map"),
                                             ("1-slack", "acc")])
def test_training_never_allocates_the_indicator_matrix(algorithm, loss):
    """200,000 documents x 20 base functions x 50 thresholds: the indicator matrix has about
    25 ones per (document, base), 10^8 stored values, 1.2 GB as float64 CSR with int32
    indices.  Binning, training and scoring hold the bins (4 MB) and per-document arrays:
    far below it."""
    rng = np.random.default_rng(0)
    n_queries, per_query, n_bases = 100, 2000, 20
    m = n_queries * per_query
    X = rng.normal(size=(m, n_bases))
    qid = np.repeat(np.arange(n_queries), per_query)
    y = (X[:, :3].sum(axis=1) + 2 * rng.normal(size=m) > 3).astype(float)
    model = SVMMap(C=1.0, loss=loss, algorithm=algorithm, max_iter=3,
                   feature_map=BinnedFeatureMap(50))
    (_, scored), peak = traced_peak(lambda: (model.fit(X, y, qid),
                                             model.decision_function(X, qid)))
    assert model.training_result_.iterations == 3 and len(scored) == m
    bins = model.feature_map_.transform_bins(X[:1000])
    explicit_bytes = int(bins.bins.sum(dtype=np.int64)) * (m // 1000) * (8 + 4)
    assert explicit_bytes > 1e9
    assert peak < explicit_bytes / 10, f"training allocated {peak / 1e6:.0f} MB"
    assert peak < 100e6, f"training allocated {peak / 1e6:.0f} MB"


def test_selection_along_the_c_path_through_the_bins_equals_the_explicit_matrix():
    """The warm-started C path scores the validation queries through their bins: the path
    (validation MAP per C) and the chosen C are those of the explicit indicator matrix."""
    X, y, qid = _scores_data(21)
    Xv, yv, qv = _scores_data(22)
    Cs = (0.1, 1.0, 10.0)
    binned = SVMMapCV(Cs=Cs, epsilon=1e-6, feature_map=BinnedFeatureMap(6))
    binned.fit(X, y, qid, eval_set=[(Xv, yv, qv)])
    fitted = binned.feature_map_
    explicit = SVMMapCV(Cs=Cs, epsilon=1e-6).fit(
        fitted.transform(X), y, qid, eval_set=[(fitted.transform(Xv), yv, qv)])
    assert binned.C_ == explicit.C_
    assert [row["C"] for row in binned.path_] == list(Cs)
    np.testing.assert_allclose([row["vali"] for row in binned.path_],
                               [row["vali"] for row in explicit.path_], atol=0.01)
    np.testing.assert_array_equal(binned.decision_function(Xv),
                                  fitted.transform(Xv) @ binned.coef_)
