"""One interruption rule for the long commands (issue 32 items 0 and 2): SIGINT and SIGTERM
stop ``trials``, ``letor`` and ``export`` at a safe point -- inside a fit as well as between
fits, while reading, while a journal record or a table is written, in a worker process of
``--jobs 2`` --, keep the finished units, print one line saying how to resume, exit 130 / 143
and leave no temporary file; ``--resume`` then gives the uninterrupted run's tables.

The signal lands inside its phase by construction, never after a delay: the child runs with
a ``sitecustomize`` (on its PYTHONPATH, so that the worker processes it spawns load it too)
that wraps the phase's function; on entering the phase the process prints ``PAUSED <phase>
<pid>`` on stdout and waits -- the command's own process on a line of its stdin, a worker
process for ever (its parent must end it) --; the test sends the signal once it has read the
line, and only then writes to the child's stdin."""

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from svmmap.data.io import dump_svmlight

from conftest import ROOT, random_collection

#: the hooks, imported at start-up by every Python process of the child (sitecustomize)
HOOKS = textwrap.dedent('''
    import multiprocessing, os, sys, threading

    PHASE, AT = os.environ["PAUSE_PHASE"], os.environ.get("PAUSE_AT", "")
    current = [None]
    paused = [False]

    def pause():
        if paused[0]:
            return
        paused[0] = True
        print(f"PAUSED {PHASE} {os.getpid()}", flush=True)
        if multiprocessing.parent_process() is None:
            sys.stdin.readline()  # returns once the test has sent the signal
        else:  # a worker: its parent ends it
            threading.Event().wait()

    from svmmap.core import selection, training
    from svmmap.data import atomic
    from svmmap.experiments import journal, letor, trials

    for work in (trials.TrialWork, letor.LetorWork):
        def run(self, state, key, real=work.run):
            current[0] = key
            return real(self, state, key)
        work.run = run

    if PHASE == "reading":
        real_load_pool = trials.load_pool
        def load_pool(paths):
            pause()
            return real_load_pool(paths)
        trials.load_pool = load_pool
    elif PHASE == "fit":  # at the first iteration of the first fit of unit AT
        class Wait:
            def on_iteration(self, progress):
                if current[0] == AT:
                    pause()
        real_learner = training.learner
        def learner(params, C, callbacks=()):
            return real_learner(params, C, [*callbacks, Wait()])
        training.learner = learner
    elif PHASE == "between fits":  # unit AT: after an SVM path's first C, before its second
        real_learner = training.learner
        def learner(params, C, callbacks=()):
            made = real_learner(params, C, callbacks)
            real_path = made.fit_path
            def fit_path(plugin, Cs):
                for i, result in enumerate(real_path(plugin, Cs)):
                    yield result
                    if current[0] == AT and i == 0:
                        pause()
            made.fit_path = fit_path
            return made
        training.learner = learner
        # and a method trained value by value (the best feature): before its second fit
        real_fit, fits = selection._fit, []
        def _fit(method, value, train):
            if current[0] == AT:
                fits.append(value)
                if len(fits) == 2:
                    pause()
            return real_fit(method, value, train)
        selection._fit = _fit
    elif PHASE == "journal":  # before the record of unit AT (*: any unit) is written
        real_write = journal._write
        def _write(fd, data):
            if data.startswith(b'{"unit": ') and (
                    AT == "*" or f'"unit": "{AT}"'.encode() in data):
                pause()
            real_write(fd, data)
        journal._write = _write
    elif PHASE == "output":  # inside an atomic write, its temporary file open
        real_text = atomic._write
        def _write(handle, text):
            pause()
            real_text(handle, text)
        atomic._write = _write
''')

SITE = "import os\nif os.environ.get('PAUSE_PHASE'):\n    import pause_hooks  # noqa\n"

TRIAL_ARGS = ["--trials", "3", "--sizes", "3,2,5", "--bin", "0", "--methods",
              "svm-map,best-feature", "--grid", "0.1,1", "--seed", "3", "-q"]
NAMES = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}


@pytest.fixture(scope="module")
def hooks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hooks")
    (folder / "pause_hooks.py").write_text(HOOKS)
    (folder / "sitecustomize.py").write_text(SITE)
    return folder


@pytest.fixture(scope="module")
def pool_file(tmp_path_factory):
    X, y, qid = random_collection(7, n_queries=20, docs=(5, 8), rate=0.3)
    path = tmp_path_factory.mktemp("data") / "pool.txt"
    dump_svmlight(path, X, y, qid)
    return path


@pytest.fixture(scope="module")
def uninterrupted(pool_file, tmp_path_factory):
    from svmmap.experiments import trials

    out = tmp_path_factory.mktemp("whole")
    trials.main(["--data", str(pool_file), "--out", str(out), *TRIAL_ARGS])
    return _stable(out / "trials.json")


def _stable(path):
    """A result file without what depends on the session (wall times, the command)."""
    results = json.loads(Path(path).read_text())
    for key in ("seconds", "command"):
        results.pop(key, None)
    for entry in results["methods"].values():
        entry.pop("seconds", None)
        for fold in entry.get("folds", {}).values():
            fold.pop("seconds")
    return results


def signal_in_phase(hooks, argv, phase, sig, at="", group=False):
    """Run ``python -m`` ``argv`` with the pausing hooks, send ``sig`` once the phase has
    announced itself (to the process group with ``group``, as a terminal's Ctrl-C does);
    return (status, stderr, pid of the paused process)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hooks), str(ROOT)]),
           "PAUSE_PHASE": phase, "PAUSE_AT": at}
    process = subprocess.Popen([sys.executable, "-m", *map(str, argv)], env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=group)
    try:
        line = process.stdout.readline()
        assert line.startswith(f"PAUSED {phase} "), line + process.communicate()[1]
        if group:
            os.killpg(process.pid, sig)
        else:
            process.send_signal(sig)
        _, err = process.communicate("sent\n", timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, err, int(line.split()[-1])


def _journal_units(path):
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"", "the journal ends with a whole record"
    return sorted(json.loads(line)["unit"] for line in lines[1:-1])


def _no_temporary_files(folder):
    assert not [p for p in Path(folder).rglob("*") if p.name.endswith(".tmp")]


def _assert_one_line(err, sig, prog, kept=None):
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"{prog}: {NAMES[sig]}"), err
    if kept is not None:
        assert f": {kept} of 3 trials are kept in " in last, err
        assert last.endswith("rerun the command with --resume to continue"), err


@pytest.mark.parametrize("phase, at, sig, kept", [
    ("fit", "1", signal.SIGINT, 1),             # the issue: Ctrl-C inside a fit was ignored
    ("fit", "1", signal.SIGTERM, 1),
    ("between fits", "2", signal.SIGTERM, 2),
    ("journal", "1", signal.SIGINT, 2),         # the record being written is kept, whole
])
def test_trials_stop_in_each_phase_and_resume(hooks, pool_file, tmp_path, uninterrupted,
                                              phase, at, sig, kept):
    from svmmap.experiments import trials

    out = tmp_path / "out"
    status, err, _ = signal_in_phase(
        hooks, ["svmmap.experiments.trials", "--data", pool_file, "--out", out, *TRIAL_ARGS],
        phase, sig, at)
    assert status == 128 + sig, err
    _assert_one_line(err, sig, "python -m svmmap.experiments.trials", kept)
    assert _journal_units(out / "trials.jsonl") == [str(t) for t in range(kept)]
    assert not (out / "trials.json").exists()
    _no_temporary_files(out)
    trials.main(["--data", str(pool_file), "--out", str(out), "--resume", *TRIAL_ARGS])
    assert _stable(out / "trials.json") == uninterrupted


def test_trials_stop_while_reading(hooks, pool_file, tmp_path):
    out = tmp_path / "out"
    status, err, _ = signal_in_phase(
        hooks, ["svmmap.experiments.trials", "--data", pool_file, "--out", out, *TRIAL_ARGS],
        "reading", signal.SIGTERM)
    assert status == 143, err
    _assert_one_line(err, signal.SIGTERM, "python -m svmmap.experiments.trials")
    assert not (out / "trials.jsonl").exists()


def test_trials_stop_while_the_tables_are_written(hooks, pool_file, tmp_path, uninterrupted):
    """Every trial is in the journal; the signal lands inside the first table's atomic
    write: no table and no temporary file stay, and --resume writes the tables."""
    from svmmap.experiments import trials

    out = tmp_path / "out"
    status, err, _ = signal_in_phase(
        hooks, ["svmmap.experiments.trials", "--data", pool_file, "--out", out, *TRIAL_ARGS],
        "output", signal.SIGTERM)
    assert status == 143, err
    _assert_one_line(err, signal.SIGTERM, "python -m svmmap.experiments.trials", 3)
    assert not any((out / f"trials.{ext}").exists() for ext in ("md", "csv", "json"))
    _no_temporary_files(out)
    trials.main(["--data", str(pool_file), "--out", str(out), "--resume", *TRIAL_ARGS])
    assert _stable(out / "trials.json") == uninterrupted


def test_ctrl_c_to_the_group_stops_parallel_trials_and_their_workers(hooks, pool_file,
                                                                     tmp_path, uninterrupted):
    """--jobs 2, Ctrl-C to the whole process group while a worker is inside a fit of trial
    1: the workers ignore it, the parent kills and reaps them (no process is left), keeps
    the finished trials and ends with the one line; --resume finishes to the same tables."""
    from svmmap.experiments import trials

    out = tmp_path / "out"
    status, err, worker = signal_in_phase(
        hooks, ["svmmap.experiments.trials", "--data", pool_file, "--out", out, "--jobs", "2",
                *TRIAL_ARGS], "fit", signal.SIGINT, "1", group=True)
    assert status == 130, err
    assert worker != 0
    _assert_one_line(err, signal.SIGINT, "python -m svmmap.experiments.trials")
    assert "KeyboardInterrupt" not in err
    assert not Path(f"/proc/{worker}").exists(), "the worker outlived its parent"
    units = _journal_units(out / "trials.jsonl")
    assert "1" not in units
    assert f": {len(units)} of 3 trials are kept in " in err
    trials.main(["--data", str(pool_file), "--out", str(out), "--resume", *TRIAL_ARGS])
    assert _stable(out / "trials.json") == uninterrupted


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


def test_letor_sigterm_inside_a_fit(hooks, letor_folder, tmp_path):
    out = tmp_path / "out"
    status, err, _ = signal_in_phase(
        hooks, ["svmmap.experiments.letor", "--data", letor_folder, "--out", out,
                "--methods", "svm-map,best-feature", "--grid", "0.1,1", "-q"],
        "fit", signal.SIGTERM, "2:svm-map")
    assert status == 143, err
    last = err.strip().splitlines()[-1]
    assert "Traceback" not in err
    assert last == (f"python -m svmmap.experiments.letor: terminated: 2 of 4 fold-method "
                    f"runs are kept in {out / 'letor.jsonl'}; rerun the command with "
                    "--resume to continue"), err
    assert _journal_units(out / "letor.jsonl") == ["1:best-feature", "1:svm-map"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_export_stops_inside_its_write_without_a_temporary_file(hooks, tmp_path, sig):
    from svmmap import SVMMap

    X, y, qid = random_collection(5, n_queries=6)
    model = tmp_path / "m.json"
    SVMMap(C=1.0).fit(X, y, qid).save(model)
    output = tmp_path / "export" / "model.json"
    output.parent.mkdir()
    status, err, _ = signal_in_phase(hooks, ["svmmap.export", model, output], "output", sig)
    assert status == 128 + sig, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == f"python -m svmmap.export: {NAMES[sig]}"
    assert list(output.parent.iterdir()) == []


def test_a_signal_stops_trials_on_a_dask_cluster(hooks, pool_file, tmp_path, uninterrupted):
    """--scheduler: SIGTERM while the command writes the first record that came back from a
    worker of a separately started cluster (tests/ecosystem/test_dask_cluster.py's
    fixture): the record is written whole, the pending tasks are cancelled, one line, 143;
    the cluster is unharmed and --resume on it finishes to the one-process tables."""
    pytest.importorskip("distributed")
    from svmmap.experiments import trials

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ecosystem"))
    try:
        from test_dask_cluster import dask_cluster
    finally:
        sys.path.pop(0)
    out = tmp_path / "out"
    with dask_cluster(tmp_path) as (address, client, _):
        status, err, _ = signal_in_phase(
            hooks, ["svmmap.experiments.trials", "--data", pool_file, "--out", out,
                    "--scheduler", address, *TRIAL_ARGS], "journal", signal.SIGTERM, "*")
        assert status == 143, err
        units = _journal_units(out / "trials.jsonl")
        assert len(units) >= 1
        _assert_one_line(err, signal.SIGTERM, "python -m svmmap.experiments.trials",
                         len(units))
        assert len(client.scheduler_info()["workers"]) == 2
        trials.main(["--data", str(pool_file), "--out", str(out), "--resume", "--scheduler",
                     address, *TRIAL_ARGS])
    assert _stable(out / "trials.json") == uninterrupted


def test_classic_runs_stop_inside_a_write(hooks, tmp_path):
    """SIGTERM inside the first atomic write (the qrels): one line, 143, no temporary file,
    no half-written file."""
    from test_experiments_classic import DOCS, QRELS, QUERIES

    data = tmp_path / "cranfield"
    data.mkdir()
    for name, text in (("cran.all.1400", DOCS), ("cran.qry", QUERIES), ("cranqrel", QRELS)):
        (data / name).write_text(text)
    out = tmp_path / "out"
    status, err, _ = signal_in_phase(
        hooks, ["svmmap.experiments.classic", "--collection", "cranfield", "--data", data,
                "--out", out, "--depth", "2"], "output", signal.SIGTERM)
    assert status == 143, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith(
        "python -m svmmap.experiments.classic: terminated: the files written so far in ")
    assert not (out / "qrels.txt").exists()
    _no_temporary_files(out)
