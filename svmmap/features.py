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

The features are held implicitly (``transform_bins``, svmmap._kernel_inputs.BinnedArrays):
one small integer per (document, base function), b = |{k in K_f : k < f(d|x)}|, feature j of
base f being 1[b > j].  Training and prediction compute X w = sum_f L_f[b_f] with the
cumulative weights L_f[b] = sum_{j < b} w_{f,j}, and X^T u by per-base histograms of u over
the bins and their suffix sums (svmmap._binned_rows), so binned features cost what the
scores cost; ``transform`` gives the explicit indicator matrix for inspection and export.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ._csr import indicator_matrix
from ._kernel_inputs import BinnedArrays
from .base import RuleChecked
from .collection import QueryCollection, check_features, query_index
from .errors import InputFormatError
from .params import Interval, OneOf, Sequence

PER_QUERY = (None, "percentile", "minmax")


class BinnedFeatureMap(RuleChecked, BaseEstimator):
    """phi(x, d) = [1[f(d|x) > k] for k in K_f] for every base function f (module docstring).

    Parameters
    ----------
    n_thresholds : int >= 1, thresholds per base function (at most; duplicates are removed).
    base_columns : sequence of 0-based column indices of X that are base functions (feature
        index i of an SVMlight file is column i - 1), or None for all columns.
    per_query : None, "percentile" or "minmax": make each score relative to its query
        first (module docstring); ``transform`` then needs the query ids.

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
    }

    def __init__(self, n_thresholds=50, base_columns=None, per_query=None):
        self.n_thresholds = n_thresholds
        self.base_columns = base_columns
        self.per_query = per_query

    def json_params(self):
        """The constructor parameters, JSON-ready (``get_params`` returns them as given)."""
        columns = None if self.base_columns is None else [int(c) for c in self.base_columns]
        return {"n_thresholds": self.n_thresholds, "base_columns": columns,
                "per_query": self.per_query}

    @property
    def needs_qid(self):
        """True when the map works within queries (``per_query`` is set)."""
        return self.per_query is not None

    # -- fitting and applying ----------------------------------------------------------------

    def fit(self, X, qid=None):
        """Choose the thresholds on training data; return self."""
        self.check_params()
        X = check_features(X)
        return self._fit(X, self._grouping(X, qid))

    def transform(self, X, qid=None):
        """The indicator features of X as an explicit matrix (scipy CSR, float64, one row per
        row of X): for inspection and export.  Training and prediction use the implicit
        ``transform_bins``, which costs what the scores cost."""
        return indicator_matrix(self.transform_bins(X, qid))

    def transform_bins(self, X, qid=None):
        """The indicator features of X held implicitly: BinnedArrays (svmmap._kernel_inputs)
        with b_{d,f} = |{k in K_f : k < f(d|x)}| per row d and base function f, standing for
        the matrix whose column off_f + j is 1[b_{d,f} > j] (what ``transform`` returns)."""
        check_is_fitted(self)
        X = check_features(X)
        if X.shape[1] != self.n_input_features_:
            raise InputFormatError(f"X has {X.shape[1]} features but the feature map was "
                                   f"fitted on {self.n_input_features_}")
        return self._transform(X, self._grouping(X, qid))

    def fit_transform(self, X, qid=None):
        return self.fit(X, qid).transform(X, qid)

    def fit_transform_collection(self, collection):
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
        scores = self._base_scores(X, grouping, columns)
        n = self.n_thresholds
        if self.per_query is None:
            levels = np.arange(n) / n
            thresholds = []
            for values in scores.T:
                candidates = np.unique(np.quantile(values, levels, method="inverted_cdf"))
                thresholds.append(candidates[candidates < values.max()])
        else:
            thresholds = [np.arange(n) / n for _ in columns]
        self.base_columns_ = columns
        self.thresholds_ = thresholds
        self.n_input_features_ = X.shape[1]
        self.n_output_features_ = int(sum(len(k) for k in thresholds))
        return self

    def _transform(self, X, grouping):
        """BinnedArrays of X: uint8 bins when every base has fewer than 256 thresholds,
        else uint16 (``n_thresholds`` is at most 65535)."""
        scores = self._base_scores(X, grouping, self.base_columns_)
        widths = np.array([len(k) for k in self.thresholds_], dtype=np.intp)
        bin_type = np.uint8 if np.all(widths < 256) else np.uint16
        bins = np.empty(scores.shape, dtype=bin_type)  # thresholds below each score
        for c, (thresholds, values) in enumerate(zip(self.thresholds_, scores.T)):
            bins[:, c] = np.searchsorted(thresholds, values, side="left")
        return BinnedArrays(bins, widths, (X.shape[0], self.n_output_features_))

    def _base_scores(self, X, grouping, columns):
        """Dense (m, len(columns)) base-function scores, transformed within the queries of
        ``grouping`` (a QueryCollection grouping of X's rows)."""
        scores = X[:, columns]  # a copy: an index array selects the columns
        scores = scores.toarray() if sp.issparse(scores) else np.asarray(scores)
        if self.per_query is None:
            return scores
        within = _percentiles if self.per_query == "percentile" else _min_max
        if grouping.is_contiguous:
            return within(scores, grouping.ptr)
        scores[grouping.rows] = within(scores[grouping.rows], grouping.ptr)
        return scores

    # -- persistence ---------------------------------------------------------------------------

    def fitted_state(self):
        """The fitted thresholds as a JSON-ready dict; the parameters (hence the base
        columns) and the number of input features are the model file's ``params`` and
        ``n_features_in``, not repeated here (see ``restore``)."""
        check_is_fitted(self)
        return {"thresholds": [[float(v) for v in k] for k in self.thresholds_]}

    def restore(self, state, n_input_features):
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

