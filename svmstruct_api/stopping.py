"""The stopping rules of the cutting-plane learners and the tolerance of each working-set QP
(a mixin of svmstruct_api.learner.BaseSSVM).

The relative-gap rule (``rel_gap``).  The dual objective D(alpha) of any feasible point of a
working-set QP is a lower bound on the optimum P*, so the duality gap P(w) - D(alpha) bounds
P(w) - P* from above.  With ``rel_gap = r`` training stops at the oracle pass at w that shows

    (P(w) - D(alpha)) / P(w) <= r          (P(w) >= 0 always; P(w) = 0 counts as met),

alpha the multipliers w came from, hence P(w) - P* <= r P(w).  Without the epsilon rule
(``epsilon=None``) the constraints added are those whose excess violation exceeds 1% of
r P(w) / C, and each QP is solved to a gap of 1% of r P_best (P_best the smallest P(w)
measured): the gap of the full problem is at most C times the largest excess plus the QP's
gap (equal for 1-slack), so the rule is reached once no constraint is added.

Inexact QPs (the relative-gap rule alone).  A QP solved to 1% of r P_best at every iteration
spends most of its steps polishing a solution whose only use, far from the optimum, is where
the next cut is taken.  As svm_rank solves each QP to half the violation of the last cut
(its ``epsilon_crit``), each QP is solved to the larger of 1% of r P_best and
_QP_GAP_FRACTION (0.1) of the gap P_best - D of the last one.  The certificate is
unchanged: every multiplier vector the solvers return is feasible, so its D(alpha) is a
lower bound on P* whatever the QP's own gap, and the relative-gap rule is checked with it.
Only the "nothing added" argument above needs the strict QP: an oracle pass at the
solution of a loosely solved QP that adds nothing re-solves the same working set to 1% of
r P_best (``_Run.strict``), and the next pass, at its solution, decides.  On issue 33's
ltr_like sets (benchmarks/synthetic.py, seeds 0 and 1) at C = 1000 a fraction of 0.1 / 0.3 /
0.5 took 1058 / 1128 / 1343 and 1069 / 1134 / 1222 iterations (seed 0 solved strictly:
1042) and 7.1-7.7 / 4.5-5.8 / 3.8-4.5 s of CPU (seed 0 strictly: 8.7 s); at C = 100 0.3
took 7-17% more iterations than 0.1 and about the same time; on the sparse_graded set
(5 10^4 x 10^5, seed 0) at C = 1000, 0.1 / 0.3 took 907 / 1022 iterations (919 strictly)
and 17.4 / 19.3 s of CPU (18.4 s strictly): 0.1 is the fraction that is no slower on
either.

Either rule can be off (None), not both; with both on, training stops at the first oracle
pass where either holds (each is a stopping tolerance the caller asked for: the looser one
decides), and each QP is solved to 1% of the larger of C epsilon and r P_best.
"""

import math

#: each working-set QP is solved to a duality gap of this fraction of C * epsilon
_QP_GAP_SHARE = 0.01
#: with the relative-gap rule alone, each QP is solved to at least this fraction of the gap
#: P_best - D of the last one (module docstring, "Inexact QPs")
_QP_GAP_FRACTION = 0.1


class StoppingRules:
    """The epsilon and relative-gap rules, and the QP tolerances they imply (module doc):
    what BaseSSVM asks at every oracle pass and before every QP solve."""

    C: float
    epsilon: "float | None"
    rel_gap: "float | None"

    def _gap_met(self, primal, dual):
        """The rel_gap rule at an oracle pass: (P(w) - D) / P(w) <= rel_gap (module
        docstring); never met when rel_gap is None."""
        return self.rel_gap is not None and primal - dual <= self.rel_gap * primal

    def _threshold(self, run, primal):
        """The excess violation above which a constraint joins the working set: epsilon,
        or without it 1% of rel_gap P(w) / C (module docstring)."""
        if self.epsilon is not None:
            return self.epsilon
        return _QP_GAP_SHARE * self.rel_gap * primal / run.bounds.total

    def _qp_tolerance(self, run, primal_bound=None, strict=False):
        """The duality gap each working-set QP is solved to: 1% of the larger of C epsilon
        and rel_gap P_best, of the rules that are on (``primal_bound`` stands in for P_best
        before a P(w) is measured); with the relative-gap rule alone and unless ``strict``,
        _QP_GAP_FRACTION of P_best - D where that is larger (module docstring, "Inexact
        QPs").  Sets run.strict."""
        best = run.best[0] if math.isfinite(run.best[0]) or primal_bound is None \
            else primal_bound
        tolerance = _QP_GAP_SHARE * max(self._tolerances(best))
        loose = _QP_GAP_FRACTION * (run.best[0] - run.dual)
        run.strict = strict or self.epsilon is not None or not math.isfinite(loose) \
            or not loose > tolerance
        return tolerance if run.strict else loose

    def _tolerances(self, best):
        """C epsilon and rel_gap P_best, of the rules that are on (inf: P_best unknown)."""
        tolerances = [] if self.epsilon is None else [self.C * self.epsilon]
        if self.rel_gap is not None:
            tolerances.append(self.rel_gap * best if math.isfinite(best) else math.inf)
        return tolerances

    def _gap_target(self, best):
        """The duality gap training stops within: (1 + 1%) C epsilon (the QP's share
        included) or rel_gap P_best, the larger of the rules that are on."""
        tolerances = self._tolerances(best)
        if self.epsilon is not None:
            tolerances[0] *= 1.0 + _QP_GAP_SHARE
        return max(tolerances)
