"""Every kernel runs its queries through one parallel driver (``_query_core.for_each_query``):
each entry point gives the same bits with 1, 2 or 3 threads, on generated collections with
empty queries, queries without a relevant and queries with only relevant documents, and on a
collection without documents or without queries."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from svmmap.kernels import _loss_kernels, _map_kernels, _roc_kernels

LOSSES = [("p@k", 3), ("rprec", None), ("mrr", None), ("ndcg", 4), ("ndcg", None)]


def _entry_points(X, w, gains, ptr):
    """name -> f(n_threads) for every kernel entry point on one collection."""
    relevant = gains > 0
    scores = X[:, 0] - X[:, -1]  # ties where the rounded features tie
    csr = _map_kernels.csr_for_kernels(sp.csr_matrix(X))
    csr64 = _map_kernels.CSRArrays(csr.data, csr.indices.astype(np.intp),
                                   csr.indptr.astype(np.intp), csr.shape)
    calls = {
        "ranking_coefficients": lambda t: _map_kernels.ranking_coefficients(
            scores, relevant, ptr, t),
        "most_violated_roc": lambda t: _roc_kernels.most_violated_roc(scores, relevant, ptr, t),
        "ranking_roc_loss": lambda t: _roc_kernels.ranking_roc_loss(scores, relevant, ptr, t),
    }
    for method in ("divide", "scan"):
        calls[f"most_violated_map {method}"] = lambda t, m=method: \
            _map_kernels.most_violated_map(scores, relevant, ptr, m, t)
    for layout, rows in (("dense", X), ("csr int32", csr), ("csr intp", csr64)):
        calls[f"map_constraints {layout}"] = lambda t, r=rows: \
            _map_kernels.map_constraints(r, w, relevant, ptr, "divide", t)
        calls[f"roc_constraints {layout}"] = lambda t, r=rows: \
            _roc_kernels.roc_constraints(r, w, relevant, ptr, t)
    for kind, k in LOSSES:
        calls[f"most_violated {kind} {k}"] = lambda t, kind=kind, k=k: \
            _loss_kernels.most_violated(scores, gains, ptr, kind, k, t)
        calls[f"ranking_losses {kind} {k}"] = lambda t, kind=kind, k=k: \
            _loss_kernels.ranking_losses(scores, gains, ptr, kind, k, t)
        calls[f"loss_constraints {kind} {k}"] = lambda t, kind=kind, k=k: \
            _loss_kernels.loss_constraints(csr, w, gains, ptr, kind, k, t)
    return calls


def _as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


def _assert_thread_count_does_not_matter(X, w, gains, ptr):
    for name, call in _entry_points(X, w, gains, ptr).items():
        one = _as_tuple(call(1))
        for threads in (2, 3):
            for a, b in zip(one, _as_tuple(call(threads)), strict=True):
                assert a.dtype == b.dtype and a.shape == b.shape, name
                assert a.tobytes() == b.tobytes(), f"{name}: {threads} threads differ from 1"


@st.composite
def collections(draw):
    """(X, w, gains, ptr): up to 40 queries of 0-30 documents, labels 0-2 (gains 2^l - 1),
    features rounded to one decimal so that scores tie."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 31, draw(st.integers(0, 40)))
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    n_features = draw(st.integers(1, 5))
    X = np.round(rng.normal(size=(ptr[-1], n_features)), 1)
    X[rng.random(X.shape) < 0.4] = 0.0
    labels = rng.integers(0, 3, ptr[-1]) * (rng.random(ptr[-1]) < draw(st.sampled_from(
        [0.0, 0.3, 0.7, 1.0])))
    return X, rng.normal(size=n_features), 2.0 ** labels - 1.0, ptr


@settings(max_examples=25, deadline=None)
@given(collections())
def test_every_kernel_gives_the_same_bits_whatever_the_thread_count(collection):
    _assert_thread_count_does_not_matter(*collection)


@pytest.mark.parametrize("sizes, gain", [([], 0.0), ([0], 0.0), ([0, 0, 3], 0.0),
                                         ([4, 0], 1.0)])
def test_every_kernel_on_collections_without_a_constraint(sizes, gain):
    """No documents, empty queries, queries without a relevant or with only relevant
    documents: outputs of the right lengths, all 0 (AP 1 for an all-relevant query)."""
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    X = np.arange(ptr[-1] * 2, dtype=float).reshape(-1, 2) % 3
    gains = np.full(ptr[-1], gain)
    w = np.array([1.0, -1.0])
    _assert_thread_count_does_not_matter(X, w, gains, ptr)
    for name, call in _entry_points(X, w, gains, ptr).items():
        for array in _as_tuple(call(2)):
            assert array.shape in ((ptr[-1],), (len(sizes),)), name
        if name == "ranking_coefficients":
            coef, ap = call(2)
            assert not coef.any() and ap.tolist() == [gain if s else 0.0 for s in sizes]
        else:
            assert not any(array.any() for array in _as_tuple(call(2))), name
