"""benchmarks/side_by_side.py at tiny sizes: every method yields a MAP in (0, 1], the methods
learn a ranking a known w separates, the RankSVM pairs are the right ones, and the recorded
JSON is what the benchmark returned.  No timing is asserted."""

import json
import sys

import numpy as np
import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import side_by_side  # noqa: E402

from svmmap import metrics  # noqa: E402


def separable_folds(n_queries=30, size=20, n_features=5, seed=0):
    """One fold whose relevant documents are the top 30% of each query by X @ w_true."""
    rng = np.random.default_rng(seed)
    w_true = rng.normal(size=n_features)
    qid = np.repeat(np.arange(n_queries), size)
    X = rng.normal(size=(len(qid), n_features))
    s = (X @ w_true).reshape(n_queries, size)
    y = (s >= np.quantile(s, 0.7, axis=1, keepdims=True)).astype(float).ravel()
    part = qid % 3
    return [(1, *(side_by_side.contiguous(X[part == k], y[part == k], qid[part == k])
                  for k in range(3)))]


def test_quick_run_records_what_it_returns(tmp_path, monkeypatch):
    import _common

    monkeypatch.setattr(_common, "RESULTS", tmp_path)
    result = side_by_side.main(["--quick"])
    rows = result["folds"]
    methods = side_by_side.available_methods()  # all three where lightgbm is installed
    assert {(r["fold"], r["method"]) for r in rows} == {(f, m) for f in (1, 2) for m in methods}
    for r in rows:
        assert 0 < r["test_map"] <= 1 and 0 < r["vali_map"] <= 1
        assert r["grid_fits"] == 2 and r["fit_seconds"] > 0 and r["grid_seconds"] > 0
    chosen_C = {r["chosen"]["C"] for r in rows if r["method"] != "LightGBM"}
    assert chosen_C <= set(side_by_side.QUICK_GRIDS["SVM-MAP"]["C"]) | set(
        side_by_side.QUICK_GRIDS["RankSVM"]["C"])
    recorded = json.loads((tmp_path / "side_by_side_quick.json").read_text())
    assert recorded["rows"] == result
    for s in result["summary"]:
        mine = [r["test_map"] for r in rows if r["method"] == s["method"]]
        assert s["mean_test_map"] == pytest.approx(np.mean(mine))
    md = (tmp_path / "side_by_side_quick.md").read_text()
    assert all(f"| synthetic | {m} | **{s['mean_test_map']:.4f}** |" in md
               for m, s in zip(methods, result["summary"]))


def test_methods_rank_a_separable_collection_far_better_than_random():
    folds = separable_folds()
    _, _, _, test = folds[0]
    rows = {r["method"]: r for r in side_by_side.compare(
        "separable", folds, side_by_side.QUICK_GRIDS, side_by_side.available_methods())}
    random_map = np.mean([metrics.mean_average_precision(
        np.random.default_rng(s).random(len(test[1])), test[1], test[2]) for s in range(20)])
    assert random_map < 0.5
    assert rows["RankSVM"]["test_map"] > 0.95
    assert rows["SVM-MAP"]["test_map"] > 0.95
    if "LightGBM" in rows:
        assert rows["LightGBM"]["test_map"] > random_map + 0.2


def test_ranking_pairs_are_the_differences_of_every_ordered_pair():
    X = np.arange(12, dtype=float).reshape(6, 2) ** 2
    y = np.array([2.0, 0.0, 1.0, 1.0, 0.0, 1.0])  # query 0: rows 0-2, query 1: rows 3-5
    qid = np.array([7, 7, 7, 3, 3, 3])
    D, t = side_by_side.ranking_pairs(X, y, qid)
    expected = {(0, 1), (0, 2), (2, 1), (3, 4), (5, 4)}
    assert len(t) == len(expected) and set(t) == {-1.0, 1.0}
    got = {tuple(d * s) for d, s in zip(D, t)}  # undo the flips: x_i - x_j again
    assert got == {tuple(X[i] - X[j]) for i, j in expected}


def test_contiguous_groups_queries_and_keeps_file_order():
    X = np.arange(5, dtype=float)[:, None]
    Xc, yc, qc = side_by_side.contiguous(X, np.zeros(5), np.array([4, 2, 4, 2, 9]))
    assert qc.tolist() == [4, 4, 2, 2, 9] and Xc.ravel().tolist() == [0, 2, 1, 3, 4]
    assert side_by_side.group_sizes(qc).tolist() == [2, 2, 1]


def test_without_lightgbm_it_is_left_out_with_one_line(monkeypatch, capsys):
    monkeypatch.setattr(side_by_side, "lightgbm", None)
    assert side_by_side.available_methods() == ("SVM-MAP", "RankSVM")
    err = capsys.readouterr().err.strip()
    assert "lightgbm is not installed" in err and "\n" not in err
