"""What the baseline rankers share beyond svmmap.core.base.BaseRanker: the per-query measure and a
feature column."""

import numpy as np

from .. import metrics
from ..core.base import BaseRanker
from ..core.collection import QueryCollection
from ..core.groups import set_best_score
from ..errors import InputFormatError


def query_measure(scores, labels, ptr, measure, k):
    """Per-query value of ``measure`` ("map": AP, "ndcg": NDCG@k) for the ranking by
    ``scores``, LETOR convention, for the queries ptr[g]:ptr[g + 1] (grouped order)."""
    kind = "ap" if measure == "map" else "ndcg"
    return metrics.per_query(kind, scores, labels, ptr=ptr, k=None if measure == "map" else k,
                             skip_empty=False).values


def validation_collection(eval_set, n_features):
    """The first validation set ``(X, y, qid)`` grouped by query, checked to have the
    training data's ``n_features``; None without one."""
    if eval_set is None:
        return None
    valid = QueryCollection.from_arrays(*eval_set)
    if valid.n_features != n_features:
        raise InputFormatError(f"eval_set has {valid.n_features} features, the training data "
                               f"{n_features}")
    return valid


def column(X, j):
    """Feature ``j`` of every document as a dense vector."""
    col = X[:, j]
    return np.asarray(col.toarray() if hasattr(col, "toarray") else col).ravel()


class BaselineRanker(BaseRanker):
    """A baseline ranker (svmmap.core.base.BaseRanker: estimator API, ``save`` / ``load``);
    subclasses define ``KIND``, ``__init__``, ``_parameter_rules``, ``fit``,
    ``decision_function``, ``_fitted_state`` and ``_restore``."""

    def _record_eval(self, sets):
        """``best_score_``: the fitted model's MAP on every validation set (svmmap.core.groups)."""
        set_best_score(self, sets, "map", metrics.mean_average_precision)

    def _training_collection(self, X, y, qid):
        """Check the parameters, validate the training data (at least one feature:
        ``_min_features``) and group it by query once (QueryCollection)."""
        self.check_params()
        return super()._training_collection(X, y, qid)
