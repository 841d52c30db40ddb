"""The SVM-ACC plugin: a linear classification SVM with a free bias, trained by the
cutting-plane learners -- the accuracy baseline of Yue et al. (2007), and with a cost ratio
its ACC2 variant (SVM-light's ``-j``)."""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np

from svmstruct_api.plugin import ConstraintBatch, StructuredModel

from ...errors import InputFormatError
from ...kernels._csr import row_block
from ...kernels._csr import training_scores as row_scores
from .rows import QueryRows

if TYPE_CHECKING:
    from ...core.collection import QueryCollection
    from .._typing import FloatArray


class AccuracyPlugin(StructuredModel):
    """Soft-margin classification SVM (relevant = +1, non-relevant = -1) as a structural SVM.

    Solves the standard SVM

        min_{w, b}  1/2 |w|^2 + C/n sum_d c_d max(0, 1 - y_d (w.phi_d + b))         (1)

    n = number of training documents (all of them: queries lacking a relevant or a
    non-relevant document still hold classification examples), b unregularised, and
    c_d = J (the cost ratio) for relevant documents, 1 for the others.  So ``C`` here is
    SVM-light's ``-c`` times n (its ``-c C/n``), and scikit-learn's ``SVC(kernel="linear",
    C=C/n, class_weight={1: J})``; J > 1 makes a false negative cost J times a false
    positive, as SVM-light's ``-j J``.

    Structure.  The hinge losses of (1) decouple over documents, so a whole query is one
    example (n_examples = number of queries, one constraint vector per query per iteration,
    as for the ranking plugins).  The output of query q is a labelling y in {-1, +1}^{m_q},

        psi_q(y)   = s sum_{d in q} c_d y_d [phi_d; 1] / 2
        Delta_q(y) = s sum_{d in q} c_d 1[y_d != y*_d],        s = n_queries / n,

    with the last component of w (the bias b) unregularised.  The most violated labelling
    flips exactly the documents with 1 - y*_d (w.phi_d + b) > 0, so the slack of query q is
    xi_q = s sum_{d in q} c_d max(0, 1 - y*_d (w.phi_d + b)), and the learners' objective
    1/2 |w|^2 + C/n_queries sum_q xi_q is (1).  The scale s makes the 1-slack constraint the
    mean (cost-weighted) hinge loss per document, so epsilon has the same meaning as for a
    document-level formulation, and the mean of Delta_q over queries is the training error
    rate (cost-weighted).

    Parameters
    ----------
    collection : QueryCollection of all training documents.
    cost_ratio : float J > 0 (default 1), or "balanced" for #non-relevant / #relevant of the
        collection (ACC2).
    document_weights : None, or v_d >= 0 per document of the collection (grouped order): the
        objective becomes 1/2 |w|^2 + C/V sum_d v_d c_d hinge_d, V = sum_d v_d (weights of 1
        give (1); a weight of 2 is the document appearing twice).
    """

    def __init__(self, collection: QueryCollection, cost_ratio: float | str = 1.0,
                 document_weights: FloatArray | None = None):
        self.collection = collection
        self.n_examples = collection.n_queries
        self.n_features = collection.n_features + 1
        self._sign = np.where(np.asarray(collection.labels) > 0, 1.0, -1.0)
        n_rel = int(np.sum(self._sign > 0))
        n_docs = len(self._sign)
        if n_rel in (0, n_docs):
            raise InputFormatError("classification needs both relevant (label > 0) and "
                                   "non-relevant documents: there is nothing to train on")
        self.cost_ratio = resolve_cost_ratio(cost_ratio, n_rel, n_docs - n_rel)
        self._cost = np.where(self._sign > 0, self.cost_ratio, 1.0)
        self._scale = self.n_examples / n_docs
        if document_weights is not None:  # c_d v_d, and n -> sum_d v_d
            self._cost = self._cost * document_weights
            self._scale = self.n_examples / float(np.sum(document_weights))

    @property
    def regularized(self) -> np.ndarray:
        """Which weights the regulariser sees: all but the bias (the last)."""
        mask = np.ones(self.n_features, dtype=bool)
        mask[-1] = False
        return mask

    @staticmethod
    def scoring_function(w: FloatArray) -> tuple[FloatArray, float]:
        """(coef, intercept) of the learned classifier f(x) = coef.phi(x) + intercept."""
        return w[:-1], float(w[-1])

    # -- batch hook used by the learners ---------------------------------------------------

    def most_violated_constraints(self, w: FloatArray) -> ConstraintBatch:
        """Every query's most violated labelling at w: the documents inside the margin
        flipped (their cost-weighted hinge terms, dpsi a QueryRows with the bias column)."""
        coef, intercept = self.scoring_function(w)
        margins = self._sign * (row_scores(self.collection.X, coef) + intercept)
        flipped = margins < 1.0
        weight = np.where(flipped, self._scale * self._cost, 0.0)
        query_of_doc = self.collection.query_of_doc
        loss = np.bincount(query_of_doc, weights=weight, minlength=self.n_examples)
        at_w = np.bincount(query_of_doc, weights=weight * margins, minlength=self.n_examples)
        rows = QueryRows(self.collection.kernel_X, weight * self._sign, self.collection.ptr,
                         query_of_doc, margins=at_w, at=np.array(w, dtype=np.float64),
                         bias=True)
        return ConstraintBatch(loss=loss, dpsi=rows)

    # -- the SVMstruct per-example hooks ---------------------------------------------------

    def _query(self, i):
        lo, hi = self.collection.ptr[i], self.collection.ptr[i + 1]
        return row_block(self.collection.X, lo, hi), self._sign[lo:hi], self._cost[lo:hi]

    def _decision(self, i, w):
        X, _, _ = self._query(i)
        coef, intercept = self.scoring_function(w)
        return np.asarray(X @ coef).ravel() + intercept

    def true_output(self, i: int) -> np.ndarray:
        """Query i's labels as +1 / -1."""
        return self._query(i)[1].astype(np.int64)

    def psi(self, i: int, y: np.ndarray) -> FloatArray:
        """psi(x_i, y) of query i's labelling y (+1 / -1), bias last."""
        X, _, cost = self._query(i)
        coef = self._scale * cost * np.asarray(y, dtype=float) / 2
        return np.append(X.T @ coef, coef.sum())

    def loss(self, i: int, y: np.ndarray) -> float:
        """The cost-weighted error of labelling y on query i."""
        _, sign, cost = self._query(i)
        return float(self._scale * np.sum(cost[np.asarray(y) != sign]))

    def find_most_violated_constraint(self, i: int, w: FloatArray) -> np.ndarray:
        """Query i's most violated labelling at w (inside the margin: flipped)."""
        sign = self._query(i)[1]
        flipped = sign * self._decision(i, w) < 1.0
        return np.where(flipped, -sign, sign).astype(np.int64)

    def classify_example(self, i: int, w: FloatArray) -> np.ndarray:
        """Query i's labels by the sign of the decision function."""
        return np.where(self._decision(i, w) > 0, 1, -1)


def resolve_cost_ratio(cost_ratio: float | str, n_relevant: int, n_nonrelevant: int) -> float:
    """J as a float: ``cost_ratio`` itself, or #non-relevant / #relevant for "balanced"."""
    if isinstance(cost_ratio, str):
        if cost_ratio != "balanced":
            raise ValueError(f"cost_ratio must be a positive number or 'balanced', "
                             f"got {cost_ratio!r}")
        return n_nonrelevant / n_relevant
    if isinstance(cost_ratio, bool) or not (
            isinstance(cost_ratio, numbers.Real) and np.isfinite(cost_ratio) and cost_ratio > 0):
        raise ValueError(f"cost_ratio must be a positive number or 'balanced', "
                         f"got {cost_ratio!r}")
    return float(cost_ratio)

