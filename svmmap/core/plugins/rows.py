"""Constraint vectors kept as combinations of document rows, never as a queries x features
array.

Every plugin's constraint vector of query q is a combination of that query's document rows,

    dpsi_q = sum_{k in q} c_k phi_k         (and, with a bias column, [.; sum_{k in q} c_k]),

so one oracle pass is fully described by the document coefficients c (one per document) and
the queries it covers.  ``QueryRows`` is that n x d matrix D held as c: what the learners ask
of D is computed through X without forming it --

    D w          = per-query sums of c_k (x_k . w)                 (or the oracle's margins)
    v^T D        = X^T u,  u_k = v_q(k) c_k                        (1-slack: one d-vector,
                                                                    summed in the extension)
    D[chosen]    = the chosen rows only (n-slack adds those to its working set)

-- so the memory of a pass is O(documents + queries), whatever the number of features (at
10^5 sparse features a dense D of 10^4 queries would be 8 GB).  The coefficients are also
what makes the rows exact: they are the same numbers a dense D is computed from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

import numpy as np

from ...kernels._binned_rows import binned_transpose
from ...kernels._csr import take_rows
from ...kernels._csr import training_scores as row_scores
from ...kernels._kernel_inputs import BinnedArrays, CSRArrays, checked_bins
from ...kernels._map_kernels import combine_rows

if TYPE_CHECKING:
    from .._typing import FloatArray

    #: X as the kernels read it: dense rows, CSR arrays or binned features
    KernelX = Union[np.ndarray, CSRArrays, BinnedArrays]


class QueryRows:
    """The matrix D (n x d) of the constraint vectors of the queries ``queries`` of a
    grouped collection (module docstring).

    Parameters
    ----------
    X : the collection's features in grouped order as the kernels read them
        (``QueryCollection.kernel_X``: the ndarray, the CSRArrays of a sparse X, or the
        BinnedArrays of binned features; the original arrays, only read).
    coef : float64 (m,), the coefficient c_k of every document of the collection (documents
        of queries outside ``queries`` are ignored).
    ptr : intp (N + 1,), the collection's query offsets; ``query_of_doc`` its query index of
        every document.
    queries : intp (n,), the collection's query numbers that are D's rows, in order, or None
        for all N.
    margins, at : optional D w already known (the fused pass computes it from its scores) and
        the w it belongs to: ``D @ at`` returns ``margins`` without a pass over X.
    bias : append a column holding sum_{k in q} c_k (a classifier's free bias).
    sums : optional (v, groups, n_groups, S): the group sums the fused pass formed
        (RankingPlugin.group_sums_in_pass): ``group_sums(v, groups, n_groups)`` returns S
        without a pass over X.
    """

    __array_ufunc__ = None  # ndarray @ QueryRows calls QueryRows.__rmatmul__

    def __init__(self, X: KernelX, coef: FloatArray, ptr: np.ndarray, query_of_doc: np.ndarray,
                 queries: np.ndarray | None = None, margins: np.ndarray | None = None,
                 at: FloatArray | None = None, bias: bool = False,
                 sums: tuple | None = None):
        self.X, self.coef, self.ptr, self.query_of_doc = X, coef, ptr, query_of_doc
        self.queries = queries
        self.bias = bias
        self._margins, self._at = margins, at
        self._sums = sums
        n = len(ptr) - 1 if queries is None else len(queries)
        self.shape = (n, X.shape[1] + int(bias))

    def __len__(self):
        return self.shape[0]

    def _rows_of(self, per_query):
        """The entries of a per-query array of the collection that belong to D's rows."""
        return per_query if self.queries is None else per_query[self.queries]

    def _per_query(self, values):
        """A per-query array of the collection: ``values`` on D's rows, 0 elsewhere."""
        if self.queries is None:
            return np.asarray(values, dtype=np.float64)
        per_query = np.zeros(len(self.ptr) - 1)
        per_query[self.queries] = values
        return per_query

    def __matmul__(self, w):
        """D w: the margin w.dpsi_q of every row."""
        w = np.asarray(w, dtype=np.float64)
        if w.ndim != 1:
            return NotImplemented
        if self._at is not None and (w is self._at or np.array_equal(w, self._at)):
            return self._margins
        d = self.X.shape[1]
        scores = row_scores(self.X, w[:d])
        if self.bias:
            scores = scores + w[d]
        sums = np.bincount(self.query_of_doc, weights=self.coef * scores,
                           minlength=len(self.ptr) - 1)
        return self._rows_of(sums)

    def __rmatmul__(self, v):
        """v^T D = sum_i v_i dpsi_i, one d-vector (X^T u, no row of D formed)."""
        v = np.asarray(v, dtype=np.float64)
        if v.shape != (self.shape[0],):
            return NotImplemented
        per_query = self._per_query(v)
        total = combine_rows(self.X, self.coef, self.ptr, per_query)
        if not self.bias:
            return total
        sums = np.bincount(self.query_of_doc, weights=self.coef, minlength=len(self.ptr) - 1)
        return np.append(total, per_query @ sums)

    def group_sums(self, v: FloatArray, groups: np.ndarray, n_groups: int) -> FloatArray:
        """sum_{i: groups_i = g} v_i dpsi_i for every group g, (n_groups, d): the cut groups'
        vectors (svmstruct_api.cut_groups) in one pass over X, summed in the same order as
        one ``v_g @ D`` per group (v zero outside g) and so to the same bits; the sums the
        fused pass formed where they are these (``sums``)."""
        v = np.asarray(v, dtype=np.float64)
        groups = np.asarray(groups, dtype=np.intp)
        if v.shape != (self.shape[0],) or groups.shape != v.shape:
            raise ValueError("group sums need one weight and one group per row")
        if self._sums is not None and not self.bias:
            known_v, known_groups, known_n, sums = self._sums
            if n_groups == known_n and np.array_equal(v, known_v) \
                    and np.array_equal(groups, known_groups):
                return sums
        per_query = self._per_query(v)
        if self.queries is None:
            targets = groups
        else:
            targets = np.zeros(len(self.ptr) - 1, dtype=np.intp)
            targets[self.queries] = groups
        total = combine_rows(self.X, self.coef, self.ptr, per_query, targets, n_groups)
        if not self.bias:
            return total
        sums = np.bincount(self.query_of_doc, weights=self.coef, minlength=len(self.ptr) - 1)
        return np.column_stack([total, np.bincount(targets, per_query * sums, n_groups)])

    def basis_coefficients(self, v: FloatArray) -> FloatArray:
        """u with v^T D = X^T u (DocumentBasis): u_k = v_q(k) c_k, 0 outside D's rows."""
        v = np.asarray(v, dtype=np.float64)
        if v.shape != (self.shape[0],) or self.bias:
            raise ValueError("basis coefficients need one weight per row and no bias column")
        return self._per_query(v)[self.query_of_doc] * self.coef

    def sum(self, axis: int | None = None) -> FloatArray:
        """The sum of the rows (axis=0 only), as a d-vector."""
        if axis != 0:
            raise ValueError("QueryRows sums over its rows only (axis=0)")
        return np.ones(self.shape[0]) @ self

    def mean(self, axis: int | None = None) -> FloatArray:
        """The mean of the rows (axis=0 only), as a d-vector."""
        if axis != 0:
            raise ValueError("QueryRows averages over its rows only (axis=0)")
        return np.full(self.shape[0], 1.0 / self.shape[0]) @ self

    def __getitem__(self, index):
        """Rows of D as a dense array (an int gives one row): only the rows asked for."""
        single = np.ndim(index) == 0
        rows = np.arange(self.shape[0])[index]
        chosen = np.atleast_1d(rows) if self.queries is None else \
            self.queries[np.atleast_1d(rows)]
        starts, stops = self.ptr[chosen], self.ptr[chosen + 1]
        sizes = stops - starts
        offsets = np.zeros(len(chosen) + 1, dtype=np.intp)
        np.cumsum(sizes, out=offsets[1:])
        docs = np.repeat(starts - offsets[:-1], sizes) + np.arange(offsets[-1])
        row_of_doc = np.repeat(np.arange(len(chosen)), sizes)
        coef = self.coef[docs]
        # sum_k c_k x_k of each row, added document by document in order (np.add.at); binned
        # X: per row, the histogram of c over its documents' bins and its suffix sums
        if isinstance(self.X, BinnedArrays):
            out = binned_transpose(*checked_bins(take_rows(self.X, docs), values=False),
                                   coef, offsets)
        elif isinstance(self.X, CSRArrays):
            out = np.zeros((len(chosen), self.X.shape[1]))
            rows = take_rows(self.X, docs)
            stored = np.diff(rows.indptr)
            np.add.at(out, (np.repeat(row_of_doc, stored), rows.indices),
                      np.repeat(coef, stored) * rows.data)
        else:
            out = np.zeros((len(chosen), self.X.shape[1]))
            np.add.at(out, row_of_doc, coef[:, None] * np.asarray(self.X)[docs])
        if self.bias:
            out = np.hstack([out, np.bincount(row_of_doc, weights=coef,
                                              minlength=len(chosen))[:, None]])
        return out[0] if single else out

    def __array__(self, dtype=None, copy=None):
        rows = self[np.arange(self.shape[0])]
        return rows if dtype is None else rows.astype(dtype)


class DocumentBasis:
    """The documents' rows X (m x d) as the basis in which the 1-slack learner may keep its
    constraints: every constraint vector is X^T u for a per-document u
    (``QueryRows.basis_coefficients``), so a working set of K constraints can be held as K
    m-long u instead of K d-long vectors, and its Gram entries formed as
    a_k.a_l = u_k.(X a_l) (svmstruct_api.qp.WorkingSet).  ``forward(w)`` is X w and
    ``backward(u)`` is X^T u, both one pass over X's stored values, summed in the
    extension as the rest of training sums them."""

    def __init__(self, X: KernelX, ptr: np.ndarray):
        self.X = X
        self.ptr = ptr
        self.n_coefficients = X.shape[0]
        self._ones = np.ones(len(ptr) - 1)

    def forward(self, w: FloatArray) -> FloatArray:
        """X w (m,)."""
        return row_scores(self.X, w)

    def backward(self, u: FloatArray) -> FloatArray:
        """X^T u (d,)."""
        return combine_rows(self.X, u, self.ptr, self._ones)
