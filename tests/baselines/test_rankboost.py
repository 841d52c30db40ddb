"""RankBoost (Freund et al. 2003) and its semi-supervised variant (Amini et al. 2008): the O(n)
factored update against the pairwise definition by brute force, the loss decreasing every
round, lambda = 0 equal to supervised RankBoost, eval_set, OHSUMED Fold1 (saving and loading:
test_baseline_models.py)."""


import numpy as np
import pytest

from svmmap import load_model
from svmmap.baselines import RankBoost
from svmmap.baselines.rankboost import pseudo_labels, threshold_grid

from conftest import random_collection


def crucial_pairs(y, qid):
    """All (non-relevant, relevant) index pairs of a query, brute force."""
    return [(a, b) for a in range(len(y)) for b in range(len(y))
            if qid[a] == qid[b] and y[a] <= 0 < y[b]]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_factored_rounds_equal_the_pairwise_definition(seed):
    X, y, qid = random_collection(seed, n_queries=5, docs=(4, 9), n_features=4, rate=0.4)
    model = RankBoost(max_rounds=12, n_thresholds=5).fit(X, y, qid)
    pairs = np.array(crucial_pairs(y, qid))
    x0, x1 = pairs[:, 0], pairs[:, 1]
    D = np.full(len(pairs), 1.0 / len(pairs))
    grid = threshold_grid(X, 5)
    H = np.zeros(len(y))
    for t in range(model.n_rounds_):
        # r of every candidate weak ranker, pair by pair
        best = 0.0
        for j in range(X.shape[1]):
            for theta in grid[j][np.isfinite(grid[j])]:
                h = (X[:, j] > theta).astype(float)
                best = max(best, abs(np.sum(D * (h[x1] - h[x0]))))
        j, theta, alpha = model.features_[t], model.thresholds_[t], model.alphas_[t]
        h = (X[:, j] > theta).astype(float)
        r = np.sum(D * (h[x1] - h[x0]))
        assert abs(r) == pytest.approx(best, abs=1e-12)
        assert alpha == pytest.approx(0.5 * np.log((1 + r) / (1 - r)))
        update = D * np.exp(alpha * (h[x0] - h[x1]))
        assert update.sum() == pytest.approx(model.z_[t])
        assert model.z_[t] < 1.0  # the exponential loss decreases every round
        D = update / update.sum()
        H += alpha * h
        loss = np.mean(np.exp(H[x0] - H[x1]))  # D_1 uniform over the crucial pairs
        assert loss == pytest.approx(np.prod(model.z_[:t + 1]))
    np.testing.assert_allclose(model.decision_function(X), H)


def test_loss_decreases_every_round_on_larger_data():
    X, y, qid = random_collection(3, n_queries=20, docs=(10, 40), n_features=8)
    model = RankBoost(max_rounds=60).fit(X, y, qid)
    assert np.all(model.z_ < 1.0)
    assert np.all(np.diff(np.cumprod(model.z_)) < 0)


def semi_data(seed):
    X, y, qid = random_collection(seed, n_queries=10, docs=(10, 30), n_features=5, rate=0.4)
    rng = np.random.default_rng(seed + 100)
    unlabeled = rng.random(len(y)) < 0.5
    first = np.r_[True, qid[1:] != qid[:-1]]
    unlabeled[first] = False  # every query keeps a labeled document
    return X, y, qid, unlabeled


@pytest.mark.parametrize("seed", [0, 1])
def test_semi_supervised_with_lambda_zero_is_supervised_rankboost(seed):
    X, y, qid, unlabeled = semi_data(seed)
    y_hidden = np.where(unlabeled, 99.0, y)  # unlabeled labels must not be read
    semi = RankBoost(max_rounds=25, lam=0.0).fit(X, y_hidden, qid, unlabeled=unlabeled)
    keep = ~unlabeled
    sup = RankBoost(max_rounds=25).fit(X[keep], y[keep], qid[keep])
    for name in ("features_", "thresholds_", "alphas_", "z_"):
        np.testing.assert_array_equal(getattr(semi, name), getattr(sup, name))
    np.testing.assert_array_equal(semi.decision_function(X), sup.decision_function(X))
    with_unlabeled = RankBoost(max_rounds=25, lam=1.0).fit(X, y_hidden, qid, unlabeled=unlabeled)
    assert not np.array_equal(with_unlabeled.alphas_, sup.alphas_)
    assert np.all(with_unlabeled.z_ < 1.0)


def test_pseudo_labels_follow_the_nearest_labeled_documents():
    X = np.array([[0.0], [0.1], [5.0], [5.2], [0.05], [5.1], [9.0]])
    labels = np.array([1.0, 1.0, 0.0, 0.0, -7.0, -7.0, 0.0])
    unlabeled = np.array([False, False, False, False, True, True, False])
    ptr = np.array([0, 7])
    out = pseudo_labels(X, labels, unlabeled, ptr, n_neighbors=1)
    assert out[4] == 1.0 and out[5] == 0.0
    out3 = pseudo_labels(X, labels, unlabeled, ptr, n_neighbors=3)
    assert out3[4] == 1.0 and out3[5] == 0.0  # 0.05: {0.0, 0.1, 5.0} -> 2 of 3 relevant


def test_params_and_errors():
    model = RankBoost(max_rounds=5)
    assert model.get_params()["max_rounds"] == 5
    assert model.set_params(lam=0.5) is model and model.lam == 0.5
    X, y, qid = random_collection(0)
    with pytest.raises(ValueError, match="n_thresholds"):
        RankBoost(n_thresholds=0).fit(X, y, qid)
    with pytest.raises(ValueError, match="nothing to train on"):
        RankBoost().fit(X, np.zeros_like(y), qid)
    with pytest.raises(ValueError, match="unlabeled has"):
        RankBoost().fit(X, y, qid, unlabeled=np.zeros(3, dtype=bool))


def test_eval_set_keeps_the_best_round():
    X, y, qid = random_collection(4, n_queries=15)
    Xv, yv, qv = random_collection(5, n_queries=10)
    model = RankBoost(max_rounds=30).fit(X, y, qid, eval_set=(Xv, yv, qv))
    assert model.n_rounds_ == 1 + int(np.argmax(model.valid_map_))
    assert model.score(Xv, yv, qv) == pytest.approx(model.valid_map_.max())


@pytest.mark.parametrize("method", [["--method", "adarank", "-l", "map", "-t", "5"],
                                    ["--method", "adarank", "--loss", "ndcg", "-t", "5"],
                                    ["--method", "rankboost", "--max-rounds", "5"],
                                    ["--method", "prank", "--n-epochs", "5"]],
                         ids=["adarank-map", "adarank-ndcg", "rankboost", "prank"])
def test_baseline_command_line_round_trip(tmp_path, capsys, method):
    from svmmap import dump_svmlight
    from svmmap.commands.baseline_classify import classify_main
    from svmmap.commands.baseline_learn import learn_main

    X, y, qid = random_collection(6, n_queries=12)
    train = tmp_path / "train.txt"
    dump_svmlight(train, X, y, qid)
    model_path, predictions = tmp_path / "model.json", tmp_path / "predictions.txt"
    assert learn_main([*method, "-v", "0", str(train), str(model_path)]) == 0
    assert classify_main([str(train), str(model_path), str(predictions)]) == 0
    scores = np.array(predictions.read_text().split(), dtype=float)
    np.testing.assert_allclose(scores, load_model(model_path).decision_function(X), rtol=1e-12)
    assert "MAP:" in capsys.readouterr().out
    assert learn_main([*method, str(tmp_path / "missing.txt"), str(model_path)]) == 1
    assert "svmmap_baseline_learn: error:" in capsys.readouterr().err
