"""The SVM-ROC plugin: Delta_ROC(y*, y) = 1 - ROC-area(y), the fraction of mis-ordered
(relevant, non-relevant) pairs -- the ROC-area SVM of Joachims (ICML 2005), the baseline
SVM-ROC of Yue et al. (2007), on the same joint feature map as SVM-MAP."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...kernels._roc_kernels import most_violated_roc, ranking_roc_loss, roc_pass
from .ranking import RankingPlugin

if TYPE_CHECKING:
    from ...kernels._kernel_inputs import ConstraintInputs
    from .._typing import FloatArray


class RocPlugin(RankingPlugin):
    """Structural SVM plugin optimising ROC-area.

    The separation oracle decouples over pairs (derivation in ``svmmap.kernels._roc_kernels``): the
    most violated ranking swaps relevant i and non-relevant j exactly when
    s_i - s_j < 1/2, which costs one sort and one counting sweep per query, O(m log m).
    The learners' batch hook is one fused pass of the extension over all queries: scores,
    per-query sort, this oracle and the coefficients of dpsi = X_q^T (c* - c_hat).
    """

    def constraint_pass(self, inputs: ConstraintInputs,
                        ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray | None]:
        """The fused pass at ``inputs.w`` (RankingPlugin)."""
        return roc_pass(inputs, self.n_threads)

    def most_violated_coefficients(self, scores: FloatArray, relevant: np.ndarray,
                                   ptr: np.ndarray) -> tuple[FloatArray, FloatArray]:
        """(c_hat, Delta) of every query's most violated ranking (RankingPlugin)."""
        return most_violated_roc(scores, relevant, ptr, self.n_threads)

    def ranking_loss(self, scores: FloatArray, relevant: np.ndarray,
                     ptr: np.ndarray) -> FloatArray:
        """Delta of the rankings by ``scores`` (RankingPlugin)."""
        return ranking_roc_loss(scores, relevant, ptr, self.n_threads)
