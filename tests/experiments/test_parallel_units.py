"""Trials and LETOR units in parallel (issue 31 item 4): ``--jobs 2`` (local worker
processes) and ``--scheduler`` (a Dask cluster started as users start one: tests/ecosystem/
test_dask_cluster.py's fixture) give the same tables and journal records as one process,
wall times aside; ``--resume`` continues a run of the other kind; each worker process reads
the data once."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from svmmap.data.io import dump_svmlight
from svmmap.experiments import letor, trials, units

from conftest import ROOT, random_collection

TRIAL_ARGS = ["--trials", "4", "--sizes", "3,2,5", "--bin", "0", "--methods",
              "svm-map,svm-roc,best-feature", "--grid", "0.1,1", "--seed", "5", "-q"]


@pytest.fixture(scope="module")
def pool_file(tmp_path_factory):
    X, y, qid = random_collection(11, n_queries=20, docs=(5, 8), rate=0.3)
    path = tmp_path_factory.mktemp("data") / "pool.txt"
    dump_svmlight(path, X, y, qid)
    return path


def _without_times(value):
    """``value`` with every "seconds" entry and the command removed, at any depth."""
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if k not in ("seconds",
                                                                              "command")}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def _tables(out, name):
    """The result file and the CSV table, times aside, and the journal's records by unit."""
    results = _without_times(json.loads((out / f"{name}.json").read_text()))
    csv = [line.rsplit(",", 1)[0] for line in (out / f"{name}.csv").read_text().splitlines()]
    lines = (out / f"{name}.jsonl").read_text().splitlines()
    records = {json.loads(x)["unit"]: _without_times(json.loads(x)["record"])
               for x in lines[1:]}
    return results, csv, records


@pytest.fixture(scope="module")
def serial_trials(pool_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("serial")
    trials.main(["--data", str(pool_file), "--out", str(out), *TRIAL_ARGS])
    return _tables(out, "trials")


def test_resume_with_jobs_continues_a_one_process_run(pool_file, tmp_path, monkeypatch,
                                                      serial_trials):
    out = tmp_path / "out"
    real, calls = trials.run_trial, [0]

    def run_trial(*args):
        calls[0] += 1
        if calls[0] == 2:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(trials, "run_trial", run_trial)
    with pytest.raises(SystemExit) as exit_:
        trials.main(["--data", str(pool_file), "--out", str(out), *TRIAL_ARGS])
    assert exit_.value.code == 130
    monkeypatch.undo()
    trials.main(["--data", str(pool_file), "--out", str(out), "--resume", "--jobs", "2",
                 *TRIAL_ARGS])
    assert _tables(out, "trials") == serial_trials


def test_letor_with_two_jobs_equals_one_process(tmp_path):
    folder = tmp_path / "letor"
    for fold in (1, 2):
        for s, split in enumerate(("train", "vali", "test")):
            X, y, qid = random_collection(10 * fold + s, n_queries=5, docs=(5, 9))
            (folder / f"Fold{fold}").mkdir(parents=True, exist_ok=True)
            dump_svmlight(folder / f"Fold{fold}" / f"{split}.txt", X, y,
                          qid + 100 * s + 1000 * fold)
    args = ["--data", str(folder), "--methods", "svm-map,svm-roc,best-feature", "--grid",
            "0.1,1", "-q"]
    letor.main([*args, "--out", str(tmp_path / "serial")])
    letor.main([*args, "--out", str(tmp_path / "jobs2"), "--jobs", "2"])
    assert _tables(tmp_path / "jobs2", "letor") == _tables(tmp_path / "serial", "letor")


_COUNT_LOADS = textwrap.dedent("""
    import multiprocessing, os
    from pathlib import Path
    from svmmap.experiments import trials
    real = trials.load_pool
    def load_pool(paths):
        role = "worker" if multiprocessing.parent_process() else "command"
        with open(Path(os.environ["COUNT_LOADS"]) / f"{role}-{os.getpid()}", "a") as handle:
            handle.write("loaded\\n")
        return real(paths)
    trials.load_pool = load_pool
""")


def test_trials_with_two_jobs_equal_one_process_and_each_worker_reads_once(
        pool_file, tmp_path, serial_trials):
    """Four trials on two workers: the tables and records of one process; the command reads
    the pool once, each worker once (not once per trial, nor with the data pickled into its
    tasks).  Each read appends a line to a file named after the reading process."""
    hooks, loads = tmp_path / "hooks", tmp_path / "loads"
    hooks.mkdir()
    loads.mkdir()
    (hooks / "sitecustomize.py").write_text(
        "import os\nif os.environ.get('COUNT_LOADS'):\n    import count_loads  # noqa\n")
    (hooks / "count_loads.py").write_text(_COUNT_LOADS)
    env = {**os.environ, "COUNT_LOADS": str(loads),
           "PYTHONPATH": os.pathsep.join([str(hooks), str(ROOT)])}
    result = subprocess.run([sys.executable, "-m", "svmmap.experiments.trials", "--data",
                             str(pool_file), "--out", str(tmp_path / "out"), "--jobs", "2",
                             *TRIAL_ARGS], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    reads = {p.name: p.read_text().count("loaded") for p in loads.iterdir()}
    assert sorted(name.split("-")[0] for name in reads) == ["command", "worker", "worker"] \
        and set(reads.values()) == {1}, (reads, result.stderr)
    assert _tables(tmp_path / "out", "trials") == serial_trials


def test_trials_on_a_started_dask_cluster_equal_one_process(pool_file, tmp_path,
                                                            serial_trials):
    pytest.importorskip("distributed")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ecosystem"))
    try:
        from test_dask_cluster import dask_cluster
    finally:
        sys.path.pop(0)
    out = tmp_path / "dask"
    with dask_cluster(tmp_path) as (address, _, _):
        trials.main(["--data", str(pool_file), "--out", str(out), "--scheduler", address,
                     *TRIAL_ARGS])
    assert _tables(out, "trials") == serial_trials


def test_an_unreachable_scheduler_is_one_line(pool_file, tmp_path, capsys, monkeypatch):
    pytest.importorskip("distributed")
    # nothing listens on port 1: refused at every attempt, so a short bound gives the same
    monkeypatch.setattr(units, "CONNECT_SECONDS", 2)
    with pytest.raises(SystemExit) as exit_:
        trials.main(["--data", str(pool_file), "--out", str(tmp_path / "out"),
                     "--scheduler", "tcp://127.0.0.1:1", *TRIAL_ARGS])
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: cannot reach the Dask scheduler at tcp://127.0.0.1:1")
    assert err.count("\n") == 1
