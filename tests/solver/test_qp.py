"""The working-set QP: the primal and dual forms solve the same problem, and the solution
satisfies the optimality conditions it is supposed to."""

import numpy as np
import pytest

from svmstruct_api.qp import WorkingSet


def _random_working_set(seed, n_constraints, n_features, n_groups, bound, free=0):
    rng = np.random.default_rng(seed)
    regularized = np.ones(n_features, dtype=bool)
    regularized[n_features - free:] = False
    ws = WorkingSet(n_features, np.full(n_groups, bound), regularized)
    groups = rng.integers(0, n_groups, n_constraints)
    ws.add(groups, rng.normal(size=(n_constraints, n_features)),
           rng.uniform(0.1, 1.0, n_constraints))
    return ws


def _solve(ws, form):
    """cvxopt's ``form`` of the working set's QP, as the working set reads its result."""
    from svmstruct_api.solvers import cvxopt as cvxopt_solver

    solve = cvxopt_solver._solve_primal if form == "primal" else cvxopt_solver._solve_dual
    return ws._solution_of(solve(ws.problem(), 0.0))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("free", [0, 1])
def test_primal_and_dual_forms_agree(seed, free):
    ws = _random_working_set(seed, n_constraints=40, n_features=5, n_groups=4, bound=2.5,
                             free=free)
    primal, dual = _solve(ws, "primal"), _solve(ws, "dual")
    # "inaccurate": cvxopt stopped short of its 1e-9 targets but within 1e-6 (see qp.py)
    assert {primal.status, dual.status} <= {"optimal", "inaccurate"}
    np.testing.assert_allclose(primal.w, dual.w, atol=1e-6)
    np.testing.assert_allclose(primal.slack, dual.slack, atol=1e-6)
    assert primal.primal_objective == pytest.approx(dual.primal_objective, abs=1e-6)
    # strong duality at the optimum of each form
    for sol in (primal, dual):
        assert sol.primal_objective == pytest.approx(sol.dual_objective, abs=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_solution_is_feasible_and_complementary(seed):
    ws = _random_working_set(seed, n_constraints=30, n_features=4, n_groups=3, bound=1.0)
    sol = ws.solve()
    margins = ws.vectors @ sol.w
    # every constraint holds with the group's slack
    assert np.all(margins >= ws.losses - sol.slack[ws.groups] - 1e-7)
    # alpha within its box; positive alpha only on (nearly) tight constraints
    assert np.all(sol.alpha >= 0)
    for g in np.unique(ws.groups):
        assert sol.alpha[ws.groups == g].sum() <= 1.0 + 1e-7
    tight = margins - (ws.losses - sol.slack[ws.groups])
    assert np.all(sol.alpha * tight < 1e-6)
    np.testing.assert_allclose(ws.slacks(sol.w), sol.slack, atol=1e-6)


def test_unconstrained_groups_get_no_slack_and_empty_set_gives_zero():
    ws = WorkingSet(3, [1.0, 1.0, 1.0])
    empty = ws.solve()
    assert np.all(empty.w == 0) and empty.dual_objective == 0.0
    ws.add([1], [[1.0, 0.0, 0.0]], [0.5])
    sol = ws.solve()
    # min 1/2 w^2 + xi s.t. w >= 0.5 - xi: w = 0.5, xi = 0
    np.testing.assert_allclose(sol.w, [0.5, 0, 0], atol=1e-7)
    np.testing.assert_allclose(sol.slack, [0, 0, 0], atol=1e-7)


def test_bound_caps_the_multipliers():
    # min 1/2 w^2 + C xi s.t. w >= 1 - xi: w = min(1, C)
    for bound, expected in [(0.25, 0.25), (4.0, 1.0)]:
        ws = WorkingSet(1, [bound])
        ws.add([0], [[1.0]], [1.0])
        assert ws.solve().w[0] == pytest.approx(expected, abs=1e-7)


def test_incremental_gram_matrix_and_removal():
    ws = _random_working_set(1, n_constraints=10, n_features=3, n_groups=2, bound=1.0)
    rng = np.random.default_rng(9)
    ws.add([0, 1], rng.normal(size=(2, 3)), [0.3, 0.4])
    np.testing.assert_allclose(ws._gram, ws.vectors @ ws.vectors.T)
    keep = np.arange(len(ws)) % 3 != 0
    vectors, losses, groups = ws.vectors.copy(), ws.losses.copy(), ws.groups.copy()
    order = ws.remove(keep)
    # the kept constraints, each once, with its own loss and group, in the order returned
    assert sorted(order) == list(np.flatnonzero(keep))
    np.testing.assert_array_equal(ws.vectors, vectors[order])
    np.testing.assert_array_equal(ws.losses, losses[order])
    np.testing.assert_array_equal(ws.groups, groups[order])
    np.testing.assert_allclose(ws._gram, ws.vectors @ ws.vectors.T)


def test_removal_keeps_the_last_solutions_margins_and_slacks():
    """After a removal, margins(w) and slacks(w) of the last solve's w come without a pass
    over the rows: they must equal those computed from the rows."""
    rng = np.random.default_rng(5)
    ws = WorkingSet(4, [1.0, 2.0])
    ws.add(rng.integers(0, 2, 12), rng.normal(size=(12, 4)), rng.random(12))
    w = ws.solve().w
    ws.remove(rng.random(12) < 0.6)
    np.testing.assert_allclose(ws.margins(w), ws.vectors @ w, atol=1e-12)
    expected = np.zeros(2)
    np.maximum.at(expected, ws.groups, ws.losses - ws.vectors @ w)
    np.testing.assert_allclose(ws.slacks(w), expected, atol=1e-12)


def test_gram_matrix_is_formed_on_demand_and_only_there():
    """Constraints added and removed, the Gram matrix asked for in any order: it is always
    the rows' inner products.  A working set that cvxopt's primal form solves (more
    constraints than features + groups, n-slack's case) never forms it, and is solved."""
    rng = np.random.default_rng(3)
    ws = WorkingSet(4, np.ones(3))
    for step in range(15):
        ws.add(rng.integers(0, 3, 3), rng.normal(size=(3, 4)), rng.random(3))
        if step % 3 == 1:
            ws.remove(rng.random(len(ws)) < 0.7)
        if step % 2 == 0:
            np.testing.assert_allclose(ws._gram, ws.vectors @ ws.vectors.T)
    np.testing.assert_allclose(ws._gram, ws.vectors @ ws.vectors.T)
    n_groups, per_group = 40, 5
    ws = WorkingSet(3, np.full(n_groups, 0.05))
    ws.add(np.repeat(np.arange(n_groups), per_group),
           rng.normal(size=(n_groups * per_group, 3)), rng.random(n_groups * per_group))
    solution = ws.solve()
    assert solution.form == "primal" and ws._gram_buffer.size == 0
    assert solution.primal_objective - solution.dual_objective <= \
        1e-6 * max(1.0, abs(solution.primal_objective))


def test_free_component_untouched_by_every_constraint_is_solvable():
    """A bias no constraint involves (its column of the working set is 0) made the dual's
    equality rows rank-deficient, which cvxopt refuses; it must solve, with that component 0."""
    regularized = np.array([True, True, False])
    ws = WorkingSet(3, [1.0], regularized)
    ws.add([0], [[1.0, 0.5, 0.0]], [1.0])
    for sol in (_solve(ws, "dual"), ws.solve()):
        assert sol.status in ("optimal", "inaccurate")
        # min 1/2 |w|^2 + xi s.t. w.(1, .5) >= 1 - xi: w = t (1, .5), t = min(1/1.25, 1)
        np.testing.assert_allclose(sol.w, [0.8, 0.4, 0.0], atol=1e-6)


def test_cvxopt_refusing_one_form_falls_back_to_the_other(monkeypatch):
    ws = _random_working_set(3, n_constraints=12, n_features=4, n_groups=2, bound=1.0)
    expected = ws.solve().w

    def refuse(*args, **kwargs):
        raise ValueError("Rank(A) < p or Rank([P; A; G]) < n")

    from svmstruct_api.solvers import cvxopt as cvxopt_solver

    monkeypatch.setattr(cvxopt_solver, "_solve_dual", refuse)
    np.testing.assert_allclose(ws.solve().w, expected, atol=1e-6)
