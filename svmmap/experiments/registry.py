"""The methods an experiment can run, and their hyper-parameter grids.

A :class:`Method` is a name, a factory ``factory(value) -> estimator`` (an object with
``fit(X, y, qid)`` returning itself and ``decision_function(X)`` returning one score per row)
and the grid of values the factory is tried with; model selection
(:func:`svmmap.core.selection.select`) picks the value with the best validation MAP.  Methods
whose implementation is not importable in this installation (another loss,
``svmmap.baselines``) are simply absent from :func:`available_methods`.

Adding a method is one entry in :data:`CANDIDATES`: a function returning a :class:`Method`,
or ``None`` when its code is not available.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Union, cast

import numpy as np

from ..core import measures
from ..core.collection import check_features
from ..errors import SVMMapError

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Iterator, Sequence

    from ..core._typing import FloatArray, Matrix, Vector

#: a hyper-parameter value: C, a number of rounds or epochs, a feature's column
Value = Union[float, int]
#: a method's grid: its values, or grid(n_features) -> its values
Grid = Union["Sequence[Value]", "Callable[[int], Iterable[Value]]"]


class Ranker(Protocol):
    """What an experiment trains and scores: scikit-learn's fit, and a score per row."""

    def fit(self, X: Matrix, y: Vector, qid: Vector) -> Ranker:
        """Train on the documents ``X`` with labels ``y`` in queries ``qid``; ``self``."""

    def decision_function(self, X: Matrix) -> FloatArray:
        """One score per row of ``X`` (higher ranks first)."""


class Tunable(Ranker, Protocol):
    """A Ranker whose parameters can be set (a scikit-learn estimator: the SVMs)."""

    def set_params(self, **params: Any) -> Tunable:
        """``self`` with ``params`` set."""

#: Default C grid of the structural SVMs (C is divided by the number of training queries, see
#: :class:`svmmap.SVMMap`): every power of ten from 1e-5 to 1e3, the paper's "wide range".
#: At the low end the solution is w = C g after the first cutting-plane iteration, g the
#: mean over training queries of the most violated constraint's direction at w = 0, so the
#: ranking no longer changes as C decreases (the C -> 0 limit; trials check it per trial).
C_GRID = tuple(10.0 ** k for k in range(-5, 4))
#: Default number-of-rounds grid of the boosting baselines.
ROUNDS_GRID = (10, 50, 100, 200, 500)
#: Default number-of-epochs grid of PRank.
EPOCHS_GRID = (1, 5, 10, 20, 50)
#: Cutting-plane settings of every SVM in the experiments (1-slack, epsilon 1e-3).
SVM_SETTINGS: dict[str, Any] = {"epsilon": 1e-3, "algorithm": "1-slack"}


@dataclass(frozen=True)
class Method:
    """A rankable method.

    ``grid`` is a sequence of hyper-parameter values, or a callable ``grid(n_features)``
    returning one (for the best single feature, whose "hyper-parameter" is the feature).
    ``param`` names the hyper-parameter in tables ("C", "rounds", "feature").  ``measure``
    is the validation measure model selection maximises (a name of svmmap.core.measures: "map",
    or the measure an SVM is trained for).
    """

    name: str
    label: str
    factory: Callable[[Any], Ranker]
    grid: Grid
    param: str
    measure: str = "map"

    def grid_for(self, n_features: int) -> list[Value]:
        """The grid's values for data of ``n_features`` columns."""
        return list(self.grid(n_features) if callable(self.grid) else self.grid)

    def with_grid(self, grid: Iterable[Value]) -> Method:
        """This method with the values ``grid`` (``--grid``)."""
        return Method(self.name, self.label, self.factory, tuple(grid), self.param,
                      self.measure)

    def with_params(self, **params: Any) -> Method:
        """This method with ``params`` set on every estimator its factory makes."""
        factory = cast("Callable[[Value], Tunable]", self.factory)
        return Method(self.name, self.label, lambda value: factory(value).set_params(**params),
                      self.grid, self.param, self.measure)


class SingleFeature:
    """Rank by one input feature (a base function): ``score(d) = phi_j(d)``, 0-based ``j``.

    ``fit`` learns nothing; choosing ``j`` by validation MAP over all features is the
    "best single feature" baseline.
    """

    def __init__(self, feature: int = 0) -> None:
        self.feature = feature

    def fit(self, X: Matrix, y: Vector, qid: Vector) -> SingleFeature:
        """Learn nothing but the number of features; ``self``."""
        self.n_features_in_ = check_features(X).shape[1]
        return self

    def decision_function(self, X: Matrix) -> FloatArray:
        """The feature's column of ``X``."""
        checked = check_features(X)
        column = checked[:, self.feature]
        return np.asarray(column.toarray() if hasattr(column, "toarray") else column).ravel()


def _svm(name, label, loss, n_bins, per_query=None, **extra):
    """A structural SVM of :class:`svmmap.SVMMap` with ``loss`` (and extra constructor
    arguments), if this installation's estimator supports them.  With ``n_bins`` (or
    ``per_query``) it learns on the binned features of Section 4.2
    (:class:`svmmap.features.BinnedFeatureMap` with ``n_bins`` thresholds, default 50),
    fitted on the training queries.  The paper's SVMs (map, roc, acc) are chosen by validation
    MAP, as in the paper; an SVM for another measure by that measure."""
    from .. import estimator

    try:
        base = measures.parse_loss(loss)[0]
    except ValueError:  # not a loss of this installation
        return None
    accepted = inspect.signature(estimator.SVMMap.__init__).parameters
    if n_bins is not None or per_query is not None:
        try:
            from ..features import BinnedFeatureMap
        except ImportError:
            return None
        extra["feature_map"] = BinnedFeatureMap(n_bins or 50, per_query=per_query)
    if any(key not in accepted for key in extra):
        return None

    def factory(C):
        return estimator.SVMMap(C=C, loss=loss, **SVM_SETTINGS, **extra)

    measure = loss if measures.MEASURES[base].plugin == "MeasurePlugin" else "map"
    return Method(name, label, factory, C_GRID, "C", measure)


def _external(name: str, label: str, module: str, cls: str, param_names: Sequence[str],
              grid: Grid, param: str, **fixed: Any) -> Method | None:
    """An estimator class ``module.cls`` whose hyper-parameter is the first of
    ``param_names`` its constructor accepts (``fixed``: further constructor arguments);
    None if the module or class is missing."""
    try:
        klass = getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError):
        return None
    accepted = inspect.signature(klass.__init__).parameters
    keyword = next((p for p in param_names if p in accepted), None)
    if keyword is None:
        return None
    return Method(name, label, lambda value: klass(**fixed, **{keyword: value}), grid, param)


def _best_feature() -> Method:
    return Method("best-feature", "Best feature", SingleFeature,
                  lambda n_features: range(n_features), "feature")


#: name -> function(n_bins) returning a Method, or None when unavailable (``n_bins``: None
#: for raw features, else the thresholds per base function of the binned feature map; methods
#: that do not learn weights on features ignore it).  Order is the order of table rows.
#: The paper's accuracy variants: ACC2 balances the costs of the two classes
#: (J = #non-relevant / #relevant), ACC3 / ACC4 make each base score relative to its query
#: (percentile rank / min-max) before binning.
CANDIDATES = {
    "svm-map": lambda n_bins: _svm("svm-map", "SVM-MAP", "map", n_bins),
    "svm-roc": lambda n_bins: _svm("svm-roc", "SVM-ROC", "roc", n_bins),
    "svm-acc": lambda n_bins: _svm("svm-acc", "SVM-ACC", "acc", n_bins),
    "svm-acc2": lambda n_bins: _svm("svm-acc2", "SVM-ACC2", "acc", n_bins,
                                    cost_ratio="balanced"),
    "svm-acc3": lambda n_bins: _svm("svm-acc3", "SVM-ACC3", "acc", n_bins,
                                    per_query="percentile"),
    "svm-acc4": lambda n_bins: _svm("svm-acc4", "SVM-ACC4", "acc", n_bins, per_query="minmax"),
    "adarank-map": lambda n_bins: _external("adarank-map", "AdaRank.MAP", "svmmap.baselines",
                                            "AdaRank", ("max_rounds",), ROUNDS_GRID, "rounds",
                                            loss="map"),
    "adarank-ndcg": lambda n_bins: _external("adarank-ndcg", "AdaRank.NDCG",
                                             "svmmap.baselines", "AdaRank", ("max_rounds",),
                                             ROUNDS_GRID, "rounds", loss="ndcg"),
    "rankboost": lambda n_bins: _external("rankboost", "RankBoost", "svmmap.baselines",
                                          "RankBoost",
                                   ("max_rounds",), ROUNDS_GRID,
                                   "rounds"),
    "prank": lambda n_bins: _external("prank", "PRank", "svmmap.baselines", "PRank",
                               ("n_epochs",), EPOCHS_GRID,
                               "epochs"),
    "best-feature": lambda n_bins: _best_feature(),
}
#: the cutoff of the SVMs for the measures beyond MAP that take one (svm-ndcg@10, svm-p@10)
MEASURE_CUTOFF = 10


def _measure_losses() -> Iterator[str]:
    """The loss names of the measures beyond MAP (issue 17): every measure of svmmap.core.measures
    that svmmap.core.plugins.MeasurePlugin optimises, at MEASURE_CUTOFF where it takes a cutoff
    and over the whole ranking where it may go without (ndcg@10 and ndcg)."""
    for measure in measures.usable("loss"):
        if measure.plugin == "MeasurePlugin":
            rule = measure.cutoff_rule("loss")
            if rule != measures.NO_CUTOFF:
                yield measure.name + f"@{MEASURE_CUTOFF}"
            if rule != measures.REQUIRED_CUTOFF:
                yield measure.name


def _measure_candidate(loss: str) -> Callable[[int | None], Method | None]:
    base, k = measures.parse_loss(loss)
    return lambda n_bins: _svm(f"svm-{loss}", f"SVM-{measures.label(base, k)}", loss, n_bins)


#: the SVMs for the measures beyond MAP, each selected by its own validation measure: run
#: when named
ON_REQUEST = tuple(f"svm-{loss}" for loss in _measure_losses())
CANDIDATES.update({f"svm-{loss}": _measure_candidate(loss) for loss in _measure_losses()})


def available_methods(n_bins: int | None = None) -> dict[str, Method]:
    """All methods importable here, in table order: ``{name: Method}``."""
    found = {name: make(n_bins) for name, make in CANDIDATES.items()}
    return {name: method for name, method in found.items() if method is not None}


def parse_grids(specs: Iterable[str] | None) -> dict[str, list[Value]]:
    """Parse ``--grid`` options: ``"0.1,1,10"`` (every method whose parameter is C) or
    ``"name=v1,v2"`` (one method).  Returns ``{name or "C": [values]}``."""
    grids: dict[str, list[Value]] = {}
    for spec in specs or ():
        key, _, values = spec.rpartition("=")
        try:
            parsed = [_number(v) for v in values.split(",") if v.strip()]
        except ValueError:
            raise SVMMapError(f"bad --grid {spec!r}: expected [method=]v1,v2,...") from None
        if not parsed:
            raise SVMMapError(f"bad --grid {spec!r}: no values")
        grids[key or "C"] = parsed
    return grids


def _number(text: str) -> Value:
    value = float(text)
    return int(value) if value.is_integer() and "." not in text and "e" not in text else value


def select_methods(names: Iterable[str] | None = None,
                   grids: dict[str, list[Value]] | None = None, n_bins: int | None = None,
                   exclude: Collection[str] = ()) -> list[Method]:
    """The requested methods (default: all available but ``exclude`` and ON_REQUEST) with
    ``--grid``
    overrides applied.

    Raises SVMMapError naming the unknown or unavailable methods.
    """
    available = available_methods(n_bins)
    if names is None:
        chosen = [name for name in available
                  if name not in exclude and name not in ON_REQUEST]
    else:
        chosen = [n.strip().lower() for n in names if n.strip()]
        unknown = [n for n in chosen if n not in CANDIDATES]
        if unknown:
            raise SVMMapError(f"unknown method(s) {', '.join(unknown)}; known: "
                              f"{', '.join(CANDIDATES)}")
        missing = [n for n in chosen if n not in available]
        if missing:
            raise SVMMapError(f"method(s) {', '.join(missing)} not available in this "
                              f"installation; available: {', '.join(available)}")
    grids = grids or {}
    unknown = [k for k in grids if k != "C" and k not in chosen]
    if unknown:
        raise SVMMapError(f"--grid for method(s) not run: {', '.join(unknown)}")
    methods = []
    for name in chosen:
        method = available[name]
        if name in grids:
            method = method.with_grid(grids[name])
        elif "C" in grids and method.param == "C":
            method = method.with_grid(grids["C"])
        methods.append(method)
    return methods


def configure_svms(methods: Iterable[Method], per_query: str | None = None,
                   spacing: str | None = None, **settings: Any) -> list[Method]:
    """``methods`` with ``settings`` (SVMMap parameters such as ``epsilon`` or ``algorithm``)
    applied to every structural SVM (hyper-parameter C), and with ``per_query``
    (``"percentile"`` or ``"minmax"``, see :mod:`svmmap.features`) or the thresholds'
    ``spacing`` (``"documents"`` or ``"values"``) applied to those whose binned features are
    global (SVM-ACC3 / ACC4 keep their own); other methods unchanged."""
    configured = []
    for method in methods:
        if method.param == "C":
            params = dict(settings)
            feature_map = getattr(method.factory(1.0), "feature_map", None)
            if feature_map is not None and feature_map.per_query is None and (
                    per_query is not None or spacing is not None):
                from sklearn.base import clone

                changes = {"per_query": per_query} if per_query is not None else {}
                if spacing is not None and per_query is None:
                    changes["spacing"] = spacing
                params["feature_map"] = clone(feature_map).set_params(**changes)
            method = method.with_params(**params) if params else method
        configured.append(method)
    return configured


def parse_names(text: str | None) -> list[str] | None:
    """``"svm-map,svm-roc"`` -> list of names; None or ``"all"`` -> None (all available)."""
    if text is None or text.strip().lower() == "all":
        return None
    return text.split(",")
