"""SVMMapCV: SVMMap with C chosen on validation queries along a warm-started path of C values:
the scikit-learn estimator over svmmap.core.selection (the one module of model selection, which
holds the path, the validation measure, the tie rule and the held-out split)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sklearn.utils.validation import check_is_fitted

from .core.collection import QueryCollection
from .core.groups import eval_sets, set_best_score, training_qid
from .core.options import DEFAULT_EPSILON, DEFAULT_REL_GAP, DEFAULT_SELECT_TOL
from .core.params import SVMMAP_CV, rules_for
from .core.rules import check_c_path
from .core.selection import (
    choose,
    fit_c_path,
    holdout_split,
    validation_measure,
)
from .errors import InputFormatError
from .estimator import SVMMap

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Self

    from .core._typing import Callbacks, EvalSets, Matrix, PathLike, Vector
    from .features import BinnedFeatureMap

__all__ = ["SVMMapCV", "choose", "holdout_split", "validation_measure"]


class SVMMapCV(SVMMap):
    """SVMMap with C chosen on validation queries along a warm-started path of C values.

    Parameters: those of SVMMap except ``C``, and
    Cs : the C values (trained in increasing order; default 0.1, 1, 10, 100, 1000).
    select_metric : validation measure to maximise, a name of svmmap.core.measures such as "ndcg@10"
        or "err@10" (:func:`validation_measure`; default "map").
    holdout : fraction of the training queries held out for validation when ``fit`` gets no
        ``eval_set`` (default 0.2); the model is trained on the rest.
    random_state : seed of the held-out queries.
    select_tol : validation measures within this of the best are ties, which go to the
        smallest C (default 0.0005: equal to 3 decimals; 0: the plain argmax).
    refit : with held-out validation queries (no ``eval_set``), train the final model on all
        the training queries at the chosen C (default True, scikit-learn's GridSearchCV
        ``refit``); False keeps the fit without the held-out queries (RankLib's ``-tvs``).
        The selection record says which (``selection_["refit"]``).

    Every fit of the path stops by the same rule as a cold fit (no constraint violated by more
    than epsilon and, when rel_gap is set, a relative duality gap of at most rel_gap), so each
    C's objective is within 1.01 C epsilon (and rel_gap P(w)) of that C's optimum.

    Attributes (after fit): those of SVMMap for the chosen C, and
    C_ : the chosen C.
    path_ : one dict per C, in increasing C: ``C``, ``iterations``, ``seconds``,
        ``primal_objective``, ``dual_objective``, ``relative_gap``, ``status`` and ``vali``
        (the validation measure).
    selection_ : the selection record (measure, source, chosen C, seconds, path); the model
        file keeps it without the timings (svmmap.core.training.without_timings).
    """

    def __init__(self, Cs: Sequence[float] = (0.1, 1, 10, 100, 1000), loss: str = "map",
                 epsilon: float | None = DEFAULT_EPSILON, algorithm: str = "1-slack",
                 max_iter: int | None = None, max_time: float | None = None,
                 n_threads: int = 1, oracle: str = "divide", verbose: int = 0,
                 feature_map: BinnedFeatureMap | None = None, cost_ratio: float = 1.0,
                 qp_solver: str = "smo", cache_size: int = 0,
                 rel_gap: float | None = DEFAULT_REL_GAP, select_metric: str = "map",
                 holdout: float = 0.2, random_state: int | None = 0,
                 select_tol: float = DEFAULT_SELECT_TOL, normalize: str | None = None,
                 refit: bool = True) -> None:
        super().__init__(loss=loss, epsilon=epsilon, algorithm=algorithm, max_iter=max_iter,
                         max_time=max_time, n_threads=n_threads, oracle=oracle,
                         verbose=verbose, feature_map=feature_map, cost_ratio=cost_ratio,
                         qp_solver=qp_solver, cache_size=cache_size, rel_gap=rel_gap,
                         normalize=normalize)
        self.Cs = Cs
        self.select_metric = select_metric
        self.holdout = holdout
        self.random_state = random_state
        self.select_tol = select_tol
        self.refit = refit

    _parameter_rules = rules_for(SVMMAP_CV)

    def _check_param_rules(self, params):
        super()._check_param_rules(params)
        check_c_path(self.Cs)
        validation_measure(self.select_metric)

    def fit(self, X: Matrix, y: Vector, qid: Vector | None = None,  # type: ignore[override]
            eval_set: EvalSets | None = None, callbacks: Callbacks | None = None, *,
            group: Vector | None = None, eval_group: Sequence[Vector] | None = None,
            eval_qid: Sequence[Vector] | None = None) -> Self:
        """Train along the C path on (X, y, qid); choose C by the measure on ``eval_set``
        ((X, y, qid) of validation documents, or LightGBM's list of (X, y) with
        ``eval_group`` sizes or ``eval_qid`` ids: svmmap.core.groups; C is chosen on the first
        set; each checked like X: its columns, finite values, one qid per row), or on held-out
        training queries.  ``group``: query sizes instead of qid.  Validation queries on which
        every C scores the same (none with a relevant and a non-relevant document) are
        refused: svmmap.core.selection.check_validation.  ``best_score_`` records the chosen
        model's ``select_metric`` on every set.
        ``callbacks``: as for SVMMap.fit, told about every fit of the path."""
        self.check_params()
        qid = training_qid(qid, group, X)
        data = self._training_collection(X, y, qid)  # before any split by qid
        sets = self._validate_eval_sets(eval_sets(eval_set, eval_group, eval_qid),
                                        eval_qid is not None)
        vali = None
        if sets:  # C is chosen on the first set, checked once here
            try:
                vali = QueryCollection.from_arrays(*sets[0])
            except InputFormatError as exc:
                raise InputFormatError(f"eval_set: {exc.reason}") from None
        fitted = fit_c_path(self.get_params(deep=False), data, check_c_path(self.Cs),
                            vali, self.select_metric, self.select_tol,
                            self._callbacks(callbacks), holdout_fraction=self.holdout,
                            random_state=self.random_state, refit_all=self.refit)
        self._set_fitted(fitted)
        self.C_ = self.selection_["C"]
        self.path_ = self.selection_["path"]
        set_best_score(self, sets, self.select_metric, validation_measure(self.select_metric))
        return self

    def best_estimator(self) -> SVMMap:
        """A plain SVMMap with C = C_ holding the chosen model (what ``save`` writes)."""
        check_is_fitted(self)
        params = {k: v for k, v in self.get_params(deep=False).items()
                  if k not in ("Cs", "select_metric", "holdout", "random_state",
                               "select_tol", "refit")}
        model = SVMMap(C=self.C_, **params)
        model.__dict__.update({k: v for k, v in self.__dict__.items() if k.endswith("_")})
        return model

    def save(self, path: PathLike) -> None:
        """Write the chosen model (an SVMMap model file, C = C_) with the path recorded
        under ``selection``."""
        self.best_estimator().save(path)
