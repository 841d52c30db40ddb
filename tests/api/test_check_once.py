"""Data checked once (issue 24): the boundary -- an estimator's validate_data with
QueryCollection.from_arrays, or the reader svmmap.data.io.load_svmlight -- makes the checked
QueryCollection, and no driver downstream (training, the C path, its refit, the command)
scans the values again.  Counted by wrapping svmmap.core.collection.check_features, the one scan
of X's values."""

import warnings

import numpy as np
import pytest

import svmmap.core.collection
from svmmap import SVMMap
from svmmap.commands.learn import learn_main
from svmmap.data.io import dump_svmlight
from svmmap.model_selection import SVMMapCV

from conftest import random_collection


@pytest.fixture
def scans(monkeypatch):
    """The list of X shapes check_features scanned, filled as it is called."""
    seen, scan = [], svmmap.core.collection.check_features

    def counted(X):
        seen.append(X.shape)
        return scan(X)

    monkeypatch.setattr(svmmap.core.collection, "check_features", counted)
    return seen


@pytest.fixture(scope="module")
def data():
    return random_collection(seed=5, n_queries=16, docs=(6, 14))


@pytest.mark.parametrize("make", [
    lambda: SVMMap(C=10), lambda: SVMMap(C=10, normalize="standard"),
    lambda: SVMMapCV(Cs=(1, 10)), lambda: SVMMapCV(Cs=(1, 10), refit=False),
    lambda: SVMMapCV(Cs=(1, 10), normalize="minmax")])
def test_the_estimators_scan_the_training_data_once(scans, data, make):
    """SVMMap, and SVMMapCV with held-out queries and its refit on all of them: one scan."""
    X, y, qid = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make().fit(X, y, qid)
    assert scans == [X.shape]


def test_svmmapcv_scans_its_eval_set_once(scans, data):
    X, y, qid = data
    vali = random_collection(seed=6, n_queries=5, docs=(6, 14))
    SVMMapCV(Cs=(1, 10), normalize="standard").fit(X, y, qid, eval_set=vali)
    assert scans == [X.shape, vali[0].shape]


@pytest.mark.parametrize("options", [[], ["-c", "1,10", "--holdout", "0.3"],
                                     ["-c", "1,10", "--eval-set", "VALI"],
                                     ["--normalize", "standard"]])
def test_the_command_trusts_what_the_reader_checked(scans, data, tmp_path, options):
    """svmmap_learn: the reader checks the values (file and line named); nothing scans them
    again, whichever driver trains."""
    X, y, qid = data
    dump_svmlight(tmp_path / "train.txt", X, y, qid)
    dump_svmlight(tmp_path / "vali.txt", X[:40], y[:40], qid[:40])
    options = [str(tmp_path / "vali.txt") if o == "VALI" else o for o in options]
    assert learn_main([*options, str(tmp_path / "train.txt"),
                       str(tmp_path / "model.json")]) == 0
    assert scans == []
    assert np.isfinite(SVMMap.load(tmp_path / "model.json").coef_).all()


@pytest.mark.parametrize("loss", ["map", "roc", "ndcg@3", "mrr"])
def test_the_oracle_passes_do_not_check_the_collection_again(monkeypatch, data, loss):
    """The kernels' arrays are checked when the plugin first needs them, not on each of the
    fit's oracle passes (the public kernel wrappers keep their guards for other callers)."""
    import svmmap.core.plugins.measure
    import svmmap.core.plugins.ranking

    checks = []
    for module in (svmmap.core.plugins.ranking, svmmap.core.plugins.measure):
        original = module.checked_constraint_inputs
        monkeypatch.setattr(module, "checked_constraint_inputs",
                            lambda *args, f=original: checks.append(1) or f(*args))
    X, y, qid = data
    model = SVMMap(C=10, loss=loss).fit(X, y * 2, qid)
    assert model.training_result_.iterations > 3
    assert checks == [1]


def test_the_reader_finds_a_files_first_line_once(monkeypatch, data, tmp_path):
    """Is it an index file, does it carry qid: -- one look at the first line answers both."""
    import svmmap.data.io
    import svmmap.data.sources

    calls, original = [], svmmap.data.sources.find_first_line
    monkeypatch.setattr(svmmap.data.sources, "find_first_line",
                        lambda view: calls.append(1) or original(view))
    X, y, qid = data
    dump_svmlight(tmp_path / "train.txt", X, y, qid)
    svmmap.data.io.load_svmlight(tmp_path / "train.txt")
    assert calls == [1]
