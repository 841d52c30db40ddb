"""Sparse X without importing scipy: what the training and scoring commands do with the CSR
arrays the reader produces (svmmap.kernels._kernel_inputs.CSRArrays), so that a run that does not
need scipy does not pay for its import (about 0.1 s: issue 23).

X is one of: a 2-d ndarray (the reader's dense layout, or the caller's), a scipy.sparse
matrix (the public type: the estimators and ``svmmap.data.io.load_svmlight``), CSRArrays (the
reader's arrays of a sparse file, in the commands; the fused kernels read them as they
are), or BinnedArrays (binned features held implicitly, svmmap.features: scored and
gathered through their bins, never as their indicator matrix).  A scipy matrix can only
exist once scipy.sparse has been imported, so ``is_scipy_sparse`` asks scipy only then.
What needs scipy (binning, an estimator, the per-example hooks' row slices) turns
CSRArrays into a scipy matrix with ``as_scipy``, which imports scipy there and then.
"""

import sys

import numpy as np

from ._binned_rows import indicator_scores, lookup_scores
from ._csr_rows import csr_scores, csr_take_rows, csr_to_dense, dense_scores
from ._kernel_inputs import BinnedArrays, CSRArrays, checked_bins


def is_scipy_sparse(X):
    """True for a scipy.sparse matrix or array (without importing scipy)."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(X)


def is_sparse(X):
    """True for CSRArrays or a scipy.sparse matrix."""
    return isinstance(X, CSRArrays) or is_scipy_sparse(X)


def as_scipy(X):
    """A scipy.sparse.csr_matrix of CSRArrays (sharing their arrays); anything else as it is."""
    if not isinstance(X, CSRArrays):
        return X
    import scipy.sparse as sp

    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=X.shape, copy=False)


def indicator_matrix(X):
    """The explicit scipy CSR (float64) indicator matrix of BinnedArrays X: row d has ones at
    columns off_f + [0, b_{d,f}) of every base f.  For users (inspection, export) and the
    per-example hooks' one-query slices (``row_block``), never for training at scale."""
    import scipy.sparse as sp

    bins, widths = checked_bins(X)
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64)
    lengths = bins.ravel().astype(np.int64)
    starts = np.broadcast_to(offsets, bins.shape).ravel()
    total = int(lengths.sum())
    run_begin = np.cumsum(lengths) - lengths  # where each run starts in the output
    indices = np.repeat(starts - run_begin, lengths) + np.arange(total)
    indptr = np.zeros(bins.shape[0] + 1, dtype=np.int64)
    np.cumsum(bins.sum(axis=1, dtype=np.int64), out=indptr[1:])
    return sp.csr_matrix((np.ones(total), indices, indptr), shape=X.shape)


def row_block(X, lo, hi):
    """Rows lo:hi of X as a matrix with ``@`` and ``.T`` (what the SVMstruct per-example
    hooks compute with): the ndarray's or scipy matrix's slice, the scipy slice of
    CSRArrays, the indicator matrix of those rows only of BinnedArrays."""
    if isinstance(X, BinnedArrays):
        return indicator_matrix(take_rows(X, np.arange(lo, hi, dtype=np.intp)))
    return as_scipy(X)[lo:hi]


def dense_if_no_larger(X):
    """CSRArrays X as its C-contiguous dense ndarray (the values' dtype) when that takes no
    more memory than X's three arrays -- at least 2/3 of the entries non-zero with float64
    values and int32 indices, 1/2 with float32 -- else X itself (anything else too).  The
    dense rows are also the faster ones: the fused passes score them and add them up a row
    of contiguous values at a time (svmmap.kernels._query_core), not a value at a time
    through its index."""
    if not isinstance(X, CSRArrays):
        return X
    m, d = X.shape
    if m * d * X.data.dtype.itemsize > X.data.nbytes + X.indices.nbytes + X.indptr.nbytes:
        return X
    return csr_to_dense(X.data, X.indices, X.indptr, d)


def take_rows(X, rows):
    """The rows ``rows`` (intp, each in [0, m), in that order) of X: for CSRArrays the
    gathered arrays (indices and indptr keep their dtype), for BinnedArrays the gathered
    bins, else ``X[rows]``."""
    if isinstance(X, BinnedArrays):
        return X._replace(bins=np.ascontiguousarray(X.bins[rows]),
                          shape=(len(rows), X.shape[1]))
    if not isinstance(X, CSRArrays):
        return X[rows]
    rows = np.ascontiguousarray(rows, dtype=np.intp)
    if len(rows) and (rows.min() < 0 or rows.max() >= X.shape[0]):
        raise IndexError(f"row index out of range for {X.shape[0]} rows")
    data, indices, indptr = csr_take_rows(X.data, X.indices, X.indptr, rows)
    return CSRArrays(data, indices, indptr, (len(rows), X.shape[1]))


def scores(X, w):
    """float64 (m,): X w for the rows of X (ndarray, scipy.sparse, CSRArrays or BinnedArrays).
    The values of CSRArrays and of a scipy CSR matrix (float64 or float32, indices and indptr
    int32 or intp of one type) are read in place and each row summed in float64 in stored
    order: the bits scipy's product gives, without its float64 copy of float32 values.  A
    float64 or float32 ndarray (the reader's dense layout) is read in place and each row
    summed in column order: the same bits as its CSR arrays give.  BinnedArrays: the weights of the
    indicators that are 1 summed in column order, the bits of the indicator matrix's CSR
    product (svmmap.kernels._binned_rows.indicator_scores; training scores by lookup instead,
    ``training_scores``)."""
    if isinstance(X, BinnedArrays):
        return indicator_scores(*checked_bins(X, values=False), _weights_of(X, w))
    if _scipy_csr_readable(X):
        X = CSRArrays(X.data, X.indices, X.indptr, X.shape)
    dense = isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype in (np.float64, np.float32)
    if not dense and not isinstance(X, CSRArrays):
        return np.asarray(X @ w, dtype=np.float64).ravel()
    w = np.ascontiguousarray(w, dtype=np.float64)
    if w.shape != (X.shape[1],):
        raise ValueError(f"w has shape {w.shape}, X has {X.shape[1]} columns")
    if dense:
        return dense_scores(X, w)
    if len(w) == 0:  # no columns, no stored values
        return np.zeros(X.shape[0])
    return csr_scores(X.data, X.indices, X.indptr, w)


def training_scores(X, w):
    """float64 (m,): X w as the training passes compute it -- for BinnedArrays by the
    per-base cumulative weights, s_d = sum_f L_f[b_{d,f}], L_f[b] = sum_{j < b} w_{off_f + j}
    (one table read per base: svmmap.kernels._binned_rows.lookup_scores, as the fused constraint
    passes), else ``scores(X, w)``."""
    if isinstance(X, BinnedArrays):
        return lookup_scores(*checked_bins(X, values=False), _weights_of(X, w))
    return scores(X, w)


def _weights_of(X, w):
    """w as a C-contiguous float64 vector of X's columns (ValueError otherwise)."""
    w = np.ascontiguousarray(w, dtype=np.float64)
    if w.shape != (X.shape[1],):
        raise ValueError(f"w has shape {w.shape}, X has {X.shape[1]} columns")
    return w


def _scipy_csr_readable(X):
    """Whether X is a scipy CSR matrix whose arrays csr_scores reads as they are."""
    if not is_scipy_sparse(X) or X.format != "csr" or X.ndim != 2:
        return False
    index_type = X.indices.dtype
    return (X.dtype in (np.float64, np.float32) and index_type in (np.int32, np.intp)
            and X.indptr.dtype == index_type and X.data.flags.c_contiguous
            and X.indices.flags.c_contiguous and X.indptr.flags.c_contiguous)
