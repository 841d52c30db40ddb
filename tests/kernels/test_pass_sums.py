"""The cut groups' sums formed inside the fused constraint pass (_query_core.constraints_pass
with a PassSums; RankingPlugin.group_sums_in_pass), and svmmap_learn's dense X for a sparse
file whose dense matrix is no larger (svmmap.kernels._csr.dense_if_no_larger)."""

import numpy as np
import pytest
import scipy.sparse as sp

from svmmap import SVMMap
from svmmap.commands.learn import _dense_if_no_larger
from svmmap.core.collection import QueryCollection
from svmmap.core.plugins import MapPlugin, MeasurePlugin, RocPlugin
from svmmap.core.plugins.rows import QueryRows
from svmmap.data.io import dump_svmlight, load_svmlight, read_svmlight
from svmmap.kernels._csr import dense_if_no_larger
from svmmap.kernels._kernel_inputs import CSRArrays, checked_pass_sums
from svmstruct_api.cut_groups import CUT_GROUPS
from svmstruct_api.learner import OneSlackSSVM

from conftest import random_collection, run_command

PLUGINS = {"map": lambda c, **kw: MapPlugin(c, **kw),
           "roc": lambda c, **kw: RocPlugin(c, **kw),
           "ndcg@5": lambda c, **kw: MeasurePlugin(c, "ndcg@5", **kw)}


def _features(X, form):
    """X in one of the layouts the kernels read."""
    csr = sp.csr_matrix(X)
    if form == "dense":
        return np.ascontiguousarray(X)
    if form == "dense float32":
        return np.ascontiguousarray(X, dtype=np.float32)
    index = np.int32 if form == "csr int32" else np.intp
    values = np.float32 if form == "csr float32" else np.float64
    return CSRArrays(csr.data.astype(values), csr.indices.astype(index),
                     csr.indptr.astype(index), csr.shape)


def _collection(form, seed=4):
    X, y, qid = random_collection(seed=seed, n_queries=23, docs=(3, 17), n_features=9,
                                  rate=0.35)
    # gaps: 15% non-zero, so the CSR forms are read as CSR, not dense (kernel_X)
    X[np.random.default_rng(seed).random(X.shape) < 0.85] = 0.0
    y[::7] = 2.0  # graded labels for NDCG
    collection, _, _ = QueryCollection.from_arrays(X, y, qid).trainable()
    collection = collection.with_features(_features(np.asarray(collection.X), form))
    assert isinstance(collection.kernel_X, np.ndarray) == form.startswith("dense")
    return collection


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("subset", [False, True])
@pytest.mark.parametrize("loss", sorted(PLUGINS))
@pytest.mark.parametrize("form", ["dense", "dense float32", "csr int32", "csr int64",
                                  "csr float32"])
def test_the_pass_forms_the_group_sums_of_a_second_pass_to_the_bit(form, loss, subset,
                                                                    threads):
    """A pass told the groups returns, through its batch's ``group_sums``, the sums a
    separate pass over the rows forms (QueryRows.group_sums, combine_rows: each group's
    queries in order), bit for bit, whatever the number of threads; the losses,
    coefficients and margins are those of a pass told nothing; other weights are summed
    afresh."""
    collection = _collection(form)
    queries = np.array([5, 0, 3, 9, 12, 2, 7, 1], dtype=np.intp) if subset else None
    told = PLUGINS[loss](collection, n_threads=threads, queries=queries)
    plain = PLUGINS[loss](collection, queries=queries)
    rng = np.random.default_rng(11)
    weights = rng.uniform(0.5, 2.0, told.n_examples)
    weights[1] = 0.0  # a query that adds nothing
    groups, n_groups = np.arange(told.n_examples) % 3, 4  # group 3 empty
    told.group_sums_in_pass(weights, groups, n_groups)
    w = rng.normal(size=told.n_features)
    batch, reference = told.most_violated_constraints(w), plain.most_violated_constraints(w)
    assert batch.dpsi._sums is not None  # formed in the pass, not on request
    np.testing.assert_array_equal(batch.loss, reference.loss)
    np.testing.assert_array_equal(batch.dpsi.coef, reference.dpsi.coef)
    np.testing.assert_array_equal(batch.dpsi @ w, reference.dpsi @ w)
    sums = batch.dpsi.group_sums(weights, groups, n_groups)
    expected = reference.dpsi.group_sums(weights, groups, n_groups)
    assert sums.shape == (n_groups, told.n_features) and not sums[3].any()
    np.testing.assert_array_equal(sums, expected)
    # the second pass's sums are each group's own product (test_binned_implicit) and not 0
    assert np.abs(expected).sum() > 0
    other = weights[::-1].copy()
    np.testing.assert_array_equal(batch.dpsi.group_sums(other, groups, n_groups),
                                  reference.dpsi.group_sums(other, groups, n_groups))
    told.group_sums_in_pass(None, None, 0)  # told no groups: no sums formed
    assert told.most_violated_constraints(w).dpsi._sums is None


def test_pass_sums_refuse_weights_and_targets_that_do_not_fit():
    """checked_pass_sums: one finite weight and one target in range per query; the order
    lists each target's queries in ascending order."""
    made = checked_pass_sums([1.0, 2.0, 3.0, 4.0], [2, 0, 2, 0], 3, 4)
    np.testing.assert_array_equal(made.order, [1, 3, 0, 2])
    np.testing.assert_array_equal(made.starts, [0, 2, 2, 4])
    for weights, targets, n in (([1.0, 2.0], [0, 0, 0, 0], 1), ([np.nan] * 4, [0] * 4, 1),
                                ([1.0] * 4, [0, 1, 2, 3], 3), ([1.0] * 4, [-1, 0, 0, 0], 2),
                                ([1.0] * 4, [0] * 4, 0)):
        with pytest.raises(ValueError, match="one finite weight and one target"):
            checked_pass_sums(weights, targets, n, 4)


def test_a_fit_with_the_sums_in_the_pass_is_the_fit_without_to_the_bit(monkeypatch):
    """The 1-slack learner tells the model its cut groups' weights b_i/C_g when a fit
    starts; the fit with the sums formed in the pass equals the fit with a separate pass,
    to the bit (w, objective, iterations), at a C that needs many cuts."""
    collection = _collection("csr int32", seed=8)
    told = MapPlugin(collection)
    heard = []
    original = told.group_sums_in_pass

    def spy(weights, groups, n_groups):
        heard.append((None if weights is None else weights.copy(), groups, n_groups))
        original(weights, groups, n_groups)

    monkeypatch.setattr(told, "group_sums_in_pass", spy)
    deaf = MapPlugin(collection)
    monkeypatch.setattr(deaf, "group_sums_in_pass", lambda *args: None)
    fits = [OneSlackSSVM(C=300.0, rel_gap=1e-8).fit(model) for model in (told, deaf)]
    n_groups = min(CUT_GROUPS, told.n_examples)
    assert len(heard) == 1 and heard[0][2] == n_groups
    weights, groups, _ = heard[0]
    np.testing.assert_allclose(np.bincount(groups, weights), np.ones(n_groups), rtol=1e-12)
    np.testing.assert_array_equal(fits[0].w, fits[1].w)
    assert fits[0].primal_objective == fits[1].primal_objective
    assert fits[0].iterations == fits[1].iterations > 10
    # a fit without cut groups tells the model so
    OneSlackSSVM(C=300.0, cut_groups=1).fit(told)
    assert heard[-1] == (None, None, 0) and told._pass_sums is None


@pytest.mark.parametrize("values", [np.float64, np.float32])
def test_a_sparse_matrix_is_dense_exactly_when_that_is_no_larger(values):
    """dense_if_no_larger: the dense ndarray (the values' dtype, the same entries) when m d
    itemsize <= the bytes of data, indices and indptr, else the CSRArrays themselves."""
    rng = np.random.default_rng(2)
    m, d = 40, 30
    itemsize = np.dtype(values).itemsize
    for nnz in range(0, m * d + 1, 37):
        X = np.zeros(m * d)
        X[rng.permutation(m * d)[:nnz]] = rng.normal(size=nnz)
        csr = sp.csr_matrix(X.reshape(m, d).astype(values))
        arrays = CSRArrays(csr.data, csr.indices, csr.indptr, csr.shape)
        made = dense_if_no_larger(arrays)
        no_larger = m * d * itemsize <= csr.data.nbytes + csr.indices.nbytes + \
            csr.indptr.nbytes
        assert isinstance(made, np.ndarray) == no_larger
        if no_larger:
            assert made.dtype == values and made.flags.c_contiguous
            np.testing.assert_array_equal(made, csr.toarray())
        else:
            assert made is arrays


def test_svmmap_learn_trains_a_dense_enough_sparse_file_as_its_dense_matrix(tmp_path):
    """svmmap_learn on SVMlight lines that leave zeros out: where X dense takes no more memory
    than the reader's CSR arrays, the command trains on that ndarray (the reader's values
    in their places) and writes the model of the same data with every feature listed (the
    dense reading), byte for byte; a sparser file stays CSR and its model is the API's fit
    on the scipy matrix."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 12))
    y, qid = rng.integers(0, 3, 120).astype(float), np.repeat(np.arange(12), 10)
    for share, dense in ((0.1, True), (0.6, False)):
        Z = X.copy()
        Z[rng.random(Z.shape) < share] = 0.0
        Z[:, -1] = 1.0  # the width is 12 either way
        sparse_path, dense_path = tmp_path / f"lines_{share}.txt", tmp_path / f"all_{share}.txt"
        dump_svmlight(sparse_path, sp.csr_matrix(Z), y, qid)  # zeros left out
        dense_path.write_text("".join(
            f"{int(label)} qid:{q} " + " ".join(f"{j + 1}:{v!r}" for j, v in enumerate(row))
            + "\n" for label, q, row in zip(y, qid, Z.tolist())))
        read = read_svmlight(sparse_path)
        assert isinstance(read[0], CSRArrays)
        trained = _dense_if_no_larger(read)[0]
        assert isinstance(trained, np.ndarray) == dense
        if dense:
            np.testing.assert_array_equal(trained, Z)
        assert isinstance(read_svmlight(dense_path)[0], np.ndarray)
        models = []
        for path in (sparse_path, dense_path):
            models.append(tmp_path / f"{path.stem}.json")
            run_command("svmmap_learn", "-c", "100", path, models[-1])
        if dense:
            assert models[0].read_bytes() == models[1].read_bytes()
        else:  # the CSR arrays' fit: the API on them
            api = SVMMap(C=100.0).fit(*load_svmlight(sparse_path))
            api.save(tmp_path / "api.json")
            assert (tmp_path / "api.json").read_bytes() == models[0].read_bytes()


def test_query_rows_ignore_sums_of_other_weights():
    """QueryRows given a pass's sums returns them only for those weights, groups and number
    of groups."""
    collection = _collection("dense")
    plugin = MapPlugin(collection)
    batch = plugin.most_violated_constraints(np.ones(plugin.n_features))
    rows = batch.dpsi
    v, groups = np.ones(plugin.n_examples), np.arange(plugin.n_examples) % 2
    marked = np.full((2, plugin.n_features), 7.0)
    known = QueryRows(rows.X, rows.coef, rows.ptr, rows.query_of_doc, rows.queries,
                      sums=(v, groups, 2, marked))
    assert known.group_sums(v, groups, 2) is marked
    for args in ((2 * v, groups, 2), (v, 1 - groups, 2), (v, groups, 3)):
        np.testing.assert_array_equal(known.group_sums(*args), rows.group_sums(*args))
