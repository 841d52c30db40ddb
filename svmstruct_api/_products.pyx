# cython: language_level=3
"""The working set's Gram rows (svmstruct_api.qp.WorkingSet): the products of new constraint
rows with all rows, in one pass over the rows, by _vector_ops.h's dot products (built for
AVX2 and baseline x86-64, the same bits either way; one thread, no BLAS pool: see qp's
module doc)."""

import numpy as np


cdef extern from "_vector_ops.h" nogil:
    void row_products "svmstruct_row_products"(Py_ssize_t n_a, const double *a,
                                               Py_ssize_t a_stride, Py_ssize_t n_b,
                                               const double *b, Py_ssize_t b_stride,
                                               Py_ssize_t n, double *out,
                                               Py_ssize_t out_stride)


def gram_rows(new_rows, all_rows):
    """(len(new_rows), len(all_rows)) array of the dot products new_k . row_l, each summed in
    eight interleaved partial sums (_vector_ops.h), whatever the CPU (rows copied to C order
    first where they are not in it: a column selection)."""
    cdef const double[:, ::1] new = np.ascontiguousarray(new_rows, dtype=np.float64)
    cdef const double[:, ::1] rows = np.ascontiguousarray(all_rows, dtype=np.float64)
    if new.shape[1] != rows.shape[1]:
        raise ValueError("new and rows have different lengths")
    out_arr = np.zeros((new.shape[0], rows.shape[0]))
    cdef double[:, ::1] out = out_arr
    if new.shape[0] == 0 or rows.shape[0] == 0 or new.shape[1] == 0:
        return out_arr
    with nogil:
        row_products(new.shape[0], &new[0, 0], new.shape[1], rows.shape[0], &rows[0, 0],
                     rows.shape[1], new.shape[1], &out[0, 0], out.shape[1])
    return out_arr
