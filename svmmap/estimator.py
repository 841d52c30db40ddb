"""SVMMap: the estimator users train and apply (scikit-learn manners, no scikit-learn needed)."""

import inspect
import warnings

import numpy as np

from svmstruct_api.learner import FORMULATIONS, CuttingPlaneLearner

from . import metrics
from .collection import QueryCollection, check_features
from .errors import InputFormatError, ModelFileError
from .model_file import read_model, write_model
from .plugins import MapPlugin

PLUGINS = {"map": MapPlugin}
ORACLES = ("divide", "scan")


class SVMMap:
    """Linear ranking function trained by a structural SVM (Yue et al., SIGIR 2007).

    Solves  min_w 1/2 |w|^2 + C/n sum_q xi_q  s.t. for every training query q and every
    ranking y:  w.psi(x_q, y_q) >= w.psi(x_q, y) + Delta(y_q, y) - xi_q,
    where n counts the queries that carry constraints (at least one relevant and one
    non-relevant document) -- the SVMstruct 3.x / SVMrank convention.  The original SVM-MAP
    release (built on SVMstruct 2.50) used C without the 1/n: its ``-c C`` corresponds to
    ``C * n`` here.

    Parameters
    ----------
    C : float, regularisation trade-off (see above).
    loss : "map" (Delta = 1 - AP).
    epsilon : tolerance on constraint violation; training stops when no constraint is violated
        by more than epsilon, so the objective is within C * epsilon of the optimum.
    algorithm : "1-slack" (Joachims, Finley & Yu 2009) or "n-slack" (the paper's Algorithm 1).
    max_iter, max_time : optional limits on cutting-plane iterations / seconds.
    n_threads : threads for the per-query oracle loop.
    oracle : "divide" (exact divide and conquer, default) or "scan" (plain Algorithm 2).
    verbose : 0 silent, 1 a progress line per iteration and the final report.

    Attributes (after fit)
    ----------------------
    coef_ : ndarray (n_features,), the weight vector w.
    intercept_ : float, 0.0 for the ranking losses.
    training_result_ : svmstruct_api.learner.TrainingResult (objectives, iterations, history).
    n_queries_used_, n_queries_without_relevant_, n_queries_all_relevant_ : int.
    """

    def __init__(self, C=1.0, loss="map", epsilon=1e-3, algorithm="1-slack", max_iter=None,
                 max_time=None, n_threads=1, oracle="divide", verbose=0):
        self.C = C
        self.loss = loss
        self.epsilon = epsilon
        self.algorithm = algorithm
        self.max_iter = max_iter
        self.max_time = max_time
        self.n_threads = n_threads
        self.oracle = oracle
        self.verbose = verbose

    # -- scikit-learn style parameters -----------------------------------------------------

    @classmethod
    def _param_names(cls):
        return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]

    def get_params(self, deep=True):
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        for name, value in params.items():
            if name not in self._param_names():
                raise ValueError(f"unknown parameter {name!r} for SVMMap")
            setattr(self, name, value)
        return self

    def __repr__(self):
        changed = {k: v for k, v in self.get_params().items()
                   if v != inspect.signature(type(self).__init__).parameters[k].default}
        return f"SVMMap({', '.join(f'{k}={v!r}' for k, v in changed.items())})"

    def _check_params(self):
        if self.loss not in PLUGINS:
            raise ValueError(f"loss must be one of {sorted(PLUGINS)}, got {self.loss!r}")
        if self.algorithm not in FORMULATIONS:
            raise ValueError(f"algorithm must be one of {FORMULATIONS}, got {self.algorithm!r}")
        if self.oracle not in ORACLES:
            raise ValueError(f"oracle must be one of {ORACLES}, got {self.oracle!r}")

    # -- training and prediction -----------------------------------------------------------

    def fit(self, X, y, qid):
        """Train on documents X with labels y (relevant: y > 0) grouped by qid; return self."""
        self._check_params()
        collection = QueryCollection.from_arrays(X, y, qid)
        trainable, n_without_relevant, n_all_relevant = collection.trainable()
        skipped = n_without_relevant + n_all_relevant
        if trainable.n_queries == 0:
            raise InputFormatError(
                f"none of the {collection.n_queries} queries has both a relevant (label > 0) "
                "and a non-relevant document: there is nothing to train on")
        if skipped:
            warnings.warn(
                f"{skipped} of {collection.n_queries} queries carry no constraint and are "
                f"skipped ({n_without_relevant} without a relevant document, {n_all_relevant} "
                "with only relevant documents)", stacklevel=2)
        plugin = PLUGINS[self.loss](trainable, n_threads=self.n_threads, oracle=self.oracle)
        learner = CuttingPlaneLearner(
            C=self.C, epsilon=self.epsilon, formulation=self.algorithm, max_iter=self.max_iter,
            max_time=self.max_time, log=print if self.verbose else None)
        result = learner.fit(plugin)
        if self.verbose:
            print(result.report())
        self.coef_ = result.w
        self.intercept_ = 0.0
        self.n_features_in_ = collection.n_features
        self.training_result_ = result
        self.n_queries_used_ = trainable.n_queries
        self.n_queries_without_relevant_ = n_without_relevant
        self.n_queries_all_relevant_ = n_all_relevant
        return self

    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            raise ValueError("this SVMMap is not fitted yet: call fit or SVMMap.load first")

    def decision_function(self, X):
        """Scores w.x + b, one per row of X (rank a query's documents by them, descending)."""
        self._check_fitted()
        X = check_features(X)
        if X.shape[1] != len(self.coef_):
            raise InputFormatError(
                f"X has {X.shape[1]} features but the model was trained with {len(self.coef_)}")
        return np.asarray(X @ self.coef_).ravel() + self.intercept_

    predict = decision_function

    def score(self, X, y, qid, convention="letor"):
        """MAP of the ranking by decision_function (svmmap.metrics, LETOR convention unless
        ``convention="trec_eval"``)."""
        return metrics.mean_average_precision(self.decision_function(X), y, qid,
                                              convention=convention)

    # -- persistence -------------------------------------------------------------------------

    def save(self, path):
        """Write the model to ``path`` (versioned JSON, written atomically)."""
        self._check_fitted()
        result = self.training_result_
        training = None if result is None else {
            "status": result.status, "formulation": result.formulation,
            "primal_objective": result.primal_objective,
            "dual_objective": result.dual_objective, "max_violation": result.max_violation,
            "iterations": result.iterations, "working_set_size": result.working_set_size,
            "n_queries_used": self.n_queries_used_,
            "n_queries_without_relevant": self.n_queries_without_relevant_,
            "n_queries_all_relevant": self.n_queries_all_relevant_,
        }
        write_model(path, {
            "params": self.get_params(), "n_features": len(self.coef_),
            "coef": [float(v) for v in self.coef_], "intercept": float(self.intercept_),
            "training": training})

    @classmethod
    def load(cls, path):
        """Read a model written by ``save``."""
        document = read_model(path)
        try:
            model = cls(**document["params"])
            model._check_params()
        except (TypeError, ValueError) as exc:
            raise ModelFileError(f"damaged model file: bad params ({exc})", path) from None
        model.coef_ = np.array(document["coef"], dtype=np.float64)
        model.intercept_ = float(document["intercept"])
        model.n_features_in_ = len(model.coef_)
        model.training_result_ = None
        model.training_info_ = document.get("training")
        training = model.training_info_ or {}
        model.n_queries_used_ = training.get("n_queries_used")
        model.n_queries_without_relevant_ = training.get("n_queries_without_relevant")
        model.n_queries_all_relevant_ = training.get("n_queries_all_relevant")
        return model
