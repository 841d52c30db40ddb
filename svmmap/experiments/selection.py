"""Model selection: train a method for every value of its grid on the training queries and
keep the model with the highest validation MAP (LETOR convention, :mod:`svmmap.metrics`).
Ties go to the earliest value of the grid (grids are listed in increasing capacity, so the
simplest model wins).  A grid value whose training fails in the QP solver
(:class:`svmstruct_api.qp.QPError`) is skipped and recorded in ``Selected.failed``, so one
numerically hard problem does not end a long experiment; the tables report such failures."""

import time
import warnings
from dataclasses import dataclass

from svmstruct_api.qp import QPError

from .. import metrics
from .registry import predict


@dataclass
class Selected:
    """The outcome of :func:`select`: the chosen ``value`` and its fitted ``model``,
    validation MAP of every grid value, and the wall time of the whole grid (seconds)."""

    method: object
    value: object
    model: object
    vali_map: dict
    seconds: float
    failed: list

    def scores(self, split):
        return predict(self.model, split)


def select(method, train, vali):
    """Fit ``method`` on ``train`` for each grid value; pick by MAP on ``vali`` (Splits)."""
    start = time.perf_counter()
    best, vali_map, failed = None, {}, []
    grid = method.grid_for(train.X.shape[1])
    for value in grid:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # queries without constraints are skipped
                model = method.factory(value).fit(*train.arrays)
        except QPError as err:
            failed.append((value, str(err)))
            continue
        vali_map[value] = metrics.mean_average_precision(
            predict(model, vali), vali.y, vali.qid)
        if best is None or vali_map[value] > vali_map[best[0]]:
            best = (value, model)
    if best is None:
        raise QPError(f"{method.label}: training failed for every grid value; first: "
                      f"{failed[0][0]}: {failed[0][1]}")
    return Selected(method, best[0], best[1], vali_map, time.perf_counter() - start, failed)
