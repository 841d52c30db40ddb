"""The commands' scipy-free path (svmmap.data.io.read_svmlight, svmmap.kernels._csr): the reader's
CSR
arrays are the arrays of load_svmlight's scipy matrix, their row gather and scores are
scipy's to the bit, and a collection, a training run and a model's scores made from them are
those made from the scipy matrix."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from svmmap.core import training
from svmmap.core.collection import QueryCollection, check_features
from svmmap.core.normalize import Normalizer, per_query_normalized
from svmmap.core.params import SVMMAP_DEFAULTS
from svmmap.data.io import dump_svmlight, load_svmlight, read_svmlight
from svmmap.kernels._csr import as_scipy, is_scipy_sparse, is_sparse, scores, take_rows
from svmmap.kernels._kernel_inputs import CSRArrays

from conftest import FAST, random_collection, traced_peak


def _arrays(X):
    return CSRArrays(X.data, X.indices, X.indptr, X.shape)


def _interleaved(seed=0, n_queries=9, n_features=7):
    """Sparse graded data whose queries' documents are not contiguous (the collection
    gathers rows), with two all-zero rows, an all-zero column and a column without zeros."""
    X, y, qid = random_collection(seed, n_queries=n_queries, docs=(4, 12),
                                  n_features=n_features, rate=0.4)
    rng = np.random.default_rng(seed)
    X[rng.random(X.shape) < 0.5] = 0.0
    X[:2] = 0.0
    X[:, 3] = 0.0
    X[:, 5] = 1.0 + np.abs(X[:, 5])
    order = rng.permutation(len(y))
    return sp.csr_matrix(X[order]), y[order] * rng.integers(1, 3, len(y)), qid[order]


@pytest.mark.parametrize("text", [
    "1 qid:3 1:0.5 4:2\n0 qid:1 2:1\n2 qid:3 1:0 3:-1.5 # c\n0 qid:1\n",
    "1 qid:a 1:0.5\u00a04:2\n0 qid:b 2:1\n",  # a no-break space: the Python parser
])
def test_read_svmlight_holds_load_svmlight_arrays(tmp_path, text):
    path = tmp_path / "d.txt"
    path.write_text(text, encoding="utf-8")
    X, y, qid = load_svmlight(path)
    arrays, y2, qid2 = read_svmlight(path)
    assert isinstance(arrays, CSRArrays) and sp.isspmatrix_csr(X)
    assert arrays.shape == X.shape
    for name in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(getattr(arrays, name), getattr(X, name))
        assert getattr(arrays, name).dtype == getattr(X, name).dtype
    np.testing.assert_array_equal(y, y2)
    np.testing.assert_array_equal(qid, qid2)


def test_read_svmlight_concatenates_files_as_load_svmlight(tmp_path):
    X, y, qid = _interleaved(seed=4)
    first, second, index = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "files"
    dump_svmlight(first, X[:20], y[:20], qid[:20])
    dump_svmlight(second, X[20:], y[20:], qid[20:])
    index.write_text("a.txt\nb.txt\n")
    loaded, arrays = load_svmlight(index)[0], read_svmlight(index, n_features=9)[0]
    assert arrays.shape == (X.shape[0], 9) and loaded.shape[0] == X.shape[0]
    np.testing.assert_array_equal(as_scipy(arrays).toarray()[:, :loaded.shape[1]],
                                  loaded.toarray())
    assert arrays.indices.dtype == arrays.indptr.dtype


@st.composite
def matrices_and_rows(draw):
    m, d = draw(st.integers(0, 12)), draw(st.integers(1, 9))
    dense = np.array(draw(st.lists(st.floats(-1e3, 1e3, allow_nan=False, width=32),
                                   min_size=m * d, max_size=m * d)), dtype=np.float64)
    dense = dense.reshape(m, d)
    dense[np.array(draw(st.lists(st.booleans(), min_size=m * d, max_size=m * d)),
                   dtype=bool).reshape(m, d)] = 0.0
    X = sp.csr_matrix(dense)
    index_type = draw(st.sampled_from([np.int32, np.intp]))
    value_type = draw(st.sampled_from([np.float64, np.float32]))
    arrays = CSRArrays(X.data.astype(value_type), X.indices.astype(index_type),
                       X.indptr.astype(index_type), X.shape)
    rows = np.array(draw(st.lists(st.integers(0, m - 1), max_size=15)) if m else [],
                    dtype=np.intp)
    w = np.array(draw(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=d,
                               max_size=d)))
    return arrays, rows, w


@FAST
@given(matrices_and_rows())
def test_row_gather_and_scores_are_scipys(case):
    """take_rows and scores of CSRArrays (int32 or intp indices, float64 or float32 values)
    against scipy's fancy indexing and product of the same matrix, to the bit."""
    arrays, rows, w = case
    X = as_scipy(arrays)
    gathered, expected = take_rows(arrays, rows), X[rows]
    assert gathered.shape == expected.shape
    np.testing.assert_array_equal(gathered.indptr, expected.indptr)
    np.testing.assert_array_equal(gathered.indices, expected.indices)
    np.testing.assert_array_equal(gathered.data, expected.data)
    assert gathered.data.dtype == arrays.data.dtype
    assert gathered.indices.dtype == gathered.indptr.dtype == arrays.indices.dtype
    np.testing.assert_array_equal(scores(arrays, w), X.astype(np.float64) @ w)


def test_take_rows_refuses_rows_out_of_range():
    arrays = _arrays(sp.csr_matrix(np.eye(3)))
    for rows in ([3], [-1]):
        with pytest.raises(IndexError, match="out of range"):
            take_rows(arrays, np.array(rows))


def test_sparse_checks_need_no_scipy_import():
    X = sp.csr_matrix(np.eye(2))
    assert is_scipy_sparse(X) and is_sparse(X) and is_sparse(_arrays(X))
    assert not is_scipy_sparse(_arrays(X)) and not is_sparse(np.eye(2))
    assert as_scipy(X) is X


def test_a_collection_of_csr_arrays_is_the_scipy_collection():
    X, y, qid = _interleaved(seed=2)
    from_scipy = QueryCollection.from_checked(check_features(X), y, qid)
    from_arrays = QueryCollection.from_checked(_arrays(X), y, qid)
    assert not from_scipy.is_contiguous
    for a, b in ((from_scipy.kernel_X, from_arrays.kernel_X),
                 (from_scipy.subset([4, 1]).kernel_X, from_arrays.subset([4, 1]).kernel_X)):
        assert a.shape == b.shape
        for name in ("data", "indices", "indptr"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert per_query_normalized(from_arrays.X, from_arrays.ptr) == \
        per_query_normalized(from_scipy.X, from_scipy.ptr)
    for kind in ("standard", "minmax"):  # fitted without scipy: scipy's numbers
        a, b = Normalizer.fit(kind, from_arrays.X), Normalizer.fit(kind, from_scipy.X)
        np.testing.assert_array_equal(a.shift, b.shift)
        np.testing.assert_array_equal(a.scale, b.scale)
    dense = Normalizer.fit("minmax", from_scipy.X.toarray())
    np.testing.assert_array_equal(Normalizer.fit("minmax", from_arrays.X).shift, dense.shift)
    np.testing.assert_array_equal(Normalizer.fit("minmax", from_arrays.X).scale, dense.scale)
    np.testing.assert_array_equal(Normalizer.fit("standard", from_scipy.X).shift,
                                  np.asarray(from_scipy.X.mean(axis=0)).ravel())
    normalizer = Normalizer.fit("standard", from_scipy.X)
    np.testing.assert_array_equal(normalizer.scale_columns(from_arrays.X).data,
                                  normalizer.scale_columns(from_scipy.X).data)
    w = np.linspace(-1, 1, X.shape[1])
    np.testing.assert_array_equal(normalizer.scores(from_arrays.X, w),
                                  normalizer.scores(from_scipy.X, w))


@pytest.mark.parametrize("params", [
    {"C": 10.0},
    {"C": 10.0, "algorithm": "n-slack"},
    {"C": 3.0, "loss": "acc"},
    {"C": 10.0, "loss": "ndcg@3", "normalize": "standard"},
    {"C": 10.0, "loss": "roc", "normalize": "minmax"},
])
def test_training_on_csr_arrays_gives_the_scipy_model(params):
    """The commands' data (CSRArrays) and the estimators' (a scipy matrix) train the same
    model, bit for bit, and score the same."""
    X, y, qid = _interleaved(seed=7)
    params = {**SVMMAP_DEFAULTS, **params}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # queries without a relevant document
        fitted = [training.fit(params, QueryCollection.from_checked(data, y, qid))
                  for data in (check_features(X), _arrays(X))]
    np.testing.assert_array_equal(fitted[0].coef, fitted[1].coef)
    assert fitted[0].intercept == fitted[1].intercept
    assert fitted[0].training_result.iterations == fitted[1].training_result.iterations
    np.testing.assert_array_equal(fitted[1].scores(_arrays(X)), fitted[0].scores(X))


@pytest.mark.parametrize("loss", ["map", "acc", "roc", "ndcg@3"])
def test_per_query_hooks_on_csr_arrays_agree_with_the_batch(loss):
    """A plugin over CSRArrays: the fused batch (QueryRows: scores and row sums without
    scipy) against the per-example SVMstruct hooks, which slice the rows as a scipy matrix."""
    from svmstruct_api.plugin import StructuredModel

    X, y, qid = _interleaved(seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plugin = training.prepare({**SVMMAP_DEFAULTS, "loss": loss},
                                  QueryCollection.from_checked(_arrays(X), y, qid)).plugin
    w = np.random.default_rng(0).normal(size=plugin.n_features)
    fast = plugin.most_violated_constraints(w)
    slow = StructuredModel.most_violated_constraints(plugin, w)
    np.testing.assert_allclose(fast.loss, slow.loss, atol=1e-12)
    np.testing.assert_allclose(np.asarray(fast.dpsi), slow.dpsi, atol=1e-12)
    other = np.random.default_rng(1).normal(size=plugin.n_features)
    np.testing.assert_allclose(fast.dpsi @ other, slow.dpsi @ other, atol=1e-12)


@pytest.mark.parametrize("index_type", [np.int32, np.int64])
def test_float32_scipy_scores_read_the_values_in_place(index_type):
    """A float32 scipy CSR matrix is scored from its own arrays: the scores are the float64
    scores of the rounded values (scipy's product of the float64 matrix, to the bit), and no
    float64 copy of the values is made (traced memory stays far below one)."""
    rng = np.random.default_rng(3)
    X = sp.random(400, 300, density=0.5, format="csr", dtype=np.float32, random_state=rng)
    X.indices, X.indptr = X.indices.astype(index_type), X.indptr.astype(index_type)
    w = rng.standard_normal(300)
    reference = X.astype(np.float64) @ w
    got, peak = traced_peak(lambda: scores(X, w))
    assert got.dtype == np.float64 and np.array_equal(got, reference)
    assert peak < X.data.nbytes // 4, peak  # a float64 copy would be twice X.data
    model = training.FittedModel(coef=w, intercept=0.5)  # what classify and the estimator use
    assert np.array_equal(model.scores(X), reference + 0.5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dense_scores_are_the_csr_arrays_bits_without_a_copy(dtype):
    """A dense X (float64 or float32, C-contiguous or a column slice) is scored in place: bit
    for bit the scores of the CSR arrays of the same values (each row summed in column order,
    zeros adding nothing), no copy of X traced."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((1001, 136)).astype(dtype)
    X[rng.random(X.shape) < 0.3] = 0
    w = rng.standard_normal(136)
    stored = X != 0
    indptr = np.concatenate([[0], np.cumsum(stored.sum(axis=1))]).astype(np.int32)
    arrays = CSRArrays(X[stored], np.nonzero(stored)[1].astype(np.int32), indptr, X.shape)
    got, peak = traced_peak(lambda: scores(X, w))
    assert got.tobytes() == scores(arrays, w).tobytes()
    np.testing.assert_allclose(got, X.astype(np.float64) @ w, rtol=1e-10, atol=1e-10)
    assert peak < X.nbytes // 4, peak  # a float64 copy of X would be X's size at least
    columns = X[:, 10:50]
    assert scores(columns, w[10:50]).tobytes() == \
        scores(np.ascontiguousarray(columns), w[10:50]).tobytes()
    with pytest.raises(ValueError):
        scores(X, w[:-1])
