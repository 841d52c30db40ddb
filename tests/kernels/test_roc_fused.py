"""SVM-ROC's fused separation pass (roc_constraints: scores X_q w, the oracle, the loss and
dpsi_q = X_q^T (c* - c_hat) in one call) against the separate steps, and training through it
against training through the separate steps."""

import numpy as np
import pytest
import scipy.sparse as sp

from svmmap import SVMMap
from svmmap.core.collection import QueryCollection
from svmmap.core.plugins import MapPlugin, RocPlugin
from svmmap.kernels._kernel_inputs import csr_for_kernels
from svmmap.kernels._map_kernels import ideal_coefficients
from svmmap.kernels._roc_kernels import most_violated_roc, roc_constraints
from svmstruct_api.plugin import ConstraintBatch

from conftest import random_collection


def _separate_steps(X, w, relevant, ptr):
    """(loss, dpsi) from the separate steps: scores by numpy, most_violated_roc, and
    dpsi = X_q^T (c* - c_hat) as one scipy product."""
    coef, loss = most_violated_roc(X @ w, relevant, ptr)
    m = len(relevant)
    blocks = sp.csr_matrix((ideal_coefficients(relevant, ptr) - coef, np.arange(m), ptr),
                           shape=(len(ptr) - 1, m))
    return loss, (blocks @ X).reshape(len(ptr) - 1, X.shape[1])


def _queries(rng, n_queries, n_features, tied):
    """Queries of 0..60 documents, with the degenerate kinds mixed in: empty, one document,
    only relevant, only non-relevant.  ``tied``: small integer features and a dyadic w, so
    that every score is exact, with many ties and many differences of exactly 1/2."""
    sizes = rng.integers(0, 60, n_queries)
    sizes[:4] = [0, 1, 5, 7]
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    m = ptr[-1]
    relevant = rng.random(m) < rng.choice([0.1, 0.3, 0.7], m)
    relevant[ptr[2]:ptr[3]] = True  # only relevant documents
    relevant[ptr[3]:ptr[4]] = False  # only non-relevant documents
    mask = rng.random((m, n_features)) < 0.6
    if tied:
        X = rng.integers(-2, 3, (m, n_features)) * mask.astype(float)
        w = rng.integers(-4, 5, n_features) * 0.125
    else:
        X = rng.normal(size=(m, n_features)) * mask
        w = rng.normal(size=n_features)
    return X, w, relevant, ptr


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_fused_pass_equals_the_separate_steps(sparse, tied):
    rng = np.random.default_rng(31 + tied)
    X, w, relevant, ptr = _queries(rng, 120, 9, tied)
    expected_loss, expected_dpsi = _separate_steps(X, w, relevant, ptr)
    X_in = csr_for_kernels(sp.csr_matrix(X)) if sparse else X
    one = roc_constraints(X_in, w, relevant, ptr, n_threads=1)
    two = roc_constraints(X_in, w, relevant, ptr, n_threads=2)
    for a, b in zip(one, two):  # every query by one thread, in the same order: bit for bit
        np.testing.assert_array_equal(a, b)
    loss, coef, margin = one
    dpsi = _rows(coef, ptr, X)
    assert dpsi.shape == (len(ptr) - 1, X.shape[1])
    np.testing.assert_allclose(margin, expected_dpsi @ w, rtol=0, atol=1e-12)
    np.testing.assert_allclose(loss, expected_loss, rtol=0, atol=1e-12)
    np.testing.assert_allclose(dpsi, expected_dpsi, rtol=0, atol=1e-12)
    assert loss[:4].tolist() == [0.0] * 4 and not dpsi[:4].any()  # the degenerate queries
    if tied:  # the exact scores do hit differences of exactly 1/2 (the tie rule matters)
        scores = X @ w
        q = 4 + np.argmax(np.diff(ptr)[4:])
        s, r = scores[ptr[q]:ptr[q + 1]], relevant[ptr[q]:ptr[q + 1]]
        assert (s[r][:, None] - s[~r][None, :] == 0.5).any()


@pytest.mark.parametrize("sparse", [False, True])
def test_fused_pass_without_features_or_without_entries(sparse):
    """Every score 0: every pair has s_i - s_j = 0 < 1/2, so every pair is swapped."""
    ptr = np.array([0, 3, 3, 7])
    relevant = np.array([1, 0, 0, 1, 1, 0, 1], dtype=bool)
    for X in (np.zeros((7, 0)), np.zeros((7, 4))):
        w = np.ones(X.shape[1])
        X_in = csr_for_kernels(sp.csr_matrix(X)) if sparse else X
        loss, coef, margin = roc_constraints(X_in, w, relevant, ptr)
        np.testing.assert_array_equal(loss, [1.0, 0.0, 1.0])
        np.testing.assert_array_equal(margin, 0.0)
        dpsi = _rows(coef, ptr, X)
        assert dpsi.shape == (3, X.shape[1]) and not dpsi.any()


def _rows(coef, ptr, X):
    """dpsi_q = X_q^T coef_q of every query, as a dense array."""
    rows = sp.csr_matrix((coef, np.arange(ptr[-1]), ptr), shape=(len(ptr) - 1, X.shape[0])) @ X
    return rows.toarray() if sp.issparse(rows) else np.asarray(rows)


def test_fused_pass_rejects_inputs_that_do_not_fit():
    X, relevant, ptr = np.zeros((5, 2)), np.array([1, 0, 1, 0, 0]), np.array([0, 2, 5])
    with pytest.raises(ValueError, match="fit"):
        roc_constraints(X, np.zeros(3), relevant, ptr)
    with pytest.raises(ValueError, match="fit"):
        roc_constraints(X, np.zeros(2), relevant[:4], np.array([0, 2, 4]))
    with pytest.raises(ValueError, match="ptr"):
        roc_constraints(X, np.zeros(2), relevant, np.array([0, 3, 2, 5]))


def unfused_constraints(plugin, w):
    """A ranking plugin's batch of most violated constraints from the separate steps: scores
    X w by scipy/numpy, the oracle kernel, and dpsi_q = X_q^T (c* - c_hat) as one sparse
    product -- the reference the fused pass (plugin.most_violated_constraints) is tested
    against."""
    collection = plugin.collection
    scores = collection.X @ w
    coef, loss = plugin.most_violated_coefficients(scores, plugin._targets, collection.ptr)
    dpsi = _rows(ideal_coefficients(collection.relevant, collection.ptr) - coef,
                 collection.ptr, collection.X)
    if plugin.queries is not None:
        loss, dpsi = loss[plugin.queries], dpsi[plugin.queries]
    return ConstraintBatch(loss=loss, dpsi=dpsi)


@pytest.mark.parametrize("plugin_class", [RocPlugin, MapPlugin])
@pytest.mark.parametrize("sparse", [False, True])
def test_plugin_batch_hook_equals_the_unfused_path(plugin_class, sparse):
    X, y, qid = random_collection(seed=5, n_queries=15, docs=(2, 40), n_features=5)
    collection = QueryCollection.from_arrays(sp.csr_matrix(X) if sparse else X, y, qid)
    plugin = plugin_class(collection.trainable()[0], n_threads=2)
    for w in (np.zeros(5), np.random.default_rng(1).normal(size=5)):
        fused = plugin.most_violated_constraints(w)
        separate = unfused_constraints(plugin, w)
        np.testing.assert_allclose(fused.loss, separate.loss, rtol=0, atol=1e-12)
        np.testing.assert_allclose(fused.dpsi, separate.dpsi, rtol=0, atol=1e-12)


@pytest.mark.filterwarnings("ignore:.*carry no constraint")
@pytest.mark.parametrize("algorithm", ["1-slack", "n-slack"])
def test_training_through_the_fused_pass_gives_the_same_w(algorithm, monkeypatch):
    """loss="roc" trained with the fused batch hook and with the separate steps (the batch
    hook before the fused pass existed): the same iterations and the same w."""
    X, y, qid = random_collection(seed=17, n_queries=20, docs=(4, 30))
    params = dict(C=10, loss="roc", algorithm=algorithm, epsilon=1e-4)
    fused = SVMMap(**params).fit(X, y, qid)
    monkeypatch.setattr(RocPlugin, "most_violated_constraints", unfused_constraints)
    separate = SVMMap(**params).fit(X, y, qid)
    assert fused.training_result_.iterations == separate.training_result_.iterations
    np.testing.assert_allclose(fused.coef_, separate.coef_, rtol=0, atol=1e-8)
