# cython: language_level=3, boundscheck=False, wraparound=False
"""The binned features of Yue et al. (2007), Section 4.2, kept implicit: what the kernels do
with a ``BinnedArrays`` X (svmmap.kernels._kernel_inputs) instead of its indicator matrix.

Row d of X holds, per base function f (f = 0 .. F-1), the bin b_{d,f} = number of the
thresholds K_f below the score (0 .. W_f, W_f = |K_f| the width of base f); the indicator
feature j of base f (column off_f + j, off_f = W_0 + ... + W_{f-1}) is 1[b_{d,f} > j].  So

    X w   : s_d = sum_f L_f[b_{d,f}],   L_f[b] = sum_{j < b} w_{off_f + j}   (L_f[0] = 0),
    X^T u : (X^T u)_{off_f + j} = sum_{b > j} h_f[b],   h_f[b] = sum_{d : b_{d,f} = b} u_d,

the lookup tables L (one per base, W_f + 1 entries each, base f's at ``table_starts[f] =
off_f + f``) made once per w, the histograms h one pass over the bins, then suffix sums --
never the m x sum_f W_f indicator matrix.  Bins are uint8 (every W_f < 256) or uint16.
"""

import numpy as np

ctypedef fused bin_t:
    unsigned char
    unsigned short


def table_starts(const Py_ssize_t[::1] widths):
    """intp (F,): where base f's table (W_f + 1 entries) starts in a lookup or histogram:
    off_f + f."""
    cdef Py_ssize_t n_bases = widths.shape[0], f, at = 0
    starts_arr = np.empty(n_bases, dtype=np.intp)
    cdef Py_ssize_t[::1] starts = starts_arr
    for f in range(n_bases):
        starts[f] = at
        at += widths[f] + 1
    return starts_arr


def binned_lookup(const double[::1] w, const Py_ssize_t[::1] widths):
    """float64 (d + F,): the cumulative weights L_f[b] = sum_{j < b} w_{off_f + j},
    b = 0 .. W_f, of every base f in turn (each summed in column order)."""
    cdef Py_ssize_t n_bases = widths.shape[0], f, j, off = 0, at = 0
    lookup_arr = np.empty(w.shape[0] + n_bases)
    cdef double[::1] lookup = lookup_arr
    cdef double total
    with nogil:
        for f in range(n_bases):
            total = 0.0
            lookup[at] = 0.0
            for j in range(widths[f]):
                total += w[off + j]
                lookup[at + j + 1] = total
            at += widths[f] + 1
            off += widths[f]
    return lookup_arr


def indicator_scores(const bin_t[:, ::1] bins, const Py_ssize_t[::1] widths,
                     const double[::1] w):
    """float64 (m,): s_d = sum_f sum_{j < b_{d,f}} w_{off_f + j} of every row, summed one
    weight at a time in column order: the bits of the indicator matrix's CSR product
    (scipy's, svmmap.kernels._csr_rows.csr_scores), for scoring (a model scores binned data as it
    did when the indicator matrix was formed), at one addition per indicator that is 1."""
    cdef Py_ssize_t m = bins.shape[0], n_bases = bins.shape[1], d, f, j, off
    out_arr = np.zeros(m)
    cdef double[::1] out = out_arr
    cdef double total
    with nogil:
        for d in range(m):
            total = 0.0
            off = 0
            for f in range(n_bases):
                for j in range(off, off + bins[d, f]):
                    total += w[j]
                off += widths[f]
            out[d] = total
    return out_arr


def lookup_scores(const bin_t[:, ::1] bins, const Py_ssize_t[::1] widths,
                  const double[::1] w):
    """float64 (m,): s_d = sum_f L_f[b_{d,f}] of every row (module docstring), summed in base
    order: one table read per base, as the fused constraint passes score (training)."""
    cdef Py_ssize_t m = bins.shape[0], n_bases = bins.shape[1], d, f
    lookup_arr = binned_lookup(w, widths)
    starts_arr = table_starts(widths)
    cdef const double[::1] lookup = lookup_arr
    cdef const Py_ssize_t[::1] starts = starts_arr
    out_arr = np.zeros(m)
    cdef double[::1] out = out_arr
    cdef double total
    if n_bases == 0:
        return out_arr
    with nogil:
        for d in range(m):
            total = 0.0
            for f in range(n_bases):
                total += lookup[starts[f] + bins[d, f]]
            out[d] = total
    return out_arr


def binned_transpose(const bin_t[:, ::1] bins, const Py_ssize_t[::1] widths,
                     const double[::1] u, const Py_ssize_t[::1] group_ptr):
    """float64 (G, d): row g is X_g^T u_g for the rows group_ptr[g]:group_ptr[g + 1] of X
    (group_ptr from 0 to m, non-decreasing; not checked here): per base the histogram
    h_f[b] of u over the group's bins, one pass over them (rows with u_d = 0 skipped),
    then out_{off_f + j} = sum_{b > j} h_f[b]."""
    cdef Py_ssize_t n_groups = group_ptr.shape[0] - 1, n_bases = widths.shape[0]
    cdef Py_ssize_t n_features = 0, g, d, f, j, off, start
    for f in range(n_bases):
        n_features += widths[f]
    starts_arr = table_starts(widths)
    cdef const Py_ssize_t[::1] starts = starts_arr
    hist_arr = np.zeros(n_features + n_bases)
    cdef double[::1] hist = hist_arr
    out_arr = np.zeros((n_groups, n_features))
    cdef double[:, ::1] out = out_arr
    cdef double weight, total
    with nogil:
        for g in range(n_groups):
            for d in range(group_ptr[g], group_ptr[g + 1]):
                weight = u[d]
                if weight == 0.0:
                    continue
                for f in range(n_bases):
                    hist[starts[f] + bins[d, f]] += weight
            off = 0
            for f in range(n_bases):
                start = starts[f]
                total = 0.0
                for j in range(widths[f] - 1, -1, -1):
                    total += hist[start + j + 1]
                    out[g, off + j] = total
                for j in range(widths[f] + 1):
                    hist[start + j] = 0.0
                off += widths[f]
    return out_arr
