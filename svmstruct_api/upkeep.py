"""Keeping the working set small: pruning idle constraints and aggregating a large
single-group working set (a mixin of svmstruct_api.learner.BaseSSVM).

The working set's size (1-slack).  Every iteration passes twice over the working set's rows
(a new Gram row; w from the multipliers), K rows of p numbers each.  Two things keep K p
small where it would dominate: the rows are kept as the documents' coefficients u of each
cut X^T u where the documents are at most 3/4 of the features (``_row_basis``;
svmstruct_api.qp.WorkingSet's ``basis``), and once the rows hold more than
_AGGREGATE_NUMBERS numbers, the supporting cuts but the _AGGREGATE_KEEP of largest
multiplier are replaced by their multiplier-weighted mean, which keeps the QP's optimum
(``_aggregate``, WorkingSet.aggregate).
"""

import numpy as np

#: idle constraints are removed once they are at least this fraction (1/_PRUNE_BATCH) of
#: the working set (WorkingSetUpkeep._prune)
_PRUNE_BATCH = 8
#: a single-group working set whose rows hold more numbers than this (40 MB of float64) is
#: aggregated (WorkingSetUpkeep._aggregate) ...
_AGGREGATE_NUMBERS = 5_000_000
#: ... keeping apart the constraints of the largest multipliers, this many; and never one of
#: fewer constraints than this (a model of a few cuts can take far more iterations: a
#: 30-query problem aggregated at 8 constraints, 3 kept, took 341,902 iterations against 89)
_AGGREGATE_KEEP = 10
_AGGREGATE_MIN = 60


class WorkingSetUpkeep:
    """Pruning and aggregation of the working set after each QP solve (module doc)."""

    prune_after: "int | str | None"

    def _prune_horizon(self, run):
        """The idle solves after which a constraint is dropped in this fit: ``prune_after``
        (None: never)."""
        return self.prune_after

    def _prune(self, run, alpha):
        """Update the idle counts run.idle (new constraints start at 0) and drop the
        constraints idle for ``_prune_horizon`` solves (run.idle and run.best_margins follow
        the working set's new order).

        Removal moves dim(w)-long rows and reorders the Gram matrix, so it waits until at
        least 1/_PRUNE_BATCH of the set (or 1 constraint) is due: a constraint may stay a few
        solves longer than that, which leaves the QP's optimum unchanged (its
        multiplier is 0).  A large working set is first aggregated (_aggregate)."""
        working_set = run.working_set
        idle = np.concatenate([run.idle, np.zeros(len(alpha) - len(run.idle), dtype=np.int64)])
        run.idle = idle = np.where(alpha > 1e-10 * np.max(working_set.group_bounds), 0,
                                   idle + 1)
        if self._aggregate(run, alpha):
            idle = run.idle
        horizon = self._prune_horizon(run)
        if horizon is None:
            return
        keep = idle < horizon
        if np.count_nonzero(~keep) < max(1, len(keep) // _PRUNE_BATCH):
            return
        order = working_set.remove(keep)
        run.idle = idle[order]
        if run.best_margins is not None:
            run.best_margins = run.best_margins[order]

    def _aggregate(self, run, alpha):
        """Aggregate a large single-group working set (WorkingSet.aggregate): once its rows
        hold more than _AGGREGATE_NUMBERS numbers (and it has more than _AGGREGATE_MIN
        constraints), every constraint with alpha > 0 except
        the _AGGREGATE_KEEP of largest alpha becomes one.  The QP's optimum and w stay where
        they are; the passes over the rows that every iteration makes (a Gram row, w) then
        run over about a hundred rows instead of the hundreds of supporting cuts the 1-slack
        model gathers at large C (on the 5 10^4 x 10^5 sparse set at C = 1000: 342 at the
        end), for some more iterations (benchmarks/results/aggregation.md).  Return whether
        it aggregated (run.idle and run.best_margins then follow the new order)."""
        working_set = run.working_set
        if len(working_set.group_bounds) != 1 or len(alpha) <= _AGGREGATE_MIN or \
                len(alpha) * working_set.row_length <= _AGGREGATE_NUMBERS:
            return False
        support = np.flatnonzero(alpha > 0)
        if len(support) < _AGGREGATE_KEEP + 2:
            return False
        chosen = np.sort(support[np.argsort(alpha[support], kind="stable")]
                         [:len(support) - _AGGREGATE_KEEP])
        margins = run.best_margins
        if margins is not None:
            margins = margins.copy()
            margins[chosen[0]] = alpha[chosen] @ margins[chosen] / alpha[chosen].sum()
        order = working_set.aggregate(chosen)
        idle = run.idle.copy()
        idle[chosen[0]] = 0
        run.idle = idle[order]
        if margins is not None:
            run.best_margins = margins[order]
        return True
