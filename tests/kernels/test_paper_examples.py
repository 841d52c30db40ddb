"""The worked example of Yue et al. (2007), Tables 1 and 2: two rankings of 8 documents with 3
relevant ones, where MAP and ROC-area disagree -- the paper's motivation for optimising MAP.

h1 ranks the relevant documents at positions 1, 6 and 7; h2 at positions 2, 3 and 8.
MAP: h1 0.59, h2 0.51.  ROC-area: h1 0.47, h2 0.53.
"""

import numpy as np
import pytest

from svmmap import metrics
from svmmap.kernels._map_kernels import most_violated_map, ranking_coefficients

RELEVANT_POSITIONS = {"h1": (1, 6, 7), "h2": (2, 3, 8)}
PUBLISHED = {"h1": (0.59, 0.47), "h2": (0.51, 0.53)}


def _ranking(name):
    """Scores 8, 7, ..., 1 down the ranking and the labels at those positions."""
    labels = np.zeros(8)
    labels[[p - 1 for p in RELEVANT_POSITIONS[name]]] = 1.0
    return np.arange(8, 0, -1, dtype=float), labels


@pytest.mark.parametrize("name", ["h1", "h2"])
def test_table_2_map_and_roc_area(name):
    scores, labels = _ranking(name)
    published_map, published_roc = PUBLISHED[name]
    assert round(metrics.mean_average_precision(scores, labels), 2) == published_map
    assert round(metrics.roc_area(scores, labels), 2) == published_roc
    _, ap = ranking_coefficients(scores, labels, np.array([0, 8]))
    assert round(ap[0], 2) == published_map


def test_map_prefers_h1_while_roc_area_prefers_h2():
    map_h1, map_h2 = (metrics.mean_average_precision(*_ranking(n)) for n in ("h1", "h2"))
    roc_h1, roc_h2 = (metrics.roc_area(*_ranking(n)) for n in ("h1", "h2"))
    assert map_h1 > map_h2 and roc_h1 < roc_h2


def test_worst_ranking_of_the_example_is_the_reversed_one():
    """With w = 0 every ranking has w.psi = 0, so the most violated constraint is the ranking
    with the largest loss: all three relevant documents at the bottom, AP = (1/6+2/7+3/8)/3."""
    _, labels = _ranking("h1")
    coef, loss = most_violated_map(np.zeros(8), labels, np.array([0, 8]))
    assert loss[0] == pytest.approx(1 - (1 / 6 + 2 / 7 + 3 / 8) / 3)
    assert np.all(coef[labels > 0] == -1 / 3) and np.all(coef[labels == 0] == 1 / 5)
