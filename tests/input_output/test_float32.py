"""load_svmlight(path, dtype=np.float32): X stored in float32 (the float64 values rounded),
a value beyond float32's range refused with file and line, and a model trained on it equal
to the float64 model within the stopping tolerance."""

import numpy as np
import pytest

from svmmap import SVMMap, dump_svmlight, load_svmlight
from svmmap.errors import InputFormatError

from conftest import random_collection, traced_peak


@pytest.fixture(scope="module")
def train_file(tmp_path_factory):
    X, y, qid = random_collection(seed=4, n_queries=30, docs=(5, 25), n_features=10, rate=0.3)
    path = tmp_path_factory.mktemp("f32") / "train.txt"
    dump_svmlight(path, X, y, qid)
    return path


def test_float32_storage_holds_the_rounded_values(train_file):
    X64, y64, q64 = load_svmlight(train_file)
    X32, y32, q32 = load_svmlight(train_file, dtype=np.float32)
    assert X64.dtype == np.float64 and X32.dtype == np.float32
    assert X32.data.nbytes * 2 == X64.data.nbytes
    np.testing.assert_array_equal(X32.toarray(), X64.toarray().astype(np.float32))
    np.testing.assert_array_equal(y32, y64)
    np.testing.assert_array_equal(q32, q64)


def test_float32_model_equals_the_float64_model_within_the_stopping_tolerance(train_file):
    X64, y, qid = load_svmlight(train_file)
    X32, _, _ = load_svmlight(train_file, dtype=np.float32)
    for C in (1.0, 100.0):
        m64 = SVMMap(C=C).fit(X64, y, qid)
        m32 = SVMMap(C=C).fit(X32, y, qid)
        r64, r32 = m64.training_result_, m32.training_result_
        # the objective is 1-strongly convex, so |w - w*| <= sqrt(2 gap); float32 rounding of
        # features in [0, 1) (relative 6e-8) moves the optimum far less than the gaps allow
        bound = np.sqrt(2 * max(r64.duality_gap, 0)) + np.sqrt(2 * max(r32.duality_gap, 0))
        assert np.linalg.norm(m32.coef_ - m64.coef_) <= bound + 1e-6
        assert r32.primal_objective == pytest.approx(r64.primal_objective,
                                                     rel=2 * SVMMap().rel_gap + 1e-6)


def test_value_beyond_float32_is_refused_with_file_and_line(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("1 qid:1 1:0.5\n0 qid:1 1:-1e39 2:0.5\n")
    assert load_svmlight(path)[0].dtype == np.float64  # fine in float64
    with pytest.raises(InputFormatError, match=r"big.txt:2: feature 1: value '-1e39' is too "
                                               r"large \(magnitude at most 3.40282e\+38"):
        load_svmlight(path, dtype=np.float32)


@pytest.mark.parametrize("bad", [np.int32, "float16", np.complex128])
def test_other_dtypes_are_refused(train_file, bad):
    with pytest.raises(ValueError, match="dtype must be np.float64 or np.float32"):
        load_svmlight(train_file, dtype=bad)


def _kernel_cases():
    """(name, the constraint pass of a loss on (X, w, relevant, ptr)) for each kernel."""
    from svmmap.kernels._loss_kernels import loss_constraints
    from svmmap.kernels._map_kernels import map_constraints
    from svmmap.kernels._roc_kernels import roc_constraints

    return [("map", map_constraints), ("roc", roc_constraints),
            ("ndcg", lambda X, w, relevant, ptr: loss_constraints(
                X, w, relevant * 3.0, ptr, "ndcg"))]


@pytest.mark.parametrize("layout", ["dense", "csr", "csr-int64"])
def test_kernels_on_float32_x_give_the_float64_results_of_the_rounded_values(train_file,
                                                                             layout):
    """Read in place and summed in float64, float32 values give bit for bit what their
    float64 copy gives: every product is exact in float64."""
    from svmmap.core.collection import QueryCollection
    from svmmap.kernels._kernel_inputs import CSRArrays, csr_for_kernels
    from svmmap.kernels._map_kernels import combine_rows

    X32, y, qid = load_svmlight(train_file, dtype=np.float32)
    collection = QueryCollection.from_arrays(X32, y, qid)
    X32 = collection.X
    X64 = X32.astype(np.float64)
    if layout == "dense":
        X32, X64 = X32.toarray(), X64.toarray()
    else:
        X32, X64 = csr_for_kernels(X32), csr_for_kernels(X64)
        if layout == "csr-int64":
            X32, X64 = (CSRArrays(X.data, X.indices.astype(np.intp), X.indptr.astype(np.intp),
                                  X.shape) for X in (X32, X64))
    relevant = (collection.labels > 0).astype(np.uint8)
    w = np.random.default_rng(0).normal(size=X32.shape[1])
    for name, constraints in _kernel_cases():
        for single, double in zip(constraints(X32, w, relevant, collection.ptr),
                                  constraints(X64, w, relevant, collection.ptr)):
            assert single.tobytes() == double.tobytes(), name
        coef = constraints(X32, w, relevant, collection.ptr)[1]
        weights = np.linspace(0.5, 1.5, collection.n_queries)
        assert combine_rows(X32, coef, collection.ptr, weights).tobytes() == \
            combine_rows(X64, coef, collection.ptr, weights).tobytes()


def test_float32_x_is_not_copied_to_float64(tmp_path):
    """The collection and the kernels hold the reader's float32 values themselves, and
    training allocates less than those values: a float64 copy of X would be twice them."""
    from svmmap.core.collection import QueryCollection

    X, y, qid = random_collection(seed=5, n_queries=400, docs=(40, 60), n_features=40)
    path = tmp_path / "dense.txt"
    dump_svmlight(path, X, y, qid)
    X32, y, qid = load_svmlight(path, dtype=np.float32)
    collection = QueryCollection.from_arrays(X32, y, qid)
    assert collection.kernel_X.data.dtype == np.float32
    assert np.shares_memory(collection.kernel_X.data, X32.data)
    SVMMap(C=1.0, max_iter=3).fit(X32[:200], y[:200], qid[:200])  # imports, caches
    model, peak = traced_peak(lambda: SVMMap(C=1.0, max_iter=20).fit(X32, y, qid))
    assert model.training_result_.iterations > 3
    assert peak < X32.data.nbytes, peak / X32.data.nbytes


def test_the_commands_read_float32_with_dtype(train_file, tmp_path):
    """``--dtype float32``: svmmap_learn trains the model of the values rounded to float32
    (within the gaps of the float64 one), svmmap_classify scores with float32 storage."""
    from svmmap.data.model_file import load_model

    from conftest import run_command

    models = {}
    for dtype in ("float64", "float32"):
        models[dtype] = tmp_path / f"{dtype}.json"
        run_command("svmmap_learn", "-v", "0", "-c", "10", "--dtype", dtype, train_file,
                    models[dtype])
    m64, m32 = (load_model(models[d]) for d in ("float64", "float32"))
    w64, w32 = (np.asarray(m.coef_) for m in (m64, m32))
    gaps = [m.training_result_.duality_gap for m in (m64, m32)]
    assert np.linalg.norm(w32 - w64) <= sum(np.sqrt(2 * max(g, 0)) for g in gaps) + 1e-6
    for dtype in ("float64", "float32"):
        run_command("svmmap_classify", "-v", "0", "--dtype", dtype, train_file,
                    models["float32"], tmp_path / f"{dtype}.pred")
    p64, p32 = (np.loadtxt(tmp_path / f"{d}.pred") for d in ("float64", "float32"))
    X64, _, _ = load_svmlight(train_file)
    np.testing.assert_allclose(p64, X64 @ w32, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(p32, X64.astype(np.float32).astype(np.float64) @ w32,
                               rtol=1e-6, atol=1e-9)
    # the option reaches the reader: a value beyond float32's range is refused only with it
    big = tmp_path / "big.txt"
    big.write_text("1 qid:1 1:0.5\n0 qid:1 1:1e39\n")
    for command, args in (("svmmap_learn", [big, tmp_path / "m.json"]),
                          ("svmmap_classify", [big, models["float32"], tmp_path / "b.pred"])):
        refused = run_command(command, "--dtype", "float32", *args, check=False)
        assert refused.returncode == 1 and "big.txt:2: feature 1: value '1e39' is too large" \
            in refused.stderr, refused.stderr
