"""SVMMap(normalize=...) and svmmap_learn --normalize (svmmap.core.normalize): the model trained on
the scaled columns is the model trained on z = (x - shift) / scale (the shift changes no
ranking constraint; SVM-ACC's free bias absorbs it), dense and sparse alike; the normaliser is
stored in the model file and applied by decision_function and svmmap_classify; LETOR's
per-query normalised MQ2008 is recognised as such."""

import shutil
import subprocess
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from svmmap import SVMMap, load_svmlight
from svmmap.core.normalize import Normalizer, per_query_normalized
from svmmap.errors import InputFormatError
from svmmap.features import BinnedFeatureMap
from svmmap.kernels._kernel_inputs import csr_for_kernels

from conftest import ROOT, random_collection


def _data():
    X, y, qid = random_collection(31, n_queries=14, n_features=4)
    X = X * np.array([1.0, 40.0, 0.02, 3.0]) + np.array([5.0, -20.0, 0.0, 1.0])
    X[:, 2] = 0.5  # constant
    return X, y, qid


@pytest.mark.parametrize("normalize", ["standard", "minmax"])
@pytest.mark.parametrize("loss", ["map", "roc", "acc"])
def test_equals_training_on_the_normalised_features(normalize, loss):
    X, y, qid = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SVMMap(C=3.0, loss=loss, normalize=normalize).fit(X, y, qid)
        sparse = SVMMap(C=3.0, loss=loss, normalize=normalize).fit(sp.csr_matrix(X), y, qid)
        z = model.normalizer_.transform(X)
        reference = SVMMap(C=3.0, loss=loss).fit(z, y, qid)
    if normalize == "standard":
        np.testing.assert_allclose(z.mean(axis=0), 0, atol=1e-12)
        np.testing.assert_allclose(z.std(axis=0)[[0, 1, 3]], 1)
    else:
        np.testing.assert_allclose(z.min(axis=0), 0, atol=1e-12)
        np.testing.assert_allclose(z.max(axis=0)[[0, 1, 3]], 1)
    assert model.normalizer_.scale[2] == 1.0  # a constant column keeps scale 1
    np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(sparse.coef_, model.coef_, rtol=1e-6, atol=1e-9)
    assert model.intercept_ == pytest.approx(reference.intercept_, abs=1e-7)
    np.testing.assert_allclose(model.decision_function(X), reference.decision_function(z),
                               rtol=1e-6, atol=1e-8)


def test_stored_and_applied_by_the_commands(tmp_path):
    X, y, qid = _data()
    data = tmp_path / "train.txt"
    data.write_text("".join(f"{int(label)} qid:{q} " + " ".join(
        f"{j + 1}:{float(v)!r}" for j, v in enumerate(row)) + "\n"
        for label, q, row in zip(y, qid, X)))
    learn, classify = shutil.which("svmmap_learn"), shutil.which("svmmap_classify")
    model_path = tmp_path / "model.json"
    subprocess.run([learn, "-v", "0", "--normalize", "minmax", "-c", "2", str(data),
                    str(model_path)], check=True)
    Xr, yr, qr = load_svmlight(data)
    api = SVMMap(C=2.0, normalize="minmax").fit(Xr, yr, qr)
    loaded = SVMMap.load(model_path)
    np.testing.assert_array_equal(loaded.coef_, api.coef_)
    np.testing.assert_array_equal(loaded.normalizer_.shift, api.normalizer_.shift)
    subprocess.run([classify, "-v", "0", str(data), str(model_path),
                    str(tmp_path / "pred.txt")], check=True)
    scores = np.loadtxt(tmp_path / "pred.txt")
    np.testing.assert_array_equal(scores, api.decision_function(Xr))
    bad = subprocess.run([learn, "--normalize", "standard", "--n-thresholds", "5", str(data),
                          str(tmp_path / "b.json")], capture_output=True, text=True)
    assert bad.returncode == 2 and "binned indicators" in bad.stderr
    with pytest.raises(ValueError, match="binned indicators"):
        SVMMap(normalize="standard", feature_map=BinnedFeatureMap(3)).fit(X, y, qid)
    with pytest.raises(ValueError, match="normalize"):
        SVMMap(normalize="zscore").fit(X, y, qid)


def test_damaged_normalizer_in_a_model_file_is_refused(tmp_path):
    X, y, qid = _data()
    SVMMap(normalize="standard").fit(X, y, qid).save(tmp_path / "m.json")
    text = (tmp_path / "m.json").read_text().replace('"kind": "standard"', '"kind": "minmax"')
    (tmp_path / "bad.json").write_text(text)
    with pytest.raises(InputFormatError.__mro__[1], match="damaged model file"):
        SVMMap.load(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="positive"):
        Normalizer("standard", [0.0], [0.0])


def test_per_query_normalized_letor_data():
    X, y, qid = load_svmlight(ROOT / "data" / "MQ2008" / "Fold1" / "vali.txt.gz")
    ptr = np.r_[np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]]), len(qid)]
    assert per_query_normalized(X, ptr)  # LETOR 4.0's QueryLevelNorm files
    assert per_query_normalized(X.toarray(), ptr)
    assert not per_query_normalized(X.toarray() * 2, ptr)
    assert not per_query_normalized(_data()[0], np.array([0, 10, 20]))


def _brute_per_query(X, ptr):
    """The definition, query by query and column by column."""
    X = np.asarray(X)
    if X.min() < 0 or X.max() > 1:
        return False
    blocks = [X[a:b] for a, b in zip(ptr[:-1], ptr[1:]) if b - a >= 2]
    return bool(blocks) and all(
        np.all(block.min(axis=0) == 0) and np.all(np.isin(block.max(axis=0), (0, 1)))
        for block in blocks) and any(np.any(block.max(axis=0) == 1) for block in blocks)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=5), st.integers(1, 4),
       st.data())
def test_per_query_normalized_matches_its_definition(sizes, d, data):
    m = sum(sizes)
    values = data.draw(st.lists(st.sampled_from([0.0, 0.0, 0.5, 1.0, 1.0, 2.0, -1.0]),
                                min_size=m * d, max_size=m * d))
    X = np.array(values).reshape(m, d)
    ptr = np.r_[0, np.cumsum(sizes)]
    expected = _brute_per_query(X, ptr)
    assert per_query_normalized(X, ptr) == expected
    # the reader's dense layout in float32, and a strided view: read in place
    assert per_query_normalized(X.astype(np.float32), ptr) == expected
    assert per_query_normalized(np.asfortranarray(X), ptr) == expected
    assert per_query_normalized(sp.csr_matrix(X), ptr) == expected
    # the reader's CSR arrays (int32 or intp indices, float64 or float32 values) and a scipy
    # matrix storing its zeros (which the one-pass kernel must not count as values)
    arrays = csr_for_kernels(sp.csr_matrix(X))
    wide = arrays._replace(indices=arrays.indices.astype(np.intp),
                           indptr=arrays.indptr.astype(np.intp))
    single = arrays._replace(data=arrays.data.astype(np.float32))
    stored_zeros = sp.csr_matrix((X.ravel(), np.tile(np.arange(d), m), np.arange(0, m * d + 1, d)),
                                 shape=X.shape)
    for form in (arrays, wide, single, stored_zeros):
        assert per_query_normalized(form, ptr) == expected
