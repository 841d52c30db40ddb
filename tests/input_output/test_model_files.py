"""One persistence path for every model kind (svmmap.data.model_file): the registry reads any kind,
a loaded model holds the same facts as the fitted one (parameters, scores, the training
record), run-time settings are not stored, no key is stored twice, and the version-1 files
written by the previous code (tests/data/model_v1, made by make_v1_fixtures.py at commit
accc7eb) still load and score exactly as they did."""

import json
import warnings

import numpy as np
import pytest

from svmmap import SVMMap, load_model, load_svmlight
from svmmap.baselines import AdaRank, PRank, RankBoost
from svmmap.commands.classify import classify_main
from svmmap.data.model_file import MODEL_KINDS, model_class
from svmmap.errors import ModelFileError
from svmmap.features import BinnedFeatureMap

from conftest import ROOT

V1 = ROOT / "tests" / "data" / "model_v1"
V1_KINDS = {"svmmap": SVMMap, "svmmap_binned": SVMMap, "adarank": AdaRank,
            "rankboost": RankBoost, "prank": PRank}


def test_the_registry_names_every_estimator_kind():
    for kind, cls in [("svmmap", SVMMap), ("adarank", AdaRank), ("rankboost", RankBoost),
                      ("prank", PRank)]:
        assert MODEL_KINDS[kind] and model_class(kind) is cls and cls.KIND == kind


@pytest.mark.parametrize("name", V1_KINDS)
def test_version_1_files_still_load_and_score_as_they_did(name):
    X, y, qid = load_svmlight(V1 / "train.txt")
    expected = json.loads((V1 / "scores.json").read_text())[name]
    for model in (load_model(V1 / f"{name}.json"), V1_KINDS[name].load(V1 / f"{name}.json")):
        assert type(model) is V1_KINDS[name]
        np.testing.assert_array_equal(model.decision_function(X, qid=qid), expected)
        assert model.n_features_in_ == X.shape[1]
    if name.startswith("svmmap"):  # the training record is back, as after fit
        assert model.training_result_.status == "converged"
        assert model.training_result_.iterations > 0 and model.n_queries_used_ > 0


def _fit(estimator, X, y, qid):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(X, y, qid)


def _model_params(model):
    """The parameters that are not run-time settings, nested estimators as their params."""
    return {k: v.get_params() if hasattr(v, "get_params") else v
            for k, v in model.get_params(deep=False).items()
            if k not in type(model)._runtime_params}


ESTIMATORS = {
    "svmmap": SVMMap(C=10, n_threads=2, verbose=0, max_time=100.0),
    "svmmap_binned": SVMMap(C=1, loss="acc", cost_ratio="balanced", feature_map=BinnedFeatureMap(
        5, base_columns=[0, 2], per_query="minmax")),
    "adarank": AdaRank(loss="ndcg", ndcg_k=5, max_rounds=6),
    "rankboost": RankBoost(max_rounds=8, n_thresholds=4),
    "prank": PRank(n_epochs=3),
}


@pytest.mark.parametrize("name", ESTIMATORS)
def test_round_trip_restores_the_training_record_and_stores_each_fact_once(name, tmp_path):
    X, y, qid = load_svmlight(V1 / "train.txt")
    model = _fit(ESTIMATORS[name], X, y, qid)
    path = tmp_path / "m.json"
    model.save(path)
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.decision_function(X, qid=qid),
                                  model.decision_function(X, qid=qid))
    runtime = type(model)._runtime_params
    assert _model_params(loaded) == _model_params(model)
    assert all(getattr(loaded, k) == type(model)().get_params()[k] for k in runtime)
    document = json.loads(path.read_text())
    assert document["version"] == 2 and document["kind"] == model.KIND
    assert not set(runtime) & set(document["params"])  # threads, verbosity, time limits
    keys = [key for part in ("model", "training") for key in (document[part] or {})]
    assert len(keys) == len(set(keys)) and not set(keys) & set(document["params"])
    fitted = {k: v for k, v in vars(model).items() if k.endswith("_") and k != "history_"}
    for key, value in fitted.items():
        restored = getattr(loaded, key)
        if key == "training_result_":
            for field in ("status", "iterations", "working_set_size", "primal_objective",
                          "dual_objective", "max_violation", "formulation", "C"):
                assert getattr(restored, field) == getattr(value, field), field
            np.testing.assert_array_equal(restored.w, value.w)
        elif isinstance(value, BinnedFeatureMap):  # the fitted feature map
            assert restored.get_params() == value.get_params()
            for a, b in zip(restored.thresholds_, value.thresholds_):
                np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_array_equal(restored, value, err_msg=key)
    if name == "adarank":
        assert loaded.history_ == model.history_
    loaded.save(tmp_path / "again.json")  # the same bytes: nothing run-dependent is stored
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()


@pytest.mark.parametrize("name", ["svmmap", "rankboost"])
def test_svmmap_classify_reads_every_kind(name, tmp_path, capsys):
    predictions = tmp_path / "p.txt"
    assert classify_main([str(V1 / "train.txt"), str(V1 / f"{name}.json"),
                          str(predictions)]) == 0
    expected = json.loads((V1 / "scores.json").read_text())[name]
    assert np.loadtxt(predictions).tolist() == expected
    assert "MAP: " in capsys.readouterr().out


def test_a_newer_or_unknown_kind_is_refused(tmp_path):
    path = tmp_path / "m.json"
    document = json.loads((V1 / "prank.json").read_text())
    path.write_text(json.dumps({**document, "kind": "lambdamart"}))
    with pytest.raises(ModelFileError, match="unknown model kind 'lambdamart'"):
        load_model(path)
    path.write_text(json.dumps({**document, "version": 3}))
    with pytest.raises(ModelFileError, match="version 3 is not supported"):
        load_model(path)
