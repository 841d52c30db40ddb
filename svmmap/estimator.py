"""SVMMap: the estimator users train and apply (a scikit-learn estimator, svmmap.base)."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import Interval, InvalidParameterError, StrOptions

from svmstruct_api.callbacks import LogCallback, as_callbacks
from svmstruct_api.learner import FORMULATIONS, NonFiniteObjective, TrainingResult, make_learner
from svmstruct_api.qp import QP_SOLVERS, QPError

from .base import BaseRanker
from .collection import QueryCollection, check_sample_weight
from .errors import InputFormatError
from .features import BinnedFeatureMap
from .options import (
    DEFAULT_EPSILON,
    DEFAULT_REL_GAP,
    LOSS_HELP,
    LOSSES,
    MEASURE_KINDS,
    ORACLES,
    parse_loss,
)
from .plugins import AccuracyPlugin, MapPlugin, MeasurePlugin, RocPlugin

#: the plugin of each loss, by the loss name without its cutoff (``options.parse_loss``)
PLUGINS = {"map": MapPlugin, "roc": RocPlugin, "acc": AccuracyPlugin,
           **{base: MeasurePlugin for base in MEASURE_KINDS}}
#: w, and every constraint vector of the working set, is dense: 2^27 features is 1 GiB each
MAX_FEATURES = 2**27


class _LossName(StrOptions):
    """scikit-learn parameter constraint: a loss name options.parse_loss accepts (the fixed
    names and the cutoff forms ndcg@k, p@k; a StrOptions so scikit-learn's validation takes
    it)."""

    def __init__(self):
        super().__init__(set(LOSSES))

    def is_satisfied_by(self, val):
        try:
            parse_loss(val)
        except ValueError:
            return False
        return True

    def __str__(self):
        return LOSS_HELP


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
    *documents* (svmmap.plugins.accuracy.AccuracyPlugin).

    Parameters
    ----------
    C : float, regularisation trade-off (see above).
    loss : "map" (Delta = 1 - AP), "roc" (Delta = 1 - ROC-area, the paper's SVM-ROC),
        "acc" (a classification SVM with bias, relevant = +1: the paper's SVM-ACC), or a
        ranking measure on the same joint feature map as "map" (svmmap._loss_kernels, each
        with an exact separation oracle): "ndcg@k" (Delta = 1 - NDCG@k, gain 2^label - 1,
        discount 1/log2(1 + r)), "ndcg" (k = the query's size), "mrr" (1 - reciprocal rank
        of the first relevant document), "p@k" (1 - P@k, normalised by min(k, |P|)) or
        "rprec" (1 - R-precision); any cutoff k >= 1.
    epsilon : None (default: off) or the tolerance on constraint violation: training stops
        when no constraint is violated by more than epsilon, so the objective is within
        1.01 C * epsilon of the optimum (the 0.01: each working-set QP is solved to a gap of
        1% of C * epsilon).
    rel_gap : None (off) or a number in (0, 1), default 1e-6: training stops when the relative
        duality gap (P(w) - D) / P(w) <= rel_gap (P the primal objective at the returned w, D
        the dual objective of the last working-set QP, a lower bound on the optimum), so the
        objective is within rel_gap * P(w) of the optimum.  With both rules on, the first
        that holds stops training; at least one must be on.  The defaults live in
        svmmap.options (chosen by benchmarks/defaults.py: at 1e-6 the model does not depend on
        how X is stored or on n_threads, to 3 decimals of validation MAP on LETOR).
    algorithm : "1-slack" (Joachims, Finley & Yu 2009) or "n-slack" (the paper's Algorithm 1).
    max_iter, max_time : optional limits on cutting-plane iterations / seconds.
    n_threads : threads for the per-query oracle loop.
    oracle : "divide" (exact divide and conquer, default) or "scan" (plain Algorithm 2).
    verbose : 0 silent; 1 a live progress display on stderr while training (iteration,
        objectives, gap and violation against their targets, time left; svmmap.progress);
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

    Attributes (after fit)
    ----------------------
    coef_ : ndarray (n_features,), the weight vector w.
    intercept_ : float, 0.0 for the ranking losses, the bias b for loss="acc".
    feature_map_ : the fitted BinnedFeatureMap (a clone of ``feature_map``), or None.
    training_result_ : svmstruct_api.learner.TrainingResult (objectives, iterations, history).
        After ``load`` it holds what the model file keeps: status, objectives, largest
        violation, iterations, working-set size (timings are NaN, slack None, history empty).
    n_queries_used_, n_queries_without_relevant_, n_queries_all_relevant_ : int.
    n_features_in_, feature_names_in_ : the input's columns (names only from a DataFrame).

    ``save(path)`` / ``SVMMap.load(path)`` (svmmap.base, svmmap.model_file) write and read
    the model file; n_threads, verbose and max_time are run-time settings, not saved.
    """

    _parameter_constraints = {
        "C": [Interval(Real, 0, np.inf, closed="neither")],
        "loss": [_LossName()],
        "epsilon": [Interval(Real, 0, np.inf, closed="neither"), None],
        "algorithm": [StrOptions(set(FORMULATIONS))],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "max_time": [Interval(Real, 0, np.inf, closed="neither"), None],
        "n_threads": [Interval(Integral, 1, None, closed="left")],
        "oracle": [StrOptions(set(ORACLES))],
        "verbose": ["verbose"],
        "feature_map": [BinnedFeatureMap, None],
        "cost_ratio": [Interval(Real, 0, np.inf, closed="neither"), StrOptions({"balanced"})],
        "qp_solver": [StrOptions(set(QP_SOLVERS))],
        "cache_size": [Interval(Integral, 0, None, closed="left")],
        "rel_gap": [Interval(Real, 0, 1, closed="neither"), None],
    }
    _parameter_scopes = {"cache_size": ("algorithm", {"1-slack"}),
                         "cost_ratio": ("loss", {"acc"})}
    KIND = "svmmap"
    _runtime_params = ("n_threads", "verbose", "max_time")
    _min_features = 0  # lines without features train (every score 0)

    def __init__(self, C=1.0, loss="map", epsilon=DEFAULT_EPSILON, algorithm="1-slack",
                 max_iter=None, max_time=None, n_threads=1, oracle="divide", verbose=0,
                 feature_map=None, cost_ratio=1.0, qp_solver="smo", cache_size=0,
                 rel_gap=DEFAULT_REL_GAP):
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

    # -- training and prediction -----------------------------------------------------------

    def _callbacks(self, callbacks):
        """The learner's callbacks: ``verbose``'s display, then the caller's."""
        shown = []
        if self.verbose == 1:
            from .progress import ProgressDisplay

            shown = [ProgressDisplay()]
        elif self.verbose and self.verbose >= 2:
            shown = [LogCallback()]
        return shown + as_callbacks(callbacks)

    def fit(self, X, y, qid=None, sample_weight=None, callbacks=None):
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
        told about every cutting-plane iteration, besides what ``verbose`` shows."""
        self.check_params()
        prepared = self._prepare(X, y, qid, sample_weight)
        try:
            result = self._learner(self.C, callbacks).fit(prepared["plugin"])
        except NonFiniteObjective as exc:
            raise InputFormatError(str(exc)) from None
        except QPError:
            largest = _largest_abs_value(prepared["plugin"].collection.X)
            if not np.isfinite(float(self.C) * largest * largest):
                raise InputFormatError(
                    f"training overflowed: C = {float(self.C):g} times the squared largest "
                    f"feature value ({largest:g}) is beyond float64; scale the features or "
                    "lower C") from None
            raise
        self._finish(prepared, result)
        return self

    def check_params(self):
        """BaseRanker's validation, and at least one stopping rule (epsilon, rel_gap)."""
        super().check_params()
        if self.epsilon is None and self.rel_gap is None:
            raise InvalidParameterError(
                f"The 'epsilon' and 'rel_gap' parameters of {type(self).__name__} are both "
                "None: training needs a stopping rule.")

    def _prepare(self, X, y, qid, sample_weight=None):
        """The training problem: the fitted feature map, the plugin over the trainable
        queries and the counts fit records (a dict), with skipped queries warned about."""
        X, y, qid = self._validate_training_data(X, y, qid)
        collection = QueryCollection.from_arrays(X, y, qid)  # the one finiteness check, grouping
        feature_map = None
        if self.feature_map is not None:
            feature_map = clone(self.feature_map)
            collection = feature_map.fit_transform_collection(collection)
        if collection.n_features > MAX_FEATURES:
            raise InputFormatError(
                f"X has {collection.n_features} features (highest feature index): more than "
                f"the {MAX_FEATURES} a dense weight vector can reasonably hold; renumber the "
                "features")
        weights = None if sample_weight is None else \
            check_sample_weight(sample_weight, qid, len(collection.rows))
        queries, n_without_relevant, n_all_relevant = collection.trainable_queries()
        skipped = n_without_relevant + n_all_relevant
        if self.loss == "acc":  # a classifier learns from every document, whatever its query
            queries, skipped = None, 0
        elif len(queries) == 0:
            raise InputFormatError(
                f"none of the {collection.n_queries} queries has both a relevant (label > 0) "
                "and a non-relevant document: there is nothing to train on")
        if skipped:
            warnings.warn(
                f"{skipped} of {collection.n_queries} queries carry no constraint and are "
                f"skipped ({n_without_relevant} without a relevant document, {n_all_relevant} "
                "with only relevant documents)", stacklevel=3)
        example_weights = None
        if weights is not None and self.loss != "acc":
            example_weights = collection.query_weights(weights, queries)
            if not np.all(example_weights > 0):
                kept = np.flatnonzero(example_weights > 0)
                if len(kept) == 0:
                    raise InputFormatError("every query that carries constraints has zero weight: "
                                           "there is nothing to train on")
                warnings.warn(f"{len(queries) - len(kept)} queries of weight 0 are left "
                              "out", stacklevel=3)
                queries, example_weights = queries[kept], example_weights[kept]
        elif weights is not None and not np.any(weights > 0):
            raise InputFormatError("every document has zero weight: there is nothing to train on")
        plugin = self._plugin(collection, None if weights is None or self.loss != "acc"
                              else weights[collection.rows], queries=queries)
        plugin.example_weights = example_weights
        _check_memory(plugin.n_features, plugin.n_examples, self.algorithm, self.cache_size)
        return {"plugin": plugin, "feature_map": feature_map,
                "n_queries_used": plugin.n_examples,
                "n_queries_without_relevant": n_without_relevant,
                "n_queries_all_relevant": n_all_relevant}

    def _learner(self, C, callbacks=None):
        """The cutting-plane learner of these parameters at trade-off C."""
        return make_learner(
            self.algorithm, C=float(C),
            epsilon=None if self.epsilon is None else float(self.epsilon),
            max_iter=None if self.max_iter is None else int(self.max_iter),
            max_time=None if self.max_time is None else float(self.max_time),
            callbacks=self._callbacks(callbacks), qp_solver=self.qp_solver,
            cache_size=self.cache_size,
            rel_gap=None if self.rel_gap is None else float(self.rel_gap))

    def _finish(self, prepared, result):
        """Set the fitted attributes from a TrainingResult of the prepared problem."""
        self.coef_, self.intercept_ = prepared["plugin"].scoring_function(result.w)
        self.feature_map_ = prepared["feature_map"]
        self.training_result_ = result
        self.n_queries_used_ = prepared["n_queries_used"]
        self.n_queries_without_relevant_ = prepared["n_queries_without_relevant"]
        self.n_queries_all_relevant_ = prepared["n_queries_all_relevant"]

    def _plugin(self, collection, document_weights=None, queries=None):
        """The structured model of ``self.loss`` over the training collection
        (``document_weights``: loss="acc" only, per document in grouped order; ``queries``:
        the ranking losses' training queries, None for all: see RankingPlugin)."""
        if self.loss == "acc":
            return AccuracyPlugin(collection, cost_ratio=self.cost_ratio,
                                  document_weights=document_weights)
        if self.loss == "roc":
            return RocPlugin(collection, n_threads=self.n_threads, queries=queries)
        if self.loss != "map":
            return MeasurePlugin(collection, self.loss, n_threads=self.n_threads,
                                 queries=queries)
        return MapPlugin(collection, n_threads=self.n_threads, oracle=self.oracle,
                         queries=queries)

    def decision_function(self, X, qid=None):
        """Scores w.phi(x) + b, one per row of X (rank a query's documents by them,
        descending); phi is the fitted feature map, if any.  ``qid`` is needed only by a
        feature map that works within queries (``per_query``)."""
        X, qid = self._validate_X(X, qid)
        if self.feature_map_ is not None:
            if self.feature_map_.needs_qid and qid is None:
                raise InputFormatError(
                    f"the model's feature map (per_query={self.feature_map_.per_query!r}) "
                    "works within queries: pass qid to decision_function")
            X = self.feature_map_.transform(X, qid)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_

    def predict(self, X, qid=None):
        """The ranking scores of decision_function (a ranker predicts scores to sort by)."""
        return self.decision_function(X, qid=qid)

    # -- persistence (svmmap.base.BaseRanker.save / load, svmmap.model_file) -----------------

    def _fitted_state(self):
        model = {"coef": [float(v) for v in self.coef_], "intercept": float(self.intercept_)}
        if self.feature_map_ is not None:
            model.update(self.feature_map_.fitted_state())  # its thresholds
        result = self.training_result_
        training = None if result is None else {
            "status": result.status,
            # NaN (nothing measured: interrupted before the first oracle pass) is written null
            **{key: _finite_or_none(getattr(result, key))
               for key in ("primal_objective", "dual_objective", "duality_gap",
                           "relative_gap", "max_violation")},
            "iterations": result.iterations, "working_set_size": result.working_set_size,
            "n_queries_used": self.n_queries_used_,
            "n_queries_without_relevant": self.n_queries_without_relevant_,
            "n_queries_all_relevant": self.n_queries_all_relevant_,
        }
        if training is not None and getattr(self, "selection_", None) is not None:
            training["selection"] = self.selection_  # the C path of svmmap_learn -c C1,C2,...
        return model, training

    @classmethod
    def _params_from_file(cls, params):
        params = dict(params)
        if "rel_gap" not in params:  # written before rel_gap existed: trained without it,
            params["rel_gap"] = None  # by epsilon (then always set; 1e-3 its default)
            params.setdefault("epsilon", 1e-3)
        if isinstance(params.get("feature_map"), dict):
            params["feature_map"] = BinnedFeatureMap(**params["feature_map"])
        return params

    def _restore(self, model, training):
        coef = np.array(model["coef"], dtype=np.float64)
        intercept = float(model["intercept"])
        if coef.ndim != 1 or not np.all(np.isfinite(coef)) or not np.isfinite(intercept):
            raise ValueError("coef / intercept hold a non-number")
        self.feature_map_ = None
        n_weights = self.n_features_in_
        if self.feature_map is not None:
            self.feature_map_ = clone(self.feature_map).restore(model,
                                                          self.n_features_in_)
            n_weights = self.feature_map_.n_output_features_
        if len(coef) != n_weights:
            raise ValueError(f"coef has {len(coef)} weights, the model's features are "
                             f"{n_weights}")
        self.coef_, self.intercept_ = coef, intercept
        self.training_result_ = None
        self.n_queries_used_ = self.n_queries_without_relevant_ = None
        self.n_queries_all_relevant_ = None
        self.selection_ = None
        if training is None:
            return
        self.selection_ = training.get("selection")
        self.n_queries_used_ = int(training["n_queries_used"])
        self.n_queries_without_relevant_ = int(training["n_queries_without_relevant"])
        self.n_queries_all_relevant_ = int(training["n_queries_all_relevant"])
        nan = float("nan")
        self.training_result_ = TrainingResult(
            w=np.append(coef, intercept) if self.loss == "acc" else coef.copy(),
            formulation=self.algorithm, C=float(self.C),
            epsilon=None if self.epsilon is None else float(self.epsilon),
            status=str(training["status"]),
            **{key: nan if training[key] is None else float(training[key])
               for key in ("primal_objective", "dual_objective", "max_violation")},
            slack=None, iterations=int(training["iterations"]),
            working_set_size=int(training["working_set_size"]),
            seconds=nan, oracle_seconds=nan, qp_seconds=nan, history=[],
            rel_gap=None if self.rel_gap is None else float(self.rel_gap))


#: dense float64 vectors of length d that training holds besides the working set's rows:
#: w, the best w, the working set's initial 16 rows and temporaries
_DENSE_VECTORS = 24


def _check_memory(n_features, n_examples, algorithm="1-slack", cache_size=0):
    """Refuse, before training, a problem whose dense vectors need more memory than is
    available (svmmap stores w and the working set's constraint vectors densely: the highest
    feature index sets their length).  An oracle pass holds no queries x features array
    (svmmap.plugins.rows); n-slack's working set takes up to one vector per example in its
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
    """max |x| over the entries of X (dense or sparse; 0 for an empty X)."""
    values = X.data if hasattr(X, "data") and not isinstance(X, np.ndarray) else X
    return float(np.max(np.abs(values), initial=0.0))


def _finite_or_none(value):
    return float(value) if np.isfinite(value) else None
