"""Stabilised oracle points of the 1-slack learner (a mixin of
svmstruct_api.learner.BaseSSVM).

Stabilised oracle points (1-slack without the constraint cache).  The plain cutting-plane
method calls the oracle at the working-set QP's solution w_QP, which at large C jumps far
from the best point seen and needs many cuts to settle (552 iterations on MQ2008 Fold1 at
C=1000).  As in OCAS (Franc & Sonnenburg, ICML 2008), the oracle is instead called at

    w_o = w_best + s (w_QP - w_best),        s in [_MIN_STEP, 1],

w_best the w of the smallest P(w) measured: s doubles after an oracle point that lowered
P_best and is quartered after one that did not, so s stays 1 (the plain method) while the
QP's solutions keep improving, as at small C.  A cut at any w is a valid cut, so D(alpha)
stays a lower bound; the relative-gap rule is checked with P_best (the w returned), and the
epsilon rule only at w_QP itself (a pass at w_o that adds nothing sends the next pass to
w_QP).  If the model is exact at w_o, P(w_o) <= (1 - s) P_best + s D by convexity, so the
gap shrinks by at least the factor 1 - s per such pass.  On the LETOR Fold1 sets this takes
a third to a quarter of the iterations at C >= 100 and about the same number at C=1
(benchmarks/results/stabilised.md).
"""

import math

#: the smallest step from w_best towards the QP's solution of a stabilised oracle point
_MIN_STEP = 0.1


class StabilisedOraclePoints:
    """Where the oracle is called (module doc): the QP's solution, or a point between it and
    the best w measured; not stabilised by default (``_stabilized``)."""

    def _oracle_margins(self, run, w_qp, step):
        """w_o.a_k of every constraint at the oracle point w_o = w_best + step (w_QP -
        w_best), from those of w_best and w_QP (K alpha) without a pass over the
        dim(w)-long rows; None where the formulation is not stabilised (at w_QP the
        working set knows them)."""
        if not self._stabilized():
            return None
        at_qp = run.working_set.margins(w_qp)
        if step >= 1.0:
            return at_qp
        if run.best_margins is None:
            run.best_margins = run.working_set.margins(run.best[1])
        return run.best_margins + step * (at_qp - run.best_margins)

    def _oracle_point(self, run):
        """Where the oracle is called: the QP's solution run.w, or with a step below 1 the
        stabilised point  w_best + step (run.w - w_best)  (module docstring)."""
        if run.step >= 1.0 or not math.isfinite(run.best[0]):
            return run.w
        best = run.best[1]
        return best + run.step * (run.w - best)

    def _adapt_step(self, run, improved, nothing_added):
        """The step towards the QP's solution of the next oracle point: doubled (up to 1)
        after an oracle point that improved P_best, quartered (down to _MIN_STEP) after
        one that did not; 1 after a pass that added nothing (the epsilon rule is only
        decided at the QP's solution).  Always 1 where the formulation is not stabilised."""
        if not self._stabilized() or nothing_added:
            run.step = 1.0
        elif improved:
            run.step = min(1.0, 2.0 * run.step)
        else:
            run.step = max(_MIN_STEP, run.step / 4.0)

    def _stabilized(self):
        """Whether oracle points are stabilised (module docstring); not by default."""
        return False
