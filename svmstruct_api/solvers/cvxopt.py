"""(D) or the primal (P) by cvxopt's interior-point QP, whichever has fewer variables ((P):
dim(w) + #groups, (D): K), the other form's solution read off cvxopt's multipliers: the
solver of n-slack's many groups, of working sets with free components, and the last in
every order of trial.

When cvxopt refuses one form (a singular KKT system) the other is tried, and a solve that is
not optimal is retried with a small ridge added to the quadratic term; if all of that fails
the solve fails (the working set raises QPError); an almost-converged last attempt is
accepted as "inaccurate".  The primal form is only tried while its dense KKT system is
small (dim(w) + #groups <= MAX_PRIMAL_VARIABLES): with many features the dual is the form
to solve.  cvxopt stops at its own targets (OPTIONS), not at the gap of the state.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .records import QPProblem, QPResult, QPState, check_deadline

OPTIONS = {"show_progress": False, "abstol": 1e-9, "reltol": 1e-9, "feastol": 1e-9,
           "maxiters": 200}
#: ridges tried in turn, relative to the largest diagonal entry of G
RIDGES = (0.0, 1e-10, 1e-8, 1e-6)
#: an attempt that is not optimal is accepted ("inaccurate") below this residual
ACCEPTABLE_RESIDUAL = 1e-6
#: the primal form's KKT system is dense in dim(w) + #groups variables: 4000 is 128 MB
MAX_PRIMAL_VARIABLES = 4000


def applies(problem: QPProblem) -> bool:
    """Always: cvxopt takes every problem."""
    return True


def solve(problem: QPProblem, state: QPState) -> QPResult:
    """The smaller form first, the other when cvxopt refuses it, each without and then with
    growing ridges (RIDGES); the first optimal attempt, else the first inaccurate one, else
    "failed".  The deadline is checked before each attempt."""
    forms: tuple[Callable[..., QPResult | None], ...] = \
        (_solve_dual, _solve_primal) if problem.dual_is_smaller() else \
        (_solve_primal, _solve_dual)
    if problem.n_features + problem.n_groups > MAX_PRIMAL_VARIABLES:
        forms = (_solve_dual,)
    scale = max(float(np.max(_squared_norms(problem, forms[0]), initial=0.0)), 1.0)
    last_error = "no attempt"
    fallback = None
    for ridge in RIDGES:
        for form in forms:
            check_deadline(state.deadline)
            try:
                result = form(problem, ridge * scale)
            except (ValueError, ArithmeticError) as exc:  # cvxopt: singular KKT system
                last_error = str(exc)
                continue
            if result is not None and result.status == "optimal":
                return result
            fallback = fallback or result
    if fallback is not None:
        return fallback
    return QPResult.failed(
        f"the QP over {problem.size} constraints could not be solved in either form, even "
        f"with a ridge of {RIDGES[-1]:g}: {last_error}")


def _squared_norms(problem: QPProblem, first: Callable[..., Any]) -> np.ndarray:
    """|a_k[R]|^2 of every constraint: G's diagonal where the dual form goes first (it
    forms G), else from the rows (which the primal form reads)."""
    if first is _solve_dual:
        return np.diagonal(problem.gram_block()).copy()
    rows = problem.rows()[:, problem.regularized]
    return np.einsum("ij,ij->i", rows, rows)


def _status(sol: dict) -> str | None:
    """"optimal", "inaccurate" (small residuals) or None (unusable) of a cvxopt solution."""
    if sol["status"] == "optimal":
        return "optimal"
    residual = max(sol.get("primal infeasibility") or np.inf,
                   sol.get("dual infeasibility") or np.inf,
                   abs(sol.get("relative gap") or np.inf))
    return "inaccurate" if residual < ACCEPTABLE_RESIDUAL else None


def _solve_dual(problem: QPProblem, ridge: float) -> QPResult | None:
    """(D) with cvxopt; w from alpha (free components: cvxopt's equality multipliers)."""
    from cvxopt import matrix, solvers  # imported when first needed: rarely used

    k, n_groups = problem.size, problem.n_groups
    membership = np.zeros((n_groups, k))
    membership[problem.groups, np.arange(k)] = 1.0
    quadratic = problem.gram_block() + ridge * np.eye(k)
    inequalities = np.vstack([-np.eye(k), membership])
    bounds = np.concatenate([np.zeros(k), problem.bounds])
    # free components that no constraint touches add the void equation 0 = 0: leave them
    # out (they stay 0 in w); cvxopt needs the equality matrix to have full row rank
    free = np.zeros(problem.n_features, dtype=bool)
    if problem.free_in_use:
        free = ~problem.regularized & np.any(problem.rows() != 0, axis=0)
    equality = {}
    if free.any():
        equality = {"A": matrix(problem.rows()[:, free].T.copy()),
                    "b": matrix(np.zeros(free.sum()))}
    sol = solvers.qp(matrix(quadratic), matrix(-problem.losses), matrix(inequalities),
                     matrix(bounds), options=OPTIONS, **equality)
    status = _status(sol)
    if status is None:
        return None
    alpha = np.maximum(np.array(sol["x"]).ravel(), 0.0)
    z = np.array(sol["z"]).ravel()
    w = problem.weights(alpha)
    if free.any():
        w[free] = np.array(sol["y"]).ravel()
    return QPResult(status=status, alpha=alpha, form="dual", w=w,
                    slack=np.maximum(z[k:], 0.0), ridge=ridge)


def _solve_primal(problem: QPProblem, ridge: float) -> QPResult | None:
    """(P) with cvxopt in dim(w) + #groups variables; alpha from its multipliers."""
    from cvxopt import matrix, solvers, spmatrix

    d, k, n_groups = problem.n_features, problem.size, problem.n_groups
    n_vars = d + n_groups
    diag = np.concatenate([problem.regularized.astype(float), np.zeros(n_groups)])
    diag[:d] += ridge
    linear = np.concatenate([np.zeros(d), problem.bounds])
    margin_rows = np.zeros((k, n_vars))
    margin_rows[:, :d] = -problem.rows()
    margin_rows[np.arange(k), d + problem.groups] = -1.0
    slack_rows = np.zeros((n_groups, n_vars))
    slack_rows[np.arange(n_groups), d + np.arange(n_groups)] = -1.0
    sol = solvers.qp(spmatrix(diag, range(n_vars), range(n_vars)), matrix(linear),
                     matrix(np.vstack([margin_rows, slack_rows])),
                     matrix(np.concatenate([-problem.losses, np.zeros(n_groups)])),
                     options=OPTIONS)
    status = _status(sol)
    if status is None:
        return None
    x = np.array(sol["x"]).ravel()
    alpha = np.maximum(np.array(sol["z"]).ravel()[:k], 0.0)
    return QPResult(status=status, alpha=alpha, form="primal", w=x[:d],
                    slack=np.maximum(x[d:], 0.0), ridge=ridge)
