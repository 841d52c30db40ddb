"""Model selection: a hyper-parameter chosen on validation queries, by one measure
(:func:`validation_measure`, a selection measure of svmmap.core.measures) and one tie rule
(:func:`choose`: the first value, in increasing model capacity, within ``select_tol`` of the
best -- the simplest model among equals).  Two drivers choose this way, without scikit-learn:

* :func:`select_c`: SVMMap trained along a path of C values, small to large, each fit
  warm-started from the previous one (svmstruct_api.learner.BaseSSVM.fit_path).
  svmmap.model_selection.SVMMapCV (the scikit-learn estimator) and ``svmmap_learn -c
  C1,C2,...`` both select through one driver (:func:`fit_c_path`).  Validation queries
  come from a validation set or, without one, from a random fraction of the training
  queries (:func:`holdout`, RankLib's ``-tvs``).  The default ``select_tol`` 0.0005 treats
  values that agree to 3 decimals as ties: a near-optimal fit's validation MAP moves by
  that much with how close to the optimum training stopped (benchmarks/results/defaults.md),
  so a plain argmax would pick between two C values of equal merit by numerical accident.
* :func:`select`: any method of svmmap.experiments.registry (SVMs, baselines, the best
  feature) trained for every value of its grid, the experiments' protocol: chosen by
  validation MAP, or for an SVM trained for another measure (``Method.measure``: ndcg@10,
  mrr, ...) by that measure, with no tolerance.  A structural SVM's C grid is trained as one
  warm-started path (:func:`select_c`, checked by the SVM itself: the training data binned and
  checked once, each fit started from the previous one's working set; every fit still stops
  at the certified gap, so the choice is that of fits made from scratch); the other methods
  are trained from scratch for each value.  A grid value whose training fails
  in the QP solver (:class:`svmstruct_api.qp.QPError`) is skipped and recorded in
  ``Selected.failed``, so one numerically hard problem does not end a long experiment; the
  tables report such failures.  Ctrl-C or SIGTERM, inside a fit or between two, stops the
  whole experiment (KeyboardInterrupt), never only the fit in progress.
"""

from __future__ import annotations

import dataclasses
import inspect
import time
import warnings
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np

from svmstruct_api.qp import QPError

from .. import metrics
from ..errors import InputFormatError
from ..kernels._csr import as_scipy, scores
from . import interrupts, training
from .measures import MEASURES, parse, parse_select_metric

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from scipy.sparse import csr_matrix

    from svmstruct_api.callbacks import Callback

    from ..experiments.datasets import Split
    from ..features import BinnedFeatureMap
    from ._typing import FloatArray, PathLike, Vector
    from .collection import QueryCollection
    from .training import FittedModel, Problem


class Method(Protocol):
    """What :func:`select` reads of a method (svmmap.experiments.registry.Method, not imported
    here: the registry imports the estimators, which import this module)."""

    @property
    def label(self) -> str:
        """The method's name in the tables."""

    @property
    def param(self) -> str:
        """The name of the hyper-parameter the grid runs over."""

    @property
    def measure(self) -> str:
        """The validation measure the method is chosen by."""

    @property
    def factory(self) -> Any:
        """value -> the method's estimator at that hyper-parameter value, not fitted."""

    def grid_for(self, n_features: int) -> list[Any]:
        """The hyper-parameter values to try on data of ``n_features`` features."""




def validation_measure(name: str) -> Callable[[Vector, Vector, Vector], float]:
    """The function (scores, labels, qid) -> mean measure (LETOR convention,
    svmmap.metrics.measure_mean) of a validation measure's name, case-insensitive: a measure
    of svmmap.core.measures that model selection may choose by ("map", "ndcg", "ndcg@10",
    "err@10", ...: svmmap.core.measures.help_text("select")); ValueError for another name."""
    return partial(metrics.measure_mean, parse_select_metric(name))


def check_validation(y: Vector, qid: Vector, select_metric: str, path: PathLike | None = None,
                     source: str | None = None) -> None:
    """Refuse validation documents on which every ranking scores the same ``select_metric``:
    no query with a relevant (label > 0) and a non-relevant document (for a graded measure,
    NDCG or ERR, with two different grades, one relevant).  Every C would then score the same
    (0 when no document is relevant), and "choosing" the smallest would be a silent
    accident.  ``path``
    (the vali file) or ``source`` (e.g. "eval_set") names what was given."""
    y = np.asarray(y, dtype=np.float64).ravel()
    _, inverse = np.unique(np.asarray(qid).ravel(), return_inverse=True)
    inverse = inverse.ravel()
    n_queries = int(inverse.max()) + 1 if len(inverse) else 0
    lowest, highest = np.full(n_queries, np.inf), np.full(n_queries, -np.inf)
    np.minimum.at(lowest, inverse, y)
    np.maximum.at(highest, inverse, y)
    if MEASURES[parse(select_metric.lower(), "select")[0]].graded:
        informative, what = (highest > 0) & (highest > lowest), \
            "two different grades, one of them relevant (label > 0)"
    else:
        informative, what = (highest > 0) & (lowest <= 0), \
            "both a relevant (label > 0) and a non-relevant document"
    if not informative.any():
        given = "" if source is None else f" ({source})"
        raise InputFormatError(
            f"none of the {n_queries} validation queries{given} has {what}: every C "
            f"scores the same {select_metric}, so it cannot choose C", path)


def choose(values: Sequence[float] | FloatArray, select_tol: float = 0.0) -> int:
    """Index of the chosen value, values in increasing model capacity (C): the first whose
    measure is at least max(values) - select_tol (select_tol = 0: the first maximum).  A NaN
    value (a measure undefined on the validation queries) is never chosen unless all are."""
    values = np.asarray(values, dtype=float)
    if np.all(np.isnan(values)):
        return 0
    return int(np.flatnonzero(values >= np.nanmax(values) - select_tol)[0])


def holdout_split(qid: Vector, fraction: float | None,
                  random_state: int | None = 0) -> np.ndarray:
    """Boolean mask of the documents of a random ``fraction`` of the queries (at least one,
    at most all but one), drawn with numpy's default_rng(random_state)."""
    if not (isinstance(fraction, (int, float)) and 0 < fraction < 1):
        raise ValueError(f"holdout must be a fraction in (0, 1), got {fraction!r}")
    # the sorted distinct ids; asking for the counts skips the masked-array check by which
    # np.unique imports numpy.ma (6 ms of the command's start-up)
    queries, _ = np.unique(qid, return_counts=True)
    if len(queries) < 2:
        raise InputFormatError("holding out queries needs at least two training queries")
    n_held = min(max(1, round(fraction * len(queries))), len(queries) - 1)
    held = np.random.default_rng(random_state).choice(queries, n_held, replace=False)
    return np.isin(qid, held)


def holdout(collection: QueryCollection, fraction: float | None, random_state: int | None = 0,
            ) -> tuple[QueryCollection, QueryCollection, str]:
    """(collection to train on, collection held out, a description of the held-out part):
    the queries of a checked QueryCollection split by :func:`holdout_split`, each part in
    the collection's order (nothing checked again)."""
    held = holdout_split(collection.query_ids, fraction, random_state)
    source = f"holdout {fraction:g} of the training queries (random_state={random_state})"
    return collection.subset(np.flatnonzero(~held)), collection.subset(np.flatnonzero(held)), \
        source


def fit_c_path(params: dict[str, Any], data: QueryCollection, Cs: Sequence[float],
               vali: QueryCollection | None = None, select_metric: str = "map",
               select_tol: float = 0.0,
               callbacks: Sequence[Callback | Callable[..., object]] = (), *,
               holdout_fraction: float | None = None, random_state: int | None = 0,
               refit_all: bool = True, vali_path: PathLike | None = None,
               patience: int | None = None) -> FittedModel:
    """The C path's training driver, for SVMMapCV and ``svmmap_learn -c C1,C2,...``: the
    svmmap.core.training.FittedModel of ``params`` with C chosen along ``Cs`` (increasing) by
    ``select_metric`` on ``vali`` (the checked QueryCollection of validation documents, read
    from ``vali_path`` if a file) or, when ``vali`` is None, on a held-out
    ``holdout_fraction`` of the queries of ``data`` (the checked QueryCollection of the
    training documents; :func:`holdout`), after which the model is trained again on all of
    ``data`` at the chosen C unless ``refit_all`` is false (:func:`refit`)."""
    train, source = data, "eval_set"
    if vali is None:
        train, vali, source = holdout(data, holdout_fraction, random_state)
    check_validation(np.asarray(vali.labels), vali.grouped_qid, select_metric, vali_path,
                     None if vali_path else source)
    problem = training.prepare(params, train)
    fitted = select_c(params, problem, Cs, vali, select_metric, select_tol, callbacks,
                      source, patience)
    if train is data:
        return fitted
    if refit_all:
        return refit(params, data, fitted, callbacks)
    return fitted.with_selection(refit=False)


def select_c(params: dict[str, Any], problem: Problem, Cs: Sequence[float],
             vali: QueryCollection, select_metric: str = "map", select_tol: float = 0.0,
             callbacks: Sequence[Callback | Callable[..., object]] = (), source: str = "eval_set",
             patience: int | None = None) -> FittedModel:
    """Train the Problem (svmmap.core.training.prepare) along ``Cs`` (increasing), each
    fit warm-started from the previous one, and choose C by ``select_metric`` on ``vali``
    (the checked QueryCollection of validation documents, before any feature map; checked
    for informative queries by :func:`fit_c_path`).  Returns the
    svmmap.core.training.FittedModel of the chosen fit, whose ``selection`` records the path:
    measure, source, chosen C, seconds, whether the path was ``interrupted`` and one row
    per C with its iterations, seconds, objectives, relative gap, status and validation
    measure.

    ``patience`` (None: off): stop the path once that many C values in a row after the best
    so far score below it by more than ``select_tol`` -- early stopping on validation, as
    LightGBM's ``early_stopping_rounds`` does over boosting rounds; the record then says
    ``stopped_early`` and lists only the C values trained.

    Ctrl-C (or SIGTERM, svmmap.core.interrupts) stops the whole path, not only the fit in
    progress: C is then chosen among the fits made so far (the interrupted one included,
    as the best model found at its C), ``interrupted`` is true and so is the chosen fit's
    status, whatever it was (the model is marked not converged, as an interrupted fit is);
    before the first fit has a result, KeyboardInterrupt propagates."""
    measure = validation_measure(select_metric)
    X_vali, y_vali, qid_vali = vali.X, vali.labels, vali.grouped_qid
    feature_map = cast("BinnedFeatureMap | None", problem.feature_map)
    if feature_map is not None:
        X_vali = feature_map.transform_bins(as_scipy(X_vali), qid_vali)
    if problem.normalizer is not None:  # the scaled columns training saw
        X_vali = problem.normalizer.scale_columns(X_vali)
    plugin = problem.plugin
    start = time.perf_counter()
    path, results, stopped = [], [], []

    def run():
        try:
            for result in training.learner(params, Cs[0], callbacks).fit_path(plugin, Cs):
                coef, intercept = plugin.scoring_function(result.w)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    vali_scores = scores(X_vali, coef) + intercept
                row = {"C": result.C, "iterations": result.iterations,
                       "seconds": result.seconds,
                       "primal_objective": result.primal_objective,
                       "dual_objective": result.dual_objective,
                       "relative_gap": result.relative_gap, "status": result.status,
                       "vali": float(measure(vali_scores, y_vali, qid_vali))}
                results.append(result)  # first: every row of path has its result
                path.append(row)
                if patience and len(path) < len(Cs) and \
                        _falling(path, select_tol) >= patience:
                    stopped.append(True)
                    return
        except KeyboardInterrupt:  # while scoring a fit: the path ends with the fits made
            if not results:
                raise

    training.run_guarded(run, plugin, lambda: Cs[min(len(path), len(Cs) - 1)])
    interrupted = (len(path) < len(Cs) and not stopped) or path[-1]["status"] == "interrupted"
    best = choose([row["vali"] for row in path], select_tol)
    chosen = results[best]
    if interrupted:
        chosen = dataclasses.replace(chosen, status="interrupted")
    selection = {"select_metric": select_metric, "select_tol": float(select_tol),
                 "validation": source, "C": Cs[best], "interrupted": interrupted,
                 "seconds": time.perf_counter() - start, "path": path}
    if stopped:
        selection["stopped_early"] = True
    return training.FittedModel.of(problem, chosen, selection)


def _falling(path, select_tol):
    """How many of the last rows of ``path`` in a row score below the best row's validation
    measure by more than ``select_tol`` (rows that tie with the best do not count: at the
    C -> 0 limit many C values give one ranking)."""
    best = max(row["vali"] for row in path)
    count = 0
    for row in reversed(path):
        if not row["vali"] < best - select_tol:
            break
        count += 1
    return count


def refit(params: dict[str, Any], data: QueryCollection, fitted: FittedModel,
          callbacks: Sequence[Callback | Callable[..., object]] = ()) -> FittedModel:
    """After C was chosen on held-out training queries (:func:`holdout`): the FittedModel
    trained on all the training queries ``data`` (a QueryCollection) at the chosen C --
    scikit-learn's GridSearchCV ``refit`` -- its selection record marked ``"refit":
    true``; the held-out fit's path is kept in that record.  A path stopped by Ctrl-C or
    SIGTERM (``interrupted``) is not trained again: its held-out fit is kept, ``"refit":
    false``."""
    selection = fitted.selection
    assert selection is not None, "refit follows a selection: the fit carries its record"
    if selection.get("interrupted"):
        return fitted.with_selection(refit=False)
    return dataclasses.replace(
        training.fit({**params, "C": selection["C"]}, data, callbacks=callbacks),
        selection={**selection, "refit": True})


def path_table(selection: dict[str, Any], source: str) -> str:
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
    if "refit" in selection:
        lines.append(f"Refit on all the training queries at C = {selection['C']:g}"
                     if selection["refit"] else
                     "Not refit (--no-refit): the model is the one trained without the "
                     "held-out queries")
    return "\n".join(lines)


# -- the experiments' grid search (svmmap.experiments) --------------------------------------


def predict(model: Any, split: Split) -> FloatArray:
    """``model.decision_function`` on a Split, passing the query ids to estimators that take
    them (a feature map working within queries needs them)."""
    if "qid" in inspect.signature(model.decision_function).parameters:
        return model.decision_function(split.X, split.qid)
    return model.decision_function(split.X)


@dataclass
class Selected:
    """The outcome of :func:`select`: the ``grid`` tried, the chosen ``value`` and its fitted
    ``model``, the validation measure (``method.measure``, MAP by default) of every grid
    value in ``vali_map``, and the wall time of the whole grid
    (seconds)."""

    method: Method
    grid: list[Any]
    value: Any
    model: Any
    vali_map: dict[Any, float]
    seconds: float
    failed: list[tuple[Any, str]]

    def scores(self, split: Split) -> FloatArray:
        """The chosen model's scores of ``split``'s documents."""
        return predict(self.model, split)

    @property
    def end(self) -> str | None:
        """``"low"`` / ``"high"`` when the chosen value is the grid's smallest / largest,
        else None (also for a grid of features, which has no order of capacity)."""
        if self.method.param == "feature":
            return None
        if self.value == min(self.grid):
            return "low"
        if self.value == max(self.grid):
            return "high"
        return None


def _fit(method, value, train):
    """``method``'s estimator at ``value`` fitted on ``train``.  A fit stopped by Ctrl-C or
    SIGTERM returns its best model so far (status "interrupted"), which is right for one
    command's model but not for an experiment's grid: here the signal stops the whole run,
    so KeyboardInterrupt is raised again (svmmap.core.interrupts.stop_requested)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # queries without constraints are skipped
        model = method.factory(value).fit(*train.arrays)
    status = getattr(getattr(model, "training_result_", None), "status", None)
    if status == "interrupted" or interrupts.stop_requested():
        raise KeyboardInterrupt
    return model


def same_ranking(a: Vector, b: Vector, qid: np.ndarray) -> bool:
    """True when scores ``a`` and ``b`` order the documents of every query identically
    (ties included; scores are compared after removing their mean, scaling by the largest
    remaining magnitude and rounding to 1e-9, so that a rescaled weight vector or a shifted
    bias counts as the same ranking)."""
    def groups(scores):  # dense rank of each document's score group, queries in qid order
        scores = np.asarray(scores, dtype=np.float64)
        scores = scores - scores.mean()
        scale = np.abs(scores).max(initial=0.0) or 1.0
        rounded = np.round(scores / scale, 9)
        order = np.lexsort((-rounded, qid))
        new_group = np.r_[True, (rounded[order][1:] != rounded[order][:-1])
                          | (qid[order][1:] != qid[order][:-1])]
        dense = np.empty(len(order), dtype=np.int64)
        dense[order] = np.cumsum(new_group)
        return dense

    return np.array_equal(groups(a), groups(b))


def low_end_stable(selected: Selected, train: Split, split: Split,
                   factor: float = 100.0) -> bool | None:
    """For a choice at the low end of a C grid: True when the model trained with C / factor
    ranks ``split`` exactly as the chosen one (the grid has reached the C -> 0 limit);
    None when the choice is not at the low end or the hyper-parameter is not C."""
    if selected.method.param != "C" or selected.end != "low":
        return None
    smaller = _fit(selected.method, selected.value / factor, train)
    return same_ranking(selected.scores(split), predict(smaller, split), split.qid)


def _select_on_c_path(method, grid, train, vali, patience=None):
    """(chosen C, its fitted estimator, {C: validation measure}) of a structural SVM's C grid
    trained as one warm-started path (module docstring), or None when the path does not
    apply: the method's estimator is not a structural SVM (svmmap.SVMMap: a ranker that keeps
    a FittedModel, hyper-parameter C), the grid is not increasing, the validation queries
    cannot rank (:func:`check_validation`) or the QP fails on the path (the caller then
    trains each value from scratch, skipping the failures)."""
    from .collection import QueryCollection

    estimator = method.factory(grid[0])
    if method.param != "C" or not hasattr(estimator, "_set_fitted") or \
            list(grid) != sorted(set(grid)) or len(grid) < 2:
        return None
    estimator.check_params()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # queries without constraints are skipped
            data = estimator._training_collection(train.X, train.y, train.qid)
            checked = QueryCollection.from_arrays(
                *estimator._validate_eval_sets([(vali.X, vali.y, vali.qid)])[0])
            fitted = fit_c_path(estimator.get_params(deep=False), data, list(grid), checked,
                                method.measure, 0.0, patience=patience)
    except (QPError, InputFormatError):
        return None
    if fitted.selection.get("interrupted"):
        raise KeyboardInterrupt
    estimator._set_fitted(fitted)
    estimator.set_params(C=fitted.selection["C"])
    return fitted.selection["C"], estimator, \
        {row["C"]: row["vali"] for row in fitted.selection["path"]}


def select(method: Method, train: Split, vali: Split, patience: int | None = None) -> Selected:
    """Fit ``method`` on ``train`` for each grid value; pick by the method's validation
    measure (MAP unless it is an SVM trained for another) on ``vali`` (Splits).
    ``patience``: a C path stops early (:func:`select_c`); the grid values not trained are
    absent from ``vali_map``."""
    start = time.perf_counter()
    measure = validation_measure(method.measure)
    fitted: list[tuple[Any, Any]] = []
    vali_map: dict[Any, float] = {}
    failed: list[tuple[Any, str]] = []
    grid = method.grid_for(cast("csr_matrix", train.X).shape[1])  # a Split's X is CSR
    on_path = _select_on_c_path(method, grid, train, vali, patience)
    if on_path is not None:
        value, model, vali_map = on_path
        return Selected(method, grid, value, model, vali_map, time.perf_counter() - start,
                        failed)
    for value in grid:
        try:
            model = _fit(method, value, train)
        except QPError as err:
            failed.append((value, str(err)))
            continue
        vali_map[value] = measure(predict(model, vali), vali.y, vali.qid)
        fitted.append((value, model))
    if not fitted:
        raise QPError(f"{method.label}: training failed for every grid value; first: "
                      f"{failed[0][0]}: {failed[0][1]}")
    value, model = fitted[choose([vali_map[v] for v, _ in fitted])]
    return Selected(method, grid, value, model, vali_map, time.perf_counter() - start,
                    failed)
