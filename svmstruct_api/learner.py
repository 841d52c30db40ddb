"""Cutting-plane training of a structural SVM with margin rescaling.

Both formulations solve Optimisation Problem 1 of Yue et al. (2007),

    min_w  1/2 |w|^2 + C/n sum_i xi_i   s.t.  w.dpsi_i(y) >= Delta(y_i, y) - xi_i  for all i, y,

whose exact objective at any w is the *primal objective*

    P(w) = 1/2 |w|^2 + C/n sum_i max(0, max_y Delta(y_i, y) - w.dpsi_i(y))

(computed from one pass of the separation oracle), bounded below by the dual objective of
every working-set QP.

- ``"n-slack"`` is the paper's Algorithm 1: one working set per example; an example's most
  violated constraint joins its set when it is violated by more than epsilon (H_i(w) > xi_i +
  epsilon).  The QP is re-solved once per pass over all examples (SVMstruct's ``-k`` set to n),
  and training stops when a full pass adds nothing.
- ``"1-slack"`` is the formulation of Joachims, Finley & Yu (2009): a single slack xi shared by
  the averaged constraints  w.(1/n sum_i dpsi_i) >= 1/n sum_i Delta_i - xi;  training stops when
  the most violated one is violated by at most epsilon.

At termination both satisfy every constraint of the full problem up to epsilon, so
P(w) <= P* + C epsilon + delta, delta the duality gap the last working-set QP was solved to
(1% of C epsilon, see ``qp_solver``); the two reach the same optimum.
"""

import math
import time
from dataclasses import dataclass, field

import numpy as np

from .cache import ConstraintCache
from .options import FORMULATIONS, QP_SOLVERS
from .qp import WorkingSet

#: each working-set QP is solved to a duality gap of this fraction of C * epsilon
_QP_GAP_SHARE = 0.01


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


@dataclass
class TrainingResult:
    """What a cutting-plane run produced and how it got there."""

    w: np.ndarray
    formulation: str
    C: float
    epsilon: float
    #: "converged", "max_iter", "max_time" or "interrupted"
    status: str
    primal_objective: float
    dual_objective: float
    max_violation: float
    #: xi_g of the working set at w: one per example (n-slack) or a single one (1-slack)
    slack: np.ndarray
    iterations: int
    working_set_size: int
    seconds: float
    oracle_seconds: float
    qp_seconds: float
    history: list = field(default_factory=list)

    @property
    def converged(self):
        return self.status == "converged"

    @property
    def duality_gap(self):
        """P(w) - D(alpha): an upper bound on how far P(w) is from the optimum."""
        return self.primal_objective - self.dual_objective

    def report(self):
        """The end-of-training summary, in the spirit of SVMstruct's."""
        lines = [
            f"Formulation: {self.formulation}, C = {self.C:g}, epsilon = {self.epsilon:g}",
            f"Status: {self.status}",
            f"Runtime in seconds: {self.seconds:.3f} (oracle {self.oracle_seconds:.3f}, "
            f"QP {self.qp_seconds:.3f})",
            f"Number of iterations: {self.iterations}",
            f"Number of constraints in working set: {self.working_set_size}",
            f"Largest violation of a constraint at termination: {self.max_violation:.6g}",
            f"Primal objective value: {self.primal_objective:.10g}",
            f"Dual objective value: {self.dual_objective:.10g}",
            f"Duality gap: {self.duality_gap:.6g}",
            f"Norm of weight vector: |w| = {np.linalg.norm(self.w):.6g}",
        ]
        return "\n".join(lines)


class CuttingPlaneLearner:
    """Train a StructuredModel by the cutting-plane method.

    Parameters
    ----------
    C : float > 0
        Regularisation trade-off; the slack term is C/n sum_i xi_i.
    epsilon : float > 0
        Tolerance on constraint violation (on the scale of the loss).
    formulation : "n-slack" or "1-slack"
    max_iter, max_time : optional limits (iterations, seconds); reaching one stops training
        with the best w seen so far and status "max_iter" / "max_time" (the time limit is
        checked between iterations, after at least one).
    log : optional callable taking one string, called once per iteration with a progress line.
    prune_after : drop a constraint whose multiplier has been 0 for this many consecutive
        QP solves (as SVMstruct does); None keeps every constraint.  Dropping inactive
        constraints leaves the current QP optimum unchanged; a dropped one that matters again
        is found again by the oracle.
    qp_solver : "smo" (default) or "cvxopt": see svmstruct_api.qp.WorkingSet.  SMO solves
        each QP to a duality gap of 1% of C * epsilon (cvxopt to its 1e-9 targets), so at
        termination P(w) <= P* + 1.01 C epsilon.
    cache_size : 1-slack only: remember each example's last ``cache_size`` most violated
        outputs and add the constraint they form, without an oracle pass, while it is
        violated by more than epsilon (SVMstruct's ``-w 4``; svmstruct_api.cache).  0: off.
    """

    def __init__(self, C=1.0, epsilon=1e-3, formulation="1-slack", max_iter=None,
                 max_time=None, log=None, prune_after=50, qp_solver="smo", cache_size=0):
        if not (isinstance(C, (int, float)) and math.isfinite(C) and C > 0):
            raise ValueError(f"C must be a positive finite number, got {C!r}")
        if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}")
        if formulation not in FORMULATIONS:
            raise ValueError(f"formulation must be one of {FORMULATIONS}, got {formulation!r}")
        self.C = float(C)
        self.epsilon = float(epsilon)
        self.formulation = formulation
        self.max_iter = max_iter
        self.max_time = max_time
        self.log = log
        self.prune_after = prune_after
        if qp_solver not in QP_SOLVERS:
            raise ValueError(f"qp_solver must be one of {QP_SOLVERS}, got {qp_solver!r}")
        self.qp_solver = qp_solver
        if cache_size and formulation != "1-slack":
            raise ValueError("the constraint cache is for the 1-slack formulation")
        if not (isinstance(cache_size, (int, np.integer)) and cache_size >= 0):
            raise ValueError(f"cache_size must be a non-negative integer, got {cache_size!r}")
        self.cache_size = int(cache_size)

    def fit(self, model):
        """Run the cutting-plane loop on ``model`` (a StructuredModel); return TrainingResult.

        Ctrl-C (KeyboardInterrupt) stops after the step in progress and returns the best w
        found so far with status "interrupted".
        """
        n = model.n_examples
        if n == 0:
            raise ValueError("no training example carries a constraint")
        reg = np.asarray(model.regularized, dtype=bool)
        one_slack = self.formulation == "1-slack"
        bounds = [self.C] if one_slack else np.full(n, self.C / n)
        working_set = WorkingSet(model.n_features, bounds, reg, solver=self.qp_solver)
        w = np.zeros(model.n_features)
        dual = 0.0
        history = []
        cache = ConstraintCache(n, model.n_features, self.cache_size) \
            if self.cache_size else None
        idle = np.zeros(0, dtype=np.int64)  # consecutive solves each constraint had alpha = 0
        start = time.perf_counter()
        oracle_total = qp_total = 0.0
        best = (math.inf, w, math.inf)
        status = "max_iter"
        iteration = 0
        try:
            while self.max_iter is None or iteration < self.max_iter:
                if (self.max_time is not None and iteration > 0
                        and time.perf_counter() - start > self.max_time):
                    status = "max_time"
                    break
                iteration += 1
                tick = time.perf_counter()
                new = self._cached_constraint(cache, w, working_set)
                if new is not None:  # no oracle pass: P(w) is not known this iteration
                    primal = max_violation = math.nan
                    oracle_seconds = time.perf_counter() - tick
                else:
                    batch = model.most_violated_constraints(w)
                    if cache is not None:
                        cache.add(batch)
                    violations = np.maximum(batch.violations(w), 0.0)
                    oracle_seconds = time.perf_counter() - tick
                    primal = 0.5 * w[reg] @ w[reg] + self.C / n * violations.sum()
                if not math.isnan(primal) and one_slack:
                    excess = violations.mean() - working_set.slacks(w)[0]
                    new = ([0], batch.dpsi.mean(axis=0, keepdims=True), [batch.loss.mean()]) \
                        if excess > self.epsilon else None
                elif not math.isnan(primal):
                    excess_each = violations - working_set.slacks(w)
                    excess = excess_each.max()
                    chosen = np.flatnonzero(excess_each > self.epsilon)
                    new = (chosen, batch.dpsi[chosen], batch.loss[chosen]) if len(chosen) else None
                if not math.isnan(primal):
                    max_violation = max(float(excess), 0.0)
                    if primal < best[0] or new is None:
                        best = (primal, w, max_violation)
                qp_seconds = 0.0
                if new is not None:
                    working_set.add(*new)
                    tick = time.perf_counter()
                    solution = working_set.solve(_QP_GAP_SHARE * self.C * self.epsilon)
                    qp_seconds = time.perf_counter() - tick
                    w, dual = solution.w, solution.dual_objective
                    idle = self._prune(working_set, solution.alpha, idle, bounds)
                record = IterationRecord(
                    iteration=iteration, seconds=time.perf_counter() - start,
                    primal_objective=primal, dual_objective=dual, max_violation=max_violation,
                    constraints_added=0 if new is None else len(new[2]),
                    working_set_size=len(working_set), oracle_seconds=oracle_seconds,
                    qp_seconds=qp_seconds)
                history.append(record)
                oracle_total += oracle_seconds
                qp_total += qp_seconds
                if self.log is not None:
                    self.log(_progress_line(record))
                if new is None:
                    status = "converged"
                    break
        except KeyboardInterrupt:
            status = "interrupted"
        if history:
            final_primal, final_w, final_violation = best  # the last w when converged
        else:  # stopped before the first oracle pass: nothing is known about w = 0
            final_primal, final_w, final_violation = math.nan, w, math.nan
        return TrainingResult(
            w=np.array(final_w, copy=True), formulation=self.formulation, C=self.C,
            epsilon=self.epsilon, status=status, primal_objective=float(final_primal),
            dual_objective=float(dual), max_violation=float(final_violation),
            slack=working_set.slacks(final_w),
            iterations=iteration, working_set_size=len(working_set),
            seconds=time.perf_counter() - start, oracle_seconds=oracle_total,
            qp_seconds=qp_total, history=history)

    def _cached_constraint(self, cache, w, working_set):
        """The 1-slack constraint the cache offers at w, if violated by more than epsilon
        (see svmstruct_api.cache); None sends the iteration to the oracle."""
        if cache is None or len(cache) == 0:
            return None
        cached = cache.most_violated(w)
        excess = np.maximum(cached.violations(w), 0.0).mean() - working_set.slacks(w)[0]
        if excess <= self.epsilon:
            return None
        return [0], cached.dpsi.mean(axis=0, keepdims=True), [cached.loss.mean()]

    def _prune(self, working_set, alpha, idle, bounds):
        """Update the idle counts (new constraints start at 0) and drop the constraints idle
        for ``prune_after`` solves; return the counts of those kept."""
        idle = np.concatenate([idle, np.zeros(len(alpha) - len(idle), dtype=np.int64)])
        idle = np.where(alpha > 1e-10 * np.max(bounds), 0, idle + 1)
        if self.prune_after is None:
            return idle
        keep = idle < self.prune_after
        if not keep.all():
            working_set.remove(keep)
        return idle[keep]


def _progress_line(record):
    primal = "from cache" if math.isnan(record.primal_objective) else \
        f"{record.primal_objective:.6g}"
    return (f"iter {record.iteration:4d}  primal {primal}  "
            f"dual {record.dual_objective:.6g}  violation {record.max_violation:.3g}  "
            f"+{record.constraints_added} -> {record.working_set_size} constraints  "
            f"({record.seconds:.2f}s)")
