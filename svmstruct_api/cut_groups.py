"""Multi-cut 1-slack: the examples dealt into groups, one averaged cut per group and oracle
pass (a mixin of svmstruct_api.learner.OneSlackSSVM).

The 1-slack formulation's one slack xi (bound C) is split into G slacks xi_g, one per group
g of examples, with bounds C_g = sum_{i in g} b_i:

    min_w  1/2 |w|^2 + sum_g C_g xi_g
    s.t.   w.(sum_{i in g} b_i/C_g dpsi_i(y_i')) >= sum_{i in g} b_i/C_g Delta_i(y_i') - xi_g
           for every group g and every choice of outputs y_i' of its examples.

At any w the best xi_g is the group's sum_{i in g} b_i/C_g max(0, H_i(w)) (the max of a sum of
independent terms is the sum of the maxes), so the objective is the same P(w) = 1/2 |w|^2 +
sum_i b_i H_i(w) as 1-slack's (G = 1) and n-slack's (G = n), with the same optimum and the
same certificate: the dual objective of every working-set QP bounds P* from below.  One
oracle pass gives every group's cut from the same per-example constraints (its documents'
coefficients summed per group: no pass over X per group), and the cuts of the groups whose
excess violation passes the threshold join the working set.

Why.  A working-set model of 1-slack cuts is a single max over averaged cuts, and in R^p the
optimum needs up to p + 1 of them, each costing an oracle pass: at the certified gap of 1e-6
the 1-slack loop takes 560 / 1,058 passes on issue 33's ltr_like set (300 features, 200
queries) at C = 100 / 1000, where svm_rank stops after 68 / 152 at its own, 1,000 times
looser, gap.  The G-slack model is a sum of G maxes, which holds every combination of the
groups' cuts: with G = 16 the same fits took 103 / 154 passes (small_dense: 115 -> 44 at
C = 100, 227 -> 65 at C = 1000; MQ2008 Fold1 85 -> 36 and 176 -> 51), the oracle's time
falls with them, and the QP's (faces of rank + G variables, the active set's MAX_GROUPS)
grows less than that: with the active set's cheaper steps, svmmap_learn took 0.46-0.87x
the time of main before them (a5f4736) on issue 33's dense sets and on every LETOR Fold1
cell (benchmarks/results/issue33_cut_groups.md).

Pruning.  A pass adds up to G cuts, so the plain 1-slack's horizon (a constraint dropped
after 10 solves at alpha = 0) keeps up to 10 G idle cuts: on ltr_like:0 at C = 1000 a
working set of 406 constraints on average for faces of 206.  Idle cuts cost in every step
of the QP that prices the working set (the exact gradient reads K entries of each face
row), in every Gram row, and they re-enter and leave the face again (5,007 entries and
4,720 deletions in that fit's 154 solves, about two per cut).  Dropped after
GROUPED_PRUNE_AFTER = 5 idle solves instead (OneSlackSSVM's ``prune_after="auto"``), with
G = 24 instead of 16 to win back the passes that earlier pruning costs.  In-process fits
alternating with (G, prune_after) = (16, 10), medians of 3 rounds: ltr_like:0 105 -> 86
passes and 0.80x the time at C = 100, 156 -> 141 and 0.85x at C = 1000; ltr_like:1 and :2
at C = 1000 150 -> 126 and 155 -> 126, 0.81x and 0.87x; small_dense 0.74-0.75x; MQ2008 Fold1
at C = 1000 0.80x, OHSUMED 0.94x (at C = 1, 18 passes against 15: 0.03 s fits); the long
queries of Cranfield's retrieval-run features (225 queries of 150-1,260 documents, the
oracle 0.9 of the fit) 36 -> 33 passes at C = 100 (0.95x), 47 -> 40 at C = 1000 (0.89x),
20 -> 21 at C = 1 (0.99x).  A horizon of 4 was a little faster where the QP dominates
(ltr_like 0.76-0.86x) but took 39 passes on Cranfield at C = 100 (1.12x the time of
(16, 10) there); G = 16 pruned after 3 took 192 passes on ltr_like:0 at C = 1000; G = 24
pruned after 10 cost 1.08-1.11x the time (benchmarks/results/vs_svm_rank_issue33_s9.md
has the comparison with svm_rank and with main before).

When.  Cut groups need the per-example constraints of a ConstraintBatch, or a model that
sums them per group where they are (a distributed model told the groups by
``StructuredModel.sum_by_groups`` returns GroupedSums: svmmap.dask), a w of at most
_MAX_FEATURES components, and no constraint cache (whose cuts are formed whole); elsewhere
G = 1, the plain 1-slack.  Examples are dealt round-robin (example i to group i mod G), so
every group holds queries from all over the collection.

Why at most _MAX_FEATURES.  A wide w needs many cuts whatever their grouping, and G of them
a pass make the working set's QP, not the passes, the cost: on issue 33's 5 10^4 x 10^5
sparse set at C = 1000 the plain 1-slack (its cuts in the documents' basis) converges in
954 passes and 14.2 s, G = 4 in 657 passes and 95 s (QP 86 s), and G = 16 had not
converged after 205 passes and 120 s (benchmarks/results/solver_speed_cut_groups_wide_G4.md,
_G16.md).  Cut groups keep their rows as dim(w)-long vectors, and the learner chooses the
documents' basis (OneSlackSSVM._row_basis) only for the plain 1-slack: each of the G cuts
of a pass would cost a product with X there (B a_g), on a w this narrow more than it
saves.  Where the basis had been taken for its size (698 documents, 1,000 dense features),
the grouped rows took 39 / 64 passes and 0.31-0.33x the time of the plain basis's 210 / 444
at C = 100 / 1000 (benchmarks/results/solver_speed_basis_or_groups_small_dense_1000_40_1.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .plugin import GroupedSums

#: the number of groups by default (where cut groups apply: module doc), at most one per
#: example (OneSlackSSVM's ``cut_groups``)
CUT_GROUPS = 24
#: the idle solves after which a constraint is dropped with cut groups (module doc,
#: "Pruning"; OneSlackSSVM's ``prune_after="auto"``)
GROUPED_PRUNE_AFTER = 5
#: cut groups only for w of at most this many components (module doc, "When")
_MAX_FEATURES = 1000


class CutGroups:
    """The groups of the multi-cut 1-slack formulation (module doc): which group each
    example's slack joins, and the cuts of one oracle pass."""

    cache_size: int
    cut_groups: int

    def _example_groups(self, model: Any) -> np.ndarray | None:
        """The cut group of every example (example i in group i mod G, G the learner's
        ``cut_groups`` or the number of examples if smaller), or None for the plain
        1-slack (module doc, "When").  A model whose batches are not per example is told
        the groups and must agree to sum its batches by them."""
        n_groups = min(self.cut_groups, model.n_examples)
        if self.cache_size or model.n_features > _MAX_FEATURES or n_groups < 2:
            return None
        groups = np.arange(model.n_examples) % n_groups
        if not model.per_example_batches and not model.sum_by_groups(groups):
            return None
        return groups

    def _announce_groups(self, run: Any, model: Any) -> None:
        """At the start of a fit: run.group_weights, b_i/C_g of every example i (g its
        group), and the model told the group sums it will be asked for
        (StructuredModel.group_sums_in_pass, where the model has it: none without cut
        groups or where the model sums its batches by groups itself)."""
        groups, n_groups = run.example_groups, len(run.working_set.group_bounds)
        run.group_weights = None
        if groups is not None and model.per_example_batches:
            run.group_weights = run.bounds.values / run.working_set.group_bounds[groups]
        tell = getattr(model, "group_sums_in_pass", None)  # a model need not subclass
        if tell is None:
            return
        if run.group_weights is None:
            tell(None, None, 0)
        else:
            tell(run.group_weights, groups, n_groups)

    def _grouped_cuts(self, run: Any, batch: Any, threshold: float) -> tuple[Any, float]:
        """(the cuts of the groups whose excess violation over their slack passes
        ``threshold``, or None; the largest excess): group g's cut is
        (sum_{i in g} b_i/C_g dpsi_i, sum_{i in g} b_i/C_g Delta_i), its violation at w
        sum_{i in g} b_i/C_g max(0, H_i(w))."""
        if isinstance(batch, GroupedSums):  # the sums of a distributed model
            losses = batch.loss / batch.counts
            violation = batch.violations(run.w) / batch.counts
        else:
            group, weights = run.example_groups, run.group_weights
            n_groups = len(run.working_set.group_bounds)
            violation = np.bincount(
                group, weights * np.maximum(batch.violations(run.w), 0.0), n_groups)
        excess = violation - run.working_set.slacks(run.w, run.oracle_margins)
        chosen = np.flatnonzero(excess > threshold)
        if len(chosen) == 0:
            return None, float(excess.max())
        if isinstance(batch, GroupedSums):
            vectors = batch.dpsi[chosen] / batch.counts[chosen, None]
        else:  # every group's sums in one pass over the rows, the chosen ones kept
            losses, vectors = batch.group_sums(weights, group, n_groups)
            vectors = vectors[chosen]
        return (chosen, vectors, losses[chosen]), float(excess.max())
