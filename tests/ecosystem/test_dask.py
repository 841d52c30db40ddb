"""svmmap.dask: the distributed fit reaches the in-process w on OHSUMED Fold1 (any partition
layout, shards read on the workers), the same layout gives the same bits, a killed worker
does not change w, and queries split across partitions are moved or refused.

One LocalCluster (2 worker processes, 1 thread each) serves the whole module."""

import os
import signal

import numpy as np
import pytest

from conftest import data_file, random_collection

distributed = pytest.importorskip("dask.distributed")
da = pytest.importorskip("dask.array")

import scipy.sparse as sp  # noqa: E402

from svmmap import SVMMap, load_svmlight  # noqa: E402
from svmmap.dask import DaskSVMMap, query_boundaries, read_svmlight  # noqa: E402
from svmmap.errors import InputFormatError  # noqa: E402

#: epsilon 1e-6 makes w independent of the order of the per-query sums to ~1e-6 relative
EPSILON = 1e-6
C = 1.0


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def ohsumed():
    X, y, qid = load_svmlight(data_file("OHSUMED", "Fold1", "train.txt"))
    return X.toarray(), y, qid


@pytest.fixture(scope="module")
def local_fit(ohsumed):
    with pytest.warns(UserWarning, match="1 of 63 queries"):
        return SVMMap(C=C, epsilon=EPSILON).fit(*ohsumed)


@pytest.fixture(scope="module")
def reference_fit(client, ohsumed):
    """The distributed fit on one layout (4 partitions), made once."""
    with pytest.warns(UserWarning, match="1 of 63 queries"):
        return DaskSVMMap(C=C, epsilon=EPSILON, client=client).fit(*_dask(*ohsumed, 2500))


def _dask(X, y, qid, chunks):
    return (da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks=(chunks,)),
            da.from_array(qid, chunks=(chunks,)))


def _assert_close(coef, reference):
    assert np.max(np.abs(coef - reference)) <= 1e-6 * np.max(np.abs(reference))


def test_uneven_partitions_give_the_in_process_w(client, ohsumed, local_fit):
    # chunk ends fall inside queries: they move to the query ends (6 chunks, 37 to 4,312 rows)
    chunks = (37, 4312, 901, 2603, 1200, 166)
    model = DaskSVMMap(C=C, epsilon=EPSILON, client=client)
    with pytest.warns(UserWarning, match="1 of 63 queries"):
        model.fit(*_dask(*ohsumed, chunks))
    assert model.training_result_.converged
    assert model.n_queries_used_ == local_fit.n_queries_used_ == 62
    assert model.n_partitions_ >= 5
    _assert_close(model.coef_, local_fit.coef_)
    # prediction stays a Dask collection and agrees with the local model
    X = da.from_array(ohsumed[0], chunks=(3000, -1))
    scores = model.decision_function(X)
    assert isinstance(scores, da.Array)
    np.testing.assert_allclose(scores.compute(), model.to_local().decision_function(ohsumed[0]))
    assert model.score(X, ohsumed[1], ohsumed[2]) == pytest.approx(
        local_fit.score(*ohsumed), abs=1e-6)


def test_a_partition_without_trainable_query(client, ohsumed, local_fit):
    X, y, qid = ohsumed
    ids, first = np.unique(qid, return_index=True)
    n_rel = np.array([np.sum(y[qid == q] > 0) for q in ids])
    lonely = ids[n_rel == 0][0]
    order = np.concatenate([np.flatnonzero(qid != lonely), np.flatnonzero(qid == lonely)])
    size = int(np.sum(qid == lonely))
    chunks = (len(qid) - size, size)  # the last partition holds only the untrainable query
    model = DaskSVMMap(C=C, epsilon=EPSILON, client=client)
    with pytest.warns(UserWarning, match="1 without a relevant"):
        model.fit(*_dask(X[order], y[order], qid[order], chunks))
    assert model.n_partitions_ == 2
    _assert_close(model.coef_, local_fit.coef_)


def test_the_same_layout_gives_the_same_bits(client, ohsumed, reference_fit, local_fit):
    _assert_close(reference_fit.coef_, local_fit.coef_)
    with pytest.warns(UserWarning, match="1 of 63 queries"):
        again = DaskSVMMap(C=C, epsilon=EPSILON, client=client).fit(*_dask(*ohsumed, 2500))
    assert again.coef_.tobytes() == reference_fit.coef_.tobytes()


def test_dataframes_in_and_out(client):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y, qid = random_collection(4, n_queries=30)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    Xd = dd.from_pandas(frame, npartitions=3)
    yd = dd.from_pandas(pd.Series(y), npartitions=3)
    qd = dd.from_pandas(pd.Series(qid), npartitions=3)
    # the same 6 cutting-plane iterations as in-process (not converged: kept short)
    model = DaskSVMMap(C=10, max_iter=6, client=client).fit(Xd, yd, qd)
    _assert_close(model.coef_, SVMMap(C=10, max_iter=6).fit(X, y, qid).coef_)
    assert list(model.to_local().feature_names_in_) == list(frame.columns)
    scores = model.predict(Xd)
    assert isinstance(scores, dd.Series)
    np.testing.assert_allclose(scores.compute().to_numpy(), X @ model.coef_)


def test_shards_read_on_the_workers(client, ohsumed, local_fit, tmp_path):
    lines = data_file("OHSUMED", "Fold1", "train.txt").read_text().splitlines(keepends=True)
    qids = [line.split()[1] for line in lines]
    cuts = [0, qids.index("qid:20"), qids.index("qid:21"), qids.index("qid:50"), len(lines)]
    for k in range(4):  # shards of 19, 1 (qid 20), 29 and 14 queries
        (tmp_path / f"part-{k}.txt").write_text("".join(lines[cuts[k]:cuts[k + 1]]))
    X, y, qid = read_svmlight(str(tmp_path / "part-*.txt"), client=client)
    assert X.numblocks[0] == 4 and X.shape == ohsumed[0].shape
    # LETOR lines list every feature: the chunks are the reader's dense layout
    assert isinstance(X._meta, np.ndarray) and isinstance(X.blocks[2].compute(), np.ndarray)
    np.testing.assert_array_equal(X.compute(), ohsumed[0])
    np.testing.assert_array_equal(qid.compute(), ohsumed[2])
    model = DaskSVMMap(C=C, epsilon=EPSILON, client=client)
    with pytest.warns(UserWarning):
        model.fit(X, y, qid)
    _assert_close(model.coef_, local_fit.coef_)
    # float32 storage on the workers: the chunks stay float32, and rounding the values
    # (relative 6e-8) moves the model by less than the tolerance compared here
    X32, _, _ = read_svmlight(str(tmp_path / "part-*.txt"), client=client, dtype=np.float32)
    assert X32.dtype == np.float32 and X32.blocks[1].compute().dtype == np.float32
    with pytest.warns(UserWarning):
        model32 = DaskSVMMap(C=C, epsilon=EPSILON, client=client).fit(X32, y, qid)
    _assert_close(model32.coef_, local_fit.coef_)
    # one shard that is not LETOR-shaped: every chunk CSR, the same values
    (tmp_path / "part-3.txt").write_text("".join(lines[cuts[3]:-1]) + "0 qid:99 2:1\n")
    X, _, _ = read_svmlight(str(tmp_path / "part-*.txt"), client=client)
    assert sp.issparse(X._meta) and all(sp.issparse(X.blocks[k].compute()) for k in range(4))
    expected = ohsumed[0].copy()
    expected[-1] = 0
    expected[-1, 1] = 1
    np.testing.assert_array_equal(X.compute().toarray(), expected)
    # a malformed line is reported with the shard's path and line number, as in-process
    (tmp_path / "part-2.txt").write_text("1 qid:3 1:0.5\n0 qid:3 1:zero\n")
    with pytest.raises(InputFormatError, match=r"part-2\.txt:2: "):
        read_svmlight([tmp_path / "part-0.txt", tmp_path / "part-2.txt"], client=client)
    with pytest.raises(InputFormatError, match="no file matches"):
        read_svmlight(str(tmp_path / "nothing-*.txt"), client=client)


def test_grouped_shards_keep_their_queries_apart(client, tmp_path):
    """Shards without qid: whose .query files number their queries 1, 2, ... each are read as
    load_svmlight reads them from an index file: numbered on through the shards (issue 22;
    each shard's query 1 was one query spread over the partitions, refused)."""
    sizes = [[3, 2], [1], [2, 2, 1]]
    for k, shard in enumerate(sizes):
        rows = sum(shard)
        (tmp_path / f"g-{k}.txt").write_text("".join(f"{i % 2} 1:{i + 1} 2:{k}\n"
                                                      for i in range(rows)))
        (tmp_path / f"g-{k}.txt.query").write_text("".join(f"{n}\n" for n in shard))
    (tmp_path / "index.txt").write_text("".join(f"g-{k}.txt\n" for k in range(3)))
    _, _, qid = read_svmlight(str(tmp_path / "g-*.txt"), client=client)
    expected = load_svmlight(tmp_path / "index.txt")[2]
    np.testing.assert_array_equal(qid.compute(), expected)
    assert len(np.unique(expected)) == 6
    (tmp_path / "g-3.txt").write_text("1 qid:7 1:1\n0 qid:7 1:2\n")
    with pytest.raises(InputFormatError, match="g-3.txt: the lines carry qid: but other"):
        read_svmlight(str(tmp_path / "g-*.txt"), client=client)


def test_model_file_round_trip(client, tmp_path):
    X, y, qid = random_collection(5, n_queries=20, docs=(5, 10))
    model = DaskSVMMap(C=10, max_iter=4, client=client).fit(*_dask(X, y, qid, 60))
    model.save(tmp_path / "model.json")
    local = SVMMap.load(tmp_path / "model.json")
    again = DaskSVMMap.load(tmp_path / "model.json", client=client)
    assert local.coef_.tobytes() == model.coef_.tobytes() == again.coef_.tobytes()
    assert again.to_local().n_queries_used_ == model.n_queries_used_
    np.testing.assert_allclose(again.predict(da.from_array(X, chunks=(50, -1))).compute(),
                               local.predict(X))


def test_split_queries_are_refused_or_moved(client):
    # query 0 occurs in chunks 0 and 1 but not as one run across the boundary
    X, y = np.ones((6, 2)), np.array([1, 0, 1, 0, 1, 0.0])
    qid = np.array([0, 0, 1, 1, 0, 1])
    with pytest.raises(InputFormatError, match="query 0 has documents in partitions 0 and 1"):
        DaskSVMMap(client=client).fit(*_dask(X, y, qid, 4))
    with pytest.raises(ValueError, match="1-slack"):
        DaskSVMMap(algorithm="n-slack", client=client).fit(*_dask(X, y, qid, 4))


def _summary(ids):
    ids = np.asarray(ids)
    if not len(ids):
        return None, 0, 0, None, 0, 0, ids, 0
    lead = np.argmax(np.append(ids != ids[0], True))
    trail = np.argmax(np.append(ids[::-1] != ids[-1], True))
    return (ids[0], lead, np.sum(ids == ids[0]), ids[-1], trail, np.sum(ids == ids[-1]),
            np.unique(ids), len(ids))


@pytest.mark.parametrize("chunks, cuts", [
    ([[1, 1, 2], [3, 3], [4]], [3, 5, 6]),            # boundaries already at query ends
    ([[1, 1, 2], [2, 3], [3, 3]], [4, 7]),            # q2 and q3 run on
    ([[1, 1], [1, 2], [2, 2]], [3, 6]),               # q1 and q2 run on
    ([[1, 2], [2, 2], [2], [2, 3]], [6, 7]),          # q2 runs through two chunks
    ([[1], [], [1, 2]], [2, 3]),                      # an empty chunk in the way
])
def test_query_boundaries(chunks, cuts):
    assert query_boundaries([_summary(c) for c in chunks]) == cuts


def test_a_worker_killed_during_training(client, ohsumed, reference_fit, monkeypatch):
    from svmmap import dask as svmmap_dask

    pass_ = svmmap_dask.DistributedRankingModel.most_violated_constraints
    calls = []

    def killing_pass(self, w):
        calls.append(1)
        if len(calls) == 3:  # kill the worker holding the first partition, mid-training
            holder = next(iter(client.who_has([self.partitions[0]]).values()))[0]
            os.kill(client.run(os.getpid, workers=[holder])[holder], signal.SIGKILL)
        return pass_(self, w)

    monkeypatch.setattr(svmmap_dask.DistributedRankingModel, "most_violated_constraints",
                        killing_pass)
    with pytest.warns(UserWarning, match="1 of 63 queries"):
        recovered = DaskSVMMap(C=C, epsilon=EPSILON, client=client).fit(*_dask(*ohsumed, 2500))
    assert len(calls) > 3
    assert recovered.coef_.tobytes() == reference_fit.coef_.tobytes()


# -- the command line ------------------------------------------------------------------------------

def _shards(tmp_path, X, y, qid, n_shards):
    from svmmap.data.io import dump_svmlight

    bounds = np.searchsorted(qid, np.linspace(qid[0], qid[-1] + 1, n_shards + 1))
    for k in range(n_shards):
        rows = slice(bounds[k], bounds[k + 1])
        dump_svmlight(tmp_path / f"shard-{k}.txt", X[rows], y[rows], qid[rows])
    return str(tmp_path / "shard-*.txt")


def test_learn_joins_a_scheduler_and_reads_a_glob(client, tmp_path, capsys):
    from svmmap.commands.learn import learn_main

    X, y, qid = random_collection(6, n_queries=24)
    pattern = _shards(tmp_path, X, y, qid, 3)
    assert learn_main(["-c", "10", "-e", "1e-6", "--scheduler", client.scheduler.address,
                       pattern, str(tmp_path / "model.json")]) == 0
    assert f"Read {len(y)} documents, 24 queries" in capsys.readouterr().out
    reference = SVMMap(C=10, epsilon=1e-6).fit(X, y, qid)
    model = SVMMap.load(tmp_path / "model.json")
    # the same optimum: the objectives agree within the stopping rule, and each w is within
    # its certified gap of the optimum (|w - w*|^2 / 2 <= the duality gap); the path to it
    # (the stabilised oracle points of svmstruct_api.learner) may differ with the rounding
    # of another summation order
    ours, theirs = model.training_result_, reference.training_result_
    assert ours.primal_objective == pytest.approx(theirs.primal_objective, rel=2e-6)
    assert np.linalg.norm(model.coef_ - reference.coef_) <= \
        np.sqrt(2 * max(ours.duality_gap, 0)) + np.sqrt(2 * max(theirs.duality_gap, 0)) + \
        1e-12 * np.linalg.norm(reference.coef_)  # rounding, where both gaps are exactly 0


def test_learn_on_local_workers_reports_a_bad_shard_line(tmp_path, capsys):
    from svmmap.commands.learn import learn_main

    X, y, qid = random_collection(7, n_queries=6)
    pattern = _shards(tmp_path, X, y, qid, 2)
    with open(tmp_path / "shard-1.txt", "a") as shard:
        shard.write("1 qid:99 1:one\n")
    n_lines = len((tmp_path / "shard-1.txt").read_text().splitlines())
    assert learn_main(["--dask-workers", "1", pattern, str(tmp_path / "model.json")]) == 1
    assert f"shard-1.txt:{n_lines}: " in capsys.readouterr().err
    assert not (tmp_path / "model.json").exists()
    with pytest.raises(SystemExit):
        learn_main(["-w", "0", "--dask-workers", "2", pattern, str(tmp_path / "model.json")])
