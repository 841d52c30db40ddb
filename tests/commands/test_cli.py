"""svmmap_learn / svmmap_classify, run as a user runs them (installed console scripts)."""

import os
import subprocess
import sys

import numpy as np
import pytest

from svmmap import SVMMap, dump_svmlight, load_svmlight, metrics
from svmmap.data.io import read_svmlight

from conftest import data_file, random_collection, run_command


@pytest.fixture()
def small_files(tmp_path):
    X, y, qid = random_collection(seed=5, n_queries=12, docs=(5, 20))
    train, test = tmp_path / "train.txt", tmp_path / "test.txt"
    dump_svmlight(train, X, y, qid)
    dump_svmlight(test, X[::-1], y[::-1], qid[::-1])  # queries interleaved differently
    return train, test, tmp_path


def test_learn_then_classify_matches_the_python_api(small_files):
    train, test, tmp = small_files
    model, predictions = tmp / "model.json", tmp / "pred.txt"
    learned = run_command("svmmap_learn", "-c", "10", "-w", "0", train, model)
    assert "Primal objective value" in learned.stdout and "Status: converged" in learned.stdout
    classified = run_command("svmmap_classify", test, model, predictions)
    scores = np.loadtxt(predictions)
    X, y, qid = load_svmlight(test)
    assert len(scores) == X.shape[0]  # one line per input line, in order
    # the command trains through svmmap.core.training on the arrays its reader gives (here
    # dense): the same arrays give the same file, bit for bit
    api = SVMMap(C=10.0, algorithm="n-slack").fit(*read_svmlight(train))
    np.testing.assert_array_equal(scores, api.decision_function(X))
    api.save(tmp / "api.json")
    assert (tmp / "api.json").read_bytes() == model.read_bytes()
    expected_map = metrics.mean_average_precision(scores, y, qid)
    assert f"MAP: {expected_map:.4f}" in classified.stdout


def test_predictions_are_aligned_with_input_lines(small_files, tmp_path):
    train, _, tmp = small_files
    model = tmp / "model.json"
    run_command("svmmap_learn", "-v", "0", train, model)
    w = SVMMap.load(model).coef_
    test = tmp_path / "aligned.txt"
    test.write_text("# a comment line is not a document\n"
                    f"1 qid:9 1:1 # doc a\n0 qid:8 2:1\n\n1 qid:9 {len(w)}:2.5\n")
    run_command("svmmap_classify", test, model, tmp / "p.txt")
    assert np.loadtxt(tmp / "p.txt").tolist() == [w[0], w[1], 2.5 * w[-1]]


@pytest.mark.parametrize("args, message", [
    (["missing.txt", "m.json"], "missing.txt: file not found"),
    (["bad.txt", "m.json"], "bad.txt:2: missing qid:<id> after the label"),
    (["-c", "-1", "train.txt", "m.json"], "argument -c/--C: The 'C' parameter of SVMMap must be"),
    (["-w", "2", "train.txt", "m.json"], "invalid choice"),
])
def test_learn_errors_are_one_line_without_traceback(small_files, args, message):
    _, _, tmp = small_files
    (tmp / "bad.txt").write_text("1 qid:1 1:1\n0 1:2\n")
    paths = [tmp / a if a.endswith((".txt", ".json")) else a for a in args]
    proc = run_command("svmmap_learn", *paths, check=False)
    assert proc.returncode != 0
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp / "m.json").exists()


def test_classify_errors_leave_no_predictions_file(small_files):
    train, test, tmp = small_files
    (tmp / "model.json").write_text('{"format": "svmmap-model", "version": 7}')
    proc = run_command("svmmap_classify", test, tmp / "model.json", tmp / "p.txt", check=False)
    assert proc.returncode == 1
    assert "version 7 is not supported" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp / "p.txt").exists()
    run_command("svmmap_learn", train, tmp / "model.json")
    wide = tmp / "wide.txt"
    wide.write_text("1 qid:1 1:1 99:1\n")
    proc = run_command("svmmap_classify", wide, tmp / "model.json", tmp / "p.txt", check=False)
    assert proc.returncode == 1 and "wide.txt:1: feature index 99 exceeds" in proc.stderr
    assert not (tmp / "p.txt").exists()


def _best_single_feature_test_map(train, test):
    X, y, qid = load_svmlight(train)
    Xt, yt, qt = load_svmlight(test, n_features=X.shape[1])
    X, Xt = X.toarray(), Xt.toarray()
    best = max(range(X.shape[1]), key=lambda f: metrics.mean_average_precision(X[:, f], y, qid))
    return metrics.mean_average_precision(Xt[:, best], yt, qt)


def test_cli_on_ohsumed_fold1_beats_the_best_single_feature(tmp_path):
    train = data_file("OHSUMED", "Fold1", "train.txt")
    test = data_file("OHSUMED", "Fold1", "test.txt")
    model, predictions = tmp_path / "m.json", tmp_path / "p.txt"
    learned = run_command("svmmap_learn", "-c", "100", train, model)
    assert "1 of 63 queries carry no constraint" in learned.stderr
    run_command("svmmap_classify", test, model, predictions)
    _, y, qid = load_svmlight(test)
    learned_map = metrics.mean_average_precision(np.loadtxt(predictions), y, qid)
    baseline = _best_single_feature_test_map(train, test)
    assert learned_map > baseline + 0.005, (learned_map, baseline)


HEAVY = ("numpy", "scipy", "cvxopt", "sklearn", "matplotlib", "pandas", "dask")
LEARN, BASELINE_LEARN = "svmmap.commands.learn", "svmmap.commands.baseline_learn"


@pytest.mark.parametrize("module, tool, argv", [
    (LEARN, "learn_main", ["--help"]),
    (LEARN, "learn_main", ["-c", "x", "train.txt", "model.json"]),  # an argument error
    (LEARN, "learn_main", ["-l", "map", "--cost-ratio", "2", "train.txt", "model.json"]),
    (LEARN, "learn_main", ["-c", "0", "train.txt", "model.json"]),  # SVMMap's rules
    (LEARN, "learn_main", ["-c", "1,10", "--rel-gap", "2", "--vali", "v", "t", "m"]),
    ("svmmap.commands.classify", "classify_main", ["--help"]),
    (BASELINE_LEARN, "learn_main", ["--help"]),
    (BASELINE_LEARN, "learn_main", ["--method", "prank", "-t", "5", "a.txt", "m"]),
    (BASELINE_LEARN, "learn_main", ["--method", "lambdamart", "a.txt", "m"]),
    ("svmmap.commands.baseline_classify", "classify_main", ["--help"]),
])
def test_help_and_argument_errors_import_nothing_heavy(module, tool, argv):
    code = (f"import sys\nimport {module} as cli\ntry:\n    cli.{tool}({argv!r})\n"
            f"except SystemExit:\n    pass\n"
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="the process's threads are counted in /proc/self/task")
@pytest.mark.parametrize("users_value", [None, "2"])
def test_commands_keep_openblas_to_one_thread(small_files, users_value):
    """svmmap.commands.console sets OPENBLAS_NUM_THREADS=1 before numpy loads OpenBLAS, whose thread
    pool would otherwise spin on the other cores (benchmarks/startup.py): a training run
    ends with the process's one thread; a value the user has set is kept."""
    train, _, tmp = small_files
    code = ("import atexit, os, sys\nimport svmmap.commands.console as console\n"
            f"sys.argv = ['svmmap_learn', '-v', '0', {str(train)!r}, {str(tmp / 'm.json')!r}]\n"
            "atexit.register(lambda: print(os.environ['OPENBLAS_NUM_THREADS'], "
            "len(os.listdir('/proc/self/task'))))\n"
            "sys.exit(console.learn_main())\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if users_value is not None:
        env["OPENBLAS_NUM_THREADS"] = users_value
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    value, threads = proc.stdout.split()
    assert value == (users_value or "1")
    if users_value is None:
        assert threads == "1"


@pytest.mark.parametrize("exit_function", [False, True])
def test_commands_end_with_their_output_and_exit_functions(small_files, exit_function):
    """svmmap.commands.console ends a command's process without the interpreter's teardown
    (_exit_now) only when that has nothing to do: standard output, a pipe here, is complete,
    and an atexit function registered before the command still runs."""
    train, _, tmp = small_files
    code = ("import atexit, sys\nimport svmmap.commands.console as console\n"
            + ("atexit.register(lambda: print('exit function ran'))\n" if exit_function
               else "")
            + f"sys.argv = ['svmmap_learn', {str(train)!r}, {str(tmp / 'm.json')!r}]\n"
            "sys.exit(console.learn_main())\n")
    # standard output block-buffered, as in a user's shell
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("Read ") and "Status: converged" in lines
    last = lines.pop() if exit_function else None
    assert last == ("exit function ran" if exit_function else None)
    assert lines[-1].startswith("Norm of weight vector")


@pytest.mark.parametrize("argv", [
    ["-c", "10"],
    ["-c", "10", "-w", "0"],
    ["-c", "1,10", "--holdout", "0.3", "-l", "ndcg@5"],
    ["-c", "1,10", "--eval-set", "TEST"],
    ["-c", "3", "-w", "0", "-l", "acc"],
    ["-c", "10", "--normalize", "standard"],
])
@pytest.mark.parametrize("interleaved", [False, True])
def test_learn_and_classify_import_neither_scipy_nor_scikit_learn(small_files, argv,
                                                                   interleaved):
    """svmmap_learn trains through svmmap.core.training on the reader's CSR arrays, svmmap_classify
    scores an svmmap model through it (scikit-learn's import alone takes longer than most
    trainings, benchmarks/grid.py; scipy.sparse's 0.1 s, issue 23): neither the estimators'
    facade nor scipy is loaded, also when the queries' documents are not contiguous (the
    collection gathers rows); the scores are the API's."""
    train, test, tmp = small_files
    if interleaved:  # every query's documents spread over the file
        X, y, qid = load_svmlight(train)
        order = np.argsort(np.arange(len(qid)) % 3, kind="stable")
        train = tmp / "interleaved.txt"
        dump_svmlight(train, X[order], y[order], qid[order])
    model, predictions = tmp / "m.json", tmp / "p.txt"
    argv = [test if a == "TEST" else a for a in argv]
    # numpy.ma: what np.unique without return_* options imports (6 ms); the standard
    # library's modules that a command's start-up does without (benchmarks/startup.py):
    # tempfile and shutil (argparse's help formatter, svmmap.data.atomic), threading
    # (svmmap.commands.console), the decompressors (svmmap.data.sources, for compressed files only)
    unused = {"scipy", "sklearn", "cvxopt", "pandas", "matplotlib", "dask", "numpy.ma",
              "tempfile", "shutil", "threading", "bz2", "lzma", "gzip"}
    if "-w" in argv:  # n-slack's many groups: its QP is cvxopt's (svmstruct_api.qp)
        unused -= {"cvxopt", "threading", "shutil", "tempfile"}
    if "--holdout" in argv:  # the held-out queries are drawn by numpy.random
        unused.remove("threading")
    # the plugins of the other losses (svmmap.core.plugins: each imported when first used)
    loss = argv[argv.index("-l") + 1] if "-l" in argv else "map"
    used = {"map": "map", "acc": "accuracy"}.get(loss, "measure")
    unused |= {f"svmmap.core.plugins.{name}" for name in ("map", "accuracy", "measure", "roc")
               if name != used}
    # scoring reads a model back (svmstruct_api.result), and needs none of the solvers
    solvers = {"svmstruct_api.learner", "svmstruct_api.qp", "svmstruct_api._active_set",
               "svmstruct_api._simplex_qp"}
    for command, tool, args, not_used in [
            ("learn", "learn_main", [*argv, "-v", "0", train, model], unused),
            ("classify", "classify_main", ["-v", "0", test, model, predictions],
             unused | solvers)]:
        code = (f"import sys\nfrom svmmap.commands.{command} import {tool}\n"
                f"status = {tool}({[str(a) for a in args]!r})\n"
                "loaded = {m.split('.')[0] for m in sys.modules} | set(sys.modules)\n"
                f"print(status, sorted(loaded & set({sorted(not_used)!r})))")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip().splitlines()[-1] == "0 []", (tool, proc.stdout)
    X, _, qid = load_svmlight(test, n_features=load_svmlight(train)[0].shape[1])
    np.testing.assert_array_equal(np.loadtxt(predictions),
                                  SVMMap.load(model).decision_function(X, qid))
