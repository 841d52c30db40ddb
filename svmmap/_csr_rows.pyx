# cython: language_level=3, boundscheck=False, wraparound=False
"""Two operations on a CSR matrix held as plain arrays (``data``, ``indices``, ``indptr``):
the rows' scores X w and a gather of rows -- what the training and scoring commands need of
scipy.sparse, without importing it (svmmap._csr).

Values float64 or float32, indices and indptr both int32 or both intp.  The score of row i is
summed in stored order, ``s_i = sum_{j = indptr[i]}^{indptr[i+1]-1} data[j] w[indices[j]]``,
in float64: the bits scipy.sparse's csr_matvec gives.
"""

import numpy as np

ctypedef fused value_t:
    double
    float

ctypedef fused index_t:
    int
    Py_ssize_t


def csr_scores(const value_t[::1] data, const index_t[::1] indices,
               const index_t[::1] indptr, const double[::1] w):
    """float64 (m,): the score data-row i . w of every row, m = len(indptr) - 1."""
    cdef Py_ssize_t m = indptr.shape[0] - 1, i, j
    out_arr = np.zeros(m)
    cdef double[::1] out = out_arr
    cdef double total
    with nogil:
        for i in range(m):
            total = 0.0
            for j in range(indptr[i], indptr[i + 1]):
                total += data[j] * w[indices[j]]
            out[i] = total
    return out_arr


def csr_take_rows(const value_t[::1] data, const index_t[::1] indices,
                  const index_t[::1] indptr, const Py_ssize_t[::1] rows):
    """(data, indices, indptr) of the rows ``rows`` (in that order, repeats allowed) of the
    matrix, in the input's dtypes; rows are not checked here (svmmap._csr.take_rows does)."""
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
