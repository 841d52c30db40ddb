"""Model selection along a warm-started C path (svmstruct_api BaseSSVM.fit_path,
svmmap.model_selection.SVMMapCV, svmmap_learn -c C1,C2,... --vali / --holdout)."""

import json
import shutil
import subprocess
import warnings

import numpy as np
import pytest

from svmmap import SVMMap, dump_svmlight
from svmmap.core.collection import QueryCollection
from svmmap.core.options import DEFAULT_REL_GAP
from svmmap.core.plugins import MapPlugin
from svmmap.data.io import read_svmlight
from svmmap.model_selection import SVMMapCV, choose, holdout_split, validation_measure
from svmstruct_api.learner import make_learner

from conftest import random_collection, run_command

CS = (0.1, 1.0, 10.0, 100.0)


@pytest.mark.parametrize("formulation", ["1-slack", "n-slack"])
def test_warm_started_path_reaches_each_cold_optimum(formulation):
    X, y, qid = random_collection(seed=11, n_queries=15, docs=(5, 20), n_features=8, rate=0.3)
    collection, _, _ = QueryCollection.from_arrays(X, y, qid).trainable()
    plugin = MapPlugin(collection)
    epsilon = 1e-3
    warm = list(make_learner(formulation, epsilon=epsilon).fit_path(plugin, CS[::-1]))
    assert [r.C for r in warm] == list(CS)  # trained from small to large C
    for result in warm:
        cold = make_learner(formulation, C=result.C, epsilon=epsilon).fit(plugin)
        assert result.converged and cold.converged
        bound = 1.01 * result.C * epsilon
        # both lie in [P*, P* + bound], and each primal is above the other's dual
        assert abs(result.primal_objective - cold.primal_objective) <= bound
        assert result.primal_objective >= cold.dual_objective - 1e-9
        assert cold.primal_objective >= result.dual_objective - 1e-9
        assert result.duality_gap <= bound + 1e-9


def test_the_path_selects_the_c_of_separate_fits():
    X, y, qid = random_collection(seed=3, n_queries=30, docs=(5, 20), n_features=8, rate=0.3)
    train, vali = qid < 20, qid >= 20
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cv = SVMMapCV(Cs=CS, epsilon=1e-6).fit(X[train], y[train], qid[train],
                                               eval_set=(X[vali], y[vali], qid[vali]))
        separate = [SVMMap(C=C, epsilon=1e-6).fit(X[train], y[train], qid[train])
                    .score(X[vali], y[vali], qid[vali]) for C in CS]
    assert np.allclose([row["vali"] for row in cv.path_], separate, atol=1e-9)
    assert cv.C_ == CS[choose(separate, cv.select_tol)]  # ties: the first (smallest) C
    chosen = SVMMap(C=cv.C_, epsilon=1e-6).fit(X[train], y[train], qid[train])
    assert np.allclose(cv.coef_, chosen.coef_, atol=1e-3)


def test_choose_treats_values_within_select_tol_as_ties():
    # MQ2008 Fold1's vali MAP at C = 1, 10, 100 near the optimum (benchmarks/defaults.py)
    assert choose([0.50024, 0.52084, 0.52076], 5e-4) == 1
    assert choose([0.50024, 0.52076, 0.52084], 5e-4) == 1  # within 0.0005: the smaller C
    assert choose([0.50024, 0.52076, 0.52084], 0.0) == 2  # the plain argmax
    assert choose([0.50024, 0.52076, 0.52136], 5e-4) == 2  # 0.0006 apart: not a tie
    assert choose([0.3, 0.3, 0.1], 0.0) == 0  # exact ties: the smallest C


def test_holdout_and_measures():
    qid = np.repeat(np.arange(10), 3)
    held = holdout_split(qid, 0.3, random_state=1)
    assert len(np.unique(qid[held])) == 3 and not set(qid[held]) & set(qid[~held])
    with pytest.raises(ValueError, match="select_metric"):
        validation_measure("ndcg@0")
    scores, labels = np.array([3.0, 2.0, 1.0]), np.array([0, 1, 0])
    assert validation_measure("map")(scores, labels, None) == 0.5
    assert validation_measure("P@2")(scores, labels, None) == 0.5


def test_cli_selects_c_on_a_vali_file_and_records_the_path(tmp_path):
    X, y, qid = random_collection(seed=5, n_queries=24, docs=(5, 20))
    train, vali, model = tmp_path / "train.txt", tmp_path / "vali.txt", tmp_path / "m.json"
    dump_svmlight(train, X[qid < 16], y[qid < 16], qid[qid < 16])
    dump_svmlight(vali, X[qid >= 16], y[qid >= 16], qid[qid >= 16])
    out = run_command("svmmap_learn", "-c", "0.1,1,10", "--vali", vali, train, model).stdout
    assert "warm-started path over 3 C values" in out and "<- chosen" in out
    document = json.loads(model.read_text())
    path = document["training"]["selection"]["path"]
    assert [row["C"] for row in path] == [0.1, 1.0, 10.0]
    assert document["params"]["C"] == document["training"]["selection"]["C"]
    values = [row["vali"] for row in path]
    assert path[choose(values, 5e-4)]["C"] == document["params"]["C"]
    assert document["training"]["selection"]["select_tol"] == 5e-4
    assert document["training"]["relative_gap"] >= -1e-12  # an exactly solved QP: 0 +- 1e-16
    run_command("svmmap_classify", vali, model, tmp_path / "pred.txt")  # an ordinary model file
    # the command trains through svmmap.core.training / svmmap.core.selection, the estimator through
    # its scikit-learn facade: the same model file, byte for byte (no timings in either),
    # from the same X (the command's reading: these files list every feature, so dense)
    api = tmp_path / "api.json"
    SVMMapCV(Cs=[10, 0.1, 1]).fit(*read_svmlight(train),
                                  eval_set=read_svmlight(vali, n_features=X.shape[1])).save(api)
    assert api.read_bytes() == model.read_bytes()
    # --eval-set is the option's name (README's glossary); --vali and --valid its aliases
    for option in ("--eval-set", "--valid"):
        run_command("svmmap_learn", "-v", "0", "-c", "0.1,1,10", option, vali, train, api)
        assert api.read_bytes() == model.read_bytes()
    out = run_command("svmmap_learn", "-c", "1,10", "--holdout", "0.25", train, model).stdout
    assert "0.25 of the training queries held out" in out
    SVMMapCV(Cs=[1, 10], holdout=0.25).fit(*read_svmlight(train)).save(api)
    assert api.read_bytes() == model.read_bytes()


@pytest.mark.parametrize("args, message", [
    (["-c", "1,10"], "give --eval-set FILE or --holdout FRACTION"),
    (["-c", "1,10", "--vali", "v", "--holdout", "0.2"], "give one"),
    (["--holdout", "1.5"], "must be a fraction"),
    (["--select-metric", "foo"], "must be map, map@k, ndcg"),
    (["-c", "1,1"], "listed twice"),
    (["--select-tol", "-0.1"], "argument --select-tol: must be a number >= 0"),
    (["--select-tol", "nan"], "argument --select-tol: must be a number >= 0"),
])
def test_cli_selection_argument_errors(args, message, tmp_path):
    proc = run_command("svmmap_learn", *args, tmp_path / "t.txt", tmp_path / "m.json",
                       check=False)
    assert proc.returncode == 2 and message in proc.stderr


def test_holdout_refits_on_all_training_queries_unless_told_not_to(tmp_path):
    """--holdout F / SVMMapCV without eval_set: C chosen on the held-out queries, then (the
    default, GridSearchCV's refit) the model trained on all of them at that C; --no-refit /
    refit=False keeps the fit without them.  The model file records which."""
    X, y, qid = random_collection(seed=8, n_queries=20, docs=(5, 15))
    Cs = [0.1, 1, 10]
    refit = SVMMapCV(Cs=Cs, holdout=0.3, random_state=2).fit(X, y, qid)
    kept = SVMMapCV(Cs=Cs, holdout=0.3, random_state=2, refit=False).fit(X, y, qid)
    assert refit.C_ == kept.C_
    assert [r["vali"] for r in refit.path_] == [r["vali"] for r in kept.path_]
    assert refit.selection_["refit"] is True and kept.selection_["refit"] is False
    np.testing.assert_allclose(refit.coef_, SVMMap(C=refit.C_).fit(X, y, qid).coef_,
                               rtol=1e-9, atol=1e-12)
    held = holdout_split(qid, 0.3, random_state=2)
    # the kept fit is the warm-started path's, the other a cold fit: two certified stops,
    # each within rel_gap of the optimum P*, hence (P 1-strongly convex in w)
    # 1/2 |w - w*|^2 <= P(w) - P* <= rel_gap P(w) for both
    cold = SVMMap(C=kept.C_).fit(X[~held], y[~held], qid[~held])
    primal = cold.training_result_.primal_objective
    assert np.linalg.norm(kept.coef_ - cold.coef_) <= \
        2 * np.sqrt(2 * DEFAULT_REL_GAP * primal) * (1 + 1e-9)
    assert refit.n_queries_used_ == 20 > kept.n_queries_used_
    # an eval_set leaves every training query in training: nothing to refit, nothing recorded
    assert "refit" not in SVMMapCV(Cs=Cs).fit(X, y, qid, eval_set=(X, y, qid)).selection_
    train = tmp_path / "train.txt"
    dump_svmlight(train, X, y, qid)
    for options, expected in (([], True), (["--no-refit"], False)):
        model = tmp_path / f"m{len(options)}.json"
        out = run_command("svmmap_learn", "-c", "0.1,1,10", "--holdout", "0.3", *options, train,
                          model).stdout
        document = json.loads(model.read_text())
        assert document["training"]["selection"]["refit"] is expected
        assert ("Refit on all the training queries" in out) is expected
    proc = subprocess.run([shutil.which("svmmap_learn"), "--no-refit", "-c", "1,10", "--vali",
                           str(train), str(train), str(tmp_path / "x.json")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "--no-refit applies to --holdout" in proc.stderr


def test_patience_counts_only_the_values_below_the_best_in_a_row():
    """The C path's early stop (svmmap.core.selection.select_c, ``patience``): C values that tie
    with the best -- as every C at the C -> 0 limit does -- never count; only a run of values
    below the best, ending at the last C, does."""
    from svmmap.core.selection import _falling

    def rows(*values):
        return [{"vali": v} for v in values]

    assert _falling(rows(0.5, 0.5, 0.5, 0.5), 0.0) == 0
    assert _falling(rows(0.5, 0.5, 0.4, 0.3), 0.0) == 2
    assert _falling(rows(0.5, 0.4, 0.5, 0.3), 0.0) == 1
    assert _falling(rows(0.5, 0.4996, 0.3), 5e-4) == 1
    assert _falling(rows(0.2, 0.3, 0.4), 0.0) == 0
