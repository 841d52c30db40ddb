"""Aggregating working-set constraints (WorkingSet.aggregate, BaseSSVM._aggregate): the QP's
optimum is kept, and training that aggregates reaches the optimum of training that does
not."""

import numpy as np
import pytest

from svmmap.core.collection import QueryCollection
from svmmap.core.plugins import MapPlugin
from svmstruct_api import upkeep as upkeep_module
from svmstruct_api.learner import OneSlackSSVM, make_learner
from svmstruct_api.qp import WorkingSet

from conftest import random_collection


def _solved_working_set(seed, k=40, d=12):
    rng = np.random.default_rng(seed)
    ws = WorkingSet(d, [3.0])
    ws.add(np.zeros(k, dtype=int), rng.normal(size=(k, d)), rng.uniform(0.5, 2.0, k))
    return ws, ws.solve()


@pytest.mark.parametrize("seed", range(5))
def test_aggregating_keeps_the_qps_optimum(seed):
    """The aggregate of the supporting constraints but one is their alpha-weighted mean
    (row, loss and Gram entries as if formed from that row); w and the dual objective of
    the multipliers are unchanged, and re-solving finds no better optimum."""
    ws, before = _solved_working_set(seed)
    support = np.flatnonzero(before.alpha > 0)
    assert len(support) >= 3
    chosen = support[:-1]
    lam = before.alpha[chosen] / before.alpha[chosen].sum()
    expected_row = lam @ ws.vectors[chosen]
    expected_loss = lam @ ws.losses[chosen]
    margins = ws.margins(before.w)
    order = ws.aggregate(chosen)
    assert len(ws) == 40 - len(chosen) + 1
    first = int(np.flatnonzero(order == chosen[0])[0])
    np.testing.assert_allclose(ws.vectors[first], expected_row, rtol=1e-12, atol=1e-12)
    assert ws.losses[first] == pytest.approx(expected_loss, rel=1e-12)
    np.testing.assert_allclose(ws._gram, ws.vectors @ ws.vectors.T, rtol=1e-10, atol=1e-10)
    # the last solve's w keeps its (now aggregated) margins, equal to the rows' products
    np.testing.assert_allclose(ws.margins(before.w), ws.vectors @ before.w, rtol=1e-10,
                               atol=1e-10)
    margins[chosen[0]] = lam @ margins[chosen]
    np.testing.assert_allclose(ws.margins(before.w), margins[order], rtol=1e-10, atol=1e-10)
    alpha = ws.alpha
    np.testing.assert_allclose(alpha @ ws.vectors, before.w, rtol=1e-10, atol=1e-10)
    dual = alpha @ ws.losses - 0.5 * alpha @ ws._gram @ alpha
    assert dual == pytest.approx(before.dual_objective, rel=1e-12)
    after = ws.solve()
    assert after.dual_objective == pytest.approx(before.dual_objective, rel=1e-9)
    np.testing.assert_allclose(after.w, before.w, atol=1e-6)


def test_only_constraints_that_can_be_aggregated_are():
    ws, before = _solved_working_set(0)
    zero = np.flatnonzero(before.alpha == 0)
    with pytest.raises(ValueError):
        ws.aggregate(zero[:2])
    with pytest.raises(ValueError):
        ws.aggregate(np.flatnonzero(before.alpha > 0)[:1])


@pytest.mark.parametrize("C", [10.0, 1000.0])
def test_training_that_aggregates_reaches_the_same_optimum(monkeypatch, C):
    """With a budget small enough to aggregate on a small problem, the working set stays
    small, the margins the stabilised points are formed from stay the rows' products, and
    the objective equals the unaggregated fit's within both certified gaps."""
    X, y, qid = random_collection(seed=9, n_queries=30, docs=(5, 30), n_features=15,
                                  rate=0.3)
    collection, _, _ = QueryCollection.from_arrays(X, y, qid).trainable()
    plugin = MapPlugin(collection)
    # aggregation is of a single group's working set: the plain 1-slack (cut_groups=1)
    plain = make_learner("1-slack", C=C, epsilon=None, rel_gap=1e-7,
                         cut_groups=1).fit(plugin)

    aggregated = []
    original = OneSlackSSVM._aggregate

    def counting(self, run, alpha):
        done = original(self, run, alpha)
        if done:
            aggregated.append(len(run.working_set))
            np.testing.assert_allclose(
                run.best_margins, run.working_set.vectors @ run.best[1], rtol=1e-9,
                atol=1e-9 * max(1.0, np.abs(run.best_margins).max()))
        return done

    monkeypatch.setattr(OneSlackSSVM, "_aggregate", counting)
    monkeypatch.setattr(upkeep_module, "_AGGREGATE_NUMBERS", 20 * 15)
    monkeypatch.setattr(upkeep_module, "_AGGREGATE_MIN", 20)
    monkeypatch.setattr(upkeep_module, "_AGGREGATE_KEEP", 5)
    small = make_learner("1-slack", C=C, epsilon=None, rel_gap=1e-7,
                         cut_groups=1).fit(plugin)
    assert plain.converged and small.converged
    if C > 100:
        assert aggregated, "the budget of 20 rows never aggregated"
        assert max(r.working_set_size for r in small.history) < \
            max(r.working_set_size for r in plain.history)
    assert abs(small.primal_objective - plain.primal_objective) <= \
        small.duality_gap + plain.duality_gap + 1e-12 * C
