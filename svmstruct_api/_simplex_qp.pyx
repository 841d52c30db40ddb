# cython: language_level=3
"""Warm-started SMO for the working-set dual of the cutting-plane learners.

Solves, for constraints k = 1..K in slack groups g(k) with bounds C_g,

    max_{alpha >= 0}  f(alpha) = L.alpha - 1/2 alpha^T G alpha
    s.t.  sum_{k in g} alpha_k <= C_g  for every group g                      (D)

(svmstruct_api.qp's dual without free components).  Each group gets an implicit slack
variable s_g = C_g - sum_{k in g} alpha_k >= 0 with zero gradient and zero Gram row, which
turns the group's feasible set into the simplex {alpha_g, s_g >= 0, sum = C_g}.

One step is the sequential minimal optimisation step of Platt (1998) on one simplex: with
the gradient grad = L - G alpha, take i, the variable of largest gradient in the group of
largest violation, and j, a variable of the group that can give mass (alpha_j > 0, or
s_g > 0) chosen by the second-order rule of Fan, Chen & Lin (JMLR 2005): the largest
(grad_i - grad_j)^2 / eta_ij with eta_ij = G_ii + G_jj - 2 G_ij.  Moving t from j to i
raises f by t (grad_i - grad_j) - t^2 eta_ij / 2, maximised at t = (grad_i - grad_j) / eta_ij,
clipped to the mass j holds.

Stopping rule: the duality gap of (D) and its primal  min 1/2|w|^2 + sum_g C_g xi_g, with
w = sum_k alpha_k a_k and xi_g = max(0, max_{k in g} grad_k),

    gap = sum_g [ C_g max(0, max_{k in g} grad_k) - sum_{k in g} alpha_k grad_k ]  >= 0,

is at most ``abs_tol + rel_tol * |f(alpha)|``.  Warm starting from the previous working set's alpha (new
constraints at 0) is what makes a cutting-plane iteration's QP cost a few SMO steps.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport INFINITY, fabs
from libc.stdlib cimport free, malloc

cnp.import_array()

ctypedef cnp.intp_t intp

#: a group's slack below this fraction of its bound is rounding in sum(alpha), not free mass
cdef double _SLACK_RESOLUTION = 1e-12


cdef void _exact_gradient(const double[:, ::1] gram, const double[::1] losses,
                          const double[::1] alpha, double[::1] grad) noexcept nogil:
    """grad = L - G alpha."""
    cdef Py_ssize_t k = losses.shape[0], row, col
    cdef double acc
    for row in range(k):
        acc = losses[row]
        for col in range(k):
            if alpha[col] != 0.0:
                acc -= gram[row, col] * alpha[col]
        grad[row] = acc


cdef double _gap_and_most_violated_group(
        const double[::1] bounds, const double[::1] losses, const intp[::1] group,
        const double[::1] alpha, const double[::1] grad, double *mass, double *up,
        double *down, double *weighted, Py_ssize_t *worst, double *objective) noexcept nogil:
    """Duality gap; *worst = the group of largest violation max(up) - min(down);
    *objective = f(alpha) = (L.alpha + grad.alpha) / 2."""
    cdef Py_ssize_t n_groups = bounds.shape[0], k = alpha.shape[0], g, idx
    cdef double gap = 0.0, violation, best = -INFINITY, linear = 0.0
    for g in range(n_groups):
        mass[g] = 0.0
        up[g] = 0.0  # the slack variable: zero gradient, can always receive mass
        down[g] = INFINITY
        weighted[g] = 0.0
    for idx in range(k):
        g = group[idx]
        mass[g] += alpha[idx]
        weighted[g] += alpha[idx] * grad[idx]
        linear += alpha[idx] * losses[idx]
        if grad[idx] > up[g]:
            up[g] = grad[idx]
        if alpha[idx] > 0.0 and grad[idx] < down[g]:
            down[g] = grad[idx]
    for g in range(n_groups):
        if bounds[g] - mass[g] > _SLACK_RESOLUTION * bounds[g] and down[g] > 0.0:
            down[g] = 0.0  # the slack variable holds mass and can give it
        gap += bounds[g] * up[g] - weighted[g]
        linear += weighted[g]
        violation = up[g] - down[g]
        if violation > best:
            best = violation
            worst[0] = g
    objective[0] = 0.5 * linear
    return gap


def smo_solve(const double[:, ::1] gram, const double[::1] losses, const intp[::1] group,
              const double[::1] bounds, double[::1] alpha, double abs_tol, double rel_tol,
              Py_ssize_t max_steps):
    """Improve the feasible ``alpha`` in place until the duality gap of (D) is at most
    ``abs_tol + rel_tol * |f(alpha)|`` or ``max_steps`` SMO steps were taken; return
    (steps, gap, f(alpha)).

    ``group[k]`` is constraint k's group in 0..len(bounds)-1.  ``gram`` may be larger than
    K x K (a buffer with spare capacity); its leading K x K block is G.  The returned gap is computed
    from a freshly recomputed gradient, not the incrementally updated one.
    """
    cdef Py_ssize_t k = losses.shape[0], n_groups = bounds.shape[0]
    cdef Py_ssize_t steps = 0, g, idx, i, j, worst = 0
    cdef double gap, objective, grad_i, grad_j, eta, score, best_score, t, avail, slack, diff
    cdef double[::1] grad = np.empty(k)
    cdef double *mass = <double *> malloc(4 * max(n_groups, 1) * sizeof(double))
    if mass == NULL:
        raise MemoryError("SMO: cannot allocate the per-group buffers")
    cdef double *up = mass + n_groups
    cdef double *down = up + n_groups
    cdef double *weighted = down + n_groups
    try:
        with nogil:
            _exact_gradient(gram, losses, alpha, grad)
            while True:
                gap = _gap_and_most_violated_group(bounds, losses, group, alpha, grad, mass,
                                                   up, down, weighted, &worst, &objective)
                if gap <= abs_tol + rel_tol * fabs(objective) or steps >= max_steps:
                    # confirm on an exact gradient: the incremental one drifts
                    _exact_gradient(gram, losses, alpha, grad)
                    gap = _gap_and_most_violated_group(bounds, losses, group, alpha, grad,
                                                       mass, up, down, weighted, &worst,
                                                       &objective)
                    if gap <= abs_tol + rel_tol * fabs(objective) or steps >= max_steps:
                        break
                g = worst
                slack = bounds[g] - mass[g]
                # i: the largest gradient of the group (-1: its slack variable)
                i = -1
                grad_i = 0.0
                for idx in range(k):
                    if group[idx] == g and grad[idx] > grad_i:
                        grad_i = grad[idx]
                        i = idx
                # j: second-order choice among the variables that can give mass
                j = -2
                best_score = -1.0
                grad_j = 0.0
                for idx in range(-1, k):
                    if idx == -1:
                        if slack <= _SLACK_RESOLUTION * bounds[g] or i == -1 or grad_i <= 0.0:
                            continue
                        diff = grad_i
                        eta = gram[i, i]
                    else:
                        if group[idx] != g or alpha[idx] <= 0.0 or grad[idx] >= grad_i:
                            continue
                        diff = grad_i - grad[idx]
                        if i >= 0:
                            eta = gram[i, i] + gram[idx, idx] - 2.0 * gram[i, idx]
                        else:
                            eta = gram[idx, idx]
                    if eta <= 1e-12 * diff:
                        score = INFINITY
                    else:
                        score = diff * diff / eta
                    if score > best_score:
                        best_score = score
                        j = idx
                if j == -2:  # nothing can move: the gap is rounding noise
                    break
                if j == -1:
                    grad_j = 0.0
                    avail = slack
                    eta = gram[i, i]
                else:
                    grad_j = grad[j]
                    avail = alpha[j]
                    eta = gram[j, j]
                    if i >= 0:
                        eta = eta + gram[i, i] - 2.0 * gram[i, j]
                if eta > 0.0 and (grad_i - grad_j) < eta * avail:
                    t = (grad_i - grad_j) / eta
                else:
                    t = avail
                if i >= 0:
                    alpha[i] += t
                if j >= 0:
                    alpha[j] = 0.0 if t >= avail else alpha[j] - t
                for idx in range(k):  # G is symmetric: read rows i and j, not columns
                    diff = 0.0
                    if i >= 0:
                        diff = gram[i, idx]
                    if j >= 0:
                        diff = diff - gram[j, idx]
                    grad[idx] -= t * diff
                steps += 1
    finally:
        free(mass)
    return steps, gap, objective
