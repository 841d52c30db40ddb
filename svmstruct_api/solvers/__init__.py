"""The QP solvers of the working set (svmstruct_api.qp.WorkingSet), behind one interface.

Every solver is a module with two functions over the records of
svmstruct_api.solvers.records:

    applies(problem: QPProblem) -> bool              whether to try it on this problem
    solve(problem: QPProblem, state: QPState) -> QPResult

``solve`` starts from the feasible multipliers ``state.alpha`` (and its own ``state.memory``
from the last solve), returns feasible multipliers and D(alpha) with status "optimal" (or
"inaccurate"), or "failed" to hand the problem over to the next solver, and raises QPTimeout
once ``state.deadline`` passes.  The working set tries the solvers of its ``solver`` choice
in the order of TRIAL_ORDER, skipping those that do not apply, and raises QPError when none
solved the problem.

Adding a solver: one module implementing the two functions, one row in REGISTRY (and, to
try it by default, its name in TRIAL_ORDER["smo"]), and tests.  Any registered name is
also a ``solver`` choice of its own: that solver, then cvxopt (``trial_order``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import active_set, cvxopt, smo
from .records import QPProblem, QPResult, QPState, QPTimeout, check_deadline

__all__ = ["REGISTRY", "TRIAL_ORDER", "QPProblem", "QPResult", "QPState", "QPTimeout",
           "Solver", "check_deadline", "trial_order"]


@dataclass(frozen=True)
class Solver:
    """One row of the registry: a solver's name, its two functions and a line of help."""

    name: str
    solve: Callable[[QPProblem, QPState], QPResult]
    applies: Callable[[QPProblem], bool]
    help: str


#: every solver, by name
REGISTRY: dict[str, Solver] = {solver.name: solver for solver in (
    Solver("active-set", active_set.solve, active_set.applies,
           "warm-started active set with factor updates: few groups (1-slack), any K"),
    Solver("smo", smo.solve, smo.applies,
           "warm-started SMO with Newton polishing: K <= dim(w) + #groups"),
    Solver("cvxopt", cvxopt.solve, cvxopt.applies,
           "cvxopt's interior point on the smaller of (P) and (D): any problem, from scratch"),
)}

#: the order of trial of each ``qp_solver`` choice (svmstruct_api.options.QP_SOLVERS): the
#: first solver that applies and does not fail solves the QP.  "smo" (the default, by its
#: historical name): the active set first wherever it applies -- its face and the inverse of
#: its system carry over from one solve to the next (on the 10^4 x 2 10^4 sparse set at
#: C = 1000 it took 138 s where SMO took 205 s) -- then SMO, then cvxopt.
TRIAL_ORDER: dict[str, tuple[str, ...]] = {
    "smo": ("active-set", "smo", "cvxopt"),
    "cvxopt": ("cvxopt",),
}


def trial_order(choice: str) -> tuple[Solver, ...]:
    """The solvers a working set with solver ``choice`` tries, in order: TRIAL_ORDER's row,
    or for any other registered name that solver and then cvxopt.  ValueError for a name
    that is neither."""
    if choice in TRIAL_ORDER:
        names = TRIAL_ORDER[choice]
    elif choice in REGISTRY:
        names = (choice,) if choice == "cvxopt" else (choice, "cvxopt")
    else:
        raise ValueError(f"solver must be one of {sorted(set(TRIAL_ORDER) | set(REGISTRY))}, "
                         f"got {choice!r}")
    return tuple(REGISTRY[name] for name in names)
