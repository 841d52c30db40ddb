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

import numpy as np

from .._prank_kernel import prank_pass
from ..collection import QueryCollection
from ..errors import InputFormatError
from ._base import BaselineRanker


def dense(X):
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
    coef_ : ndarray (n_features,), w;  thresholds_ : ndarray (k - 1,), b (non-decreasing).
    classes_ : the distinct training labels, rank r <-> classes_[r].
    n_updates_, rank_loss_ : updates made and sum |yhat - y| during training, per epoch.
    """

    KIND = "prank"

    def __init__(self, n_epochs=10, averaged=True, random_state=0):
        self.n_epochs = n_epochs
        self.averaged = averaged
        self.random_state = random_state

    def _check_params(self):
        if not isinstance(self.n_epochs, (int, np.integer)) or self.n_epochs < 1:
            raise ValueError(f"n_epochs must be a positive integer, got {self.n_epochs!r}")
        if not isinstance(self.averaged, bool):
            raise ValueError(f"averaged must be True or False, got {self.averaged!r}")

    def fit(self, X, y, qid):
        """Train on documents X with graded labels y; return self.  ``qid`` only checks the
        input (PRank is pointwise): every document is one example."""
        self._check_params()
        collection = QueryCollection.from_arrays(X, y, qid)
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
        thresholds = b_sum / steps if self.averaged else b
        if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(thresholds))):
            raise InputFormatError("PRank's weights overflowed the float range: the feature "
                                   "values are too large for the perceptron's sums (scale "
                                   "the features)")
        self.coef_, self.thresholds_ = coef, thresholds
        self.intercept_ = 0.0
        self.classes_ = classes
        self.n_updates_ = np.array(updates, dtype=np.int64)
        self.rank_loss_ = np.array(losses, dtype=np.int64)
        self.n_features_in_ = d
        return self

    def decision_function(self, X):
        """Scores w.x, one per row of X (rank a query's documents by them, descending)."""
        X = self._check_X(X)
        return np.asarray(X @ self.coef_).ravel()

    predict = decision_function

    def predict_rank(self, X):
        """The predicted grade classes_[min{r : w.x - b_r < 0}] of every row."""
        scores = self.decision_function(X)
        return self.classes_[np.searchsorted(self.thresholds_, scores, side="right")]

    def _state(self):
        return {"coef": [float(v) for v in self.coef_], "intercept": 0.0,
                "thresholds": [float(v) for v in self.thresholds_],
                "classes": [float(v) for v in self.classes_],
                "training": {"updates": [int(u) for u in self.n_updates_],
                             "rank_loss": [int(v) for v in self.rank_loss_]}}

    def _restore(self, document):
        self.coef_ = np.array(document["coef"], dtype=np.float64)
        self.intercept_ = 0.0
        self.thresholds_ = np.array(document["thresholds"], dtype=np.float64)
        self.classes_ = np.array(document["classes"], dtype=np.float64)
        if len(self.thresholds_) != len(self.classes_) - 1:
            raise ValueError("thresholds do not match classes")
        self.n_updates_ = np.array(document["training"]["updates"], dtype=np.int64)
        self.rank_loss_ = np.array(document["training"]["rank_loss"], dtype=np.int64)
