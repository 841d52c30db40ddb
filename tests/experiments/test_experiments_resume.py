"""Long experiments: every finished trial (fold-method run) kept on disk, ``--resume``
continues an interrupted run to the same results as an uninterrupted one, and progress lines
carry an estimate of the time left.

Interruptions land where they are tested by construction: the model selection of a given
trial (unit) raises, or -- in a child process -- announces that it has started and waits
until the test signals it."""

import io
import json
import os
import re
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from svmmap.data.io import dump_svmlight
from svmmap.errors import SVMMapError
from svmmap.experiments import journal as journal_module
from svmmap.experiments import letor, trials
from svmmap.experiments.meter import Meter

from conftest import ROOT, random_collection

# 12 trials x 5 test queries over a pool of 60: every query is tested, so the Wilcoxon test
# compares 60 pairs (scipy's normal approximation, not its slow small-sample permutations)
TRIAL_ARGS = ["--trials", "12", "--sizes", "3,2,5", "--bin", "0", "--methods",
              "svm-map,best-feature", "--grid", "0.1,1", "--seed", "3"]
METHODS_PER_TRIAL = 2


@pytest.fixture(scope="module")
def pool_file(tmp_path_factory):
    X, y, qid = random_collection(7, n_queries=60, docs=(5, 8), rate=0.3)
    path = tmp_path_factory.mktemp("data") / "pool.txt"
    dump_svmlight(path, X, y, qid)
    return path


@pytest.fixture(scope="module")
def letor_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("letor")
    for fold in (1, 2):
        for s, split in enumerate(("train", "vali", "test")):
            X, y, qid = random_collection(10 * fold + s, n_queries=5, docs=(5, 9))
            (folder / f"Fold{fold}").mkdir(exist_ok=True)
            dump_svmlight(folder / f"Fold{fold}" / f"{split}.txt", X, y,
                          qid + 100 * s + 1000 * fold)
    return folder


def _stable(results):
    """A result file without what depends on the session (wall times, the command)."""
    results = json.loads(json.dumps(results))
    results.pop("seconds")
    results.pop("command", None)
    for entry in results["methods"].values():
        entry.pop("seconds", None)
        for fold in entry.get("folds", {}).values():
            fold.pop("seconds")
    return results


def _interrupt_at(monkeypatch, module, call, exception):
    """Make the ``call``-th model selection (1-based) of ``module`` raise ``exception``."""
    real, count = module.select, [0]

    def select(*args):
        count[0] += 1
        if count[0] == call:
            raise exception
        return real(*args)

    monkeypatch.setattr(module, "select", select)


@pytest.fixture(scope="module")
def uninterrupted(pool_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("whole")
    trials.main(["--data", str(pool_file), "--out", str(out), "-q", *TRIAL_ARGS])
    return json.loads((out / "trials.json").read_text())


@pytest.mark.parametrize("k", [0, 5, 11])
def test_trials_interrupted_then_resumed_equal_uninterrupted(pool_file, tmp_path, monkeypatch,
                                                             capsys, uninterrupted, k):
    out = tmp_path / "out"
    # Ctrl-C inside trial k's second method: trials 0..k-1 are finished, trial k is not
    _interrupt_at(monkeypatch, trials, k * METHODS_PER_TRIAL + 2, KeyboardInterrupt)
    with pytest.raises(SystemExit) as exit_:
        trials.main(["--data", str(pool_file), "--out", str(out), *TRIAL_ARGS])
    assert exit_.value.code == 130
    err = capsys.readouterr().err
    assert f"interrupted: {k} of 12 trials are kept in {out / 'trials.jsonl'}" in err
    assert "--resume" in err and not (out / "trials.json").exists()
    lines = (out / "trials.jsonl").read_text().splitlines()
    assert [json.loads(line)["unit"] for line in lines[1:]] == [str(t) for t in range(k)]
    monkeypatch.undo()
    trials.main(["--data", str(pool_file), "--out", str(out), "-q", "--resume", *TRIAL_ARGS])
    resumed = json.loads((out / "trials.json").read_text())
    assert _stable(resumed) == _stable(uninterrupted)


def test_a_failing_trial_keeps_the_finished_ones(pool_file, tmp_path, monkeypatch,
                                                 uninterrupted):
    out = tmp_path / "out"
    _interrupt_at(monkeypatch, trials, 1 * METHODS_PER_TRIAL + 1, RuntimeError("boom"))
    with pytest.raises(RuntimeError, match="boom"):
        trials.main(["--data", str(pool_file), "--out", str(out), "-q", *TRIAL_ARGS])
    assert len((out / "trials.jsonl").read_text().splitlines()) == 2   # config + trial 0
    monkeypatch.undo()
    trials.main(["--data", str(pool_file), "--out", str(out), "-q", "--resume", *TRIAL_ARGS])
    assert _stable(json.loads((out / "trials.json").read_text())) == _stable(uninterrupted)


def test_resume_refusals_and_a_torn_last_line(pool_file, tmp_path, monkeypatch, capsys,
                                              uninterrupted):
    out = tmp_path / "out"
    _interrupt_at(monkeypatch, trials, 2 * METHODS_PER_TRIAL + 1, KeyboardInterrupt)
    with pytest.raises(SystemExit):
        trials.main(["--data", str(pool_file), "--out", str(out), "-q", *TRIAL_ARGS])
    monkeypatch.undo()
    capsys.readouterr()
    # without --resume, kept trials are not overwritten
    with pytest.raises(SystemExit) as exit_:
        trials.main(["--data", str(pool_file), "--out", str(out), "-q", *TRIAL_ARGS])
    assert exit_.value.code == 1
    assert "2 finished unit(s) of an earlier run are kept here; pass --resume" in \
        capsys.readouterr().err
    # a different design cannot be resumed
    with pytest.raises(SystemExit) as exit_:
        trials.main(["--data", str(pool_file), "--out", str(out), "-q", "--resume",
                     *TRIAL_ARGS[:-1], "4"])
    assert "cannot resume: the stored run differs in seed" in capsys.readouterr().err
    # a line cut short by a kill while writing is redone
    with open(out / "trials.jsonl", "a") as handle:
        handle.write('{"unit": "2", "record": {"svm-ma')
    trials.main(["--data", str(pool_file), "--out", str(out), "-q", "--resume", *TRIAL_ARGS])
    assert _stable(json.loads((out / "trials.json").read_text())) == _stable(uninterrupted)


def test_a_broken_line_inside_the_journal_is_an_error(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text('{"config": {}}\nnot json\n{"unit": "0", "record": {}}\n')
    with pytest.raises(SVMMapError, match=f"{path}:2: not a journal line"):
        journal_module.Journal(path, {}, resume=True)


def test_signalled_child_resumes_to_the_same_results(pool_file, tmp_path, uninterrupted):
    """A child process announces that trial 2 has started and waits; SIGINT then lands
    inside trial 2; the child reports what is kept and exits 130; --resume finishes."""
    out = tmp_path / "out"
    # the child takes Ctrl-C as a terminal's foreground job does, whatever it inherits (a
    # shell's background job starts with SIGINT ignored, which Python then keeps)
    child = textwrap.dedent(f"""
        import signal, sys, time
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from svmmap.experiments import trials
        real, calls = trials.select, [0]
        def select(*args):
            calls[0] += 1
            if calls[0] == {2 * METHODS_PER_TRIAL + 1}:
                print("IN TRIAL 3", flush=True)
                while True:
                    time.sleep(0.05)
            return real(*args)
        trials.select = select
        trials.main(sys.argv[1:])
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-c", child, "--data", str(pool_file), "--out", str(out),
         *TRIAL_ARGS], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    progress = []
    for line in process.stdout:
        if line.startswith("IN TRIAL 3"):
            break
        progress.append(line)
    process.send_signal(signal.SIGINT)
    rest, err = process.communicate(timeout=300)
    assert process.returncode == 130, err
    assert "interrupted: 2 of 12 trials are kept" in err
    # progress lines with an estimate of the time left (not a terminal: plain lines)
    assert len(progress) == 2 and all(
        re.search(r"\[\d/12, \S+ elapsed, ~\S+ left\]$", p.rstrip()) for p in progress)
    trials.main(["--data", str(pool_file), "--out", str(out), "-q", "--resume", *TRIAL_ARGS])
    assert _stable(json.loads((out / "trials.json").read_text())) == _stable(uninterrupted)


def test_letor_interrupted_then_resumed(letor_folder, tmp_path, monkeypatch, capsys):
    args = ["--data", str(letor_folder), "--methods", "svm-map,best-feature", "--grid",
            "0.1,1", "-q"]
    whole = tmp_path / "whole"
    letor.main([*args, "--out", str(whole)])
    out = tmp_path / "out"
    _interrupt_at(monkeypatch, letor, 3, KeyboardInterrupt)   # Fold2's first method
    with pytest.raises(SystemExit) as exit_:
        letor.main([*args, "--out", str(out)])
    assert exit_.value.code == 130
    assert "interrupted: 2 of 4 fold-method runs are kept" in capsys.readouterr().err
    monkeypatch.undo()
    letor.main([*args, "--out", str(out), "--resume"])
    expected = _stable(json.loads((whole / "letor.json").read_text()))
    resumed = _stable(json.loads((out / "letor.json").read_text()))
    assert resumed == expected
    assert (out / "letor.csv").read_text().count("\n") == \
        (whole / "letor.csv").read_text().count("\n")


def test_meter_lines_and_estimate(capsys):
    meter = Meter(total=5, done=2, stream=sys.stdout, tty=False)
    assert meter.seconds_left() is None        # nothing finished in this session yet
    meter.step("trial 3/5: x")
    meter.step("trial 4/5: y")
    left = meter.seconds_left()
    assert left is not None and left >= 0
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"trial 3/5: x  \[3/5, \S+ elapsed, ~\S+ left\]", lines[0])
    assert lines[1].startswith("trial 4/5: y  [4/5,")
    np.testing.assert_equal(meter.done, 4)


@pytest.mark.parametrize("seconds, text", [(None, "?"), (59.6, "1m00s"), (1199.6, "20m00s"),
                                           (3599.7, "1h00m"), (42.2, "42s")])
def test_durations_round_to_whole_seconds_first(seconds, text):
    from svmmap.core.progress import _duration

    assert _duration(seconds) == text


def test_meter_on_a_terminal_writes_lines_above_a_bar(capsys):
    import io

    lines = io.StringIO()
    meter = Meter(total=3, done=1, stream=lines, tty=True)
    meter.step("trial 2/3: a")
    meter.step("trial 3/3: b")
    meter.close()
    assert lines.getvalue().splitlines() == ["trial 2/3: a", "trial 3/3: b"]
    assert "3/3" in capsys.readouterr().err      # the bar, on stderr


def test_one_meter_counts_two_runs_and_their_resumed_trials(pool_file, tmp_path, capsys,
                                                             monkeypatch):
    """trec_tables' case: a meter owned by the caller, total = both runs' trials; trials
    taken from a journal count as done (not timed), each trial finished steps it."""
    first, second = tmp_path / "first", tmp_path / "second"
    _interrupt_at(monkeypatch, trials, 3 * METHODS_PER_TRIAL + 1, KeyboardInterrupt)
    with pytest.raises(SystemExit):
        trials.main(["--data", str(pool_file), "--out", str(first), "-q", *TRIAL_ARGS])
    monkeypatch.undo()
    capsys.readouterr()
    meter = Meter(total=24, stream=sys.stdout, tty=False)
    trials.main(["--data", str(pool_file), "--out", str(first), "--resume", *TRIAL_ARGS],
                meter=meter)
    trials.main(["--data", str(pool_file), "--out", str(second), *TRIAL_ARGS], meter=meter)
    lines = [line for line in capsys.readouterr().out.splitlines()
             if line.startswith("trial ")]
    assert meter.done == 24 and len(lines) == 24 - 3
    assert re.search(r"\[4/24, \S+ elapsed, ~\S+ left\]$", lines[0])
    assert re.search(r"\[24/24, \S+ elapsed, ~0s left\]$", lines[-1])


def test_the_estimate_counts_the_units_running_beside_the_first(monkeypatch):
    """Four units on two workers, a clock the test sets: after the first (10 s) the other
    is taken to finish with it, 3 left -> 15 s; from the second on, elapsed / finished."""
    from svmmap.experiments import meter as meter_module

    clock = [0.0]
    monkeypatch.setattr(meter_module.time, "monotonic", lambda: clock[0])
    parallel = Meter(total=4, stream=io.StringIO(), tty=False, workers=2)
    serial = Meter(total=4, stream=io.StringIO(), tty=False)
    clock[0] = 10.0
    parallel.step("1")
    serial.step("1")
    assert parallel.seconds_left() == 15.0 and serial.seconds_left() == 30.0
    clock[0] = 11.0
    parallel.step("2")
    assert parallel.seconds_left() == 11.0
    clock[0] = 21.0
    parallel.step("3")
    assert parallel.seconds_left() == 7.0
