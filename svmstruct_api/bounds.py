"""The example bounds of the slack term (svmstruct_api.learner, "Example bounds"): every
example i carries the bound b_i of its slack, sum_i b_i xi_i in the objective."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ExampleBounds"]


@dataclass(frozen=True)
class ExampleBounds:
    """The bound b_i of every example's slack and their total (svmstruct_api.learner,
    "Example bounds").

    ``uniform``: every b_i equals total / n (then sums and averages take the plain form).
    """

    values: np.ndarray
    total: float
    uniform: bool

    def slack_cost(self, slacks: np.ndarray) -> float:
        """sum_i b_i xi_i."""
        return self.values[0] * slacks.sum() if self.uniform else self.values @ slacks

    def average(self, rows: Any) -> Any:
        """sum_i (b_i / total) rows_i, over the first axis."""
        return rows.mean(axis=0) if self.uniform else (self.values / self.total) @ rows
