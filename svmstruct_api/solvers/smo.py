"""(D) by the warm-started SMO of svmstruct_api._simplex_qp (for K <= dim(w) + #groups).

SMO rounds alternate with a Newton step on the face its support spans; the solve fails
(the next solver takes over) when its step budget runs out, when a round cannot move
(rounding noise in an ill-conditioned Gram matrix) or when the gap stops decreasing.
"""

from __future__ import annotations

import numpy as np

from .._simplex_qp import smo_solve
from .records import QPProblem, QPResult, QPState, check_deadline

#: SMO's step budget: this many steps per constraint, plus a floor
STEPS_PER_CONSTRAINT = 1000
MIN_STEPS = 10000
#: steps per round (between rounds: the deadline, the Newton step)
ROUND = 20
#: SMO gives up after this many consecutive rounds without a smaller gap
STALLED_ROUNDS = 3

__all__ = ["applies", "solve", "smo_solve"]


def applies(problem: QPProblem) -> bool:
    """No free component in play, and K <= dim(w) + #groups (QPProblem.dual_is_smaller)."""
    return not problem.free_in_use and problem.dual_is_smaller()


def solve(problem: QPProblem, state: QPState) -> QPResult:
    """(D) from state.alpha to the gap asked for; "failed" when the budget ran out or SMO
    stopped making progress (no step possible, or no smaller gap for STALLED_ROUNDS
    rounds)."""
    k = problem.size
    gram = problem.gram()
    alpha = state.alpha.copy()
    budget = STEPS_PER_CONSTRAINT * k + MIN_STEPS
    best_gap, stalled = np.inf, 0
    while True:
        steps, gap, objective = smo_solve(
            gram, problem.losses, problem.groups, problem.bounds, alpha, state.abs_gap,
            state.rel_gap, min(budget, ROUND * k + 1000))
        budget -= steps
        if gap <= state.abs_gap + state.rel_gap * abs(objective):
            return QPResult(status="optimal", alpha=alpha, objective=objective, form="smo")
        stalled = 0 if gap < best_gap else stalled + 1
        best_gap = min(best_gap, gap)
        if budget <= 0 or steps == 0 or not np.isfinite(gap) or stalled >= STALLED_ROUNDS:
            return QPResult.failed(f"SMO stopped at a gap of {gap:g}")
        check_deadline(state.deadline)
        newton_polish(problem, alpha)


def newton_polish(problem: QPProblem, alpha: np.ndarray) -> None:
    """One Newton step on the face of (D) that alpha's support spans, cut at alpha >= 0
    (alpha changes in place)."""
    idx = np.flatnonzero(alpha > 0)
    if len(idx) == 0:
        return
    bounds, group_index = problem.bounds, problem.groups
    gram = problem.gram_block()
    grad = problem.losses - np.einsum("ij,j->i", gram, alpha)
    mass = np.bincount(group_index, alpha, len(bounds))
    groups = group_index[idx]
    tight = np.flatnonzero(np.bincount(
        groups[bounds[groups] - mass[groups] <= 1e-9 * bounds[groups]], minlength=len(bounds)))
    m, t = len(idx), len(tight)
    system = np.zeros((m + t, m + t))
    system[:m, :m] = gram[np.ix_(idx, idx)]
    membership = (groups[None, :] == tight[:, None]).astype(float)
    system[:m, m:] = membership.T
    system[m:, :m] = membership
    rhs = np.concatenate([grad[idx], np.zeros(t)])
    try:  # LU, O((m + t)^3 / 3); a least-squares solve (SVD) cost ten times that
        delta = np.linalg.solve(system, rhs)[:m]
    except np.linalg.LinAlgError:
        return  # a singular face: leave it to SMO
    if not np.all(np.isfinite(delta)):
        return
    growth = np.bincount(groups, delta, len(bounds))
    if np.any(np.abs(growth[tight]) > 1e-9 * bounds[tight]):
        return  # the face's equations are inconsistent: leave it to SMO
    shrinking = delta < 0
    step = min(1.0, np.min(-alpha[idx][shrinking] / delta[shrinking], initial=1.0))
    filling = growth > 0
    filling[tight] = False
    step = min(step, np.min((bounds - mass)[filling] / growth[filling], initial=1.0))
    new = np.maximum(alpha[idx] + step * delta, 0.0)
    alpha[idx] = new
    excess = np.bincount(groups, new, len(bounds)) / bounds
    if np.any(excess > 1.0):  # rounding: scale the groups back onto their bounds
        alpha[idx] = new / np.maximum(excess[groups], 1.0)
