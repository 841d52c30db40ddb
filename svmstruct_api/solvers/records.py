"""The records every QP solver of the working set speaks: the problem, the state a solve
starts from, and its result (svmstruct_api.solvers, "one interface").

The problem is the dual of the working-set QP (svmstruct_api.qp),

    max_{alpha >= 0}  Delta.alpha - 1/2 alpha^T G alpha
    s.t.  sum_{k in g} alpha_k <= C_g  for every group g,   sum_k alpha_k a_k[U] = 0,   (D)

over the K constraints w.a_k >= Delta_k - xi_{g(k)}, G_kl = a_k[R].a_l[R] (R the
regularised components of w, U the others).  Only the groups that hold constraints are in
play: they are numbered 0..G-1 here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


class QPTimeout(Exception):
    """The deadline given to a solve passed before the QP was solved."""


def check_deadline(deadline: float | None) -> None:
    """Raise QPTimeout once ``time.perf_counter()`` has passed ``deadline`` (None: never)."""
    if deadline is not None and time.perf_counter() > deadline:
        raise QPTimeout("the time limit passed while solving the working-set QP")


@dataclass(frozen=True)
class QPProblem:
    """(D) of one working set, as every solver reads it.

    ``losses`` Delta_k (K,); ``groups`` the group of every constraint, 0..G-1 (intp, K);
    ``bounds`` C_g of the groups in play (G,); ``group_ids`` the working set's own numbers of
    those groups; ``ids`` a number of every constraint that stays the same while the
    constraint is in the working set (warm-start memory names constraints by it: positions
    change when constraints are removed); ``n_features`` dim(w); ``regularized`` the mask R;
    ``free_in_use`` whether some constraint touches an unregularised component (then (D)
    has the equations over U).  Formed on demand, as solvers need them:

    - ``gram()``: a C-contiguous array whose leading K x K block is G (the working set's
      buffer: the Cython solvers read it in place);
    - ``rows()``: the K x dim(w) constraint vectors a_k;
    - ``weights(alpha)``: w = sum_k alpha_k a_k[R] (0 on U).
    """

    losses: np.ndarray
    groups: np.ndarray
    bounds: np.ndarray
    group_ids: np.ndarray
    ids: np.ndarray
    n_features: int
    regularized: np.ndarray
    free_in_use: bool
    gram: Callable[[], np.ndarray]
    rows: Callable[[], np.ndarray]
    weights: Callable[[np.ndarray], np.ndarray]

    @property
    def size(self) -> int:
        """K, the number of constraints."""
        return len(self.losses)

    @property
    def n_groups(self) -> int:
        """G, the number of groups in play."""
        return len(self.bounds)

    @property
    def rank_bound(self) -> int:
        """|R|, a bound on the rank of G."""
        return int(np.count_nonzero(self.regularized))

    def gram_block(self) -> np.ndarray:
        """G itself (a view of the leading K x K block of ``gram()``)."""
        return self.gram()[:self.size, :self.size]

    def dual_is_smaller(self) -> bool:
        """Whether (D) has no more variables (K) than the primal (dim(w) + G): otherwise G
        is rank-deficient, SMO crawls along its null space and the small primal wins."""
        return self.size <= self.n_features + self.n_groups


@dataclass(frozen=True)
class QPState:
    """Where a solve starts and how far it goes.

    ``alpha``: feasible multipliers to start from (the last solve's, 0 for constraints
    added since: a copy the solver may change); ``abs_gap`` + ``rel_gap`` |D(alpha)|: the
    duality gap the solver may stop at; ``deadline``: a ``time.perf_counter()`` value after
    which the solver raises QPTimeout (check_deadline), or None; ``memory``: what this
    solver returned as its ``memory`` from the last solve of the same working set (None
    at first): its own warm start, such as the active set's final face.
    """

    alpha: np.ndarray
    abs_gap: float
    rel_gap: float
    deadline: float | None = None
    memory: Any = None


@dataclass(frozen=True)
class QPResult:
    """What one solver made of (D).

    ``status``: "optimal" (within the gap asked for), "inaccurate" (a near-optimal point:
    cvxopt's almost-converged attempt) or "failed" (nothing usable: the next solver of the
    order of trial takes over; ``message`` says why); ``alpha``: feasible multipliers;
    ``objective``: D(alpha) as the solver computed it (nan when it did not);
    ``form``: what solved it ("active-set", "smo", cvxopt's "primal" or "dual"); ``w``,
    ``slack``: a solver that solves the primal gives them (else None: the working set
    forms w = sum_k alpha_k a_k and the slacks); ``ridge``: a ridge added to G;
    ``memory``: the solver's warm start for the next solve (QPState.memory).
    """

    status: str
    alpha: np.ndarray | None = None
    objective: float = float("nan")
    form: str = ""
    w: np.ndarray | None = None
    slack: np.ndarray | None = None
    ridge: float = 0.0
    memory: Any = None
    message: str = ""

    @classmethod
    def failed(cls, message: str, memory: Any = None) -> QPResult:
        """A result that hands the problem over to the next solver."""
        return cls(status="failed", message=message, memory=memory)
