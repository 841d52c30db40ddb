"""The working-set QP of the cutting-plane learners, solved with cvxopt.

Constraints k = 1..K, each attached to a slack group g(k) with bound C_g, read
w.a_k >= Delta_k - xi_{g(k)}.  The restricted primal problem is

    min_{w, xi >= 0}  1/2 |w_R|^2 + sum_g C_g xi_g   s.t.  w.a_k >= Delta_k - xi_{g(k)}   (P)

(w_R: the regularised components of w; the others, such as a bias, are free), and its dual

    max_{alpha >= 0}  Delta.alpha - 1/2 alpha^T K alpha
    s.t.  sum_{k in g} alpha_k <= C_g  for every g,   sum_k alpha_k a_k[U] = 0,           (D)

with K_kl = a_k[R].a_l[R] and w_R = sum_k alpha_k a_k[R].  n-slack has one group per example
(C_g = C/n), 1-slack a single group (C_g = C).  Whichever form has fewer variables is solved:
(P) has dim(w) + #groups, (D) has K; the other form's solution is read off cvxopt's
multipliers.  When cvxopt refuses one form (a singular KKT system) the other is tried, and a
solve that is not optimal is retried with a small ridge added to the quadratic term; if all
of that fails, QPError is raised (an
almost-converged last attempt is accepted and flagged instead, see QPSolution.status).
"""

from dataclasses import dataclass

import numpy as np
from cvxopt import matrix, solvers


class QPError(RuntimeError):
    """cvxopt could not solve the working-set QP, even after regularising."""


_SOLVER_OPTIONS = {"show_progress": False, "abstol": 1e-9, "reltol": 1e-9, "feastol": 1e-9,
                   "maxiters": 200}
_RIDGES = (0.0, 1e-10, 1e-8, 1e-6)  # relative to the largest diagonal entry
_ACCEPTABLE_RESIDUAL = 1e-6


@dataclass(frozen=True)
class QPSolution:
    w: np.ndarray
    alpha: np.ndarray
    #: slack of every group (xi_g >= 0)
    slack: np.ndarray
    #: value of (D) at alpha, a lower bound on the restricted and on the full problem
    dual_objective: float
    #: value of (P) at (w, slack)
    primal_objective: float
    #: "primal" or "dual"
    form: str
    #: "optimal", or "inaccurate" when only a near-optimal point was found (see module doc)
    status: str
    ridge: float


class WorkingSet:
    """Growing set of constraints with an incrementally maintained Gram matrix."""

    def __init__(self, n_features, group_bounds, regularized=None):
        self.n_features = n_features
        self.group_bounds = np.asarray(group_bounds, dtype=float)
        self.regularized = (np.ones(n_features, dtype=bool) if regularized is None
                            else np.asarray(regularized, dtype=bool))
        self._vectors = np.empty((0, n_features))
        self._losses = np.empty(0)
        self._groups = np.empty(0, dtype=np.int64)
        self._gram = np.empty((0, 0))

    def __len__(self):
        return len(self._losses)

    @property
    def vectors(self):
        return self._vectors

    @property
    def losses(self):
        return self._losses

    @property
    def groups(self):
        return self._groups

    def add(self, groups, vectors, losses):
        """Append constraints w.vectors[k] >= losses[k] - xi_{groups[k]}."""
        vectors = np.atleast_2d(np.asarray(vectors, dtype=float))
        if len(vectors) == 0:
            return
        reg = self.regularized
        cross = vectors[:, reg] @ self._vectors[:, reg].T
        new = vectors[:, reg] @ vectors[:, reg].T
        self._gram = np.block([[self._gram, cross.T], [cross, new]])
        self._vectors = np.vstack([self._vectors, vectors])
        self._losses = np.concatenate([self._losses, np.asarray(losses, dtype=float)])
        self._groups = np.concatenate([self._groups, np.asarray(groups, dtype=np.int64)])

    def remove(self, keep):
        """Keep only the constraints where the boolean mask ``keep`` is True."""
        keep = np.asarray(keep, dtype=bool)
        self._vectors = self._vectors[keep]
        self._losses = self._losses[keep]
        self._groups = self._groups[keep]
        self._gram = self._gram[np.ix_(keep, keep)]

    def slacks(self, w):
        """xi_g(w) = max(0, max_{k in g} Delta_k - w.a_k): each group's slack at w."""
        slack = np.zeros(len(self.group_bounds))
        if len(self):
            np.maximum.at(slack, self._groups, self._losses - self._vectors @ w)
        return slack

    def solve(self):
        """Solve the restricted QP; raise QPError when cvxopt cannot."""
        if len(self) == 0:
            return QPSolution(w=np.zeros(self.n_features), alpha=np.empty(0),
                              slack=np.zeros(len(self.group_bounds)), dual_objective=0.0,
                              primal_objective=0.0, form="none", status="optimal", ridge=0.0)
        active_groups = np.unique(self._groups)
        primal_first = self.n_features + len(active_groups) < len(self)
        forms = (self._solve_primal, self._solve_dual) if primal_first else \
            (self._solve_dual, self._solve_primal)
        scale = max(float(np.max(np.diag(self._gram), initial=0.0)), 1.0)
        last_error = "no attempt"
        fallback = None
        for ridge in _RIDGES:
            for form in forms:  # the smaller form first; the other when cvxopt refuses it
                try:
                    sol = form(active_groups, ridge * scale)
                except (ValueError, ArithmeticError) as exc:  # cvxopt: singular KKT system
                    last_error = str(exc)
                    continue
                if sol is not None and sol.status == "optimal":
                    return sol
                fallback = fallback or sol
        if fallback is not None:
            return fallback
        raise QPError(
            f"the QP over {len(self)} constraints could not be solved in either form, even "
            f"with a ridge of {_RIDGES[-1]:g}: {last_error}")

    # -- the two forms ---------------------------------------------------------------------

    def _group_rows(self, active_groups):
        """Index of each constraint's group among the active groups."""
        return np.searchsorted(active_groups, self._groups)

    def _status(self, sol):
        if sol["status"] == "optimal":
            return "optimal"
        residual = max(sol.get("primal infeasibility") or np.inf,
                       sol.get("dual infeasibility") or np.inf,
                       abs(sol.get("relative gap") or np.inf))
        return "inaccurate" if residual < _ACCEPTABLE_RESIDUAL else None

    def _solve_dual(self, active_groups, ridge):
        k = len(self)
        n_groups = len(active_groups)
        membership = np.zeros((n_groups, k))
        membership[self._group_rows(active_groups), np.arange(k)] = 1.0
        quadratic = self._gram + ridge * np.eye(k)
        inequalities = np.vstack([-np.eye(k), membership])
        bounds = np.concatenate([np.zeros(k), self.group_bounds[active_groups]])
        # free components that no constraint touches add the void equation 0 = 0: leave them
        # out (they stay 0 in w); cvxopt needs the equality matrix to have full row rank
        free = ~self.regularized & np.any(self._vectors != 0, axis=0)
        equality = {}
        if free.any():
            equality = {"A": matrix(self._vectors[:, free].T.copy()),
                        "b": matrix(np.zeros(free.sum()))}
        sol = solvers.qp(matrix(quadratic), matrix(-self._losses), matrix(inequalities),
                         matrix(bounds), options=_SOLVER_OPTIONS, **equality)
        status = self._status(sol)
        if status is None:
            return None
        alpha = np.maximum(np.array(sol["x"]).ravel(), 0.0)
        z = np.array(sol["z"]).ravel()
        w = np.zeros(self.n_features)
        w[self.regularized] = alpha @ self._vectors[:, self.regularized]
        if free.any():
            w[free] = np.array(sol["y"]).ravel()
        slack = np.zeros(len(self.group_bounds))
        slack[active_groups] = np.maximum(z[k:], 0.0)
        return self._solution(w, alpha, slack, "dual", status, ridge)

    def _solve_primal(self, active_groups, ridge):
        d, k = self.n_features, len(self)
        n_groups = len(active_groups)
        n_vars = d + n_groups
        diag = np.concatenate([self.regularized.astype(float), np.zeros(n_groups)])
        diag[:d] += ridge
        linear = np.concatenate([np.zeros(d), self.group_bounds[active_groups]])
        margin_rows = np.zeros((k, n_vars))
        margin_rows[:, :d] = -self._vectors
        margin_rows[np.arange(k), d + self._group_rows(active_groups)] = -1.0
        slack_rows = np.zeros((n_groups, n_vars))
        slack_rows[np.arange(n_groups), d + np.arange(n_groups)] = -1.0
        sol = solvers.qp(matrix(np.diag(diag)), matrix(linear),
                         matrix(np.vstack([margin_rows, slack_rows])),
                         matrix(np.concatenate([-self._losses, np.zeros(n_groups)])),
                         options=_SOLVER_OPTIONS)
        status = self._status(sol)
        if status is None:
            return None
        x = np.array(sol["x"]).ravel()
        alpha = np.maximum(np.array(sol["z"]).ravel()[:k], 0.0)
        slack = np.zeros(len(self.group_bounds))
        slack[active_groups] = np.maximum(x[d:], 0.0)
        return self._solution(x[:d], alpha, slack, "primal", status, ridge)

    def _solution(self, w, alpha, slack, form, status, ridge):
        reg = self.regularized
        w_reg = alpha @ self._vectors[:, reg]
        dual = float(alpha @ self._losses - 0.5 * w_reg @ w_reg)
        primal = float(0.5 * w[reg] @ w[reg] + self.group_bounds @ slack)
        return QPSolution(w=w, alpha=alpha, slack=slack, dual_objective=dual,
                          primal_objective=primal, form=form, status=status, ridge=ridge)
