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


_KILLED = """Iter 1: ........*(NumConst=1, SV=1, CEps=100.0000, QPEps=0.0000)
Iter 2: ........*(NumConst=2, SV=2, CEps=0.0203, QPEps=0.0079)
Iter 3: ......"""


def test_svm_rank_outcome_and_progress_are_read_from_its_output():
    """A stop by its rule, a broken QP (dual nan, as at -e 2e-7 on MQ2008 at -c 0.01) and a
    run killed mid-iteration: its iterations, working set and violation so far."""
    stopped = "Upper bound on duality gap: 0.00003\nDual objective value: dval=0.87695\n" \
        "Number of iterations: 8\nconstraints in final working set: 7 (of 7)\n"
    assert vs_svm_rank.svm_rank_outcome(stopped, 0) == "stopped"
    assert vs_svm_rank.svm_rank_iterations(stopped) == 8
    assert vs_svm_rank.svm_rank_working_set(stopped) == 7
    broken = "Upper bound on duality gap: nan\nDual objective value: dval=nan\n"
    assert vs_svm_rank.svm_rank_outcome(broken, 0) == "QP failed"
    assert vs_svm_rank.svm_rank_relative_gap(broken + "Primal objective value: pval=1.1\n") \
        is None
    hidden = "Upper bound on duality gap: 0.00000\nPrimal objective value: pval=0.51286\n"
    assert vs_svm_rank.svm_rank_relative_gap(hidden) is None  # below its 5 decimals
    assert vs_svm_rank.svm_rank_relative_gap(hidden.replace("0.00000", "0.00100")) == \
        0.001 / 0.51286
    assert vs_svm_rank.svm_rank_outcome(_KILLED, None) == "timed out"
    assert vs_svm_rank.svm_rank_iterations(_KILLED) == 3
    assert vs_svm_rank.svm_rank_working_set(_KILLED) == 2
    assert vs_svm_rank.svm_rank_violation(_KILLED) == 0.0203


def test_svm_rank_killed_at_its_timeout_gives_upper_bounds(tmp_path, monkeypatch):
    """--svm-rank-timeout: a stand-in that never ends is killed, the row says so and its
    ratios are marked as upper bounds (its time is at least the timeout)."""
    import _common

    monkeypatch.setattr(_common, "RESULTS", tmp_path)
    fake = tmp_path / "svm_rank_learn"
    fake.write_text("#!/bin/sh\necho 'Iter 1: ..*(NumConst=1, SV=1, CEps=0.5000, "
                    "QPEps=0.0)'\nexec sleep 600\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    (row,) = vs_svm_rank.main(["--svm-rank", str(fake), "--datasets", "sparse", "--Cs", "10",
                               "--repeats", "1", "--scale", "0.005",
                               "--svm-rank-timeout", "1"])
    assert row["svm_rank_outcomes"] == ["timed out"] and row["svm_rank_seconds"] >= 1
    (line,) = [text for text in (tmp_path / "vs_svm_rank.md").read_text().splitlines()
               if text.startswith("| sparse |")]
    assert "timed out at 1 s" in line and f"| < {row['ratio']:.2f} |" in line
