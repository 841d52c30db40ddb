"""The plugin of the ranking measures beyond MAP: Delta = 1 - the measure, for every measure
whose record in svmmap.core.measures names this plugin (NDCG@k, reciprocal rank, P@k, R-precision:
definitions and exact separation oracles in ``svmmap.kernels._loss_kernels``, under the record's
``oracle`` kind), on the joint feature map of SVM-MAP -- the structural SVMs of Chakrabarti,
Khanna, Sawant & Bhattacharyya (KDD 2008)."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from ...errors import InputFormatError
from ...kernels._kernel_inputs import checked_constraint_inputs
from ...kernels._loss_kernels import KINDS, loss_pass, most_violated, ranking_losses
from ..measures import MEASURES, parse_loss
from ..options import MAX_NDCG_LABEL, ndcg_label_error
from .ranking import RankingPlugin

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...core.collection import QueryCollection
    from ...kernels._kernel_inputs import ConstraintInputs
    from .._typing import FloatArray


def gains_of_labels(labels: np.ndarray) -> FloatArray:
    """The graded gain of each document: 2^label - 1 for relevant documents (label > 0), 0 for
    the others (the gain of NDCG; for the other measures only gain > 0 matters)."""
    labels = np.asarray(labels, dtype=np.float64)
    with np.errstate(over="ignore"):
        return np.where(labels > 0, np.exp2(labels) - 1.0, 0.0)


class MeasurePlugin(RankingPlugin):
    """Structural SVM plugin optimising a ranking measure: ``loss`` is the loss name of a
    measure whose registry record (svmmap.core.measures) names MeasurePlugin: "ndcg@k", "ndcg"
    (k = the query's size), "mrr", "p@k", "rprec".

    The kernels read the documents' gains (``gains_of_labels``) rather than relevance flags.
    The learners' batch hook is one fused pass of the extension over all queries: scores,
    per-query sort, the exact oracle of the loss and the coefficients of
    dpsi = X_q^T (c* - c_hat).
    """

    def __init__(self, collection: QueryCollection, loss: str, n_threads: int = 1,
                 queries: Sequence[int] | np.ndarray | None = None):
        base, k = parse_loss(loss)
        if MEASURES[base].plugin != type(self).__name__:
            raise ValueError(f"MeasurePlugin optimises the measures of svmmap.core.measures whose "
                             f"plugin it is, got {loss!r}")
        self.loss_name = loss
        self.kind, self.k = MEASURES[base].oracle, k
        #: whether the kernels' record of the kind reads graded gains (NDCG)
        self.graded = KINDS[self.kind].graded
        super().__init__(collection, n_threads, queries)

    def kernel_targets(self, collection: QueryCollection) -> np.ndarray:
        """A graded kind (NDCG): the gains 2^label - 1, labels above MAX_NDCG_LABEL refused
        (their gains, or a query's sum of them, overflow the float range); the other kinds:
        1 for a relevant document, 0 otherwise (only gain > 0 matters to them, so any grade
        works)."""
        labels = np.asarray(collection.labels)
        if not self.graded:
            return (labels > 0).astype(np.float64)
        largest = np.max(labels, initial=0.0)
        if largest > MAX_NDCG_LABEL:
            raise InputFormatError(ndcg_label_error(largest))
        return gains_of_labels(labels)

    @cached_property
    def constraint_inputs(self) -> ConstraintInputs:
        """The kernels' inputs (RankingPlugin.constraint_inputs), with the gains for a graded
        kind."""
        collection = self.collection
        gains = self._targets if self.graded else None
        return checked_constraint_inputs(collection.kernel_X, np.zeros(self.n_features),
                                         self._targets > 0, collection.ptr, gains)

    def constraint_pass(self, inputs: ConstraintInputs,
                        ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray | None]:
        """The fused pass at ``inputs.w`` (RankingPlugin)."""
        return loss_pass(inputs, self.kind, self.k, self.n_threads)

    def most_violated_coefficients(self, scores: FloatArray, targets: np.ndarray,
                                   ptr: np.ndarray) -> tuple[FloatArray, FloatArray]:
        """(c_hat, Delta) of every query's most violated ranking (RankingPlugin)."""
        return most_violated(scores, targets, ptr, self.kind, self.k, self.n_threads)

    def ranking_loss(self, scores: FloatArray, targets: np.ndarray,
                     ptr: np.ndarray) -> FloatArray:
        """Delta of the rankings by ``scores`` (RankingPlugin)."""
        return ranking_losses(scores, targets, ptr, self.kind, self.k, self.n_threads)
