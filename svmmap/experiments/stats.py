"""Paired comparison of two methods over queries, as in the paper's Tables 6-11.

For per-query values ``a`` (the reference method, SVM-MAP) and ``b`` (another method) on the
same queries: W = #queries with a > b, L = #queries with a < b (ties count for neither), and
the two-tailed Wilcoxon signed-rank test of the paired differences
(:func:`scipy.stats.wilcoxon`, zero differences dropped -- Wilcoxon's original treatment).
The difference is significant at confidence 0.95 when p < 0.05, marked ``**``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import stats

from .. import metrics

if TYPE_CHECKING:
    from ..core._typing import FloatArray, Vector
    from .datasets import Split

ALPHA = 0.05


@dataclass(frozen=True)
class Comparison:
    """The paired comparison of a reference method with another (module docstring): queries
    won and lost, and the Wilcoxon test's p-value."""

    wins: int
    losses: int
    p_value: float

    @property
    def significant(self) -> bool:
        """Whether the difference is significant (p < ALPHA)."""
        return self.p_value < ALPHA

    def cell(self) -> str:
        """``"W/L"``, with `` **`` appended when significant."""
        return f"{self.wins}/{self.losses}" + (" **" if self.significant else "")


def ap_by_query(scores: FloatArray, split: Split) -> dict[Any, float]:
    """``{query id: AP}`` of the ranking by ``scores`` of each query of ``split`` (LETOR
    convention), the values paired tests compare."""
    # per_query takes a measure's name as well as a function (its docstring); its hint
    # names functions only
    per_query: Any = metrics.per_query
    values = per_query("ap", scores, split.y, split.qid)
    return dict(zip(values.ids.tolist(), values.values.tolist()))


def compare(a: Vector, b: Vector) -> Comparison:
    """W/L counts and Wilcoxon p-value of paired per-query values ``a`` vs ``b``."""
    ours = np.asarray(a, dtype=np.float64)
    theirs = np.asarray(b, dtype=np.float64)
    if ours.shape != theirs.shape or ours.ndim != 1:
        raise ValueError(f"paired values need equal 1-d shapes, got {ours.shape} and "
                         f"{theirs.shape}")
    diff = ours - theirs
    wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
    if wins + losses == 0:
        return Comparison(0, 0, 1.0)
    p_value = float(stats.wilcoxon(ours, theirs, zero_method="wilcox",
                                   alternative="two-sided").pvalue)
    return Comparison(wins, losses, p_value)
