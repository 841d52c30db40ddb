"""The wide C grid of the experiments: the C -> 0 limit it reaches, where a trial's choice
sits in its grid, and the ``grid`` record of trials.json (tiny synthetic pools, seconds)."""

import json

import numpy as np
import pytest

from svmmap import SVMMap
from svmmap.core.selection import low_end_stable, same_ranking, select
from svmmap.experiments import registry, trials
from svmmap.experiments.datasets import Split


def _pool(n_queries=50, docs=8, n_features=4, seed=0):
    """Queries of ``docs`` documents with 1-3 relevant ones; relevance leans on feature 0."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_queries * docs, n_features))
    qid = np.repeat(np.arange(1, n_queries + 1), docs)
    y = np.zeros(len(qid))
    for q in range(n_queries):
        rows = q * docs + rng.choice(docs, size=rng.integers(1, 4), replace=False)
        y[rows] = 1
    X[:, 0] += y
    return X, y, qid


def _centroid_direction(X, y, qid):
    """g = sum over queries of (mean relevant - mean non-relevant document), computed here
    independently: the C -> 0 direction of SVM-MAP and SVM-ROC (module docstring of
    svmmap.experiments.registry)."""
    g = np.zeros(X.shape[1])
    for q in np.unique(qid):
        rows = qid == q
        g += X[rows & (y > 0)].mean(axis=0) - X[rows & (y <= 0)].mean(axis=0)
    return g


@pytest.mark.parametrize("loss", ["map", "roc"])
@pytest.mark.parametrize("algorithm", ["1-slack", "n-slack"])
def test_small_c_solution_is_c_times_the_centroid_direction(loss, algorithm):
    X, y, qid = _pool(12)
    g = _centroid_direction(X, y, qid)
    weights = []
    for C in (1e-5, 1e-7):
        w = SVMMap(C=C, loss=loss, algorithm=algorithm).fit(X, y, qid).coef_
        assert w @ g / (np.linalg.norm(w) * np.linalg.norm(g)) == pytest.approx(1, abs=1e-9)
        weights.append(w / C)
    # w / C is the same vector at both C: the ranking no longer changes below the grid
    np.testing.assert_allclose(weights[0], weights[1], rtol=1e-6)
    a, b = (SVMMap(C=C, loss=loss, algorithm=algorithm).fit(X, y, qid).decision_function(X)
            for C in (1e-5, 1e-7))
    assert same_ranking(a, b, qid)


def test_same_ranking_ignores_scale_and_shift_but_not_order_or_ties():
    qid = np.array([1, 1, 1, 2, 2])
    a = np.array([0.3, 0.1, 0.2, 5.0, 4.0])
    assert same_ranking(a, 1e-6 * a + 3.0, qid)
    assert not same_ranking(a, np.array([0.1, 0.3, 0.2, 5.0, 4.0]), qid)
    assert not same_ranking(a, np.array([0.3, 0.2, 0.2, 5.0, 4.0]), qid)   # a tie appears
    # an order across queries is no ranking difference
    assert same_ranking(a, np.array([0.3, 0.1, 0.2, -5.0, -6.0]), qid)


def test_low_end_choice_is_checked_at_c_over_100():
    X, y, qid = _pool(15)
    train = Split(X[qid <= 10], y[qid <= 10], qid[qid <= 10])
    vali = Split(X[qid > 10], y[qid > 10], qid[qid > 10])
    method = registry.select_methods(["svm-map"], {"C": [1e-5]})[0]
    chosen = select(method, train, vali)
    assert chosen.grid == [1e-5] and chosen.value == 1e-5 and chosen.end == "low"
    assert low_end_stable(chosen, train, vali) is True


def _results(ends):
    return {"methods": {
        "svm-map": {"label": "SVM-MAP", "param": "C", "grid": [1e-5, 1, 1e3],
                    "end": ends, "low_end_stable": [True if e == "low" else None
                                                    for e in ends]},
        "best-feature": {"label": "Best feature", "param": "feature", "grid": [0, 1, 2],
                         "end": [None] * len(ends), "low_end_stable": [None] * len(ends)}}}


def test_grid_ends_counts_choices_at_either_end():
    rows = trials.grid_ends(_results(["low", None, "high", "low", "low"]))
    assert rows == [["SVM-MAP", "C in 1e-05, 1, 1000", "3/5", "1/5", "3/3"]]


def test_trials_json_records_grid_choices_and_ends(tmp_path):
    X, y, qid = _pool(50, docs=6, n_features=3)
    data = tmp_path / "pool.txt"
    data.write_text("".join(
        f"{int(label)} qid:{q} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(row)) + "\n"
        for label, q, row in zip(y, qid, X)))
    out = tmp_path / "out"
    trials.main(["--data", str(data), "--trials", "2", "--bin", "0", "--methods",
                 "svm-map,best-feature", "--grid", "svm-map=1e-5,1,1000", "--out", str(out),
                 "-q"])
    results = json.loads((out / "trials.json").read_text())
    svm = results["methods"]["svm-map"]
    assert svm["grid"] == [1e-5, 1, 1000]
    assert len(svm["chosen"]) == 2 and set(svm["chosen"]) <= set(svm["grid"])
    assert svm["end"] == [{1e-5: "low", 1000: "high"}.get(c) for c in svm["chosen"]]
    assert [s is not None for s in svm["low_end_stable"]] == [e == "low" for e in svm["end"]]
    assert results["methods"]["best-feature"]["grid"] == [0, 1, 2]
    md = (out / "trials.md").read_text()
    assert "| SVM-MAP | C in 1e-05, 1, 1000 |" in md


def test_configure_svms_sets_every_svm_and_keeps_acc3s_own_per_query_map():
    methods = registry.configure_svms(
        registry.select_methods(["svm-map", "svm-acc2", "svm-acc3", "best-feature"], None, 50),
        "minmax", epsilon=1e-4, algorithm="n-slack")
    made = {m.name: m.factory(m.grid_for(3)[0]) for m in methods}
    for name in ("svm-map", "svm-acc2", "svm-acc3"):
        assert (made[name].epsilon, made[name].algorithm) == (1e-4, "n-slack")
        assert made[name].feature_map.n_thresholds == 50
    assert made["svm-map"].feature_map.per_query == "minmax"
    assert made["svm-acc2"].feature_map.per_query == "minmax"
    assert made["svm-acc2"].cost_ratio == "balanced"
    assert made["svm-acc3"].feature_map.per_query == "percentile"
    assert isinstance(made["best-feature"], registry.SingleFeature)
