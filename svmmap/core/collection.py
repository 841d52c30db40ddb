"""A query collection: documents grouped by query once, validated once, and shared by every
estimator, feature map, learner, plugin, kernel, baseline and metric (nothing downstream
re-groups or re-checks documents).

A collection of ``m`` documents with a query id each is put in *grouped order*: a stable
permutation ``rows`` makes the documents of every query contiguous (file order is kept inside
a query), and offsets ``ptr`` say that the documents of query ``g`` are grouped positions
``ptr[g]:ptr[g + 1]``, i.e. the input rows ``rows[ptr[g]:ptr[g + 1]]``.  Queries are numbered
in order of first appearance.  ``QueryCollection.from_qid(qid)`` is the grouping alone (no
features or labels), which is what the metrics and the per-query feature transforms need.

What the kernels read is held in their form, made once: X as a C-contiguous float64 ndarray
or the arrays of a CSR matrix with float64 data and sorted intp indices (``kernel_X``; scipy
itself keeps int32 indices when they fit; float32 values are kept as they are), or, for
binned features, their bins (svmmap.kernels._kernel_inputs.BinnedArrays, put in place of X by
BinnedFeatureMap.fit_transform_collection: gathered and scored as bins), the
relevance flags as uint8, ``ptr`` as intp and the query of every document.

Sparse X is a scipy.sparse matrix (the estimators' input) or the reader's CSRArrays (the
commands': svmmap.kernels._csr, so that a command run imports no scipy); grouping gathers rows of
either without converting it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputFormatError
from ..kernels._csr import is_scipy_sparse, is_sparse, take_rows
from ..kernels._kernel_inputs import CSRArrays, csr_for_kernels
from .options import MAX_ABS_VALUE

if TYPE_CHECKING:
    from typing import Any

    import numpy.typing as npt

    from ._typing import FloatArray, Vector

    #: X in the form the kernels read (``check_features``): an ndarray, a scipy CSR matrix,
    #: CSRArrays, or a feature map's BinnedArrays
    CheckedX = Any
    IntpArray = npt.NDArray[np.intp]


def check_features(X: Any) -> CheckedX:
    """Return X as float64 CSR with sorted indices (if sparse: scipy's, or CSRArrays) or a
    C-contiguous float64 2-d ndarray -- float32 when X's values are float32 (kept, not copied:
    the kernels read them in place and compute in float64) -- all finite and at most
    MAX_ABS_VALUE in magnitude.  X itself when it already is (a CSR input's int32 indices are
    kept); a copy only of what must change (the caller's matrix is never modified)."""
    values_of = X.data if isinstance(X, CSRArrays) else X
    value_type = np.float32 if getattr(values_of, "dtype", None) == np.float32 else np.float64
    if isinstance(X, CSRArrays):
        if X.data.dtype != value_type:
            X = X._replace(data=X.data.astype(value_type))
        values = X.data
    elif is_scipy_sparse(X):
        import scipy.sparse as sp  # loaded already: X is scipy's

        if not (X.format == "csr" and X.dtype == value_type):
            X = sp.csr_matrix(X, dtype=value_type)
        if not X.has_sorted_indices:
            X = X.sorted_indices()
        values = X.data
    else:
        X = np.ascontiguousarray(X, dtype=value_type)
        if X.ndim != 2:
            raise InputFormatError(f"X must be two-dimensional, got shape {X.shape}")
        values = X
    # min and max find NaN (which they propagate), infinities and the largest magnitude
    # without a temporary of X's size
    lowest, highest = (float(values.min()), float(values.max())) if values.size else (0.0, 0.0)
    if not (np.isfinite(lowest) and np.isfinite(highest)):
        raise InputFormatError("X contains NaN or infinite values")
    if max(highest, -lowest) > MAX_ABS_VALUE:
        flat = int(np.argmax(np.abs(values)))
        if is_sparse(X):
            row = int(np.searchsorted(X.indptr, flat, side="right")) - 1
            place: tuple[int, ...] = (row, int(X.indices[flat]))
        else:
            place = tuple(int(i) for i in np.unravel_index(flat, X.shape))
        raise InputFormatError(
            f"X[{place[0]}, {place[1]}] = {values.flat[flat]:g}: feature values must be at most "
            f"{MAX_ABS_VALUE:g} in magnitude (scale the features)")
    return X


def check_labels(y: Vector, n_rows: int) -> FloatArray:
    """y as float64 labels, one per row, all finite."""
    y = np.asarray(y, dtype=np.float64).ravel()
    if len(y) != n_rows:
        raise InputFormatError(f"X has {n_rows} rows but y has {len(y)} labels")
    if not np.all(np.isfinite(y)):
        raise InputFormatError("y contains NaN or infinite values")
    return y


def query_index(ptr: IntpArray) -> IntpArray:
    """The query number of every grouped document: g repeated ptr[g + 1] - ptr[g] times."""
    sizes = np.diff(ptr)
    return np.repeat(np.arange(len(sizes), dtype=np.intp), sizes)


def check_sample_weight(sample_weight: Vector | Mapping[Any, float], qid: Vector,
                        n_rows: int) -> FloatArray:
    """One weight per row from ``sample_weight``: an array of n_rows weights (one per
    document), or a mapping qid -> weight with every query of ``qid`` in it.  Weights must be
    finite and non-negative."""
    if isinstance(sample_weight, Mapping):
        ids, inverse = np.unique(np.asarray(qid).ravel(), return_inverse=True)
        missing = [q for q in ids.tolist() if q not in sample_weight]
        if missing:
            raise InputFormatError(f"sample_weight has no weight for query {missing[0]!r} "
                                   f"({len(missing)} queries without a weight)")
        try:
            per_query = np.array([sample_weight[q] for q in ids.tolist()], dtype=np.float64)
        except (TypeError, ValueError):
            raise InputFormatError("sample_weight: every weight must be a number") from None
        weights = per_query[inverse.ravel()]
    else:
        try:
            weights = np.asarray(sample_weight, dtype=np.float64).ravel()
        except (TypeError, ValueError):
            raise InputFormatError("sample_weight must hold numbers") from None
        if len(weights) != n_rows:
            raise InputFormatError(f"X has {n_rows} rows but sample_weight has {len(weights)} "
                                   "weights (give one per document, or a mapping qid -> weight)")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise InputFormatError("sample_weight must be finite and non-negative")
    return weights


@dataclass(frozen=True)
class QueryCollection:
    """Documents in grouped order (module docstring): query g is rows ptr[g]:ptr[g + 1].

    Attributes
    ----------
    X : the features in grouped order (see ``check_features``), or None for a grouping alone.
    labels : float64 (m,) in grouped order, or None for a grouping alone; relevant: label > 0.
    ptr : intp (n_queries + 1,) query offsets.
    query_ids : the id of every query, in order of first appearance.
    rows : intp (m,), ``rows[k]`` is the input row of the k-th grouped document.
    """

    X: CheckedX
    labels: Any
    ptr: np.ndarray
    query_ids: np.ndarray
    rows: np.ndarray

    @classmethod
    def from_qid(cls, qid: Vector) -> QueryCollection:
        """The grouping of the rows of a query-id array (ints or strings; need not be
        contiguous): a collection without features or labels."""
        qid = np.asarray(qid)
        if qid.ndim != 1:
            raise InputFormatError(f"qid must be one-dimensional, got shape {qid.shape}")
        if qid.size == 0:
            raise InputFormatError("no documents: qid is empty")
        if qid.dtype.kind == "f" and not np.all(np.isfinite(qid)):
            raise InputFormatError("qid contains NaN or infinite values")
        uniq, first_row, inverse = np.unique(qid, return_index=True, return_inverse=True)
        rank_of_unique = np.empty(len(uniq), dtype=np.intp)
        rank_of_unique[np.argsort(first_row, kind="stable")] = np.arange(len(uniq))
        group = rank_of_unique[inverse.ravel()]
        rows = np.argsort(group, kind="stable").astype(np.intp)
        ptr = np.zeros(len(uniq) + 1, dtype=np.intp)
        np.cumsum(np.bincount(group, minlength=len(uniq)), out=ptr[1:])
        return cls(X=None, labels=None, ptr=ptr, query_ids=qid[np.sort(first_row)], rows=rows)

    @classmethod
    def from_arrays(cls, X: Any, y: Vector, qid: Vector) -> QueryCollection:
        """Check X (see ``check_features``), y and qid once and group the documents."""
        X = check_features(X)
        y = check_labels(y, X.shape[0])
        qid = np.asarray(qid).ravel()
        if len(qid) != X.shape[0]:
            raise InputFormatError(f"X has {X.shape[0]} rows but qid has {len(qid)} entries")
        return cls.from_checked(X, y, qid)

    @classmethod
    def from_validated(cls, X: Any, y: Vector, qid: Vector) -> QueryCollection:
        """The collection of an estimator's training data after scikit-learn's validate_data
        (y numbers, finite, one per row: left as they are) and svmmap.core.base.check_qid (one
        query id per row): X's values are scanned (``check_features``), nothing else."""
        return cls.from_checked(check_features(X), np.asarray(y, dtype=np.float64), qid)

    @classmethod
    def from_checked(cls, X: CheckedX, y: FloatArray, qid: Vector) -> QueryCollection:
        """Group documents a boundary has already checked -- X in ``check_features`` form,
        y float64 finite labels and qid one id per row (``from_arrays``, or the reader
        svmmap.data.io.load_svmlight, which refuses what ``check_features`` refuses, naming the
        file and line) -- without scanning their values again."""
        grouping = cls.from_qid(qid)
        if not grouping.is_contiguous:
            X = take_rows(X, grouping.rows)
            y = y[grouping.rows]
        return replace(grouping, X=X, labels=y)

    def with_features(self, X: CheckedX) -> QueryCollection:
        """The same documents with other features (rows in this collection's grouped order,
        already in ``check_features`` form: a transform's output is not checked again)."""
        if X.shape[0] != len(self.rows):
            raise ValueError(f"{X.shape[0]} feature rows for {len(self.rows)} documents")
        return replace(self, X=X)

    def grouping(self) -> QueryCollection:
        """The grouping of this collection's own (grouped) rows: ptr and query ids, rows the
        identity, no features or labels."""
        return QueryCollection(X=None, labels=None, ptr=self.ptr, query_ids=self.query_ids,
                               rows=np.arange(self.n_documents, dtype=np.intp))

    # -- shape ----------------------------------------------------------------------------

    @property
    def n_queries(self) -> int:
        """The number of queries."""
        return len(self.ptr) - 1

    @property
    def n_documents(self) -> int:
        """The number of documents."""
        return len(self.rows)

    @property
    def n_features(self) -> int:
        """The number of feature columns of X."""
        return self.X.shape[1]

    @cached_property
    def sizes(self) -> IntpArray:
        """Number of documents of each query."""
        return np.diff(self.ptr)

    @cached_property
    def is_contiguous(self) -> bool:
        """True when the input rows were already grouped (rows is the identity)."""
        return bool(np.all(self.rows == np.arange(len(self.rows))))

    # -- what the kernels read, made once -------------------------------------------------

    @cached_property
    def grouped_qid(self) -> np.ndarray:
        """The query id of every grouped document."""
        return self.query_ids[self.query_of_doc]

    @cached_property
    def input_qid(self) -> np.ndarray:
        """The query id of every input row, in input order (``rows`` a permutation: a
        collection made by ``from_arrays`` or ``from_checked``, not a ``subset``)."""
        qid = np.empty(len(self.rows), dtype=self.query_ids.dtype)
        qid[self.rows] = self.grouped_qid
        return qid

    @cached_property
    def query_of_doc(self) -> IntpArray:
        """intp (m,): the query number of every grouped document."""
        return query_index(self.ptr)

    @cached_property
    def relevant(self) -> npt.NDArray[np.uint8]:
        """uint8 (m,): 1 for a relevant document (label > 0)."""
        return (self.labels > 0).astype(np.uint8)

    @cached_property
    def kernel_X(self) -> CheckedX:
        """X as the fused kernels read it: the ndarray itself, or the CSRArrays of a sparse X
        (intp indices: converted here, once per collection)."""
        return csr_for_kernels(self.X) if is_sparse(self.X) else self.X

    def relevant_counts(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(|P|, |N|) of every query."""
        n_rel = np.bincount(self.query_of_doc, weights=self.relevant,
                            minlength=self.n_queries).astype(np.int64)
        return n_rel, self.sizes - n_rel

    # -- sub-collections ------------------------------------------------------------------

    def subset(self, queries: Vector) -> QueryCollection:
        """The collection restricted to the given query numbers (kept in their order)."""
        queries = np.asarray(queries, dtype=np.intp)
        starts, stops = self.ptr[queries], self.ptr[queries + 1]
        sizes = stops - starts
        ptr = np.zeros(len(queries) + 1, dtype=np.intp)
        np.cumsum(sizes, out=ptr[1:])
        docs = np.repeat(starts - ptr[:-1], sizes) + np.arange(ptr[-1])
        return QueryCollection(X=None if self.X is None else take_rows(self.X, docs),
                               labels=None if self.labels is None else self.labels[docs],
                               ptr=ptr, query_ids=self.query_ids[queries], rows=self.rows[docs])

    def query_weights(self, weights: FloatArray, queries: IntpArray | None = None
                      ) -> FloatArray:
        """v_q of every query (of the query numbers ``queries``, if given) from per-row
        weights (``check_sample_weight``, indexed by the rows the collection was made from),
        which must be constant within each of those queries."""
        grouped = weights[self.rows]
        starts = self.ptr[:-1]
        lowest = np.minimum.reduceat(grouped, starts) if len(grouped) else grouped
        highest = np.maximum.reduceat(grouped, starts) if len(grouped) else grouped
        queries = np.arange(self.n_queries) if queries is None else queries
        lowest, highest = lowest[queries], highest[queries]
        varying = np.flatnonzero(lowest != highest)
        if len(varying):
            raise InputFormatError(
                f"sample_weight varies within query {self.query_ids[queries[varying[0]]]!r}: a "
                "ranking loss weighs whole queries (give every document of a query the same "
                "weight)")
        return lowest

    def trainable_queries(self) -> tuple[IntpArray, int, int]:
        """The query numbers of the queries that carry constraints (at least one relevant and
        one non-relevant document), and how many lack each.  Returns (queries (intp),
        n_without_relevant, n_all_relevant)."""
        n_rel, n_non = self.relevant_counts()
        usable = (n_rel > 0) & (n_non > 0)
        return (np.flatnonzero(usable), int(np.sum(n_rel == 0)),
                int(np.sum((n_rel > 0) & (n_non == 0))))

    def trainable(self) -> tuple[QueryCollection, int, int]:
        """Split off the queries that carry constraints, as a collection of their own (a copy
        of their rows unless every query carries constraints; training addresses them in
        place through ``trainable_queries`` instead).  Returns (collection,
        n_without_relevant, n_all_relevant)."""
        queries, n_without_relevant, n_all_relevant = self.trainable_queries()
        trainable = self if len(queries) == self.n_queries else self.subset(queries)
        return trainable, n_without_relevant, n_all_relevant
