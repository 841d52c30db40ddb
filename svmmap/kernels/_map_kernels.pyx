# cython: language_level=3
# distutils: language = c++
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

cimport svmmap.kernels._query_core as core
from ._binned_rows import binned_transpose
from ._kernel_inputs import (  # CSRArrays, csr_for_kernels: re-exported for importers
    BinnedArrays,
    CSRArrays,
    checked_bins,
    checked_constraint_inputs,
    checked_query_arrays,
    csr_for_kernels,
    largest_query,
)


cdef void _ranked_interleaving(const core.ScoredDoc *rel, Py_ssize_t n_rel,
                               const core.ScoredDoc *non, Py_ssize_t n_non,
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

cdef void _opt_by_scan(core.ScoredDoc *rel, Py_ssize_t n_rel, core.ScoredDoc *non, Py_ssize_t n_non,
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
                      core.ScoredDoc *non, double inv_p, double two_over_pn,
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


cdef void _opt_by_divide_and_conquer(core.ScoredDoc *rel, Py_ssize_t n_rel,
                                     core.ScoredDoc *non, Py_ssize_t n_non,
                                     const double *harmonic, double *rel_prefix,
                                     Py_ssize_t *opt) noexcept nogil:
    cdef Py_ssize_t i
    rel_prefix[0] = 0.0
    for i in range(n_rel):
        rel_prefix[i + 1] = rel_prefix[i] + rel[i].score
    _opt_divide(1, n_non, 0, n_rel, non, 1.0 / n_rel,
                2.0 / (<double> n_rel * <double> n_non), harmonic, rel_prefix, opt)


cdef struct MapOracle:
    bint use_scan
    const double *harmonic  # H_0..H_{M+1}, M the largest query


cdef double _most_violated_one(const double *scores, const unsigned char *relevant,
                               const double *gains, Py_ssize_t size, Py_ssize_t n_rel,
                               core.Workspace *ws, double *coef,
                               const void *context) noexcept nogil:
    """Algorithm 2 on one query with 0 < n_rel < size relevant documents (a QueryOracle,
    ``context`` a MapOracle): write the psi coefficients of its most violated ranking to
    coef[0:size] and return Delta_MAP of that ranking, 1 - AP."""
    cdef const MapOracle *options = <const MapOracle *> context
    cdef const double *harmonic = options.harmonic
    core.split_sorted(scores, relevant, size, n_rel, ws.docs)
    if options.use_scan:
        _opt_by_scan(ws.docs, n_rel, ws.docs + n_rel, size - n_rel, ws.counts)
    else:
        _opt_by_divide_and_conquer(ws.docs, n_rel, ws.docs + n_rel, size - n_rel,
                                   harmonic, ws.values, ws.counts)
    return 1.0 - core.coefficients_from_interleaving(ws.docs, n_rel, ws.docs + n_rel, size - n_rel,
                                                ws.counts, coef)


def harmonic_numbers(ptr):
    """H_0..H_{M+1} for the largest query size M."""
    largest = largest_query(ptr)
    harmonic = np.zeros(largest + 2)
    harmonic[1:] = np.cumsum(1.0 / np.arange(1, largest + 2))
    return harmonic


def _method_is_scan(method):
    if method not in ("divide", "scan"):
        raise ValueError(f"method must be 'divide' or 'scan', got {method!r}")
    return method == "scan"


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
    cdef MapOracle options
    options.use_scan = _method_is_scan(method)
    s_arr, r_arr, p_arr = checked_query_arrays(scores, relevant, ptr)
    harmonic_arr = harmonic_numbers(p_arr)
    cdef const double[::1] harmonic = harmonic_arr
    options.harmonic = &harmonic[0]
    return core.oracle_pass(s_arr, r_arr, p_arr, _most_violated_one, &options, n_threads)


cdef void _ranking_body(Py_ssize_t q, Py_ssize_t lo, Py_ssize_t size, Py_ssize_t n_rel,
                        core.Workspace *ws, const void *task) noexcept nogil:
    """A QueryBody (``task`` a QueryArrays, value the AP): the psi coefficients and AP of
    query q's ranking by score."""
    cdef const core.QueryArrays *a = <const core.QueryArrays *> task
    if size == 0:
        return
    if n_rel == size:
        a.value[q] = 1.0
    elif n_rel > 0:
        core.split_sorted(a.scores + lo, a.relevant + lo, size, n_rel, ws.docs)
        _ranked_interleaving(ws.docs, n_rel, ws.docs + n_rel, size - n_rel, ws.counts)
        a.value[q] = core.coefficients_from_interleaving(ws.docs, n_rel, ws.docs + n_rel,
                                                    size - n_rel, ws.counts, a.coef + lo)


def ranking_coefficients(scores, relevant, ptr, int n_threads=1):
    """psi coefficients and AP of the ranking by ``scores`` (descending, ties by position).

    Returns ``coef`` (m,) with psi(x, y) = X_q^T coef_q as in the module docstring, and
    ``ap`` (n,), 1/|P| sum_{i in P} precision at the rank of i.  Queries without a relevant
    or without a non-relevant document get coefficients 0 and AP 0 (no relevant document)
    or 1 (only relevant documents).
    """
    s_arr, r_arr, p_arr = checked_query_arrays(scores, relevant, ptr)
    return core.per_query_pass(_ranking_body, s_arr, r_arr, p_arr, None, NULL, True, n_threads)


def map_constraints(X, w, relevant, ptr, str method="divide", int n_threads=1):
    """The whole separation step of one cutting-plane iteration, in one pass over the data.

    For every query q: scores s = X_q w, Algorithm 2's most violated ranking y_hat_q, its loss
    Delta_q = 1 - AP(y_hat_q), the coefficients c* - c_hat of
    dpsi_q = psi(x_q, y*_q) - psi(x_q, y_hat_q) = X_q^T (c* - c_hat) with c*_i = 1/|P|
    (relevant), c*_j = -1/|N| (non-relevant) and c_hat as in the module docstring, and the
    margin w.dpsi_q (``_query_core.constraints_pass``; ``method`` and ``n_threads`` as in
    ``most_violated_map``).

    X is a C-contiguous float64 or float32 ndarray, the CSRArrays of a sparse matrix (see
    ``csr_for_kernels``) or BinnedArrays (binned features), documents in grouped order.  Returns (loss (n,), coef (m,),
    margin (n,)); queries without a relevant or without a non-relevant document get loss 0,
    coefficients 0 and margin 0.
    """
    inputs = checked_constraint_inputs(X, w, relevant, ptr)
    return map_pass(inputs, harmonic_numbers(inputs.ptr), method, n_threads)[:3]


def map_pass(inputs, harmonic_arr, str method="divide", int n_threads=1):
    """``map_constraints`` of inputs checked once: a ConstraintInputs that
    ``checked_constraint_inputs`` made (its ``w`` replaced by a C-contiguous float64 vector of
    its ``n_features``) and their ``harmonic_numbers(ptr)``.  The plugins' per-iteration
    entry (svmmap.core.plugins.map): the data are checked when the plugin is made, not on every
    pass; nothing here checks them.  Returns (loss, coef, margin, the sums of ``inputs.sums``
    or None): ``_query_core.constraints_pass``."""
    cdef MapOracle options
    options.use_scan = _method_is_scan(method)
    cdef const double[::1] harmonic = harmonic_arr
    options.harmonic = &harmonic[0]
    return core.constraints_pass(inputs, _most_violated_one, &options, n_threads)


def combine_rows(X, coef, ptr, weights, targets=None, Py_ssize_t n_targets=1):
    """X^T u = sum_k u_k x_k with u_k = weights_q coef_k for the documents k of query q: the
    d-vector the 1-slack constraint and w are made of (svmmap.core.plugins.rows), for X a
    C-contiguous float64 or float32 ndarray or the CSRArrays of a sparse matrix
    (``csr_for_kernels``; float32 values are read in place and summed in float64),
    coef float64 (m,), ptr the query offsets and weights float64 (n,).  Summed row by row in
    order, skipping rows with u_k = 0: the bits do not depend on where X lies in memory (a
    BLAS product's do), and nothing of X's or of the documents' size is allocated.
    BinnedArrays X: u formed (m,), then per base the histogram of u over the bins and its
    suffix sums (``_binned_rows.binned_transpose``), never the indicator matrix.

    ``targets`` (intp (n,), values in 0..n_targets-1): one sum per target instead,
    (n_targets, d), row t = sum over the documents of the queries q with targets_q = t (the
    cut groups' sums of one oracle pass: svmstruct_api.cut_groups), in one pass over X."""
    coef_arr = np.ascontiguousarray(coef, dtype=np.float64)
    ptr_arr = np.ascontiguousarray(ptr, dtype=np.intp)
    weights_arr = np.ascontiguousarray(weights, dtype=np.float64)
    grouped = targets is not None
    targets_arr = np.zeros(len(weights_arr), dtype=np.intp) if not grouped else \
        np.ascontiguousarray(targets, dtype=np.intp)
    if coef_arr.shape != (X.shape[0],) or weights_arr.shape != (len(ptr_arr) - 1,) \
            or ptr_arr[0] != 0 or ptr_arr[-1] != len(coef_arr) or np.any(np.diff(ptr_arr) < 0) \
            or targets_arr.shape != weights_arr.shape or n_targets < 1 \
            or (len(targets_arr) and not 0 <= targets_arr.min() <= targets_arr.max() < n_targets):
        raise ValueError("X, coef, ptr, weights and targets do not fit together")
    if isinstance(X, BinnedArrays):
        u_arr = np.repeat(weights_arr, np.diff(ptr_arr)) * coef_arr
        bins, widths = checked_bins(X, values=False)
        whole = np.array([0, len(u_arr)], dtype=np.intp)
        if not grouped:
            return binned_transpose(bins, widths, u_arr, whole)[0]
        target_of_doc = np.repeat(targets_arr, np.diff(ptr_arr))
        return np.array([binned_transpose(bins, widths, np.where(target_of_doc == g, u_arr, 0.0),
                                          whole)[0] for g in range(n_targets)])
    cdef Py_ssize_t n_queries = len(ptr_arr) - 1, n_features = X.shape[1], q, k
    cdef Py_ssize_t stride = n_features + 1
    out_arr = np.zeros(n_targets * stride)
    cdef double[::1] out_all = out_arr
    cdef double *out
    cdef const Py_ssize_t[::1] target = targets_arr if n_queries else np.zeros(1, dtype=np.intp)
    result = out_arr.reshape(n_targets, stride)[:, :n_features]
    if not grouped:
        result = result[0]
    cdef const double[::1] c = coef_arr if len(coef_arr) else np.zeros(1)
    cdef const double[::1] v = weights_arr if n_queries else np.zeros(1)
    cdef const Py_ssize_t[::1] p = ptr_arr
    cdef const double[:, ::1] dense
    cdef const double[::1] data
    cdef const float[:, ::1] dense32
    cdef const float[::1] data32
    cdef const int[::1] indices32, indptr32
    cdef const Py_ssize_t[::1] indices64, indptr64
    cdef bint is_csr = isinstance(X, CSRArrays), wide = False
    cdef bint single = (X.data if is_csr else X).dtype == np.float32
    cdef double u
    if is_csr:
        if len(X.data) == 0:
            return result
        if single:
            data32 = X.data
        else:
            data = X.data
        wide = X.indices.dtype.itemsize == sizeof(Py_ssize_t)
        if wide:
            indices64, indptr64 = X.indices, X.indptr
        else:
            indices32, indptr32 = X.indices, X.indptr
    elif n_features == 0:
        return result
    elif single:
        dense32 = np.ascontiguousarray(X)
    else:
        dense = np.ascontiguousarray(X, dtype=np.float64)
    with nogil:
        for q in range(n_queries):
            if v[q] == 0.0:
                continue
            out = &out_all[target[q] * stride]
            for k in range(p[q], p[q + 1]):
                u = v[q] * c[k]
                if u == 0.0:
                    continue
                if not is_csr:
                    if single:
                        core.add_dense_row(&dense32[k, 0], n_features, u, out)
                    else:
                        core.add_dense_row(&dense[k, 0], n_features, u, out)
                elif single:
                    if wide:
                        core.add_csr_row(&data32[0], &indices64[0], indptr64[k], indptr64[k + 1],
                                     u, out)
                    else:
                        core.add_csr_row(&data32[0], &indices32[0], indptr32[k], indptr32[k + 1],
                                     u, out)
                elif wide:
                    core.add_csr_row(&data[0], &indices64[0], indptr64[k], indptr64[k + 1], u,
                                 out)
                else:
                    core.add_csr_row(&data[0], &indices32[0], indptr32[k], indptr32[k + 1], u,
                                 out)
    return result


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
