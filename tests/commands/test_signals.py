"""Ctrl-C and SIGTERM stop a command as a whole, keep what it has, and say so (issue 22,
class 4).

Every signal lands inside the phase it tests by construction: the child runs the console
entry point (svmmap.commands.console) with a training callback that, at the phase, prints a line and
waits on its standard input; the test sends the signal once it has read that line, and only
then writes to the child's standard input.  No test depends on how fast the machine is."""

import json
import os
import shutil
import signal
import subprocess

import pytest

from svmmap import dump_svmlight

from conftest import PAUSE_IN_IMPORT, random_collection

PYTHON = shutil.which("python") or "python"

#: argv: python -c _WAIT_IN_TRAINING C_OR_ANY ITERATION command args...; the callback waits
#: at the given iteration of the fit at C (ANY: the first fit)
_WAIT_IN_TRAINING = """\
import sys
import svmmap.commands.learn as cli
import svmmap.commands.console as console

at_C, at_iteration = sys.argv[1], int(sys.argv[2])


class WaitHere:
    def on_iteration(self, progress):
        if (at_C == "ANY" or progress.C == float(at_C)) and \\
                progress.record.iteration == at_iteration:
            print(f"in training: C={progress.C:g} iteration {at_iteration}", flush=True)
            sys.stdin.readline()  # returns once the test has sent the signal


cli._learn_callbacks = lambda verbose: [WaitHere()]
command = getattr(console, sys.argv[3])
sys.argv[:4] = ["svmmap_learn"]
sys.exit(command())
"""

NAMES = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}


@pytest.fixture
def data(tmp_path):
    X, y, qid = random_collection(seed=21, n_queries=30, docs=(8, 20), n_features=8)
    train, vali = tmp_path / "train.txt", tmp_path / "vali.txt"
    dump_svmlight(train, X[qid < 20], y[qid < 20], qid[qid < 20])
    dump_svmlight(vali, X[qid >= 20], y[qid >= 20], qid[qid >= 20])
    return train, vali


def _signal_in_phase(argv, at_C, sig, new_session=False, at_iteration=1):
    """Run svmmap_learn with ``argv`` under the waiting callback, send ``sig`` once it says
    it is at ``at_iteration`` of the fit at ``at_C`` (to its whole process group with
    ``new_session``, as a terminal's Ctrl-C does); return (status, stdout, stderr)."""
    process = subprocess.Popen(
        [PYTHON, "-c", _WAIT_IN_TRAINING, at_C, str(at_iteration), "learn_main",
         *map(str, argv)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=new_session)
    try:
        lines = []
        while not (line := process.stdout.readline()).startswith("in training:"):
            assert line, "".join(lines) + process.communicate()[1]
            lines.append(line)
        if new_session:
            os.killpg(process.pid, sig)
        else:
            process.send_signal(sig)
        out, err = process.communicate("sent\n", timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, "".join(lines) + out, err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_the_c_path_stops_the_whole_path(data, tmp_path, sig):
    """The issue: SIGINT during the C path stopped only the current C, and the path trained
    the rest; SIGTERM had no handler at all.  Now the path ends at the C in training (its
    best w so far kept as that C's row), C is chosen among the fits made, the model is saved
    marked interrupted, and the last line and the exit status say which signal."""
    train, vali = data
    model = tmp_path / "m.json"
    status, out, err = _signal_in_phase(
        ["-c", "0.1,1,10,100", "--vali", vali, train, model], "1", sig)
    assert "Traceback" not in err
    assert status == 128 + sig, err
    assert err.strip().splitlines()[-1] == f"svmmap_learn: {NAMES[sig]}"
    assert "interrupted: the C values after the last row were not trained" in out
    document = json.loads(model.read_text())
    selection = document["training"]["selection"]
    assert [row["C"] for row in selection["path"]] == [0.1, 1.0]
    assert selection["path"][0]["status"] == "converged"
    assert selection["path"][1]["status"] == "interrupted"
    assert selection["interrupted"] is True
    assert document["training"]["status"] == "interrupted"
    assert document["params"]["C"] in (0.1, 1.0)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_training_saves_the_best_model(data, tmp_path, sig):
    train, _ = data
    model = tmp_path / "m.json"
    status, _, err = _signal_in_phase(["-c", "100", train, model], "ANY", sig,
                                      at_iteration=2)
    assert "Traceback" not in err
    assert status == 128 + sig, err
    assert err.strip().splitlines()[-1] == f"svmmap_learn: {NAMES[sig]}"
    assert "training stopped before convergence (interrupted)" in err
    document = json.loads(model.read_text())
    assert document["training"]["status"] == "interrupted"
    assert document["training"]["iterations"] >= 1


def test_sigterm_while_the_command_imports_is_one_line(data, tmp_path):
    """As Ctrl-C at start-up (tests/commands/test_hostile.py): the child pauses inside the import of
    numpy and is terminated there."""
    train, _ = data
    process = subprocess.Popen([PYTHON, "-c", PAUSE_IN_IMPORT, "numpy", "learn_main",
                                str(train), str(tmp_path / "m")], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "importing numpy\n", process.communicate()[1]
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate("sent\n", timeout=120)
    assert "Traceback" not in err
    assert process.returncode == 143, err
    assert err.strip().splitlines()[-1] == "svmmap_learn: terminated"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_file_is_read_beside_the_imports_is_one_line(data, tmp_path, sig):
    """svmmap_learn reads the training file in a helper thread while it imports the training
    modules (svmmap.commands.common.Background): the child pauses inside the import of
    svmstruct_api.learner, with the reading under way or done, and is signalled there; the
    command ends as at any other moment of start-up.  The signal is acted on once the import
    is over (svmmap.commands.console), in training or after it: a model written is whole, the best
    so
    far marked interrupted or the converged one."""
    train, _ = data
    model = tmp_path / "m.json"
    # -v 0: where the signal lands is not this test's (no progress line to end first)
    process = subprocess.Popen([PYTHON, "-c", PAUSE_IN_IMPORT, "svmstruct_api.learner",
                                "learn_main", "-v", "0", str(train), str(model)],
                               stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "importing svmstruct_api.learner\n", \
        process.communicate()[1]
    process.send_signal(sig)
    _, err = process.communicate("sent\n", timeout=120)
    assert "Traceback" not in err
    assert process.returncode == 128 + sig, err
    assert err.strip().splitlines()[-1] == f"svmmap_learn: {NAMES[sig]}"
    if model.exists():
        assert json.loads(model.read_text())["training"]["status"] in ("interrupted",
                                                                       "converged")


def test_ctrl_c_during_dask_training_saves_the_model_without_worker_tracebacks(data,
                                                                                tmp_path):
    """A terminal's Ctrl-C reaches the whole process group, the Dask worker processes too:
    they printed tracebacks while the command saved its model.  The workers leave Ctrl-C to
    the command, which stops training, saves the best model and closes the cluster."""
    pytest.importorskip("distributed")
    train, _ = data
    model = tmp_path / "m.json"
    status, _, err = _signal_in_phase(["--dask-workers", "2", "-c", "100", train, model],
                                      "ANY", signal.SIGINT, new_session=True)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert status == 130, err
    assert err.strip().splitlines()[-1] == "svmmap_learn: interrupted"
    assert json.loads(model.read_text())["training"]["status"] == "interrupted"


class _StopAt:
    """A callback that raises KeyboardInterrupt (as Ctrl-C does) in the fit at C."""

    def __init__(self, C):
        self.C = C

    def on_iteration(self, progress):
        if progress.C == self.C:
            raise KeyboardInterrupt


def test_svmmapcv_interrupted_in_a_fit_stops_the_path():
    from svmmap.model_selection import SVMMapCV

    X, y, qid = random_collection(seed=3, n_queries=16)
    model = SVMMapCV(Cs=[0.1, 1, 10]).fit(X, y, qid, callbacks=[_StopAt(1.0)])
    assert [row["C"] for row in model.path_] == [0.1, 1.0]
    assert [row["status"] for row in model.path_] == ["converged", "interrupted"]
    assert model.selection_["interrupted"] is True
    assert model.training_result_.status == "interrupted"


def test_svmmapcv_interrupted_between_fits_stops_the_path(monkeypatch):
    """Ctrl-C while the next C is warm-started (its QP is re-solved before any iteration)."""
    from svmmap.model_selection import SVMMapCV
    from svmstruct_api.learner import BaseSSVM

    start = BaseSSVM._start

    def interrupted_start(self, model, previous=None):
        if previous is not None and self.C == 10.0:
            raise KeyboardInterrupt
        return start(self, model, previous)

    monkeypatch.setattr(BaseSSVM, "_start", interrupted_start)
    X, y, qid = random_collection(seed=3, n_queries=16)
    model = SVMMapCV(Cs=[0.1, 1, 10, 100]).fit(X, y, qid)
    assert [row["C"] for row in model.path_] == [0.1, 1.0]
    assert all(row["status"] == "converged" for row in model.path_)
    assert model.selection_["interrupted"] is True
    assert model.training_result_.status == "interrupted"


def test_ctrl_c_before_the_first_fit_of_a_path_propagates(monkeypatch):
    from svmmap.model_selection import SVMMapCV
    from svmstruct_api.learner import BaseSSVM

    def interrupted_start(self, model, previous=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(BaseSSVM, "_start", interrupted_start)
    X, y, qid = random_collection(seed=3, n_queries=16)
    with pytest.raises(KeyboardInterrupt):
        SVMMapCV(Cs=[0.1, 1]).fit(X, y, qid)


_WAIT_IN_CLUSTER_START = """\
import sys
import svmmap.dask as svmmap_dask
import svmmap.commands.console as console


class Announced(svmmap_dask.LocalCluster):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        print("cluster started", flush=True)  # its workers are running
        sys.stdin.readline()  # returns once the test has sent the signal


svmmap_dask.LocalCluster = Announced
sys.argv[:1] = ["svmmap_learn"]
sys.exit(console.learn_main())
"""


def test_ctrl_c_while_the_dask_cluster_starts_is_one_line(data, tmp_path):
    """Ctrl-C to the process group just after the workers started, before training: the
    workers never see it (they started with SIGINT blocked); the command sees it as soon
    as the cluster is up and ends with one line, closing the cluster."""
    pytest.importorskip("distributed")
    train, _ = data
    process = subprocess.Popen(
        [PYTHON, "-c", _WAIT_IN_CLUSTER_START, "--dask-workers", "2", str(train),
         str(tmp_path / "m.json")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert process.stdout.readline() == "cluster started\n", process.communicate()[1]
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate("sent\n", timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert process.returncode == 130, err
    assert err.strip().splitlines()[-1] == "svmmap_learn: interrupted"
    assert not (tmp_path / "m.json").exists()
