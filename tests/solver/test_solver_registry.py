"""The QP solvers' one interface (svmstruct_api.solvers): a solver registered by name is the
working set's and the learners' to choose, the order of trial is the table's, a solver that
fails hands the QP over to the next, and every registered solver solves a QP to the same
optimum through the interface."""

import numpy as np
import pytest

from svmmap.core.collection import QueryCollection
from svmmap.core.plugins import MapPlugin
from svmstruct_api import solvers
from svmstruct_api.learner import make_learner
from svmstruct_api.qp import WorkingSet
from svmstruct_api.solvers import QPProblem, QPResult, QPState

from conftest import random_collection


def _projected_gradient(problem: QPProblem, state: QPState) -> QPResult:
    """A toy solver of one group's (D): projected gradient ascent on the capped simplex
    {alpha >= 0, sum alpha <= C}, until the duality gap is within the tolerance."""
    gram, losses, bound = problem.gram_block(), problem.losses, float(problem.bounds[0])
    alpha = state.alpha.copy()
    step = 1.0 / max(np.linalg.eigvalsh(gram)[-1], 1e-12)
    for _ in range(200_000):
        grad = losses - gram @ alpha
        gap = bound * max(grad.max(), 0.0) - alpha @ grad
        if gap <= state.abs_gap + state.rel_gap * abs(alpha @ losses - 0.5 * alpha @ gram @ alpha):
            objective = alpha @ losses - 0.5 * alpha @ gram @ alpha
            return QPResult(status="optimal", alpha=alpha, objective=objective, form="toy")
        alpha = _onto_capped_simplex(alpha + step * grad, bound)
    return QPResult.failed("the toy solver ran out of steps")


def _onto_capped_simplex(v, bound):
    """The Euclidean projection of v onto {x >= 0, sum x <= bound}."""
    x = np.maximum(v, 0.0)
    if x.sum() <= bound:
        return x
    u = np.sort(v)[::-1]
    cumulative = np.cumsum(u) - bound
    rho = np.flatnonzero(u - cumulative / np.arange(1, len(u) + 1) > 0)[-1]
    return np.maximum(v - cumulative[rho] / (rho + 1), 0.0)


@pytest.fixture
def toy(monkeypatch):
    """The toy solver registered as "toy" (one module's two functions and a registry row),
    every call recorded."""
    calls = []

    def solve(problem, state):
        calls.append(problem.size)
        return _projected_gradient(problem, state)

    monkeypatch.setitem(solvers.REGISTRY, "toy", solvers.Solver(
        "toy", solve, lambda problem: problem.n_groups == 1, "projected gradient (a test)"))
    return calls


def _random_working_set(solver, seed=0, k=25, d=6):
    rng = np.random.default_rng(seed)
    ws = WorkingSet(d, [10.0], solver=solver)
    ws.add(np.zeros(k, dtype=int), rng.normal(size=(k, d)), rng.uniform(0.2, 1.0, k))
    return ws


def test_a_registered_solver_is_picked_up_by_name(toy):
    solution = _random_working_set("toy").solve(gap_tolerance=1e-10)
    reference = _random_working_set("cvxopt").solve()
    assert toy == [25] and solution.form == "toy"
    assert solution.dual_objective == pytest.approx(reference.dual_objective, rel=1e-7)
    np.testing.assert_allclose(solution.w, reference.w, atol=1e-4)


def test_the_learners_take_a_registered_solver_by_name(toy):
    X, y, qid = random_collection(seed=3, n_queries=8, docs=(6, 12), n_features=5)
    collection, _, _ = QueryCollection.from_arrays(X, y, qid).trainable()
    # the toy takes single-group QPs: the plain 1-slack (cut_groups=1)
    results = {name: make_learner(C=10.0, epsilon=1e-4, qp_solver=name, cut_groups=1).fit(
        MapPlugin(collection)) for name in ("toy", "smo")}
    assert toy and results["toy"].converged
    assert results["toy"].primal_objective == pytest.approx(results["smo"].primal_objective,
                                                            rel=1e-3)


def test_a_failing_solver_hands_over_to_the_next_in_the_order(monkeypatch, toy):
    monkeypatch.setitem(solvers.REGISTRY, "toy", solvers.Solver(
        "toy", lambda problem, state: QPResult.failed("gave up"), lambda problem: True, ""))
    solution = _random_working_set("toy").solve()
    assert solution.form in ("primal", "dual")  # cvxopt, the last of every order


def test_a_solver_that_does_not_apply_is_skipped(monkeypatch, toy):
    monkeypatch.setitem(solvers.TRIAL_ORDER, "smo", ("toy", "active-set", "smo", "cvxopt"))
    ws = WorkingSet(6, [10.0, 10.0])
    rng = np.random.default_rng(1)
    ws.add(np.arange(20) % 2, rng.normal(size=(20, 6)), rng.uniform(0.2, 1.0, 20))
    assert ws.solve().form == "active-set" and toy == []  # two groups: not the toy's
    assert _random_working_set("smo").solve().form == "toy"


def test_unknown_solver_names_are_refused():
    with pytest.raises(ValueError, match="solver must be one of"):
        WorkingSet(3, [1.0], solver="simplex")
    with pytest.raises(ValueError, match="qp_solver must be one of"):
        make_learner(qp_solver="simplex")


@pytest.mark.parametrize("name", ["active-set", "smo", "cvxopt"])
def test_every_registered_solver_reaches_the_same_optimum(name):
    """Each solver through the interface alone, from alpha = 0 (K <= dim(w) + 1: every one
    of them applies)."""
    rng = np.random.default_rng(4)
    ws = WorkingSet(12, [5.0])
    ws.add(np.zeros(10, dtype=int), rng.normal(size=(10, 12)), rng.uniform(0.2, 1.0, 10))
    problem = ws.problem()
    entry = solvers.REGISTRY[name]
    assert entry.applies(problem)
    result = entry.solve(problem, QPState(alpha=np.zeros(10), abs_gap=1e-10, rel_gap=0.0))
    assert result.status == "optimal"
    reference = WorkingSet(12, [5.0], solver="cvxopt")
    reference.add(ws.groups, ws.vectors, ws.losses)
    expected = reference.solve().dual_objective
    alpha = result.alpha
    assert np.all(alpha >= 0) and alpha.sum() <= 5.0 * (1 + 1e-12)
    gram = problem.gram_block()
    assert alpha @ problem.losses - 0.5 * alpha @ gram @ alpha == pytest.approx(expected,
                                                                              rel=1e-7)
