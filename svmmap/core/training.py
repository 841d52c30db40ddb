"""Training an SVMMap, without scikit-learn: the structured model of a loss over the training
queries (:class:`Problem`), the cutting-plane learner, the one training driver (:func:`fit`)
and what it produces (:class:`FittedModel`: what an estimator's fitted attributes and a model
file hold), and the model a file restores (the parameters' rules are svmmap.core.params').

svmmap.estimator.SVMMap (the scikit-learn estimator), ``svmmap_learn``, the C path
(svmmap.core.selection.fit_c_path) and svmmap.dask.DaskSVMMap (through ``fit``'s
``make_problem`` hook) all train through :func:`fit`; the command line imports only this,
numpy and the extensions, never scikit-learn (whose import alone takes longer than most
trainings: benchmarks/grid.py), and scipy only for binning: its data is the reader's
dense ndarray or CSRArrays (svmmap.kernels._csr), and binned features are trained and scored
through their bins (BinnedArrays: svmmap.features, never the indicator matrix).
``params`` is always the dict of SVMMap's constructor arguments (``get_params(deep=False)``).
"""

from __future__ import annotations

import inspect
import os
import sys
import warnings
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from svmstruct_api.options import NonFiniteObjective, QPError
from svmstruct_api.result import TrainingResult

from ..data.model_file import damage_reported, model_params, renamed
from ..data.model_file import model_content as file_content
from ..errors import InputFormatError
from ..kernels._csr import as_scipy, scores
from ..kernels._kernel_inputs import BinnedArrays
from . import plugins
from .collection import QueryCollection, check_sample_weight
from .measures import MEASURES, parse_loss
from .normalize import Normalizer, per_query_normalized
from .params import SVMMAP_DEFAULTS, check_svmmap

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from types import FrameType

    from svmstruct_api.learner import BaseSSVM
    from svmstruct_api.plugin import StructuredModel

    from ._typing import (
        Callbacks,
        FloatArray,
        IntArray,
        Matrix,
        PathLike,
        QueryWeights,
        Vector,
    )


def plugin_class(name: str | None) -> Callable[..., StructuredModel]:
    """The plugin class a measure registry's record names (svmmap.core.measures: Measure.plugin),
    imported when first asked for (svmmap.core.plugins)."""
    if name is None:
        raise ValueError("this measure names no plugin: SVMs cannot train for it")
    return getattr(plugins, name)


def _is_accuracy(plugin):
    """Whether ``plugin`` is an AccuracyPlugin (the classification SVM, with an intercept),
    without importing its module for a ranking plugin: an instance exists only once the
    module has been imported."""
    module = sys.modules.get(f"{plugins.__name__}.accuracy")
    return module is not None and isinstance(plugin, module.AccuracyPlugin)

#: w, and every constraint vector of the working set, is dense: 2^27 features is 1 GiB each
MAX_FEATURES = 2**27

#: parameters that say how to train, not what the model is: not written to model files
RUNTIME_PARAMS = ("n_threads", "verbose", "max_time")


def no_features_error(shape: Sequence[int], estimator: str) -> str:
    """The message of data without a feature column (every line ``<label> qid:<q>`` alone):
    scikit-learn's words, which its estimator checks look for, so that svmmap_learn and the
    estimators (validate_data) say the same."""
    return (f"Found array with 0 feature(s) (shape={tuple(shape)}) while a minimum of 1 is "
            f"required by {estimator}.")


class QueryWeightsError(InputFormatError):
    """The query (or document) weights leave nothing to train on: the weights are at fault,
    not the data (svmmap_learn names its --query-weights file)."""


@dataclass
class Problem:
    """A training problem: ``plugin``, the structured model over the trainable queries (an
    svmmap.core.plugins plugin, or svmmap.dask's distributed model), and what the model keeps of
    the data besides the weights: the fitted ``feature_map`` and ``normalizer`` (or None),
    whether the data looked ``per_query_normalized`` and the query counts."""

    plugin: Any
    n_queries_used: int
    n_queries_without_relevant: int
    n_queries_all_relevant: int
    feature_map: Any = None
    normalizer: Normalizer | None = None
    per_query_normalized: bool | None = None


@dataclass
class FittedModel:
    """What a fit produces, and what a model file keeps: the scoring function w.phi(x) + b
    (``coef``, ``intercept``, the fitted ``feature_map`` and ``normalizer``), the
    ``training_result`` (svmstruct_api.learner.TrainingResult; after restore, what the file
    keeps), the query counts, ``per_query_normalized`` and the ``selection`` record of a C
    path (svmmap.core.selection.select_c), if there was one.  An estimator holds each field as
    the attribute of the same name plus "_" (``coef_``, ...)."""

    coef: np.ndarray
    intercept: float
    training_result: TrainingResult | None = None
    feature_map: Any = None
    normalizer: Normalizer | None = None
    per_query_normalized: bool | None = None
    n_queries_used: int | None = None
    n_queries_without_relevant: int | None = None
    n_queries_all_relevant: int | None = None
    selection: dict[str, Any] | None = None

    @classmethod
    def of(cls, problem: Problem, result: TrainingResult,
           selection: dict[str, Any] | None = None) -> FittedModel:
        """The fitted model a TrainingResult of ``problem`` gives (``selection``: the record
        of the C path it was chosen on, if any)."""
        coef, intercept = problem.plugin.scoring_function(result.w)
        if problem.normalizer is not None and _is_accuracy(problem.plugin):
            intercept -= problem.normalizer.fold(coef)[1]  # b + w.(shift / scale)
        return cls(coef=coef, intercept=intercept, training_result=result,
                   feature_map=problem.feature_map, normalizer=problem.normalizer,
                   per_query_normalized=problem.per_query_normalized,
                   n_queries_used=problem.n_queries_used,
                   n_queries_without_relevant=problem.n_queries_without_relevant,
                   n_queries_all_relevant=problem.n_queries_all_relevant,
                   selection=selection)

    @classmethod
    def from_attributes(cls, estimator: object) -> FittedModel:
        """The fitted model an estimator's attributes (``coef_``, ...) hold."""
        values: dict[str, Any] = {field.name: getattr(estimator, f"{field.name}_", None)
                                  for field in fields(cls)}
        return cls(**values)

    def attributes(self) -> dict[str, Any]:
        """The estimator's fitted attributes: name + "_" -> value."""
        return {f"{field.name}_": getattr(self, field.name) for field in fields(self)}

    def with_selection(self, **changes: Any) -> FittedModel:
        """This model with its selection record updated by ``changes``."""
        return replace(self, selection={**(self.selection or {}), **changes})

    def scores(self, X: Matrix, qid: Vector | None = None) -> FloatArray:
        """The ranking scores w.phi(x) + b for the rows of a checked X (``qid`` needed only
        by a feature map that works within queries)."""
        X_phi = X
        if self.feature_map is not None:
            if self.feature_map.needs_qid and qid is None:
                raise InputFormatError(
                    f"the model's feature map (per_query={self.feature_map.per_query!r}) "
                    "works within queries: pass qid to decision_function")
            X_phi = self.feature_map.transform_bins(as_scipy(X), qid)
        if self.normalizer is not None:  # w.z, z = (x - shift) / scale
            return self.normalizer.scores(X_phi, self.coef) + self.intercept
        return scores(X_phi, self.coef) + self.intercept

    def record(self) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """(model, training): what a model file keeps: the weights (and the feature map's
        thresholds, the normaliser), and the training record, with the C path of a model
        selection if there was one (its timings left out)."""
        model = {"coef": [float(v) for v in self.coef], "intercept": float(self.intercept)}
        if self.feature_map is not None:
            model.update(self.feature_map.fitted_state())  # its thresholds
        if self.normalizer is not None:
            model["normalizer"] = self.normalizer.state()
        result = self.training_result
        if result is None:
            return model, None
        training = {
            "status": result.status,
            # NaN (nothing measured: interrupted before the first oracle pass) is written null
            **{key: _finite_or_none(getattr(result, key))
               for key in ("primal_objective", "dual_objective", "duality_gap",
                           "relative_gap", "max_violation")},
            "iterations": result.iterations, "working_set_size": result.working_set_size,
            "n_queries_used": self.n_queries_used,
            "n_queries_without_relevant": self.n_queries_without_relevant,
            "n_queries_all_relevant": self.n_queries_all_relevant,
        }
        if self.per_query_normalized is not None:
            training["per_query_normalized"] = bool(self.per_query_normalized)
        if self.selection is not None:  # the C path of -c C1,C2,..., timings left out
            training["selection"] = without_timings(self.selection)
        return model, training


def fit(params: dict[str, Any], data: QueryCollection | tuple[Any, ...],
        sample_weight: QueryWeights = None, callbacks: Callbacks = (),
        make_problem: Callable[[dict[str, Any], Any, QueryWeights], Problem] | None = None,
        ) -> FittedModel:
    """The one training driver: the FittedModel of ``params`` (SVMMap's constructor
    arguments) trained at ``params["C"]`` on ``data``, the checked QueryCollection of the
    training documents (checked once, where they entered: an estimator's validate_data and
    QueryCollection.from_arrays, or the reader; nothing here checks them again).
    ``make_problem(params, data, sample_weight)`` builds the Problem (default
    :func:`prepare`: the plugin of the measure over a QueryCollection in this process;
    svmmap.dask: the partitions on the workers)."""
    if make_problem is not None:
        problem = make_problem(params, data, sample_weight)
    else:
        assert isinstance(data, QueryCollection), "training.fit takes a checked QueryCollection"
        problem = prepare(params, data, sample_weight)
    learner_ = learner(params, params["C"], callbacks)
    result = run_guarded(lambda: learner_.fit(problem.plugin), problem.plugin, params["C"])
    return FittedModel.of(problem, result)


def prepare(params: Mapping[str, Any], collection: QueryCollection,
            sample_weight: QueryWeights = None) -> Problem:
    """The training Problem of a checked QueryCollection (``fit``); ``sample_weight`` as
    SVMMap.fit takes it, indexed by the collection's input rows."""
    if collection.n_features == 0:
        raise InputFormatError(no_features_error(collection.X.shape, "SVMMap"))
    if params["feature_map"] is None:  # before any array as long as the feature count
        check_n_features(collection.n_features)
    query_level = per_query_normalized(collection.X, collection.ptr)
    normalizer = None
    if params.get("normalize") is not None:  # training sees the scaled columns
        normalizer = Normalizer.fit(params["normalize"], collection.X)
        collection = replace(collection, X=normalizer.scale_columns(collection.X))
    feature_map = None
    if params["feature_map"] is not None:
        from sklearn.base import clone  # binning is a scikit-learn estimator already loaded

        feature_map = clone(params["feature_map"])
        collection = feature_map.fit_transform_collection(
            replace(collection, X=as_scipy(collection.X)))
    check_n_features(collection.n_features)
    loss = params["loss"]
    weights: FloatArray | None = None if sample_weight is None else \
        check_sample_weight(sample_weight, collection.input_qid, len(collection.rows))
    trainable, n_without_relevant, n_all_relevant = collection.trainable_queries()
    if loss != "acc":  # a classifier learns from every document, whatever its query
        check_trainable(collection.n_queries, len(trainable), n_without_relevant,
                        n_all_relevant)
    example_weights = None
    if weights is not None and loss != "acc":
        example_weights = collection.query_weights(weights, trainable)
        if not np.all(example_weights > 0):
            kept = np.flatnonzero(example_weights > 0)
            if len(kept) == 0:
                raise QueryWeightsError("every query that carries constraints has zero "
                                        "weight: there is nothing to train on")
            warn_caller(f"{len(trainable) - len(kept)} queries of weight 0 are left out")
            trainable, example_weights = trainable[kept], example_weights[kept]
    elif weights is not None and not np.any(weights > 0):
        raise QueryWeightsError("every document has zero weight: there is nothing to train on")
    queries = None if loss == "acc" else trainable
    plugin = make_plugin(params, collection, None if weights is None or loss != "acc"
                         else weights[collection.rows], queries=queries)
    plugin.example_weights = example_weights
    _check_memory(plugin.n_features, plugin.n_examples, params["algorithm"],
                  params["cache_size"])
    return Problem(plugin=plugin, n_queries_used=plugin.n_examples,
                   n_queries_without_relevant=n_without_relevant,
                   n_queries_all_relevant=n_all_relevant, feature_map=feature_map,
                   normalizer=normalizer, per_query_normalized=query_level)


def check_n_features(n_features: int) -> None:
    """Refuse more features than a dense weight vector can reasonably hold."""
    if n_features > MAX_FEATURES:
        raise InputFormatError(
            f"X has {n_features} features (highest feature index): more than "
            f"the {MAX_FEATURES} a dense weight vector can reasonably hold; renumber the "
            "features")


def check_trainable(n_queries: int, n_trainable: int, n_without_relevant: int,
                    n_all_relevant: int) -> None:
    """Refuse training queries none of which carries a constraint (a relevant and a
    non-relevant document); warn about the queries skipped."""
    if n_trainable == 0:
        raise InputFormatError(
            f"none of the {n_queries} queries has both a relevant (label > 0) "
            "and a non-relevant document: there is nothing to train on")
    skipped = n_without_relevant + n_all_relevant
    if skipped:
        warn_caller(
            f"{skipped} of {n_queries} queries carry no constraint and are "
            f"skipped ({n_without_relevant} without a relevant document, {n_all_relevant} "
            "with only relevant documents)")


#: the folder of the svmmap package (this module is in its core/ room)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def warn_caller(message: str) -> None:
    """A UserWarning pointing at the first caller outside svmmap (the code that called an
    estimator's fit, whichever driver trained)."""
    frame: FrameType | None = sys._getframe(1)
    level = 2  # stacklevel 2: warn_caller's caller
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, stacklevel=level)


def make_plugin(params: Mapping[str, Any], collection: QueryCollection,
                document_weights: FloatArray | None = None, queries: IntArray | None = None
                ) -> StructuredModel:
    """The structured model of ``params["loss"]`` over the training collection: the plugin
    its measure's registry record names (svmmap.core.measures: ``Measure.plugin``), given the
    settings its constructor names, each by its name: a parameter of ``params`` (``loss``,
    ``n_threads``, ``oracle``, ``cost_ratio``, ...), ``document_weights`` (per document in
    grouped order; AccuracyPlugin) or ``queries`` (the ranking plugins' training queries,
    None for all: see RankingPlugin).  A new plugin takes what it needs by naming it."""
    plugin = plugin_class(MEASURES[parse_loss(params["loss"])[0]].plugin)
    settings = {**params, "document_weights": document_weights, "queries": queries}
    wanted = list(inspect.signature(plugin).parameters)[1:]  # after the collection
    return plugin(collection, **{name: settings[name] for name in wanted if name in settings})


def learner(params: Mapping[str, Any], C: float, callbacks: Callbacks = ()) -> BaseSSVM:
    """The cutting-plane learner of ``params`` at trade-off C (svmstruct_api.learner, imported
    here: reading a model back, as svmmap_classify does, needs no solver)."""
    from svmstruct_api.learner import make_learner

    return make_learner(
        params["algorithm"], C=float(C),
        epsilon=_float_or_none(params["epsilon"]),
        max_iter=None if params["max_iter"] is None else int(params["max_iter"]),
        max_time=_float_or_none(params["max_time"]),
        callbacks=list(callbacks) if isinstance(callbacks, (list, tuple)) else [callbacks],
        qp_solver=params["qp_solver"],
        cache_size=params["cache_size"], rel_gap=_float_or_none(params["rel_gap"]))


def run_guarded(run: Callable[[], Any], plugin: object,
                C: float | Callable[[], float]) -> Any:
    """``run()`` (a learner's fit or path over ``plugin``) with the learners' numerical
    failures turned into one-line input errors; ``C``: the trade-off trained, or a function
    giving the one in training when a failure happens (along a path)."""
    try:
        return run()
    except NonFiniteObjective as exc:
        raise InputFormatError(str(exc)) from None
    except QPError:
        if not hasattr(plugin, "collection"):  # distributed: the values are on the workers
            raise
        C = C() if callable(C) else C
        largest = _largest_abs_value(plugin.collection.X)
        if not np.isfinite(float(C) * largest * largest):
            raise InputFormatError(
                f"training overflowed: C = {float(C):g} times the squared largest "
                f"feature value ({largest:g}) is beyond float64; scale the features or "
                "lower C") from None
        raise


#: keys of a selection record (and of its path's rows) that hold timings: printed and kept on
#: the fitted estimator, never written to a model file (the same data and options give a
#: byte-identical file)
TIMING_KEYS = ("seconds",)


def without_timings(selection: Mapping[str, Any]) -> dict[str, Any]:
    """The selection record ``selection`` (svmmap.core.selection.select_c) without its timings."""
    record = {key: value for key, value in selection.items() if key not in TIMING_KEYS}
    record["path"] = [{key: value for key, value in row.items() if key not in TIMING_KEYS}
                      for row in selection["path"]]
    return record


def params_from_file(params: Mapping[str, Any]) -> dict[str, Any]:
    """All of SVMMap's constructor arguments from a model file's ``params``: the defaults for
    what the file leaves out (files written before rel_gap existed trained by epsilon alone),
    a feature map's parameters made the map; TypeError for a parameter SVMMap does not have."""
    unknown = sorted(set(params) - set(SVMMAP_DEFAULTS))
    if unknown:
        raise TypeError(f"SVMMap has no parameter {unknown[0]!r}")
    params = dict(params)
    if "rel_gap" not in params:
        params["rel_gap"] = None
        params.setdefault("epsilon", 1e-3)  # then always set, 1e-3 its default
    if isinstance(params.get("feature_map"), dict):
        from ..features import BinnedFeatureMap

        params["feature_map"] = BinnedFeatureMap(**params["feature_map"])
    return {**SVMMAP_DEFAULTS, **params}


def restore(params: Mapping[str, Any], n_features_in: int, model: Mapping[str, Any],
            record: Mapping[str, Any] | None) -> FittedModel:
    """The FittedModel of a model file's ``model``
    and ``training`` record for a model of ``params`` on ``n_features_in`` columns; raises
    ValueError, KeyError or TypeError for damaged content.  The training result holds what
    the file keeps (timings NaN, slack None, history empty)."""
    coef = np.array(model["coef"], dtype=np.float64)
    intercept = float(model["intercept"])
    if coef.ndim != 1 or not np.all(np.isfinite(coef)) or not np.isfinite(intercept):
        raise ValueError("coef / intercept hold a non-number")
    feature_map, n_weights = None, n_features_in
    if params["feature_map"] is not None:
        from sklearn.base import clone  # binning is a scikit-learn estimator already loaded

        feature_map = clone(params["feature_map"]).restore(model, n_features_in)
        n_weights = feature_map.n_output_features_
    if len(coef) != n_weights:
        raise ValueError(f"coef has {len(coef)} weights, the model's features are {n_weights}")
    normalizer = None
    if params.get("normalize") is not None:
        normalizer = Normalizer.from_state(model["normalizer"])
        if normalizer.kind != params["normalize"] or len(normalizer.scale) != n_weights:
            raise ValueError("the normalizer does not match the model's normalize / features")
    fitted = FittedModel(coef=coef, intercept=intercept, feature_map=feature_map,
                         normalizer=normalizer)
    if record is None:
        return fitted
    nan = float("nan")
    result = TrainingResult(
        w=np.append(coef, intercept) if params["loss"] == "acc" else coef.copy(),
        formulation=params["algorithm"], C=float(params["C"]),
        epsilon=_float_or_none(params["epsilon"]), status=str(record["status"]),
        **{key: nan if record[key] is None else float(record[key])
           for key in ("primal_objective", "dual_objective", "max_violation")},
        slack=None, iterations=int(record["iterations"]),
        working_set_size=int(record["working_set_size"]),
        seconds=nan, oracle_seconds=nan, qp_seconds=nan, history=[],
        rel_gap=_float_or_none(params["rel_gap"]))
    counts: dict[str, Any] = {key: int(record[key]) for key in (
        "n_queries_used", "n_queries_without_relevant", "n_queries_all_relevant")}
    return replace(fitted, training_result=result, selection=record.get("selection"),
                   per_query_normalized=record.get("per_query_normalized"), **counts)


def file_scorer(document: Mapping[str, Any], path: PathLike
                ) -> tuple[int, Callable[..., FloatArray]]:
    """(n_features_in, scores(X, qid)) of an svmmap model file's checked document (the scorer
    svmmap.data.model_file.load_scorer uses for this kind): restored and scored here, without the
    estimator, so without scikit-learn unless the model bins features."""
    with damage_reported(path, "damaged model file: bad params ({})"):
        params = params_from_file(document["params"])
        check_svmmap("SVMMap", params)
    with damage_reported(path, "damaged model file (svmmap: {})"):
        fitted = restore(params, document["n_features_in"], document["model"],
                         document["training"])
    return document["n_features_in"], fitted.scores


def upgrade_v1(document: Mapping[str, Any], v2: dict[str, Any]) -> None:
    """The svmmap part of a version-1 file's version-2 layout (svmmap.data.model_file.ModelKind):
    the weights and a feature map's thresholds at the top level become ``model``, the feature
    map's parameters (``features``, ``columns``) ``feature_map`` (``base_columns``)."""
    coef, n_features = document.get("coef"), document.get("n_features")
    if not isinstance(coef, list) or not isinstance(n_features, int) or len(coef) != n_features:
        raise ValueError("coef does not match n_features")
    model = {"coef": coef, "intercept": document["intercept"]}
    if "feature_map" in document:
        v2["n_features_in"] = document["feature_map"]["n_input_features"]
        model["thresholds"] = document["feature_map"]["thresholds"]
    params = v2["params"]
    if isinstance(params.get("features"), dict):
        params["feature_map"] = renamed(params.pop("features"), {"columns": "base_columns"})
    elif "features" in params:
        params["feature_map"] = params.pop("features")
    if v2["training"] is not None:
        v2["training"].pop("formulation", None)  # params["algorithm"]
    v2["model"] = model


def model_content(params: Mapping[str, Any], n_features_in: int, fitted: FittedModel,
                  feature_names_in: Sequence[str] | None = None) -> dict[str, Any]:
    """The content of the model file (svmmap.data.model_file) of the FittedModel ``fitted`` of
    ``params`` on ``n_features_in`` columns: what SVMMap.save and svmmap_learn write."""
    return file_content("svmmap", model_params(params, RUNTIME_PARAMS), n_features_in,
                        *fitted.record(), feature_names_in)


#: dense float64 vectors of length d that training holds besides the working set's rows:
#: w, the best w, the working set's initial 16 rows and temporaries
_DENSE_VECTORS = 24


def _check_memory(n_features, n_examples, algorithm="1-slack", cache_size=0):
    """Refuse, before training, a problem whose dense vectors need more memory than is
    available (svmmap stores w and the working set's constraint vectors densely: the highest
    feature index sets their length).  An oracle pass holds no queries x features array
    (svmmap.core.plugins.rows); n-slack's working set takes up to one vector per example in its
    first iteration, and the 1-slack constraint cache ``cache_size`` per example."""
    per_example = 1 if algorithm == "n-slack" else cache_size
    need = 8.0 * n_features * (per_example * n_examples + _DENSE_VECTORS)
    available = _available_memory()
    if available is not None and need > available:
        raise InputFormatError(
            f"the highest feature index is {n_features}: training holds "
            f"{per_example * n_examples + _DENSE_VECTORS} dense vectors of that length "
            f"({need / 2**30:.1f} GiB), more than the {available / 2**30:.1f} GiB of memory "
            "available; renumber the features consecutively")


def _available_memory():
    """Bytes this process can still allocate: MemAvailable, capped by the address-space limit
    (ulimit -v) minus what is mapped; None where /proc is missing (no check)."""
    try:
        import resource  # POSIX only

        with open("/proc/meminfo") as handle:
            meminfo = dict(line.split(":", 1) for line in handle)
        available = int(meminfo["MemAvailable"].split()[0]) * 1024
        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        if limit != resource.RLIM_INFINITY:
            with open("/proc/self/status") as handle:
                status = dict(line.split(":", 1) for line in handle if ":" in line)
            available = min(available, limit - int(status["VmSize"].split()[0]) * 1024)
    except (ImportError, OSError, KeyError, ValueError):
        return None
    return max(available, 0)


def _largest_abs_value(X):
    """max |x| over the entries of X (dense, sparse or binned; 0 for an empty X)."""
    if isinstance(X, BinnedArrays):  # indicators: 1 where some bin is above 0
        return float(X.bins.size > 0 and X.bins.max() > 0)
    values = X.data if hasattr(X, "data") and not isinstance(X, np.ndarray) else X
    return float(np.max(np.abs(values), initial=0.0))


def _float_or_none(value):
    return None if value is None else float(value)


def _finite_or_none(value):
    return float(value) if np.isfinite(value) else None
