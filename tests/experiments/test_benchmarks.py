"""The benchmark scripts run (at tiny sizes) and their outputs agree with each other; no
timing is asserted."""

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import kernels_before_after  # noqa: E402
import oracle_pass  # noqa: E402
import scaling  # noqa: E402
import synthetic  # noqa: E402


def test_oracle_pass_benchmark_runs_and_both_oracles_agree(tmp_path, monkeypatch):
    import _common

    monkeypatch.setattr(_common, "RESULTS", tmp_path)
    pass_rows, oracle_rows = oracle_pass.main(["--quick"])
    assert {(r["layout"], r["threads"]) for r in pass_rows} == {
        ("dense", 1), ("dense", 2), ("csr", 1), ("csr", 2)}
    assert all(r["pass_ms"] > 0 and r["bound_ms"] > 0 for r in pass_rows)
    assert all(r["h_difference"] < 1e-9 for r in oracle_rows)
    assert (tmp_path / "oracle_pass_quick.md").exists()



def test_kernels_before_after_benchmark_measures_every_kernel_in_both_checkouts(
        tmp_path, monkeypatch):
    import _common

    monkeypatch.setattr(_common, "RESULTS", tmp_path)
    rows = kernels_before_after.main(["--before", str(ROOT), "--after", str(ROOT), "--quick",
                                      "--rounds", "1"])
    kernels = {r["kernel"] for r in rows}
    assert {"map_constraints dense 1 thread(s)", "map_constraints csr 2 thread(s)",
            "ranking_coefficients", "ranking_roc_loss", "loss_constraints ndcg@10 csr",
            "ranking_losses p@10"} <= kernels
    assert all(r["before_ms"] > 0 and r["after_ms"] > 0 for r in rows)
    assert (tmp_path / "kernels_before_after_quick.md").exists()

def test_synthetic_collection_is_letor_shaped():
    X, y, qid = synthetic.letor_like(5000, n_features=46, sizes=(20, 200), seed=1)
    sizes = synthetic.np.bincount(qid)
    assert X.shape == (len(y), 46) and len(qid) <= 5000
    assert sizes.min() >= 20 and sizes.max() <= 200
    assert 0.2 < y.mean() < 0.3


def test_scaling_benchmark_runs_each_size_in_its_own_process(tmp_path, monkeypatch):
    import _common

    monkeypatch.setattr(_common, "RESULTS", tmp_path)
    rows = scaling.main(["--sizes", "300,3000", "--features", "12"])
    assert [r["features"] for r in rows] == [12, 12]
    assert rows[0]["documents"] < rows[1]["documents"] <= 3000
    assert all(r["peak_bytes"] > r["x_bytes"] > 0 and r["iterations"] >= 1 for r in rows)
