"""benchmarks/c_sweep.py at tiny size on synthetic data: every C is measured, the shares are
shares, the primal objective grows with C as it must, and what is recorded is what is
returned.  No timing is asserted."""

import json
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import c_sweep  # noqa: E402
import synthetic  # noqa: E402

from svmmap import dump_svmlight  # noqa: E402

CS = c_sweep.C_GRID  # 1 .. 1e5
EPSILON = 1e-3


def tiny(seed, n_docs=400):
    return synthetic.letor_like(n_docs, n_features=8, sizes=(10, 40), seed=seed)


def check_rows(rows, datasets, folds, algorithms, Cs):
    fits = [r for r in rows if r["fold"] != "mean"]
    for dataset in datasets:
        for fold in folds:
            for algorithm in algorithms:
                mine = [r for r in fits if (r["dataset"], r["fold"], r["algorithm"]) ==
                        (dataset, fold, algorithm)]
                assert [r["C"] for r in mine] == list(Cs)
                assert all(r["status"] == "converged" for r in mine)
                # P*(C) is nondecreasing in C and a converged fit is within C * epsilon of
                # it: P(w_C) <= P*(C) + C eps <= P*(C') + C eps <= P(w_C') + C eps, C < C'
                for low, high in zip(mine, mine[1:]):
                    assert low["primal_objective"] <= high["primal_objective"] + \
                        low["C"] * low["epsilon"] + 1e-9 * high["primal_objective"]
                # P*(C) is concave with P*(0) = 0, so P*(C) / C is nonincreasing:
                # P(w_C') / C' <= P*(C') / C' + eps <= P*(C) / C + eps <= P(w_C) / C + eps
                for low, high in zip(mine, mine[1:]):
                    assert high["primal_objective"] / high["C"] <= \
                        low["primal_objective"] / low["C"] + high["epsilon"] + 1e-9
                # and 0 < P(w_C) <= P*(C) + C eps <= P(0) + C eps <= C (1 + eps): Delta <= 1
                for r in mine:
                    assert 0 < r["primal_objective"] <= r["C"] * (1 + r["epsilon"]) + 1e-9
    assert len(fits) == len(datasets) * len(folds) * len(algorithms) * len(Cs)
    for r in rows:
        assert 0 <= r["qp_share"] <= 1 and 0 <= r["oracle_share"] <= 1
        assert r["qp_share"] + r["oracle_share"] <= 1 + 1e-9
        assert r["iterations"] >= 1 and r["working_set_size"] >= 1
        assert r["duality_gap"] >= -1e-6 * abs(r["primal_objective"])
        assert 0 <= r["test_map"] <= 1


def test_sweep_on_synthetic_data_covers_every_C_and_is_recorded(tmp_path, monkeypatch):
    import _common

    monkeypatch.setattr(_common, "RESULTS", tmp_path)
    data = {"synthetic": {1: (tiny(1), tiny(2))}}
    rows = c_sweep.sweep(data, CS, ("1-slack", "n-slack"), max_time=60, epsilon=EPSILON)
    check_rows(rows, ["synthetic"], [1], ("1-slack", "n-slack"), CS)
    # both formulations solve the same problem: same optimum up to C * epsilon
    for C in CS:
        one, n = (next(r for r in rows if r["C"] == C and r["algorithm"] == a)
                  for a in ("1-slack", "n-slack"))
        assert abs(one["primal_objective"] - n["primal_objective"]) <= C * EPSILON + 1e-9
    markdown = c_sweep.markdown(rows, epsilon=EPSILON)
    _common.record("c_sweep_test", "test", rows, markdown)
    recorded = json.loads((tmp_path / "c_sweep_test.json").read_text())
    assert recorded["rows"] == rows
    table = (tmp_path / "c_sweep_test.md").read_text()
    assert table.count("| 1-slack |") == len(CS) and table.count("| n-slack |") == len(CS)


@pytest.mark.parametrize("binned", [False, True])
def test_command_line_over_two_folds_records_fits_and_means(tmp_path, monkeypatch, binned):
    import _common

    for fold in (1, 2):
        base = tmp_path / "data" / "TINY" / f"Fold{fold}"
        base.mkdir(parents=True)
        for part, seed in (("train", fold), ("test", 10 + fold)):
            dump_svmlight(base / f"{part}.txt", *tiny(seed))
    monkeypatch.setattr(_common, "DATA", tmp_path / "data")
    monkeypatch.setattr(_common, "RESULTS", tmp_path / "results")
    Cs = (1.0, 10.0, 100.0)
    rows = c_sweep.main(["--datasets", "TINY", "--folds", "1,2", "--C", "1,10,100",
                         "--max-time", "60"] + (["--binned", "--thresholds", "4"] if binned
                                                else []))
    check_rows(rows, ["TINY"], [1, 2], ["1-slack"], Cs)
    means = [r for r in rows if r["fold"] == "mean"]
    assert [r["C"] for r in means] == list(Cs)
    for mean in means:
        fits = [r for r in rows if r["fold"] != "mean" and r["C"] == mean["C"]]
        assert mean["primal_objective"] == pytest.approx(
            sum(r["primal_objective"] for r in fits) / 2)
    if binned:  # 8 base features, at most 4 thresholds each
        assert all(8 < r["n_features"] <= 32 for r in rows)
    name = "c_sweep_binned" if binned else "c_sweep"
    recorded = json.loads((tmp_path / "results" / f"{name}.json").read_text())
    assert recorded["rows"] == rows
    assert "--folds 1,2" in recorded["command"]
    report = (tmp_path / "results" / f"{name}.md").read_text()
    assert "### TINY, mean over folds 1, 2" in report and "### TINY Fold2" in report
