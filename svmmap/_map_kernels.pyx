# cython: language_level=3
"""Per-query kernels of SVM-MAP over a whole collection, in one call each.

Every function takes the documents in *grouped order* (the documents of query ``g`` are
rows ``ptr[g]:ptr[g + 1]``), a score per document and a relevance flag per document
(``relevant[d] != 0``), and loops over the queries without the GIL (in parallel when the
extension was built with OpenMP).

Notation (Yue et al. 2007, Section 3): a query has relevant set P and non-relevant set N;
a ranking y has y_ij = +1 when relevant i is above non-relevant j, else -1; the joint feature
map is psi = 1/(|P||N|) sum_{i in P, j in N} y_ij (phi_i - phi_j) = X^T c with
    c_i = (|N| - 2 a_i) / (|P||N|)   for relevant i    (a_i = non-relevant docs above i)
    c_j = (|P| - 2 b_j) / (|P||N|)   for non-relevant j (b_j = relevant docs above j).
Ties in a *given* score vector are broken by position in the arrays (file order).
"""

import numpy as np

cimport cython
from cython.parallel cimport prange
from libc.stdlib cimport free, malloc, qsort


cdef struct ScoredDoc:
    double score
    Py_ssize_t index


cdef int _by_score_descending(const void *a, const void *b) noexcept nogil:
    """qsort order: score descending, then position ascending (a total, deterministic order)."""
    cdef const ScoredDoc *x = <const ScoredDoc *> a
    cdef const ScoredDoc *y = <const ScoredDoc *> b
    if x.score > y.score:
        return -1
    if x.score < y.score:
        return 1
    if x.index < y.index:
        return -1
    if x.index > y.index:
        return 1
    return 0


cdef void _split_sorted(const double *scores, const unsigned char *relevant,
                        Py_ssize_t lo, Py_ssize_t hi,
                        ScoredDoc *rel, ScoredDoc *non) noexcept nogil:
    """Copy the query's relevant and non-relevant documents into ``rel`` / ``non``, each sorted
    by score descending (ties: position ascending)."""
    cdef Py_ssize_t d, n_rel = 0, n_non = 0
    for d in range(lo, hi):
        if relevant[d]:
            rel[n_rel].score = scores[d]
            rel[n_rel].index = d
            n_rel += 1
        else:
            non[n_non].score = scores[d]
            non[n_non].index = d
            n_non += 1
    qsort(rel, n_rel, sizeof(ScoredDoc), _by_score_descending)
    qsort(non, n_non, sizeof(ScoredDoc), _by_score_descending)


cdef Py_ssize_t _count_relevant(const unsigned char *relevant, Py_ssize_t lo,
                                Py_ssize_t hi) noexcept nogil:
    cdef Py_ssize_t d, n = 0
    for d in range(lo, hi):
        if relevant[d]:
            n += 1
    return n


cdef double _coefficients_from_interleaving(ScoredDoc *rel, Py_ssize_t n_rel,
                                            ScoredDoc *non, Py_ssize_t n_non,
                                            const Py_ssize_t *rel_above,
                                            double *coef) noexcept nogil:
    """Write the psi coefficients of the ranking in which the j-th non-relevant document (in
    score order) has ``rel_above[j]`` relevant documents above it (non-decreasing in j), and
    return that ranking's AP = 1/|P| sum_i i / (i + a_i)."""
    cdef double pn = <double> n_rel * <double> n_non
    cdef double ap = 0.0
    cdef Py_ssize_t i, j = 0
    for j in range(n_non):
        coef[non[j].index] = (n_rel - 2.0 * rel_above[j]) / pn
    j = 0
    for i in range(n_rel):
        # a_i: non-relevant documents with fewer than i + 1 relevant documents above them
        while j < n_non and rel_above[j] <= i:
            j += 1
        coef[rel[i].index] = (n_non - 2.0 * j) / pn
        ap += (i + 1.0) / (i + 1.0 + j)
    return ap / n_rel


cdef void _ranked_interleaving(ScoredDoc *rel, Py_ssize_t n_rel,
                               ScoredDoc *non, Py_ssize_t n_non,
                               Py_ssize_t *rel_above) noexcept nogil:
    """Fill ``rel_above`` for the ranking by score (ties broken by position)."""
    cdef Py_ssize_t i = 0, j
    for j in range(n_non):
        while i < n_rel and (rel[i].score > non[j].score or
                             (rel[i].score == non[j].score and rel[i].index < non[j].index)):
            i += 1
        rel_above[j] = i


# ---------------------------------------------------------------------------------------------
# Algorithm 2: the most violated constraint for Delta_MAP
#
# With relevant documents sorted by score s_1 >= ... >= s_|P| and non-relevant ones by
# t_1 >= ... >= t_|N|, a ranking that keeps both orders is given by k_j, the number of relevant
# documents above the j-th non-relevant one (non-decreasing in j).  Starting from the ranking
# with every non-relevant document on top, moving non-relevant j down past relevant i changes
# H(y) = Delta_MAP(y) + w.psi(y) by
#     g_j(i) = 1/|P| ( (j-1)/(i+j-1) - j/(i+j) ) + 2 (s_i - t_j) / (|P||N|)
# (the paper's delta_j(i, i+1) with the sign of a move *down*), so
#     H = const + sum_j F_j(k_j),   F_j(k) = sum_{i=1..k} g_j(i),
# and opt_j = argmax_k F_j(k) is non-decreasing in j (Theorem 2).  The plain scan evaluates
# every F_j(k) by accumulating g_j(i): O(|P||N|).  The divide and conquer uses that
# monotonicity: the optimum of the middle j splits the k-range of the two halves, and F_j(k)
# is evaluated in O(1) from harmonic numbers H_n and prefix sums S_k of relevant scores,
#     F_j(k) = 1/|P| ( (j-1)(H_{k+j-1} - H_{j-1}) - j (H_{k+j} - H_j) )
#              + 2 (S_k - k t_j) / (|P||N|),
# which costs O((|P| + |N|) log |N|).  Both take the smallest maximiser on ties, which is
# itself non-decreasing in j (the differences F_{j+1} - F_j are non-decreasing in k).
# ---------------------------------------------------------------------------------------------

cdef void _opt_by_scan(ScoredDoc *rel, Py_ssize_t n_rel, ScoredDoc *non, Py_ssize_t n_non,
                       Py_ssize_t *opt) noexcept nogil:
    cdef double inv_p = 1.0 / n_rel
    cdef double two_over_pn = 2.0 / (<double> n_rel * <double> n_non)
    cdef double total, best
    cdef Py_ssize_t i, j, best_k
    for j in range(1, n_non + 1):
        total = 0.0
        best = 0.0
        best_k = 0
        for i in range(1, n_rel + 1):
            total += inv_p * ((j - 1.0) / (i + j - 1.0) - (<double> j) / (i + j)) \
                + two_over_pn * (rel[i - 1].score - non[j - 1].score)
            if total > best:
                best = total
                best_k = i
        opt[j - 1] = best_k


cdef inline double _gain(Py_ssize_t j, Py_ssize_t k, double inv_p, double two_over_pn,
                         const double *harmonic, const double *rel_prefix,
                         double t_j) noexcept nogil:
    """F_j(k) in O(1); j is 1-based."""
    return inv_p * ((j - 1.0) * (harmonic[k + j - 1] - harmonic[j - 1])
                    - j * (harmonic[k + j] - harmonic[j])) \
        + two_over_pn * (rel_prefix[k] - k * t_j)


cdef void _opt_divide(Py_ssize_t j_lo, Py_ssize_t j_hi, Py_ssize_t k_lo, Py_ssize_t k_hi,
                      ScoredDoc *non, double inv_p, double two_over_pn,
                      const double *harmonic, const double *rel_prefix,
                      Py_ssize_t *opt) noexcept nogil:
    """opt_j for 1-based j in [j_lo, j_hi], knowing every one lies in [k_lo, k_hi]."""
    cdef Py_ssize_t mid, k, best_k
    cdef double value, best, t
    while j_lo <= j_hi:
        mid = (j_lo + j_hi) // 2
        t = non[mid - 1].score
        best_k = k_lo
        best = _gain(mid, k_lo, inv_p, two_over_pn, harmonic, rel_prefix, t)
        for k in range(k_lo + 1, k_hi + 1):
            value = _gain(mid, k, inv_p, two_over_pn, harmonic, rel_prefix, t)
            if value > best:
                best = value
                best_k = k
        opt[mid - 1] = best_k
        # recurse on the smaller side, loop on the larger (depth stays O(log |N|))
        if mid - j_lo < j_hi - mid:
            _opt_divide(j_lo, mid - 1, k_lo, best_k, non, inv_p, two_over_pn,
                        harmonic, rel_prefix, opt)
            j_lo = mid + 1
            k_lo = best_k
        else:
            _opt_divide(mid + 1, j_hi, best_k, k_hi, non, inv_p, two_over_pn,
                        harmonic, rel_prefix, opt)
            j_hi = mid - 1
            k_hi = best_k


cdef void _opt_by_divide_and_conquer(ScoredDoc *rel, Py_ssize_t n_rel,
                                     ScoredDoc *non, Py_ssize_t n_non,
                                     const double *harmonic, double *rel_prefix,
                                     Py_ssize_t *opt) noexcept nogil:
    cdef Py_ssize_t i
    rel_prefix[0] = 0.0
    for i in range(n_rel):
        rel_prefix[i + 1] = rel_prefix[i] + rel[i].score
    _opt_divide(1, n_non, 0, n_rel, non, 1.0 / n_rel,
                2.0 / (<double> n_rel * <double> n_non), harmonic, rel_prefix, opt)


cdef int _check_inputs(double[::1] scores, unsigned char[::1] relevant,
                       Py_ssize_t[::1] ptr) except -1:
    if scores.shape[0] != relevant.shape[0]:
        raise ValueError("scores and relevant differ in length")
    if ptr.shape[0] < 1 or ptr[0] != 0 or ptr[ptr.shape[0] - 1] != scores.shape[0]:
        raise ValueError("ptr must run from 0 to the number of documents")
    cdef Py_ssize_t q
    for q in range(ptr.shape[0] - 1):
        if ptr[q + 1] < ptr[q]:
            raise ValueError("ptr must be non-decreasing")
    return 0


def _as_arrays(scores, relevant, ptr):
    return (np.ascontiguousarray(scores, dtype=np.float64),
            np.ascontiguousarray(relevant, dtype=np.uint8),
            np.ascontiguousarray(ptr, dtype=np.intp))


@cython.boundscheck(False)
@cython.wraparound(False)
def most_violated_map(scores, relevant, ptr, str method="divide", int n_threads=1):
    """Algorithm 2 over every query: the ranking y_hat = argmax_y Delta_MAP(y) + w.psi(y).

    Parameters
    ----------
    scores : float64 array (m,), w.phi(x, d) of each document in grouped order
    relevant : array (m,), non-zero for relevant documents
    ptr : int array (n + 1,), query offsets
    method : "divide" (exact divide and conquer, default) or "scan" (Algorithm 2's plain
        O(|P||N|) scan, kept as the reference)
    n_threads : threads to split the queries over (1 without OpenMP)

    Returns
    -------
    coef : float64 (m,), psi coefficients of y_hat (psi(x, y_hat) = X_q^T coef_q)
    loss : float64 (n,), Delta_MAP(y*, y_hat) = 1 - AP(y_hat)
    Queries without a relevant or without a non-relevant document get coefficients 0, loss 0.
    """
    if method not in ("divide", "scan"):
        raise ValueError(f"method must be 'divide' or 'scan', got {method!r}")
    s_arr, r_arr, p_arr = _as_arrays(scores, relevant, ptr)
    cdef double[::1] s = s_arr
    cdef unsigned char[::1] r = r_arr
    cdef Py_ssize_t[::1] p = p_arr
    _check_inputs(s, r, p)
    cdef Py_ssize_t n_queries = p.shape[0] - 1
    cdef Py_ssize_t max_size = 0, q
    for q in range(n_queries):
        max_size = max(max_size, p[q + 1] - p[q])
    harmonic_arr = np.zeros(max_size + 2, dtype=np.float64)
    if max_size > 0:
        harmonic_arr[1:] = np.cumsum(1.0 / np.arange(1, max_size + 2, dtype=np.float64))
    cdef double[::1] harmonic = harmonic_arr
    coef_arr = np.zeros(s.shape[0], dtype=np.float64)
    loss_arr = np.zeros(n_queries, dtype=np.float64)
    cdef double[::1] coef = coef_arr
    cdef double[::1] loss = loss_arr
    cdef bint use_scan = method == "scan"
    cdef Py_ssize_t lo, hi, n_rel, size
    cdef ScoredDoc *docs
    cdef Py_ssize_t *opt
    cdef double *rel_prefix
    cdef double *coef_ptr = &coef[0] if s.shape[0] > 0 else NULL
    for q in prange(n_queries, nogil=True, schedule="dynamic", num_threads=max(n_threads, 1)):
        lo = p[q]
        hi = p[q + 1]
        size = hi - lo
        n_rel = _count_relevant(&r[0], lo, hi)
        if n_rel == 0 or n_rel == size:
            continue
        docs = <ScoredDoc *> malloc(size * sizeof(ScoredDoc))
        opt = <Py_ssize_t *> malloc(size * sizeof(Py_ssize_t))
        rel_prefix = <double *> malloc((size + 1) * sizeof(double))
        _split_sorted(&s[0], &r[0], lo, hi, docs, docs + n_rel)
        if use_scan:
            _opt_by_scan(docs, n_rel, docs + n_rel, size - n_rel, opt)
        else:
            _opt_by_divide_and_conquer(docs, n_rel, docs + n_rel, size - n_rel,
                                       &harmonic[0], rel_prefix, opt)
        loss[q] = 1.0 - _coefficients_from_interleaving(docs, n_rel, docs + n_rel,
                                                        size - n_rel, opt, coef_ptr)
        free(docs)
        free(opt)
        free(rel_prefix)
    return coef_arr, loss_arr


@cython.boundscheck(False)
@cython.wraparound(False)
def ranking_coefficients(scores, relevant, ptr, int n_threads=1):
    """psi coefficients and AP of the ranking by ``scores`` (descending, ties by position).

    Returns ``coef`` (m,) with psi(x, y) = X_q^T coef_q as in the module docstring, and
    ``ap`` (n,), 1/|P| sum_{i in P} precision at the rank of i.  Queries without a relevant
    or without a non-relevant document get coefficients 0 and AP 0 (no relevant document)
    or 1 (only relevant documents).
    """
    s_arr, r_arr, p_arr = _as_arrays(scores, relevant, ptr)
    cdef double[::1] s = s_arr
    cdef unsigned char[::1] r = r_arr
    cdef Py_ssize_t[::1] p = p_arr
    _check_inputs(s, r, p)
    cdef Py_ssize_t n_queries = p.shape[0] - 1, q, lo, hi, n_rel, size
    coef_arr = np.zeros(s.shape[0], dtype=np.float64)
    ap_arr = np.zeros(n_queries, dtype=np.float64)
    cdef double[::1] coef = coef_arr
    cdef double[::1] ap = ap_arr
    cdef double *coef_ptr = &coef[0] if s.shape[0] > 0 else NULL
    cdef ScoredDoc *docs
    cdef Py_ssize_t *above
    for q in prange(n_queries, nogil=True, schedule="dynamic", num_threads=max(n_threads, 1)):
        lo = p[q]
        hi = p[q + 1]
        size = hi - lo
        if size == 0:
            continue
        n_rel = _count_relevant(&r[0], lo, hi)
        if n_rel == size:
            ap[q] = 1.0
            continue
        if n_rel == 0:
            continue
        docs = <ScoredDoc *> malloc(size * sizeof(ScoredDoc))
        above = <Py_ssize_t *> malloc(size * sizeof(Py_ssize_t))
        _split_sorted(&s[0], &r[0], lo, hi, docs, docs + n_rel)
        _ranked_interleaving(docs, n_rel, docs + n_rel, size - n_rel, above)
        ap[q] = _coefficients_from_interleaving(docs, n_rel, docs + n_rel, size - n_rel,
                                                above, coef_ptr)
        free(docs)
        free(above)
    return coef_arr, ap_arr


def ideal_coefficients(relevant, ptr):
    """psi coefficients of the correct ranking y* (every relevant document above every
    non-relevant one): c_i = 1/|P| for relevant, c_j = -1/|N| for non-relevant documents,
    so psi(x, y*) = mean of phi over P minus mean over N.  Zero for queries lacking either."""
    r = np.ascontiguousarray(relevant).astype(bool)
    ptr = np.asarray(ptr, dtype=np.intp)
    sizes = np.diff(ptr)
    query_of_doc = np.repeat(np.arange(len(sizes)), sizes)
    n_rel = np.bincount(query_of_doc, weights=r, minlength=len(sizes))
    n_non = sizes - n_rel
    usable = (n_rel > 0) & (n_non > 0)
    with np.errstate(divide="ignore"):
        pos = np.where(usable, 1.0 / np.maximum(n_rel, 1), 0.0)
        neg = np.where(usable, -1.0 / np.maximum(n_non, 1), 0.0)
    return np.where(r, pos[query_of_doc], neg[query_of_doc])
