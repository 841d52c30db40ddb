"""The working-set QP of the cutting-plane learners: warm-started SMO and active-set
methods, and cvxopt.

Constraints k = 1..K, each attached to a slack group g(k) with bound C_g, read
w.a_k >= Delta_k - xi_{g(k)}.  The restricted primal problem is

    min_{w, xi >= 0}  1/2 |w_R|^2 + sum_g C_g xi_g   s.t.  w.a_k >= Delta_k - xi_{g(k)}   (P)

(w_R: the regularised components of w; the others, such as a bias, are free), and its dual

    max_{alpha >= 0}  Delta.alpha - 1/2 alpha^T K alpha
    s.t.  sum_{k in g} alpha_k <= C_g  for every g,   sum_k alpha_k a_k[U] = 0,           (D)

with K_kl = a_k[R].a_l[R] and w_R = sum_k alpha_k a_k[R].  n-slack has one group per example
(C_g = C/n), 1-slack a single group (C_g = C).  Solvers, by the shape of the problem
(solver "smo", the default; no free component in play), each warm-started from the
previous solve's multipliers (a cutting-plane iteration adds one or a few constraints, so
the old alpha is nearly optimal; an interior-point solve would cost O(K^3) per step from
scratch) and stopped at the duality gap it is given (the learners pass 1% of C * epsilon)
or cvxopt's targets:

- few groups (1-slack; at most _ACTIVE_SET_MAX_GROUPS) and a KKT system of at most
  _ACTIVE_SET_MAX_SYSTEM rows: (D) by the active-set method of svmstruct_api._active_set,
  which moves between nonsingular faces (at most rank(G) + #groups free multipliers) by
  Newton steps and exchanges, keeping the inverse of the face's system by O(face^2)
  updates, from one solve to the next (the face of the last solve is where the next one
  starts).  Where K > dim(w) + #groups, G is rank-deficient: SMO crawls along its null
  space, and cvxopt from scratch took most of the training time.  SMO takes over when the
  active set runs out of steps or cannot move (see _methods).
- K <= dim(w) + #groups: (D) by the SMO of svmstruct_api._simplex_qp.  SMO rounds
  alternate with a Newton step on the face its support spans; it hands over to cvxopt
  when its step budget runs out, when a round cannot move (rounding noise in an
  ill-conditioned Gram matrix) or when the gap stops decreasing.
- otherwise (n-slack's many groups), and for solver "cvxopt", by cvxopt, in whichever
  form has fewer variables ((P): dim(w) + #groups, (D): K), the other form's solution
  read off cvxopt's multipliers.  When cvxopt refuses one form (a singular KKT system) the
  other is tried, and a solve that is not optimal is retried with a small ridge added to
  the quadratic term; if all of that fails, QPError is raised (an almost-converged last
  attempt is accepted and flagged instead, see QPSolution.status).  The primal form is
  only tried while its dense KKT system is small (dim(w) + #groups <=
  _MAX_PRIMAL_VARIABLES): with many features the dual is the form to solve.

Products over the constraint rows and the Gram matrix are formed with ``np.einsum`` (one
thread, no BLAS): a BLAS product wakes its thread pool, whose threads then spin beside the
single-threaded oracle and solvers.  On the shared 2-core machine, while it was busy, a fit
on the 5 10^4 x 10^5 sparse set at C = 100 took 4.4 s with OpenBLAS's threads and 1.0 s
with one (alternating runs); when it was quieter the two were equal
(benchmarks/results/solver_speed.md), and einsum's loops take about 1.6x BLAS's time for
these products, which the passes saved elsewhere make up for.

``solve(deadline=)`` stops between SMO rounds, between active-set steps and before each
cvxopt attempt once ``time.perf_counter()`` passes the deadline, raising QPTimeout (the
learners' max_time).
"""

import time
from dataclasses import dataclass

import numpy as np

from ._active_set import ActiveSetStuck, active_set_solve
from ._simplex_qp import smo_solve
from .options import QP_SOLVERS, QPError


class QPTimeout(Exception):
    """The deadline passed to WorkingSet.solve passed before the QP was solved."""


_SOLVER_OPTIONS = {"show_progress": False, "abstol": 1e-9, "reltol": 1e-9, "feastol": 1e-9,
                   "maxiters": 200}
_RIDGES = (0.0, 1e-10, 1e-8, 1e-6)  # relative to the largest diagonal entry
_ACCEPTABLE_RESIDUAL = 1e-6
#: SMO stops at a duality gap of _SMO_ABS_GAP + _SMO_REL_GAP * |D(alpha)| (cvxopt's targets)
_SMO_ABS_GAP = 1e-9
_SMO_REL_GAP = 1e-9
#: SMO's step budget before cvxopt takes over: this many steps per constraint, plus a floor
_SMO_STEPS_PER_CONSTRAINT = 1000
_SMO_MIN_STEPS = 10000
_SMO_ROUND = 20
#: SMO hands over to cvxopt after this many consecutive rounds without a smaller gap
_SMO_STALLED_ROUNDS = 3
#: the active-set method's step budget before cvxopt takes over
_ACTIVE_SET_STEPS_PER_CONSTRAINT = 5
_ACTIVE_SET_MIN_STEPS = 100
#: ... and its scope: at most this many groups, and a KKT system of at most this many rows
#: (its inverse, kept from solve to solve, is 18 MB at 1500)
_ACTIVE_SET_MAX_GROUPS = 8
_ACTIVE_SET_MAX_SYSTEM = 1500
#: ... and the support size up to which it is tried before SMO (_methods): all of its scope
#: since its face and the inverse of its system carry over from one solve to the next (on
#: the 10^4 x 2 10^4 sparse set at C = 1000 it took 138 s where SMO took 205 s, faces of
#: 500 included)
_ACTIVE_SET_FAST_FACE = 1500
#: the primal form's KKT system is dense in dim(w) + #groups variables: 4000 is 128 MB
_MAX_PRIMAL_VARIABLES = 4000


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
    #: "smo", "active-set", or cvxopt's "primal" or "dual"
    form: str
    #: "optimal", or "inaccurate" when only a near-optimal point was found (see module doc)
    status: str
    ridge: float


class WorkingSet:
    """Growing set of constraints with an incrementally extended Gram matrix.

    Rows live in buffers that double when full.  The Gram matrix is extended only when a
    solver of (D) asks for it (SMO, the active set, cvxopt's dual form), by the rows of the
    constraints added since it last did (K inner products each, not a recomputation): cvxopt's
    primal form, which n-slack's many groups use once K > dim(w) + #groups, needs the rows
    alone, so the K x K matrix -- most of n-slack's memory -- is never formed there.  The
    multipliers of the last solve are kept with their constraints: the next SMO solve
    starts from them.

    ``solver``: "smo" (default) solves (D) by the warm-started SMO of
    svmstruct_api._simplex_qp or the active-set method of svmstruct_api._active_set (module
    doc) when no free component is in play, and falls back to cvxopt when they have not
    reached their gap within their step budgets; "cvxopt" always uses cvxopt.

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

    def __init__(self, n_features, group_bounds, regularized=None, solver="smo", basis=None):
        if solver not in QP_SOLVERS:
            raise ValueError(f"solver must be one of {QP_SOLVERS}, got {solver!r}")
        if basis is not None and regularized is not None and not np.all(regularized):
            raise ValueError("constraints kept in a row basis need every component of w "
                             "regularised")
        self.n_features = n_features
        #: None (rows kept as dim(w)-long vectors) or the RowBasis B the rows are kept in
        #: (class doc)
        self.basis = basis
        #: B a_k of the constraints added since the Gram matrix was last extended (basis only)
        self._pending_images = []
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
        #: the final face of the last active-set solve, which the next one starts from:
        #: (its constraints' indices, -1 - g for group g's slack; the inverse of its KKT
        #: system; updates since that was formed; the groups in play), or None
        self._face = None
        self._allocate(16)

    def _allocate(self, capacity):
        """(Re)allocate the buffers with room for ``capacity`` constraints, keeping rows."""
        n = self._size
        vectors = np.empty((capacity, self.row_length))
        losses = np.empty(capacity)
        groups = np.empty(capacity, dtype=np.intp)
        alpha = np.zeros(capacity)
        if n:
            vectors[:n] = self._vector_buffer[:n]
            losses[:n] = self._loss_buffer[:n]
            groups[:n] = self._group_buffer[:n]
            alpha[:n] = self._alpha_buffer[:n]
        self._vector_buffer = vectors
        self._loss_buffer, self._group_buffer, self._alpha_buffer = losses, groups, alpha

    def __len__(self):
        return self._size

    @property
    def row_length(self):
        """The length of a stored row: dim(w), or the basis's number of coefficients."""
        return self.n_features if self.basis is None else self.basis.n_coefficients

    @property
    def vectors(self):
        """a_k of every constraint as dim(w)-long rows (formed from their coefficients, row
        by row, when they are kept in a basis: only cvxopt's fallback asks for them)."""
        if self.basis is None:
            return self._vector_buffer[:self._size]
        return np.array([self.basis.backward(u) for u in self._vector_buffer[:self._size]]
                        ).reshape(self._size, self.n_features)

    @property
    def losses(self):
        return self._loss_buffer[:self._size]

    @property
    def groups(self):
        return self._group_buffer[:self._size]

    @property
    def alpha(self):
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
            rows = np.einsum("kj,ij->ki", images, self._vector_buffer[:end])
            self._pending_images = []
        elif self._all_regularized:
            rows = np.einsum("kj,ij->ki", new, self._vector_buffer[:end])
        else:
            reg = self.regularized
            rows = np.einsum("kj,ij->ki", new[:, reg],
                             self._vector_buffer[:end, reg])
        self._gram_buffer[g:end, :end] = rows
        self._gram_buffer[:g, g:end] = rows[:, :g].T
        self._gram_size = end

    def _regularized_rows(self):
        """a_k[R] of every constraint: the rows themselves when every component is
        regularised (no copy: a boolean column mask would copy the K x dim(w) rows)."""
        return self.vectors if self._all_regularized else self.vectors[:, self.regularized]

    def _squared_norms(self):
        """|a_k[R]|^2 of every constraint (the Gram matrix's diagonal, without forming it
        where the rows are dim(w)-long)."""
        if self.basis is not None:
            return np.diagonal(self._gram).copy()
        rows = self._regularized_rows()
        return np.einsum("ij,ij->i", rows, rows)

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

    def add(self, groups, vectors, losses, coefficients=None):
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
        self._alpha_buffer[n:end] = 0.0
        self._size = end

    def remove(self, keep):
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
        self._alpha_buffer[:m] = self._alpha_buffer[order]
        self._size = m
        if self._face is not None:
            new_index = np.full(len(keep), -1)
            new_index[order] = np.arange(m)
            ids = self._face[0]
            moved = np.where(ids >= 0, new_index[np.maximum(ids, 0)], ids)
            self._face = None if np.any((ids >= 0) & (moved < 0)) else \
                (moved, *self._face[1:])
        solved, self._solved = self._solved, None
        if solved is not None and solved[2] is not None:
            margins = solved[2][order]
            self._solved = (solved[0], self.slacks(solved[0], margins), margins)
        return order

    def aggregate(self, chosen):
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
        self._face = None  # the active set's factors were of the old constraints
        if self._solved is not None and self._solved[2] is not None:
            margins = self._solved[2]
            margins[first] = lam @ margins[chosen]
        keep = np.ones(k, dtype=bool)
        keep[chosen[1:]] = False
        return self.remove(keep)

    def rescale_bounds(self, group_bounds, factor):
        """Set the groups' bounds C_g to ``group_bounds``, each ``factor`` times the old one
        (a change of C), and scale the multipliers by ``factor``: they stay feasible, and an
        optimum's active set is the natural start for the new QP."""
        self.group_bounds = np.asarray(group_bounds, dtype=float)
        self._alpha_buffer[:self._size] *= factor
        self._solved = None

    def slacks(self, w, margins=None):
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

    def margins(self, w):
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
        return self._solution(w, alpha, slack, form, "optimal", 0.0)

    def solve(self, gap_tolerance=None, deadline=None):
        """Solve the restricted QP; raise QPError when neither SMO nor cvxopt can.

        ``gap_tolerance``: the duality gap SMO may stop at (default: cvxopt's targets,
        1e-9 absolute plus 1e-9 relative).  The cutting-plane learners pass a fraction of
        C * epsilon: a QP gap delta adds delta to the optimality bound P(w) <= P* + C eps.
        ``deadline``: a ``time.perf_counter()`` value; QPTimeout is raised once it passes
        (checked between SMO rounds, every active-set step and before each cvxopt attempt).
        """
        self._solved = None
        if len(self) == 0:
            return QPSolution(w=np.zeros(self.n_features), alpha=np.empty(0),
                              slack=np.zeros(len(self.group_bounds)), dual_objective=0.0,
                              primal_objective=0.0, form="none", status="optimal", ridge=0.0)
        solution = None
        if self.solver == "smo" and not self._free_components_in_use():
            for method in self._methods():
                solution = method(gap_tolerance, deadline)
                if solution is not None:
                    break
        if solution is None:
            solution = self._solve_cvxopt(deadline)
        self._alpha_buffer[:len(self)] = solution.alpha
        return solution

    def _methods(self):
        """The solvers of (D) to try in turn before cvxopt, by their cost on this working
        set: the active set first where its KKT systems stay small (few groups, and a warm
        start whose support has at most _ACTIVE_SET_FAST_FACE multipliers -- SMO crawls on
        the ill-conditioned Gram matrices of near-parallel cuts, where the active set takes
        a few exact steps of O(face^2) each, from the last solve's face), or where
        K > dim(w) + #groups (a rank-deficient G); SMO first otherwise; each the other's
        fallback."""
        smo = [self._solve_smo] if self._dual_is_smaller() else []
        if not self._active_set_is_small():
            return smo
        support = int(np.count_nonzero(self.alpha))
        if not smo or support + len(self.group_bounds) <= _ACTIVE_SET_FAST_FACE:
            return [self._solve_active_set, *smo]
        return [*smo, self._solve_active_set]

    def _dual_is_smaller(self):
        """(D) has K variables, (P) dim(w) + #groups: with few features and many constraints,
        G is rank-deficient, SMO crawls along its null space and cvxopt's small primal wins."""
        return len(self) <= self.n_features + len(_distinct(self.groups))

    def _active_set_is_small(self):
        """The active-set method keeps the inverse of a KKT system of up to
        rank(G) + 2 #groups rows: cheap for few groups (1-slack), not for n-slack's hundreds
        of groups, where cvxopt's primal is faster."""
        n_groups = len(_distinct(self.groups))
        face = min(len(self), int(self.regularized.sum()) + n_groups)
        return n_groups <= _ACTIVE_SET_MAX_GROUPS and face + n_groups <= _ACTIVE_SET_MAX_SYSTEM

    def _free_components_in_use(self):
        return not self._all_regularized and \
            bool(np.any(self.vectors[:, ~self.regularized] != 0))

    def _solve_smo(self, gap_tolerance, deadline):
        """(D) by warm-started SMO; None when the step budget ran out before the gap closed,
        or SMO stopped making progress (no step possible, or no smaller gap for
        _SMO_STALLED_ROUNDS rounds): cvxopt takes over."""
        k = len(self)
        abs_gap, rel_gap = (_SMO_ABS_GAP, _SMO_REL_GAP) if gap_tolerance is None else \
            (gap_tolerance, 0.0)
        self._extend_gram()  # the solvers read the buffer itself
        alpha = self.alpha.copy()
        # only the groups that hold constraints: their bounds, renumbered 0..G-1
        active_groups, group_index = np.unique(self.groups, return_inverse=True)
        group_index = group_index.astype(np.intp)
        bounds = self.group_bounds[active_groups]
        budget = _SMO_STEPS_PER_CONSTRAINT * k + _SMO_MIN_STEPS
        best_gap, stalled = np.inf, 0
        while True:
            steps, gap, objective = smo_solve(
                self._gram_buffer, self.losses, group_index, bounds, alpha, abs_gap, rel_gap,
                min(budget, _SMO_ROUND * k + 1000))
            budget -= steps
            if gap <= abs_gap + rel_gap * abs(objective):
                break
            stalled = 0 if gap < best_gap else stalled + 1
            best_gap = min(best_gap, gap)
            if budget <= 0 or steps == 0 or not np.isfinite(gap) or \
                    stalled >= _SMO_STALLED_ROUNDS:
                return None
            _check_deadline(deadline)
            self._newton_polish(alpha, group_index, bounds)
        return self._dual_solution(alpha, "smo")

    def _solve_active_set(self, gap_tolerance, deadline):
        """(D) by the warm-started active-set method of svmstruct_api._active_set; None when
        it gave up (step budget, or no step possible: cvxopt takes over)."""
        abs_gap, rel_gap = (_SMO_ABS_GAP, _SMO_REL_GAP) if gap_tolerance is None else \
            (gap_tolerance, 0.0)
        self._extend_gram()  # the solvers read the buffer itself
        alpha = self.alpha.copy()
        active_groups, group_index = np.unique(self.groups, return_inverse=True)
        k = len(self)
        try:
            *_, face = active_set_solve(
                self._gram_buffer, self.losses, group_index.astype(np.intp),
                self.group_bounds[active_groups], alpha, abs_gap, rel_gap,
                int(self.regularized.sum()) + len(active_groups),
                _ACTIVE_SET_STEPS_PER_CONSTRAINT * k + _ACTIVE_SET_MIN_STEPS,
                None if deadline is None else lambda: _check_deadline(deadline),
                self._last_face(active_groups))
        except ActiveSetStuck:
            return None
        variables, inverse, updates = face
        # a group's slack is variable K + g of this solve: kept as -1 - g, which does not
        # change as constraints come and go
        self._face = (np.where(variables < k, variables, k - 1 - variables), inverse, updates,
                      active_groups)
        return self._dual_solution(alpha, "active-set")

    def _last_face(self, active_groups):
        """The final face of the last active-set solve in this solve's variables (None when
        there is none, or the groups in play have changed)."""
        if self._face is None or not np.array_equal(self._face[3], active_groups):
            return None
        ids, inverse, updates, _ = self._face
        return np.where(ids >= 0, ids, len(self) - 1 - ids).astype(np.intp), inverse, updates

    def _newton_polish(self, alpha, group_index, bounds):
        """One Newton step on the face of (D) that alpha's support spans, cut at alpha >= 0."""
        idx = np.flatnonzero(alpha > 0)
        if len(idx) == 0:
            return
        gram = self._gram
        grad = self.losses - np.einsum("ij,j->i", gram, alpha)
        mass = np.bincount(group_index, alpha, len(bounds))
        groups = group_index[idx]
        tight = _distinct(groups[bounds[groups] - mass[groups] <= 1e-9 * bounds[groups]])
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

    def _solve_cvxopt(self, deadline=None):
        """(P) or (D), whichever is smaller, by cvxopt; the other form and ridges on refusal
        (the primal only while it is small: _MAX_PRIMAL_VARIABLES)."""
        active_groups = _distinct(self.groups)
        primal_first = not self._dual_is_smaller()
        forms = (self._solve_primal, self._solve_dual) if primal_first else \
            (self._solve_dual, self._solve_primal)
        if self.n_features + len(active_groups) > _MAX_PRIMAL_VARIABLES:
            forms = (self._solve_dual,)
        scale = max(float(np.max(self._squared_norms(), initial=0.0)), 1.0)
        last_error = "no attempt"
        fallback = None
        for ridge in _RIDGES:
            for form in forms:  # the smaller form first; the other when cvxopt refuses it
                _check_deadline(deadline)
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
        return np.searchsorted(active_groups, self.groups)

    def _status(self, sol):
        if sol["status"] == "optimal":
            return "optimal"
        residual = max(sol.get("primal infeasibility") or np.inf,
                       sol.get("dual infeasibility") or np.inf,
                       abs(sol.get("relative gap") or np.inf))
        return "inaccurate" if residual < _ACCEPTABLE_RESIDUAL else None

    def _solve_dual(self, active_groups, ridge):
        from cvxopt import matrix, solvers  # imported when first needed: rarely used

        k = len(self)
        n_groups = len(active_groups)
        membership = np.zeros((n_groups, k))
        membership[self._group_rows(active_groups), np.arange(k)] = 1.0
        quadratic = self._gram + ridge * np.eye(k)
        inequalities = np.vstack([-np.eye(k), membership])
        bounds = np.concatenate([np.zeros(k), self.group_bounds[active_groups]])
        # free components that no constraint touches add the void equation 0 = 0: leave them
        # out (they stay 0 in w); cvxopt needs the equality matrix to have full row rank
        free = np.zeros(self.n_features, dtype=bool) if self._all_regularized else \
            ~self.regularized & np.any(self.vectors != 0, axis=0)
        equality = {}
        if free.any():
            equality = {"A": matrix(self.vectors[:, free].T.copy()),
                        "b": matrix(np.zeros(free.sum()))}
        sol = solvers.qp(matrix(quadratic), matrix(-self.losses), matrix(inequalities),
                         matrix(bounds), options=_SOLVER_OPTIONS, **equality)
        status = self._status(sol)
        if status is None:
            return None
        alpha = np.maximum(np.array(sol["x"]).ravel(), 0.0)
        z = np.array(sol["z"]).ravel()
        w = self._weights(alpha)
        if free.any():
            w[free] = np.array(sol["y"]).ravel()
        slack = np.zeros(len(self.group_bounds))
        slack[active_groups] = np.maximum(z[k:], 0.0)
        return self._solution(w, alpha, slack, "dual", status, ridge)

    def _solve_primal(self, active_groups, ridge):
        from cvxopt import matrix, solvers, spmatrix

        d, k = self.n_features, len(self)
        n_groups = len(active_groups)
        n_vars = d + n_groups
        diag = np.concatenate([self.regularized.astype(float), np.zeros(n_groups)])
        diag[:d] += ridge
        linear = np.concatenate([np.zeros(d), self.group_bounds[active_groups]])
        margin_rows = np.zeros((k, n_vars))
        margin_rows[:, :d] = -self.vectors
        margin_rows[np.arange(k), d + self._group_rows(active_groups)] = -1.0
        slack_rows = np.zeros((n_groups, n_vars))
        slack_rows[np.arange(n_groups), d + np.arange(n_groups)] = -1.0
        sol = solvers.qp(spmatrix(diag, range(n_vars), range(n_vars)), matrix(linear),
                         matrix(np.vstack([margin_rows, slack_rows])),
                         matrix(np.concatenate([-self.losses, np.zeros(n_groups)])),
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
        """The QPSolution of (w, alpha, slack); D(alpha) = Delta.alpha - 1/2 alpha^T K alpha
        from the Gram matrix when it is formed (O(K^2)), else from |sum_k alpha_k a_k[R]|^2
        (cvxopt's primal form: its w need not be exactly sum_k alpha_k a_k)."""
        reg = self.regularized
        if self._gram_size == len(self):
            k = len(self)
            quadratic = np.einsum("i,ij,j", alpha, self._gram_buffer[:k, :k], alpha)
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


def _check_deadline(deadline):
    if deadline is not None and time.perf_counter() > deadline:
        raise QPTimeout("the time limit passed while solving the working-set QP")
