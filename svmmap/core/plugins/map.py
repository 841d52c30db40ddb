"""The SVM-MAP plugin: Delta_MAP(y*, y) = 1 - AP(y) with Algorithm 2 as separation oracle."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from ...kernels._map_kernels import (
    harmonic_numbers,
    map_pass,
    most_violated_map,
    ranking_coefficients,
)
from .ranking import RankingPlugin

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...core.collection import QueryCollection
    from ...kernels._kernel_inputs import ConstraintInputs
    from .._typing import FloatArray


class MapPlugin(RankingPlugin):
    """Structural SVM plugin optimising Mean Average Precision (Yue et al., SIGIR 2007).

    ``oracle`` selects Algorithm 2's implementation: "divide" (exact divide and conquer over
    the monotone opt_j, the default) or "scan" (the plain O(|P||N|) scan).  The learners'
    batch hook is one fused pass of the extension over all queries: scores, per-query sort,
    Algorithm 2 and the coefficients of dpsi = X_q^T (c* - c_hat).
    """

    def __init__(self, collection: QueryCollection, n_threads: int = 1,
                 oracle: str = "divide", queries: Sequence[int] | np.ndarray | None = None):
        super().__init__(collection, n_threads, queries)
        self.oracle = oracle

    def constraint_pass(self, inputs: ConstraintInputs,
                        ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray | None]:
        """The fused pass at ``inputs.w`` (RankingPlugin)."""
        return map_pass(inputs, self._harmonic, self.oracle, self.n_threads)

    @cached_property
    def _harmonic(self):
        """H_0..H_{M+1} for the largest query size M (the oracle's table), made once."""
        return harmonic_numbers(self.collection.ptr)

    def most_violated_coefficients(self, scores: FloatArray, relevant: np.ndarray,
                                   ptr: np.ndarray) -> tuple[FloatArray, FloatArray]:
        """(c_hat, Delta) of every query's most violated ranking (RankingPlugin)."""
        return most_violated_map(scores, relevant, ptr, self.oracle, self.n_threads)

    def ranking_loss(self, scores: FloatArray, relevant: np.ndarray,
                     ptr: np.ndarray) -> FloatArray:
        """Delta of the rankings by ``scores`` (RankingPlugin)."""
        _, ap = ranking_coefficients(scores, relevant, ptr, self.n_threads)
        return 1.0 - ap
