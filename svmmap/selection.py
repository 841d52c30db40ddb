"""Model selection in one fit, without scikit-learn: SVMMap trained along a path of C values,
small to large, each fit warm-started from the previous one
(svmstruct_api.learner.BaseSSVM.fit_path), the C with the best validation measure kept.
svmmap.model_selection.SVMMapCV (the estimator) and ``svmmap_learn -c C1,C2,...`` both select
through :func:`select_c`.

Validation queries come from a validation set or, without one, from a random fraction of the
training queries (:func:`holdout`, RankLib's ``-tvs``).  The chosen C is the smallest whose
validation measure is within ``select_tol`` of the best (:func:`choose`): values that close are
ties, and ties go to the smallest C (the simplest model), as in svmmap.experiments.selection.
The default 0.0005 treats values that agree to 3 decimals as ties: a near-optimal fit's
validation MAP moves by that much with how close to the optimum training stopped
(benchmarks/results/defaults.md), so a plain argmax would pick between two C values of equal
merit by numerical accident.
"""

import dataclasses
import math
import time
import warnings

import numpy as np

from . import metrics, training
from .collection import check_features
from .errors import InputFormatError
from .options import SELECT_METRIC_HELP, SELECT_METRIC_RE
from .params import Interval, Sequence, Text

#: the parameters SVMMapCV adds to SVMMap's (``C`` excepted) and their rules
SELECTION_RULES = {
    "Cs": [Sequence()],
    "select_metric": [Text()],
    "holdout": [Interval(0, 1, closed="neither")],
    "random_state": [Interval(0, None, closed="left", integer=True), None],
    "select_tol": [Interval(0, math.inf, closed="left")],
}


def check_cs(Cs):
    """The C values of a path as floats in increasing order; ValueError unless a non-empty
    list of positive finite numbers."""
    values = np.asarray(Cs, dtype=float) if not isinstance(Cs, str) else np.array([np.nan])
    if values.ndim != 1 or len(values) == 0 or not np.all(np.isfinite(values) & (values > 0)):
        raise ValueError(f"Cs must be a non-empty list of positive finite numbers, got {Cs!r}")
    return sorted(float(c) for c in values)


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


def holdout(X, y, qid, fraction, random_state=0):
    """((X, y, qid) to train on, (X, y, qid) held out, a description of the held-out part):
    the documents of a random ``fraction`` of the queries held out (:func:`holdout_split`);
    X an array, a sparse matrix or a DataFrame."""
    held = holdout_split(np.asarray(qid), fraction, random_state)
    y, qid = np.asarray(y), np.asarray(qid)
    source = f"holdout {fraction:g} of the training queries (random_state={random_state})"
    return (_rows(X, ~held), y[~held], qid[~held]), (_rows(X, held), y[held], qid[held]), \
        source


def select_c(params, prepared, Cs, vali, select_metric="map", select_tol=0.0, callbacks=(),
             source="eval_set"):
    """Train the prepared problem (svmmap.training.prepare) along ``Cs`` (increasing), each
    fit warm-started from the previous one, and choose C by ``select_metric`` on ``vali``
    ((X, y, qid) of validation documents, before any feature map).  Returns (fitted
    attributes of the chosen fit, as svmmap.training.fitted_attributes, whose
    ``selection_`` records the path: measure, source, chosen C, seconds, whether the path was
    ``interrupted`` and one row per C with its iterations, seconds, objectives, relative
    gap, status and validation measure).

    Ctrl-C (or SIGTERM, svmmap.interrupts) stops the whole path, not only the fit in
    progress: C is then chosen among the fits made so far (the interrupted one included,
    as the best model found at its C), ``interrupted`` is true and so is the chosen fit's
    status, whatever it was (the model is marked not converged, as an interrupted fit is);
    before the first fit has a result, KeyboardInterrupt propagates."""
    measure = validation_measure(select_metric)
    X_vali, y_vali, qid_vali = vali
    if prepared["feature_map"] is not None:
        X_vali = prepared["feature_map"].transform(check_features(X_vali), qid_vali)
    plugin = prepared["plugin"]
    start = time.perf_counter()
    path, results = [], []

    def run():
        try:
            for result in training.learner(params, Cs[0], callbacks).fit_path(plugin, Cs):
                coef, intercept = plugin.scoring_function(result.w)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    scores = np.asarray(X_vali @ coef).ravel() + intercept
                row = {"C": result.C, "iterations": result.iterations,
                       "seconds": result.seconds,
                       "primal_objective": result.primal_objective,
                       "dual_objective": result.dual_objective,
                       "relative_gap": result.relative_gap, "status": result.status,
                       "vali": float(measure(scores, y_vali, qid_vali))}
                results.append(result)  # first: every row of path has its result
                path.append(row)
        except KeyboardInterrupt:  # while scoring a fit: the path ends with the fits made
            if not results:
                raise

    training.train(run, plugin, lambda: Cs[min(len(path), len(Cs) - 1)])
    interrupted = len(path) < len(Cs) or path[-1]["status"] == "interrupted"
    best = choose([row["vali"] for row in path], select_tol)
    chosen = results[best]
    if interrupted:
        chosen = dataclasses.replace(chosen, status="interrupted")
    selection = {"select_metric": select_metric, "select_tol": float(select_tol),
                 "validation": source, "C": Cs[best], "interrupted": interrupted,
                 "seconds": time.perf_counter() - start, "path": path}
    return training.fitted_attributes(prepared, chosen, selection)


def path_table(selection, source):
    """The C path of a selection record (``selection_``) as a table, the chosen C marked."""
    metric = selection["select_metric"]
    stopped = " (interrupted: the C values after the last row were not trained)" \
        if selection.get("interrupted") else ""
    lines = [f"Model selection by {metric} on {source}: warm-started path over "
             f"{len(selection['path'])} C values in {selection['seconds']:.2f} s{stopped}",
             f"{'C':>10} {'iterations':>10} {'seconds':>8} {'primal':>14} {'dual':>14} "
             f"{'rel. gap':>9} {'status':>10} {metric:>9}"]
    for row in selection["path"]:
        chosen = "  <- chosen" if row["C"] == selection["C"] else ""
        lines.append(f"{row['C']:>10g} {row['iterations']:>10d} {row['seconds']:>8.3f} "
                     f"{row['primal_objective']:>14.8g} {row['dual_objective']:>14.8g} "
                     f"{row['relative_gap']:>9.2e} {row['status']:>10} "
                     f"{row['vali']:>9.4f}{chosen}")
    return "\n".join(lines)


def _rows(X, mask):
    """Rows of X (ndarray, sparse matrix or DataFrame) where ``mask`` is true."""
    return X.iloc[mask] if hasattr(X, "iloc") else X[mask]
