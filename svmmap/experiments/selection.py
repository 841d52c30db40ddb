"""Model selection: train a method for every value of its grid on the training queries and
keep the model with the highest validation MAP (LETOR convention, :mod:`svmmap.metrics`).
Ties go to the earliest value of the grid (grids are listed in increasing capacity, so the
simplest model wins)."""

import time
import warnings
from dataclasses import dataclass

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

    def scores(self, split):
        return predict(self.model, split)


def select(method, train, vali):
    """Fit ``method`` on ``train`` for each grid value; pick by MAP on ``vali`` (Splits)."""
    start = time.perf_counter()
    best, vali_map = None, {}
    for value in method.grid_for(train.X.shape[1]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # queries without constraints are skipped
            model = method.factory(value).fit(*train.arrays)
        vali_map[value] = metrics.mean_average_precision(
            predict(model, vali), vali.y, vali.qid)
        if best is None or vali_map[value] > vali_map[best[0]]:
            best = (value, model)
    return Selected(method, best[0], best[1], vali_map, time.perf_counter() - start)
