"""The binned features of Section 4.2: thresholds, the indicator map, the per-query
transforms, persistence in the model file, and the command-line options."""

import json

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import rankdata
from sklearn.base import clone

from svmmap import InputFormatError, ModelFileError, SVMMap, dump_svmlight, load_svmlight
from svmmap.commands.classify import classify_main
from svmmap.commands.learn import learn_main
from svmmap.core.collection import QueryCollection
from svmmap.features import BinnedFeatureMap
from svmmap.kernels._csr import indicator_matrix
from svmmap.kernels._kernel_inputs import BinnedArrays

from conftest import random_collection


def _tied_data(seed, n_queries=9):
    """Features with many ties (few distinct values), a constant column, shuffled qids."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 20, n_queries)
    qid = rng.permutation(np.repeat(np.arange(n_queries) * 7 + 3, sizes))
    m = len(qid)
    X = np.column_stack([rng.normal(size=m), rng.integers(0, 4, m) * 0.5,
                         np.full(m, 2.0), rng.exponential(size=m) * (rng.random(m) < 0.4)])
    return X, qid


def _naive(X, fitted):
    """phi from the definition: [1[f > k] for k in K_f] for every base column f."""
    return np.hstack([(X[:, [c]] > k[None, :]).astype(float)
                      for c, k in zip(fitted.base_columns_, fitted.thresholds_)])


def test_thresholds_are_increasing_observed_training_values_below_the_maximum():
    X, qid = _tied_data(1)
    fitted = BinnedFeatureMap(n_thresholds=8).fit(X, qid)
    assert len(fitted.thresholds_) == X.shape[1]
    for column, k in zip(X.T, fitted.thresholds_):
        assert len(k) <= 8 and np.all(np.diff(k) > 0)
        assert np.all(np.isin(k, column)) and np.all(k < column.max())
    assert len(fitted.thresholds_[2]) == 0  # a constant column carries no information
    assert len(fitted.thresholds_[1]) == 3  # values 0, 0.5, 1, 1.5: three useful cuts
    assert fitted.n_output_features_ == sum(len(k) for k in fitted.thresholds_)


def test_quantile_thresholds_follow_the_distribution():
    values = np.arange(1000.0)[:, None]
    fitted = BinnedFeatureMap(n_thresholds=10).fit(values)
    # the smallest value v with F(v) >= t/10, F the empirical distribution function
    np.testing.assert_array_equal(fitted.thresholds_[0],
                                  [0, 99, 199, 299, 399, 499, 599, 699, 799, 899])


def test_indicators_equal_the_definition_and_are_monotone_in_the_threshold():
    X, qid = _tied_data(2)
    fitted = BinnedFeatureMap(n_thresholds=6).fit(X, qid)
    phi = fitted.transform(X)
    assert sp.isspmatrix_csr(phi) and phi.dtype == np.float64
    np.testing.assert_array_equal(phi.toarray(), _naive(X, fitted))
    dense = phi.toarray()
    start = 0
    for k in fitted.thresholds_:
        block = dense[:, start:start + len(k)]
        assert np.all(np.diff(block, axis=1) <= 0)  # 1[f > k] can only switch off as k grows
        start += len(k)


def test_test_data_is_binned_with_the_training_thresholds_row_by_row():
    X, qid = _tied_data(3)
    train, test = X[:60], X[60:] * 1.7 - 0.2  # test scores outside the training range too
    fitted = BinnedFeatureMap(n_thresholds=5).fit(train)
    thresholds = [k.copy() for k in fitted.thresholds_]
    phi = fitted.transform(test).toarray()
    np.testing.assert_array_equal(phi, _naive(test, fitted))
    assert all(np.array_equal(a, b) for a, b in zip(thresholds, fitted.thresholds_))
    rows = [4, 0, 7]
    np.testing.assert_array_equal(fitted.transform(test[rows]).toarray(), phi[rows])
    np.testing.assert_array_equal(fitted.transform(sp.csr_matrix(test)).toarray(), phi)


def test_columns_select_the_base_functions_in_the_given_order():
    X, qid = _tied_data(4)
    fitted = BinnedFeatureMap(n_thresholds=4, base_columns=[3, 0]).fit(X)
    assert fitted.base_columns_.tolist() == [3, 0]
    np.testing.assert_array_equal(fitted.transform(X).toarray(), _naive(X, fitted))
    for bad, message in [([0, 4], "column 4 does not exist"), ([1, 1], "more than once"),
                         (["a"], "list of integers")]:
        with pytest.raises(InputFormatError, match=message):
            BinnedFeatureMap(base_columns=bad).fit(X)
    with pytest.raises(InputFormatError, match="fitted on 4"):
        fitted.transform(X[:, :3])


def test_within_query_percentiles_and_min_max():
    X, qid = _tied_data(5)
    percentile = BinnedFeatureMap(n_thresholds=20, per_query="percentile").fit(X, qid)
    minmax = BinnedFeatureMap(n_thresholds=20, per_query="minmax").fit(X, qid)
    expected_p, expected_m = np.zeros_like(X), np.zeros_like(X)
    for q in np.unique(qid):
        rows = qid == q
        for c in range(X.shape[1]):
            v = X[rows, c]
            if rows.sum() > 1:
                expected_p[rows, c] = (rankdata(v) - 1) / (rows.sum() - 1)
            if v.max() > v.min():
                expected_m[rows, c] = (v - v.min()) / (v.max() - v.min())
    for fitted, expected in ((percentile, expected_p), (minmax, expected_m)):
        assert all(np.array_equal(k, np.arange(20) / 20) for k in fitted.thresholds_)
        scores = np.column_stack(list(fitted._base_scores(X, fitted._grouping(X, qid),
                                                           fitted.base_columns_)))
        np.testing.assert_allclose(scores, expected, atol=1e-15)
        np.testing.assert_array_equal(fitted.transform(X, qid).toarray(),
                                      _naive(expected, fitted))
    with pytest.raises(InputFormatError, match="qid is required"):
        percentile.transform(X)


def test_dict_round_trip_is_exact_and_json_ready():
    X, qid = _tied_data(6)
    for per_query in (None, "percentile"):
        fitted = BinnedFeatureMap(n_thresholds=7, base_columns=[0, 3], per_query=per_query)
        fitted.fit(X, qid)
        state = json.loads(json.dumps(fitted.fitted_state()))
        again = clone(fitted).restore(state, X.shape[1])
        assert again.get_params() == fitted.get_params()
        np.testing.assert_array_equal(again.base_columns_, fitted.base_columns_)
        np.testing.assert_array_equal(again.transform(X, qid).toarray(),
                                      fitted.transform(X, qid).toarray())
    state["thresholds"][0] = [0.5, 0.1]
    with pytest.raises(ValueError, match="increasing"):
        clone(fitted).restore(state, X.shape[1])
    del state["thresholds"]
    with pytest.raises(ValueError, match="malformed"):
        clone(fitted).restore(state, X.shape[1])


@pytest.mark.parametrize("bad", [{"n_thresholds": 0}, {"n_thresholds": 2.5},
                                 {"per_query": "rank"}])
def test_bad_parameters_fail_at_fit(bad):
    with pytest.raises(ValueError):
        BinnedFeatureMap(**bad).fit(np.ones((3, 2)))


def test_estimator_bins_saves_and_loads_the_feature_map(tmp_path):
    X, y, qid = random_collection(seed=2, n_queries=10)
    features = BinnedFeatureMap(n_thresholds=10, per_query="minmax")
    model = SVMMap(C=10, feature_map=features).fit(X, y, qid)
    assert not hasattr(features, "thresholds_")  # the parameter is not fitted in place
    expected = model.feature_map_.transform(X, qid) @ model.coef_
    np.testing.assert_array_equal(model.decision_function(X, qid), expected)
    with pytest.raises(InputFormatError, match="pass qid"):
        model.decision_function(X)
    model.save(tmp_path / "model.json")
    document = json.loads((tmp_path / "model.json").read_text())
    assert document["params"]["feature_map"] == features.json_params()
    assert document["n_features_in"] == X.shape[1]
    assert len(document["model"]["coef"]) == model.feature_map_.n_output_features_
    loaded = SVMMap.load(tmp_path / "model.json")
    assert loaded.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(loaded.decision_function(X[::-1], qid[::-1]),
                                  model.decision_function(X, qid)[::-1])
    document["n_features_in"] = 5
    (tmp_path / "bad.json").write_text(json.dumps(document))
    with pytest.raises(ModelFileError, match="damaged model file"):
        SVMMap.load(tmp_path / "bad.json")


def test_cli_bins_the_chosen_columns_and_classify_applies_the_map(tmp_path, capsys):
    X, y, qid = random_collection(seed=4, n_queries=10, n_features=9)
    train, model = tmp_path / "train.txt", tmp_path / "model.json"
    dump_svmlight(train, X, y, qid)
    assert learn_main(["-v", "0", "--bin", "6", "--base-columns", "1,3,5-9", str(train),
                       str(model)]) == 0
    loaded = SVMMap.load(model)
    assert loaded.feature_map_.base_columns_.tolist() == [0, 2, 4, 5, 6, 7, 8]
    assert loaded.feature_map_.n_thresholds == 6
    assert classify_main(["-v", "0", str(train), str(model), str(tmp_path / "p.txt")]) == 0
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "p.txt"),
                                  loaded.decision_function(*load_svmlight(train)[::2]))


@pytest.mark.parametrize("args, message", [
    (["--base-columns", "1,2"], "give --n-thresholds N too"),
    (["--bin", "5", "--base-columns", "0-2"], "indices start at 1"),
    (["--bin", "5", "--base-columns", "1,x"], "not a list of feature indices"),
    (["--bin", "5", "--base-columns", "2,1-3"], "listed twice"),
    (["--acc-variant", "2"], "apply to -l acc only"),
    (["-l", "roc", "--cost-ratio", "2"], "apply to -l acc only"),
])
def test_cli_rejects_inconsistent_binning_options(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as exit_info:
        learn_main([*args, "train.txt", str(tmp_path / "model.json")])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_cli_reports_a_base_column_beyond_the_data(tmp_path, capsys):
    X, y, qid = random_collection(seed=4, n_queries=4, n_features=3)
    train = tmp_path / "train.txt"
    dump_svmlight(train, X, y, qid)
    assert learn_main(["--bin", "3", "--base-columns", "2-4", str(train),
                       str(tmp_path / "model.json")]) == 1
    assert "feature 4 does not exist" in capsys.readouterr().err
    assert not (tmp_path / "model.json").exists()


@pytest.mark.parametrize("per_query", [None, "percentile", "minmax"])
def test_the_collection_transform_equals_the_array_transform_in_grouped_order(per_query):
    X, qid = _tied_data(6)
    y = (X[:, 0] > 0).astype(float)
    collection = QueryCollection.from_arrays(sp.csr_matrix(X), y, qid)
    assert not collection.is_contiguous
    on_arrays = BinnedFeatureMap(n_thresholds=6, per_query=per_query).fit(X, qid)
    on_collection = BinnedFeatureMap(n_thresholds=6, per_query=per_query)
    binned = on_collection.fit_transform_collection(collection)
    for a, b in zip(on_arrays.thresholds_, on_collection.thresholds_):
        np.testing.assert_array_equal(a, b)
    expected = on_arrays.transform(X, qid)[collection.rows]
    assert isinstance(binned.X, BinnedArrays)  # implicit: the indicator matrix is not formed
    assert binned.X.shape == expected.shape and (indicator_matrix(binned.X) != expected).nnz == 0
    np.testing.assert_array_equal(binned.X.bins,
                                  on_arrays.transform_bins(X, qid).bins[collection.rows])
    assert binned.ptr is collection.ptr and binned.labels is collection.labels
