"""What every baseline ranker shares with :class:`svmmap.SVMMap`: parameters stored by the
constructor, ``get_params`` / ``set_params``, input checks, ``score`` (MAP), and a model file
of its own kind written through :mod:`svmmap.model_file`."""

import numpy as np

from .. import metrics
from ..collection import check_features
from ..errors import InputFormatError, ModelFileError
from ..model_file import DAMAGED_MODEL_ERRORS, read_model, write_model
from ..params import ParamsMixin


def query_measure(scores, labels, ptr, measure, k):
    """Per-query value of ``measure`` ("map": AP, "ndcg": NDCG@k) for the ranking by
    ``scores``, LETOR convention, for the queries ptr[g]:ptr[g + 1] (grouped order)."""
    kind = "ap" if measure == "map" else "ndcg"
    return metrics.per_query(kind, scores, labels, ptr=ptr, k=None if measure == "map" else k,
                             skip_empty=False).values


def column(X, j):
    """Feature ``j`` of every document as a dense vector."""
    col = X[:, j]
    return np.asarray(col.toarray() if hasattr(col, "toarray") else col).ravel()


class BaselineRanker(ParamsMixin):
    """Estimator manners; subclasses define ``KIND``, ``__init__``, ``fit``, ``_check_params``,
    ``decision_function``, ``_state`` (fitted state as JSON-able dict) and ``_restore``."""

    KIND = None

    def _check_fitted(self):
        if not hasattr(self, "n_features_in_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet: call fit or "
                             f"{type(self).__name__}.load first")

    def _check_X(self, X):
        self._check_fitted()
        X = check_features(X)
        if X.shape[1] != self.n_features_in_:
            raise InputFormatError(f"X has {X.shape[1]} features but the model was trained "
                                   f"with {self.n_features_in_}")
        return X

    def score(self, X, y, qid, convention="letor"):
        """MAP of the ranking by decision_function (svmmap.metrics, LETOR convention unless
        ``convention="trec_eval"``)."""
        return metrics.mean_average_precision(self.decision_function(X), y, qid,
                                              convention=convention)

    def save(self, path):
        """Write the model to ``path`` (versioned JSON, written atomically) with
        ``"kind": KIND``; linear models also carry ``coef`` / ``intercept``."""
        self._check_fitted()
        write_model(path, {"kind": self.KIND, "params": self.get_params(),
                           "n_features": self.n_features_in_, **self._state()})

    @classmethod
    def load(cls, path):
        """Read a model written by ``save``; a file of another kind is rejected."""
        document = read_model(path, kind=cls.KIND)
        try:
            model = cls(**document["params"])
            model._check_params()
            model.n_features_in_ = int(document["n_features"])
            model._restore(document)
        except ModelFileError:
            raise
        except DAMAGED_MODEL_ERRORS as exc:
            raise ModelFileError(f"damaged {cls.KIND} model file ({type(exc).__name__}: "
                                 f"{exc})", path) from None
        return model
