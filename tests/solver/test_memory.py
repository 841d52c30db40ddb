"""Training memory in proportion to the data: the trainable queries are addressed in place
(no copy of X when a query is skipped), a CSR X is read with its own index arrays, and an
oracle pass keeps dpsi as document coefficients (svmmap.core.plugins.rows.QueryRows), never as a
queries x features array -- each checked against a straightforward reference."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from svmmap import SVMMap
from svmmap.core import training
from svmmap.core.collection import QueryCollection, check_features
from svmstruct_api.plugin import StructuredModel

from conftest import random_collection, traced_peak

LOSSES = ["map", "roc", "acc", "ndcg@3", "mrr", "p@2", "rprec"]


def _with_skipped_queries(seed=0, n_queries=14, n_features=6):
    """Graded labels; query 0 without a relevant document, query 5 with only relevant ones,
    rows of the queries interleaved (not grouped)."""
    X, y, qid = random_collection(seed, n_queries=n_queries, docs=(3, 9),
                                  n_features=n_features)
    rng = np.random.default_rng(seed)
    y = y * rng.integers(1, 4, len(y))
    y[qid == 0] = 0
    y[qid == 5] = 2
    order = rng.permutation(len(y))
    return X[order], y[order], qid[order]


def _fit(X, y, qid, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SVMMap(**params).fit(X, y, qid)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("sparse", [False, True])
def test_batch_hook_equals_the_per_query_reference(loss, sparse):
    """The fused batch (loss, dpsi as QueryRows) against the per-example SVMstruct hooks
    (find_most_violated_constraint, psi, loss: one query at a time, dense rows), with
    skipped queries; and every product the learners take of dpsi against the dense rows."""
    X, y, qid = _with_skipped_queries(seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SVMMap(loss=loss)
        data = model._training_collection(sp.csr_matrix(X) if sparse else X, y, qid)
        plugin = training.prepare(model.get_params(deep=False), data).plugin
    rng = np.random.default_rng(1)
    for w in (np.zeros(plugin.n_features), rng.normal(size=plugin.n_features)):
        fast = plugin.most_violated_constraints(w)
        slow = StructuredModel.most_violated_constraints(plugin, w)
        dense = np.asarray(fast.dpsi)
        assert dense.shape == slow.dpsi.shape == (plugin.n_examples, plugin.n_features)
        np.testing.assert_allclose(fast.loss, slow.loss, atol=1e-12)
        np.testing.assert_allclose(dense, slow.dpsi, atol=1e-12)
        np.testing.assert_allclose(fast.dpsi @ w, slow.dpsi @ w, atol=1e-12)
        other = rng.normal(size=plugin.n_features)  # D w away from the pass's own w
        np.testing.assert_allclose(fast.dpsi @ other, slow.dpsi @ other, atol=1e-12)
        v = rng.random(plugin.n_examples)
        np.testing.assert_allclose(v @ fast.dpsi, v @ slow.dpsi, atol=1e-12)
        np.testing.assert_allclose(fast.dpsi.mean(axis=0), slow.dpsi.mean(axis=0), atol=1e-12)
        np.testing.assert_allclose(fast.dpsi.sum(axis=0), slow.dpsi.sum(axis=0), atol=1e-12)
        chosen = np.flatnonzero(rng.random(plugin.n_examples) < 0.5)
        np.testing.assert_allclose(fast.dpsi[chosen], slow.dpsi[chosen], atol=1e-12)
        np.testing.assert_allclose(fast.dpsi[2], slow.dpsi[2], atol=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("algorithm", ["1-slack", "n-slack"])
def test_skipped_queries_train_as_if_removed(loss, algorithm):
    """Training with skipped queries in place (dense and CSR input, rows not grouped) gives
    the w and objective of training on the other queries alone, dense: the reference that
    copies nothing because there is nothing to skip."""
    X, y, qid = _with_skipped_queries(seed=7)
    params = dict(C=10.0, loss=loss, algorithm=algorithm, epsilon=1e-4)
    if loss == "acc":  # a classifier keeps every document: the reference is the same data
        keep = np.ones(len(y), dtype=bool)
    else:
        keep = ~np.isin(qid, [0, 5])
    reference = _fit(X[keep], y[keep], qid[keep], **params)
    for X_in in (X, sp.csr_matrix(X)):
        model = _fit(X_in, y, qid, **params)
        assert model.n_queries_used_ == reference.n_queries_used_
        np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-7, atol=1e-9)
        assert model.training_result_.primal_objective == pytest.approx(
            reference.training_result_.primal_objective, rel=1e-9)
        assert model.training_result_.iterations == reference.training_result_.iterations


def test_csr_input_is_read_in_place():
    """A float64 CSR X with sorted int32 indices is neither copied nor converted (the kernels
    read int32 indices); unsorted indices give a sorted copy, the caller's X untouched."""
    X = sp.random(200, 30, density=0.2, format="csr", random_state=0)
    assert X.indices.dtype == np.int32
    checked = check_features(X)
    assert checked is X
    y = (np.arange(200) % 3 == 0).astype(float)
    collection = QueryCollection.from_arrays(X, y, np.arange(200) // 10)
    kernel = collection.kernel_X
    assert kernel.indices is X.indices and kernel.data is X.data and kernel.indptr is X.indptr
    shuffled = X.copy()
    row = 3
    lo, hi = shuffled.indptr[row], shuffled.indptr[row + 1]
    shuffled.indices[lo:hi] = shuffled.indices[lo:hi][::-1].copy()
    shuffled.data[lo:hi] = shuffled.data[lo:hi][::-1].copy()
    shuffled.has_sorted_indices = False
    before = shuffled.indices.copy()
    checked = check_features(shuffled)
    assert checked.has_sorted_indices and (checked != X).nnz == 0
    np.testing.assert_array_equal(shuffled.indices, before)


@pytest.mark.filterwarnings("ignore:.*carry no constraint")
def test_no_queries_by_features_array_is_allocated():
    """2000 queries x 50,000 sparse features: a dense queries x features float64 array would
    be 800 MB.  A 1-slack fit (a skipped query included) stays far below it: what it holds
    beyond X is per document, per query, or a few d-vectors (w and the working set)."""
    rng = np.random.default_rng(0)
    n_queries, per_query, d = 2000, 6, 50_000
    m = n_queries * per_query
    # 4 entries per row, one in each quarter of the columns (sorted, distinct)
    columns = np.arange(4) * (d // 4) + rng.integers(0, d // 4, (m, 4))
    X = sp.csr_matrix((rng.normal(size=4 * m), columns.ravel(), np.arange(0, 4 * m + 1, 4)),
                      shape=(m, d))
    qid = np.repeat(np.arange(n_queries), per_query)
    y = np.tile([1.0, 0, 0, 1, 0, 0], n_queries)
    y[:per_query] = 0
    model, peak = traced_peak(lambda: SVMMap(C=100.0, max_iter=3).fit(X, y, qid))
    assert model.training_result_.iterations == 3 and model.n_queries_used_ == n_queries - 1
    assert peak < 40e6, f"training allocated {peak / 1e6:.0f} MB"
