"""AdaRank (Xu & Li, "AdaRank: A Boosting Algorithm for Information Retrieval", SIGIR 2007).

Weak rankers are single features h_j(x) = x_j.  With E(q, f) in [-1, 1] the query-level
measure of the ranking of query q by f (AP for AdaRank.MAP, NDCG@k for AdaRank.NDCG) and
query weights P_1(q) = 1/n, round t does (the paper's Figure 1):

    h_t     = argmax_j  sum_q P_t(q) E(q, h_j)
    alpha_t = 1/2 ln( sum_q P_t(q) (1 + E(q, h_t)) / sum_q P_t(q) (1 - E(q, h_t)) )
    f_t     = sum_{s <= t} alpha_s h_s
    P_{t+1}(q) = exp(-E(q, f_t)) / sum_q' exp(-E(q', f_t))

Theorem 1 of the paper bounds the training measure:
    1/n sum_q E(q, f_T) >= 1 - prod_t e^{-delta_min^t} sqrt(1 - phi(t)^2),
    phi(t) = sum_q P_t(q) E(q, h_t),
    delta_min^t = min_q [E(q, f_t) - E(q, f_{t-1}) - alpha_t E(q, h_t)],   E(q, f_0) = 0.

Guards (as in the reference implementation, with a number ``tol``): the feature chosen in the
previous round cannot be chosen again; a round whose f_t does not raise the mean training
measure by more than ``tol`` is rolled back and its feature blocked until a round is accepted;
training stops when every feature is blocked or after ``max_rounds`` accepted rounds.
``tol=None`` runs the plain algorithm of Figure 1: no guard, every round accepted, any feature
may be chosen in any round, T = ``max_rounds`` -- Theorem 1 holds for both,
since it holds whatever weak ranker a round picks.  phi(t) is clipped to 1 - 1e-12
(alpha <= 13.8), so a weak ranker that is perfect on every weighted query cannot divide by
zero; training also
stops once E(q, f_t) = 1 on every query.  With ``eval_set`` the number of rounds T is the one
with the best validation measure; otherwise all accepted rounds are kept.

The final ranker is linear: coef_[j] = sum of alpha_t over the rounds with h_t = j.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

import numpy as np

from ..core.collection import QueryCollection
from ..core.groups import eval_sets, training_qid
from ..core.rules import Interval, OneOf, Verbosity
from ..data.model_file import renamed
from ..errors import InputFormatError
from ..kernels._csr import scores
from ._base import BaselineRanker, column, query_measure, validation_collection

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Self

    from ..core._typing import EvalSets, FloatArray, Matrix, Vector

MEASURES = ("map", "ndcg")
PHI_MAX = 1.0 - 1e-12


class AdaRank(BaselineRanker):
    """AdaRank.MAP (``loss="map"``) or AdaRank.NDCG (``loss="ndcg"``, NDCG@``ndcg_k``).

    Parameters
    ----------
    loss : "map" or "ndcg" -- what is optimised (named like SVMMap's ``loss``): the measure
        E(q, f), computed by svmmap.metrics (LETOR convention).
    ndcg_k : cut-off k of NDCG@k (ignored for "map").
    max_rounds : at most this many accepted boosting rounds.
    tol : a round is accepted when it raises the mean training measure by more than tol;
        None accepts every round and blocks no feature (the paper's plain Figure 1).
    verbose : 0 silent, 1 a line per round.

    Attributes (after fit)
    ----------------------
    coef_ : ndarray (n_features,), intercept_ = 0.0.
    features_, alphas_ : the selected features and their weights, round by round (the first
        ``n_rounds_`` of them make coef_).
    history_ : list of dicts per accepted round: feature, alpha, phi, delta_min, train
        (mean training measure of f_t), bound (Theorem 1's lower bound) and, with eval_set,
        valid.
    n_rounds_ : the number of rounds T in the final model.
    n_queries_used_ : training queries on which E is not constant (see fit).
    After ``load`` every attribute is restored (history_ is None for a version-1 file).
    """

    KIND = "adarank"

    _parameter_rules = {
        "loss": [OneOf(*MEASURES)],
        "ndcg_k": [Interval(1, None, closed="left", integer=True)],
        "max_rounds": [Interval(1, None, closed="left", integer=True)],
        "tol": [Interval(0, math.inf, closed="left"), None],
        "verbose": [Verbosity()],
    }

    def __init__(self, loss: str = "map", ndcg_k: int = 10, max_rounds: int = 500,
                 tol: float = 0.0, verbose: int = 0) -> None:
        self.loss = loss
        self.ndcg_k = ndcg_k
        self.max_rounds = max_rounds
        self.tol = tol
        self.verbose = verbose


    def _informative(self, collection):
        """Queries on which E varies with the ranking: MAP needs a relevant and a non-relevant
        document, NDCG two different labels one of which is positive."""
        sizes = np.diff(collection.ptr)
        if self.loss == "map":
            n_rel, n_non = collection.relevant_counts()
            return np.flatnonzero((n_rel > 0) & (n_non > 0))
        starts = collection.ptr[:-1]
        top = np.maximum.reduceat(collection.labels, starts)
        bottom = np.minimum.reduceat(collection.labels, starts)
        return np.flatnonzero((sizes > 0) & (top > bottom) & (top > 0))

    def _measure(self, scores, labels, ptr):
        return query_measure(scores, labels, ptr, self.loss, self.ndcg_k)

    def _rounds(self, train: QueryCollection, valid: QueryCollection | None,
                ) -> tuple[list[int], list[float], list[dict[str, float]]]:
        """The boosting rounds on the informative training queries: the chosen feature and
        alpha of every round and its history entry (measures on ``valid`` too)."""
        n_q, d = train.n_queries, train.n_features
        ptr, labels = train.ptr, train.labels
        # E(q, h_j) for every query and feature: the weak rankers never change.
        weak = np.column_stack([self._measure(column(train.X, j), labels, ptr)
                                for j in range(d)])
        weights = np.full(n_q, 1.0 / n_q)
        scores = np.zeros(train.n_documents)
        coef = np.zeros(d)
        e_prev = np.zeros(n_q)
        train_prev = 0.0
        bound_product = 1.0
        blocked: set[int] = set()
        features: list[int] = []
        alphas: list[float] = []
        history: list[dict[str, float]] = []
        while len(features) < self.max_rounds:
            performance = weights @ weak
            if blocked:
                performance[list(blocked)] = -np.inf
            j = int(np.argmax(performance))
            if performance[j] == -np.inf:
                break
            phi = float(min(performance[j], PHI_MAX))
            alpha = 0.5 * np.log((1.0 + phi) / (1.0 - phi))
            new_scores = scores + alpha * column(train.X, j)
            e_new = self._measure(new_scores, labels, ptr)
            train_new = float(e_new.mean())
            if self.tol is not None and not train_new > train_prev + self.tol:
                blocked.add(j)
                continue
            delta_min = float(np.min(e_new - e_prev - alpha * weak[:, j]))
            bound_product *= np.exp(-delta_min) * np.sqrt(1.0 - phi * phi)
            coef[j] += alpha
            scores, e_prev, train_prev = new_scores, e_new, train_new
            features.append(j)
            alphas.append(float(alpha))
            entry = {"feature": j, "alpha": float(alpha), "phi": phi, "delta_min": delta_min,
                     "train": train_new, "bound": 1.0 - bound_product}
            if valid is not None:
                entry["valid"] = float(self._measure(valid.X @ coef, valid.labels,
                                                     valid.ptr).mean())
            history.append(entry)
            if self.verbose:
                print(f"AdaRank round {len(features)}: feature {j + 1} alpha {alpha:.4g} "
                      f"train {self.loss} {train_new:.4f}"
                      + (f" valid {entry['valid']:.4f}" if valid is not None else ""))
            blocked = {j} if self.tol is not None else set()
            exp_neg = np.exp(-e_new)
            weights = exp_neg / exp_neg.sum()
            if np.all(e_new >= 1.0):
                break
        return features, alphas, history

    def fit(self, X: Matrix, y: Vector, qid: Vector | None = None,
            eval_set: EvalSets | None = None, *, group: Vector | None = None,
            eval_group: Sequence[Vector] | None = None,
            eval_qid: Sequence[Vector] | None = None) -> Self:
        """Train on documents X with graded labels y grouped by qid; return self.

        Queries on which E is constant (MAP: no relevant or no non-relevant document; NDCG:
        all labels equal or none positive) carry no information and are skipped with a
        warning.  ``eval_set=(X_valid, y_valid, qid_valid)`` (or LightGBM's forms with
        ``eval_group`` / ``eval_qid``, and ``group`` sizes instead of qid: svmmap.core.groups)
        selects the number of rounds by the measure on the first validation set;
        ``best_score_`` records MAP on each.
        """
        qid = training_qid(qid, group, X)
        full = self._training_collection(X, y, qid)
        sets = self._validate_eval_sets(eval_sets(eval_set, eval_group, eval_qid),
                                        eval_qid is not None)
        eval_set = sets[0] if sets else None
        keep = self._informative(full)
        if len(keep) == 0:
            raise InputFormatError(f"none of the {full.n_queries} queries can be ranked better "
                                   f"or worse by {self.loss}: there is nothing to train on")
        if len(keep) < full.n_queries:
            warnings.warn(f"{full.n_queries - len(keep)} of {full.n_queries} queries have a "
                          f"constant {self.loss} and are skipped", stacklevel=2)
        train = full.subset(keep)
        valid = validation_collection(eval_set, train.n_features)
        features, alphas, history = self._rounds(train, valid)
        if not features:
            raise InputFormatError("no feature ranks the training queries better than "
                                   "nothing: AdaRank selected no weak ranker")
        d, n_rounds = train.n_features, len(features)
        if valid is not None:
            n_rounds = 1 + int(np.argmax([h["valid"] for h in history]))
        self.features_ = np.array(features, dtype=np.int64)
        self.alphas_ = np.array(alphas)
        self.history_ = history
        self.n_rounds_ = n_rounds
        self.coef_ = np.bincount(self.features_[:n_rounds], weights=self.alphas_[:n_rounds],
                                 minlength=d).astype(np.float64)
        self.intercept_ = 0.0
        self.n_queries_used_ = train.n_queries
        self._record_eval(sets)
        return self

    def decision_function(self, X: Matrix, qid: Vector | None = None) -> FloatArray:
        """Scores f_T(x) = sum_t alpha_t x_{h_t} = coef_ . x, one per row of X (``qid`` is
        accepted for the common ranker API and not needed)."""
        X, _ = self._validate_X(X, qid)
        return scores(X, self.coef_)  # summed in feature order: the same bits dense or sparse

    def predict(self, X: Matrix, qid: Vector | None = None) -> FloatArray:
        """The ranking scores of decision_function."""
        return self.decision_function(X, qid=qid)

    def _fitted_state(self):
        model = {"features": [int(j) for j in self.features_],
                 "alphas": [float(a) for a in self.alphas_], "n_rounds": int(self.n_rounds_)}
        history = None if self.history_ is None else [  # feature and alpha are in model
            {k: v for k, v in entry.items() if k not in ("feature", "alpha")}
            for entry in self.history_]
        return model, {"history": history, "n_queries_used": int(self.n_queries_used_)}

    def _restore(self, model, training):
        self.features_ = np.array(model["features"], dtype=np.int64)
        self.alphas_ = np.array(model["alphas"], dtype=np.float64)
        self.n_rounds_ = int(model["n_rounds"])
        d = self.n_features_in_
        if (self.features_.ndim != 1 or len(self.features_) != len(self.alphas_)
                or not 1 <= self.n_rounds_ <= len(self.features_)
                or np.any((self.features_ < 0) | (self.features_ >= d))):
            raise ValueError("weak rankers do not match n_features / n_rounds")
        # coef_ exactly as fit builds it
        self.coef_ = np.bincount(self.features_[:self.n_rounds_],
                                 weights=self.alphas_[:self.n_rounds_],
                                 minlength=d).astype(np.float64)
        self.intercept_ = 0.0
        self.n_queries_used_ = int(training["n_queries_used"])
        history = training["history"]
        if history is not None and len(history) != len(self.features_):
            raise ValueError("the history does not match the weak rankers")
        self.history_ = None if history is None else [
            {"feature": int(j), "alpha": float(a), **entry}
            for j, a, entry in zip(self.features_, self.alphas_, history)]


def upgrade_v1(document: dict[str, Any], v2: dict[str, Any]) -> None:
    """The AdaRank part of a version-1 file's version-2 layout (svmmap.data.model_file.ModelKind):
    the rounds move from ``training`` to ``model``, ``measure`` / ``k`` become ``loss`` /
    ``ndcg_k``."""
    training = v2["training"]
    v2["model"] = {"features": training.pop("features"), "alphas": training.pop("alphas"),
                   "n_rounds": training.pop("n_rounds")}
    training["history"] = None  # version 1 did not keep the round-by-round record
    v2["params"] = renamed(v2["params"], {"measure": "loss", "k": "ndcg_k"})
