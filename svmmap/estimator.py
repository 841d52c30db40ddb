"""SVMMap: the estimator users train and apply (scikit-learn manners, no scikit-learn needed)."""

import warnings

import numpy as np

from svmstruct_api.callbacks import LogCallback, as_callbacks
from svmstruct_api.learner import FORMULATIONS, NonFiniteObjective, make_learner
from svmstruct_api.qp import QP_SOLVERS

from . import metrics
from .collection import QueryCollection, check_features
from .errors import InputFormatError, ModelFileError
from .features import BinnedFeatureMap
from .model_file import DAMAGED_MODEL_ERRORS, read_model, write_model
from .options import MEASURE_KINDS, ORACLES, parse_loss
from .params import ParamsMixin
from .plugins import AccuracyPlugin, MapPlugin, MeasurePlugin, RocPlugin
from .plugins.accuracy import resolve_cost_ratio

#: the plugin of each loss, by the loss name without its cutoff (``options.parse_loss``)
PLUGINS = {"map": MapPlugin, "roc": RocPlugin, "acc": AccuracyPlugin,
           **{base: MeasurePlugin for base in MEASURE_KINDS}}
#: w, and every constraint vector of the working set, is dense: 2^27 features is 1 GiB each
MAX_FEATURES = 2**27


class SVMMap(ParamsMixin):
    """Linear ranking function trained by a structural SVM (Yue et al., SIGIR 2007).

    Solves  min_w 1/2 |w|^2 + C/n sum_q xi_q  s.t. for every training query q and every
    ranking y:  w.psi(x_q, y_q) >= w.psi(x_q, y) + Delta(y_q, y) - xi_q,
    where n counts the queries that carry constraints (at least one relevant and one
    non-relevant document) -- the SVMstruct 3.x / SVMrank convention.  The original SVM-map
    V1.00 release (built on SVMstruct 3.00) divides by n too (``svmCnorm = C/n`` in its
    svm_struct_learn.c), so its ``-c C`` means the same as ``C`` here.  For ``loss="acc"``
    the objective is the standard soft-margin SVM
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
    epsilon : tolerance on constraint violation; training stops when no constraint is violated
        by more than epsilon, so the objective is within 1.01 C * epsilon of the optimum
        (the 0.01: each working-set QP is solved to a gap of 1% of C * epsilon).
    algorithm : "1-slack" (Joachims, Finley & Yu 2009) or "n-slack" (the paper's Algorithm 1).
    max_iter, max_time : optional limits on cutting-plane iterations / seconds.
    n_threads : threads for the per-query oracle loop.
    oracle : "divide" (exact divide and conquer, default) or "scan" (plain Algorithm 2).
    verbose : 0 silent; 1 a live progress display on stderr while training (iteration,
        objectives, gap and violation against their targets, time left; svmmap.progress);
        2 a line per iteration and the final report on stdout.
    features : None (use X as given) or a svmmap.features.BinnedFeatureMap: the binned
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
    features_ : the fitted BinnedFeatureMap, or None.
    training_result_ : svmstruct_api.learner.TrainingResult (objectives, iterations, history).
    n_queries_used_, n_queries_without_relevant_, n_queries_all_relevant_ : int.
    """

    #: the fitted feature map; set by fit and load (None: the model scores X as given)
    features_ = None

    def __init__(self, C=1.0, loss="map", epsilon=1e-3, algorithm="1-slack", max_iter=None,
                 max_time=None, n_threads=1, oracle="divide", verbose=0, features=None,
                 cost_ratio=1.0, qp_solver="smo", cache_size=0):
        self.C = C
        self.loss = loss
        self.epsilon = epsilon
        self.algorithm = algorithm
        self.max_iter = max_iter
        self.max_time = max_time
        self.n_threads = n_threads
        self.oracle = oracle
        self.verbose = verbose
        self.features = features
        self.cost_ratio = cost_ratio
        self.qp_solver = qp_solver
        self.cache_size = cache_size

    def _callbacks(self, callbacks):
        """The learner's callbacks: ``verbose``'s display, then the caller's."""
        shown = []
        if self.verbose == 1:
            from .progress import ProgressDisplay

            shown = [ProgressDisplay()]
        elif self.verbose and self.verbose >= 2:
            shown = [LogCallback()]
        return shown + as_callbacks(callbacks)

    def _check_params(self):
        """ValueError for a parameter out of its domain (the CLI's options have the same)."""
        for name in ("C", "epsilon"):
            if not _positive_finite(getattr(self, name)):
                raise ValueError(f"{name} must be a positive finite number, "
                                 f"got {getattr(self, name)!r}")
        if self.max_time is not None and not _positive_finite(self.max_time):
            raise ValueError(f"max_time must be None or a positive finite number of seconds, "
                             f"got {self.max_time!r}")
        for name, allow_none in (("max_iter", True), ("n_threads", False)):
            value = getattr(self, name)
            if not (value is None and allow_none or _positive_integer(value)):
                raise ValueError(f"{name} must be {'None or ' if allow_none else ''}a positive "
                                 f"integer, got {value!r}")
        parse_loss(self.loss)  # raises ValueError naming the accepted losses
        if self.algorithm not in FORMULATIONS:
            raise ValueError(f"algorithm must be one of {FORMULATIONS}, got {self.algorithm!r}")
        if not (isinstance(self.cache_size, (int, np.integer)) and self.cache_size >= 0):
            raise ValueError(f"cache_size must be a non-negative integer, "
                             f"got {self.cache_size!r}")
        if self.cache_size and self.algorithm != "1-slack":
            raise ValueError("cache_size applies to algorithm='1-slack' only")
        if self.qp_solver not in QP_SOLVERS:
            raise ValueError(f"qp_solver must be one of {QP_SOLVERS}, got {self.qp_solver!r}")
        if self.oracle not in ORACLES:
            raise ValueError(f"oracle must be one of {ORACLES}, got {self.oracle!r}")
        if self.features is not None and not isinstance(self.features, BinnedFeatureMap):
            raise ValueError(f"features must be None or a BinnedFeatureMap, "
                             f"got {self.features!r}")
        resolve_cost_ratio(self.cost_ratio, 1, 1)  # raises ValueError if malformed
        if self.cost_ratio != 1.0 and self.loss != "acc":
            raise ValueError(f"cost_ratio applies to loss='acc' only, got loss={self.loss!r}")

    # -- training and prediction -----------------------------------------------------------

    def fit(self, X, y, qid, callbacks=None):
        """Train on documents X with labels y (relevant: y > 0) grouped by qid; return self.

        ``callbacks``: one or a list of svmstruct_api.callbacks callbacks (objects with
        ``on_start`` / ``on_iteration(progress)`` / ``on_end(result)``, or plain callables),
        told about every cutting-plane iteration, besides what ``verbose`` shows."""
        self._check_params()
        prepared = self._prepare(X, y, qid)
        try:
            result = self._learner(self.C, callbacks).fit(prepared["plugin"])
        except NonFiniteObjective as exc:
            raise InputFormatError(str(exc)) from None
        self._finish(prepared, result)
        return self

    def _prepare(self, X, y, qid):
        """The training problem: the fitted feature map, the plugin over the trainable
        queries and the counts fit records (a dict), with skipped queries warned about; a
        DataFrame's column names are kept (feature_names_in_)."""
        columns = getattr(X, "columns", None)  # a DataFrame: its column names, for export
        if columns is not None:
            self.feature_names_in_ = np.asarray([str(c) for c in columns], dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        collection = QueryCollection.from_arrays(X, y, qid)  # the one check and grouping
        n_features_in = collection.n_features
        features = None
        if self.features is not None:
            features = BinnedFeatureMap(**self.features.get_params())
            collection = features.fit_transform_collection(collection)
        if collection.n_features > MAX_FEATURES:
            raise InputFormatError(
                f"X has {collection.n_features} features (highest feature index): more than "
                f"the {MAX_FEATURES} a dense weight vector can reasonably hold; renumber the "
                "features")
        trainable, n_without_relevant, n_all_relevant = collection.trainable()
        skipped = n_without_relevant + n_all_relevant
        if self.loss == "acc":  # a classifier learns from every document, whatever its query
            trainable, skipped = collection, 0
        elif trainable.n_queries == 0:
            raise InputFormatError(
                f"none of the {collection.n_queries} queries has both a relevant (label > 0) "
                "and a non-relevant document: there is nothing to train on")
        if skipped:
            warnings.warn(
                f"{skipped} of {collection.n_queries} queries carry no constraint and are "
                f"skipped ({n_without_relevant} without a relevant document, {n_all_relevant} "
                "with only relevant documents)", stacklevel=3)
        plugin = self._plugin(trainable)
        _check_memory(plugin.n_features, plugin.n_examples)
        return {"plugin": plugin, "features": features, "n_features_in": n_features_in,
                "n_queries_used": trainable.n_queries,
                "n_queries_without_relevant": n_without_relevant,
                "n_queries_all_relevant": n_all_relevant}

    def _learner(self, C, callbacks=None):
        """The cutting-plane learner of these parameters at trade-off C."""
        return make_learner(
            self.algorithm, C=C, epsilon=self.epsilon, max_iter=self.max_iter,
            max_time=self.max_time, callbacks=self._callbacks(callbacks),
            qp_solver=self.qp_solver, cache_size=self.cache_size)

    def _finish(self, prepared, result):
        """Set the fitted attributes from a TrainingResult of the prepared problem."""
        self.coef_, self.intercept_ = prepared["plugin"].scoring_function(result.w)
        self.features_ = prepared["features"]
        self.n_features_in_ = prepared["n_features_in"]
        self.training_result_ = result
        self.n_queries_used_ = prepared["n_queries_used"]
        self.n_queries_without_relevant_ = prepared["n_queries_without_relevant"]
        self.n_queries_all_relevant_ = prepared["n_queries_all_relevant"]

    def _plugin(self, collection):
        """The structured model of ``self.loss`` over the training collection."""
        if self.loss == "acc":
            return AccuracyPlugin(collection, cost_ratio=self.cost_ratio)
        if self.loss == "roc":
            return RocPlugin(collection, n_threads=self.n_threads)
        if self.loss != "map":
            return MeasurePlugin(collection, self.loss, n_threads=self.n_threads)
        return MapPlugin(collection, n_threads=self.n_threads, oracle=self.oracle)

    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            raise ValueError("this SVMMap is not fitted yet: call fit or SVMMap.load first")

    def decision_function(self, X, qid=None):
        """Scores w.phi(x) + b, one per row of X (rank a query's documents by them,
        descending); phi is the fitted feature map, if any.  ``qid`` is needed only by a
        feature map that works within queries (``per_query``)."""
        self._check_fitted()
        X = check_features(X)
        n_inputs = len(self.coef_) if self.features_ is None else \
            self.features_.n_input_features_
        if X.shape[1] != n_inputs:
            raise InputFormatError(
                f"X has {X.shape[1]} features but the model was trained with {n_inputs}")
        if self.features_ is not None:
            if self.features_.needs_qid and qid is None:
                raise InputFormatError(
                    f"the model's feature map (per_query={self.features_.per_query!r}) works "
                    "within queries: pass qid to decision_function")
            X = self.features_.transform(X, qid)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_

    predict = decision_function

    def score(self, X, y, qid, convention="letor"):
        """MAP of the ranking by decision_function (svmmap.metrics, LETOR convention unless
        ``convention="trec_eval"``)."""
        return metrics.mean_average_precision(self.decision_function(X, qid), y, qid,
                                              convention=convention)

    # -- persistence -------------------------------------------------------------------------

    def save(self, path):
        """Write the model to ``path`` (versioned JSON, written atomically)."""
        self._check_fitted()
        result = self.training_result_
        training = None if result is None else {
            "status": result.status, "formulation": result.formulation,
            # NaN (nothing measured: interrupted before the first oracle pass) is written null
            **{key: _finite_or_none(getattr(result, key))
               for key in ("primal_objective", "dual_objective", "duality_gap",
                           "relative_gap", "max_violation")},
            "iterations": result.iterations, "working_set_size": result.working_set_size,
            "n_queries_used": self.n_queries_used_,
            "n_queries_without_relevant": self.n_queries_without_relevant_,
            "n_queries_all_relevant": self.n_queries_all_relevant_,
        }
        params = self.get_params()
        if self.features is not None:
            params["features"] = self.features.get_params()
        content = {"params": params, "n_features": len(self.coef_),
                   "coef": [float(v) for v in self.coef_], "intercept": float(self.intercept_),
                   "training": training}
        if self.features_ is not None:
            content["feature_map"] = self.features_.to_dict()
        if getattr(self, "selection_", None) is not None:
            content["selection"] = self.selection_
        write_model(path, content)

    @classmethod
    def load(cls, path):
        """Read a model written by ``save``; ModelFileError (one line) for any file that is
        not one."""
        document = read_model(path, kind="svmmap")
        try:
            return cls._from_document(document, path)
        except ModelFileError:
            raise
        except DAMAGED_MODEL_ERRORS as exc:
            raise ModelFileError(f"damaged model file ({type(exc).__name__}: {exc})",
                                 path) from None

    @classmethod
    def _from_document(cls, document, path):
        try:
            params = dict(document["params"])
            if isinstance(params.get("features"), dict):
                params["features"] = BinnedFeatureMap(**params["features"])
            model = cls(**params)
            model._check_params()
        except (TypeError, ValueError) as exc:
            raise ModelFileError(f"damaged model file: bad params ({exc})", path) from None
        model.coef_ = np.array(document["coef"], dtype=np.float64)
        model.intercept_ = float(document["intercept"])
        model.features_ = None
        model.n_features_in_ = len(model.coef_)
        if "feature_map" in document:
            try:
                model.features_ = BinnedFeatureMap.from_dict(document["feature_map"])
            except ValueError as exc:
                raise ModelFileError(f"damaged model file: {exc}", path) from None
            if model.features_.n_output_features_ != len(model.coef_):
                raise ModelFileError("damaged model file: the feature map does not match coef",
                                     path)
            model.n_features_in_ = model.features_.n_input_features_
        model.training_result_ = None
        model.training_info_ = document.get("training")
        model.selection_ = document.get("selection")
        training = model.training_info_ or {}
        if not isinstance(training, dict):
            raise ModelFileError("damaged model file: training is not an object", path)
        model.n_queries_used_ = training.get("n_queries_used")
        model.n_queries_without_relevant_ = training.get("n_queries_without_relevant")
        model.n_queries_all_relevant_ = training.get("n_queries_all_relevant")
        return model


#: dense float64 vectors of length d that training holds besides one per example (the
#: oracle's dpsi rows): w, the best w, the working set's initial 16 rows and temporaries
_DENSE_VECTORS = 24


def _check_memory(n_features, n_examples):
    """Refuse, before training, a problem whose dense vectors (w, the oracle's dpsi row per
    example, the working set) need more memory than is available (svmmap stores them densely:
    the highest feature index sets their length)."""
    need = 8.0 * n_features * (n_examples + _DENSE_VECTORS)
    available = _available_memory()
    if available is not None and need > available:
        raise InputFormatError(
            f"the highest feature index is {n_features}: training holds "
            f"{n_examples + _DENSE_VECTORS} dense vectors of that length ({need / 2**30:.1f} "
            f"GiB), more than the {available / 2**30:.1f} GiB of memory available; renumber "
            "the features consecutively")


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


def _positive_finite(value):
    return isinstance(value, (int, float, np.integer, np.floating)) and \
        not isinstance(value, bool) and bool(np.isfinite(value)) and value > 0


def _positive_integer(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 1


def _finite_or_none(value):
    return float(value) if np.isfinite(value) else None
