"""Bad input, degenerate queries, interrupted and hard training runs, determinism: whatever
a user feeds svmmap, it does the right thing or stops with one clear line."""

import json
import shutil
import signal
import subprocess

import numpy as np
import pytest
from cvxopt import solvers as cvxopt_solvers  # svmstruct_api.qp imports it when it solves

from svmmap import SVMMap, dump_svmlight, metrics
from svmmap.core.collection import QueryCollection
from svmmap.core.plugins import MapPlugin
from svmstruct_api.learner import make_learner
from svmstruct_api.qp import QPError, WorkingSet

from conftest import random_collection, run_command

GOOD = "1 qid:1 1:0.5 2:1\n0 qid:1 1:0.2 2:0\n"

# (file content, the reason the CLI must print after "train.txt:LINE: " or "train.txt: ")
BAD_FILES = [
    (b"", "train.txt: empty file"),
    (b"# only a comment\n\n", "train.txt: no data lines"),
    (b"qid:1 1:1\n", "train.txt:1: missing label"),
    (b"abc qid:1 1:1\n", "train.txt:1: label 'abc' is not a finite number"),
    (GOOD.encode() + b"1 1:1\n", "train.txt:3: missing qid:<id> after the label"),
    (b"1 qid: 1:1\n", "train.txt:1: malformed qid 'qid:'"),
    (b"1 qid:1 0:1\n", "train.txt:1: feature index '0' is not a positive integer"),
    (b"1 qid:1 -3:1\n", "train.txt:1: feature index '-3' is not a positive integer"),
    (b"1 qid:1 1.5:1\n", "train.txt:1: feature index '1.5' is not a positive integer"),
    (b"1 qid:1 1:1 1:2\n", "train.txt:1: feature index 1 repeated"),
    (b"1 qid:1 3:1 2:1\n", "train.txt:1: feature index 2 after 3: indices must increase"),
    (GOOD.encode() + b"0 qid:1 1:NULL\n", "train.txt:3: feature 1: value 'NULL' is not a finite"),
    (b"1 qid:1 1:nan\n", "train.txt:1: feature 1: value 'nan' is not a finite number"),
    (b"1 qid:1 1:inf\n", "train.txt:1: feature 1: value 'inf' is not a finite number"),
    (b"1 qid:1 1:1e999\n", "train.txt:1: feature 1: value '1e999' is not a finite number"),
    (b"1 qid:1 1:1\n0 qid:1 2:\xff\n", "train.txt:2: not valid UTF-8"),
    (b"1 qid:1 1:1\n0 qid:1 2147483648:1\n", "features (highest feature index)"),
]


@pytest.mark.parametrize("content, message", BAD_FILES,
                         ids=[m.split(": ", 1)[-1][:30] for _, m in BAD_FILES])
def test_bad_training_file_is_one_clear_line_and_no_model(tmp_path, content, message):
    train = tmp_path / "train.txt"
    train.write_bytes(content)
    proc = run_command("svmmap_learn", train, tmp_path / "model.json", check=False)
    assert proc.returncode == 1
    assert message in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert not (tmp_path / "model.json").exists()


@pytest.mark.parametrize("kind", ["missing", "directory", "index-missing"])
def test_unreadable_inputs(tmp_path, kind):
    target = tmp_path / "train.txt"
    if kind == "directory":
        target.mkdir()
        expected = "train.txt: is a directory"
    elif kind == "index-missing":
        target.write_text("part1.txt\n")
        expected = "train.txt:1: listed file 'part1.txt' not found"
    else:
        expected = "train.txt: file not found"
    proc = run_command("svmmap_learn", target, tmp_path / "model.json", check=False)
    assert proc.returncode == 1 and expected in proc.stderr and "Traceback" not in proc.stderr


def test_debug_flag_shows_the_traceback(tmp_path):
    proc = run_command("svmmap_learn", "--debug", tmp_path / "nope.txt", tmp_path / "m.json",
                       check=False)
    assert proc.returncode != 0 and "Traceback" in proc.stderr


def test_odd_but_valid_formatting_is_accepted(tmp_path):
    train = tmp_path / "train.txt"
    train.write_bytes(b"# header comment\r\n1\tqid:1\t1:0.5 2:1   \r\n0 qid:1 1:0.2 # doc\r\n"
                      b"\r\n0 qid:2 2:1\r\n1 qid:1 1:0.9\r\n1 qid:2 1:1\r\n")
    proc = run_command("svmmap_learn", train, tmp_path / "m.json", check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "m.json").read_text())["n_features_in"] == 2


def test_degenerate_queries_train_and_evaluate_without_numerical_warnings():
    X, y, qid = random_collection(seed=11, n_queries=8, docs=(4, 10))
    starts = np.flatnonzero(np.diff(qid, prepend=-1))
    y[starts], y[starts + 1] = 1.0, 0.0  # the 8 random queries all carry constraints
    extra_X = np.zeros((9, X.shape[1]))
    extra_X[5:] = 1.0  # one query whose documents are all identical: every score tied
    X = np.vstack([X, extra_X])
    y = np.concatenate([y, [1], [1, 1], [0, 0], [1, 0, 0, 1]])  # 103: same AP for any tie order
    qid = np.concatenate([qid, [100], [101, 101], [102, 102], [103] * 4])
    # 100: a single document; 101: only relevant; 102: no relevant; 103: all features tied
    with np.errstate(all="raise"), pytest.warns(UserWarning, match="3 of 12 queries"):
        model = SVMMap(C=10).fit(X, y, qid)
        letor = metrics.mean_average_precision(model.decision_function(X), y, qid)
        trec = metrics.mean_average_precision(model.decision_function(X), y, qid,
                                              convention="trec_eval")
    assert model.n_queries_used_ == 9
    assert model.training_result_.converged
    # both conventions count query 102 (no relevant document) as AP 0 among 12, and no other
    # tie changes an AP here (query 103: every order of its tie gives the same AP)
    assert letor == pytest.approx(trec)
    ids, values = metrics.per_query("ap", model.decision_function(X), y, qid,
                                    convention="trec_eval")
    assert len(ids) == 12 and values[list(ids).index(102)] == 0.0


def test_all_features_zero_gives_zero_model():
    X = np.zeros((20, 3))
    y = np.tile([1.0, 0.0], 10)
    qid = np.repeat(np.arange(4), 5)
    with np.errstate(all="raise"):
        model = SVMMap(C=1).fit(X, y, qid)
    assert np.all(model.coef_ == 0) and model.training_result_.converged


def _long_training_file(tmp_path):
    X, y, qid = random_collection(seed=12, n_queries=300, docs=(40, 80), n_features=40)
    X += np.random.default_rng(0).normal(scale=3.0, size=X.shape)  # hard to separate
    path = tmp_path / "big.txt"
    dump_svmlight(path, X, y, qid)
    return path


# The child runs svmmap_learn's entry point with a pause after the third iteration: it says
# so and waits until the test has sent SIGINT, so the signal lands in training by construction.
_PAUSE_IN_TRAINING = """\
import sys
import svmstruct_api.learner as learner
import svmmap.commands.console as console

notify = learner.notify

def pausing_notify(callbacks, hook, *args):
    notify(callbacks, hook, *args)
    if hook == "on_iteration" and args[0].iteration == 3:
        print("paused after iteration 3", flush=True)
        sys.stdin.readline()  # returns once the test has sent SIGINT

learner.notify = pausing_notify
sys.argv[0] = "svmmap_learn"
sys.exit(console.learn_main())
"""


def test_ctrl_c_writes_the_best_model_so_far_marked_not_converged(tmp_path):
    train, model = _long_training_file(tmp_path), tmp_path / "model.json"
    proc = subprocess.Popen([shutil.which("python") or "python", "-c", _PAUSE_IN_TRAINING,
                             "-c", "1e6", "-e", "1e-6", "-w", "0", "-v", "2",
                             str(train), str(model)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in proc.stdout:  # -v 2: the iteration lines come first
        if line == "paused after iteration 3\n":
            break
    else:
        pytest.fail(proc.communicate()[1])
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate("sent\n", timeout=120)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "interrupted" in stderr
    document = json.loads(model.read_text())
    assert document["training"]["status"] == "interrupted"
    assert document["training"]["iterations"] == 3


@pytest.mark.parametrize("limit, status", [(["--max-iter", "2"], "max_iter"),
                                           (["--max-time", "0.000001"], "max_time")])
def test_limits_write_a_model_marked_not_converged(tmp_path, limit, status):
    X, y, qid = random_collection(seed=13, n_queries=30, docs=(10, 30))
    train = tmp_path / "train.txt"
    dump_svmlight(train, X, y, qid)
    proc = run_command("svmmap_learn", "-c", "1000", *limit, train, tmp_path / "m.json",
                       check=False)
    assert proc.returncode == 0, proc.stderr
    assert "before convergence" in proc.stderr
    assert json.loads((tmp_path / "m.json").read_text())["training"]["status"] == status


def test_same_input_gives_byte_identical_models_whatever_the_thread_count(tmp_path):
    X, y, qid = random_collection(seed=14, n_queries=40, docs=(10, 40))
    train = tmp_path / "train.txt"
    dump_svmlight(train, X, y, qid)
    outputs = []
    for threads in ("1", "1", "2"):
        model = tmp_path / f"m{len(outputs)}.json"
        assert run_command("svmmap_learn", "-c", "10", "--threads", threads, train,
                           model, check=False).returncode == 0
        outputs.append(model.read_bytes())
    # the thread count is a run-time setting, not stored: the files are byte-identical
    assert outputs[0] == outputs[1] == outputs[2]
    assert "n_threads" not in json.loads(outputs[2])["params"]


def test_qp_failure_is_reported_not_returned(monkeypatch):
    def failing_qp(*args, **kwargs):
        raise ValueError("Rank(A) < p or Rank([P; A; G]) < n")

    monkeypatch.setattr(cvxopt_solvers, "qp", failing_qp)
    ws = WorkingSet(2, [1.0], solver="cvxopt")
    ws.add([0], [[1.0, 0.0]], [1.0])
    with pytest.raises(QPError, match="could not be solved in either form"):
        ws.solve()


def test_qp_that_never_reaches_optimality_is_an_error(monkeypatch):
    original = cvxopt_solvers.qp

    def unfinished(*args, **kwargs):
        solution = dict(original(*args, **kwargs))
        solution.update({"status": "unknown", "relative gap": 0.5})
        return solution

    monkeypatch.setattr(cvxopt_solvers, "qp", unfinished)
    ws = WorkingSet(2, [1.0], solver="cvxopt")
    ws.add([0], [[1.0, 0.0]], [1.0])
    with pytest.raises(QPError):
        ws.solve()


def test_huge_c_reports_its_objective_honestly():
    X, y, qid = random_collection(seed=15, n_queries=12, docs=(5, 15))
    collection, _, _ = QueryCollection.from_arrays(X, y, qid).trainable()
    plugin = MapPlugin(collection)
    C = 1e9
    result = make_learner(C=C, epsilon=1e-3, formulation="1-slack",
                                 max_iter=300).fit(plugin)
    violations = np.maximum(plugin.most_violated_constraints(result.w).violations(result.w), 0)
    exact = 0.5 * result.w @ result.w + C * violations.mean()
    assert result.primal_objective == pytest.approx(exact, rel=1e-9)
    assert result.dual_objective <= result.primal_objective * (1 + 1e-6)


def test_interrupt_during_python_api_fit_still_returns_a_model(monkeypatch):
    X, y, qid = random_collection(seed=16, n_queries=20, docs=(10, 20))
    calls = {"n": 0}
    original = MapPlugin.most_violated_constraints

    def interrupt_third(self, w):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return original(self, w)

    monkeypatch.setattr(MapPlugin, "most_violated_constraints", interrupt_third)
    model = SVMMap(C=100).fit(X, y, qid)
    assert model.training_result_.status == "interrupted"
    assert np.isfinite(model.decision_function(X)).all()

