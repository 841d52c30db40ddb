"""Paired comparison of two methods over queries, as in the paper's Tables 6-11.

For per-query values ``a`` (the reference method, SVM-MAP) and ``b`` (another method) on the
same queries: W = #queries with a > b, L = #queries with a < b (ties count for neither), and
the two-tailed Wilcoxon signed-rank test of the paired differences
(:func:`scipy.stats.wilcoxon`, zero differences dropped -- Wilcoxon's original treatment).
The difference is significant at confidence 0.95 when p < 0.05, marked ``**``.
"""

from dataclasses import dataclass

import numpy as np
from scipy import stats

ALPHA = 0.05


@dataclass(frozen=True)
class Comparison:
    wins: int
    losses: int
    p_value: float

    @property
    def significant(self):
        return self.p_value < ALPHA

    def cell(self):
        """``"W/L"``, with `` **`` appended when significant."""
        return f"{self.wins}/{self.losses}" + (" **" if self.significant else "")


def compare(a, b):
    """W/L counts and Wilcoxon p-value of paired per-query values ``a`` vs ``b``."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired values need equal 1-d shapes, got {a.shape} and {b.shape}")
    diff = a - b
    wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
    if wins + losses == 0:
        return Comparison(0, 0, 1.0)
    p_value = float(stats.wilcoxon(a, b, zero_method="wilcox", alternative="two-sided").pvalue)
    return Comparison(wins, losses, p_value)
