"""SVMs for ndcg@k, ndcg, mrr, p@k and rprec (svmmap.core.plugins.MeasurePlugin): the learners
reach the optimum (every constraint of the full problem holds within epsilon, checked by brute
force over every ranking; n-slack and 1-slack agree), the per-example hooks agree with the
batch hook, and the names work in the estimator, the model file and the command line."""

import numpy as np
import pytest

from svmmap import SVMMap
from svmmap.core.collection import QueryCollection
from svmmap.core.measures import MEASURES as REGISTRY
from svmmap.core.measures import parse_loss
from svmmap.core.plugins import MeasurePlugin
from svmstruct_api.learner import make_learner
from svmstruct_api.plugin import StructuredModel

from brute_force import brute_force_max_h_loss
from conftest import assert_certified_optimum, random_collection

MEASURES = ["ndcg@3", "ndcg", "mrr", "p@2", "rprec"]


def _graded_collection(seed, n_queries=8, docs=(3, 6)):
    X, y, qid = random_collection(seed=seed, n_queries=n_queries, docs=docs, n_features=4,
                                  rate=0.45)
    rng = np.random.default_rng(seed)
    y = y * rng.integers(1, 4, len(y))  # grades 1..3 for the relevant documents
    collection, _, _ = QueryCollection.from_arrays(X, y, qid).trainable()
    return collection


def _brute_force_violations(collection, loss, w):
    """max_y Delta(y*, y) - w.(psi(y*) - psi(y)) of every query, over every ranking."""
    base, k = parse_loss(loss)
    out = []
    for q in range(collection.n_queries):
        lo, hi = collection.ptr[q], collection.ptr[q + 1]
        scores = collection.X[lo:hi] @ w
        labels = collection.labels[lo:hi]
        relevant = labels > 0
        ideal = scores[relevant].mean() - scores[~relevant].mean()
        out.append(brute_force_max_h_loss(scores, labels, REGISTRY[base].oracle, k) - ideal)
    return np.array(out)


@pytest.mark.parametrize("loss", MEASURES)
@pytest.mark.parametrize("C", [0.5, 50.0])
def test_learners_reach_the_optimum_and_agree(loss, C):
    collection = _graded_collection(seed=len(loss))
    plugin = MeasurePlugin(collection, loss)
    epsilon = 1e-3
    results = {f: make_learner(C=C, epsilon=epsilon, formulation=f).fit(plugin)
               for f in ("n-slack", "1-slack")}
    for formulation, result in results.items():
        violations = _brute_force_violations(collection, loss, result.w)
        assert_certified_optimum(result, formulation, violations, C, epsilon, gap_factor=1.01)
    for a, b in [("n-slack", "1-slack"), ("1-slack", "n-slack")]:
        assert results[a].primal_objective >= results[b].dual_objective - 1e-6
        assert results[a].primal_objective <= results[b].primal_objective + 1.01 * C * epsilon


@pytest.mark.parametrize("loss", MEASURES)
def test_per_example_hooks_agree_with_the_batch_hook(loss):
    plugin = MeasurePlugin(_graded_collection(seed=3, n_queries=30, docs=(3, 12)), loss)
    rng = np.random.default_rng(1)
    for _ in range(3):
        w = rng.normal(size=plugin.n_features)
        fast = plugin.most_violated_constraints(w)
        slow = StructuredModel.most_violated_constraints(plugin, w)
        np.testing.assert_allclose(fast.loss, slow.loss, atol=1e-12)
        np.testing.assert_allclose(fast.dpsi, slow.dpsi, atol=1e-12)
        for i in range(plugin.n_examples):
            assert plugin.loss(i, plugin.true_output(i)) == 0.0


@pytest.mark.parametrize("loss", ["ndcg@10", "ndcg", "mrr", "p@10", "rprec"])
def test_estimator_trains_saves_and_loads_each_loss(loss, tmp_path):
    X, y, qid = random_collection(seed=2, n_queries=20, docs=(5, 30), n_features=5)
    y = y * (1 + (np.arange(len(y)) % 2))
    model = SVMMap(C=10.0, loss=loss).fit(X, y, qid)
    assert model.training_result_.converged
    model.save(tmp_path / "model.json")
    loaded = SVMMap.load(tmp_path / "model.json")
    assert loaded.loss == loss
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))


@pytest.mark.parametrize("bad", ["ndcg@0", "ndcg@", "p", "p@x", "mrr@3", "rprec@5", "NDCG@10",
                                 "ndcg@-1", 10])
def test_bad_loss_names_are_refused(bad):
    X, y, qid = random_collection(seed=2, n_queries=3)
    with pytest.raises(ValueError, match="'loss' parameter of SVMMap must be"):
        SVMMap(loss=bad).fit(X, y, qid)


def test_command_line_takes_the_new_losses(tmp_path, capsys):
    from svmmap import dump_svmlight
    from svmmap.commands.learn import learn_main

    X, y, qid = random_collection(seed=5, n_queries=10, docs=(5, 20), n_features=4)
    train = tmp_path / "train.txt"
    dump_svmlight(train, X, y * 2, qid)
    assert learn_main(["-c", "10", "-l", "ndcg@5", "-v", "0", str(train),
                       str(tmp_path / "m")]) in (0, None)
    assert SVMMap.load(tmp_path / "m").loss == "ndcg@5"
    with pytest.raises(SystemExit) as exit_info:
        learn_main(["-l", "ndcg@zero", str(train), str(tmp_path / "m2")])
    assert exit_info.value.code != 0
    assert "ndcg@zero" in capsys.readouterr().err
    assert not (tmp_path / "m2").exists()


def test_experiments_registry_offers_each_measure_when_named():
    from svmmap.experiments import registry

    names = ["svm-ndcg@10", "svm-ndcg", "svm-mrr", "svm-p@10", "svm-rprec"]
    default = [m.name for m in registry.select_methods()]
    assert not set(names) & set(default) and "svm-map" in default
    methods = registry.select_methods(names, {"C": [1.0]})
    assert [m.measure for m in methods] == ["ndcg@10", "ndcg", "mrr", "p@10", "rprec"]
    model = methods[0].factory(1.0)
    assert model.loss == "ndcg@10"


def test_selection_uses_the_trained_measure():
    from svmmap import metrics
    from svmmap.core.selection import select
    from svmmap.experiments.datasets import Split
    from svmmap.experiments.registry import select_methods

    X, y, qid = random_collection(seed=9, n_queries=12, docs=(5, 20), n_features=4)
    train, vali = Split(X[qid < 8], y[qid < 8], qid[qid < 8]), \
        Split(X[qid >= 8], y[qid >= 8], qid[qid >= 8])
    method = select_methods(["svm-mrr"], {"C": [0.01, 100.0]})[0]
    chosen = select(method, train, vali)
    for C, value in chosen.vali_map.items():
        model = method.factory(C).fit(*train.arrays)
        assert value == metrics.mean_reciprocal_rank(model.decision_function(vali.X), vali.y,
                                                     vali.qid)


def test_r_precision_matches_pytrec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from svmmap import metrics

    rng = np.random.default_rng(4)
    qid = np.repeat(np.arange(30), rng.integers(1, 15, 30))
    labels = rng.integers(0, 3, len(qid)) * (rng.random(len(qid)) < 0.5)
    scores = rng.integers(0, 5, len(qid)).astype(float)
    docs = [f"d{i:04d}" for i in range(len(qid))]
    qrels, run = {}, {}
    for i, q in enumerate(qid.tolist()):
        qrels.setdefault(str(q), {})[docs[i]] = int(labels[i])
        run.setdefault(str(q), {})[docs[i]] = float(scores[i])
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"Rprec"}).evaluate(run)
    ids, values = metrics.per_query("rprec", scores, labels, qid, convention="trec_eval")
    for q, v in zip(ids.tolist(), values):
        assert v == pytest.approx(ref[str(q)]["Rprec"], abs=1e-12)
    assert metrics.r_precision(scores, labels, qid, convention="trec_eval") == \
        pytest.approx(np.mean([ref[str(q)]["Rprec"] for q in ids.tolist()]), abs=1e-12)
