"""PRank (Crammer & Singer, NIPS 14): the Cython pass against a plain Python transcription of
the paper's Figure 2, ordered thresholds, Theorem 3's mistake bound on separable data,
OHSUMED Fold1 (saving and loading: test_baseline_models.py)."""


import numpy as np
import pytest

from svmmap.baselines import PRank

from conftest import random_collection


def prank_reference(X, rank, order, k):
    """Figure 2 of the paper, one example at a time (ranks 1..k, b_k = +inf)."""
    w, b = np.zeros(X.shape[1]), np.zeros(k - 1)
    updates = 0
    for i in order:
        x, y = X[i], rank[i] + 1
        s = w @ x
        yhat = next((r for r in range(1, k) if s - b[r - 1] < 0), k)
        if yhat != y:
            updates += 1
            y_r = np.where(y > np.arange(1, k), 1.0, -1.0)
            tau = np.where((s - b) * y_r <= 0, y_r, 0.0)
            w = w + tau.sum() * x
            b = b - tau
    return w, b, updates


def graded(seed):
    X, y, qid = random_collection(seed, n_queries=10, docs=(10, 30), n_features=5)
    rng = np.random.default_rng(seed)
    return X, y * rng.integers(1, 4, len(y)), qid  # grades 0..3


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kernel_matches_the_papers_algorithm(seed):
    X, y, qid = graded(seed)
    model = PRank(n_epochs=3, averaged=False, random_state=None).fit(X, y, qid)
    classes, rank = np.unique(y, return_inverse=True)
    order = np.tile(np.arange(len(y)), 3)
    w, b, updates = prank_reference(X, rank, order, len(classes))
    np.testing.assert_allclose(model.coef_, w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.rank_thresholds_, b, atol=1e-12)
    assert model.n_updates_.sum() == updates


@pytest.mark.parametrize("averaged", [False, True])
def test_thresholds_stay_ordered(averaged):
    for seed in range(5):
        X, y, qid = graded(seed)
        model = PRank(n_epochs=4, averaged=averaged, random_state=seed).fit(X, y, qid)
        assert np.all(np.diff(model.rank_thresholds_) >= 0)
        predicted = model.predict_rank(X)
        assert set(np.unique(predicted)) <= set(model.classes_)


def separable(seed, n=300, d=4, k=4, gap=0.15):
    rng = np.random.default_rng(seed)
    w_star = rng.normal(size=d)
    w_star /= np.linalg.norm(w_star)
    X = rng.uniform(-1, 1, size=(4 * n, d))
    s = X @ w_star
    b_star = np.quantile(s, np.linspace(0, 1, k + 1)[1:-1])
    keep = np.all(np.abs(s[:, None] - b_star[None, :]) > gap, axis=1)
    X, s = X[keep][:n], s[keep][:n]
    rank = np.searchsorted(b_star, s)
    y_r = np.where(rank[:, None] > np.arange(k - 1)[None, :], 1.0, -1.0)
    norm = np.sqrt(1.0 + b_star @ b_star)  # |w*|^2 + |b*|^2 = 1 after division
    gamma = np.min((s[:, None] - b_star[None, :]) * y_r) / norm
    R2 = np.max(np.sum(X * X, axis=1))
    return X, rank.astype(float), gamma, R2, k


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_mistake_bound_on_separable_data(seed):
    X, y, gamma, R2, k = separable(seed)
    assert gamma > 0
    model = PRank(n_epochs=30, averaged=False, random_state=seed).fit(X, y, np.zeros(len(y)))
    bound = (k - 1) * (R2 + 1) / gamma ** 2  # Theorem 3
    assert model.rank_loss_.sum() <= bound
    assert model.n_updates_.sum() <= bound
    assert model.n_updates_[-1] == 0  # converged: a consistent ranker was found
    np.testing.assert_array_equal(model.predict_rank(X), y)


def test_params_and_errors():
    model = PRank(n_epochs=3)
    assert model.get_params() == {"n_epochs": 3, "averaged": True, "random_state": 0}
    assert model.set_params(averaged=False) is model and model.averaged is False
    X, y, qid = graded(0)
    with pytest.raises(ValueError, match="n_epochs"):
        PRank(n_epochs=0).fit(X, y, qid)
    with pytest.raises(ValueError, match="same label"):
        PRank().fit(X, np.ones_like(y), qid)
