"""svmmap on a Dask cluster started as users start one: ``dask scheduler`` and two ``dask worker``
processes on 127.0.0.1, each a separate process.  ``svmmap_learn --scheduler ADDRESS`` (shards
read on the workers) and ``DaskSVMMap`` on a Client of that address reach the in-process
coefficients; the processes are torn down whatever happens.

Readiness is polled, never waited for by a fixed delay: the scheduler writes its address to
``--scheduler-file`` (polled until it appears), then ``Client.wait_for_workers(2)`` polls the
scheduler until both workers have joined; the generous bounds only turn a broken start-up into
a failure instead of a hang."""

import contextlib
import json
import os
import shutil
import subprocess
import time

import numpy as np
import pytest

from conftest import random_collection

distributed = pytest.importorskip("dask.distributed")
da = pytest.importorskip("dask.array")

from svmmap import SVMMap, dump_svmlight  # noqa: E402
from svmmap.dask import DaskSVMMap, read_svmlight  # noqa: E402

#: bounds on start-up (not expectations): a busy 2-core machine starts dask in seconds
START_TIMEOUT = 240.0
#: epsilon 1e-6 makes w independent of the order of the per-query sums to ~1e-6 relative
EPSILON = "1e-6"


def _start(command, log):
    """A process in its own session (so that its whole group can be ended), output to log."""
    handle = open(log, "wb")
    try:
        return subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    finally:
        handle.close()


def _stop(process):
    """End the process we started and its group: SIGTERM, then SIGKILL if it lingers."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 15)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, 9)
            process.wait()


def _scheduler_address(scheduler_file, scheduler, log):
    """Poll until the scheduler has written its address (or died, or the bound passed)."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if scheduler.poll() is not None:
            pytest.fail(f"dask scheduler exited: {log.read_text()[-2000:]}")
        with contextlib.suppress(FileNotFoundError, ValueError, KeyError):
            return json.loads(scheduler_file.read_text())["address"]
        time.sleep(0.05)  # a polling interval, not a wait for readiness
    pytest.fail(f"dask scheduler wrote no address within {START_TIMEOUT} s")


@contextlib.contextmanager
def dask_cluster(directory):
    """(address, client, processes) of a scheduler and two workers on 127.0.0.1."""
    dask = shutil.which("dask")
    if dask is None:
        pytest.skip("the dask command is not installed (dask[distributed])")
    processes = []
    try:
        scheduler_file, log = directory / "scheduler.json", directory / "scheduler.log"
        processes.append(_start([dask, "scheduler", "--host", "127.0.0.1", "--port", "0",
                                 "--no-dashboard", "--scheduler-file", str(scheduler_file)],
                                log))
        address = _scheduler_address(scheduler_file, processes[0], log)
        for i in range(2):
            processes.append(_start(
                [dask, "worker", address, "--name", f"worker-{i}", "--host", "127.0.0.1",
                 "--nthreads", "1", "--no-nanny", "--no-dashboard", "--memory-limit", "0",
                 "--local-directory", str(directory / f"worker-{i}")],
                directory / f"worker-{i}.log"))
        with distributed.Client(address, timeout=START_TIMEOUT) as client:
            client.wait_for_workers(2, timeout=START_TIMEOUT)
            yield address, client, processes
    finally:
        for process in reversed(processes):
            _stop(process)


def _shards(directory, X, y, qid, n):
    """n shard files of whole queries: directory/shard-*.txt."""
    for k, queries in enumerate(np.array_split(np.unique(qid), n)):
        rows = np.isin(qid, queries)
        dump_svmlight(directory / f"shard-{k}.txt", X[rows], y[rows], qid[rows])
    return str(directory / "shard-*.txt")


def _assert_close(coef, reference):
    assert np.max(np.abs(coef - reference)) <= 1e-6 * np.max(np.abs(reference))


def test_learn_and_dask_svmmap_on_a_started_cluster(tmp_path):
    X, y, qid = random_collection(17, n_queries=30, docs=(5, 20), n_features=8)
    pattern = _shards(tmp_path, X, y, qid, 3)
    whole = tmp_path / "all.txt"
    dump_svmlight(whole, X, y, qid)
    learn = shutil.which("svmmap_learn")
    local = tmp_path / "local.json"
    subprocess.run([learn, "-v", "0", "-c", "10", "-e", EPSILON, str(whole), str(local)],
                   check=True)
    reference = SVMMap.load(local).coef_
    with dask_cluster(tmp_path) as (address, client, processes):
        assert address.startswith("tcp://127.0.0.1:")
        assert len(client.scheduler_info()["workers"]) == 2
        remote = tmp_path / "remote.json"
        proc = subprocess.run([learn, "-c", "10", "-e", EPSILON, "--scheduler", address,
                               pattern, str(remote)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert f"Read {len(y)} documents, 30 queries, 8 features" in proc.stdout
        _assert_close(SVMMap.load(remote).coef_, reference)
        # the API against the same cluster: shards read by the workers, scores computed there
        Xd, yd, qd = read_svmlight(pattern, client=client)
        model = DaskSVMMap(C=10, epsilon=1e-6, client=client).fit(Xd, yd, qd)
        _assert_close(model.coef_, reference)
        np.testing.assert_allclose(model.predict(da.from_array(X, chunks=(60, -1))).compute(),
                                   model.to_local().decision_function(X))
        workers = {w["name"] for w in client.scheduler_info()["workers"].values()}
        assert workers == {"worker-0", "worker-1"}
    assert all(process.poll() is not None for process in processes)  # all torn down
