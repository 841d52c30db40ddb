"""The warm-started SMO solver of the working-set dual against cvxopt, and the learners with
either solver reaching the same optimum (SMO made to take every QP that fits it: see the
fixture)."""

import numpy as np
import pytest

from svmmap.core.collection import QueryCollection
from svmmap.core.plugins import MapPlugin
from svmstruct_api._simplex_qp import smo_solve
from svmstruct_api.learner import make_learner
from svmstruct_api.qp import WorkingSet

from conftest import random_collection


@pytest.fixture(autouse=True)
def _smo_for_every_group_count(monkeypatch):
    """The active-set method takes the problems with few groups (svmstruct_api.solvers);
    these tests are about SMO, which solves them too when it is asked to."""
    import svmstruct_api.solvers.active_set as active_set

    monkeypatch.setattr(active_set, "MAX_GROUPS", 0)


def _problem(seed):
    """Random working sets with K <= dim(w) (the form SMO is used for), several groups,
    repeated constraints in every third, bounds from 0.1 to 1000."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(20, 60))
    k = int(rng.integers(1, d))
    n_groups = int(rng.integers(1, 5))
    vectors = rng.normal(size=(k, d)) * rng.uniform(0.01, 3)
    if seed % 3 == 0:
        vectors[: k // 2] = vectors[0]
    losses = rng.uniform(0, 1, k)
    groups = rng.integers(0, n_groups, k)
    bounds = rng.uniform(0.1, 1000, n_groups)
    return vectors, losses, groups, bounds


def _working_set(vectors, losses, groups, bounds, solver):
    ws = WorkingSet(vectors.shape[1], bounds, solver=solver)
    ws.add(groups, vectors, losses)
    return ws


@pytest.mark.parametrize("seed", range(30))
def test_smo_reaches_the_cvxopt_optimum(seed):
    vectors, losses, groups, bounds = _problem(seed)
    smo = _working_set(vectors, losses, groups, bounds, "smo").solve()
    reference = _working_set(vectors, losses, groups, bounds, "cvxopt").solve()
    assert smo.form == "smo"
    # feasible: alpha >= 0 within every group's bound
    assert np.all(smo.alpha >= 0)
    assert np.all(np.bincount(groups, smo.alpha, len(bounds)) <= bounds * (1 + 1e-12))
    scale = max(1.0, abs(reference.dual_objective))
    assert smo.dual_objective == pytest.approx(reference.dual_objective, abs=1e-6 * scale)
    # SMO's gap certificate: (P) at its w, with the exact slacks, is within the tolerance
    assert smo.primal_objective - smo.dual_objective <= 2e-9 * scale + 1e-9
    np.testing.assert_allclose(smo.w, reference.w, atol=1e-4 * max(1.0, np.abs(reference.w).max()))


def test_warm_start_takes_fewer_steps_than_cold_starts_in_a_training_run(monkeypatch):
    """Record every SMO call of a cutting-plane run (each starts from the previous solve's
    alpha), then solve the same QPs from alpha = 0 to the same gaps."""
    import svmstruct_api.solvers.smo as smo

    calls = []

    def recording(gram, losses, group, bounds, alpha, *limits):
        k = len(losses)
        start = alpha.copy()
        steps, gap, value = smo_solve(gram, losses, group, bounds, alpha, *limits)
        calls.append((np.array(gram[:k, :k]), np.array(losses), np.array(group),
                      np.array(bounds), start, limits, steps, value))
        return steps, gap, value

    monkeypatch.setattr(smo, "smo_solve", recording)
    X, y, qid = random_collection(seed=5, n_queries=10, docs=(6, 14), n_features=80)
    collection, _, _ = QueryCollection.from_arrays(X, y, qid).trainable()
    result = make_learner(C=100.0, epsilon=1e-3, cut_groups=1).fit(MapPlugin(collection))
    assert result.converged and len(calls) > 10
    warm_total = cold_total = 0
    for gram, losses, group, bounds, start, limits, steps, value in calls:
        if not start.any():
            continue  # a cold start already (the first solve)
        cold_steps, _, cold_value = smo_solve(gram, losses, group, bounds,
                                              np.zeros(len(losses)), *limits)
        assert cold_value == pytest.approx(value, abs=2 * limits[0])
        warm_total += steps
        cold_total += cold_steps
    assert warm_total < cold_total / 2


def test_smo_honours_a_loose_gap_tolerance_and_reports_the_gap():
    vectors, losses, groups, bounds = _problem(7)
    ws = _working_set(vectors, losses, groups, bounds, "smo")
    active, index = np.unique(ws.groups, return_inverse=True)
    alpha = np.zeros(len(ws))
    ws._extend_gram()  # the solvers read the buffer
    steps, gap, value = smo_solve(ws._gram_buffer, ws.losses, index.astype(np.intp),
                                  bounds[active], alpha, 1e-2, 0.0, 10**7)
    exact = _working_set(vectors, losses, groups, bounds, "cvxopt").solve().dual_objective
    assert 0 <= gap <= 1e-2
    assert exact - 1e-2 - 1e-9 <= value <= exact + 1e-9
    assert value == pytest.approx(alpha @ losses - 0.5 * alpha @ ws._gram @ alpha)


def test_exhausted_smo_budget_falls_back_to_cvxopt(monkeypatch):
    import svmstruct_api.solvers.smo as smo

    monkeypatch.setattr(smo, "STEPS_PER_CONSTRAINT", 0)
    monkeypatch.setattr(smo, "MIN_STEPS", 1)
    vectors, losses, groups, bounds = _problem(5)
    solution = _working_set(vectors, losses, groups, bounds, "smo").solve()
    reference = _working_set(vectors, losses, groups, bounds, "cvxopt").solve()
    assert solution.form in ("primal", "dual")
    assert solution.dual_objective == pytest.approx(reference.dual_objective, rel=1e-6)


@pytest.mark.parametrize("formulation", ["1-slack", "n-slack"])
@pytest.mark.parametrize("C", [10.0, 1000.0])
def test_learners_reach_the_same_optimum_with_either_solver(formulation, C):
    """Many features and few queries, so the working sets stay below dim(w) and SMO runs."""
    X, y, qid = random_collection(seed=21, n_queries=8, docs=(6, 14), n_features=60)
    collection, _, _ = QueryCollection.from_arrays(X, y, qid).trainable()
    eps = 1e-3
    results = {}
    for solver in ("smo", "cvxopt"):
        results[solver] = make_learner(C=C, epsilon=eps, formulation=formulation,
                                              qp_solver=solver).fit(MapPlugin(collection))
    smo, cvx = results["smo"], results["cvxopt"]
    assert smo.converged and cvx.converged
    # each is within 1.01 C eps of the optimum, which both dual bounds bound from below
    for result in (smo, cvx):
        assert result.primal_objective <= max(smo.dual_objective, cvx.dual_objective) \
            + 1.01 * C * eps + 1e-9
    assert smo.primal_objective == pytest.approx(cvx.primal_objective, abs=1.01 * C * eps)
