"""SVMMap: the estimator users train and apply (a scikit-learn estimator, svmmap.core.base)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from svmstruct_api.callbacks import LogCallback, as_callbacks

from .core import training
from .core.base import BaseRanker
from .core.groups import eval_sets, set_best_score, training_qid
from .core.options import DEFAULT_EPSILON, DEFAULT_REL_GAP
from .core.params import SVMMAP_RULES, SVMMAP_SCOPES, check_svmmap
from .core.selection import validation_measure

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Self

    from .core._typing import Callbacks, EvalSets, FloatArray, Matrix, Vector
    from .features import BinnedFeatureMap


class SVMMap(BaseRanker):
    """Linear ranking function trained by a structural SVM (Yue et al., SIGIR 2007).

    Solves  min_w 1/2 |w|^2 + C/n sum_q xi_q  s.t. for every training query q and every
    ranking y:  w.psi(x_q, y_q) >= w.psi(x_q, y) + Delta(y_q, y) - xi_q,
    where n counts the queries that carry constraints (at least one relevant and one
    non-relevant document) -- the SVMstruct 3.x / SVMrank convention.  The original SVM-map
    V1.00 release (built on SVMstruct 3.00) divides by n too (``svmCnorm = C/n`` in its
    svm_struct_learn.c), so its ``-c C`` means the same as ``C`` here.  With query weights
    (``fit(..., sample_weight=...)``) the slack term is C/V sum_q v_q xi_q, V the sum of the
    trainable queries' weights.  For ``loss="acc"`` the objective is the standard soft-margin
    SVM
    1/2 |w|^2 + C/n sum_d c_d hinge_d with a free bias b, where n counts all training
    *documents* (svmmap.core.plugins.accuracy.AccuracyPlugin).

    Parameters
    ----------
    C : float, regularisation trade-off (see above).
    loss : the measure optimised, Delta = 1 - measure: a loss of the measure registry
        (svmmap.core.measures.help_text("loss") lists them).  "map" (Delta = 1 - AP), "roc"
        (Delta = 1 - ROC-area, the paper's SVM-ROC), "acc" (a classification SVM with bias,
        relevant = +1: the paper's SVM-ACC), or a ranking measure on the same joint feature
        map as "map" (svmmap.core.plugins.MeasurePlugin, an exact separation oracle each in
        svmmap.kernels._loss_kernels), e.g. "ndcg@10" (gain 2^label - 1, discount 1/log2(1 + r);
        "ndcg": k = the query's size), "mrr", "p@10" (normalised by min(k, |P|)), "rprec";
        any cutoff k >= 1.
    epsilon : None (default: off) or the tolerance on constraint violation: training stops
        when no constraint is violated by more than epsilon, so the objective is within
        1.01 C * epsilon of the optimum (the 0.01: each working-set QP is solved to a gap of
        1% of C * epsilon).
    rel_gap : None (off) or a number in (0, 1), default 1e-6: training stops when the relative
        duality gap (P(w) - D) / P(w) <= rel_gap (P the primal objective at the returned w, D
        the dual objective of the last working-set QP, a lower bound on the optimum), so the
        objective is within rel_gap * P(w) of the optimum.  With both rules on, the first
        that holds stops training; at least one must be on.  The defaults live in
        svmmap.core.options (chosen by benchmarks/defaults.py: at 1e-6 the model does not depend on
        how X is stored or on n_threads, to 3 decimals of validation MAP on LETOR).
    algorithm : "1-slack" (Joachims, Finley & Yu 2009) or "n-slack" (the paper's Algorithm 1).
    max_iter, max_time : optional limits on cutting-plane iterations / seconds.
    n_threads : threads for the per-query oracle loop.
    oracle : "divide" (exact divide and conquer, default) or "scan" (plain Algorithm 2).
    verbose : 0 silent; 1 a live progress display on stderr while training (iteration,
        objectives, gap and violation against their targets, time left; svmmap.core.progress);
        2 a line per iteration and the final report on stdout.
    feature_map : None (use X as given) or a svmmap.features.BinnedFeatureMap: the binned
        features of the paper's Section 4.2, fitted on the training data in ``fit`` and
        applied by ``decision_function`` (and saved in the model file).
    cost_ratio : loss="acc" only: J, the cost of a false negative relative to a false
        positive (SVM-light's ``-j``; the paper's ACC2), or "balanced" for #non-relevant /
        #relevant training documents.  Default 1.
    qp_solver : "smo" (default: the warm-started SMO of svmstruct_api._simplex_qp when the
        QP's dual is its smaller form, cvxopt otherwise and as its fallback) or "cvxopt".
    cache_size : algorithm="1-slack" only: the constraint cache of SVMstruct's ``-w 4``
        (svmstruct_api.cache), this many outputs remembered per query; 0 (default) is off.
    normalize : None (default), "standard" or "minmax": a global normaliser z = (x - shift) /
        scale fitted on the training documents, stored in the model and applied by
        decision_function (svmmap.core.normalize; what the search engines' LTR normalisers
        compute, so svmmap.export writes it as theirs); coef_ weighs z.

    Attributes (after fit)
    ----------------------
    coef_ : ndarray (n_features,), the weight vector w.
    intercept_ : float, 0.0 for the ranking losses, the bias b for loss="acc".
    feature_map_ : the fitted BinnedFeatureMap (a clone of ``feature_map``), or None.
    normalizer_ : the fitted svmmap.core.normalize.Normalizer, or None.
    per_query_normalized_ : whether the training data looked normalised within each query
        (LETOR's QueryLevelNorm; svmmap.core.normalize.per_query_normalized), which no engine
        reproduces: svmmap.export warns.
    training_result_ : svmstruct_api.learner.TrainingResult (objectives, iterations, history).
        After ``load`` it holds what the model file keeps: status, objectives, largest
        violation, iterations, working-set size (timings are NaN, slack None, history empty).
    n_queries_used_, n_queries_without_relevant_, n_queries_all_relevant_ : int.
    n_features_in_, feature_names_in_ : the input's columns (names only from a DataFrame).
    best_score_ : after ``fit(..., eval_set=...)`` only, the measure on each validation set,
        ``{"valid_0": {"map": value}, ...}`` (LightGBM's attribute; svmmap.core.groups).

    ``save(path)`` / ``SVMMap.load(path)`` (svmmap.core.base, svmmap.data.model_file) write and read
    the model file; n_threads, verbose and max_time are run-time settings, not saved.
    """

    _parameter_rules = SVMMAP_RULES
    _parameter_scopes = SVMMAP_SCOPES
    KIND = "svmmap"
    _runtime_params = training.RUNTIME_PARAMS

    def __init__(self, C: float = 1.0, loss: str = "map", epsilon: float | None = DEFAULT_EPSILON,
                 algorithm: str = "1-slack", max_iter: int | None = None,
                 max_time: float | None = None, n_threads: int = 1, oracle: str = "divide",
                 verbose: int = 0, feature_map: BinnedFeatureMap | None = None,
                 cost_ratio: float = 1.0, qp_solver: str = "smo", cache_size: int = 0,
                 rel_gap: float | None = DEFAULT_REL_GAP, normalize: str | None = None) -> None:
        self.C = C
        self.loss = loss
        self.epsilon = epsilon
        self.algorithm = algorithm
        self.max_iter = max_iter
        self.max_time = max_time
        self.n_threads = n_threads
        self.oracle = oracle
        self.verbose = verbose
        self.feature_map = feature_map
        self.cost_ratio = cost_ratio
        self.qp_solver = qp_solver
        self.cache_size = cache_size
        self.rel_gap = rel_gap
        self.normalize = normalize

    # -- training and prediction -----------------------------------------------------------

    def _callbacks(self, callbacks):
        """The learner's callbacks: ``verbose``'s display, then the caller's."""
        shown = []
        if self.verbose == 1:
            from .core.progress import ProgressDisplay

            shown = [ProgressDisplay()]
        elif self.verbose and self.verbose >= 2:
            shown = [LogCallback()]
        return shown + as_callbacks(callbacks)

    def fit(self, X: Matrix, y: Vector, qid: Vector | None = None,
            sample_weight: Vector | None = None, callbacks: Callbacks | None = None, *,
            group: Vector | None = None, eval_set: EvalSets | None = None,
            eval_group: Sequence[Vector] | None = None, eval_qid: Sequence[Vector] | None = None,
            eval_metric: str = "map") -> Self:
        """Train on documents X with labels y (relevant: y > 0) grouped by qid (None: all rows
        are one query); return self.

        ``sample_weight``: None, one weight v >= 0 per document, constant within each query
        (any per-document weights for loss="acc"), or a mapping qid -> weight.  The objective
        becomes 1/2 |w|^2 + C/V sum_q v_q xi_q, V the sum of the weights of the queries that
        carry constraints (it replaces n): weights of 1 give the unweighted objective, a
        weight of 2 is the query appearing twice, and queries of weight 0 are left out.  For
        loss="acc": 1/2 |w|^2 + C/V sum_d v_d c_d hinge_d, V = sum_d v_d.

        ``callbacks``: one or a list of svmstruct_api.callbacks callbacks (objects with
        ``on_start`` / ``on_iteration(progress)`` / ``on_end(result)``, or plain callables),
        told about every cutting-plane iteration, besides what ``verbose`` shows.

        LightGBM's conventions (svmmap.core.groups): ``group`` instead of qid, the query sizes of
        rows contiguous per query; ``eval_set`` -- ``(X, y, qid)`` or a list of ``(X, y)``
        with ``eval_group`` sizes or ``eval_qid`` ids -- on which the fitted model's
        ``eval_metric`` (a ``select_metric`` name of SVMMapCV, default "map") is recorded in
        ``best_score_`` (``{"valid_0": {"map": value}, ...}``; none without eval_set)."""
        self.check_params()
        qid = training_qid(qid, group, X)
        measure = validation_measure(eval_metric)
        data = self._training_collection(X, y, qid)
        sets = self._validate_eval_sets(eval_sets(eval_set, eval_group, eval_qid),
                                        eval_qid is not None)
        self._set_fitted(training.fit(self.get_params(deep=False), data, sample_weight,
                                      self._callbacks(callbacks)))
        set_best_score(self, sets, eval_metric, measure)
        return self

    def _check_param_rules(self, params):
        """The rules (svmmap.core.params), and at least one stopping rule."""
        check_svmmap(type(self).__name__, params, self._parameter_rules)

    def _set_fitted(self, fitted):
        """Set the fitted attributes (``coef_``, ...) of a svmmap.core.training.FittedModel."""
        for name, value in fitted.attributes().items():
            setattr(self, name, value)

    def decision_function(self, X: Matrix, qid: Vector | None = None) -> FloatArray:
        """Scores w.phi(x) + b, one per row of X (rank a query's documents by them,
        descending); phi is the fitted feature map, if any.  ``qid`` is needed only by a
        feature map that works within queries (``per_query``)."""
        X, qid = self._validate_X(X, qid)
        return training.FittedModel.from_attributes(self).scores(X, qid)

    def predict(self, X: Matrix, qid: Vector | None = None) -> FloatArray:
        """The ranking scores of decision_function (a ranker predicts scores to sort by)."""
        return self.decision_function(X, qid=qid)

    # -- persistence (svmmap.core.base.BaseRanker.save / load, svmmap.data.model_file) ---

    def _model_content(self):
        """The model file's content: the one SVMMap path, svmmap_learn's too
        (svmmap.core.training.model_content)."""
        return training.model_content(self.get_params(deep=False), self.n_features_in_,
                                      training.FittedModel.from_attributes(self),
                                      getattr(self, "feature_names_in_", None))

    @classmethod
    def _params_from_file(cls, params):
        return training.params_from_file(params)

    def _restore(self, model, record):
        self._set_fitted(training.restore(self.get_params(deep=False), self.n_features_in_,
                                          model, record))
