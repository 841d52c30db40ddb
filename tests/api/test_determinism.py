"""The same data and options give a byte-identical model file (README, Model files): no
model file holds a timing, whichever command or estimator wrote it."""

import json

import pytest

from svmmap import SVMMap, dump_svmlight, load_svmlight
from svmmap.baselines import AdaRank, PRank, RankBoost
from svmmap.commands.learn import learn_main
from svmmap.model_selection import SVMMapCV

from conftest import random_collection


def _keys(document):
    """Every key of a JSON document, at any depth."""
    if isinstance(document, dict):
        for key, value in document.items():
            yield key
            yield from _keys(value)
    elif isinstance(document, list):
        for value in document:
            yield from _keys(value)


def _timing_keys(path):
    return [key for key in _keys(json.loads(path.read_text()))
            if "second" in key or "time" in key]


@pytest.fixture
def train_vali(tmp_path):
    X, y, qid = random_collection(seed=11, n_queries=16, docs=(5, 15))
    train, vali = tmp_path / "train.txt", tmp_path / "vali.txt"
    dump_svmlight(train, X[qid < 11], y[qid < 11], qid[qid < 11])
    dump_svmlight(vali, X[qid >= 11], y[qid >= 11], qid[qid >= 11])
    return train, vali


@pytest.mark.parametrize("options", [
    ["-c", "0.1,1,10", "--vali", "VALI"],
    ["-c", "0.1,1,10", "--holdout", "0.3"],
    ["-c", "10"],
    ["-c", "10", "-w", "0"],
])
def test_learn_twice_writes_the_same_bytes(train_vali, tmp_path, capsys, options):
    """The issue's reproducer: the C path recorded each C's seconds in the model file.  The
    timings are printed (the path table) and kept out of the file."""
    train, vali = train_vali
    argv = [str(vali) if a == "VALI" else a for a in options]
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    assert learn_main([*argv, str(train), str(first)]) == 0
    assert learn_main([*argv, str(train), str(second)]) == 0
    assert first.read_bytes() == second.read_bytes()
    assert _timing_keys(first) == []
    if "-c" in options and "," in options[1]:
        assert " seconds " in capsys.readouterr().out  # the path table still shows them


@pytest.mark.parametrize("make", [
    lambda: SVMMap(C=10),
    lambda: SVMMapCV(Cs=[0.1, 1, 10]),
    lambda: AdaRank(max_rounds=5),
    lambda: RankBoost(max_rounds=5),
    lambda: PRank(n_epochs=2),
], ids=["SVMMap", "SVMMapCV", "AdaRank", "RankBoost", "PRank"])
def test_every_estimator_saves_the_same_bytes_without_timings(train_vali, tmp_path, make):
    X, y, qid = load_svmlight(train_vali[0])
    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    for path in paths:
        make().fit(X, y, qid).save(path)
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert _timing_keys(paths[0]) == []


def test_the_estimator_keeps_the_timings_it_does_not_write(train_vali, tmp_path):
    """SVMMapCV.path_ still has each C's seconds (an attribute, not the file)."""
    X, y, qid = load_svmlight(train_vali[0])
    model = SVMMapCV(Cs=[0.1, 1]).fit(X, y, qid)
    assert all(row["seconds"] >= 0 for row in model.path_)
    model.save(tmp_path / "m.json")
    saved = json.loads((tmp_path / "m.json").read_text())["training"]["selection"]
    assert "seconds" not in saved and all("seconds" not in row for row in saved["path"])
