"""The cutting-plane learners: at termination every constraint of the full problem holds up
to epsilon (checked by brute force over all rankings), and n-slack and 1-slack reach the same
objective."""

import numpy as np
import pytest

from svmmap import load_svmlight
from svmmap.core.collection import QueryCollection
from svmmap.core.plugins import MapPlugin
from svmstruct_api.learner import make_learner
from svmstruct_api.plugin import StructuredModel

from brute_force import brute_force_max_h
from conftest import assert_certified_optimum, data_file, random_collection


def _plugin(X, y, qid):
    collection, _, _ = QueryCollection.from_arrays(X, y, qid).trainable()
    return MapPlugin(collection)


def _brute_force_violations(plugin, w):
    """max_y Delta(y*, y) - w.(psi(y*) - psi(y)) of every query, over every ranking."""
    col = plugin.collection
    out = []
    for q in range(col.n_queries):
        lo, hi = col.ptr[q], col.ptr[q + 1]
        scores = col.X[lo:hi] @ w
        relevant = col.labels[lo:hi] > 0
        ideal = scores[relevant].mean() - scores[~relevant].mean()
        out.append(brute_force_max_h(scores, relevant) - ideal)
    return np.array(out)


@pytest.fixture(scope="module")
def tiny_plugin():
    X, y, qid = random_collection(seed=4, n_queries=10, docs=(3, 6), n_features=4, rate=0.4)
    return _plugin(X, y, qid)


@pytest.mark.parametrize("formulation", ["n-slack", "1-slack"])
@pytest.mark.parametrize("C", [0.3, 30.0])
def test_every_constraint_holds_within_epsilon_at_termination(tiny_plugin, formulation, C):
    epsilon = 1e-3
    result = make_learner(C=C, epsilon=epsilon, formulation=formulation).fit(tiny_plugin)
    violations = _brute_force_violations(tiny_plugin, result.w)
    assert_certified_optimum(result, formulation, violations, C, epsilon)


def _assert_same_optimum(plugin, C, epsilon):
    results = {f: make_learner(C=C, epsilon=epsilon, formulation=f).fit(plugin)
               for f in ("n-slack", "1-slack")}
    for a, b in [("n-slack", "1-slack"), ("1-slack", "n-slack")]:
        # weak duality across learners: neither's objective is below the other's lower bound
        assert results[a].primal_objective >= results[b].dual_objective - 1e-6
        assert results[a].primal_objective <= results[b].primal_objective + C * epsilon
    return results


@pytest.mark.parametrize("C", [0.1, 10.0, 1000.0])
def test_n_slack_and_1_slack_reach_the_same_objective_on_synthetic_data(C):
    X, y, qid = random_collection(seed=1, n_queries=15, docs=(5, 40), n_features=8)
    _assert_same_optimum(_plugin(X, y, qid), C, epsilon=1e-3)


@pytest.mark.parametrize("C", [1.0, 100.0])
def test_n_slack_and_1_slack_reach_the_same_objective_on_ohsumed_queries(C):
    X, y, qid = load_svmlight(data_file("OHSUMED", "Fold1", "train.txt"))
    first = np.isin(qid, np.unique(qid)[:8])
    results = _assert_same_optimum(_plugin(X[first], y[first], qid[first]), C, epsilon=1e-3)
    w_n, w_1 = results["n-slack"].w, results["1-slack"].w
    # near-identical objectives of a strongly convex problem mean near-identical w:
    # 1/2 |w_a - w*|^2 <= P(w_a) - P*, so |w_n - w_1| <= 2 sqrt(C epsilon)
    assert np.linalg.norm(w_n - w_1) <= 2 * np.sqrt(C * 1e-3)


def test_batch_hook_equals_the_per_example_hooks(tiny_plugin):
    rng = np.random.default_rng(0)
    w = rng.normal(size=tiny_plugin.n_features)
    fast = tiny_plugin.most_violated_constraints(w)
    slow = StructuredModel.most_violated_constraints(tiny_plugin, w)
    np.testing.assert_allclose(fast.loss, slow.loss, atol=1e-12)
    np.testing.assert_allclose(fast.dpsi, slow.dpsi, atol=1e-12)


def test_per_example_hooks_are_consistent(tiny_plugin):
    rng = np.random.default_rng(1)
    w = rng.normal(size=tiny_plugin.n_features)
    for i in range(tiny_plugin.n_examples):
        y_true = tiny_plugin.true_output(i)
        assert tiny_plugin.loss(i, y_true) == 0.0
        y_hat = tiny_plugin.find_most_violated_constraint(i, w)
        assert sorted(y_hat) == list(range(len(y_true)))
        h_hat = tiny_plugin.loss(i, y_hat) + w @ tiny_plugin.psi(i, y_hat)
        y_pred = tiny_plugin.classify_example(i, w)
        # the most violated ranking beats both the truth and the prediction on H
        for y in (y_true, y_pred):
            assert h_hat >= tiny_plugin.loss(i, y) + w @ tiny_plugin.psi(i, y) - 1e-12
        # the prediction maximises w.psi
        assert w @ tiny_plugin.psi(i, y_pred) >= w @ tiny_plugin.psi(i, y_hat) - 1e-12


def test_limits_stop_with_the_best_model_so_far():
    X, y, qid = random_collection(seed=2, n_queries=20, docs=(10, 30))
    plugin = _plugin(X, y, qid)
    result = make_learner(C=100, formulation="1-slack", max_iter=3).fit(plugin)
    assert result.status == "max_iter" and not result.converged and result.iterations == 3
    best = min(result.history, key=lambda r: r.primal_objective)
    assert result.primal_objective == best.primal_objective


def test_interrupt_returns_the_best_model_so_far():
    X, y, qid = random_collection(seed=3, n_queries=20, docs=(10, 30))
    plugin = _plugin(X, y, qid)
    calls = {"n": 0}
    original = plugin.most_violated_constraints

    def interrupted_on_fourth_call(w):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return original(w)

    plugin.most_violated_constraints = interrupted_on_fourth_call
    result = make_learner(C=10, formulation="n-slack").fit(plugin)
    assert result.status == "interrupted" and result.iterations == 4
    assert len(result.history) == 3
    assert np.isfinite(result.primal_objective)


@pytest.mark.parametrize("bad", [{"C": 0}, {"C": -1}, {"C": float("nan")}, {"epsilon": 0},
                                 {"formulation": "2-slack"}])
def test_bad_parameters_are_rejected(bad):
    with pytest.raises(ValueError):
        make_learner(**bad)


def test_pruning_inactive_constraints_keeps_the_optimum():
    X, y, qid = random_collection(seed=6, n_queries=25, docs=(10, 40), n_features=8)
    plugin = _plugin(X, y, qid)
    C, epsilon = 1000.0, 1e-3
    full = make_learner(C=C, epsilon=epsilon, prune_after=None).fit(plugin)
    pruned = make_learner(C=C, epsilon=epsilon, prune_after=5).fit(plugin)
    assert full.converged and pruned.converged
    assert pruned.working_set_size < full.working_set_size
    assert abs(pruned.primal_objective - full.primal_objective) <= C * epsilon


@pytest.mark.parametrize("C", [1.0, 1000.0])
@pytest.mark.parametrize("rules", [{"epsilon": None, "rel_gap": 1e-7},
                                   {"epsilon": 1e-6, "rel_gap": None}])
def test_stabilised_oracle_points_reach_the_plain_methods_optimum(monkeypatch, C, rules):
    """1-slack with stabilised oracle points (the default) against the plain cutting-plane
    method (oracle always at the QP's solution): the same objective within both certified
    gaps; at large C the stabilised points are used (some pass has oracle_step < 1) and
    the last pass, where the rule held, is at the QP's solution."""
    from svmstruct_api.learner import OneSlackSSVM

    X, y, qid = random_collection(seed=21, n_queries=25, docs=(5, 30), n_features=12,
                                  rate=0.3)
    plugin = _plugin(X, y, qid)
    stabilised = make_learner("1-slack", C=C, **rules).fit(plugin)
    monkeypatch.setattr(OneSlackSSVM, "_stabilized", lambda self: False)
    plain = make_learner("1-slack", C=C, **rules).fit(plugin)
    assert stabilised.converged and plain.converged
    assert all(r.oracle_step == 1.0 for r in plain.history)
    if C > 1:
        assert min(r.oracle_step for r in stabilised.history) < 1.0
    assert stabilised.history[-1].oracle_step == 1.0
    assert abs(stabilised.primal_objective - plain.primal_objective) <= \
        max(stabilised.duality_gap, 0) + max(plain.duality_gap, 0) + 1.01 * C * (
            rules["epsilon"] or 0.0) + 1e-12 * C


def test_oracle_point_margins_without_a_pass_equal_the_rows(monkeypatch):
    """The margins w_o.a_k at a stabilised oracle point, formed from those of w_best and of
    the QP's solution (kept through additions and pruning), equal the rows' products at
    w_o; the run that uses them (prune_after=2: many removals) reaches the plain method's
    optimum within both certified gaps."""
    from svmstruct_api.learner import OneSlackSSVM

    X, y, qid = random_collection(seed=4, n_queries=20, docs=(5, 25), n_features=10,
                                  rate=0.3)
    plugin = _plugin(X, y, qid)
    checked = []
    formed = OneSlackSSVM._oracle_margins

    def checking(self, run, w_qp, step):
        margins = formed(self, run, w_qp, step)
        if margins is None:  # the plain method below: the working set computes them
            return margins
        np.testing.assert_allclose(margins, run.working_set.vectors @ run.w, rtol=1e-9,
                                   atol=1e-9 * max(1.0, np.abs(margins).max(initial=0.0)))
        checked.append(step)
        return margins

    monkeypatch.setattr(OneSlackSSVM, "_oracle_margins", checking)
    result = make_learner("1-slack", C=1000.0, epsilon=None, rel_gap=1e-7,
                          prune_after=2).fit(plugin)
    assert result.converged and min(checked) < 1.0
    monkeypatch.setattr(OneSlackSSVM, "_stabilized", lambda self: False)
    plain = make_learner("1-slack", C=1000.0, epsilon=None, rel_gap=1e-7).fit(plugin)
    assert abs(result.primal_objective - plain.primal_objective) <= \
        max(result.duality_gap, 0) + max(plain.duality_gap, 0) + 1e-12 * 1000.0
