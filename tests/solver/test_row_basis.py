"""Constraints kept in the documents' basis (svmstruct_api.qp.WorkingSet ``basis``): the
1-slack learner keeps each cut as its per-document coefficients u (a = X^T u) where the
documents are fewer than the features; the QP it solves, and the optimum training reaches,
are the ones of the dim(w)-long rows."""

import numpy as np
import pytest

from svmmap.core.collection import QueryCollection
from svmmap.core.plugins import MapPlugin
from svmmap.core.plugins.rows import DocumentBasis
from svmstruct_api.learner import OneSlackSSVM, make_learner
from svmstruct_api.qp import WorkingSet

from conftest import wide_arrays


def _wide_collection(seed, **shape):
    """conftest.wide_arrays as a trainable QueryCollection."""
    collection, _, _ = QueryCollection.from_arrays(*wide_arrays(seed, **shape)).trainable()
    return collection


@pytest.mark.parametrize("seed", range(4))
def test_a_working_set_in_the_basis_is_the_same_qp(seed):
    """Gram matrix, w, margins, slacks and the solution of random cuts a_k = X^T u_k, kept
    as u_k (with removals in between), equal those of the same cuts kept as rows."""
    rng = np.random.default_rng(seed)
    collection = _wide_collection(seed)
    basis = DocumentBasis(collection.kernel_X, collection.ptr)
    m, d = basis.n_coefficients, collection.n_features
    rows = WorkingSet(d, [50.0])
    kept = WorkingSet(d, [50.0], basis=basis)
    for step in range(6):
        u = rng.normal(size=(3, m)) * (rng.random((3, m)) < 0.6)
        vectors = np.array([basis.backward(x) for x in u])
        losses = rng.uniform(0.1, 1.0, 3)
        rows.add([0, 0, 0], vectors, losses)
        kept.add([0, 0, 0], vectors, losses, coefficients=u)
        a, b = rows.solve(), kept.solve()
        np.testing.assert_allclose(kept._gram, rows._gram, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(b.alpha, a.alpha, atol=1e-9)
        np.testing.assert_allclose(b.w, a.w, rtol=1e-9, atol=1e-12)
        assert b.dual_objective == pytest.approx(a.dual_objective, rel=1e-12)
        w = rng.normal(size=d)
        np.testing.assert_allclose(kept.margins(w), rows.vectors @ w, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(kept.slacks(w), rows.slacks(w), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(kept.vectors, rows.vectors, rtol=1e-12, atol=1e-12)
        if step % 2:
            keep = rng.random(len(rows)) < 0.7
            assert np.array_equal(kept.remove(keep), rows.remove(keep))
    kept.solver = "cvxopt"
    solved_by_cvxopt = kept.solve()
    assert solved_by_cvxopt.dual_objective == pytest.approx(rows.solve().dual_objective,
                                                            rel=1e-6)


def test_a_basis_needs_coefficients_and_every_component_regularised():
    collection = _wide_collection(0)
    basis = DocumentBasis(collection.kernel_X, collection.ptr)
    d = collection.n_features
    with pytest.raises(ValueError, match="regularised"):
        WorkingSet(d, [1.0], regularized=np.arange(d) > 0, basis=basis)
    with pytest.raises(ValueError, match="coefficients"):
        WorkingSet(d, [1.0], basis=basis).add([0], np.ones((1, d)), [1.0])


@pytest.mark.parametrize("C", [1.0, 1000.0])
def test_training_in_the_basis_reaches_the_optimum_of_the_rows(monkeypatch, started_runs, C):
    """On documents fewer than features, with w wider than cut groups take
    (svmstruct_api.cut_groups), the learner keeps its cuts in the basis; the optimum equals
    that of the same fit with rows, within both certified gaps."""
    plugin = MapPlugin(_wide_collection(7, n_queries=20, n_features=1200))
    assert 4 * plugin.collection.X.shape[0] <= 3 * plugin.n_features
    learner = make_learner("1-slack", C=C, epsilon=None, rel_gap=1e-7)
    in_basis = learner.fit(plugin)
    assert started_runs[-1].working_set.basis is plugin.row_basis
    monkeypatch.setattr(OneSlackSSVM, "_row_basis", lambda self, model: None)
    as_rows = learner.fit(plugin)
    assert started_runs[-1].working_set.basis is None
    assert in_basis.converged and as_rows.converged
    assert abs(in_basis.primal_objective - as_rows.primal_objective) <= \
        in_basis.duality_gap + as_rows.duality_gap + 1e-12 * C


def test_the_basis_is_chosen_by_size():
    """The basis for documents at most 3/4 of the features, not otherwise, nor with the
    constraint cache."""
    wide = MapPlugin(_wide_collection(1))
    narrow = MapPlugin(_wide_collection(1, n_features=20))
    assert OneSlackSSVM()._row_basis(wide) is wide.row_basis
    assert OneSlackSSVM()._row_basis(narrow) is None
    assert OneSlackSSVM(cache_size=2)._row_basis(wide) is None
    assert make_learner("n-slack")._row_basis(wide) is None
