"""The TREC-9 Web track runs (../shared/data/trec9, NIST data: read there, never copied) through
the paper's pipeline on a small subset: four gzip runs, the top 40 documents of each per topic,
all 50 topics -- build, binned trials, tables -- with the implicit binned features against the
explicit indicator matrix and parallel trials against one process.  Skipped with a message
when the data is absent."""

import csv
import json

import numpy as np
import pytest

from svmmap import SVMMap
from svmmap.experiments import trec, trec_tables, trials
from svmmap.experiments.datasets import load_pool
from svmmap.features import BinnedFeatureMap

from conftest import data_file

RUNS = ("jscbt9wll2", "jscbt9wcl1", "jscbt9wll1", "apl9td")


@pytest.fixture(scope="module")
def trec9(tmp_path_factory):
    folder = data_file("trec9")
    runs = tmp_path_factory.mktemp("trec9") / "runs"
    runs.mkdir()
    for tag in RUNS:  # links, not copies, to the shared files
        (runs / f"input.{tag}.gz").symlink_to(folder / "runs" / f"input.{tag}.gz")
    with open(folder / "runs.tsv", encoding="utf-8") as handle:
        official = {row["run"]: row for row in csv.DictReader(handle, delimiter="\t")}
    return folder, runs, official


def test_runs_score_their_official_map(trec9):
    """trec_eval's MAP of each run at depth 1,000, computed from the gzip run files and the
    qrels, equals the MAP NIST published (runs.tsv) to 4 decimals."""
    folder, runs, official = trec9
    run_set = trec.RunSet(sorted(runs.iterdir()), folder / "qrels.trec9.web.txt")
    for tag, value in zip(run_set.tags, run_set.maps):
        assert round(value, 4) == pytest.approx(float(official[tag]["official_map"]), abs=1e-4)


def test_build_trials_tables_on_real_runs(trec9, tmp_path):
    folder, runs, _ = trec9
    out = tmp_path / "out"
    trec_tables.main(["--runs", str(runs), "--qrels", str(folder / "qrels.trec9.web.txt"),
                      "--run-list", str(folder / "runs.tsv"), "--select",
                      "automatic,not-title-only", "--out", str(out), "--depth", "40",
                      "--trials", "2", "--sizes", "10,5,30",
                      "--methods", "svm-map,svm-acc2,best-feature",
                      "--grid", "0.01,1", "-q"])
    md = (out / "tables.md").read_text()
    assert "--select automatic,not-title-only: 4 of 4 runs" in md
    assert "best run jscbt9wll2 (MAP 0.1904; official MAP 0.2801; file input.jscbt9wll2.gz)" \
        in md  # MAP of the top 40 documents; NIST's official one of the top 1,000
    assert "## All runs (4 base functions)" in md and "## Without the best run (3" in md
    names = json.loads((out / "without_best" / "data" / "features.json").read_text())
    assert sorted(names.values()) == sorted(set(RUNS) - {"jscbt9wll2"})
    for variant in ("all", "without_best"):
        section = (out / variant / "trials.md").read_text()
        for row in ("| SVM-MAP | ", "| SVM-ACC2 | ", "| Best base function (feature "):
            assert row in section


def test_implicit_binned_features_equal_the_explicit_matrix_on_real_runs(trec9, tmp_path):
    """SVM-MAP on the real runs' binned features: the implicit bins (training, prediction)
    and the explicit indicator matrix give the same model to the certified gap."""
    folder, runs, _ = trec9
    X, y, qid, _, _ = trec.build(sorted(runs.iterdir()), folder / "qrels.trec9.web.txt",
                                 depth=40)
    topics = np.unique(qid)
    train, test = np.isin(qid, topics[:10]), np.isin(qid, topics[10:20])
    feature_map = BinnedFeatureMap(50, spacing="values")
    implicit = SVMMap(C=1.0, feature_map=feature_map).fit(X[train], y[train], qid[train])
    explicit_map = BinnedFeatureMap(50, spacing="values").fit(X[train])
    explicit = SVMMap(C=1.0).fit(explicit_map.transform(X[train]), y[train], qid[train])
    gap = 1e-5 * max(abs(implicit.training_result_.primal_objective), 1e-12)
    assert implicit.training_result_.primal_objective == pytest.approx(
        explicit.training_result_.primal_objective, abs=10 * gap + 1e-9)
    np.testing.assert_allclose(implicit.coef_, explicit.coef_, atol=1e-3)
    np.testing.assert_allclose(implicit.decision_function(X[test]),
                               explicit.decision_function(explicit_map.transform(X[test])),
                               atol=1e-3)


def test_parallel_trials_equal_one_process_on_real_runs(trec9, tmp_path):
    folder, runs, _ = trec9
    data = tmp_path / "data"
    trec.main(["build", "--runs", *map(str, sorted(runs.iterdir())), "--qrels",
               str(folder / "qrels.trec9.web.txt"), "--out", str(data), "--depth", "40",
               "--format", "arrays"])
    assert len(load_pool([data])[1]) >= 45
    results = {}
    for jobs in ("1", "2"):
        trials.main(["--data", str(data), "--out", str(tmp_path / jobs), "--trials", "2",
                     "--sizes", "10,5,30", "--methods", "svm-map,svm-roc", "--grid", "0.1,10",
                     "--bin-spacing", "values", "--patience", "1", "--jobs", jobs, "-q"])
        found = json.loads((tmp_path / jobs / "trials.json").read_text())
        for entry in found["methods"].values():
            entry.pop("seconds")
        found.pop("seconds")
        found.pop("command")
        results[jobs] = found
    assert results["1"] == results["2"]
