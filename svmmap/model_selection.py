"""Model selection in one fit: SVMMap trained along a path of C values, small to large, each
fit warm-started from the previous one (svmstruct_api.learner.BaseSSVM.fit_path), the C with
the best validation measure kept.

Validation queries come from ``eval_set`` (a validation file) or, without one, from a random
fraction ``holdout`` of the training queries (RankLib's ``-tvs``).  The chosen C is the
smallest whose validation measure is within ``select_tol`` of the best (:func:`choose`): values
that close are ties, and ties go to the smallest C (the simplest model), as in
svmmap.experiments.selection.  The default 0.0005 treats values that agree to 3 decimals as
ties: a near-optimal fit's validation MAP moves by that much with how close to the optimum
training stopped (benchmarks/results/defaults.md), so a plain argmax would pick between two
C values of equal merit by numerical accident.
"""

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from . import metrics
from .collection import check_features
from .errors import InputFormatError
from .estimator import SVMMap
from .options import (
    DEFAULT_EPSILON,
    DEFAULT_REL_GAP,
    DEFAULT_SELECT_TOL,
    SELECT_METRIC_HELP,
    SELECT_METRIC_RE,
)


def validation_measure(name):
    """The function (scores, labels, qid) -> mean measure of a ``select_metric`` name (LETOR
    convention, svmmap.metrics): "map", "ndcg" (full ranking), "ndcg@k", "p@k", "mrr" or
    "roc"."""
    if not (isinstance(name, str) and SELECT_METRIC_RE.fullmatch(name)):
        raise ValueError(f"select_metric must be {SELECT_METRIC_HELP}, got {name!r}")
    base, _, cutoff = name.lower().partition("@")
    k = int(cutoff) if cutoff else None
    if base == "map":
        return metrics.mean_average_precision
    if base == "mrr":
        return metrics.mean_reciprocal_rank
    if base == "roc":
        return metrics.roc_area
    if base == "ndcg":
        return lambda scores, y, qid: metrics.ndcg_at_k(scores, y, qid, k=k)
    return lambda scores, y, qid: metrics.precision_at_k(scores, y, qid, k=k)


def choose(values, select_tol=0.0):
    """Index of the chosen value: the first (smallest C) whose measure is at least
    max(values) - select_tol (select_tol = 0: the first maximum)."""
    values = np.asarray(values, dtype=float)
    return int(np.flatnonzero(values >= values.max() - select_tol)[0])


def holdout_split(qid, fraction, random_state=0):
    """Boolean mask of the documents of a random ``fraction`` of the queries (at least one,
    at most all but one), drawn with numpy's default_rng(random_state)."""
    if not (isinstance(fraction, (int, float)) and 0 < fraction < 1):
        raise ValueError(f"holdout must be a fraction in (0, 1), got {fraction!r}")
    queries = np.unique(qid)
    if len(queries) < 2:
        raise InputFormatError("holding out queries needs at least two training queries")
    n_held = min(max(1, round(fraction * len(queries))), len(queries) - 1)
    held = np.random.default_rng(random_state).choice(queries, n_held, replace=False)
    return np.isin(qid, held)


class SVMMapCV(SVMMap):
    """SVMMap with C chosen on validation queries along a warm-started path of C values.

    Parameters: those of SVMMap except ``C``, and
    Cs : the C values (trained in increasing order; default 0.1, 1, 10, 100, 1000).
    select_metric : validation measure to maximise (:func:`validation_measure`; default "map").
    holdout : fraction of the training queries held out for validation when ``fit`` gets no
        ``eval_set`` (default 0.2); the model is trained on the rest.
    random_state : seed of the held-out queries.
    select_tol : validation measures within this of the best are ties, which go to the
        smallest C (default 0.0005: equal to 3 decimals; 0: the plain argmax).

    Every fit of the path stops by the same rule as a cold fit (no constraint violated by more
    than epsilon and, when rel_gap is set, a relative duality gap of at most rel_gap), so each
    C's objective is within 1.01 C epsilon (and rel_gap P(w)) of that C's optimum.

    Attributes (after fit): those of SVMMap for the chosen C, and
    C_ : the chosen C.
    path_ : one dict per C, in increasing C: ``C``, ``iterations``, ``seconds``,
        ``primal_objective``, ``dual_objective``, ``relative_gap``, ``status`` and ``vali``
        (the validation measure).
    selection_ : what the model file records of the selection (measure, source, path).
    """

    def __init__(self, Cs=(0.1, 1, 10, 100, 1000), loss="map", epsilon=DEFAULT_EPSILON,
                 algorithm="1-slack", max_iter=None, max_time=None, n_threads=1,
                 oracle="divide", verbose=0, feature_map=None, cost_ratio=1.0, qp_solver="smo",
                 cache_size=0, rel_gap=DEFAULT_REL_GAP, select_metric="map", holdout=0.2,
                 random_state=0, select_tol=DEFAULT_SELECT_TOL):
        super().__init__(loss=loss, epsilon=epsilon, algorithm=algorithm, max_iter=max_iter,
                         max_time=max_time, n_threads=n_threads, oracle=oracle,
                         verbose=verbose, feature_map=feature_map, cost_ratio=cost_ratio,
                         qp_solver=qp_solver, cache_size=cache_size, rel_gap=rel_gap)
        self.Cs = Cs
        self.select_metric = select_metric
        self.holdout = holdout
        self.random_state = random_state
        self.select_tol = select_tol

    _parameter_constraints = {
        **{name: rule for name, rule in SVMMap._parameter_constraints.items() if name != "C"},
        "Cs": ["array-like"],
        "select_metric": [str],
        "holdout": [Interval(Real, 0, 1, closed="neither")],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
        "select_tol": [Interval(Real, 0, None, closed="left")],
    }

    def check_params(self):
        super().check_params()
        Cs = np.asarray(self.Cs, dtype=float)
        if Cs.ndim != 1 or len(Cs) == 0 or not np.all(np.isfinite(Cs) & (Cs > 0)):
            raise ValueError(f"Cs must be a non-empty list of positive finite numbers, "
                             f"got {self.Cs!r}")
        validation_measure(self.select_metric)

    def fit(self, X, y, qid, eval_set=None, callbacks=None):
        """Train along the C path on (X, y, qid); choose C by the measure on ``eval_set``
        ((X, y, qid) of validation documents), or on held-out training queries.
        ``callbacks``: as for SVMMap.fit, told about every fit of the path."""
        self.check_params()
        measure = validation_measure(self.select_metric)
        if eval_set is None:
            held = holdout_split(np.asarray(qid), self.holdout, self.random_state)
            X_vali, y_vali, qid_vali = _rows(X, held), np.asarray(y)[held], \
                np.asarray(qid)[held]
            X, y, qid = _rows(X, ~held), np.asarray(y)[~held], np.asarray(qid)[~held]
            source = f"holdout {self.holdout:g} of the training queries " \
                     f"(random_state={self.random_state})"
        else:
            X_vali, y_vali, qid_vali = eval_set
            source = "eval_set"
        Cs = sorted(float(c) for c in self.Cs)
        start = time.perf_counter()
        prepared = self._prepare(X, y, qid)
        plugin = prepared["plugin"]
        path, results = [], []
        for result in self._learner(Cs[0], callbacks).fit_path(plugin, Cs):
            coef, intercept = plugin.scoring_function(result.w)
            scores = self._scores(coef, intercept, prepared["feature_map"], X_vali, qid_vali)
            path.append({"C": result.C, "iterations": result.iterations,
                         "seconds": result.seconds,
                         "primal_objective": result.primal_objective,
                         "dual_objective": result.dual_objective,
                         "relative_gap": result.relative_gap, "status": result.status,
                         "vali": float(measure(scores, y_vali, qid_vali))})
            results.append(result)
        best = choose([row["vali"] for row in path], self.select_tol)
        self.C_ = Cs[best]
        self.path_ = path
        self.selection_ = {"select_metric": self.select_metric,
                           "select_tol": float(self.select_tol), "validation": source,
                           "C": self.C_, "seconds": time.perf_counter() - start,
                           "path": path}
        self._finish(prepared, results[best])
        return self

    def best_estimator(self):
        """A plain SVMMap with C = C_ holding the chosen model (what ``save`` writes)."""
        check_is_fitted(self)
        params = {k: v for k, v in self.get_params(deep=False).items()
                  if k not in ("Cs", "select_metric", "holdout", "random_state",
                               "select_tol")}
        model = SVMMap(C=self.C_, **params)
        model.__dict__.update({k: v for k, v in self.__dict__.items() if k.endswith("_")})
        return model

    def save(self, path):
        """Write the chosen model (an SVMMap model file, C = C_) with the path recorded
        under ``selection``."""
        self.best_estimator().save(path)

    def _scores(self, coef, intercept, features, X, qid):
        if features is not None:
            X = features.transform(check_features(X), qid)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(X @ coef).ravel() + intercept


def _rows(X, mask):
    """Rows of X (ndarray, sparse matrix or DataFrame) where ``mask`` is true."""
    return X.iloc[mask] if hasattr(X, "iloc") else X[mask]
