"""Issue 12: never destroy an input, never hang, never a traceback -- for every command and the
Python API, over generated hostile inputs (hypothesis) and the issue's reproducers.

Commands are called in-process (their ``main(argv)``), so a failure shows the traceback the
user would have seen; subprocesses only where the process itself is under test (Ctrl-C).
"""

import errno
import json
import os
import shutil
import signal
import stat
import subprocess
import time

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from svmmap import InputFormatError, ModelFileError, SVMMap, load_model, load_svmlight
from svmmap.baselines import AdaRank, PRank, RankBoost
from svmmap.commands import baseline_classify, baseline_learn
from svmmap.commands.classify import classify_main
from svmmap.commands.learn import learn_main
from svmmap.data import atomic as atomic_module
from svmmap.experiments import trec
from svmstruct_api.cut_groups import CutGroups
from svmstruct_api.learner import make_learner
from svmstruct_api.options import QPError
from svmstruct_api.qp import QPTimeout, WorkingSet
from svmstruct_api.solvers import active_set as active_set_module
from svmstruct_api.solvers import cvxopt as cvxopt_module
from svmstruct_api.solvers import smo as smo_module

from conftest import PAUSE_IN_IMPORT, random_collection

FAST = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
TRAIN = ("1 qid:1 1:0.5 2:1 # d1\n0 qid:1 1:0.2 2:0 # d2\n0 qid:1 1:0.9 2:0.1 # d3\n"
         "1 qid:2 1:0.3 2:0.7 # d4\n0 qid:2 1:0.1 2:0.2 # d5\n")


def _one_line_error(capsys, prog=None):
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "note:" not in line]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    if prog:
        assert lines[0].startswith(f"{prog}: error: ")
    return lines[0]


@pytest.fixture
def files(tmp_path):
    """A training file, an SVMMap model, a PRank model and a qrels/run pair."""
    train = tmp_path / "train.dat"
    train.write_text(TRAIN)
    X, y, qid = load_svmlight(train)
    SVMMap().fit(X, y, qid).save(tmp_path / "model.json")
    PRank().fit(X, y, qid).save(tmp_path / "prank.json")
    (tmp_path / "qrels").write_text("1 0 d1 1\n1 0 d2 0\n")
    (tmp_path / "run1").write_text("1 Q0 d1 1 2.0 r1\n1 Q0 d2 2 1.0 r1\n")
    return tmp_path


# --- 1. outputs never overwrite an input, never replace a device -----------------------------

def _commands(d):
    """(name, argv runner, output argument index, inputs) of every command that writes."""
    learn = (learn_main, ["-v", "0", str(d / "train.dat"), "OUT"])
    classify = (classify_main, ["-v", "0", str(d / "train.dat"), str(d / "model.json"), "OUT"])
    b_learn = (baseline_learn.learn_main,
               ["--method", "prank", "-v", "0", str(d / "train.dat"), "OUT"])
    b_classify = (baseline_classify.classify_main,
                  ["-v", "0", str(d / "train.dat"), str(d / "prank.json"), "OUT"])
    build = (trec.main, ["build", "--runs", str(d / "run1"), "--qrels", str(d / "qrels"),
                         "--out", "OUT"])
    run = (trec.main, ["run", "--data", str(d / "train.dat"), "--model", str(d / "model.json"),
                       "--out", "OUT"])
    return {
        "learn-train": (*learn, d / "train.dat"),
        "classify-test": (*classify, d / "train.dat"),
        "classify-model": (*classify, d / "model.json"),
        "baseline-learn-train": (*b_learn, d / "train.dat"),
        "baseline-classify-test": (*b_classify, d / "train.dat"),
        "baseline-classify-model": (*b_classify, d / "prank.json"),
        "trec-build-qrels": (*build, d / "qrels"),
        "trec-build-run": (*build, d / "run1"),
        "trec-run-data": (*run, d / "train.dat"),
        "trec-run-model": (*run, d / "model.json"),
    }


def _call(main, argv):
    try:
        return main(argv)
    except SystemExit as exc:  # trec.main exits through argparse
        return exc.code


@pytest.mark.parametrize("link", ["same", "symlink", "hardlink"])
@pytest.mark.parametrize("command", sorted(_commands(__import__("pathlib").Path("."))))
def test_output_that_is_an_input_is_refused(files, capsys, command, link):
    main, argv, victim = _commands(files)[command]
    out = files / "alias"
    if link == "same":
        out = victim
    elif link == "symlink":
        out.symlink_to(victim)
    else:
        os.link(victim, out)
    before = victim.read_bytes()
    status = _call(main, [str(out) if a == "OUT" else a for a in argv])
    assert status == 1
    assert "refusing to overwrite" in _one_line_error(capsys)
    assert victim.read_bytes() == before


def test_output_that_an_index_file_lists_is_refused(files, capsys):
    (files / "index.txt").write_text("train.dat\n")
    before = (files / "train.dat").read_bytes()
    assert learn_main([str(files / "index.txt"), str(files / "train.dat")]) == 1
    assert "refusing to overwrite" in _one_line_error(capsys, "svmmap_learn")
    assert (files / "train.dat").read_bytes() == before


def test_predictions_to_a_fifo_are_written_into_it_not_over_it(files):
    fifo = files / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader: the writer may open it
    try:
        assert classify_main(["-v", "0", str(files / "train.dat"), str(files / "model.json"),
                              str(fifo)]) == 0
        received = os.read(reader, 1 << 16).decode()
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still the FIFO, not a regular file
    assert len(received.splitlines()) == 5


@pytest.mark.skipif(not os.path.exists("/dev/null") or os.geteuid() == 0,
                    reason="as root a regression would replace the machine's /dev/null")
def test_predictions_to_dev_null(files):
    assert classify_main(["-v", "0", str(files / "train.dat"), str(files / "model.json"),
                          "/dev/null"]) == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_disk_full_names_the_users_path_and_leaves_nothing(files, capsys, monkeypatch):
    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic_module.os, "fsync", full)
    out = files / "model.out"
    assert learn_main(["-v", "0", str(files / "train.dat"), str(out)]) == 1
    line = _one_line_error(capsys, "svmmap_learn")
    assert line == f"svmmap_learn: error: {out}: No space left on device"
    assert not out.exists()
    assert not [p for p in os.listdir(files) if p.endswith(".tmp")]
    with pytest.raises(SystemExit) as info:
        trec.main(["run", "--data", str(files / "train.dat"), "--model",
                   str(files / "model.json"), "--out", str(files / "run.txt")])
    assert info.value.code == 1
    assert f"{files / 'run.txt'}: No space left on device" in _one_line_error(capsys)
    assert not (files / "run.txt").exists()  # trec run writes atomically too


@pytest.mark.parametrize("command", ["learn-train", "classify-test", "baseline-learn-train",
                                     "trec-build-run", "trec-run-data"])
def test_output_in_a_missing_directory_is_refused_before_any_work(files, capsys, command):
    main, argv, _ = _commands(files)[command]
    out = files / "no" / "such" / "out"
    assert _call(main, [str(out) if a == "OUT" else a for a in argv]) == 1
    captured = capsys.readouterr()
    assert "does not exist" in captured.err and "Traceback" not in captured.err
    assert "Read " not in captured.out  # refused before reading and training


def test_output_that_is_a_directory_is_refused(files, capsys):
    assert learn_main([str(files / "train.dat"), str(files)]) == 1
    assert "is a directory" in _one_line_error(capsys, "svmmap_learn")


# --- 2. odd line endings, lines without features ---------------------------------------------

_documents = st.lists(
    st.tuples(st.integers(0, 2), st.integers(1, 3),
              st.dictionaries(st.integers(1, 6), st.sampled_from([1.0, -2.5, 0.125, 3e-5]),
                              max_size=4),
              st.sampled_from(["", "docid = 7", "x # y"])),
    min_size=1, max_size=8)


@FAST
@given(docs=_documents, ends=st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=1),
       trailing=st.booleans())
def test_any_line_ending_reads_the_same_documents(tmp_path_factory, docs, ends, trailing):
    lines = []
    for label, q, feats, comment in docs:
        text = f"{label} qid:{q}" + "".join(f" {j}:{v!r}" for j, v in sorted(feats.items()))
        lines.append(text + (f" # {comment}" if comment else ""))
    body = "".join(line + ends[k % len(ends)] for k, line in enumerate(lines))
    if not trailing:
        body = body.rstrip("\r\n")
    directory = tmp_path_factory.mktemp("ends")
    (directory / "odd.dat").write_bytes(body.encode())
    (directory / "unix.dat").write_text("\n".join(lines) + "\n")
    got = load_svmlight(directory / "odd.dat", n_features=6, return_comments=True)
    want = load_svmlight(directory / "unix.dat", n_features=6, return_comments=True)
    assert (got[0] != want[0]).nnz == 0
    for a, b in zip(got[1:], want[1:]):
        assert np.array_equal(np.asarray(a), np.asarray(b))
    assert len(got[1]) == len(docs)


def test_old_mac_test_file_is_scored_line_by_line(files, capsys):
    """The issue's reproducer: '\\r' line ends and '# docid' comments were one document."""
    mac = files / "mac.dat"
    mac.write_bytes(TRAIN.replace("\n", "\r").encode())
    assert classify_main([str(mac), str(files / "model.json"), str(files / "pred")]) == 0
    assert "Scored 5 documents of 2 queries" in capsys.readouterr().out
    assert len((files / "pred").read_text().splitlines()) == 5


def test_lines_without_features_are_read_and_scored_but_not_trained_on_alone(tmp_path, capsys):
    """A line may have no features; data in which no line has one is refused by every learner
    with scikit-learn's one message (issue 22: SVMMap trained a zero model, the baselines
    refused), and a model trained on features scores such lines 0."""
    data = tmp_path / "bare.dat"
    data.write_text("1 qid:1\n0 qid:1\n0 qid:2\n1 qid:2\n")
    X, y, qid = load_svmlight(data)
    assert X.shape == (4, 0)
    assert learn_main(["-v", "0", str(data), str(tmp_path / "m")]) == 1
    assert baseline_learn.learn_main(["--method", "rankboost", "-v", "0", str(data),
                                    str(tmp_path / "b")]) == 1
    err = capsys.readouterr().err
    assert err.count("Found array with 0 feature(s) (shape=(4, 0)) while a minimum of 1 is "
                     "required by") == 2 and "Traceback" not in err
    assert not (tmp_path / "m").exists() and not (tmp_path / "b").exists()
    mixed = tmp_path / "mixed.dat"
    mixed.write_text("1 qid:1 1:1\n0 qid:1\n0 qid:2 1:0.5\n1 qid:2 1:2\n")
    assert learn_main(["-v", "0", str(mixed), str(tmp_path / "m")]) == 0
    assert classify_main(["-v", "0", str(data), str(tmp_path / "m"), str(tmp_path / "p")]) == 0
    assert (tmp_path / "p").read_text() == "0.0\n" * 4


# --- 3 and 4. extreme values: refused with their place, or trained; never a hang -------------

EXTREMES = [0.0, 1.0, -1.0, 286821.6437683131, 1e50, -1e50, 1e100, -1e100, 1e200, -1e200,
            1e308, -1e308, 1.7976931348623157e308, 2.2250738585072014e-308, 5e-324, -5e-324]
_problems = st.lists(st.lists(st.sampled_from(EXTREMES), min_size=3, max_size=3),
                     min_size=4, max_size=7)


def _extreme_problem(rows):
    X = np.array(rows)
    y = np.array([k % 2 for k in range(len(rows))], dtype=float)
    qid = np.array([k // 3 for k in range(len(rows))])
    return X, y, qid


@FAST
@given(rows=_problems, algorithm=st.sampled_from(["1-slack", "n-slack"]),
       C=st.sampled_from([1.0, 100.0, 1e300]))
@example(rows=[[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [-1e50, 0.0, 0.0], [0.0, 0.0, 0.0]],
         algorithm="1-slack", C=1e300)  # C |x|^2 overflows: the QP failed with a traceback
def test_svmmap_on_extreme_values_trains_or_refuses_in_one_line(rows, algorithm, C):
    X, y, qid = _extreme_problem(rows)
    model = SVMMap(C=C, algorithm=algorithm, max_time=5.0)
    try:
        model.fit(X, y, qid)
    except InputFormatError as exc:
        assert "\n" not in str(exc)
        assert np.max(np.abs(X)) > 1e100 or "overflowed" in str(exc) or "nothing" in str(exc)
        return
    assert np.max(np.abs(X)) <= 1e100
    assert np.all(np.isfinite(model.coef_))
    assert model.training_result_.status in ("converged", "max_time")


@FAST
@given(rows=_problems, method=st.sampled_from([PRank, AdaRank, RankBoost]))
def test_baselines_on_extreme_values_train_or_refuse_and_always_save(tmp_path_factory, rows,
                                                                     method):
    X, y, qid = _extreme_problem(rows)
    model = method(**({"max_rounds": 20} if method is AdaRank else
                      {"max_rounds": 20} if method is RankBoost else {}))
    try:
        model.fit(X, y, qid)
    except InputFormatError as exc:
        assert "\n" not in str(exc)
        return
    model.save(tmp_path_factory.mktemp("m") / "model.json")  # never a JSON error
    assert np.all(np.isfinite(model.decision_function(X)))


@FAST
@given(rows=_problems, w=st.sampled_from(["0", "3"]))
def test_learn_command_on_extreme_values(tmp_path_factory, capsys, rows, w):
    directory = tmp_path_factory.mktemp("x")
    data = directory / "x.dat"
    data.write_text("".join(
        f"{k % 2} qid:{k // 3} " + " ".join(f"{j}:{v!r}" for j, v in enumerate(row, 1)) + "\n"
        for k, row in enumerate(rows)))
    capsys.readouterr()
    status = learn_main(["-v", "0", "-c", "100", "-w", w, "--max-time", "5", str(data),
                         str(directory / "m")])
    if status == 1:
        line = _one_line_error(capsys, "svmmap_learn")
        assert str(data) in line
    else:
        assert status == 0 and "Traceback" not in capsys.readouterr().err


def test_issue_reproducer_is_refused_with_file_and_line(tmp_path, capsys):
    data = tmp_path / "h.dat"
    data.write_text("-1 qid:3 1:286821.6437683131 2:-1.535239\n"
                    "1 qid:3 1:2.2250738585072014e-308 2:-0.2105 3:-0.670076\n"
                    "0 qid:1 2:1e200\n1 qid:1\n0 qid:1 2:0 3:1\n")
    assert learn_main(["-c", "100", "-w", "0", "--max-time", "5", str(data),
                       str(tmp_path / "m")]) == 1
    assert _one_line_error(capsys) == (
        f"svmmap_learn: error: {data}:3: feature 2: value '1e200' is too large (magnitude at "
        "most 1e+100; scale the features)")


def test_api_names_the_place_of_a_too_large_value():
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, -3e150]]))
    for given_X in (X, X.toarray()):
        with pytest.raises(InputFormatError, match=r"X\[1, 1\] = -3e\+150"):
            SVMMap().fit(given_X, [1, 0], [1, 1])


# --- 3. every loop makes progress or stops -----------------------------------------------------

def _working_set(n_features=3, k=4, seed=0):
    rng = np.random.default_rng(seed)
    ws = WorkingSet(n_features, [1.0])
    ws.add([0] * k, rng.normal(size=(k, n_features)), rng.uniform(0.5, 1.0, k))
    return ws


def test_smo_that_cannot_move_hands_over_to_cvxopt(monkeypatch):
    monkeypatch.setattr(active_set_module, "MAX_GROUPS", 0)  # SMO takes the QPs
    calls = []

    def stuck(gram, losses, group, bounds, alpha, abs_tol, rel_tol, max_steps):
        calls.append(1)
        if len(calls) > 50:
            raise AssertionError("the SMO loop kept calling a solver that cannot move")
        return 0, 2e190, 0.0  # the issue's numbers: no step, a huge gap

    monkeypatch.setattr(smo_module, "smo_solve", stuck)
    reference = _working_set().solve()
    solution = _working_set().solve()
    assert solution.form != "smo"
    assert solution.dual_objective == pytest.approx(reference.dual_objective, rel=1e-6)


def test_smo_whose_gap_stops_decreasing_hands_over(monkeypatch):
    monkeypatch.setattr(active_set_module, "MAX_GROUPS", 0)  # SMO takes the QPs
    calls = []

    def stalled(*args):
        calls.append(1)
        if len(calls) > 50:
            raise AssertionError("no progress, yet SMO was called again")
        return 1, 1.0, 0.0  # one step a round, the gap never shrinks

    monkeypatch.setattr(smo_module, "smo_solve", stalled)
    assert _working_set().solve().form != "smo"


def test_qp_deadline_raises_qptimeout(monkeypatch):
    monkeypatch.setattr(active_set_module, "MAX_GROUPS", 0)  # SMO takes the QPs
    gaps = iter(np.geomspace(1.0, 0.5, 1000))  # one step and a smaller gap every round
    monkeypatch.setattr(smo_module, "smo_solve", lambda *a: (1, next(gaps), 0.0))
    with pytest.raises(QPTimeout):
        _working_set().solve(deadline=time.perf_counter() - 1.0)


def test_max_time_is_honoured_inside_the_qp(monkeypatch):
    """An SMO that crawls (one step and a slightly smaller gap per call) would take minutes to
    use up its step budget; max_time stops training inside the QP with the best w so far."""
    monkeypatch.setattr(active_set_module, "MAX_GROUPS", 0)  # SMO takes the QPs
    X, y, qid = random_collection(3, n_queries=6, n_features=4)
    real = smo_module.smo_solve
    state = {"gap": 1.0}

    def crawl(gram, losses, group, bounds, alpha, abs_tol, rel_tol, max_steps):
        if len(losses) < 2:
            return real(gram, losses, group, bounds, alpha, abs_tol, rel_tol, max_steps)
        time.sleep(0.002)
        state["gap"] *= 0.999
        return 1, state["gap"], 0.0

    monkeypatch.setattr(smo_module, "smo_solve", crawl)
    model = SVMMap(C=10.0, max_time=0.3).fit(X, y, qid)
    assert model.training_result_.status == "max_time"
    assert np.all(np.isfinite(model.coef_))


@pytest.mark.parametrize("solver", ["smo_solve", "active_set_solve"])
def test_ctrl_c_inside_the_qp_keeps_the_best_model(monkeypatch, solver):
    """Ctrl-C inside either warm-started QP solver ends training with the best model so far."""
    if solver == "smo_solve":  # SMO takes the QPs: one group, and not the active set
        monkeypatch.setattr(CutGroups, "_example_groups", lambda self, model: None)
        monkeypatch.setattr(active_set_module, "MAX_GROUPS", 0)
    X, y, qid = random_collection(4, n_queries=6, n_features=4)
    module = smo_module if solver == "smo_solve" else active_set_module
    real = getattr(module, solver)

    calls = []

    def interrupted(gram, losses, *args):
        calls.append(len(losses))
        if len(calls) >= 3:  # inside the third QP: two iterations are done
            raise KeyboardInterrupt
        return real(gram, losses, *args)

    monkeypatch.setattr(module, solver, interrupted)
    result = SVMMap(C=10.0, epsilon=1e-6).fit(X, y, qid).training_result_
    assert result.status == "interrupted" and result.iterations >= 2
    assert np.isfinite(result.primal_objective) and np.any(result.w != 0)


def test_max_time_is_honoured_inside_the_active_set(monkeypatch):
    """An active-set method that crawls (the caller's check between steps, each slow) is
    stopped by max_time with the best w so far."""
    X, y, qid = random_collection(3, n_queries=6, n_features=4)
    real = active_set_module.active_set_solve

    def crawl(gram, losses, group, bounds, alpha, abs_tol, rel_tol, max_face, max_steps,
              check=None, face=None):
        if len(losses) < 2 or check is None:
            return real(gram, losses, group, bounds, alpha, abs_tol, rel_tol, max_face,
                        max_steps, check, face)
        for _ in range(100_000):
            time.sleep(0.002)
            check()
        raise AssertionError("the deadline was not honoured")

    monkeypatch.setattr(active_set_module, "active_set_solve", crawl)
    model = SVMMap(C=10.0, max_time=0.3).fit(X, y, qid)
    assert model.training_result_.status == "max_time"
    assert np.all(np.isfinite(model.coef_))


def test_primal_fallback_never_forms_a_d_by_d_matrix(monkeypatch):
    """With many features the dual is the only form tried: the primal's KKT system is dense
    in dim(w) (the issue's 60 GiB np.diag for one feature index 90,000)."""
    primal_calls = []
    monkeypatch.setattr(cvxopt_module, "_solve_dual",
                        lambda *a: (_ for _ in ()).throw(ValueError("singular")))
    monkeypatch.setattr(cvxopt_module, "_solve_primal", lambda *a: primal_calls.append(1))
    ws = WorkingSet(90_000, [1.0], solver="cvxopt")
    ws.add([0, 0], np.eye(2, 90_000), [1.0, 1.0])
    with pytest.raises(QPError):
        ws.solve()
    assert primal_calls == []


def test_the_primal_form_still_solves_small_problems():
    ws = WorkingSet(2, [1.0], solver="cvxopt")
    rng = np.random.default_rng(1)
    ws.add([0] * 6, rng.normal(size=(6, 2)), np.ones(6))  # K > d + 1: the primal is smaller
    primal = ws.solve()
    assert primal.form == "primal"
    dual = ws._solution_of(cvxopt_module._solve_dual(ws.problem(), 0.0))
    assert primal.dual_objective == pytest.approx(dual.dual_objective, abs=1e-6)


def test_learner_stops_on_a_non_finite_objective():
    from svmstruct_api.plugin import ConstraintBatch

    class Overflowing:
        n_examples, n_features, regularized = 1, 1, np.ones(1, dtype=bool)

        def most_violated_constraints(self, w):
            return ConstraintBatch(loss=np.full(1, 1e308), dpsi=np.ones((1, 1)))

    from svmstruct_api.learner import NonFiniteObjective

    with pytest.raises(NonFiniteObjective):
        make_learner("1-slack", C=10.0).fit(Overflowing())


# --- 4. hostile model files --------------------------------------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=8)


@FAST
@given(kind=st.sampled_from(["model.json", "prank.json"]), data=st.data())
def test_any_damage_to_a_model_file_is_one_model_file_error(files, kind, data):
    document = json.loads((files / kind).read_text())
    target = document
    path = []
    while isinstance(target, (dict, list)) and target and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(target) if isinstance(target, dict)
                                        else list(range(len(target)))))
        path.append(key)
        if not isinstance(target[key], (dict, list)) or not target[key]:
            break
        target = target[key]
    hostile = data.draw(_json)
    if path:
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = hostile
    else:
        document = hostile
    damaged = files / "damaged.json"
    damaged.write_text(json.dumps(document))
    for load in (SVMMap.load, load_model):
        try:
            model = load(damaged)
        except ModelFileError as exc:
            assert "\n" not in str(exc) and str(damaged) in str(exc)
            continue
        X, _, qid = load_svmlight(files / "train.dat", n_features=model.n_features_in_)
        try:
            scores = model.decision_function(X, qid) if isinstance(model, SVMMap) else \
                model.decision_function(X)
        except InputFormatError:
            continue
        assert len(scores) == X.shape[0]


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000,
                                  '{"format": "svmmap-model", "version": ' + "9" * 5000 + "}",
                                  '{"format": "svmmap-model", "version": 1, "n_features": 1, '
                                  '"coef": [1' + "0" * 400 + '], "intercept": 0, "params": {}}'])
def test_deep_or_huge_json_is_one_line(files, capsys, text):
    model = files / "hostile.json"
    model.write_text(text)
    with pytest.raises(ModelFileError):
        SVMMap.load(model)
    assert classify_main([str(files / "train.dat"), str(model), str(files / "p")]) == 1
    assert str(model) in _one_line_error(capsys, "svmmap_classify")


# --- 5. nonsense options: one validation for API and CLI ---------------------------------------

@pytest.mark.parametrize("params", [{"max_iter": 0}, {"max_iter": -1}, {"max_iter": 1.5},
                                    {"max_iter": True}, {"max_time": 0}, {"max_time": -1.0},
                                    {"max_time": float("nan")}, {"n_threads": 0},
                                    {"C": 0.0}, {"epsilon": float("inf")}])
def test_estimator_refuses_what_the_cli_refuses(params):
    X, y, qid = random_collection(0, n_queries=3)
    with pytest.raises(ValueError, match=next(iter(params))):
        SVMMap(**params).fit(X, y, qid)


@pytest.mark.parametrize("option", [["--max-iter", "0"], ["--max-iter", "-1"],
                                    ["--max-time", "0"], ["-c", "0"]])
def test_cli_refuses_the_same_values(files, capsys, option):
    with pytest.raises(SystemExit) as info:
        learn_main([*option, str(files / "train.dat"), str(files / "m")])
    assert info.value.code == 2


def test_trec_depth_must_be_positive(files, capsys):
    with pytest.raises(SystemExit) as info:
        trec.main(["build", "--runs", str(files / "run1"), "--qrels", str(files / "qrels"),
                   "--out", str(files / "o"), "--depth", "-1"])
    assert info.value.code == 2
    for depth in (0, -1, 1.5):
        with pytest.raises(Exception, match="depth must be a positive integer"):
            trec.build([files / "run1"], files / "qrels", depth=depth)


# --- 6. messages name the file -----------------------------------------------------------------

def test_nothing_to_train_on_names_the_training_file(tmp_path, capsys):
    data = tmp_path / "flat.dat"
    data.write_text("0 qid:1 1:1\n0 qid:1 1:2\n")
    assert learn_main([str(data), str(tmp_path / "m")]) == 1
    line = _one_line_error(capsys, "svmmap_learn")
    assert line.startswith(f"svmmap_learn: error: {data}: none of the 1 queries")


def test_too_many_features_for_memory_names_file_and_index(tmp_path):
    data = tmp_path / "wide.dat"
    data.write_text("1 qid:1 100000000:1\n0 qid:1 1:1\n")
    script = ("import resource, sys\n"
              "resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
              "from svmmap.commands.learn import learn_main\n"
              "sys.exit(learn_main(sys.argv[1:]))\n")
    done = subprocess.run([shutil.which("python") or "python", "-c", script, str(data),
                           str(tmp_path / "m")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"svmmap_learn: error: {data}: the highest feature index is "
                                  "100000000")
    assert "Traceback" not in done.stderr


# --- Ctrl-C at any moment of start-up: one line, status 130 ------------------------------------

# The child pauses at the start of importing one of these modules (imports every command
# makes: numpy; datetime, which numpy's C extension imports from inside its initialisation;
# svmmap's reader extension and its CSR helper extension; and scipy.sparse, which only the
# baselines' estimators import), says so, and waits there until the test has sent SIGINT:
# the signal lands inside that import by construction, however fast or slow the machine is.
_IMPORT_PHASES = ["numpy", "datetime", "svmmap.kernels._svmlight_reader",
                  "svmmap.kernels._csr_rows"]
_COMMANDS = ["learn_main", "classify_main", "baseline_learn_main"]


@pytest.mark.parametrize("command, phase", [
    *[(command, phase) for phase in _IMPORT_PHASES for command in _COMMANDS],
    ("baseline_learn_main", "scipy.sparse")])
def test_ctrl_c_while_the_command_imports_is_one_line(files, command, phase):
    """The console scripts' entry points (svmmap.commands.console) catch Ctrl-C from their
    first line:
    the child announces that it has started importing ``phase`` and is interrupted there,
    while it imports the command (numpy, the extensions, scipy), the rest of the import and the
    C extensions' initialisation still to run (numpy turned a Ctrl-C there into
    'ImportError: PyCapsule_Import could not import module "datetime"' with a traceback).
    The interpreter's own start-up before that (site, under 0.1 s) is Python's, not svmmap's."""
    args = {"learn_main": [str(files / "train.dat"), str(files / "m")],
            "classify_main": [str(files / "train.dat"), str(files / "model.json"),
                              str(files / "p")],
            "baseline_learn_main": ["--method", "prank", str(files / "train.dat"),
                                    str(files / "m")]}
    process = subprocess.Popen([shutil.which("python") or "python", "-c", PAUSE_IN_IMPORT,
                                phase, command, *args[command]], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline() == f"importing {phase}\n", process.communicate()[1]
    process.send_signal(signal.SIGINT)
    _, err = process.communicate("sent\n", timeout=120)
    assert "Traceback" not in err
    assert process.returncode == 130, err
    # the held-back SIGINT is delivered once the imports are done: the learn command may then
    # be in training and says so in its one last line instead
    last = err.strip().splitlines()[-1]
    assert last.endswith(": interrupted") or \
        "training stopped before convergence (interrupted)" in last, err


def test_more_threads_than_cores_train_and_read_with_the_cores(tmp_path):
    """OpenMP starts every thread asked for: a thread count beyond the machine's cores (here
    a million) is capped at the cores, for training and for reading, not a crash."""
    X, y, qid = random_collection(seed=4, n_queries=6)
    capped = SVMMap(C=10, n_threads=10**6, epsilon=1e-3).fit(X, y, qid)
    plain = SVMMap(C=10, n_threads=os.cpu_count() or 1, epsilon=1e-3).fit(X, y, qid)
    np.testing.assert_allclose(capped.coef_, plain.coef_, rtol=1e-9, atol=1e-12)
    path = tmp_path / "d.txt"
    path.write_text("1 qid:1 1:1\n0 qid:1 2:1\n" * 50)
    read = load_svmlight(path, n_threads=10**6)
    assert (read[0] != load_svmlight(path)[0]).nnz == 0
