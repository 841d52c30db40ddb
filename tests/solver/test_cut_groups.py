"""1-slack's cut groups (svmstruct_api.cut_groups): where they apply, the same optimum as the
plain 1-slack and n-slack within the certificates, and fewer oracle passes."""

import numpy as np
import pytest

from svmmap.core.collection import QueryCollection
from svmmap.core.plugins import MapPlugin
from svmstruct_api.bounds import ExampleBounds
from svmstruct_api.cut_groups import _MAX_FEATURES, CUT_GROUPS, GROUPED_PRUNE_AFTER
from svmstruct_api.learner import OneSlackSSVM, make_learner
from svmstruct_api.plugin import ConstraintBatch, GroupedSums

from conftest import random_collection, wide_arrays


def _plugin(seed=9, n_queries=30, n_features=15):
    X, y, qid = random_collection(seed=seed, n_queries=n_queries, docs=(5, 30),
                                  n_features=n_features, rate=0.3)
    collection, _, _ = QueryCollection.from_arrays(X, y, qid).trainable()
    return MapPlugin(collection)


def test_a_batchs_group_sums_are_the_groups_weighted_sums():
    """ConstraintBatch.group_sums: (sum_{i in g} w_i Delta_i, sum_{i in g} w_i dpsi_i) per
    group, from dense rows (np.add.at) and from a plugin's QueryRows (its one-pass kernel)
    alike, an empty group at 0."""
    plugin = _plugin(n_queries=25)
    rng = np.random.default_rng(3)
    batch = plugin.most_violated_constraints(rng.normal(size=plugin.n_features))
    dense = ConstraintBatch(loss=batch.loss, dpsi=np.asarray(batch.dpsi))
    weights = rng.uniform(0.5, 2, plugin.n_examples)
    groups = rng.integers(0, 4, plugin.n_examples)
    groups[groups == 2] = 3  # group 2 is empty
    expected_dpsi = np.array([np.asarray(batch.dpsi)[groups == g].T @ weights[groups == g]
                              for g in range(5)])
    expected_loss = np.array([weights[groups == g] @ batch.loss[groups == g]
                              for g in range(5)])
    for made in (batch, dense):
        losses, dpsi = made.group_sums(weights, groups, 5)
        np.testing.assert_allclose(losses, expected_loss, rtol=1e-12)
        np.testing.assert_allclose(dpsi, expected_dpsi, rtol=1e-12, atol=1e-12)
        assert not dpsi[2].any() and not dpsi[4].any() and losses[2] == 0


def test_examples_are_dealt_round_robin_into_the_groups():
    plugin = _plugin(n_queries=40)
    learner = OneSlackSSVM(C=10.0)
    groups = learner._example_groups(plugin)
    assert groups is not None and len(groups) == plugin.n_examples
    np.testing.assert_array_equal(groups, np.arange(plugin.n_examples) % CUT_GROUPS)
    # at most one group per example; none with the cache, a w of more than _MAX_FEATURES
    # components or cut_groups=1
    few = _plugin(n_queries=5)
    np.testing.assert_array_equal(learner._example_groups(few), np.arange(few.n_examples))
    assert OneSlackSSVM(C=10.0, cache_size=2)._example_groups(plugin) is None
    assert learner._example_groups(_plugin(n_features=_MAX_FEATURES + 1)) is None
    assert learner._example_groups(_plugin(n_features=_MAX_FEATURES)) is not None
    assert OneSlackSSVM(C=10.0, cut_groups=1)._example_groups(plugin) is None
    with pytest.raises(ValueError, match="cut_groups"):
        OneSlackSSVM(cut_groups=0)


@pytest.mark.parametrize("C", [1.0, 100.0, 1000.0])
def test_cut_groups_reach_the_plain_optimum_in_fewer_oracle_passes(C):
    """The G-slack problem is the same P(w): the objectives of the grouped, the plain 1-slack
    and the n-slack fit agree within their certified gaps; the grouped fit's working set holds
    cuts of every group, and it needs fewer oracle passes where the plain one needs many."""
    plugin = _plugin()
    fits = {name: make_learner(formulation, C=C, epsilon=None, rel_gap=1e-7, **extra)
            .fit(plugin) for name, formulation, extra in (
                ("grouped", "1-slack", {}), ("plain", "1-slack", {"cut_groups": 1}),
                ("n-slack", "n-slack", {}))}
    assert all(fit.converged for fit in fits.values())
    for name in ("plain", "n-slack"):
        assert abs(fits["grouped"].primal_objective - fits[name].primal_objective) <= \
            fits["grouped"].duality_gap + fits[name].duality_gap + 1e-12 * C
    assert len(fits["grouped"].slack) == len(fits["plain"].slack) == 1
    if C >= 100:
        assert fits["grouped"].iterations < fits["plain"].iterations / 2


@pytest.mark.parametrize("C", [1.0, 1000.0])
@pytest.mark.parametrize("n_features", [300, _MAX_FEATURES + 200])
def test_the_rows_and_the_basis_path_of_documents_fewer_than_features(started_runs, C,
                                                                      n_features):
    """Documents at most 3/4 of the features (where the plain 1-slack keeps its cuts in the
    documents' basis, learner._row_basis): a w of at most _MAX_FEATURES components takes
    cut groups with dim(w)-long rows (the rows path), a wider one the plain 1-slack in the
    basis (the basis path) at the default cut_groups.  Each reaches n-slack's optimum
    within the certified gaps, the rows path also the plain 1-slack's in the basis
    (cut_groups=1) in fewer passes (the basis path against forced rows: test_row_basis)."""
    X, y, qid = wide_arrays(3, n_queries=24, n_features=n_features)
    collection, _, _ = QueryCollection.from_arrays(X, y, qid).trainable()
    plugin = MapPlugin(collection)
    assert 4 * collection.X.shape[0] <= 3 * n_features
    settings = dict(C=C, epsilon=None, rel_gap=1e-7)
    default = OneSlackSSVM(**settings).fit(plugin)
    grouped = n_features <= _MAX_FEATURES
    assert (started_runs[-1].example_groups is not None) == grouped
    assert started_runs[-1].working_set.basis is (None if grouped else plugin.row_basis)
    others = [make_learner("n-slack", **settings).fit(plugin)]
    if grouped:  # the plain 1-slack keeps the basis
        others.append(OneSlackSSVM(cut_groups=1, **settings).fit(plugin))
        assert started_runs[-1].example_groups is None
        assert started_runs[-1].working_set.basis is plugin.row_basis
        assert default.iterations < others[-1].iterations
    assert default.converged and all(fit.converged for fit in others)
    for fit in others:
        assert abs(default.primal_objective - fit.primal_objective) <= \
            default.duality_gap + fit.duality_gap + 1e-12 * C


def test_the_reported_slack_is_the_bound_weighted_mean_of_the_groups():
    """TrainingResult.slack of a grouped fit is the 1-slack xi of its model: at the end,
    the mean violation of the queries is within it plus epsilon (conftest's certificate)."""
    plugin = _plugin()
    result = make_learner("1-slack", C=10.0, epsilon=1e-6).fit(plugin)
    violations = plugin.most_violated_constraints(result.w).violations(result.w)
    assert violations.mean() <= result.slack[0] + 1e-6 + 1e-9
    assert result.slack[0] >= 0


def test_grouped_sums_give_the_per_example_cuts_and_objective():
    """A distributed model's GroupedSums of a batch give the same group cuts, violations
    and slack cost as the per-example ConstraintBatch they sum."""
    rng = np.random.default_rng(4)
    n, d, G = 11, 5, 3
    batch = ConstraintBatch(loss=rng.uniform(0.1, 1, n), dpsi=rng.normal(size=(n, d)))
    w = 0.01 * rng.normal(size=d)  # every H_i > 0, as an exact oracle's
    groups = np.arange(n) % G
    sums = GroupedSums(counts=np.bincount(groups), loss=np.bincount(groups, batch.loss, G),
                       dpsi=np.stack([batch.dpsi[groups == g].sum(axis=0) for g in range(G)]))
    bounds = ExampleBounds(values=np.full(n, 2.0 / n), total=2.0, uniform=True)
    assert sums.slack_cost(w, bounds) == pytest.approx(batch.slack_cost(w, bounds), rel=1e-12)
    per_group = np.bincount(groups, np.maximum(batch.violations(w), 0), G) / sums.counts
    np.testing.assert_allclose(sums.violations(w) / sums.counts, per_group, rtol=1e-12)
    with pytest.raises(ValueError, match="same bound"):
        sums.slack_cost(w, ExampleBounds(values=np.linspace(1, 2, n), total=16.5,
                                         uniform=False))


def test_the_automatic_prune_horizon_is_the_grouped_one_with_cut_groups_only():
    """prune_after="auto" (the default) drops constraints after GROUPED_PRUNE_AFTER idle
    solves with cut groups and after 10 without: the same fit, bit for bit, as the number
    given outright (and a different fit from the other number, so the check can fail)."""
    plugin = _plugin(n_queries=40)

    def fit(**params):
        return OneSlackSSVM(C=100.0, epsilon=None, rel_gap=1e-6, **params).fit(plugin)

    for extra, horizon, other in (({}, GROUPED_PRUNE_AFTER, 10),
                                  ({"cut_groups": 1}, 10, GROUPED_PRUNE_AFTER)):
        auto, given, differs = fit(**extra), fit(prune_after=horizon, **extra), \
            fit(prune_after=other, **extra)
        assert OneSlackSSVM().prune_after == "auto"
        assert auto.converged and differs.converged
        assert auto.iterations == given.iterations
        np.testing.assert_array_equal(auto.w, given.w)
        assert auto.primal_objective == given.primal_objective
        assert [h.working_set_size for h in auto.history] == \
            [h.working_set_size for h in given.history]
        assert [h.working_set_size for h in auto.history] != \
            [h.working_set_size for h in differs.history]


@pytest.mark.parametrize("value", [0, -1, 2.5, True, "never"])
def test_prune_after_must_be_none_a_positive_integer_or_auto(value):
    with pytest.raises(ValueError, match="prune_after"):
        OneSlackSSVM(prune_after=value)
    with pytest.raises(ValueError, match="prune_after"):
        make_learner("n-slack", prune_after=value)


def test_auto_is_a_prune_horizon_of_one_slack_only():
    with pytest.raises(ValueError, match='prune_after must be None, a positive integer, '):
        make_learner("n-slack", prune_after="auto")
    assert make_learner("n-slack", prune_after=None).prune_after is None
    assert make_learner("1-slack", prune_after=3).prune_after == 3
