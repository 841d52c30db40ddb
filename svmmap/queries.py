"""Grouping of documents into queries: the one representation every learner and metric shares.

A collection of ``m`` documents with a query id each is described by a permutation ``order``
that makes the documents of every query contiguous (stable: file order is kept inside a query)
and offsets ``ptr`` such that the documents of query ``g`` are ``order[ptr[g]:ptr[g + 1]]``.
Queries are numbered in order of first appearance.
"""

from dataclasses import dataclass

import numpy as np

from .errors import InputFormatError


@dataclass(frozen=True)
class QueryGroups:
    """Documents grouped by query.

    Attributes
    ----------
    ids : ndarray
        The query id of each group, in order of first appearance.
    order : ndarray of int64, shape (m,)
        ``order[k]`` is the original row of the k-th document in grouped order.
    ptr : ndarray of int64, shape (n_queries + 1,)
        Group ``g`` holds grouped positions ``ptr[g]:ptr[g + 1]``.
    """

    ids: np.ndarray
    order: np.ndarray
    ptr: np.ndarray

    @classmethod
    def from_qid(cls, qid):
        """Group the rows of a query-id array (ints or strings; need not be contiguous)."""
        qid = np.asarray(qid)
        if qid.ndim != 1:
            raise InputFormatError(f"qid must be one-dimensional, got shape {qid.shape}")
        if qid.size == 0:
            raise InputFormatError("no documents: qid is empty")
        if qid.dtype.kind == "f" and not np.all(np.isfinite(qid)):
            raise InputFormatError("qid contains NaN or infinite values")
        uniq, first_row, inverse = np.unique(qid, return_index=True, return_inverse=True)
        rank_of_unique = np.empty(len(uniq), dtype=np.int64)
        rank_of_unique[np.argsort(first_row, kind="stable")] = np.arange(len(uniq))
        group = rank_of_unique[inverse.ravel()]
        order = np.argsort(group, kind="stable").astype(np.int64)
        ptr = np.zeros(len(uniq) + 1, dtype=np.int64)
        np.cumsum(np.bincount(group, minlength=len(uniq)), out=ptr[1:])
        ids = qid[np.sort(first_row)]
        return cls(ids=ids, order=order, ptr=ptr)

    @property
    def n_queries(self):
        return len(self.ptr) - 1

    @property
    def sizes(self):
        """Number of documents of each query."""
        return np.diff(self.ptr)

    @property
    def is_contiguous(self):
        """True when the input rows were already grouped (order is the identity)."""
        return bool(np.all(self.order == np.arange(len(self.order))))
