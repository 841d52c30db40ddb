"""(D) by the warm-started active-set method of svmstruct_api._active_set, for few groups
(1-slack) and a KKT system of at most MAX_SYSTEM rows.

The method moves between nonsingular faces (at most rank(G) + #groups free multipliers) by
Newton steps and exchanges, keeping the inverse of the face's system by O(face^2) updates,
and from one solve to the next: the final face of a solve, with that inverse, is this
solver's memory (QPResult.memory), named by the constraints' ``ids`` so that it survives
removals; the next solve starts from it when it still holds every positive multiplier,
and takes the inverse's and H_F's buffers over without a copy once their strides are the
same from solve to solve (the face's capacity reached), emptying the memory's record so that
nothing reads it again.  Where K > dim(w) + #groups G is rank-deficient: SMO crawls
along its null space, and cvxopt from scratch took most of the training time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._active_set import ActiveSetStuck, active_set_solve
from ..cut_groups import CUT_GROUPS
from .records import QPProblem, QPResult, QPState, check_deadline

#: the step budget before the next solver takes over: this many per constraint, plus a floor
STEPS_PER_CONSTRAINT = 5
MIN_STEPS = 100
#: the scope: at most this many groups (1-slack's cut groups by default,
#: svmstruct_api.cut_groups), and a KKT system of at most this many rows (its inverse, kept
#: from solve to solve, is 18 MB at 1500)
MAX_GROUPS = CUT_GROUPS
MAX_SYSTEM = 1500

__all__ = ["ActiveSetStuck", "active_set_solve", "applies", "solve"]


def applies(problem: QPProblem) -> bool:
    """No free component in play, at most MAX_GROUPS groups, and a face's KKT system
    (rank(G) + 2 #groups rows at most) within MAX_SYSTEM: cheap for 1-slack and its cut
    groups, not for n-slack's hundreds of groups, where cvxopt's primal is faster."""
    n_groups = problem.n_groups
    face = min(problem.size, problem.rank_bound + n_groups)
    return not problem.free_in_use and n_groups <= MAX_GROUPS and \
        face + n_groups <= MAX_SYSTEM


def solve(problem: QPProblem, state: QPState) -> QPResult:
    """(D) from state.alpha and the last face (state.memory); "failed" when the method
    gave up (step budget, or no step possible)."""
    k = problem.size
    deadline = state.deadline
    last_face = _last_face(problem, state.memory)
    # the last face first; stuck from it, once more from the support of alpha alone (a
    # face rebuilt afresh), and once from alpha = 0, before the next solver takes over
    starts: list[tuple[np.ndarray, tuple | None]] = \
        [(state.alpha, last_face)] if last_face is not None else []
    starts += [(state.alpha, None), (np.zeros_like(state.alpha), None)]
    for start, face in starts:
        alpha = start.copy()
        try:
            steps, gap, objective, face = active_set_solve(
                problem.gram(), problem.losses, problem.groups, problem.bounds, alpha,
                state.abs_gap, state.rel_gap, problem.rank_bound + problem.n_groups,
                STEPS_PER_CONSTRAINT * k + MIN_STEPS,
                None if deadline is None else lambda: check_deadline(deadline), face)
            break
        except ActiveSetStuck:
            continue
    else:
        return QPResult.failed("the active-set method could not move")
    variables, record, updates = face
    # constraints by their ids, a group's slack (variable K + g) as -1 - g; the record of
    # the face's inverse and H_F is handed to the next solve, which takes its buffers over
    # (and empties it) where their strides fit
    names = np.where(variables < k, problem.ids[np.minimum(variables, k - 1)],
                     k - 1 - variables)
    memory = (names, record, updates, problem.group_ids.copy())
    return QPResult(status="optimal", alpha=alpha, objective=objective, form="active-set",
                    memory=memory)


def _last_face(problem: QPProblem, memory: Any) -> tuple | None:
    """The final face of the last solve in this problem's variables (None when there is
    none, a solve has taken its buffers over already, the groups in play have changed, or
    one of its constraints has left)."""
    if memory is None:
        return None
    names, record, updates, group_ids = memory
    if not record or not np.array_equal(group_ids, problem.group_ids):
        return None
    constraints = names >= 0
    order = np.argsort(problem.ids)
    ranks = np.searchsorted(problem.ids[order], names[constraints])
    ranks = np.minimum(ranks, problem.size - 1)
    if not np.array_equal(problem.ids[order[ranks]], names[constraints]):
        return None
    variables = np.where(constraints, 0, problem.size - 1 - names)
    variables[constraints] = order[ranks]
    return variables.astype(np.intp), record, updates
