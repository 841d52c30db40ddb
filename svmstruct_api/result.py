"""What a cutting-plane fit reports (svmstruct_api.learner): one IterationRecord per
iteration and the TrainingResult of the fit.  Kept apart from the learner so that reading a
trained model back (svmmap.core.training.restore, the scoring command) does not import the
solvers."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class IterationRecord:
    """State after one cutting-plane iteration (one oracle pass and, if needed, one QP)."""

    iteration: int
    seconds: float
    #: P(w) of the w the oracle pass was made with (NaN: the constraint came from the cache)
    primal_objective: float
    #: dual objective of the QP solved at the end of the iteration
    dual_objective: float
    #: largest amount by which a constraint of the full problem was violated at w
    max_violation: float
    constraints_added: int
    working_set_size: int
    oracle_seconds: float
    qp_seconds: float
    #: the step s of the oracle point w_best + s (w_QP - w_best) (module docstring); 1: the
    #: oracle pass was at the QP's solution (or there was no oracle pass)
    oracle_step: float = 1.0


@dataclass
class TrainingResult:
    """What a cutting-plane run produced and how it got there."""

    w: np.ndarray
    formulation: str
    C: float
    epsilon: float | None
    #: "converged", "max_iter", "max_time" or "interrupted"
    status: str
    primal_objective: float
    dual_objective: float
    max_violation: float
    #: xi_g of the working set at w: one per example (n-slack) or a single one (1-slack)
    slack: np.ndarray | None
    iterations: int
    working_set_size: int
    seconds: float
    oracle_seconds: float
    qp_seconds: float
    history: list[IterationRecord] = field(default_factory=list)
    #: the relative-gap stop it was trained with (None: off)
    rel_gap: float | None = None

    @property
    def converged(self) -> bool:
        """Whether a stopping rule held (status "converged")."""
        return self.status == "converged"

    @property
    def duality_gap(self) -> float:
        """P(w) - D(alpha): an upper bound on how far P(w) is from the optimum."""
        return self.primal_objective - self.dual_objective

    @property
    def relative_gap(self) -> float:
        """(P(w) - D(alpha)) / P(w): the duality gap relative to the objective."""
        return self.duality_gap / self.primal_objective if self.primal_objective else math.nan

    def report(self) -> str:
        """The end-of-training summary, in the spirit of SVMstruct's."""
        lines = [
            f"Formulation: {self.formulation}, C = {self.C:g}, epsilon = "
            f"{'off' if self.epsilon is None else f'{self.epsilon:g}'}"
            + ("" if self.rel_gap is None else f", rel_gap = {self.rel_gap:g}"),
            f"Status: {self.status}",
            f"Runtime in seconds: {self.seconds:.3f} (oracle {self.oracle_seconds:.3f}, "
            f"QP {self.qp_seconds:.3f})",
            f"Number of iterations: {self.iterations}",
            f"Number of constraints in working set: {self.working_set_size}",
            f"Largest violation of a constraint at termination: {self.max_violation:.6g}",
            f"Primal objective value: {self.primal_objective:.10g}",
            f"Dual objective value: {self.dual_objective:.10g}",
            f"Duality gap: {self.duality_gap:.6g} (relative {self.relative_gap:.3g})",
            f"Norm of weight vector: |w| = {np.linalg.norm(self.w):.6g}",
        ]
        return "\n".join(lines)
