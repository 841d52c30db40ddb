"""benchmarks/vs_svm_rank.py without svm_rank (it measures nothing and says so) and with a
stand-in executable that prints svm_rank's iteration line: the rows it records are the runs
it made, svmmap's status and iterations are read from its model file, and svm_rank is given
C/100.  No timing is asserted."""

import json
import stat
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import vs_svm_rank  # noqa: E402


def test_without_svm_rank_nothing_is_measured(capsys):
    assert vs_svm_rank.main([]) is None
    assert "no --svm-rank given" in capsys.readouterr().out


def test_rows_come_from_alternating_runs(tmp_path, monkeypatch):
    import _common

    monkeypatch.setattr(_common, "RESULTS", tmp_path)
    calls = tmp_path / "calls.txt"
    fake = tmp_path / "svm_rank_learn"
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> {calls}\necho 'Number of iterations: 7'\n"
                    "touch \"$4\"\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    rows = vs_svm_rank.main(["--svm-rank", str(fake), "--datasets", "sparse,dense",
                             "--Cs", "1,10", "--repeats", "2", "--scale", "0.005"])
    assert [(r["dataset"], r["C"]) for r in rows] == [
        ("sparse", 1.0), ("sparse", 10.0), ("dense", 1.0), ("dense", 10.0)]
    for r in rows:
        assert r["svmmap_status"] == "converged" and r["svmmap_iterations"] >= 1
        assert r["svm_rank_iterations"] == 7 and len(r["ratios"]) == 2
    given = [line.split()[:2] for line in calls.read_text().splitlines()]
    assert given == [["-c", "0.01"]] * 2 + [["-c", "0.1"]] * 2 + [["-c", "0.01"]] * 2 + \
        [["-c", "0.1"]] * 2
    recorded = json.loads((tmp_path / "vs_svm_rank.json").read_text())
    assert recorded["rows"] == rows and "SVM_RANK_LEARN" in recorded["command"]


def test_match_gap_runs_svmmap_at_svm_ranks_certified_gap(tmp_path, monkeypatch):
    """--match-gap: svmmap also runs with --rel-gap the gap the stand-in certifies (0.02 / 10
    = 2e-3), and the row and the second table report it."""
    import _common

    monkeypatch.setattr(_common, "RESULTS", tmp_path)
    fake = tmp_path / "svm_rank_learn"
    fake.write_text("#!/bin/sh\necho 'Upper bound on duality gap: 0.02000'\n"
                    "echo 'Primal objective value: pval=10.00000'\n"
                    "echo 'Number of iterations: 7'\ntouch \"$4\"\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    assert vs_svm_rank.svmmap_command("learn", "t", "m", 10.0, 2e-3)[3:7] == \
        ["-c", "10", "--rel-gap", "0.002"]
    rows = vs_svm_rank.main(["--svm-rank", str(fake), "--datasets", "sparse", "--Cs", "10",
                             "--repeats", "2", "--scale", "0.005", "--match-gap"])
    (row,) = rows
    assert row["matched_targets"] == [2e-3, 2e-3] and len(row["matched_ratios"]) == 2
    assert row["matched_status"] == "converged" and row["matched_iterations"] >= 1
    assert all(g <= 2e-3 for g in row["matched_relative_gaps"])
    markdown = (tmp_path / "vs_svm_rank.md").read_text()
    assert "time ratio at matched gap" in markdown and "| sparse | 10 (0.1) | - | 0.002 |" \
        in markdown
