"""The trials protocol's balanced design, the W/L + Wilcoxon comparison, the method registry
and the 11-point interpolated precision."""

import numpy as np
import pytest
from scipy import stats as scipy_stats

from svmmap.errors import SVMMapError
from svmmap.experiments import registry
from svmmap.experiments.stats import compare
from svmmap.experiments.trials import balanced_design, role_counts
from svmmap.metrics import interpolated_precision


@pytest.mark.parametrize("n_queries, n_trials", [(50, 50), (105, 105), (60, 120), (50, 100)])
def test_every_query_equally_often_in_each_role_when_trials_divisible(n_queries, n_trials):
    design = balanced_design(n_queries, n_trials, seed=3)
    counts = role_counts(design, n_queries)
    per = n_trials // n_queries
    assert set(counts["train"]) == {10 * per}
    assert set(counts["vali"]) == {5 * per}
    assert set(counts["test"]) == {35 * per}


@pytest.mark.parametrize("n_queries, n_trials", [(105, 50), (564, 50), (51, 50), (50, 7)])
def test_counts_differ_by_at_most_one_otherwise(n_queries, n_trials):
    counts = role_counts(balanced_design(n_queries, n_trials, seed=1), n_queries)
    for role, c in counts.items():
        assert c.max() - c.min() <= 1, role
        assert c.sum() == n_trials * {"train": 10, "vali": 5, "test": 35}[role]


def test_roles_disjoint_within_a_trial_and_seed_changes_the_permutation():
    design = balanced_design(50, 50, seed=0)
    for train, vali, test in design:
        assert (len(train), len(vali), len(test)) == (10, 5, 35)
        assert len(set(train) | set(vali) | set(test)) == 50
    other = balanced_design(50, 50, seed=1)
    assert not np.array_equal(design[0][0], other[0][0])


def test_pool_too_small_is_an_error():
    with pytest.raises(SVMMapError, match="needs 50 distinct queries"):
        balanced_design(49, 10)


def test_win_loss_counts_and_wilcoxon_on_constructed_values():
    rng = np.random.default_rng(0)
    b = rng.uniform(size=30)
    a = b.copy()
    a[:20] += rng.uniform(0.05, 0.2, size=20)   # 20 wins
    a[20:24] -= 0.01                             # 4 losses, 6 ties
    c = compare(a, b)
    assert (c.wins, c.losses) == (20, 4)
    expected = scipy_stats.wilcoxon(a[:24] - b[:24]).pvalue   # ties dropped
    assert c.p_value == pytest.approx(expected)
    assert c.significant and c.cell() == "20/4 **"


def test_symmetric_differences_are_not_significant():
    b = np.linspace(0.1, 0.9, 20)
    a = b + np.tile([0.05, -0.05], 10)
    c = compare(a, b)
    assert (c.wins, c.losses) == (10, 10)
    assert not c.significant and c.cell() == "10/10"
    assert compare(b, b).p_value == 1.0 and compare(b, b).cell() == "0/0"


def test_registry_has_svm_map_and_rejects_unknown_methods():
    methods = registry.select_methods(["svm-map", "best-feature"], {"C": [0.5, 2]})
    assert [m.name for m in methods] == ["svm-map", "best-feature"]
    assert methods[0].grid_for(3) == [0.5, 2] and methods[1].grid_for(3) == [0, 1, 2]
    assert methods[0].factory(0.5).C == 0.5
    with pytest.raises(SVMMapError, match="unknown method"):
        registry.select_methods(["svm-nope"])
    with pytest.raises(SVMMapError, match="--grid for method"):
        registry.select_methods(["svm-map"], {"prank": [1]})
    assert registry.parse_grids(["svm-map=1,10", "0.1,1e3"]) == {"svm-map": [1, 10],
                                                                  "C": [0.1, 1000.0]}


def test_single_feature_ranks_by_its_column():
    X = np.array([[1.0, 5.0], [2.0, 4.0], [3.0, 3.0]])
    model = registry.SingleFeature(1).fit(X, np.zeros(3), np.zeros(3))
    assert model.decision_function(X).tolist() == [5.0, 4.0, 3.0]


def test_interpolated_precision_hand_example():
    # ranking: R N R N N, 2 relevant: precision 1 at recall .5, 2/3 at recall 1
    scores = np.array([5.0, 4, 3, 2, 1])
    labels = np.array([1.0, 0, 1, 0, 0])
    curve = interpolated_precision(scores, labels, np.zeros(5))
    assert curve[:6] == pytest.approx([1.0] * 6)
    assert curve[6:] == pytest.approx([2 / 3] * 5)
    # a query without a relevant document is left out of the mean
    both = interpolated_precision(np.r_[scores, scores], np.r_[labels, 0 * labels],
                                  np.repeat([1, 2], 5))
    assert both == pytest.approx(curve)


def test_plot_titles_say_data_test_queries_and_convention():
    from svmmap.experiments.plots import describe

    letor_result = {"data": "../shared/data/OHSUMED", "methods": {
        "svm-map": {"folds": {"1": {}, "2": {}, "10": {}}}, "prank": {"folds": {"1": {}}}}}
    assert describe(letor_result, "letor.json") == (
        "OHSUMED: test queries of folds 1, 2, 10, LETOR convention", "AP")
    trials_result = {"data": "../shared/data/OHSUMED/Fold1/train.txt x.txt", "trials": 50,
                     "sizes": [10, 5, 35], "methods": {}}
    title, measure = describe(trials_result, "trials.json")
    assert title == "train.txt: test queries of 50 trials (10/5/35 train/vali/test), " \
                    "LETOR convention"
    assert measure == "AP summed over the trials testing it"
