# cython: language_level=3, boundscheck=False, wraparound=False
"""Operations on a CSR matrix held as plain arrays (``data``, ``indices``, ``indptr``): the
rows' scores X w, a gather of rows and the dense matrix -- what the training and scoring commands need of
scipy.sparse, without importing it (svmmap.kernels._csr) -- and the per-query normalisation check of
svmmap.core.normalize, in one pass over the values.

Values float64 or float32, indices and indptr both int32 or both intp.  The score of row i is
summed in stored order, ``s_i = sum_{j = indptr[i]}^{indptr[i+1]-1} data[j] w[indices[j]]``,
in float64: the bits scipy.sparse's csr_matvec gives.  A dense (m, d) X (the reader's dense
layout) is scored the same way over its d columns in order,
``s_i = sum_c X[i, c] w[c]``: a zero adds nothing, so the bits are those of the CSR arrays
of the same values.
"""

import numpy as np

ctypedef fused value_t:
    double
    float

ctypedef fused index_t:
    int
    Py_ssize_t


cdef inline double _csr_row(const value_t *data, const index_t *indices, Py_ssize_t lo,
                           Py_ssize_t hi, const double *w) noexcept nogil:
    """The stored values lo .. hi - 1 of a CSR row times their weights, summed in stored
    order."""
    cdef double total = 0.0
    cdef Py_ssize_t j
    for j in range(lo, hi):
        total += data[j] * w[indices[j]]
    return total


cdef inline double _dense_row(const value_t[:, :] X, Py_ssize_t i,
                              const double[::1] w) noexcept nogil:
    """Row i of X times w, summed in column order."""
    cdef double total = 0.0
    cdef Py_ssize_t c
    for c in range(X.shape[1]):
        total += X[i, c] * w[c]
    return total


def csr_scores(const value_t[::1] data, const index_t[::1] indices,
               const index_t[::1] indptr, const double[::1] w):
    """float64 (m,): the score data-row i . w of every row, m = len(indptr) - 1."""
    cdef Py_ssize_t m = indptr.shape[0] - 1, i
    out_arr = np.zeros(m)
    cdef double[::1] out = out_arr
    if data.shape[0] == 0:  # no stored value: every score is 0
        return out_arr
    with nogil:
        for i in range(m):
            out[i] = _csr_row(&data[0], &indices[0], indptr[i], indptr[i + 1], &w[0])
    return out_arr


def dense_scores(const value_t[:, :] X, const double[::1] w):
    """float64 (m,): the score X[i] . w of every row of X, summed in column order in float64
    (X read in place, whatever its storage and strides)."""
    cdef Py_ssize_t i
    out_arr = np.zeros(X.shape[0])
    cdef double[::1] out = out_arr
    with nogil:
        for i in range(X.shape[0]):
            out[i] = _dense_row(X, i, w)
    return out_arr


def csr_to_dense(const value_t[::1] data, const index_t[::1] indices,
                 const index_t[::1] indptr, Py_ssize_t n_features):
    """The C-contiguous (m, n_features) ndarray of the matrix, m = len(indptr) - 1, in the
    values' dtype (zeros where nothing is stored); indices are not checked here
    (svmmap.kernels._csr.dense_if_no_larger's callers hold checked arrays)."""
    cdef Py_ssize_t m = indptr.shape[0] - 1, i, j
    out_arr = np.zeros((m, n_features), dtype=np.asarray(data).dtype)
    cdef value_t[:, ::1] out = out_arr
    if data.shape[0] == 0 or n_features == 0:
        return out_arr
    with nogil:
        for i in range(m):
            for j in range(indptr[i], indptr[i + 1]):
                out[i, indices[j]] = data[j]
    return out_arr


def csr_take_rows(const value_t[::1] data, const index_t[::1] indices,
                  const index_t[::1] indptr, const Py_ssize_t[::1] rows):
    """(data, indices, indptr) of the rows ``rows`` (in that order, repeats allowed) of the
    matrix, in the input's dtypes; rows are not checked here (svmmap.kernels._csr.take_rows does)."""
    cdef Py_ssize_t n = rows.shape[0], k, j, start, stop, at = 0
    new_indptr_arr = np.empty(n + 1, dtype=np.asarray(indptr).dtype)
    cdef index_t[::1] new_indptr = new_indptr_arr
    new_indptr[0] = 0
    for k in range(n):
        at += indptr[rows[k] + 1] - indptr[rows[k]]
        new_indptr[k + 1] = <index_t> at
    new_data_arr = np.empty(at, dtype=np.asarray(data).dtype)
    new_indices_arr = np.empty(at, dtype=np.asarray(indices).dtype)
    cdef value_t[::1] new_data = new_data_arr
    cdef index_t[::1] new_indices = new_indices_arr
    at = 0
    with nogil:
        for k in range(n):
            start, stop = indptr[rows[k]], indptr[rows[k] + 1]
            for j in range(start, stop):
                new_data[at] = data[j]
                new_indices[at] = indices[j]
                at += 1
    return new_data_arr, new_indices_arr, new_indptr_arr


def csr_query_normalized(const value_t[::1] data, const index_t[::1] indices,
                         const index_t[::1] indptr, const Py_ssize_t[::1] ptr,
                         Py_ssize_t n_columns):
    """Whether the non-zero values of every query of at least two documents (query g: rows
    ptr[g]:ptr[g + 1]) look min-max normalised within the query: in each column, their
    maximum is 1 and some document of the query has no value (a 0) there.  -1 when no such
    query has a non-zero value, else 1 (all do) or 0.  One pass over the values, with
    per-column counts and maxima for the current query (O(n_columns) memory); the values
    are taken to lie in [0, 1] (svmmap.core.normalize.per_query_normalized checks that first)."""
    cdef Py_ssize_t n_queries = ptr.shape[0] - 1, g, i, j, k, c, size, n_touched
    cdef bint any_group = False
    counts_arr = np.zeros(n_columns, dtype=np.intp)
    highest_arr = np.zeros(n_columns)
    touched_arr = np.empty(n_columns, dtype=np.intp)
    cdef Py_ssize_t[::1] counts = counts_arr, touched = touched_arr
    cdef double[::1] highest = highest_arr
    cdef double v
    cdef bint failed = False
    with nogil:
        for g in range(n_queries):
            if failed:
                break
            size = ptr[g + 1] - ptr[g]
            if size < 2:
                continue
            n_touched = 0
            for i in range(ptr[g], ptr[g + 1]):
                for j in range(indptr[i], indptr[i + 1]):
                    v = data[j]
                    if v == 0:
                        continue
                    c = indices[j]
                    if counts[c] == 0:
                        touched[n_touched] = c
                        n_touched += 1
                    counts[c] += 1
                    if v > highest[c]:
                        highest[c] = v
            for k in range(n_touched):
                c = touched[k]
                if counts[c] >= size or highest[c] != 1.0:
                    failed = True
                counts[c] = 0
                highest[c] = 0.0
            if n_touched:
                any_group = True
    if failed:
        return 0
    return 1 if any_group else -1


def dense_query_normalized(const value_t[:, :] X, const Py_ssize_t[::1] ptr):
    """Whether the rows of a dense X look min-max normalised within each query (query g: rows
    ptr[g]:ptr[g + 1], ptr running from 0 to X's rows): every value in [0, 1] and, in every
    query of at least two documents, every column's minimum 0 and its maximum 0 or 1, with
    some maximum 1.  One pass over the values (stopping at the first that fails), with the
    current query's per-column minima and maxima (O(columns) memory)."""
    cdef Py_ssize_t n_queries = ptr.shape[0] - 1, d = X.shape[1], g, i, c
    low_arr, high_arr = np.empty(d), np.empty(d)
    cdef double[::1] low = low_arr, high = high_arr
    cdef double v
    cdef bint failed = False, any_one = False
    with nogil:
        for g in range(n_queries):
            if failed:
                break
            for c in range(d):
                low[c] = 1.0
                high[c] = 0.0
            for i in range(ptr[g], ptr[g + 1]):
                for c in range(d):
                    v = X[i, c]
                    if not (v >= 0.0 and v <= 1.0):
                        failed = True
                    if v < low[c]:
                        low[c] = v
                    if v > high[c]:
                        high[c] = v
            if failed or ptr[g + 1] - ptr[g] < 2:
                continue
            for c in range(d):
                if low[c] != 0.0 or (high[c] != 0.0 and high[c] != 1.0):
                    failed = True
                if high[c] == 1.0:
                    any_one = True
    return any_one and not failed
