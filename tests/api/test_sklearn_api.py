"""Every svmmap ranker is a scikit-learn estimator: scikit-learn's own estimator checks, qid as
routed metadata through GridSearchCV / cross_val_score, feature names, NotFittedError, and one
parameter validation shared by the API and the command-line tools."""

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_val_score
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

from svmmap import SVMMap, metrics
from svmmap.baselines import AdaRank, PRank, RankBoost
from svmmap.commands.learn import learn_main
from svmmap.features import BinnedFeatureMap

#: small limits: the checks' data is random and only the API is under test
ESTIMATORS = [SVMMap(max_iter=20), AdaRank(max_rounds=5), RankBoost(max_rounds=5),
              PRank(n_epochs=2)]

ALL_RELEVANT = ("relevant means y > 0 and the check's labels are all positive ({}): one query "
                "in which every document is relevant has no ranking to learn, so the ranker "
                "refuses to train ('nothing to train on')")
ONE_SAMPLE = ("a single document is a query with nothing to rank; the ranker says 'nothing "
              "to train on' instead of the words the check looks for")


def _expected_failed_checks(estimator):
    failures = {"check_fit2d_1sample": ONE_SAMPLE}
    if not isinstance(estimator, PRank):  # PRank learns grades, not relevant / non-relevant
        failures["check_estimators_dtypes"] = ALL_RELEVANT.format("y = [1, 2] * 10")
        failures["check_fit2d_1feature"] = ALL_RELEVANT.format(
            "y = floor(3 u), every u of its seed above 1/3")
    if isinstance(estimator, SVMMap):
        for check in ("check_sample_weights_not_an_array",
                      "check_sample_weights_shape", "check_sample_weights_not_overwritten",
                      "check_sample_weight_equivalence_on_dense_data",
                      "check_sample_weight_equivalence_on_sparse_data"):
            failures[check] = (
                "SVMMap's sample_weight weighs whole queries (constant within a query); the "
                "check gives one query (qid=None) per-document weights that vary, or a query "
                "without both relevant and non-relevant documents")
        # a pandas Series of weights is accepted (test_pandas_series_of_sample_weights); what
        # the check trips on is its labels
        failures["check_sample_weights_pandas_series"] = ALL_RELEVANT.format(
            "y = [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2]")
    return failures


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_pandas_series_of_sample_weights():
    """sample_weight as a pandas Series (scikit-learn's check_sample_weights_pandas_series,
    with labels that leave something to rank): the same model as the plain array gives."""
    pd = pytest.importorskip("pandas")
    X, y, qid = _ranking_data()
    weights = np.where(qid % 2 == 0, 2.0, 1.0)
    series = SVMMap().fit(pd.DataFrame(X), pd.Series(y), qid, sample_weight=pd.Series(weights))
    array = SVMMap().fit(X, y, qid, sample_weight=weights)
    assert np.array_equal(series.coef_, array.coef_)
    assert not np.array_equal(SVMMap().fit(X, y, qid).coef_, array.coef_)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("shape", [(0, 3), (12, 0)])
def test_empty_data_is_a_value_error(estimator, shape):
    """No rows or no columns: ValueError, the words scikit-learn's check looks for (SVMMap
    trained a zero model on no columns before; now every estimator refuses it)."""
    y = np.arange(shape[0]) % 2
    with pytest.raises(ValueError, match=r"0 (sample|feature)\(s\) \(shape=\(\d+, \d+\)\)"):
        clone(estimator).fit(np.empty(shape), y)


def _ranking_data(n_queries=12, per_query=8, d=5, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    X = rng.normal(size=(n_queries * per_query, d))
    qid = np.repeat(np.arange(n_queries) * 7 + 3, per_query)
    y = (X @ w + rng.normal(scale=1.0, size=len(X)) > 0.5).astype(float)
    order = rng.permutation(len(X))  # queries interleaved: grouping is the estimator's job
    return X[order], y[order], qid[order]


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


@pytest.mark.parametrize("estimator", [SVMMap(), AdaRank(max_rounds=20)],
                         ids=["SVMMap", "AdaRank"])
def test_cross_val_score_routes_qid_and_scores_map_of_each_split(routing, estimator):
    X, y, qid = _ranking_data()
    est = clone(estimator).set_fit_request(qid=True).set_score_request(qid=True)
    cv = GroupKFold(3)
    scores = cross_val_score(est, X, y, cv=cv, params={"groups": qid, "qid": qid})
    expected = []
    for train, test in cv.split(X, y, groups=qid):
        model = clone(estimator).fit(X[train], y[train], qid=qid[train])
        expected.append(metrics.mean_average_precision(model.decision_function(X[test]),
                                                       y[test], qid[test]))
        assert len(np.unique(qid[test])) == 4  # the split's queries, not one merged query
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-12)
    # ... and not what one merged query would give
    merged = [clone(estimator).fit(X[tr], y[tr], qid=qid[tr]).score(X[te], y[te])
              for tr, te in cv.split(X, y, groups=qid)]
    assert not np.allclose(scores, merged)


def test_grid_search_routes_qid_to_fit_and_score(routing):
    X, y, qid = _ranking_data()
    est = SVMMap().set_fit_request(qid=True).set_score_request(qid=True)
    search = GridSearchCV(est, {"C": [1, 100]}, cv=GroupKFold(3)).fit(X, y, groups=qid,
                                                                      qid=qid)
    assert search.best_params_["C"] in (1, 100)
    for i, C in enumerate(search.cv_results_["param_C"]):
        expected = [SVMMap(C=C).fit(X[tr], y[tr], qid=qid[tr]).score(X[te], y[te], qid=qid[te])
                    for tr, te in GroupKFold(3).split(X, y, groups=qid)]
        split_scores = [search.cv_results_[f"split{k}_test_score"][i] for k in range(3)]
        np.testing.assert_allclose(split_scores, expected, rtol=0, atol=1e-12)
    refit = SVMMap(C=search.best_params_["C"]).fit(X, y, qid=qid)
    np.testing.assert_array_equal(search.best_estimator_.coef_, refit.coef_)


def test_qid_none_means_one_query():
    X, y, qid = _ranking_data(n_queries=3)
    one = np.zeros(len(y))
    a, b = SVMMap(C=10).fit(X, y), SVMMap(C=10).fit(X, y, qid=one)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.score(X, y) == metrics.mean_average_precision(a.decision_function(X), y, one)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_feature_names_from_a_dataframe_are_kept_and_checked(estimator):
    pd = pytest.importorskip("pandas")
    X, y, qid = _ranking_data(n_queries=4)
    names = [f"bm25_{j}" for j in range(X.shape[1])]
    model = clone(estimator).fit(pd.DataFrame(X, columns=names), y, qid=qid)
    assert list(model.feature_names_in_) == names and model.n_features_in_ == X.shape[1]
    with pytest.raises(ValueError, match="feature names"):
        model.decision_function(pd.DataFrame(X, columns=names[::-1]))


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_unfitted_estimators_raise_not_fitted_error(estimator, tmp_path):
    X, y, qid = _ranking_data(n_queries=2)
    for call in (lambda m: m.decision_function(X), lambda m: m.predict(X),
                 lambda m: m.score(X, y, qid), lambda m: m.save(tmp_path / "m.json")):
        with pytest.raises(NotFittedError):
            call(clone(estimator))


@pytest.mark.parametrize("params, argv, flag", [
    ({"C": 0.0}, ["-c", "0"], "-c/--C"),
    ({"epsilon": -1.0}, ["-e", "-1"], "-e/--epsilon"),
    ({"max_iter": 0}, ["--max-iter", "0"], "--max-iter"),
    ({"max_time": 0.0}, ["--max-time", "0"], "--max-time"),
    ({"n_threads": 0}, ["--n-threads", "0"], "--n-threads"),
    ({"cost_ratio": 2.0}, ["--cost-ratio", "2", "-l", "map"], "--cost-ratio"),
])
def test_api_and_cli_share_one_validation(params, argv, flag, tmp_path, capsys):
    X, y, qid = _ranking_data(n_queries=2)
    with pytest.raises(InvalidParameterError) as api_error:
        SVMMap(**params).fit(X, y, qid)
    train = tmp_path / "train.txt"
    train.write_text("1 qid:1 1:1\n0 qid:1 1:0\n")
    with pytest.raises(SystemExit) as exit_info:
        learn_main([*argv, str(train), str(tmp_path / "m.json")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    if flag != "--cost-ratio":  # the CLI's own rule (--cost-ratio needs -l acc) comes first
        assert f"argument {flag}: {api_error.value}" in err
    assert "Traceback" not in err and not (tmp_path / "m.json").exists()


def test_binned_feature_map_is_an_estimator_parameter():
    X, y, qid = _ranking_data(n_queries=6)
    model = SVMMap(feature_map=BinnedFeatureMap(n_thresholds=4))
    assert model.get_params()["feature_map__n_thresholds"] == 4
    model.set_params(feature_map__n_thresholds=3).fit(X, y, qid)
    assert model.feature_map_.n_thresholds == 3 and model.feature_map is not model.feature_map_
    with pytest.raises(InvalidParameterError, match="n_thresholds"):
        SVMMap(feature_map=BinnedFeatureMap(n_thresholds=0)).fit(X, y, qid)
