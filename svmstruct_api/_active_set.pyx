# cython: language_level=3
"""Warm-started active-set method for the working-set dual with few slack groups (1-slack):
exact steps whose number does not grow with C, also where the working set has more
constraints than its Gram matrix has rank (few features, large C: where SMO crawls).

The problem is svmstruct_api._simplex_qp's (D) without free components,

    max_{alpha >= 0}  f(alpha) = L.alpha - 1/2 alpha^T G alpha
    s.t.  sum_{k in g} alpha_k <= C_g  for every group g,

with G = A A^T of rank at most dim(w).  As in the SMO, each group gets a slack variable
s_g = C_g - sum_{k in g} alpha_k >= 0 (zero gradient, zero Gram row), so every group's
feasible set is a simplex; variables 0..K-1 are the multipliers, K..K+G-1 the slacks.

The method is the primal active-set method for convex QPs (Nocedal & Wright, Numerical
Optimization, 2nd ed., section 16.5) on these simplices, kept on *nonsingular faces* as in
Wolfe's minimum-norm-point algorithm (Wolfe 1976).  A face is a set F of variables allowed to
be positive (at least one per group; the others are 0); the optimum on it solves

    [ H_F  E_F^T ] [p ]   [g_F]
    [ E_F   0    ] [nu] = [ 0 ],     g = L - G alpha (0 for a slack),

H_F the Gram matrix of F's constraint vectors (0 for slacks), E_F group membership, p the
step to the face optimum and nu_g the common gradient of group g's free variables there.
The system is nonsingular exactly when the points (a_k, e_g(k)) of F are linearly
independent, so |F| <= rank(G) + #groups.  One step is one of:

- Newton: move along p (its group sums made exactly 0) to the face optimum, cut where a
  free variable reaches 0 (that variable leaves F; a subset of an independent set is
  independent).
- At a face optimum (p = 0): stop when the duality gap of (D),
  sum_g C_g max(0, max_{k in g} g_k) - alpha.g, is at most the tolerance; otherwise the
  variable j of largest weighted violation C_g (g_j - nu_g) > 0 enters.  [q; eta] =
  -KKT_F^{-1} [G_Fj; e_g] gives the Schur complement s = G_jj + [G_Fj; e_g].[q; eta] of the
  bordered system: s != 0, F + j is nonsingular; s = 0 (a_j depends on F's points: a
  duplicate constraint, or F spans the rank already), the direction (q, 1) has zero
  curvature and ascent g_j - nu_g > 0: x moves along it until a variable of F reaches 0,
  and j takes its place (Wolfe's exchange).  When j has entered by bordering, the Newton
  step of F + j is (g_j - nu_g) times the primal part of the new inverse's last column
  (the old face's optimum leaves a residual only in j's row), so the step that follows an
  entry costs O(|F|), not a solve.  So does the step after a Newton step p that variable i
  blocks at t < 1: the step of F - i is (1 - t)(p - (p_i / u_i) u), u the primal part of
  the inverse's column of i read before the deletion.  Both are taken only while their
  ascent along the gradient is their curvature (as at an exact step) to a set accuracy;
  else the face's Newton step is solved for.

Every step raises f or shrinks F, so the method ends; a step budget bounds it anyway
(cycling under rounding) and the caller falls back to cvxopt when it reports failure.
Warm start: the previous solve's multipliers (new constraints at 0) and its final face with
the inverse of its KKT system (``face``: the caller keeps it; _Solver says how the inverse is
kept), used when it holds every positive multiplier.  Otherwise the support is normally the
last face (nonsingular); when it is not (after SMO or cvxopt, whose supports
need not be independent: the condition estimate says so), the face is rebuilt from one
variable per group by the same entering step, a dependent variable being exchanged along
the zero-curvature direction in whichever sense does not decrease f.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport INFINITY, fabs


cdef extern from "_vector_ops.h" nogil:
    void _add_rows "svmstruct_add_rows"(Py_ssize_t n_rows, const double *coef,
                                        const double *rows, Py_ssize_t stride, Py_ssize_t n,
                                        double *out, double sign)
    void _add_rank_one "svmstruct_add_rank_one"(Py_ssize_t n_rows, const double *u,
                                                Py_ssize_t u_step, const double *v, double *a,
                                                Py_ssize_t stride, Py_ssize_t n, double sign)


cdef inline void add_rows(Py_ssize_t n_rows, const double *coef, const double *rows,
                          Py_ssize_t stride, Py_ssize_t n, double *out) noexcept nogil:
    """out[:n] += coef[c] rows[c] for c in turn (_vector_ops.h)."""
    _add_rows(n_rows, coef, rows, stride, n, out, 1.0)


cdef inline void subtract_rows(Py_ssize_t n_rows, const double *coef, const double *rows,
                               Py_ssize_t stride, Py_ssize_t n, double *out) noexcept nogil:
    """out[:n] -= coef[c] rows[c] for c in turn (_vector_ops.h)."""
    _add_rows(n_rows, coef, rows, stride, n, out, -1.0)


cdef inline void add_rank_one(Py_ssize_t n_rows, const double *u, Py_ssize_t u_step,
                              const double *v, double *a, Py_ssize_t stride,
                              Py_ssize_t n) noexcept nogil:
    """a[r, :n] += u[r u_step] v for every row r < n_rows (_vector_ops.h)."""
    _add_rank_one(n_rows, u, u_step, v, a, stride, n, 1.0)


cdef inline void subtract_rank_one(Py_ssize_t n_rows, const double *u, Py_ssize_t u_step,
                                   const double *v, double *a, Py_ssize_t stride,
                                   Py_ssize_t n) noexcept nogil:
    """a[r, :n] -= u[r u_step] v for every row r < n_rows (_vector_ops.h)."""
    _add_rank_one(n_rows, u, u_step, v, a, stride, n, -1.0)

cnp.import_array()

ctypedef cnp.intp_t intp

#: a Schur complement above this (relative to its terms) is nonzero without refinement
cdef double _CLEAR = 1e-6
#: a Schur complement or reciprocal condition number below this counts as singular
cdef double _SINGULAR = 1e-10
#: multipliers below this fraction of their group's bound are rounding (cvxopt's interior
#: point leaves every inactive multiplier slightly positive): they start at 0
cdef double _NEGLIGIBLE = 1e-10
#: Newton steps on the exact gradient when no variable is violated but the gap is open
cdef Py_ssize_t _REFINEMENTS = 3
#: face changes made by updating the inverse (bordering, deletion) before it is formed afresh:
#: this many, or _REFRESH_PER_VARIABLE times the face's size if more (forming it costs
#: O(|F|^3), an update O(|F|^2)).  Four times rather than once: on issue 33's ltr_like set
#: at C = 100 and 1000 the same steps and objective with a quarter of the refactorings, and
#: 17-20% less of the QP's time in alternating runs (with the step after an entry:
#: benchmarks/results/solver_speed_entering_step_*.md)
cdef Py_ssize_t _REFRESH = 100
cdef Py_ssize_t _REFRESH_PER_VARIABLE = 4
#: the step after an entry is formed from the last face's optimum (``entering_step``) only
#: while its ascent along the exact gradient is its curvature to this relative accuracy (the
#: optimum's residual, left by unrefined steps on ill-conditioned faces, is then negligible);
#: otherwise the face's Newton step is solved for.  With the step always formed, OHSUMED
#: Fold1 at C = 1000 handed more QPs to cvxopt and its QP took 0.166 s against main's
#: 0.040 s; at 1e-5, 0.060 s against 0.047 s (solver_speed_entering_step_OHSUMED.md)
cdef double _ENTERED_ASCENT = 1e-5
#: the same check for the step that follows a blocked one (``pending_step``), looser: it is
#: formed from the last step, not from an optimum, and a step it lets through is checked
#: again at the face optimum it reaches.  On issue 33's ltr_like:0 at C = 1000 it takes 4,578
#: of 4,743 such steps at 1e-3 and 3,442 at 1e-5
cdef double _FOLLOWED_ASCENT = 1e-3


# -- dense LU of the face's KKT system (row-major, partial pivoting) ----------------------
# The systems have a few hundred rows at most; plain loops keep LAPACK (scipy.linalg, a
# third of a second to import) out of every run.

cdef bint _lu_factor(double *a, Py_ssize_t n, intp *piv) noexcept nogil:
    """a <- its LU factors with row pivoting (P a = L U, unit L below the diagonal);
    False when a pivot is exactly 0 (a singular matrix)."""
    cdef Py_ssize_t i, j, k, p
    cdef double big, t
    for k in range(n):
        p, big = k, fabs(a[k * n + k])
        for i in range(k + 1, n):
            if fabs(a[i * n + k]) > big:
                p, big = i, fabs(a[i * n + k])
        piv[k] = p
        if big == 0.0:
            return False
        if p != k:
            for j in range(n):
                t = a[k * n + j]
                a[k * n + j] = a[p * n + j]
                a[p * n + j] = t
        for i in range(k + 1, n):  # the factors, into column k ...
            a[i * n + k] = a[i * n + k] / a[k * n + k]
        if k + 1 < n:  # ... then the trailing rows less factor times row k
            subtract_rank_one(n - k - 1, &a[(k + 1) * n + k], n, &a[k * n + k + 1],
                              &a[(k + 1) * n + k + 1], n, n - k - 1)
    return True


cdef void _lu_solve(const double *lu, Py_ssize_t n, const intp *piv, double *b) noexcept nogil:
    """b <- A^{-1} b from _lu_factor's factors of A."""
    cdef Py_ssize_t i, j
    cdef double t
    for i in range(n):
        if piv[i] != i:
            t = b[i]
            b[i] = b[piv[i]]
            b[piv[i]] = t
    for i in range(n):
        t = b[i]
        for j in range(i):
            t -= lu[i * n + j] * b[j]
        b[i] = t
    for i in range(n - 1, -1, -1):
        t = b[i]
        for j in range(i + 1, n):
            t -= lu[i * n + j] * b[j]
        b[i] = t / lu[i * n + i]


cdef void _lu_inverse(const double *lu, Py_ssize_t n, const intp *piv, double *out,
                      Py_ssize_t stride) noexcept nogil:
    """out (row stride ``stride``) <- A^{-1} = U^{-1} L^{-1} P from _lu_factor's factors of A,
    all n columns at once: the substitutions subtract whole rows of the result (contiguous,
    independent updates) instead of solving column by column."""
    cdef Py_ssize_t i, c
    cdef double t, factor
    cdef double *row
    for i in range(n):
        for c in range(n):
            out[i * stride + c] = 1.0 if i == c else 0.0
    for i in range(n):  # P: the row exchanges in the order _lu_factor made them
        if piv[i] != i:
            for c in range(n):
                t = out[i * stride + c]
                out[i * stride + c] = out[piv[i] * stride + c]
                out[piv[i] * stride + c] = t
    for i in range(n):  # L^{-1}: unit lower triangle
        subtract_rows(i, &lu[i * n], out, stride, n, &out[i * stride])
    for i in range(n - 1, -1, -1):  # U^{-1}
        row = &out[i * stride]
        subtract_rows(n - i - 1, &lu[i * n + i + 1], &out[(i + 1) * stride], stride, n, row)
        factor = 1.0 / lu[i * n + i]
        for c in range(n):
            row[c] *= factor


cdef double _symmetric_rcond(const double *lu, Py_ssize_t n, const intp *piv, double anorm,
                             double *work) noexcept nogil:
    """1 / (|A|_1 |A^{-1}|_1) for a symmetric A, |A^{-1}|_1 estimated by Hager's method
    (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., Alg. 15.1: what
    LAPACK's dgecon estimates), A^{-T} = A^{-1}; 0 when the estimate is not finite.
    ``work`` holds 3n doubles."""
    cdef double *x = work
    cdef double *y = &work[n]
    cdef double *z = &work[2 * n]
    cdef double estimate = 0.0, norm, dot, best
    cdef Py_ssize_t i, j, it
    if anorm == 0.0:
        return 0.0
    for i in range(n):
        x[i] = 1.0 / n
    for it in range(5):
        for i in range(n):
            y[i] = x[i]
        _lu_solve(lu, n, piv, y)  # y = A^{-1} x
        norm = 0.0
        for i in range(n):
            norm += fabs(y[i])
        if it > 0 and norm <= estimate:
            break
        estimate = norm
        for i in range(n):
            z[i] = 1.0 if y[i] >= 0.0 else -1.0
        _lu_solve(lu, n, piv, z)  # z = A^{-T} sign(y)
        j, best, dot = 0, -1.0, 0.0
        for i in range(n):
            dot += z[i] * x[i]
            if fabs(z[i]) > best:
                j, best = i, fabs(z[i])
        if best <= dot:
            break
        for i in range(n):
            x[i] = 0.0
        x[j] = 1.0
    if not (estimate < INFINITY) or estimate == 0.0:
        return 0.0
    return 1.0 / (anorm * estimate)


class ActiveSetStuck(Exception):
    """No step is possible although the gap is open (rounding): cvxopt takes over."""


cdef class _Solver:
    """The state of one solve: x (multipliers, then slacks), the gradient, the face F and
    the inverse of its KKT system.

    The inverse is kept explicitly, ``inv`` (row stride ``stride``), its rows and columns
    ordered groups first (0..G-1), then F's variables in face order (G + i for face[i]), and
    updated in O(|F|^2) as F changes: a variable enters by bordering (its Schur complement,
    which the entering step computes anyway, must be nonzero), one leaves by deleting its
    row and column from the inverse (the inverse of a principal submatrix).  It is formed
    afresh (LU with partial pivoting, then F's columns solved for: O(|F|^3)) at the start of
    a solve that has no usable face from the last one, after max(_REFRESH,
    _REFRESH_PER_VARIABLE |F|) updates (rounding accumulates) and when an update's pivot
    is too small to trust."""
    cdef const double[:, ::1] gram
    cdef const double[::1] losses, bounds
    cdef const intp[::1] group
    cdef Py_ssize_t k, n_groups, capacity, m, stride, updates, hstride
    cdef double[::1] x, grad, system, lu, rhs, work, inv, column, product, hf
    cdef intp[::1] pivots
    cdef intp[::1] face, position
    #: the last line search ended at the optimum along its direction, unblocked
    cdef bint unblocked
    #: the Newton step of the face a blocked line search has just left (``follow_up``):
    #: its entries in face order and H_F times it; taken by ``pending_step``
    cdef double[::1] pending, pending_product
    cdef bint has_pending
    #: the last line search stopped because the variable that had just entered would leave
    #: at once (``withdraw``)
    cdef bint bounced

    def __init__(self, gram, losses, group, bounds, Py_ssize_t capacity):
        self.gram, self.losses, self.group, self.bounds = gram, losses, group, bounds
        self.k, self.n_groups = len(losses), len(bounds)
        n = self.k + self.n_groups
        self.capacity = min(capacity, n)
        size = self.capacity + self.n_groups
        self.stride = size
        self.x = np.zeros(n)
        self.grad = np.zeros(n)  # the slacks' entries stay 0
        self.inv = np.empty(size * size)
        self.system = self.lu = None  # allocated by the first fresh factorisation
        self.rhs = np.empty(size)
        self.column = np.empty(size)
        self.product = np.empty(size)
        self.work = np.empty(4 * size)
        self.pivots = np.empty(size, dtype=np.intp)
        self.face = np.empty(self.capacity + 1, dtype=np.intp)
        # H_F, the Gram block of the face's variables (0 for slacks), in face order: kept
        # by add / move_last_to as the face changes, so the products with it read
        # contiguous rows instead of gathering G's entries
        self.hstride = self.capacity + 1
        self.hf = np.empty(self.hstride * self.hstride)
        self.pending = np.empty(self.capacity + 1)
        self.pending_product = np.empty(self.capacity + 1)
        self.has_pending = False
        self.bounced = False
        self.position = np.full(n, -1, dtype=np.intp)
        self.m = 0
        self.updates = 0

    cdef inline Py_ssize_t var_group(self, Py_ssize_t v) noexcept nogil:
        return self.group[v] if v < self.k else v - self.k

    cdef inline double hess(self, Py_ssize_t u, Py_ssize_t v) noexcept nogil:
        return self.gram[u, v] if u < self.k and v < self.k else 0.0

    cdef void exact_gradient(self) noexcept nogil:
        """g = L - G alpha over the multipliers, as L minus a sum of G's rows (G is
        symmetric): contiguous, independent updates instead of one long dependent sum per
        entry (vectorised: _vector_ops.h)."""
        cdef Py_ssize_t r
        for r in range(self.k):
            self.grad[r] = self.losses[r]
        if self.k > 0:
            subtract_rows(self.k, &self.x[0], &self.gram[0, 0], self.gram.shape[1], self.k,
                          &self.grad[0])

    cdef double fresh(self) except -1.0:
        """Form the face's KKT system, factor it and form its inverse afresh; return its
        reciprocal condition number (Hager's 1-norm estimate, as LAPACK's dgecon), 0 when
        it is exactly singular (the inverse is then not formed)."""
        cdef Py_ssize_t m = self.m, G = self.n_groups, n = self.m + self.n_groups, r, c
        cdef Py_ssize_t stride = self.stride
        cdef double anorm = 0.0, colsum, rcond
        if self.system is None:
            self.system = np.empty(stride * stride)
            self.lu = np.empty(stride * stride)
        for r in range(n * n):
            self.system[r] = 0.0
        for r in range(m):
            for c in range(m):
                self.system[(G + r) * n + G + c] = self.hess(self.face[r], self.face[c])
            c = self.var_group(self.face[r])
            self.system[(G + r) * n + c] = 1.0
            self.system[c * n + G + r] = 1.0
        for c in range(n):
            colsum = 0.0
            for r in range(n):
                colsum += fabs(self.system[r * n + c])
            anorm = max(anorm, colsum)
        for r in range(n * n):
            self.lu[r] = self.system[r]
        if not _lu_factor(&self.lu[0], n, &self.pivots[0]):
            return 0.0
        rcond = _symmetric_rcond(&self.lu[0], n, &self.pivots[0], anorm, &self.work[0])
        if rcond <= 0.0:
            return 0.0
        _lu_inverse(&self.lu[0], n, &self.pivots[0], &self.inv[0], stride)
        self.updates = 0
        return rcond

    cdef void apply_inverse(self) noexcept nogil:
        """product <- inv column over the first G + m rows and columns, as a sum of inv's
        rows (the inverse of a symmetric system is symmetric; the updates keep it so up to
        rounding, which the refinement in ``solve`` absorbs): contiguous, independent
        updates instead of one long dependent sum per entry (vectorised: _vector_ops.h)."""
        cdef Py_ssize_t n = self.m + self.n_groups, r
        for r in range(n):
            self.product[r] = 0.0
        add_rows(n, &self.column[0], &self.inv[0], self.stride, n, &self.product[0])

    cdef void solve(self, bint refine=True) noexcept nogil:
        """rhs <- KKT_F^{-1} rhs (rhs ordered F's variables first, then the groups), with
        one step of iterative refinement: y = inv b, then y += inv (b - KKT_F y) (a product
        with an explicit inverse is not backward stable as an LU solve is; the refinement
        recovers that accuracy on the ill-conditioned faces of large C).  Without
        ``refine``, y alone (a third of the work)."""
        cdef Py_ssize_t m = self.m, G = self.n_groups, n = self.m + self.n_groups, i, j, g
        cdef double *b = &self.work[0]  # work holds 4 (m + G) doubles: b, y
        cdef double *y = &self.work[n]
        for g in range(G):
            b[g] = self.rhs[m + g]
        for i in range(m):
            b[G + i] = self.rhs[i]
        for i in range(n):
            self.column[i] = b[i]
        self.apply_inverse()
        for i in range(n):
            y[i] = self.product[i]
        if not refine:
            for i in range(m):
                self.rhs[i] = y[G + i]
            for g in range(G):
                self.rhs[m + g] = y[g]
            return
        # residual b - KKT_F y, into column
        for g in range(G):
            self.column[g] = b[g]
        for i in range(m):
            g = self.var_group(self.face[i])
            self.column[g] -= y[G + i]
            self.column[G + i] = b[G + i] - y[g]
        if m > 0:  # minus H_F y_F, a row of H_F at a time (H_F is symmetric)
            subtract_rows(m, &y[G], &self.hf[0], self.hstride, m, &self.column[G])
        self.apply_inverse()
        for i in range(m):
            self.rhs[i] = y[G + i] + self.product[G + i]
        for g in range(G):
            self.rhs[m + g] = y[g] + self.product[g]

    cdef bint border(self, Py_ssize_t v, const double *known) noexcept nogil:
        """Enter variable v into the face by bordering the inverse: with b its KKT column,
        u = inv b and Schur complement s = H_vv - b.u,
        inv <- [[inv + u u^T / s, -u / s], [-u^T / s, 1 / s]].  False (nothing changed) when
        s is zero up to rounding (v depends on F) or F is at its capacity.  ``known``: u
        already formed (``solve``'s first product with inv for this b), or NULL."""
        cdef Py_ssize_t m = self.m, G = self.n_groups, n = self.m + self.n_groups, r, i
        cdef Py_ssize_t stride = self.stride, gv = self.var_group(v)
        cdef double schur, scale, diag = self.hess(v, v)
        if m >= self.capacity:
            return False
        for r in range(G):
            self.column[r] = 1.0 if r == gv else 0.0
        for i in range(m):
            self.column[G + i] = self.hess(self.face[i], v)
        if known != NULL:
            for r in range(n):
                self.product[r] = known[r]
        else:
            self.apply_inverse()
        schur, scale = diag, fabs(diag)
        for r in range(n):
            schur -= self.column[r] * self.product[r]
            scale += fabs(self.column[r] * self.product[r])
        if not fabs(schur) > _SINGULAR * scale:
            return False
        for r in range(n):  # u / s, into column (read above, free now)
            self.column[r] = self.product[r] / schur
        add_rank_one(n, &self.column[0], 1, &self.product[0], &self.inv[0], stride, n)
        for r in range(n):
            self.inv[r * stride + n] = -self.column[r]
            self.inv[n * stride + r] = -self.column[r]
        self.inv[n * stride + n] = 1.0 / schur
        self.add(v)
        self.updates += 1
        return True

    cdef bint delete(self, Py_ssize_t i) noexcept nogil:
        """Remove face[i] from the face (its x is left as it is): its row and column move
        last (the last face variable takes its place), then
        inv <- inv[:-1, :-1] - inv[:-1, -1] inv[-1, :-1] / inv[-1, -1].  False when that pivot
        is too small to trust (the face is changed all the same: form the inverse afresh)."""
        cdef Py_ssize_t G = self.n_groups, stride = self.stride, n = self.m + self.n_groups
        cdef Py_ssize_t r = G + i, last = n - 1, a, b
        cdef double t, pivot, scale = 0.0
        if r != last:
            for a in range(n):
                t = self.inv[a * stride + r]
                self.inv[a * stride + r] = self.inv[a * stride + last]
                self.inv[a * stride + last] = t
            for b in range(n):
                t = self.inv[r * stride + b]
                self.inv[r * stride + b] = self.inv[last * stride + b]
                self.inv[last * stride + b] = t
        self.move_last_to(i)
        self.updates += 1
        pivot = self.inv[last * stride + last]
        for a in range(last):
            scale = max(scale, fabs(self.inv[a * stride + last]))
        if not fabs(pivot) > _SINGULAR * scale * scale:
            return False
        for a in range(last):  # the factors, into column (scratch)
            self.column[a] = self.inv[a * stride + last] / pivot
        subtract_rank_one(last, &self.column[0], 1, &self.inv[last * stride], &self.inv[0],
                          stride, last)
        return True

    cdef void refresh(self) except *:
        """Form the inverse afresh once max(_REFRESH, _REFRESH_PER_VARIABLE |F|) updates
        have accumulated; ActiveSetStuck when the face's system is singular."""
        if self.updates > max(_REFRESH, _REFRESH_PER_VARIABLE * self.m) and self.fresh() <= 0.0:
            raise ActiveSetStuck

    cdef void load(self, const intp[::1] face, list record, Py_ssize_t updates) except *:
        """Take the face and the inverse of its KKT system from the last solve (``record``:
        what ``handover`` made).  Where the last solve's buffers have this solve's strides
        (the capacity rank(G) + #groups, reached after the first iterations) they are taken
        over as they are, the inverse and H_F with them, and the record is emptied: nothing
        may read it again (a solve that raises after this leaves it empty, and the next one
        forms its face afresh).  Otherwise the face's H_F is gathered and its inverse
        copied."""
        cdef Py_ssize_t i, r, c, n = face.shape[0] + self.n_groups
        cdef const double[:, :] inverse
        inverse_view, inverse_buffer, stride, hf_buffer, hstride = record
        self.m = 0
        if stride == self.stride and hstride == self.hstride:
            record.clear()
            self.inv, self.hf = inverse_buffer, hf_buffer
            for i in range(face.shape[0]):
                self.position[face[i]] = i
                self.face[i] = face[i]
            self.m = face.shape[0]
        else:
            inverse = inverse_view
            for i in range(face.shape[0]):
                self.add(face[i])
            for r in range(n):
                for c in range(n):
                    self.inv[r * self.stride + c] = inverse[r, c]
        self.updates = updates

    def face_state(self):
        """(face variables, the inverse of its KKT system, updates since it was formed)."""
        n = self.m + self.n_groups
        inverse = np.asarray(self.inv)[:n * self.stride].reshape(n, self.stride)[:, :n]
        return (np.array(self.face[:self.m]), np.array(inverse), self.updates)

    def handover(self):
        """(face variables, the record of the face's inverse and H_F for the next solve's
        ``load``, updates since the inverse was formed), nothing copied but the face: the
        record is [the inverse (a view of its buffer), the buffer, its stride, H_F's buffer,
        its stride]."""
        n = self.m + self.n_groups
        buffer = np.asarray(self.inv)
        inverse = buffer[:n * self.stride].reshape(n, self.stride)[:, :n]
        return (np.array(self.face[:self.m]),
                [inverse, buffer, self.stride, np.asarray(self.hf), self.hstride],
                self.updates)

    cdef void add(self, Py_ssize_t v) noexcept nogil:
        """Append variable v to the face (H_F grows by its row and column)."""
        cdef Py_ssize_t i, m = self.m, hs = self.hstride
        cdef double h
        for i in range(m):
            h = self.hess(self.face[i], v)
            self.hf[i * hs + m] = h
            self.hf[m * hs + i] = h
        self.hf[m * hs + m] = self.hess(v, v)
        self.position[v] = m
        self.face[m] = v
        self.m += 1

    cdef void move_last_to(self, Py_ssize_t i) noexcept nogil:
        """The face's last variable takes place i (whose variable leaves): face, position
        and H_F follow; the face shrinks by one."""
        cdef Py_ssize_t last = self.m - 1, j, hs = self.hstride, v = self.face[i], u
        cdef double h
        if i != last:
            u = self.face[last]
            for j in range(last):
                if j != i:
                    h = self.hf[last * hs + j]
                    self.hf[i * hs + j] = h
                    self.hf[j * hs + i] = h
            self.hf[i * hs + i] = self.hf[last * hs + last]
            self.face[i] = u
            self.position[u] = i
        self.position[v] = -1
        self.m -= 1

    cdef void drop_nonpositive(self) except *:
        """Remove the face's variables at x <= 0 (they are set to exactly 0), updating the
        inverse; formed afresh when an update cannot be trusted or ``refresh`` says so
        (ActiveSetStuck when singular)."""
        cdef Py_ssize_t i, v
        cdef bint sound = True
        for i in range(self.m - 1, -1, -1):  # delete() moves the last variable to i
            v = self.face[i]
            if not self.x[v] > 0.0:
                self.x[v] = 0.0
                sound = self.delete(i) and sound
        if not sound and self.fresh() <= 0.0:
            raise ActiveSetStuck
        self.refresh()

    cdef void move(self, double[::1] direction, Py_ssize_t m, double step,
                   Py_ssize_t blocking, bint face_only=False) noexcept nogil:
        """x_F += step direction (over the first m face entries), the gradient with it; the
        blocking entry (if >= 0) exactly at 0.  ``face_only``: only the face's gradient,
        from H_F direction in ``product`` (``curvature`` formed it: O(|F|) instead of
        O(K |F|)); the rest is stale until ``exact_gradient``, which every face optimum
        forms before anything outside the face is read."""
        cdef Py_ssize_t r, i, v
        cdef double d
        for i in range(m):
            v = self.face[i]
            d = step * direction[i]
            if face_only:
                if v < self.k:
                    self.grad[v] -= step * self.product[i]
                self.x[v] += d
                continue
            if d == 0.0:
                continue
            self.x[v] += d
            if v < self.k:
                for r in range(self.k):
                    self.grad[r] -= d * self.gram[v, r]
        if blocking >= 0:
            self.x[self.face[blocking]] = 0.0

    cdef Py_ssize_t blocking_step(self, double[::1] direction, Py_ssize_t m,
                                  double *limit) noexcept nogil:
        """The largest step keeping x_F + step direction >= 0, and the index in F of the
        variable that blocks it (-1: none)."""
        cdef Py_ssize_t i, blocking = -1
        cdef double ratio
        limit[0] = INFINITY
        for i in range(m):
            if direction[i] < 0.0:
                ratio = -self.x[self.face[i]] / direction[i]
                if ratio < limit[0]:
                    limit[0] = ratio
                    blocking = i
        return blocking

    cdef double gap(self, double *objective) noexcept nogil:
        """Duality gap of (D) at x from the exact gradient; *objective = f(alpha)."""
        cdef Py_ssize_t r, g
        cdef double weighted = 0.0, linear = 0.0, total = 0.0
        cdef double *up = &self.work[0]  # n_groups <= size: scratch
        for g in range(self.n_groups):
            up[g] = 0.0
        for r in range(self.k):
            g = self.group[r]
            if self.grad[r] > up[g]:
                up[g] = self.grad[r]
            weighted += self.x[r] * self.grad[r]
            linear += self.x[r] * self.losses[r]
        for g in range(self.n_groups):
            total += self.bounds[g] * up[g]
        objective[0] = 0.5 * (linear + weighted)
        return total - weighted

    cdef void group_multipliers(self) noexcept nogil:
        """rhs[m + g] <- nu_g, the groups' part of KKT_F^{-1} [g_F; 0] (the inverse's group
        rows times the face's gradient: G |F| products, no refinement): what choosing the
        entering variable needs at a face optimum."""
        cdef Py_ssize_t g, i, G = self.n_groups, m = self.m
        cdef double acc
        cdef const double *row
        for g in range(G):
            row = &self.inv[g * self.stride + G]
            acc = 0.0
            for i in range(m):
                acc += row[i] * self.grad[self.face[i]]
            self.rhs[m + g] = acc

    cdef void newton(self, bint refine=True) noexcept nogil:
        """rhs <- [p; nu]: the step from x to the face optimum, the groups' gradient there
        (``refine``: see ``solve``)."""
        cdef Py_ssize_t i
        for i in range(self.m + self.n_groups):
            self.rhs[i] = self.grad[self.face[i]] if i < self.m else 0.0
        self.solve(refine)

    cdef double largest_step(self) noexcept nogil:
        cdef Py_ssize_t i
        cdef double pmax = 0.0
        for i in range(self.m):
            pmax = max(pmax, fabs(self.rhs[i]))
        return pmax

    cdef bint newton_step(self, double[::1] direction, Py_ssize_t entered) except -1:
        """Move along the Newton step p (in rhs), at most to the face optimum (step 1), cut
        where a variable reaches 0 (it leaves the face); False when p is no ascent
        direction."""
        cdef Py_ssize_t m = self.m, i
        for i in range(m):
            direction[i] = self.rhs[i]
        self.project(direction, m)
        return self.line_search(direction, m, self.curvature(direction, m), entered)

    cdef void project(self, double[::1] direction, Py_ssize_t m) noexcept nogil:
        """Make sum_{i in F, g(i) = g} direction_i = 0 exact for every group (the solve
        leaves rounding there; a line search along it would leave the simplex)."""
        cdef Py_ssize_t i, g
        cdef double *sums = &self.work[0]
        cdef double *counts = &self.work[self.n_groups]  # work holds 4 (m + G) >= 2 G
        for g in range(self.n_groups):
            sums[g] = 0.0
            counts[g] = 0.0
        for i in range(m):
            g = self.var_group(self.face[i])
            sums[g] += direction[i]
            counts[g] += 1.0
        for i in range(m):
            g = self.var_group(self.face[i])
            direction[i] -= sums[g] / counts[g]

    cdef double curvature(self, double[::1] direction, Py_ssize_t m) noexcept nogil:
        """d^T H d over the first m face entries: t = H d a row of H at a time (into the
        scratch ``product``, unused between solves), then d.t."""
        cdef Py_ssize_t j
        cdef double total = 0.0
        for j in range(m):
            self.product[j] = 0.0
        if m > 0:
            add_rows(m, &direction[0], &self.hf[0], self.hstride, m, &self.product[0])
        for j in range(m):
            total += direction[j] * self.product[j]
        return total

    cdef bint line_search(self, double[::1] direction, Py_ssize_t m, double curvature,
                          Py_ssize_t entered) except -1:
        """x_F += t direction (over the first m face entries), t maximising f but at most 1
        (the Newton step's length: a longer step would only follow rounding) and at most
        the step where a variable reaches 0 (which then leaves the face); False (nothing
        moved) when direction is no ascent direction, and, with ``bounced`` set, when the
        variable that just entered (``entered``) would leave at once (``withdraw``)."""
        cdef Py_ssize_t i, blocking
        cdef double ascent = 0.0, step, limit
        for i in range(m):
            ascent += direction[i] * self.grad[self.face[i]]
        if not ascent > 0.0:
            return False
        blocking = self.blocking_step(direction, m, &limit)
        step = min(1.0, ascent / curvature) if curvature > 0.0 else 1.0
        if step < limit:
            blocking = -1
        else:
            step = limit
            if step == 0.0 and self.face[blocking] == entered:
                self.bounced = True  # what just entered would leave at once: withdraw
                return False
        self.move(direction, m, step, blocking, True)  # product: curvature's H_F direction
        self.unblocked = blocking < 0
        self.has_pending = False
        if blocking >= 0:
            self.follow_up(direction, m, step, blocking)
            self.drop_nonpositive()
            if self.m != m - 1:  # more than the blocking variable left: no step to follow
                self.has_pending = False
        return True

    cdef void follow_up(self, double[::1] direction, Py_ssize_t m, double step,
                        Py_ssize_t i) noexcept nogil:
        """pending <- the Newton step of F without face[i], which has just blocked the step
        ``step`` < 1 along the Newton step p of F (``direction``, H_F p in ``product``), in
        O(|F|) from the inverse's column i before it is deleted: the rest of F's step is
        (1 - step) p, and with [u; eta] = KKT_F^{-1} e_i the step of F - i is
        q = (1 - step)(p - (p_i / u_i) u) (q_i = 0: equation i dropped), with
        H_F q = (1 - step)(H_F p - (p_i / u_i)(e_i - E_F^T eta)); kept in the face order
        the deletion leaves (the last variable takes place i).  None when u_i is too small
        to divide by."""
        cdef Py_ssize_t G = self.n_groups, stride = self.stride, j, col = G + i, last = m - 1
        cdef double rest = 1.0 - step, uii = self.inv[col * stride + col], scale = 0.0, lam
        for j in range(m):
            scale = max(scale, fabs(self.inv[(G + j) * stride + col]))
        if not fabs(uii) > _SINGULAR * scale:
            return
        lam = rest * direction[i] / uii
        for j in range(m):
            self.pending[j] = rest * direction[j] - lam * self.inv[(G + j) * stride + col]
            self.pending_product[j] = rest * self.product[j] + lam * self.inv[
                self.var_group(self.face[j]) * stride + col]
        self.pending[i] = self.pending[last]
        self.pending_product[i] = self.pending_product[last]
        self.has_pending = True

    cdef bint pending_step(self, double[::1] direction, double negligible) except -1:
        """``newton_step`` along the step ``follow_up`` left (then forgotten); False (nothing
        moved: the caller solves for the step) when there is none, its largest entry is at
        most ``negligible``, or its ascent along the gradient differs from its curvature
        (equal at an exact step) by more than _FOLLOWED_ASCENT of it."""
        cdef Py_ssize_t m = self.m, j
        cdef double curvature = 0.0, ascent = 0.0, largest = 0.0
        if not self.has_pending:
            return False
        self.has_pending = False
        for j in range(m):
            direction[j] = self.pending[j]
            largest = max(largest, fabs(direction[j]))
        if not largest > negligible:
            return False
        self.project(direction, m)
        for j in range(m):
            self.product[j] = self.pending_product[j]
            curvature += direction[j] * self.product[j]
            ascent += direction[j] * self.grad[self.face[j]]
        if not fabs(ascent - curvature) <= _FOLLOWED_ASCENT * curvature:
            return False
        return self.line_search(direction, m, curvature, -1)

    cdef double entering_direction(self, double[::1] direction, double excess,
                                   Py_ssize_t entered) noexcept nogil:
        """direction <- the Newton step p of the face that variable ``entered`` (its excess
        g_j - nu_g at the last face's optimum) has just joined as its last variable, from
        the inverse's last column [d; eta] = KKT_F^{-1} e_j in O(|F|) instead of a solve and
        a product with H_F: at the last optimum g_F = E_F^T nu except in j's row, so
        p = (g_j - nu_g) d, with product <- H_F p = (g_j - nu_g)(e_j - E_F^T eta); return
        the curvature p^T H_F p = (g_j - nu_g)^2 d_j (d^T H_F d = d^T e_j, as E_F d = 0), or
        -1 when j is not the face's last variable or d_j is not positive."""
        cdef Py_ssize_t m = self.m, G = self.n_groups, stride = self.stride, i
        cdef Py_ssize_t last = self.m + self.n_groups - 1
        cdef double dj = self.inv[last * stride + last]
        if m == 0 or self.face[m - 1] != entered or not dj > 0.0:
            return -1.0
        for i in range(m):
            direction[i] = excess * self.inv[(G + i) * stride + last]
            self.product[i] = -excess * self.inv[self.var_group(self.face[i]) * stride + last]
        self.product[m - 1] += excess
        self.project(direction, m)
        return excess * excess * dj

    cdef bint entering_step(self, double[::1] direction, double excess,
                            Py_ssize_t entered) except -1:
        """``newton_step`` on the face that ``entered`` has just joined by bordering, its
        step from ``entering_direction``; False (nothing moved: the caller solves for the
        step) when that has none, would move ``entered`` below 0, or its ascent along the
        exact gradient differs from its curvature (which it equals at an exact optimum) by
        more than _ENTERED_ASCENT of it."""
        cdef double curvature = self.entering_direction(direction, excess, entered)
        cdef double ascent = 0.0
        cdef Py_ssize_t i
        if curvature < 0.0 or not direction[self.m - 1] > 0.0:
            return False
        for i in range(self.m):
            ascent += direction[i] * self.grad[self.face[i]]
        if not fabs(ascent - curvature) <= _ENTERED_ASCENT * curvature:
            return False
        return self.line_search(direction, self.m, curvature, entered)

    cdef inline double excess(self, Py_ssize_t j) noexcept nogil:
        """g_j - nu_g for variable j outside the face (nu in rhs)."""
        return (self.grad[j] if j < self.k else 0.0) - self.rhs[self.m + self.var_group(j)]

    cdef Py_ssize_t most_violated(self) noexcept nogil:
        """The variable outside the face of largest C_g (g_j - nu_g) > 0 (nu in rhs), -1
        when there is none."""
        cdef Py_ssize_t v, best_var = -1
        cdef double score, best = 0.0
        for v in range(self.k + self.n_groups):
            if self.position[v] >= 0:
                continue
            score = self.bounds[self.var_group(v)] * self.excess(v)
            if score > best:
                best, best_var = score, v
        return best_var

    cdef double schur_complement(self, Py_ssize_t j, bint refine, double *scale) noexcept nogil:
        """The Schur complement s = H_jj + [G_Fj; e_g].[q; eta] of bordering F with j, with
        rhs <- -[q; eta] = KKT_F^{-1} [G_Fj; e_g] (``refine``: see ``solve``; work[n:2n]
        holds the unrefined product either way) and *scale the size of the terms summed."""
        cdef Py_ssize_t m = self.m, i, gj = self.var_group(j)
        cdef double schur = self.hess(j, j)
        for i in range(m + self.n_groups):
            self.rhs[i] = 0.0
        for i in range(m):
            self.rhs[i] = self.hess(self.face[i], j)
        self.rhs[m + gj] = 1.0
        self.solve(refine)
        scale[0] = schur + fabs(self.rhs[m + gj])
        for i in range(m):
            schur -= self.hess(self.face[i], j) * self.rhs[i]
            scale[0] += fabs(self.hess(self.face[i], j) * self.rhs[i])
        return schur - self.rhs[m + gj]

    cdef int enter(self, Py_ssize_t j, double[::1] direction) except -1:
        """Enter variable j (at x_j >= 0) into the face (module doc): return 1 when F + j is
        nonsingular (j added, refactored); otherwise ``exchange`` j in and return 0."""
        cdef Py_ssize_t m = self.m, n = self.m + self.n_groups
        cdef double schur, scale
        # rhs = -[q; eta], unrefined first: a Schur complement clearly away from 0 decides
        # alone (border updates the inverse from that same first product either way)
        schur = self.schur_complement(j, False, &scale)
        if not (fabs(schur) > _CLEAR * scale and m < self.capacity):
            schur = self.schur_complement(j, True, &scale)
        if fabs(schur) > _SINGULAR * scale and m < self.capacity:
            # solve()'s first product inv b (work[n:2n]) is border's u
            if not self.border(j, &self.work[n]):  # the Schur complements disagree: rounding
                self.add(j)
                if self.fresh() <= 0.0:
                    raise ActiveSetStuck
            self.refresh()
            return 1
        # F + j is dependent (at the capacity rank(G) + #groups it must be: schur is rounding)
        self.exchange(j, direction, schur, False)
        return 0

    cdef void exchange(self, Py_ssize_t j, double[::1] direction, double schur,
                       bint independent) except *:
        """Move along (q, 1) (rhs = -[q; eta] from ``schur_complement``: the direction that
        raises x_j and keeps F's equations), whose curvature is the Schur complement
        ``schur``, in the sense in which f does not decrease, by an exact line search cut
        where a variable reaches 0 (it leaves).  j joins the face unless it is what reached 0
        (the face is then unchanged), and the inverse is formed afresh.  Where F + j is
        dependent (schur 0 up to rounding) something must reach 0, and j takes its place
        (ActiveSetStuck if nothing does); where it is ``independent`` (``withdraw``), the
        line search may end first, and F + j is the face."""
        cdef Py_ssize_t m = self.m, i, blocking, v
        cdef double ascent, limit, step
        ascent = self.grad[j]
        for i in range(m):
            direction[i] = -self.rhs[i]
            ascent += direction[i] * self.grad[self.face[i]]
        direction[m] = 1.0
        if ascent < 0.0:
            ascent = -ascent
            for i in range(m + 1):
                direction[i] = -direction[i]
        self.face[m] = j  # temporarily, to move x_j with the face
        self.project(direction, m + 1)
        blocking = self.blocking_step(direction, m + 1, &limit)
        step = ascent / schur if schur > 0.0 else INFINITY
        if step < limit and independent:  # the line search ends before anything reaches 0
            blocking = -1
        elif blocking < 0 or step < limit:
            raise ActiveSetStuck  # nothing reaches 0: F + j is not dependent after all
        else:
            step = limit
        self.move(direction, m + 1, step, blocking)
        if blocking == m:  # j itself reached 0: the face is unchanged
            return
        # j joins, and takes the place of what reached 0: F without it need not be
        # nonsingular (it may have been its group's only variable), so the inverse is
        # formed afresh (an exchange happens where F spans the rank of G: few features, a
        # small face)
        self.add(j)
        for i in range(self.m - 1, -1, -1):
            v = self.face[i]
            if not self.x[v] > 0.0:
                self.x[v] = 0.0
                self.move_last_to(i)
        if self.fresh() <= 0.0:
            raise ActiveSetStuck

    cdef void withdraw(self, Py_ssize_t j, double[::1] direction) except *:
        """Take j, which has just entered at x_j = 0 and whose face's Newton step would
        move it below 0 at once, out of the face again and ``exchange`` it in instead: the
        Newton step of F + j carries F's own residual step too, which on a face F + j
        that is dependent up to rounding (a Schur complement of 1e-8 of its terms) can
        outweigh j's part; the line search along (q, 1) moves j alone."""
        cdef double scale
        if not self.delete(self.position[j]) and self.fresh() <= 0.0:
            raise ActiveSetStuck
        self.exchange(j, direction, self.schur_complement(j, True, &scale), True)

    cdef bint usable(self, const intp[::1] face) except -1:
        """Whether ``face`` (variables of this problem) can start the solve: distinct
        variables within the capacity, every positive variable among them, and at least one
        per group."""
        cdef Py_ssize_t i, v, g, n = self.k + self.n_groups, covered = 0
        cdef intp[::1] seen = np.zeros(n, dtype=np.intp)
        cdef intp[::1] groups = np.zeros(self.n_groups, dtype=np.intp)
        if face.shape[0] > self.capacity:
            return False
        for i in range(face.shape[0]):
            v = face[i]
            if v < 0 or v >= n or seen[v]:
                return False
            seen[v] = 1
            g = self.var_group(v)
            if not groups[g]:
                groups[g] = 1
                covered += 1
        if covered < self.n_groups:
            return False
        for v in range(n):
            if self.x[v] > 0.0 and not seen[v]:
                return False
        return True

    cdef bint rebuild(self, double[::1] direction, last_face) except -1:
        """The face of the last solve (``last_face``: its variables, the record of its
        inverse and H_F that ``handover`` made, and the update count; or None) when it holds
        every positive variable; else the face of the
        positive variables, rebuilt by entering steps from one variable per group when its
        KKT system is (nearly) singular."""
        cdef Py_ssize_t v, g, n = self.k + self.n_groups
        cdef intp[::1] first = np.full(self.n_groups, -1, dtype=np.intp)
        self.m = 0
        for v in range(n):
            self.position[v] = -1
        if last_face is not None and self.usable(last_face[0]):
            self.load(last_face[0], last_face[1], last_face[2])
            return True
        for v in range(n):
            if self.x[v] > 0.0 and self.m < self.capacity:
                self.add(v)
        if self.m < self.capacity and self.fresh() > _SINGULAR:
            return True
        for v in range(n):  # the largest variable of every group
            g = self.var_group(v)
            if self.x[v] > 0.0 and (first[g] < 0 or self.x[v] > self.x[first[g]]):
                first[g] = v
        self.m = 0
        for v in range(n):
            self.position[v] = -1
        for g in range(self.n_groups):
            self.add(first[g])
        if self.fresh() <= 0.0:
            raise ActiveSetStuck
        for v in range(n):
            if self.x[v] > 0.0 and self.position[v] < 0:
                self.enter(v, direction)
        return True


def active_set_solve(const double[:, ::1] gram, const double[::1] losses,
                     const intp[::1] group, const double[::1] bounds, double[::1] alpha,
                     double abs_tol, double rel_tol, Py_ssize_t max_face,
                     Py_ssize_t max_steps, check=None, face=None):
    """Improve the feasible ``alpha`` in place until the duality gap of (D) is at most
    ``abs_tol + rel_tol * |f(alpha)|``; return (steps, gap, f(alpha), the final face).  Raise
    ActiveSetStuck (alpha untouched) when ``max_steps`` steps did not reach the gap, no step
    was possible, or a face would exceed ``max_face`` variables (rank(G) + #groups bounds a
    nonsingular face).

    ``gram``: its leading K x K block is G (a buffer with spare capacity is fine);
    ``group[k]`` in 0..len(bounds)-1; ``check()``, if given, is called every step (the
    caller's deadline: it raises to stop).  ``face``: a final face this function returned
    for a problem whose constraints 0..K-1 keep their Gram entries and whose groups are the
    same (variables K..K+G-1 the groups' slacks), or None: the solve starts from it, without
    forming its inverse afresh, when it holds every positive variable of ``alpha``.
    """
    cdef Py_ssize_t k = losses.shape[0], n_groups = bounds.shape[0], v, g, i, m
    cdef Py_ssize_t steps, entered = -1, refinements = 0, bounces = 0
    cdef bint at_optimum
    cdef double gap, objective, excess, bmax = 0.0
    cdef _Solver s = _Solver(gram, losses, group, bounds, max_face)
    cdef double[::1] direction = np.empty(s.capacity + 1)
    cdef double[::1] mass = np.zeros(n_groups)
    for g in range(n_groups):
        bmax = max(bmax, bounds[g])
    # start: negligible multipliers at 0, groups over their bound scaled back (rounding)
    for v in range(k):
        if alpha[v] > _NEGLIGIBLE * bounds[group[v]]:
            s.x[v] = alpha[v]
            mass[group[v]] += alpha[v]
    for v in range(k):
        g = group[v]
        if mass[g] > bounds[g]:
            s.x[v] *= bounds[g] / mass[g]
    for g in range(n_groups):
        s.x[k + g] = max(bounds[g] - min(mass[g], bounds[g]), 0.0)
        if s.x[k + g] <= _NEGLIGIBLE * bounds[g]:
            s.x[k + g] = 0.0
            if mass[g] == 0.0:  # an empty group at a zero bound: nothing to optimise
                raise ActiveSetStuck
    s.exact_gradient()
    s.rebuild(direction, face)
    at_optimum = False
    for steps in range(1, max_steps + 1):
        if check is not None:
            check()
        # after an unblocked Newton step x is at the face optimum: straight to the gap
        # (a Newton step left short by rounding is taken by the refinement below)
        if not at_optimum:
            # after a blocked step, the smaller face's step in O(|F|) where it is accurate
            if s.pending_step(direction, _SINGULAR * bmax):
                entered = -1
                at_optimum = s.unblocked
                bounces = 0
                continue
            # rhs = [p; nu], unrefined: a step left short by rounding is finished by the
            # refined solve of the face-optimum branch below
            s.newton(False)
            if s.largest_step() > _SINGULAR * bmax and s.newton_step(direction, entered):
                entered = -1
                at_optimum = s.unblocked
                bounces = 0
                continue
            if s.bounced:  # what just entered would leave at once: out, exchanged in,
                # and F's optimum refined (it priced j: too roughly, as j's step shows)
                s.bounced = False
                bounces += 1
                if bounces > _REFINEMENTS:  # and again, with nothing moving in between
                    raise ActiveSetStuck
                s.withdraw(entered, direction)
                entered = -1
                s.newton()
                if s.largest_step() > _SINGULAR * bmax:
                    s.newton_step(direction, -1)
                continue
        at_optimum = False
        # at the face optimum: the gap, from the exact gradient
        s.exact_gradient()
        gap = s.gap(&objective)
        if gap <= abs_tol + rel_tol * fabs(objective):
            for v in range(k):
                alpha[v] = s.x[v]
            return steps, gap, objective, s.handover()
        # which variable enters needs only the groups' nu: the inverse's group rows times
        # the face's gradient, not the whole (refined) Newton solve
        s.group_multipliers()
        entered = s.most_violated()
        if entered >= 0:
            refinements = 0
            excess = s.excess(entered)
            # a bordered face: its Newton step from the inverse's new column, in O(|F|)
            if s.enter(entered, direction) and s.entering_step(direction, excess, entered):
                entered = -1
                at_optimum = s.unblocked
            continue
        # no variable outside the face is violated, yet the gap is open: the face optimum
        # is not accurate enough; refine it with Newton steps on the exact gradient
        s.newton()
        entered = s.most_violated()
        if entered >= 0:  # the refined nu shows a violated variable after all
            refinements = 0
            s.enter(entered, direction)
            continue
        refinements += 1
        if refinements > _REFINEMENTS or not s.newton_step(direction, -1):
            raise ActiveSetStuck
    raise ActiveSetStuck


def face_inverse_by_updates(const double[:, ::1] gram, const intp[::1] group,
                            const double[::1] bounds, first, changes):
    """(the inverse of a face's KKT system kept by updates, the same formed afresh, the
    face's variables in order): the face starts as ``first`` (formed afresh), then each
    variable of ``changes`` enters (bordering) when outside the face and leaves (deletion)
    when in it.  What the tests compare; the solver's own path is the same calls."""
    k, n_groups = gram.shape[0], bounds.shape[0]
    cdef _Solver s = _Solver(gram, np.zeros(k), group, bounds, k + n_groups)
    for v in first:
        s.add(v)
    if s.fresh() <= 0.0:
        raise ActiveSetStuck
    for v in changes:
        if s.position[v] >= 0:
            if not s.delete(s.position[v]):
                raise ActiveSetStuck  # the smaller face is singular
        elif not s.border(v, NULL):
            raise ActiveSetStuck  # the larger face is singular
    updated = np.array(s.face_state()[1])
    n = s.m + n_groups
    for i in range(n):
        s.rhs[i] = float(i + 1)
    s.solve()
    solved = np.array(s.rhs[:n])
    s.fresh()
    return updated, np.array(s.face_state()[1]), np.array(s.face[:s.m]), solved


cdef _Solver _solver_on_face(const double[:, ::1] gram, const double[::1] losses,
                             const intp[::1] group, const double[::1] bounds,
                             const double[::1] x, first):
    """A solver at the multipliers and slacks ``x`` with the face ``first``, its inverse
    formed afresh (the tests' entry points below start there)."""
    cdef Py_ssize_t i
    cdef _Solver s = _Solver(gram, losses, group, bounds, len(x))
    for i in range(len(x)):
        s.x[i] = x[i]
    s.exact_gradient()
    for v in first:
        s.add(v)
    if s.fresh() <= 0.0:
        raise ActiveSetStuck
    return s


def entering_step_and_solve(const double[:, ::1] gram, const double[::1] losses,
                            const intp[::1] group, const double[::1] bounds,
                            const double[::1] x, first, Py_ssize_t entering):
    """(the Newton step after ``entering`` joins the face ``first`` by bordering, as the
    solver forms it from the inverse's new column; H_F times it as formed there; its
    curvature as formed there; the same step from a refined solve of the new face's KKT
    system), at the multipliers and slacks ``x``, which must be a face optimum of ``first``.
    What the tests compare; the solver's own path is the same calls."""
    cdef _Solver s = _solver_on_face(gram, losses, group, bounds, x, first)
    cdef double[::1] direction = np.empty(len(x) + 1)
    cdef double curvature, excess
    s.group_multipliers()
    excess = s.excess(entering)
    if not s.border(entering, NULL):
        raise ActiveSetStuck  # the larger face is singular
    curvature = s.entering_direction(direction, excess, entering)
    step, product = np.array(direction[:s.m]), np.array(s.product[:s.m])
    s.newton()
    s.project(s.rhs, s.m)
    return step, product, curvature, np.array(s.rhs[:s.m])


def follow_up_and_solve(const double[:, ::1] gram, const double[::1] losses,
                        const intp[::1] group, const double[::1] bounds,
                        const double[::1] x, first):
    """(the Newton step of the face ``first`` without the variable that blocks its Newton
    step from ``x``, as ``follow_up`` forms it from the inverse before the deletion; H_F
    times it as formed there; the same step from a refined solve of the smaller face's KKT
    system; the smaller face), or None when nothing blocks the step short of the face's
    optimum.  What the tests compare; the solver's own path is the same calls."""
    cdef _Solver s = _solver_on_face(gram, losses, group, bounds, x, first)
    cdef double[::1] direction = np.empty(len(x) + 1)
    cdef Py_ssize_t i, blocking
    cdef double limit
    s.newton()
    for i in range(s.m):
        direction[i] = s.rhs[i]
    s.project(direction, s.m)
    s.curvature(direction, s.m)
    blocking = s.blocking_step(direction, s.m, &limit)
    if blocking < 0 or limit >= 1.0:
        return None
    s.move(direction, s.m, limit, blocking, True)
    s.follow_up(direction, s.m, limit, blocking)
    s.drop_nonpositive()
    if not s.has_pending:
        return None
    step, product = np.array(s.pending[:s.m]), np.array(s.pending_product[:s.m])
    s.newton()
    s.project(s.rhs, s.m)
    return step, product, np.array(s.rhs[:s.m]), np.array(s.face[:s.m])



def scaled_row_sums(const double[::1] coef, const double[:, ::1] rows, double[::1] out,
                    bint subtract=False):
    """out += (or -=, ``subtract``) coef[c] rows[c] for every row c in turn (zero coef
    skipped), by _vector_ops.h's vectorised loops: what the tests compare with the same
    sums formed row by row in numpy."""
    if coef.shape[0] != rows.shape[0] or rows.shape[1] != out.shape[0]:
        raise ValueError("coef, rows and out do not match")
    if coef.shape[0] == 0 or out.shape[0] == 0:
        return
    if subtract:
        subtract_rows(coef.shape[0], &coef[0], &rows[0, 0], rows.shape[1], out.shape[0],
                      &out[0])
    else:
        add_rows(coef.shape[0], &coef[0], &rows[0, 0], rows.shape[1], out.shape[0], &out[0])


def rank_one_update(const double[::1] u, const double[::1] v, double[:, ::1] a,
                    bint subtract=False):
    """a[r] += (or -=, ``subtract``) u[r] v for every row r (zero u[r] skipped), by
    _vector_ops.h's vectorised loops: what the tests compare with numpy."""
    if u.shape[0] != a.shape[0] or v.shape[0] != a.shape[1]:
        raise ValueError("u, v and a do not match")
    if u.shape[0] == 0 or v.shape[0] == 0:
        return
    if subtract:
        subtract_rank_one(u.shape[0], &u[0], 1, &v[0], &a[0, 0], a.shape[1], v.shape[0])
    else:
        add_rank_one(u.shape[0], &u[0], 1, &v[0], &a[0, 0], a.shape[1], v.shape[0])
