"""What every baseline model file must do: save and load back the same model (parameters,
scores, ranks), be read by load_model whatever its kind, and be refused by another kind's
load; and on OHSUMED Fold1, rank the test queries better than chance."""

import warnings

import numpy as np
import pytest

from svmmap import load_model, load_svmlight, metrics
from svmmap.baselines import AdaRank, PRank, RankBoost
from svmmap.errors import InputFormatError, ModelFileError

from conftest import data_file, random_collection


def _collection(seed, max_grade=1, **shape):
    """random_collection with its relevant documents graded 1..max_grade at random."""
    X, y, qid = random_collection(seed, **shape)
    return X, y * np.random.default_rng(seed).integers(1, max_grade + 1, len(y)), qid


CASES = {  # estimator, its parameters, training data, fit's keyword arguments, another kind
    "adarank": (AdaRank, dict(loss="ndcg", ndcg_k=5, max_rounds=10),
                _collection(7, 2, n_queries=15, docs=(8, 20), n_features=8, rate=0.4), {},
                RankBoost),
    "prank": (PRank, dict(n_epochs=5),
              _collection(5, 3, n_queries=10, docs=(10, 30), n_features=5), {}, AdaRank),
    "rankboost": (RankBoost, dict(max_rounds=30), _collection(4, n_queries=15),
                  {"eval_set": _collection(5, n_queries=10)}, PRank),
}


@pytest.mark.parametrize("kind", CASES)
def test_save_load_round_trip_and_kind(tmp_path, kind):
    estimator, params, (X, y, qid), fit_args, other = CASES[kind]
    model = estimator(**params).fit(X, y, qid, **fit_args)
    path = tmp_path / f"{kind}.json"
    model.save(path)
    for loaded in (estimator.load(path), load_model(path)):
        assert type(loaded) is estimator and loaded.get_params() == model.get_params()
        np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
        if hasattr(model, "predict_rank"):
            np.testing.assert_array_equal(loaded.predict_rank(X), model.predict_rank(X))
    with pytest.raises(ModelFileError, match=f"'{kind}' model file, not a '{other.KIND}'"):
        other.load(path)


@pytest.mark.parametrize("estimator, params", [
    (AdaRank, dict(loss="map", max_rounds=50)), (AdaRank, dict(loss="ndcg", max_rounds=50)),
    (PRank, dict(n_epochs=10)), (RankBoost, dict(max_rounds=100))])
def test_ohsumed_fold1_beats_a_random_ranker(estimator, params):
    base = data_file("OHSUMED", "Fold1")
    train = load_svmlight(base / "train.txt")
    X, y, qid = load_svmlight(base / "test.txt", n_features=train[0].shape[1])
    rng = np.random.default_rng(0)
    random_map = np.mean([metrics.mean_average_precision(rng.random(len(y)), y, qid)
                          for _ in range(5)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = estimator(**params).fit(*train)
    assert model.score(X, y, qid) > random_map + 0.05



@pytest.mark.parametrize("model", [AdaRank(), RankBoost(), PRank()],
                         ids=["AdaRank", "RankBoost", "PRank"])
def test_baselines_refuse_data_without_features_in_one_line(model):
    """A baseline's weak rankers or weights are per feature: data whose lines have no feature
    is refused by the one validation (BaseRanker._min_features), naming the method."""
    X, y, qid = np.zeros((4, 0)), np.array([1, 0, 1, 0]), np.array([1, 1, 2, 2])
    with pytest.raises(InputFormatError, match=f"0 feature.*{type(model).__name__}"):
        model.fit(X, y, qid)
