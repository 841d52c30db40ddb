"""Model selection: train a method for every value of its grid on the training queries and
keep the model with the highest validation MAP (LETOR convention, :mod:`svmmap.metrics`), or
for an SVM trained for another measure (``Method.measure``: ndcg@10, mrr, ...) that measure
(svmmap.selection.validation_measure).  Ties go to the earliest value of the grid (grids are
listed in increasing capacity, so the simplest model wins): svmmap.selection.choose, the tie
rule of ``svmmap_learn -c C1,C2,...``, without its tolerance.  A grid value whose training
fails in the QP solver (:class:`svmstruct_api.qp.QPError`) is skipped and recorded in
``Selected.failed``, so one numerically hard problem does not end a long experiment; the
tables report such failures."""

import time
import warnings
from dataclasses import dataclass

import numpy as np

from svmstruct_api.qp import QPError

from ..selection import choose, validation_measure
from .registry import predict


@dataclass
class Selected:
    """The outcome of :func:`select`: the ``grid`` tried, the chosen ``value`` and its fitted
    ``model``, the validation measure (``method.measure``, MAP by default) of every grid
    value in ``vali_map``, and the wall time of the whole grid
    (seconds)."""

    method: object
    grid: list
    value: object
    model: object
    vali_map: dict
    seconds: float
    failed: list

    def scores(self, split):
        return predict(self.model, split)

    @property
    def end(self):
        """``"low"`` / ``"high"`` when the chosen value is the grid's smallest / largest,
        else None (also for a grid of features, which has no order of capacity)."""
        if self.method.param == "feature":
            return None
        if self.value == min(self.grid):
            return "low"
        if self.value == max(self.grid):
            return "high"
        return None


def _fit(method, value, train):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # queries without constraints are skipped
        return method.factory(value).fit(*train.arrays)


def same_ranking(a, b, qid):
    """True when scores ``a`` and ``b`` order the documents of every query identically
    (ties included; scores are compared after removing their mean, scaling by the largest
    remaining magnitude and rounding to 1e-9, so that a rescaled weight vector or a shifted
    bias counts as the same ranking)."""
    def groups(scores):  # dense rank of each document's score group, queries in qid order
        scores = np.asarray(scores, dtype=np.float64)
        scores = scores - scores.mean()
        scale = np.abs(scores).max(initial=0.0) or 1.0
        rounded = np.round(scores / scale, 9)
        order = np.lexsort((-rounded, qid))
        new_group = np.r_[True, (rounded[order][1:] != rounded[order][:-1])
                          | (qid[order][1:] != qid[order][:-1])]
        dense = np.empty(len(order), dtype=np.int64)
        dense[order] = np.cumsum(new_group)
        return dense

    return np.array_equal(groups(a), groups(b))


def low_end_stable(selected, train, split, factor=100.0):
    """For a choice at the low end of a C grid: True when the model trained with C / factor
    ranks ``split`` exactly as the chosen one (the grid has reached the C -> 0 limit);
    None when the choice is not at the low end or the hyper-parameter is not C."""
    if selected.method.param != "C" or selected.end != "low":
        return None
    smaller = _fit(selected.method, selected.value / factor, train)
    return same_ranking(selected.scores(split), predict(smaller, split), split.qid)


def select(method, train, vali):
    """Fit ``method`` on ``train`` for each grid value; pick by the method's validation
    measure (MAP unless it is an SVM trained for another) on ``vali`` (Splits)."""
    start = time.perf_counter()
    measure = validation_measure(method.measure)
    fitted, vali_map, failed = [], {}, []
    grid = method.grid_for(train.X.shape[1])
    for value in grid:
        try:
            model = _fit(method, value, train)
        except QPError as err:
            failed.append((value, str(err)))
            continue
        vali_map[value] = measure(predict(model, vali), vali.y, vali.qid)
        fitted.append((value, model))
    if not fitted:
        raise QPError(f"{method.label}: training failed for every grid value; first: "
                      f"{failed[0][0]}: {failed[0][1]}")
    value, model = fitted[choose([vali_map[v] for v, _ in fitted])]
    return Selected(method, grid, value, model, vali_map, time.perf_counter() - start,
                    failed)
