"""The working set of the cutting-plane learners: its constraints, their Gram matrix, and
the working-set QP, solved by the solvers of svmstruct_api.solvers through their one
interface.

Constraints k = 1..K, each attached to a slack group g(k) with bound C_g, read
w.a_k >= Delta_k - xi_{g(k)}.  The restricted primal problem is

    min_{w, xi >= 0}  1/2 |w_R|^2 + sum_g C_g xi_g   s.t.  w.a_k >= Delta_k - xi_{g(k)}   (P)

(w_R: the regularised components of w; the others, such as a bias, are free), and its dual

    max_{alpha >= 0}  Delta.alpha - 1/2 alpha^T K alpha
    s.t.  sum_{k in g} alpha_k <= C_g  for every g,   sum_k alpha_k a_k[U] = 0,           (D)

with K_kl = a_k[R].a_l[R] and w_R = sum_k alpha_k a_k[R].  n-slack has one group per example
(C_g = C/n), 1-slack a single group (C_g = C).  The working set hands (D) to the solvers as
a QPProblem, each warm-started from the previous solve's multipliers (a cutting-plane
iteration adds one or a few constraints, so the old alpha is nearly optimal; an
interior-point solve would cost O(K^3) per step from scratch) and from its own memory of
the last solve, and stopped at the duality gap it is given (the learners pass a fraction
of C * epsilon or of rel_gap P) or at cvxopt's targets.  Which solvers are tried, in which
order, is one table (svmstruct_api.solvers.TRIAL_ORDER): by default the active set (few
groups), SMO (K <= dim(w) + #groups), then cvxopt (any problem: n-slack's many groups, free
components, and whatever the others gave up on).

Products over the constraint rows and the Gram matrix are formed with ``np.einsum``, the
Gram matrix's new rows by ``_products.gram_rows`` (dot products vectorised for AVX2 where the
CPU has it, the same bits either way: 0.30 against einsum's 0.89 ms for 16 new rows of 301
numbers against 500), all on one thread, with no BLAS: a BLAS product wakes its thread
pool, whose threads then spin beside the single-threaded oracle and solvers.  On the
shared 2-core machine, while it was busy, a fit on the 5 10^4 x 10^5 sparse set at C = 100
took 4.4 s with OpenBLAS's threads and 1.0 s with one (alternating runs); when it was
quieter the two were equal
(benchmarks/results/solver_speed.md), and einsum's loops take about 1.6x BLAS's time for
these products, which the passes saved elsewhere make up for.

``solve(deadline=)``: the solvers stop between SMO rounds, between active-set steps and
before each cvxopt attempt once ``time.perf_counter()`` passes the deadline, raising
QPTimeout (the learners' max_time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._products import gram_rows
from .options import QP_SOLVERS, QPError
from .solvers import QPProblem, QPResult, QPState, QPTimeout, trial_order

__all__ = ["QP_SOLVERS", "QPError", "QPSolution", "QPTimeout", "WorkingSet"]

#: with no gap asked for, solvers stop at a duality gap of _DEFAULT_ABS_GAP +
#: _DEFAULT_REL_GAP * |D(alpha)| (cvxopt's targets)
_DEFAULT_ABS_GAP = 1e-9
_DEFAULT_REL_GAP = 1e-9


@dataclass(frozen=True)
class QPSolution:
    """The solution of one working-set QP, as the learners read it."""

    w: np.ndarray
    alpha: np.ndarray
    #: slack of every group (xi_g >= 0)
    slack: np.ndarray
    #: value of (D) at alpha, a lower bound on the restricted and on the full problem
    dual_objective: float
    #: value of (P) at (w, slack)
    primal_objective: float
    #: "smo", "active-set", or cvxopt's "primal" or "dual"
    form: str
    #: "optimal", or "inaccurate" when only a near-optimal point was found (see module doc)
    status: str
    #: a ridge cvxopt added to the Gram matrix (0 for every other solver)
    ridge: float


class WorkingSet:
    """Growing set of constraints with an incrementally extended Gram matrix.

    Rows live in buffers that double when full.  The Gram matrix is extended only when a
    solver of (D) asks for it (SMO, the active set, cvxopt's dual form), by the rows of the
    constraints added since it last did (K inner products each, not a recomputation): cvxopt's
    primal form, which n-slack's many groups use once K > dim(w) + #groups, needs the rows
    alone, so the K x K matrix -- most of n-slack's memory -- is never formed there.  The
    multipliers of the last solve are kept with their constraints: the next solve starts
    from them, and every solver's memory of its last solve (QPResult.memory) is kept for its
    next one.  Every constraint carries an id that does not change while it stays
    (QPProblem.ids: what that memory names constraints by).

    ``solver``: a choice of svmstruct_api.solvers.trial_order: "smo" (default) tries the
    active set, SMO and cvxopt in the order of svmstruct_api.solvers.TRIAL_ORDER;
    "cvxopt" uses cvxopt alone; any other registered solver's name, that solver and then
    cvxopt.  The working set calls the solvers through that interface only.

    ``basis``: None, or a RowBasis B (p x dim(w)) in which every constraint is a_k = B^T u_k
    (for the ranking plugins B = X, the documents' rows, and u_k the per-document
    coefficients of the 1-slack cut: svmmap.core.plugins.rows.DocumentBasis).  A RowBasis has
    ``n_coefficients`` (p), ``forward(w)`` = B w and ``backward(u)`` = B^T u.  Rows are then
    kept as u_k, p numbers instead of dim(w), and what the solvers need is formed without a
    dim(w)-long row:

        K_kl = a_k.a_l = u_k.(B a_l)      (B a_l: one product with B when l is added),
        w = B^T (sum_k alpha_k u_k),      w.a_k = u_k.(B w),

    so each iteration's passes over the K rows (a new Gram row, then w) read K p numbers
    instead of K dim(w): on the 5 10^4 x 10^5 sparse set (p = dim(w) / 2) that halves them
    and the rows' memory.  Every component of w must be regularised; ``add`` takes each
    constraint's u_k beside its vector (the vector gives B a_k; its length is dim(w)).
    ``vectors`` forms the dim(w)-long rows on demand (cvxopt's fallback only).
    """

    def __init__(self, n_features: int, group_bounds: Any, regularized: Any = None,
                 solver: str = "smo", basis: Any = None) -> None:
        trial_order(solver)  # ValueError for an unknown choice
        if basis is not None and regularized is not None and not np.all(regularized):
            raise ValueError("constraints kept in a row basis need every component of w "
                             "regularised")
        self.n_features = n_features
        #: None (rows kept as dim(w)-long vectors) or the RowBasis B the rows are kept in
        #: (class doc)
        self.basis = basis
        #: B a_k of the constraints added since the Gram matrix was last extended (basis only)
        self._pending_images: list[np.ndarray] = []
        self.group_bounds = np.asarray(group_bounds, dtype=float)
        self.regularized = (np.ones(n_features, dtype=bool) if regularized is None
                            else np.asarray(regularized, dtype=bool))
        self.solver = solver
        self._all_regularized = bool(self.regularized.all())
        self._size = 0
        #: the leading constraints whose rows and columns of the Gram matrix are formed
        self._gram_size = 0
        self._gram_buffer = np.empty((0, 0))
        #: (w, slacks at w, margins w.a_k or None) of the last solve, until the working
        #: set changes
        self._solved = None
        #: every solver's memory of its last solve (QPResult.memory), by solver name
        self._memory: dict[str, Any] = {}
        #: the id the next constraint added gets (QPProblem.ids)
        self._next_id = 0
        self._allocate(16)

    def _allocate(self, capacity):
        """(Re)allocate the buffers with room for ``capacity`` constraints, keeping rows."""
        n = self._size
        vectors = np.empty((capacity, self.row_length))
        losses = np.empty(capacity)
        groups = np.empty(capacity, dtype=np.intp)
        ids = np.empty(capacity, dtype=np.int64)
        alpha = np.zeros(capacity)
        if n:
            vectors[:n] = self._vector_buffer[:n]
            losses[:n] = self._loss_buffer[:n]
            groups[:n] = self._group_buffer[:n]
            ids[:n] = self._id_buffer[:n]
            alpha[:n] = self._alpha_buffer[:n]
        self._vector_buffer = vectors
        self._loss_buffer, self._group_buffer, self._alpha_buffer = losses, groups, alpha
        self._id_buffer = ids

    def __len__(self) -> int:
        return self._size

    @property
    def row_length(self) -> int:
        """The length of a stored row: dim(w), or the basis's number of coefficients."""
        return self.n_features if self.basis is None else self.basis.n_coefficients

    @property
    def vectors(self) -> np.ndarray:
        """a_k of every constraint as dim(w)-long rows (formed from their coefficients, row
        by row, when they are kept in a basis: only cvxopt's fallback asks for them)."""
        if self.basis is None:
            return self._vector_buffer[:self._size]
        return np.array([self.basis.backward(u) for u in self._vector_buffer[:self._size]]
                        ).reshape(self._size, self.n_features)

    @property
    def losses(self) -> np.ndarray:
        """Delta_k of every constraint."""
        return self._loss_buffer[:self._size]

    @property
    def groups(self) -> np.ndarray:
        """The slack group g(k) of every constraint."""
        return self._group_buffer[:self._size]

    @property
    def alpha(self) -> np.ndarray:
        """The multipliers of the last solve (0 for constraints added since)."""
        return self._alpha_buffer[:self._size]

    @property
    def _gram(self):
        """K_kl = a_k[R].a_l[R] over the working set (formed here, see the class doc)."""
        self._extend_gram()
        return self._gram_buffer[:self._size, :self._size]

    def _extend_gram(self):
        """Form the Gram rows and columns of the constraints added since the last call; the
        buffer (doubling like the rows') then holds K at [:K, :K]."""
        g, end = self._gram_size, self._size
        if g == end:
            return
        if end > len(self._gram_buffer):
            gram = np.empty((max(2 * len(self._gram_buffer), end, 16),) * 2)
            gram[:g, :g] = self._gram_buffer[:g, :g]
            self._gram_buffer = gram
        new = self._vector_buffer[g:end]
        if self.basis is not None:
            # a_l.a_k = u_k.(B B^T u_l) = u_k.(B a_l): the images B a_l of the new rows
            # against the coefficients of all rows, K row-lengths of B's size
            images = np.array(self._pending_images).reshape(end - g, self.row_length)
            rows = gram_rows(images, self._vector_buffer[:end])
            self._pending_images: list[np.ndarray] = []
        elif self._all_regularized:
            rows = gram_rows(new, self._vector_buffer[:end])
        else:
            reg = self.regularized
            rows = gram_rows(new[:, reg], self._vector_buffer[:end, reg])
        self._gram_buffer[g:end, :end] = rows
        self._gram_buffer[:g, g:end] = rows[:, :g].T
        self._gram_size = end

    def _regularized_rows(self):
        """a_k[R] of every constraint: the rows themselves when every component is
        regularised (no copy: a boolean column mask would copy the K x dim(w) rows)."""
        return self.vectors if self._all_regularized else self.vectors[:, self.regularized]

    def _weights(self, alpha):
        """w_R = sum_k alpha_k a_k[R] (0 elsewhere), over the support of alpha only: with
        a support below a third of the working set, reading those rows (a copy, then a
        product: three row-lengths each) costs less than one pass over all of them."""
        support = np.flatnonzero(alpha)
        if self.basis is not None:  # w = B^T (sum_k alpha_k u_k)
            coefficients = np.einsum("i,ij->j", alpha[support], self._vector_buffer[support]) \
                if 3 * len(support) < len(alpha) else \
                np.einsum("i,ij->j", alpha, self._vector_buffer[:len(alpha)])
            return self.basis.backward(coefficients)
        if 3 * len(support) < len(alpha):
            rows, alpha = self._vector_buffer[support], alpha[support]
            if not self._all_regularized:
                rows = rows[:, self.regularized]
        else:
            rows = self._regularized_rows()
        if self._all_regularized:
            return np.einsum("i,ij->j", alpha, rows)
        w = np.zeros(self.n_features)
        w[self.regularized] = np.einsum("i,ij->j", alpha, rows)
        return w

    def add(self, groups: Any, vectors: Any, losses: Any, coefficients: Any = None) -> None:
        """Append constraints w.vectors[k] >= losses[k] - xi_{groups[k]}; with a basis B,
        ``coefficients[k]`` is the u_k of vectors[k] = B^T u_k, the row kept."""
        vectors = np.atleast_2d(np.asarray(vectors, dtype=float))
        added = len(vectors)
        if added == 0:
            return
        if self.basis is not None:
            if coefficients is None:
                raise ValueError("a working set kept in a basis needs each constraint's "
                                 "coefficients")
            self._pending_images.extend(self.basis.forward(v) for v in vectors)
            rows = np.atleast_2d(np.asarray(coefficients, dtype=float))
        else:
            rows = vectors
        self._solved = None
        n, end = self._size, self._size + added
        if end > len(self._loss_buffer):
            self._allocate(max(2 * len(self._loss_buffer), end))
        self._vector_buffer[n:end] = rows
        self._loss_buffer[n:end] = losses
        self._group_buffer[n:end] = groups
        self._id_buffer[n:end] = np.arange(self._next_id, self._next_id + added)
        self._next_id += added
        self._alpha_buffer[n:end] = 0.0
        self._size = end

    def remove(self, keep: Any) -> np.ndarray:
        """Keep only the constraints where the boolean mask ``keep`` is True; return
        ``order``, the old index of the constraint now at each position (kept constraints
        may change places: per-constraint arrays kept by the caller follow with
        ``array[order]``).

        With the Gram matrix formed for every constraint, the kept constraints past the new
        size fill the holes below it, so only as many dim(w)-long rows move as were removed
        (a compaction in order moves every row after the first hole); otherwise the order
        is kept, so that the formed constraints stay the leading ones.  The last solve's w
        keeps its known margins and slacks."""
        keep = np.asarray(keep, dtype=bool)
        if self.basis is not None:
            self._extend_gram()  # the pending images B a_k belong to the rows as added
        kept = np.flatnonzero(keep)
        m = len(kept)
        if self._gram_size == self._size:
            order = np.arange(m)
            holes = np.flatnonzero(~keep[:m])
            order[holes] = kept[kept >= m]
            self._vector_buffer[holes] = self._vector_buffer[order[holes]]
            self._gram_buffer[:m, :m] = self._gram_buffer[np.ix_(order, order)]
            self._gram_size = m
        else:
            order = kept
            self._vector_buffer[:m] = self._vector_buffer[kept]
            formed = kept[kept < self._gram_size]  # sorted: they stay the leading constraints
            self._gram_buffer[:len(formed), :len(formed)] = \
                self._gram_buffer[np.ix_(formed, formed)]
            self._gram_size = len(formed)
        self._loss_buffer[:m] = self._loss_buffer[order]
        self._group_buffer[:m] = self._group_buffer[order]
        self._id_buffer[:m] = self._id_buffer[order]
        self._alpha_buffer[:m] = self._alpha_buffer[order]
        self._size = m
        solved, self._solved = self._solved, None
        if solved is not None and solved[2] is not None:
            margins = solved[2][order]
            self._solved = (solved[0], self.slacks(solved[0], margins), margins)
        return order

    def aggregate(self, chosen: Any) -> np.ndarray:
        """Replace the constraints ``chosen`` (indices, two or more, of one group, with
        multipliers alpha_k > 0 from the last solve) by their aggregate: the alpha-weighted
        mean

            a = sum_k lambda_k a_k,  Delta = sum_k lambda_k Delta_k,
            lambda_k = alpha_k / A,  A = sum_{k in chosen} alpha_k,

        with multiplier A.  A convex combination of valid cuts is a valid cut, and the
        multipliers with A in place of the chosen ones give the same w = sum alpha_k a_k and
        the same dual objective (Delta.alpha and |w|^2 unchanged), so the QP's optimum stays
        where it was while the working set shrinks (the aggregate-subgradient step of
        Kiwiel's bundle methods).  The aggregate's row and Gram entries are formed from the
        chosen ones' (lambda^T U, lambda^T K), without a product with dim(w)-long data; the
        last solve's w keeps its known margins.  The aggregate takes chosen[0]'s place;
        return ``order`` as ``remove`` does."""
        self._extend_gram()
        chosen = np.asarray(chosen, dtype=np.intp)
        k = self._size
        alpha = self._alpha_buffer[:k]
        total = float(alpha[chosen].sum())
        if len(chosen) < 2 or not total > 0 or len(_distinct(self.groups[chosen])) != 1:
            raise ValueError("aggregate two or more constraints of one group with alpha > 0")
        lam = alpha[chosen] / total
        gram = self._gram_buffer[:k, :k]
        gram_row = lam @ gram[chosen]
        first = chosen[0]
        self._vector_buffer[first] = lam @ self._vector_buffer[chosen]
        self._loss_buffer[first] = lam @ self._loss_buffer[chosen]
        self._alpha_buffer[first] = total
        gram[first, :] = gram_row
        gram[:, first] = gram_row
        gram[first, first] = lam @ gram_row[chosen]
        self._id_buffer[first] = self._next_id  # a new constraint: memories of it are void
        self._next_id += 1
        if self._solved is not None and self._solved[2] is not None:
            margins = self._solved[2]
            margins[first] = lam @ margins[chosen]
        keep = np.ones(k, dtype=bool)
        keep[chosen[1:]] = False
        return self.remove(keep)

    def rescale_bounds(self, group_bounds: Any, factor: float) -> None:
        """Set the groups' bounds C_g to ``group_bounds``, each ``factor`` times the old one
        (a change of C), and scale the multipliers by ``factor``: they stay feasible, and an
        optimum's active set is the natural start for the new QP."""
        self.group_bounds = np.asarray(group_bounds, dtype=float)
        self._alpha_buffer[:self._size] *= factor
        self._solved = None

    def slacks(self, w: np.ndarray, margins: np.ndarray | None = None) -> np.ndarray:
        """xi_g(w) = max(0, max_{k in g} Delta_k - w.a_k): each group's slack at w
        (``margins``: the w.a_k when known, e.g. K alpha for w = sum_k alpha_k a_k)."""
        if margins is None and self._solved is not None and w is self._solved[0]:
            return self._solved[1].copy()  # the last solve's w: its slacks are known
        slack = np.zeros(len(self.group_bounds))
        if len(self):
            if margins is None:
                margins = self._margins_of(w)
            np.maximum.at(slack, self.groups, self.losses - margins)
        return slack

    def margins(self, w: np.ndarray) -> np.ndarray:
        """w.a_k of every constraint: known without a pass over the rows for the last
        solve's w (K alpha), else one pass."""
        if self._solved is not None and w is self._solved[0] and self._solved[2] is not None:
            return self._solved[2].copy()
        return self._margins_of(w)

    def _margins_of(self, w):
        """w.a_k of every constraint, by one pass over the rows (u_k.(B w) in a basis)."""
        if self.basis is not None:
            return np.einsum("ij,j->i", self._vector_buffer[:self._size],
                             self.basis.forward(w))
        return np.einsum("ij,j->i", self.vectors, w)

    def _dual_solution(self, alpha, form):
        """The QPSolution of multipliers alpha of (D) found with the Gram matrix formed:
        w = sum_k alpha_k a_k[R], and its margins w.a_k = (K alpha)_k without touching the
        dim(w)-long rows again when every component is regularised."""
        w = self._weights(alpha)
        margins = np.einsum("ij,j->i", self._gram_buffer[:len(self), :len(self)], alpha) \
            if self._all_regularized else None
        slack = self.slacks(w, margins)
        # exact slacks and margins at w: slacks(w) and margins(w) return them
        self._solved = (w, slack.copy(), margins)
        return self._solution(w, alpha, slack, form, "optimal", 0.0, margins)

    def solve(self, gap_tolerance: float | None = None,
              deadline: float | None = None) -> QPSolution:
        """Solve the restricted QP by the solvers of this working set's ``solver`` choice,
        in their order of trial (svmstruct_api.solvers); raise QPError when none can.

        ``gap_tolerance``: the duality gap the solvers may stop at (default: cvxopt's
        targets, 1e-9 absolute plus 1e-9 relative).  The cutting-plane learners pass a
        fraction of C * epsilon: a QP gap delta adds delta to the optimality bound
        P(w) <= P* + C eps.  ``deadline``: a ``time.perf_counter()`` value; QPTimeout is
        raised once it passes (checked between SMO rounds, every active-set step and before
        each cvxopt attempt).
        """
        self._solved = None
        if len(self) == 0:
            return QPSolution(w=np.zeros(self.n_features), alpha=np.empty(0),
                              slack=np.zeros(len(self.group_bounds)), dual_objective=0.0,
                              primal_objective=0.0, form="none", status="optimal", ridge=0.0)
        abs_gap, rel_gap = (_DEFAULT_ABS_GAP, _DEFAULT_REL_GAP) if gap_tolerance is None \
            else (gap_tolerance, 0.0)
        problem = self.problem()
        failures = []
        for solver in trial_order(self.solver):
            if not solver.applies(problem):
                continue
            state = QPState(alpha=self.alpha.copy(), abs_gap=abs_gap, rel_gap=rel_gap,
                            deadline=deadline, memory=self._memory.get(solver.name))
            result = solver.solve(problem, state)
            self._memory[solver.name] = result.memory
            if result.status != "failed":
                solution = self._solution_of(result)
                self._alpha_buffer[:len(self)] = solution.alpha
                return solution
            failures.append(result.message)
        raise QPError(failures[-1] if failures else
                      f"no QP solver of {self.solver!r} applies to this working set")

    def problem(self) -> QPProblem:
        """(D) of this working set as the solvers read it (svmstruct_api.solvers.records):
        only the groups that hold constraints, renumbered 0..G-1."""
        active_groups, group_index = np.unique(self.groups, return_inverse=True)
        return QPProblem(
            losses=self.losses, groups=group_index.astype(np.intp).ravel(),
            bounds=self.group_bounds[active_groups], group_ids=active_groups,
            ids=self._id_buffer[:self._size], n_features=self.n_features,
            regularized=self.regularized, free_in_use=self._free_components_in_use(),
            gram=self._formed_gram, rows=lambda: self.vectors, weights=self._weights)

    def _formed_gram(self) -> np.ndarray:
        """The Gram buffer, extended to every constraint (its leading K x K block is G)."""
        self._extend_gram()
        return self._gram_buffer

    def _free_components_in_use(self) -> bool:
        return not self._all_regularized and \
            bool(np.any(self.vectors[:, ~self.regularized] != 0))

    def _solution_of(self, result: QPResult) -> QPSolution:
        """The QPSolution of a solver's result: w and the slacks from alpha (the dual
        solvers) or as the solver gave them (cvxopt)."""
        if result.w is None:
            return self._dual_solution(result.alpha, result.form)
        active_groups = _distinct(self.groups)
        slack = np.zeros(len(self.group_bounds))
        slack[active_groups] = result.slack
        return self._solution(result.w, result.alpha, slack, result.form, result.status,
                              result.ridge)

    def _solution(self, w, alpha, slack, form, status, ridge, gram_alpha=None):
        """The QPSolution of (w, alpha, slack); D(alpha) = Delta.alpha - 1/2 alpha^T K alpha
        from the Gram matrix when it is formed (O(K^2); ``gram_alpha``: K alpha when known),
        else from |sum_k alpha_k a_k[R]|^2 (cvxopt's primal form: its w need not be exactly
        sum_k alpha_k a_k)."""
        reg = self.regularized
        if self._gram_size == len(self):
            k = len(self)
            if gram_alpha is None:  # a product then a dot: numpy's 3-operand einsum is
                # a scalar loop, 3x slower at K = 500
                gram_alpha = np.einsum("ij,j->i", self._gram_buffer[:k, :k], alpha)
            quadratic = alpha @ gram_alpha
        else:
            w_reg = alpha @ self._regularized_rows()
            quadratic = w_reg @ w_reg
        dual = float(alpha @ self.losses - 0.5 * quadratic)
        primal = float(0.5 * np.einsum("i,i", w[reg], w[reg]) + self.group_bounds @ slack)
        return QPSolution(w=w, alpha=alpha, slack=slack, dual_objective=dual,
                          primal_objective=primal, form=form, status=status, ridge=ridge)


def _distinct(values):
    """The distinct values of an array of non-negative integers (group numbers), sorted: what
    ``np.unique(values)`` gives, without the masked-array check by which np.unique imports
    numpy.ma (about 6 ms of a command's start-up)."""
    return np.flatnonzero(np.bincount(values)) if len(values) else np.zeros(0, dtype=np.intp)


