"""The public Python API: SVMMap's estimator manners, input handling and persistence."""

import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from svmmap import InputFormatError, ModelFileError, SVMMap, metrics

from conftest import random_collection


@pytest.fixture(scope="module")
def data():
    return random_collection(seed=7, n_queries=20, docs=(8, 30))


@pytest.fixture(scope="module")
def fitted(data):
    return SVMMap(C=10).fit(*data)


def test_fit_returns_self_with_learned_state(data):
    model = SVMMap(C=10)
    assert model.fit(*data) is model
    assert model.coef_.shape == (data[0].shape[1],)
    assert model.intercept_ == 0.0
    assert model.training_result_.converged
    assert model.n_queries_used_ == 20


def test_training_improves_map_over_the_untrained_ranking(data, fitted):
    X, y, qid = data
    assert fitted.score(X, y, qid) > metrics.mean_average_precision(X[:, 0] * 0, y, qid) + 0.2


def test_get_and_set_params():
    model = SVMMap(C=5, algorithm="n-slack")
    params = model.get_params()
    assert params["C"] == 5 and params["algorithm"] == "n-slack" and params["loss"] == "map"
    assert model.set_params(C=7) is model and model.C == 7
    assert SVMMap(**params).get_params() == params
    with pytest.raises(ValueError, match="Invalid parameter"):
        model.set_params(gamma=1)


@pytest.mark.parametrize("bad", [{"loss": "ndcg@10x"}, {"algorithm": "2-slack"}, {"C": -1},
                                 {"oracle": "greedy"}])
def test_bad_parameters_fail_at_fit(data, bad):
    with pytest.raises(ValueError):
        SVMMap(**bad).fit(*data)


def test_sparse_dense_shuffled_and_string_qids_give_the_same_model(data, fitted):
    X, y, qid = data
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(y))
    variants = [
        (sp.csr_matrix(X), y, qid),
        (X[perm], y[perm], qid[perm]),  # documents of a query not contiguous
        (X, y, np.array([f"q{q:03d}" for q in qid])),
    ]
    reference = fitted.training_result_
    for Xv, yv, qv in variants:
        model = SVMMap(C=10).fit(Xv, yv, qv)
        result = model.training_result_
        # the same problem: the same optimum, each w within its certified gap of it (the
        # objective is 1-strongly convex: |w - w*|^2 / 2 <= P(w) - P* <= the duality gap),
        # though rounding in another row order may take another path to it
        assert result.primal_objective == pytest.approx(reference.primal_objective,
                                                        rel=2 * SVMMap().rel_gap)
        assert np.linalg.norm(model.coef_ - fitted.coef_) <= \
            np.sqrt(2 * result.duality_gap) + np.sqrt(2 * reference.duality_gap)


def test_decision_function_is_x_dot_w(data, fitted):
    X = data[0]
    np.testing.assert_allclose(fitted.decision_function(X), X @ fitted.coef_)
    np.testing.assert_allclose(fitted.decision_function(sp.csr_matrix(X)), X @ fitted.coef_)


def test_score_is_map_of_the_decision_function(data, fitted):
    X, y, qid = data
    scores = fitted.decision_function(X)
    assert fitted.score(X, y, qid) == metrics.mean_average_precision(scores, y, qid)


def test_queries_without_constraints_are_skipped_with_a_warning(data):
    X, y, qid = data
    y = y.copy()
    y[qid == 0] = 0.0  # no relevant document
    y[qid == 1] = 1.0  # only relevant documents
    with pytest.warns(UserWarning, match="2 of 20 queries carry no constraint"):
        model = SVMMap(C=10).fit(X, y, qid)
    assert model.n_queries_used_ == 18
    assert model.n_queries_without_relevant_ == 1 and model.n_queries_all_relevant_ == 1


def test_nothing_to_train_on_is_a_clear_error(data):
    X, _, qid = data
    with pytest.raises(InputFormatError, match="nothing to train on"):
        SVMMap().fit(X, np.zeros(len(qid)), qid)


@pytest.mark.parametrize("case", ["nan", "length", "qid_length", "1d"])
def test_bad_arrays_are_rejected(data, case):
    X, y, qid = data
    X = X.copy()
    if case == "nan":
        X[3, 1] = np.nan
    elif case == "length":
        y = y[:-1]
    elif case == "qid_length":
        qid = qid[1:]
    else:
        X = X[:, 0]
    with pytest.raises(InputFormatError):
        SVMMap().fit(X, y, qid)


def test_predicting_with_the_wrong_number_of_features_is_an_error(data, fitted):
    with pytest.raises(InputFormatError, match="expecting 6 features"):
        fitted.decision_function(data[0][:, :4])
    with pytest.raises(ValueError, match="not fitted"):
        SVMMap().decision_function(data[0])


def test_save_load_round_trip_is_exact(tmp_path, data, fitted):
    path = tmp_path / "model.json"
    fitted.save(path)
    loaded = SVMMap.load(path)
    assert np.array_equal(loaded.coef_, fitted.coef_)
    assert loaded.get_params() == fitted.get_params()
    assert np.array_equal(loaded.decision_function(data[0]), fitted.decision_function(data[0]))
    document = json.loads(path.read_text())
    assert document["format"] == "svmmap-model" and document["version"] == 2
    assert document["training"]["status"] == "converged"
    # saving again gives the same bytes (no timings or other run-dependent content)
    again = tmp_path / "again.json"
    loaded_copy = SVMMap(C=10).fit(*data)
    loaded_copy.save(again)
    assert again.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("content, message", [
    ("", "truncated model file"),
    ('{"format": "svmmap-model", "version": 1, "coef": [1.0,', "truncated model file"),
    ("hello", "not JSON"),
    ('{"format": "something-else"}', "not an svmmap model file"),
    ('{"format": "svmmap-model", "version": 99}', "version 99 is not supported"),
    ('{"format": "svmmap-model", "version": 1, "n_features": 2, "coef": [1.0],'
     ' "intercept": 0.0, "params": {}}', "coef does not match n_features"),
    ('{"format": "svmmap-model", "version": 1, "n_features": 1, "coef": [1.0],'
     ' "intercept": 0.0, "params": {"kernel": "rbf"}}', "bad params"),
])
def test_foreign_or_damaged_model_files_are_rejected(tmp_path, content, message):
    path = tmp_path / "model.json"
    path.write_text(content)
    with pytest.raises(ModelFileError, match=message):
        SVMMap.load(path)


def test_missing_model_file(tmp_path):
    with pytest.raises(ModelFileError, match="model file not found"):
        SVMMap.load(tmp_path / "nope.json")


def test_a_failed_save_leaves_no_file_behind(tmp_path, fitted):
    target = tmp_path / "model.json"
    target.write_text("previous model")
    fitted_bad = SVMMap().set_params(C=float("nan"))  # JSON refuses NaN
    fitted_bad.coef_, fitted_bad.intercept_ = fitted.coef_, 0.0
    fitted_bad.training_result_, fitted_bad.feature_map_ = None, None
    fitted_bad.n_features_in_ = len(fitted.coef_)
    with pytest.raises(ValueError):
        fitted_bad.save(target)
    assert target.read_text() == "previous model"
    assert [p.name for p in tmp_path.iterdir()] == ["model.json"]


def test_no_warning_when_every_query_is_usable(data):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SVMMap(C=1).fit(*data)


def test_the_estimator_holds_what_the_training_driver_produces(data, fitted):
    """SVMMap.fit is svmmap.core.training.fit: its attributes are the FittedModel's fields, the
    model file keeps the FittedModel's record, and restoring that record scores alike."""
    from svmmap.core import training

    X, y, qid = data
    params = fitted.get_params(deep=False)
    model = training.fit(params, fitted._training_collection(X, y, qid))
    assert isinstance(model, training.FittedModel)
    np.testing.assert_array_equal(model.coef, fitted.coef_)
    held = training.FittedModel.from_attributes(fitted)
    assert held.n_queries_used == model.n_queries_used == fitted.n_queries_used_
    assert held.record() == model.record()
    restored = training.restore(params, X.shape[1], *model.record())
    np.testing.assert_array_equal(restored.scores(X), fitted.decision_function(X))
    assert restored.record() == model.record()


def test_skipped_queries_are_warned_about_at_the_callers_line(data):
    """Whichever driver trains (SVMMap, SVMMapCV), the warning points at the caller's fit."""
    from svmmap.model_selection import SVMMapCV

    X, y, qid = data
    y = y.copy()
    y[qid == qid[0]] = 0
    for model in (SVMMap(), SVMMapCV(Cs=(1, 10))):
        with pytest.warns(UserWarning, match="carry no constraint") as caught:
            model.fit(X, y, qid)
        assert {w.filename for w in caught if "carry no" in str(w.message)} == {__file__}
