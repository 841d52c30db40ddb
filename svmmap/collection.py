"""A query collection: features, labels and query offsets, grouped once and shared by every
learner, plugin and metric (nothing downstream re-groups documents)."""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .errors import InputFormatError
from .options import MAX_ABS_VALUE
from .queries import QueryGroups


def check_features(X):
    """Return X as float64 CSR (if sparse) or a C-contiguous float64 2-d ndarray, all finite
    and at most MAX_ABS_VALUE in magnitude."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        values = X.data
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise InputFormatError(f"X must be two-dimensional, got shape {X.shape}")
        values = X
    if not np.all(np.isfinite(values)):
        raise InputFormatError("X contains NaN or infinite values")
    if values.size and np.max(np.abs(values)) > MAX_ABS_VALUE:
        flat = int(np.argmax(np.abs(values)))
        if sp.issparse(X):
            row = int(np.searchsorted(X.indptr, flat, side="right")) - 1
            place = (row, int(X.indices[flat]))
        else:
            place = np.unravel_index(flat, X.shape)
        raise InputFormatError(
            f"X[{place[0]}, {place[1]}] = {values.flat[flat]:g}: feature values must be at most "
            f"{MAX_ABS_VALUE:g} in magnitude (scale the features)")
    return X


def check_labels(y, n_rows):
    y = np.asarray(y, dtype=np.float64).ravel()
    if len(y) != n_rows:
        raise InputFormatError(f"X has {n_rows} rows but y has {len(y)} labels")
    if not np.all(np.isfinite(y)):
        raise InputFormatError("y contains NaN or infinite values")
    return y


@dataclass(frozen=True)
class QueryCollection:
    """Documents in grouped order: the documents of query g are rows ptr[g]:ptr[g + 1].

    ``rows`` maps each grouped document back to its row in the arrays the collection was
    made from; relevant means label > 0.
    """

    X: object
    labels: np.ndarray
    ptr: np.ndarray
    query_ids: np.ndarray
    rows: np.ndarray

    @classmethod
    def from_arrays(cls, X, y, qid):
        X = check_features(X)
        y = check_labels(y, X.shape[0])
        qid = np.asarray(qid).ravel()
        if len(qid) != X.shape[0]:
            raise InputFormatError(f"X has {X.shape[0]} rows but qid has {len(qid)} entries")
        groups = QueryGroups.from_qid(qid)
        order = groups.order
        if not groups.is_contiguous:
            X = X[order]
            y = y[order]
        return cls(X=X, labels=y, ptr=groups.ptr, query_ids=groups.ids, rows=order)

    @property
    def n_queries(self):
        return len(self.ptr) - 1

    @property
    def n_features(self):
        return self.X.shape[1]

    @property
    def relevant(self):
        return (self.labels > 0).astype(np.uint8)

    def relevant_counts(self):
        """(|P|, |N|) of every query."""
        sizes = np.diff(self.ptr)
        query_of_doc = np.repeat(np.arange(self.n_queries), sizes)
        n_rel = np.bincount(query_of_doc, weights=self.labels > 0,
                            minlength=self.n_queries).astype(np.int64)
        return n_rel, sizes - n_rel

    def subset(self, queries):
        """The collection restricted to the given query numbers (kept in their order)."""
        queries = np.asarray(queries, dtype=np.int64)
        starts, stops = self.ptr[queries], self.ptr[queries + 1]
        sizes = stops - starts
        ptr = np.zeros(len(queries) + 1, dtype=np.int64)
        np.cumsum(sizes, out=ptr[1:])
        docs = np.repeat(starts - ptr[:-1], sizes) + np.arange(ptr[-1])
        return QueryCollection(X=self.X[docs], labels=self.labels[docs], ptr=ptr,
                               query_ids=self.query_ids[queries], rows=self.rows[docs])

    def trainable(self):
        """Split off the queries that carry constraints (at least one relevant and one
        non-relevant document).  Returns (collection, n_without_relevant, n_all_relevant)."""
        n_rel, n_non = self.relevant_counts()
        usable = (n_rel > 0) & (n_non > 0)
        trainable = self if usable.all() else self.subset(np.flatnonzero(usable))  # no copy
        return (trainable, int(np.sum(n_rel == 0)),
                int(np.sum((n_rel > 0) & (n_non == 0))))
