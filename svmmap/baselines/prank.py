"""PRank (Crammer & Singer, "Pranking with Ranking", NIPS 14, 2001).

A perceptron over graded labels: weights w and ordered thresholds b_1 <= ... <= b_{k-1}
(b_k = +inf) predict the rank  yhat(x) = min{r : w.x - b_r < 0}.  On a mistake, with
y_r = +1 if y > r else -1 for r = 1..k-1,

    tau_r = y_r  if (w.x - b_r) y_r <= 0  else 0,     w <- w + (sum_r tau_r) x,
    b_r <- b_r - tau_r.

Lemma 1 of the paper: the update keeps the thresholds ordered.  Theorem 3 (mistake bound):
if some w*, b* with |w*|^2 + |b*|^2 = 1 rank every example with margin
gamma = min_{t, r} (w*.x_t - b*_r) y^t_r > 0 and R^2 = max_t |x_t|^2, the cumulative
ranking loss sum_t |yhat_t - y_t| -- hence the number of updates -- is at most
(k - 1)(R^2 + 1) / gamma^2, over any sequence, including repeated passes.

The graded labels are mapped to ranks by their sorted distinct training values; documents
are ranked by w.x (the thresholds only matter for the rank prediction ``predict_rank``).
With ``averaged=True`` (default) w and b are the averages over all steps of all epochs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.groups import eval_sets, training_qid
from ..core.rules import Boolean, Interval
from ..errors import InputFormatError
from ..kernels._csr import scores
from ..kernels._prank_kernel import prank_pass
from ._base import BaselineRanker

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Self

    from ..core._typing import EvalSets, FloatArray, IntArray, Matrix, Vector


def dense(X: Matrix) -> FloatArray:
    """X as a C-contiguous float64 array (a sparse matrix made dense)."""
    return np.ascontiguousarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)


class PRank(BaselineRanker):
    """PRank perceptron ranking.

    Parameters
    ----------
    n_epochs : passes over the training documents (shuffled each epoch).
    averaged : use the averaged weights and thresholds (the averaged perceptron).
    random_state : seed of the visiting order (None: file order every epoch).

    Attributes (after fit)
    ----------------------
    coef_ : ndarray (n_features,), w;  rank_thresholds_ : ndarray (k - 1,), the rank
        thresholds b (non-decreasing; named apart from ``thresholds_``, which in svmmap always
        means feature-value thresholds theta of indicators 1[x_j > theta]).
    classes_ : the distinct training labels, rank r <-> classes_[r].
    n_updates_, rank_loss_ : updates made and sum |yhat - y| during training, per epoch.
    """

    KIND = "prank"

    _runtime_params = ()
    _parameter_rules = {
        "n_epochs": [Interval(1, None, closed="left", integer=True)],
        "averaged": [Boolean()],
        "random_state": [Interval(0, None, closed="left", integer=True), None],
    }

    def __init__(self, n_epochs: int = 10, averaged: bool = True,
                 random_state: int | None = 0) -> None:
        self.n_epochs = n_epochs
        self.averaged = averaged
        self.random_state = random_state


    def fit(self, X: Matrix, y: Vector, qid: Vector | None = None, *,
            group: Vector | None = None, eval_set: EvalSets | None = None,
            eval_group: Sequence[Vector] | None = None,
            eval_qid: Sequence[Vector] | None = None) -> Self:
        """Train on documents X with graded labels y; return self.  ``qid`` only checks the
        input (PRank is pointwise): every document is one example.  ``group`` (query sizes
        instead of qid) and ``eval_set`` / ``eval_group`` / ``eval_qid`` as svmmap.core.groups
        reads them; ``best_score_`` records MAP on each validation set."""
        qid = training_qid(qid, group, X)
        collection = self._training_collection(X, y, qid)
        sets = self._validate_eval_sets(eval_sets(eval_set, eval_group, eval_qid),
                                        eval_qid is not None)
        classes, rank = np.unique(collection.labels, return_inverse=True)
        if len(classes) < 2:
            raise InputFormatError("every training document has the same label: there is "
                                   "nothing to rank")
        Xd = dense(collection.X)
        m, d = Xd.shape
        rank = np.ascontiguousarray(rank.ravel(), dtype=np.int64)
        w, b = np.zeros(d), np.zeros(len(classes) - 1)
        w_sum, b_sum = np.zeros(d), np.zeros(len(classes) - 1)
        rng = None if self.random_state is None else np.random.default_rng(self.random_state)
        updates, losses = [], []
        for _ in range(self.n_epochs):
            order = np.arange(m, dtype=np.int64) if rng is None else \
                rng.permutation(m).astype(np.int64)
            n_updates, rank_loss = prank_pass(Xd, rank, order, w, b, w_sum, b_sum)
            updates.append(n_updates)
            losses.append(rank_loss)
        steps = m * self.n_epochs
        coef = w_sum / steps if self.averaged else w
        rank_thresholds = b_sum / steps if self.averaged else b
        if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(rank_thresholds))):
            raise InputFormatError("PRank's weights overflowed the float range: the feature "
                                   "values are too large for the perceptron's sums (scale "
                                   "the features)")
        self.coef_, self.rank_thresholds_ = coef, rank_thresholds
        self.intercept_ = 0.0
        self.classes_ = classes
        self.n_updates_ = np.array(updates, dtype=np.int64)
        self.rank_loss_ = np.array(losses, dtype=np.int64)
        self._record_eval(sets)
        return self

    def decision_function(self, X: Matrix, qid: Vector | None = None) -> FloatArray:
        """Scores w.x, one per row of X (rank a query's documents by them, descending;
        ``qid`` is accepted for the common ranker API and not needed)."""
        X, _ = self._validate_X(X, qid)
        return scores(X, self.coef_)  # summed in feature order: the same bits dense or sparse

    def predict(self, X: Matrix, qid: Vector | None = None) -> FloatArray:
        """The ranking scores of decision_function (predict_rank gives the grades)."""
        return self.decision_function(X, qid=qid)

    def predict_rank(self, X: Matrix) -> IntArray:
        """The predicted grade classes_[min{r : w.x - b_r < 0}] of every row."""
        scores = self.decision_function(X)
        return self.classes_[np.searchsorted(self.rank_thresholds_, scores, side="right")]

    def _fitted_state(self):
        model = {"coef": [float(v) for v in self.coef_],
                 "rank_thresholds": [float(v) for v in self.rank_thresholds_],
                 "classes": [float(v) for v in self.classes_]}
        return model, {"n_updates": [int(u) for u in self.n_updates_],
                       "rank_loss": [int(v) for v in self.rank_loss_]}

    def _restore(self, model, training):
        self.coef_ = np.array(model["coef"], dtype=np.float64)
        if self.coef_.shape != (self.n_features_in_,):
            raise ValueError("coef does not match n_features")
        self.intercept_ = 0.0
        self.rank_thresholds_ = np.array(model["rank_thresholds"], dtype=np.float64)
        self.classes_ = np.array(model["classes"], dtype=np.float64)
        if len(self.rank_thresholds_) != len(self.classes_) - 1:
            raise ValueError("rank_thresholds do not match classes")
        self.n_updates_ = np.array(training["n_updates"], dtype=np.int64)
        self.rank_loss_ = np.array(training["rank_loss"], dtype=np.int64)


def upgrade_v1(document: dict[str, Any], v2: dict[str, Any]) -> None:
    """The PRank part of a version-1 file's version-2 layout (svmmap.data.model_file.ModelKind): the
    weights, rank thresholds and classes become ``model``."""
    v2["model"] = {"coef": document["coef"], "rank_thresholds": document["thresholds"],
                   "classes": document["classes"]}
    training = v2["training"]
    v2["training"] = {"n_updates": training["updates"], "rank_loss": training["rank_loss"]}
