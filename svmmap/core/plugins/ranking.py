"""What every ranking loss shares: the pairwise joint feature map of Yue et al. (2007),

    psi(x, y) = 1/(|P||N|) sum_{i in P} sum_{j in N} y_ij (phi_i - phi_j) = X^T c(y),

and the bookkeeping that turns per-document psi coefficients into the constraint vectors
dpsi_q = psi(x_q, y*_q) - psi(x_q, y_hat_q) = X_q^T (c*_q - c_hat_q) of every query at once.
An output y of one query is a ranking: an array of the query's document positions, top first.
"""

from __future__ import annotations

from abc import abstractmethod
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from svmstruct_api.plugin import ConstraintBatch, StructuredModel

from ...kernels._csr import row_block
from ...kernels._kernel_inputs import BinnedArrays, checked_constraint_inputs, checked_pass_sums
from ...kernels._map_kernels import ranking_coefficients
from ..options import thread_count
from .rows import DocumentBasis, QueryRows

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...core.collection import QueryCollection
    from ...kernels._kernel_inputs import ConstraintInputs
    from .._typing import FloatArray


class RankingPlugin(StructuredModel):
    """Base of the ranking plugins over the trainable queries of a QueryCollection.

    ``queries``: the collection's query numbers that are the training examples (example i
    is query ``queries[i]``), or None for all of them.  The plugin reads the collection's
    arrays in place: leaving queries out copies nothing (the fused pass gives a query
    without a relevant or without a non-relevant document Delta = 0 and dpsi = 0, and the
    rows of D are addressed through ``queries``).

    A subclass supplies three kernels, each over any number of queries given by offsets and
    a per-document array of *targets* (``kernel_targets``: the relevance flags by default,
    the graded gains for the measures that need them; relevant means target > 0):
    ``most_violated_coefficients(scores, targets, ptr) -> (c_hat, Delta)``,
    ``ranking_loss(scores, targets, ptr) -> Delta`` of the rankings by score, and
    ``constraint_pass(inputs) -> (Delta, c* - c_hat, w.dpsi, sums)``, the learners' batch
    hook in one pass over the data: scores X_q w, the oracle, the coefficients c* - c_hat of
    dpsi_q = X_q^T (c* - c_hat), the margins w.dpsi_q (svmmap.core.plugins.rows: the batch's
    dpsi is a QueryRows, never a queries x features array) and, where the learner has
    announced its cut groups (``group_sums_in_pass``), their sums.  ``inputs`` are the
    collection's kernel arrays checked once, when the plugin first needs them
    (``constraint_inputs``), with the pass's w in place: the collection was checked where
    it was made, and no pass checks it again.
    """

    def __init__(self, collection: QueryCollection, n_threads: int = 1,
                 queries: Sequence[int] | np.ndarray | None = None):
        self.collection = collection
        self.n_threads = thread_count(n_threads)
        self.queries = None if queries is None else np.asarray(queries, dtype=np.intp)
        self.n_examples = collection.n_queries if self.queries is None else len(self.queries)
        self.n_features = collection.n_features
        self._targets = self.kernel_targets(collection)
        #: (weights, groups, n_groups, the kernels' PassSums) of group_sums_in_pass, or None
        self._pass_sums: tuple | None = None

    def kernel_targets(self, collection: QueryCollection) -> np.ndarray:
        """The per-document array the kernels read: the relevance flags (label > 0)."""
        return collection.relevant

    @abstractmethod
    def most_violated_coefficients(self, scores: FloatArray, targets: np.ndarray,
                                   ptr: np.ndarray) -> tuple[FloatArray, FloatArray]:
        """(c_hat (m,), Delta (n,)) of every query's most violated ranking."""

    @abstractmethod
    def ranking_loss(self, scores: FloatArray, targets: np.ndarray,
                     ptr: np.ndarray) -> FloatArray:
        """Delta(y*, y) (n,) of the rankings by ``scores`` (ties broken by position)."""

    @abstractmethod
    def constraint_pass(self, inputs: ConstraintInputs,
                        ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray | None]:
        """(Delta (N,), c* - c_hat (m,), w.dpsi (N,), the sums of ``inputs.sums`` or None) of
        every query's most violated ranking at ``inputs.w``, in one pass (``inputs``:
        ``constraint_inputs`` with w in place, and the PassSums of ``group_sums_in_pass``)."""

    @cached_property
    def constraint_inputs(self) -> ConstraintInputs:
        """The kernels' ConstraintInputs of the collection (svmmap.kernels._kernel_inputs: X as the
        kernels read it, the targets' relevance flags, ptr; w a placeholder), checked once."""
        collection = self.collection
        return checked_constraint_inputs(collection.kernel_X, np.zeros(self.n_features),
                                         self._targets > 0, collection.ptr)

    @cached_property
    def row_basis(self) -> DocumentBasis:
        """The documents' rows as the basis of the constraints (svmmap.core.plugins.rows)."""
        return DocumentBasis(self.collection.kernel_X, self.collection.ptr)

    @staticmethod
    def scoring_function(w: FloatArray) -> tuple[FloatArray, float]:
        """(coef, intercept) of the learned ranking function: w itself, no intercept."""
        return w, 0.0

    # -- batch hook used by the learners ---------------------------------------------------

    def group_sums_in_pass(self, weights: FloatArray | None, groups: np.ndarray | None,
                           n_groups: int) -> None:
        """The cut groups' sums sum_{i: groups_i = g} weights_i dpsi_i formed in every pass
        from now on (StructuredModel hook; the kernels' PassSums), while each query's rows
        are in cache from its scores: the batches' ``dpsi.group_sums(weights, groups,
        n_groups)`` then returns them instead of reading X again.  None: no sums.  Binned
        features keep their own X^T u (per-base histograms: ``combine_rows``)."""
        if weights is None or isinstance(self.collection.kernel_X, BinnedArrays):
            self._pass_sums = None
            return
        weights = np.array(weights, dtype=np.float64)
        groups = np.array(groups, dtype=np.intp)
        n_queries = self.collection.n_queries
        per_query, targets = np.zeros(n_queries), np.zeros(n_queries, dtype=np.intp)
        rows = slice(None) if self.queries is None else self.queries
        per_query[rows], targets[rows] = weights, groups
        self._pass_sums = (weights, groups, n_groups,
                           checked_pass_sums(per_query, targets, n_groups, n_queries))

    def most_violated_constraints(self, w: FloatArray) -> ConstraintBatch:
        """The most violated constraint of every training query: one fused pass of the
        extension, dpsi kept as the documents' coefficients (a QueryRows)."""
        collection = self.collection
        w = np.ascontiguousarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):  # the learner's vector, not the data
            raise ValueError(f"w has shape {w.shape}, the plugin {self.n_features} features")
        announced = self._pass_sums
        key, pass_sums = (None, None) if announced is None else (announced[:3], announced[3])
        loss, coef, margins, sums = self.constraint_pass(
            self.constraint_inputs._replace(w=w, sums=pass_sums))
        if self.queries is not None:
            loss, margins = loss[self.queries], margins[self.queries]
        rows = QueryRows(collection.kernel_X, coef, collection.ptr, collection.query_of_doc,
                         self.queries, margins=margins, at=w.copy(),
                         sums=None if sums is None or key is None else (*key, sums))
        return ConstraintBatch(loss=loss, dpsi=rows)

    # -- the SVMstruct per-example hooks ---------------------------------------------------

    def _query(self, i):
        """(features, kernel targets, one-query offsets) of example i."""
        q = i if self.queries is None else self.queries[i]
        lo, hi = self.collection.ptr[q], self.collection.ptr[q + 1]
        return row_block(self.collection.X, lo, hi), self._targets[lo:hi], np.array([0, hi - lo])

    def true_output(self, i: int) -> np.ndarray:
        """The correct ranking y*: documents by target (relevance, or gain) descending."""
        _, targets, _ = self._query(i)
        return np.argsort(-np.asarray(targets, dtype=np.float64), kind="stable")

    def psi(self, i: int, y: np.ndarray) -> FloatArray:
        """psi(x_i, y) = X_i^T c(y) of query i's ranking y."""
        X, targets, ptr = self._query(i)
        coef, _ = ranking_coefficients(_scores_of_ranking(y), targets > 0, ptr)
        return X.T @ coef

    def loss(self, i: int, y: np.ndarray) -> float:
        """Delta(y*_i, y) of query i's ranking y."""
        _, targets, ptr = self._query(i)
        return float(self.ranking_loss(_scores_of_ranking(y), targets, ptr)[0])

    def classify_example(self, i: int, w: FloatArray) -> np.ndarray:
        """Query i's ranking by score w.phi (ties: position)."""
        X, _, _ = self._query(i)
        scores = X @ w
        return np.lexsort((np.arange(len(scores)), -scores))

    def find_most_violated_constraint(self, i: int, w: FloatArray) -> np.ndarray:
        """Query i's most violated ranking at w (one query's oracle)."""
        X, targets, ptr = self._query(i)
        scores = X @ w
        coef, _ = self.most_violated_coefficients(scores, targets, ptr)
        return ranking_from_coefficients(coef, scores, targets)


def _scores_of_ranking(y):
    """Scores that reproduce ranking y (its first document scores highest)."""
    scores = np.empty(len(y))
    scores[np.asarray(y)] = -np.arange(len(y), dtype=float)
    return scores


def ranking_from_coefficients(coef: FloatArray, scores: FloatArray,
                              targets: np.ndarray) -> np.ndarray:
    """A ranking (document positions, top first) whose psi coefficients are ``coef``, and of
    those one with the largest loss.

    From c_i = (|N| - 2 a_i)/(|P||N|) and c_j = (|P| - 2 b_j)/(|P||N|) each relevant document's
    count a_i of non-relevant documents above it, and each non-relevant one's count b_j of
    relevant ones, are recovered; documents sharing a count form a run whose order psi does
    not see.  Non-relevant runs go by score; relevant runs by target ascending (the lower
    gain higher: the smallest DCG, so the largest NDCG loss of every ranking with this psi,
    which the oracle's ranking attains), then by score.  Ties: position.
    """
    targets = np.asarray(targets, dtype=np.float64)
    relevant = targets > 0
    n_rel, n_non = int(relevant.sum()), int((~relevant).sum())
    positions = np.arange(len(scores))
    rel, non = positions[relevant], positions[~relevant]
    a = np.rint((n_non - coef[rel] * n_rel * n_non) / 2).astype(np.int64)
    b = np.rint((n_rel - coef[non] * n_rel * n_non) / 2).astype(np.int64)
    rel_order = np.lexsort((rel, -scores[rel], targets[rel], a))
    non_order = np.lexsort((non, -scores[non], b))
    ranking = np.empty(len(scores), dtype=np.int64)
    ranking[a[rel_order] + np.arange(n_rel)] = rel[rel_order]
    ranking[b[non_order] + np.arange(n_non)] = non[non_order]
    return ranking
