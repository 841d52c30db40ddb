"""Reduced runs of the LETOR and trials protocols on real data (../shared/data), and the
plots drawn from their output."""

import csv
import json

import numpy as np
import pytest

from svmmap import metrics
from svmmap.core.selection import select
from svmmap.experiments import letor, plots, registry, trials
from svmmap.experiments.datasets import load_fold, load_pool

from conftest import data_file


def test_letor_protocol_one_fold(tmp_path):
    folder = data_file("OHSUMED", "Fold1").parent
    out = tmp_path / "letor"
    letor.main(["--data", str(folder), "--folds", "1", "--methods", "svm-map,best-feature",
                "--grid", "0.1,1", "--out", str(out), "-q"])
    rows = list(csv.DictReader((out / "letor.csv").open()))
    assert [(r["method"], r["fold"]) for r in rows] == [
        ("svm-map", "1"), ("best-feature", "1"), ("svm-map", "mean"), ("best-feature", "mean")]
    # the reported figures are those of the model chosen on validation MAP, on test
    fold = load_fold(folder / "Fold1")
    method = registry.select_methods(["svm-map"], {"C": [0.1, 1]})[0]
    chosen = select(method, fold["train"], fold["vali"])
    assert chosen.vali_map[chosen.value] == max(chosen.vali_map.values())
    test = fold["test"]
    expected = metrics.evaluate(chosen.scores(test), test.y, test.qid)
    for measure in letor.MEASURES:
        assert float(rows[0][measure]) == pytest.approx(expected[measure])
    assert rows[0]["chosen"] == f"C={chosen.value:g}"
    md = (out / "letor.md").read_text()
    assert "| SVM-MAP |" in md and "W/L vs SVM-MAP" in md and "Command: `" in md
    results = json.loads((out / "letor.json").read_text())
    assert len(results["methods"]["svm-map"]["per_query"]) == len(np.unique(test.qid))


def test_trials_protocol_two_trials(tmp_path):
    folder = data_file("OHSUMED", "Fold1").parent
    out = tmp_path / "trials"
    trials.main(["--data", str(folder), "--trials", "2", "--bin", "0", "--methods",
                 "svm-map,best-feature", "--grid", "0.1,1", "--out", str(out), "-q"])
    results = json.loads((out / "trials.json").read_text())
    pool, ids = load_pool([folder])
    assert results["pool_queries"] == len(ids) == 105    # 106 queries, one without relevant
    svm = results["methods"]["svm-map"]
    assert len(svm["trial_map"]) == 2
    # per-query AP summed over trials adds up to the trial MAPs times 35 test queries
    assert sum(svm["per_query"].values()) == pytest.approx(35 * sum(svm["trial_map"]))
    best = results["base_functions"]
    assert [b["map"] for b in best] == sorted((b["map"] for b in best), reverse=True)
    # the best base function's MAP, recomputed from the design
    design = trials.balanced_design(len(ids), 2)
    j = best[0]["feature"] - 1
    split = pool.queries(ids)
    ap = metrics.per_query("ap", split.X[:, j].toarray().ravel(), split.y, split.qid)
    by_id = dict(zip(ap.ids.tolist(), ap.values))
    expected = np.mean([np.mean([by_id[q] for q in ids[test].tolist()])
                        for _, _, test in design])
    assert best[0]["map"] == pytest.approx(expected)
    md = (out / "trials.md").read_text()
    for row in ("| SVM-MAP |", "| Best feature |", "| Best base function", "| 2nd best",
                "| 3rd best"):
        assert row in md


def test_plots_from_letor_output(tmp_path):
    pytest.importorskip("matplotlib", reason="plots need the 'plot' extra (matplotlib)")
    folder = data_file("OHSUMED", "Fold1").parent
    out = tmp_path / "letor"
    letor.main(["--data", str(folder), "--folds", "2", "--methods", "svm-map,best-feature",
                "--grid", "1", "--out", str(out), "-q"])
    written = plots.plot_results(out)
    assert [p.name for p in written] == ["ap_scatter_best-feature.png", "precision_recall.png"]
    for path in written:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
