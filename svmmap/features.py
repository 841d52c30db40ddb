"""The binned retrieval-function features of Yue et al. (2007), Section 4.2.

Each input column f is taken as the score f(d|x) of a base retrieval function, and the map
replaces it by indicator features over a set of thresholds K_f,

    phi_f(x, d) = [ 1[f(d|x) > k]  for k in K_f ],       K_f increasing,

so a linear function of phi is a sum of non-decreasing step functions of the base scores.
Optionally (``per_query``) each score is first made relative to its query (the paper's
ACC3 / ACC4 repairs):

* ``"percentile"``: p = (r - 1) / (m_q - 1), r the average (tie-sharing) ascending rank of
  the score among the m_q documents of its query; 0 for a one-document query;
* ``"minmax"``: (f - min_q) / (max_q - min_q) over the query, 0 when all its scores are equal.

Thresholds are fitted on training data and applied unchanged to any other data: by default
the quantiles at levels 0, 1/n, ..., (n-1)/n of the column's training scores (observed
values, duplicates removed, and none at or above the largest score, which would give a
feature that is 0 on every training document), so that they are dense where the scores are;
after a per-query transform, the n evenly spaced values 0, 1/n, ..., (n-1)/n of [0, 1).

``spacing`` says what the quantiles count: ``"documents"`` (the default) puts about as many
training documents between two thresholds; ``"values"`` takes the quantiles of the column's
*distinct* training scores, so that a mass of documents sharing one score counts once.  The
second is the one for TREC runs, where about 94% of a query's pooled documents were not
retrieved by a given run and share its "not retrieved" score (:func:`svmmap.experiments.trec.
unretrieved_score`): counted per document they would pull 47 of 50 thresholds onto that one
value; counted per value, the thresholds spread over the scores the run actually gave.

The features are held implicitly (``transform_bins``, svmmap.kernels._kernel_inputs.BinnedArrays):
one small integer per (document, base function), b = |{k in K_f : k < f(d|x)}|, feature j of
base f being 1[b > j].  Training and prediction compute X w = sum_f L_f[b_f] with the
cumulative weights L_f[b] = sum_{j < b} w_{f,j}, and X^T u by per-base histograms of u over
the bins and their suffix sums (svmmap.kernels._binned_rows), so binned features cost what the
scores cost; ``transform`` gives the explicit indicator matrix for inspection and export.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .core.base import RuleChecked
from .core.collection import QueryCollection, check_features, query_index
from .core.rules import Interval, OneOf, Sequence
from .errors import InputFormatError
from .kernels._csr import indicator_matrix
from .kernels._kernel_inputs import BinnedArrays

if TYPE_CHECKING:
    from collections.abc import Iterator
    from collections.abc import Sequence as SequenceOf
    from typing import Self

    from .core._typing import Matrix, Vector

PER_QUERY = (None, "percentile", "minmax")
#: what the threshold quantiles count (module docstring)
SPACINGS = ("documents", "values")


#: the fitted thresholds and bins kept while a shared_binning() block is open, else None
_shared: dict[Any, Any] | None = None


@contextmanager
def shared_binning() -> Iterator[None]:
    """Inside the block, fitting a feature map of the same parameters to the same data, and
    binning the same data with equal thresholds, is done once: the experiments' SVMs of one
    trial (svmmap.experiments.trials) share their training, validation and test documents
    and, ACC3 / ACC4 aside, their feature map, so the trial bins each part once instead of
    once per SVM.  Data is recognised by the identity of its X array (kept alive by the
    block) and the content of its query ids; results are the ones computed without the
    block."""
    global _shared
    outer, _shared = _shared, {} if _shared is None else _shared
    try:
        yield
    finally:
        _shared = outer


def _remembered(key, X, compute):
    """``compute()``, or its value for ``key`` from an open shared_binning() block."""
    if _shared is None:
        return compute()
    key = (id(X), X.shape, *key)
    if key not in _shared:
        _shared[key] = (X, compute())
    return _shared[key][1]


def _digest(grouping):
    """What identifies a grouping of rows (None: no grouping) in a shared_binning() key."""
    return None if grouping is None else (grouping.ptr.tobytes(), grouping.rows.tobytes()
                                          if not grouping.is_contiguous else None)


class BinnedFeatureMap(RuleChecked, BaseEstimator):
    """phi(x, d) = [1[f(d|x) > k] for k in K_f] for every base function f (module docstring).

    Parameters
    ----------
    n_thresholds : int >= 1, thresholds per base function (at most; duplicates are removed).
    base_columns : sequence of 0-based column indices of X that are base functions (feature
        index i of an SVMlight file is column i - 1), or None for all columns.
    per_query : None, "percentile" or "minmax": make each score relative to its query
        first (module docstring); ``transform`` then needs the query ids.
    spacing : "documents" or "values": quantiles of the training documents' scores or of
        the distinct score values (module docstring; without per_query only).

    Attributes (after fit)
    ----------------------
    base_columns_ : ndarray of the base columns used, in output order.
    thresholds_ : list of increasing float arrays, K_f of each base column.
    n_input_features_ : number of columns of X at fit time.
    n_output_features_ : total number of indicator features.
    """

    _parameter_rules = {
        "n_thresholds": [Interval(1, 65535, closed="both", integer=True)],
        "base_columns": [Sequence(), None],
        "per_query": [OneOf(*(p for p in PER_QUERY if p)), None],
        "spacing": [OneOf(*SPACINGS)],
    }

    def __init__(self, n_thresholds: int = 50, base_columns: SequenceOf[int] | None = None,
                 per_query: str | None = None, spacing: str = "documents"):
        self.n_thresholds = n_thresholds
        self.base_columns = base_columns
        self.per_query = per_query
        self.spacing = spacing

    def json_params(self) -> dict[str, Any]:
        """The constructor parameters, JSON-ready (``get_params`` returns them as given)."""
        columns = None if self.base_columns is None else [int(c) for c in self.base_columns]
        return {"n_thresholds": self.n_thresholds, "base_columns": columns,
                "per_query": self.per_query, "spacing": self.spacing}

    @property
    def needs_qid(self) -> bool:
        """True when the map works within queries (``per_query`` is set)."""
        return self.per_query is not None

    # -- fitting and applying ----------------------------------------------------------------

    def fit(self, X: Matrix, qid: Vector | None = None) -> Self:
        """Choose the thresholds on training data; return self."""
        self.check_params()
        X = check_features(X)
        return self._fit(X, self._grouping(X, qid))

    def transform(self, X: Matrix, qid: Vector | None = None) -> sp.csr_matrix:
        """The indicator features of X as an explicit matrix (scipy CSR, float64, one row per
        row of X): for inspection and export.  Training and prediction use the implicit
        ``transform_bins``, which costs what the scores cost."""
        return indicator_matrix(self.transform_bins(X, qid))

    def transform_bins(self, X: Matrix, qid: Vector | None = None) -> BinnedArrays:
        """The indicator features of X held implicitly: BinnedArrays (svmmap.kernels._kernel_inputs)
        with b_{d,f} = |{k in K_f : k < f(d|x)}| per row d and base function f, standing for
        the matrix whose column off_f + j is 1[b_{d,f} > j] (what ``transform`` returns)."""
        check_is_fitted(self)
        X = check_features(X)
        if X.shape[1] != self.n_input_features_:
            raise InputFormatError(f"X has {X.shape[1]} features but the feature map was "
                                   f"fitted on {self.n_input_features_}")
        return self._transform(X, self._grouping(X, qid))

    def fit_transform(self, X: Matrix, qid: Vector | None = None) -> sp.csr_matrix:
        """``fit`` then ``transform`` on the same data."""
        return self.fit(X, qid).transform(X, qid)

    def fit_transform_collection(self, collection: QueryCollection) -> QueryCollection:
        """Fit on a QueryCollection and return it with the implicit indicator features
        (``transform_bins``) in place of its X: the collection's checks and grouping are used
        as they are (nothing is checked or grouped again)."""
        self.check_params()
        grouped = collection.grouping() if self.per_query is not None else None
        self._fit(collection.X, grouped)
        return collection.with_features(self._transform(collection.X, grouped))

    def _grouping(self, X, qid):
        """The grouping of X's rows a per-query transform needs (None without per_query)."""
        if self.per_query is None:
            return None
        if qid is None:
            raise InputFormatError(f"per_query={self.per_query!r} works within queries: "
                                   "qid is required")
        grouping = QueryCollection.from_qid(np.asarray(qid).ravel())
        if grouping.n_documents != X.shape[0]:
            raise InputFormatError(f"X has {X.shape[0]} rows but qid has "
                                   f"{grouping.n_documents}")
        return grouping

    def _fit(self, X, grouping):
        columns = self._resolve_columns(X.shape[1])
        params = tuple(sorted(self.json_params().items(), key=str))
        thresholds = _remembered(("fit", params, _digest(grouping)), X,
                                 lambda: self._thresholds(X, grouping, columns))
        self.base_columns_ = columns
        self.thresholds_ = thresholds
        self.n_input_features_ = X.shape[1]
        self.n_output_features_ = int(sum(len(k) for k in thresholds))
        return self

    def _thresholds(self, X, grouping, columns):
        """K_f of every base column (module docstring)."""
        n = self.n_thresholds
        if self.per_query is not None:
            return [np.arange(n) / n for _ in columns]
        levels = np.arange(n) / n
        thresholds = []
        for values in self._base_scores(X, grouping, columns):
            counted = np.unique(values) if self.spacing == "values" else values
            candidates = np.unique(np.quantile(counted, levels, method="inverted_cdf"))
            thresholds.append(candidates[candidates < values.max()])
        return thresholds

    def _transform(self, X, grouping):
        """BinnedArrays of X: uint8 bins when every base has fewer than 256 thresholds,
        else uint16 (``n_thresholds`` is at most 65535)."""
        key = ("bins", tuple(k.tobytes() for k in self.thresholds_),
               self.base_columns_.tobytes(), self.per_query, _digest(grouping))
        return _remembered(key, X, lambda: self._bins(X, grouping))

    def _bins(self, X, grouping):
        widths = np.array([len(k) for k in self.thresholds_], dtype=np.intp)
        bin_type = np.uint8 if np.all(widths < 256) else np.uint16
        bins = np.empty((X.shape[0], len(widths)), dtype=bin_type)  # thresholds below
        if self.per_query is None and isinstance(X, np.ndarray):
            # blocks of rows, each transposed once: a column of a block is then contiguous
            # (one column of all of X at a time would read every row's cache line per base)
            step = max(1, (1 << 18) // max(1, X.shape[1]))
            for start in range(0, X.shape[0], step):
                block = np.ascontiguousarray(X[start:start + step, self.base_columns_].T,
                                             dtype=np.float64)
                for c, thresholds in enumerate(self.thresholds_):
                    bins[start:start + step, c] = np.searchsorted(thresholds, block[c],
                                                                  side="left")
        else:
            for c, (thresholds, values) in enumerate(
                    zip(self.thresholds_, self._base_scores(X, grouping, self.base_columns_))):
                bins[:, c] = np.searchsorted(thresholds, values, side="left")
        return BinnedArrays(bins, widths, (X.shape[0], self.n_output_features_))

    def _base_scores(self, X, grouping, columns):
        """The base-function scores of every column of ``columns`` in turn (contiguous
        float64 (m,)), transformed within the queries of ``grouping`` (a QueryCollection
        grouping of X's rows): one column at a time, never a copy of X."""
        if self.per_query is None:
            for c in columns:
                column = X[:, c]
                yield (column.toarray().ravel() if sp.issparse(column)
                       else np.ascontiguousarray(column, dtype=np.float64))
            return
        within = _percentiles if self.per_query == "percentile" else _min_max
        for c in columns:
            column = X[:, [c]]
            scores = column.toarray() if sp.issparse(column) else np.array(column, np.float64)
            if grouping.is_contiguous:
                yield within(scores, grouping.ptr).ravel()
            else:
                scores[grouping.rows] = within(scores[grouping.rows], grouping.ptr)
                yield scores.ravel()

    # -- persistence ---------------------------------------------------------------------------

    def fitted_state(self) -> dict[str, Any]:
        """The fitted thresholds as a JSON-ready dict; the parameters (hence the base
        columns) and the number of input features are the model file's ``params`` and
        ``n_features_in``, not repeated here (see ``restore``)."""
        check_is_fitted(self)
        return {"thresholds": [[float(v) for v in k] for k in self.thresholds_]}

    def restore(self, state: dict[str, Any], n_input_features: int) -> Self:
        """Set the fitted thresholds written by ``fitted_state``; ValueError if malformed."""
        try:
            self.check_params()
            columns = self._resolve_columns(n_input_features)
            thresholds = [np.array(k, dtype=np.float64) for k in state["thresholds"]]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed feature map ({exc!r})") from None
        except InputFormatError as exc:
            raise ValueError(f"malformed feature map ({exc})") from None
        if len(thresholds) != len(columns) or not all(
                k.ndim == 1 and np.all(np.isfinite(k)) and np.all(np.diff(k) > 0)
                for k in thresholds):
            raise ValueError("malformed feature map: thresholds must be one increasing list "
                             "of finite numbers per base column")
        self.base_columns_ = columns
        self.thresholds_ = thresholds
        self.n_input_features_ = int(n_input_features)
        self.n_output_features_ = int(sum(len(k) for k in thresholds))
        return self

    # -- validation ----------------------------------------------------------------------------

    def _resolve_columns(self, n_features):
        """The base columns as int64 indices of an X with ``n_features`` columns."""
        if self.base_columns is None:
            return np.arange(n_features)
        return _check_columns(self.base_columns, n_features)


def _check_columns(columns, n_features):
    try:
        columns = np.asarray(columns)
    except (TypeError, ValueError):
        raise InputFormatError(f"base_columns must be integers, got {columns!r}") from None
    if columns.ndim != 1 or (len(columns) and columns.dtype.kind not in "iu"):
        raise InputFormatError(f"base_columns must be a list of integers, got "
                               f"{columns.tolist()!r}")
    columns = columns.astype(np.int64)
    bad = columns[(columns < 0) | (columns >= n_features)]
    if len(bad):
        raise InputFormatError(f"column {int(bad[0])} does not exist: X has {n_features} "
                               "columns (0-based)")
    if len(np.unique(columns)) != len(columns):
        raise InputFormatError("base_columns lists a column more than once")
    return columns


def _percentiles(scores, ptr):
    """(r - 1) / (m_q - 1) per column, r the average ascending rank within the query."""
    sizes = np.diff(ptr)
    group = query_index(ptr)
    start = np.repeat(ptr[:-1], sizes)
    denominator = np.maximum(np.repeat(sizes, sizes) - 1, 1)
    out = np.empty_like(scores)
    for c, values in enumerate(scores.T):
        order = np.lexsort((values, group))
        ranked = values[order]
        new_run = np.ones(len(order), dtype=bool)
        new_run[1:] = (ranked[1:] != ranked[:-1]) | (group[order][1:] != group[order][:-1])
        run = np.cumsum(new_run) - 1
        first = np.flatnonzero(new_run)
        last = np.append(first[1:], len(order)) - 1
        average = (first + last)[run] / 2.0 - start  # 0-based average rank within the query
        out[order, c] = average / denominator
    return out


def _min_max(scores, ptr):
    """(f - min_q) / (max_q - min_q) per column, 0 where the query's scores are all equal."""
    sizes = np.diff(ptr)
    low = np.repeat(np.minimum.reduceat(scores, ptr[:-1], axis=0), sizes, axis=0)
    span = np.repeat(np.maximum.reduceat(scores, ptr[:-1], axis=0), sizes, axis=0) - low
    return np.divide(scores - low, span, out=np.zeros_like(scores), where=span > 0)

