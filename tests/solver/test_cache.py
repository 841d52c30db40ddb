"""The constraint cache of 1-slack training (SVMstruct's -w 4): what it remembers, what it
offers, and that training with it reaches the same optimum with fewer oracle passes."""

import math
import subprocess

import numpy as np
import pytest

from svmmap import SVMMap, dump_svmlight
from svmmap.core.collection import QueryCollection
from svmmap.core.plugins import MapPlugin
from svmstruct_api.cache import ConstraintCache
from svmstruct_api.learner import make_learner
from svmstruct_api.plugin import ConstraintBatch

from conftest import random_collection


def _batch(losses, rows):
    return ConstraintBatch(loss=np.array(losses, dtype=float), dpsi=np.array(rows, dtype=float))


def test_cache_offers_each_examples_most_violated_remembered_output():
    cache = ConstraintCache(n_examples=2, n_features=2, size=2)
    cache.add(_batch([0.5, 0.2], [[1, 0], [0, 1]]))
    cache.add(_batch([0.9, 0.1], [[2, 0], [0, 3]]))
    w = np.array([0.3, 0.1])
    offered = cache.most_violated(w)
    # example 0: 0.5 - 0.3 = 0.2 vs 0.9 - 0.6 = 0.3 -> the second output
    np.testing.assert_allclose(offered.dpsi[0], [2, 0])
    # example 1: 0.2 - 0.1 = 0.1 vs 0.1 - 0.3 < 0 -> the first output
    np.testing.assert_allclose(offered.dpsi[1], [0, 1])
    np.testing.assert_allclose(offered.loss, [0.9, 0.2])


def test_cache_evicts_the_oldest_and_falls_back_to_the_correct_output():
    cache = ConstraintCache(n_examples=1, n_features=1, size=2)
    for loss, row in [(1.0, [0.0]), (0.2, [1.0]), (0.3, [1.0])]:
        cache.add(_batch([loss], [row]))
    assert len(cache) == 3
    # (1.0, [0]) was evicted; at w = 1 both kept outputs have Delta - w.dpsi < 0: y_i itself
    offered = cache.most_violated(np.array([1.0]))
    assert offered.loss[0] == 0.0 and offered.dpsi[0, 0] == 0.0
    assert cache.most_violated(np.array([0.0])).loss[0] == 0.3


def test_training_with_the_cache_reaches_the_same_optimum_with_fewer_oracle_passes():
    X, y, qid = random_collection(seed=8, n_queries=15, docs=(6, 20), n_features=8)
    collection, _, _ = QueryCollection.from_arrays(X, y, qid).trainable()
    C, eps = 100.0, 1e-3
    plain = make_learner(C=C, epsilon=eps).fit(MapPlugin(collection))
    cached = make_learner(C=C, epsilon=eps, cache_size=5).fit(MapPlugin(collection))
    assert plain.converged and cached.converged
    oracle_passes = sum(not math.isnan(r.primal_objective) for r in cached.history)
    assert oracle_passes < cached.iterations
    # the last iteration is an oracle pass that found nothing violated by more than epsilon
    assert not math.isnan(cached.history[-1].primal_objective)
    assert cached.primal_objective == pytest.approx(plain.primal_objective,
                                                    abs=1.01 * C * eps)
    # each run's certificate: P(w) - D(alpha) <= C eps + the QP's gap
    for result in (plain, cached):
        assert result.duality_gap <= 1.01 * C * eps + 1e-9


def test_cache_is_for_one_slack_only():
    with pytest.raises(ValueError, match="1-slack"):
        make_learner(formulation="n-slack", cache_size=5)
    X, y, qid = random_collection(seed=2)
    with pytest.raises(ValueError, match="1-slack"):
        SVMMap(algorithm="n-slack", cache_size=3).fit(X, y, qid)


def test_cli_w4_trains_with_the_cache_and_cache_size_alone_is_refused(tmp_path):
    X, y, qid = random_collection(seed=4)
    train = tmp_path / "train.txt"
    dump_svmlight(train, X, y, qid)
    model = tmp_path / "model.json"
    done = subprocess.run(["svmmap_learn", "-w", "4", "--cache-size", "3", "-c", "10",
                           str(train), str(model)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert SVMMap.load(model).cache_size == 3
    refused = subprocess.run(["svmmap_learn", "--cache-size", "3", str(train),
                              str(tmp_path / "other.json")], capture_output=True, text=True)
    assert refused.returncode == 2 and "-w 4" in refused.stderr
    assert not (tmp_path / "other.json").exists()
