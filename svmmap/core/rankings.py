"""The documents of every query ranked once under a convention, and the per-query value of
every measure read off that ranking: the kernels behind :mod:`svmmap.metrics` (whose docstring
gives the conventions and the definitions), with the checks of their inputs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputFormatError
from .collection import QueryCollection
from .options import CONVENTIONS

if TYPE_CHECKING:
    import numpy.typing as npt

    from ._typing import FloatArray, Vector

    BoolArray = npt.NDArray[np.bool_]
    IntArray = npt.NDArray[np.intp]


def check_convention(convention: str) -> None:
    """Refuse a convention that is not one of CONVENTIONS."""
    if convention not in CONVENTIONS:
        raise InputFormatError(
            f"unknown convention {convention!r}; expected one of {', '.join(CONVENTIONS)}"
        )


def check_k(k: object, allow_none: bool) -> int | None:
    """A rank cut-off as an int: a positive integer (not a bool), or None when
    ``allow_none``; InputFormatError otherwise."""
    if k is None:
        if allow_none:
            return None
        raise InputFormatError("a rank cut-off k is required")
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputFormatError(f"k must be a positive integer, got {k!r}")
    return int(k)


def as_vector(values: Vector, name: str) -> FloatArray:
    """``values`` as a one-dimensional float64 array without NaN (``name`` for the
    messages)."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise InputFormatError(f"{name} must be numeric: {err}") from None
    if arr.ndim != 1:
        raise InputFormatError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise InputFormatError(f"{name} contains NaN")
    return arr


def grouping(qid: Vector | QueryCollection | None, ptr: Vector | None,
             m: int) -> QueryCollection:
    """The QueryCollection grouping of m rows given by qid (ids, a collection, or None for
    one query) or by ptr (rows already grouped)."""
    if ptr is not None:
        if qid is not None:
            raise InputFormatError("pass qid or ptr, not both")
        ptr = np.asarray(ptr)
        if (ptr.ndim != 1 or ptr.dtype.kind not in "iu" or len(ptr) < 2 or ptr[0] != 0
                or ptr[-1] != m or np.any(np.diff(ptr) < 0)):
            raise InputFormatError(f"ptr must be non-decreasing offsets from 0 to {m}")
        ptr = ptr.astype(np.intp, copy=False)
        return QueryCollection(X=None, labels=None, ptr=ptr, query_ids=np.arange(len(ptr) - 1),
                               rows=np.arange(m, dtype=np.intp))
    if isinstance(qid, QueryCollection):
        if qid.n_documents != m:
            raise InputFormatError(f"scores has {m} entries but the collection "
                                   f"{qid.n_documents} documents")
        return qid.grouping()
    if qid is None:
        qid = np.zeros(m, dtype=np.int64)
    qid = np.asarray(qid)
    if qid.ndim == 1 and len(qid) != m:
        raise InputFormatError(f"scores has {m} entries but qid has {len(qid)}")
    return QueryCollection.from_qid(qid)


class Ranking:
    """The documents of every query ranked once; all metrics are read off this.

    Arrays indexed by ranked position ``t`` (queries one after another, in order of first
    appearance, each ranked best first): ``rows[t]`` original row, ``group[t]`` query
    number, ``pos[t]`` 1-based rank within the query, ``labels[t]``, ``scores[t]``.
    """

    def __init__(self, scores: Vector, labels: Vector,
                 qid: Vector | QueryCollection | None = None, docnos: Vector | None = None,
                 convention: str = "letor", ptr: Vector | None = None):
        check_convention(convention)
        scores = as_vector(scores, "scores")
        labels = as_vector(labels, "labels")
        m = len(scores)
        if m == 0:
            raise InputFormatError("no documents: scores is empty")
        if len(labels) != m:
            raise InputFormatError(f"scores has {m} entries but labels has {len(labels)}")
        qg = grouping(qid, ptr, m)
        nq = qg.n_queries
        sizes = qg.sizes
        if qg.is_contiguous:
            group_of_row = qg.query_of_doc
        else:
            group_of_row = np.empty(m, dtype=np.intp)
            group_of_row[qg.rows] = qg.query_of_doc

        if convention == "letor":
            # ties: input order (ascending row index)
            rows = np.lexsort((np.arange(m), -scores, group_of_row))
        else:
            if docnos is None:
                tie = -np.arange(m)  # zero-padded row index: string order == row order
            else:
                docnos = np.asarray(docnos)
                if docnos.ndim != 1 or len(docnos) != m:
                    raise InputFormatError(
                        f"docnos must be one-dimensional with {m} entries, got shape {docnos.shape}"
                    )
                # numpy orders str by code point, which is UTF-8 byte (strcmp) order
                _, drank = np.unique(docnos.astype(str), return_inverse=True)
                drank = drank.ravel().astype(np.int64)
                by_doc = np.lexsort((drank, group_of_row))
                dup = (drank[by_doc][1:] == drank[by_doc][:-1]) & (
                    group_of_row[by_doc][1:] == group_of_row[by_doc][:-1]
                )
                if dup.any():
                    r = by_doc[1:][dup][0]
                    raise InputFormatError(f"duplicate docno {docnos[r]!r} in query "
                                           f"{qg.query_ids[group_of_row[r]]!r}")
                tie = -drank
            rows = np.lexsort((tie, -scores, group_of_row))

        self.qg = qg
        self.n_queries = nq
        self.sizes = sizes
        self.ptr = qg.ptr
        self.rows = rows
        self.group = qg.query_of_doc
        self.pos = np.arange(1, m + 1, dtype=np.int64) - np.repeat(qg.ptr[:-1], sizes)
        self.scores = scores[rows]
        self.labels = labels[rows]
        self.rel = self.labels > 0
        self.n_rel = np.bincount(self.group, weights=self.rel, minlength=nq).astype(np.int64)
        self.n_nonrel = sizes - self.n_rel
        self.convention = convention

    # -- helpers -------------------------------------------------------------------------

    def _within(self, x: FloatArray | BoolArray) -> np.ndarray:
        """Cumulative sum of ``x`` restarted at every query (inclusive)."""
        c = np.cumsum(x)
        base = np.concatenate(([0], c))[self.ptr[:-1]]
        return c - np.repeat(base, self.sizes)

    def _sum(self, weights: FloatArray | BoolArray) -> np.ndarray:
        """Per query: the sum of ``weights`` over its documents (float64)."""
        return np.bincount(self.group, weights=weights, minlength=self.n_queries)

    def _runs(self) -> tuple[IntArray, IntArray]:
        """Tie runs: maximal blocks of equal score inside a query (ranked order)."""
        start = np.ones(len(self.scores), dtype=bool)
        start[1:] = (self.scores[1:] != self.scores[:-1]) | (self.pos[1:] == 1)
        first = np.flatnonzero(start)
        last = np.concatenate((first[1:], [len(self.scores)])) - 1
        return first, last

    # -- per-query kernels (arrays of length n_queries) ----------------------------------

    def ap(self, k: int | None = None) -> FloatArray:
        """Average precision per query (@k: the sum cut at rank k, still divided by the
        number of relevant documents); 0 without a relevant document."""
        cum_rel = self._within(self.rel)
        contrib = np.where(self.rel, cum_rel / self.pos, 0.0)
        if k is not None:
            contrib = np.where(self.pos <= k, contrib, 0.0)
        total = self._sum(contrib)
        return np.divide(total, self.n_rel, out=np.zeros(self.n_queries), where=self.n_rel > 0)

    def precision(self, k: int) -> FloatArray:
        """Precision of the top k per query (missing ranks count as non-relevant)."""
        return self._sum(self.rel & (self.pos <= k)) / k

    def rprec(self) -> FloatArray:
        """(#relevant in the top R) / R, R the query's number of relevant documents."""
        cut = np.repeat(self.n_rel, self.sizes)
        hits = self._sum(self.rel & (self.pos <= cut))
        return np.divide(hits, self.n_rel, out=np.zeros(self.n_queries), where=self.n_rel > 0)

    def rr(self) -> FloatArray:
        """Reciprocal rank of the first relevant document per query (0 without one)."""
        first = self.rel & (self._within(self.rel) == 1)
        out = np.zeros(self.n_queries)
        out[self.group[first]] = 1.0 / self.pos[first]
        return out

    def _gain_discount(self) -> tuple[FloatArray, FloatArray]:
        lab = np.maximum(self.labels, 0.0)
        pos = self.pos.astype(np.float64)
        if self.convention == "letor":
            gain = np.exp2(lab) - 1.0
            disc = np.where(pos <= 2, 1.0, 1.0 / np.log2(np.maximum(pos, 2.0)))
        else:
            gain = lab
            disc = 1.0 / np.log2(pos + 1.0)
        return gain, disc

    def ndcg(self, k: int | None = None) -> FloatArray:
        """NDCG (@k) per query, gain and discount of the convention; 0 when the ideal DCG
        is 0."""
        gain, disc = self._gain_discount()
        if k is not None:
            disc = np.where(self.pos <= k, disc, 0.0)
        dcg = self._sum(gain * disc)
        ideal = gain[np.lexsort((-gain, self.group))]
        idcg = self._sum(ideal * disc)
        return np.divide(dcg, idcg, out=np.zeros(self.n_queries), where=idcg > 0)

    def err(self, k: int) -> FloatArray:
        """ERR@k (module docstring): the probability that a user scanning down the ranking
        stops at rank r, having passed ranks 1..r-1 without stopping, over r, summed to k."""
        grade = np.maximum(self.labels, 0.0)
        if np.any(grade > ERR_MAX_GRADE):
            raise InputFormatError(err_grade_error(np.max(grade)))
        stop = (np.exp2(grade) - 1.0) / 2.0 ** ERR_MAX_GRADE
        go_on = np.log1p(-stop)  # stop < 1: finite
        reach = np.exp(self._within(go_on) - go_on)  # prod over the ranks above of (1 - R_i)
        return self._sum(np.where(self.pos <= k, stop * reach / self.pos, 0.0))

    def roc(self) -> FloatArray:
        """Correctly ordered (relevant, non-relevant) pairs / all such pairs; ties 1/2.

        NaN for a query without both a relevant and a non-relevant document."""
        nonrel = ~self.rel
        first, last = self._runs()
        run_id = np.repeat(np.arange(len(first)), last - first + 1)
        run_nonrel = np.add.reduceat(nonrel.astype(np.int64), first)
        cum_nonrel_end = self._within(nonrel)[last]  # non-relevant ranked at/above run end
        q = self.group[first]
        below = self.n_nonrel[q] - cum_nonrel_end  # strictly lower scores
        per_rel = below + 0.5 * run_nonrel
        correct = self._sum(np.where(self.rel, per_rel[run_id], 0.0))
        pairs = (self.n_rel * self.n_nonrel).astype(np.float64)
        return np.divide(correct, pairs, out=np.full(self.n_queries, np.nan), where=pairs > 0)

    def accuracy(self) -> FloatArray:
        """Best accuracy of one threshold ``score >= t`` per query (all-negative allowed)."""
        first, last = self._runs()
        cum_rel = self._within(self.rel)[last]
        cum_nonrel = self._within(~self.rel)[last]
        q = self.group[first]
        correct = cum_rel + (self.n_nonrel[q] - cum_nonrel)
        group_first_run = np.flatnonzero(self.pos[first] == 1)
        best = np.maximum.reduceat(correct, group_first_run)
        best = np.maximum(best, self.n_nonrel)
        return best / self.sizes

    # -- selection -----------------------------------------------------------------------

    def counted(self, skip_empty: bool = False) -> BoolArray:
        """Mask of the queries that enter a mean: all of them in both conventions, unless
        ``skip_empty`` drops those without a relevant document."""
        if skip_empty:
            return self.n_rel > 0
        return np.ones(self.n_queries, dtype=bool)


#: the largest grade of ERR's stopping probability (2^g - 1) / 2^g_max: gdeval's fixed 4
ERR_MAX_GRADE = 4


def err_grade_error(label: float) -> str:
    """Why ERR cannot take the grade ``label`` (above ERR_MAX_GRADE)."""
    return (f"ERR takes grades 0 to {ERR_MAX_GRADE} (gdeval's scale: stopping probability "
            f"(2^g - 1) / 2^{ERR_MAX_GRADE}), got label {label:g}")
