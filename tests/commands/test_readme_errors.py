"""README's "Errors you may see" table, checked line by line: every message of the table
(each backticked message of the first column; ``...`` stands for anything) has a trigger here
that produces it -- through the command in this process (one error line on stderr, no
traceback) or through the API (the exception's text) -- and every trigger belongs to a message
the table shows.  A message that the code no longer prints, or a row added without a trigger,
fails."""

import errno
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from svmmap import SVMMap
from svmmap.commands.classify import classify_main
from svmmap.commands.learn import learn_main
from svmmap.core import training as training_module
from svmmap.data import atomic as atomic_module
from svmmap.data import io as io_module
from svmmap.experiments import trec
from svmmap.export import main as export_main

from conftest import ROOT


def table_messages():
    """The messages of the manual's error table (docs/pages/errors.md), in table order."""
    text = (ROOT / "docs" / "pages" / "errors.md").read_text(encoding="utf-8")
    section = text.split("# Errors you may see", 1)[1].split("\n## ", 1)[0]
    messages = []
    for line in section.splitlines():
        if line.startswith("| `"):
            first_cell = line[1:].split(" | ", 1)[0]
            messages += re.findall(r"`([^`]+)`", first_cell)
    return messages


def pattern(message):
    return re.compile(".*".join(map(re.escape, message.split("..."))))


TRIGGERS = {}


def trigger(*messages):
    def register(function):
        for message in messages:
            TRIGGERS[message] = function
        return function
    return register


# -- helpers ---------------------------------------------------------------------------------

def _lines(k, q=1, first=1):
    """k valid data lines of query q (relevant and non-relevant documents, 4 features)."""
    return "".join(f"{int(i % 2 == 0)} qid:{q} 1:{0.1 * (i + 1):g} 2:0.5 3:{i % 3} 4:1\n"
                   for i in range(first, first + k))


def _good(path="train.txt", n_queries=6):
    Path(path).write_text("".join(_lines(8, q) for q in range(1, n_queries + 1)))
    return path


def _cli(main, args, capsys, status=1):
    """The error line a command prints (exactly one, no traceback), its status checked."""
    try:
        got = main(args)
    except SystemExit as exc:  # argparse's usage errors
        got = exc.code
    err = capsys.readouterr().err
    assert got == status, err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert len(errors) == 1, err
    return errors[0].split(": error: ", 1)[1]


def _api(action):
    with pytest.raises(ValueError) as info:
        action()
    assert "\n" not in str(info.value)
    return str(info.value)


def _learn(args, capsys, status=1):
    return _cli(learn_main, ["-v", "0", *args], capsys, status)


def _model(capsys, data="train.txt", path="model.json"):
    assert learn_main(["-v", "0", _good(data), path]) == 0
    capsys.readouterr()
    return path


# -- the triggers, in table order ----------------------------------------------------------------

@trigger("train.txt:12: missing qid:<id> after the label")
def _(capsys, monkeypatch):
    Path("train.txt").write_text(_lines(11) + "1 1:0.5\n")
    return _learn(["train.txt", "model.json"], capsys)


@trigger("train.txt:3: feature 11: value 'NULL' is not a finite number")
def _(capsys, monkeypatch):
    Path("train.txt").write_text(_lines(2) + "0 qid:1 1:0.1 11:NULL\n")
    return _learn(["train.txt", "model.json"], capsys)


@trigger("train.txt:7: feature index 2 after 3: indices must increase")
def _(capsys, monkeypatch):
    Path("train.txt").write_text(_lines(6) + "0 qid:2 3:1 2:1\n")
    return _learn(["train.txt", "model.json"], capsys)


@trigger("test.txt:1: feature index 99 exceeds the 45 features of model.json (a file may have "
         "fewer features, never more)")
def _(capsys, monkeypatch):
    Path("train.txt").write_text(_lines(4) + "0 qid:1 45:0.5\n")
    assert learn_main(["-v", "0", "train.txt", "model.json"]) == 0
    Path("test.txt").write_text("1 qid:1 1:1 99:1\n")
    return _cli(classify_main, ["test.txt", "model.json", "p.txt"], capsys)


@trigger("test.txt: every line lists the features 1..45, zeros written out, but model.json has "
         "46 features: ...")
def _(capsys, monkeypatch):
    row = " ".join(f"{j}:{j % 2}" for j in range(1, 46))
    Path("train.txt").write_text(f"1 qid:1 {row} 46:1\n0 qid:1 {row} 46:0\n")
    assert learn_main(["-v", "0", "train.txt", "model.json"]) == 0
    Path("test.txt").write_text(f"1 qid:1 {row}\n0 qid:1 {row}\n")
    return _cli(classify_main, ["test.txt", "model.json", "p.txt"], capsys)


@trigger("test.txt:3: label 1.5 is fractional: qrels hold integer labels")
def _(capsys, monkeypatch):
    _model(capsys)
    Path("test.txt").write_text(_lines(2) + "1.5 qid:1 1:1\n")
    return _cli(classify_main, ["--qrels", "q.txt", "test.txt", "model.json", "p.txt"], capsys)


@trigger("test.txt:3: ERR takes grades 0 to 4 (gdeval's scale: stopping probability "
         "(2^g - 1) / 2^4), got label 7")
def _(capsys, monkeypatch):
    _model(capsys)
    Path("test.txt").write_text(_lines(2) + "7 qid:1 1:1\n")
    return _cli(classify_main, ["--metrics", "err@10", "test.txt", "model.json", "p.txt"],
                capsys)


@trigger("train.csv:1: this looks like a CSV file (comma-separated columns), not SVMlight/LETOR "
         "data: expected lines '<label> qid:<q> <index>:<value> ...' (svmmap.dump_svmlight "
         "writes them from arrays)")
def _(capsys, monkeypatch):
    Path("train.csv").write_text("label,qid,f1,f2\n1,1,0.5,0.2\n")
    return _learn(["train.csv", "model.json"], capsys)


@trigger("C values are comma-separated: -c 0.1,1,10 (see svmmap_learn --help)")
def _(capsys, monkeypatch):
    return _learn(["-c", "0.1", "1", "10", _good(), "model.json"], capsys, status=2)


@trigger("argument --run-tag: the run tag must be one word without blanks, got 'a b' (see "
         "svmmap_classify --help)")
def _(capsys, monkeypatch):
    return _cli(classify_main, ["--run", "run.txt", "--run-tag", "a b", _good(),
                                _model(capsys), "p.txt"], capsys, status=2)


@trigger("train.txt: none of the 2 queries has both a relevant (label > 0) and a non-relevant "
         "document: there is nothing to train on")
def _(capsys, monkeypatch):
    Path("train.txt").write_text("0 qid:1 1:1\n0 qid:1 1:2\n1 qid:2 1:1\n1 qid:2 1:3\n")
    return _learn(["train.txt", "model.json"], capsys)


@trigger("vali.txt: none of the 6 validation queries has both a relevant (label > 0) and a "
         "non-relevant document: every C scores the same map, so it cannot choose C")
def _(capsys, monkeypatch):
    _good()
    Path("vali.txt").write_text(Path("train.txt").read_text().replace("1 qid", "0 qid"))
    return _learn(["-c", "1,10", "--vali", "vali.txt", "train.txt", "model.json"], capsys)


@trigger("train.txt:3: feature 2: value '1e200' is too large (magnitude at most 1e+100; scale "
         "the features)")
def _(capsys, monkeypatch):
    Path("train.txt").write_text(_lines(2) + "0 qid:1 1:1 2:1e200\n")
    return _learn(["train.txt", "model.json"], capsys)


@trigger("X[0, 1] = 1e+200: feature values must be at most 1e+100 in magnitude (scale the "
         "features)")
def _(capsys, monkeypatch):
    X = np.array([[1.0, 1e200], [0.0, 1.0]])
    return _api(lambda: SVMMap().fit(X, [1, 0]))


@trigger("train.txt:1: label 2000 is too large for an NDCG loss: its gain 2^label - 1 overflows "
         "(grades at most 512)")
def _(capsys, monkeypatch):
    _good()
    Path("train.txt").write_text("2000" + Path("train.txt").read_text()[1:])
    return _learn(["-l", "ndcg@5", "train.txt", "model.json"], capsys)


@trigger("train.txt: the highest feature index is 100000000: training holds 25 dense vectors of "
         "that length (18.6 GiB), more than the ... GiB of memory available; renumber the "
         "features consecutively")
def _(capsys, monkeypatch):
    # the machine's memory is what the check reads: pretend to a small machine's 3.5 GiB
    monkeypatch.setattr(training_module, "_available_memory", lambda: 3.5 * 2**30)
    Path("train.txt").write_text("1 qid:1 1:1\n0 qid:1 100000000:1\n")
    return _learn(["-w", "0", "train.txt", "model.json"], capsys)


@trigger("out of memory: reading train.txt (the data, its number of features or the binning is "
         "too large for this machine)")
def _(capsys, monkeypatch):
    _good()

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(io_module, "_parse_source", no_memory)
    return _learn(["train.txt", "model.json"], capsys)


@trigger("train.txt: Found array with 0 feature(s) (shape=(4, 0)) while a minimum of 1 is "
         "required by SVMMap.")
def _(capsys, monkeypatch):
    Path("train.txt").write_text("1 qid:1\n0 qid:1\n1 qid:2\n0 qid:2\n")
    return _learn(["train.txt", "model.json"], capsys)


@trigger("model.out: is the input file 'train.txt': refusing to overwrite it (choose another "
         "output path)")
def _(capsys, monkeypatch):
    os.link(_good(), "model.out")
    return _learn(["train.txt", "model.out"], capsys)


@trigger("test.txt: exists and is not an svmmap model file: refusing to replace it (check the "
         "order of the arguments, or give --force)")
def _(capsys, monkeypatch):
    return _learn(["train.txt", _good("test.txt")], capsys)


@trigger("out/model.json: directory 'out' does not exist")
def _(capsys, monkeypatch):
    return _learn([_good(), "out/model.json"], capsys)


@trigger("out/model.json: directory 'out' is not writable")
def _(capsys, monkeypatch):
    os.mkdir("out")
    os.chmod("out", 0o500)
    if os.access("out", os.W_OK):  # root writes anywhere: the check must still say no
        real = os.access
        monkeypatch.setattr(atomic_module.os, "access",
                            lambda p, mode: False if str(p) == "out" else real(p, mode))
    return _learn([_good(), "out/model.json"], capsys)


@trigger("model.json: is a directory")
def _(capsys, monkeypatch):
    os.mkdir("model.json")
    return _learn([_good(), "model.json"], capsys)


@trigger("model.json: No space left on device")
def _(capsys, monkeypatch):
    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic_module.os, "fsync", full)
    return _learn([_good(), "model.json"], capsys)


@trigger("model.json: not an svmmap model file")
def _(capsys, monkeypatch):
    Path("model.json").write_text('{"weights": [1, 2]}')
    return _cli(classify_main, [_good(), "model.json", "p.txt"], capsys)


@trigger("model.json: model file version 7 is not supported ...")
def _(capsys, monkeypatch):
    Path("model.json").write_text('{"format": "svmmap-model", "version": 7}')
    return _cli(classify_main, [_good(), "model.json", "p.txt"], capsys)


@trigger("m.json looks like a model file, not data: the arguments are train_file model_file")
def _(capsys, monkeypatch):
    Path("m.json").write_text('{"format": "svmmap-model"}')
    return _learn(["m.json", _good()], capsys, status=2)


@trigger("-t is an SVMstruct option svmmap does not have: ...")
def _(capsys, monkeypatch):
    return _learn(["-t", "1", _good(), "model.json"], capsys, status=2)


@trigger("model.json: not an svmmap model file (JSON nested too deeply)")
def _(capsys, monkeypatch):
    Path("model.json").write_text("[" * 100_000 + "]" * 100_000)
    return _cli(classify_main, [_good(), "model.json", "p.txt"], capsys)


@trigger("model.json: damaged model file (svmmap: ...)")
def _(capsys, monkeypatch):
    document = json.loads(Path(_model(capsys)).read_text())
    document["model"]["coef"] = document["model"]["coef"][:2]
    Path("model.json").write_text(json.dumps(document))
    return _cli(classify_main, ["train.txt", "model.json", "p.txt"], capsys)


@trigger("training overflowed: C = 1e+300 times the squared largest feature value (1e+100) is "
         "beyond float64; scale the features or lower C")
def _(capsys, monkeypatch):
    values = np.random.default_rng(0).choice([1e100, -1e100, 0.0], size=(40, 3))
    Path("train.txt").write_text("".join(
        f"{k % 2} qid:{k // 10} " + " ".join(f"{j + 1}:{v:g}" for j, v in enumerate(row)) + "\n"
        for k, row in enumerate(values)))
    return _learn(["-c", "1e300", "train.txt", "model.json"], capsys)


@trigger("names.txt:2: blank line: line k names feature k, so a blank line would shift every "
         "later name (name feature 2)")
def _(capsys, monkeypatch):
    Path("names.txt").write_text("a\n\nc\nd\n")
    return _cli(export_main, ["--feature-names", "names.txt", _model(capsys), "out.json"],
                capsys)


@trigger("map.txt:3: not valid UTF-8 (byte 0xe9): save the rank features as UTF-8")
def _(capsys, monkeypatch):
    Path("map.txt").write_bytes(b"1 attribute(f1)\n2 attribute(f2)\n3 caf\xe9(x)\n")
    return _cli(export_main, ["--format", "vespa", "--rank-features", "map.txt",
                              _model(capsys), "out.profile"], capsys)


@trigger("map.txt: the rank-feature map must name every model feature and no other: missing "
         "['3']")
def _(capsys, monkeypatch):
    Path("map.txt").write_text("1 attribute(f1)\n2 attribute(f2)\n4 attribute(f4)\n")
    return _cli(export_main, ["--format", "vespa", "--rank-features", "map.txt",
                              _model(capsys), "out.profile"], capsys)


@trigger("argument --depth: must be at least 1, got '0'")
def _(capsys, monkeypatch):
    return _cli(trec.main, ["build", "--runs", "run", "--qrels", "qrels", "--out", "data.txt",
                            "--depth", "0"], capsys, status=2)


@trigger("The 'max_iter' parameter of SVMMap must be an int in the range [1, inf) or None. Got 0 "
         "instead.")
def _(capsys, monkeypatch):
    return _api(lambda: SVMMap(max_iter=0).fit(np.eye(2), [1, 0]))


@trigger("qid mixes strings and other values ('a' and 1): give every query id as a string, or "
         "every one as a number")
def _(capsys, monkeypatch):
    qid = np.array([1, 1, "a", "a"], dtype=object)
    return _api(lambda: SVMMap().fit(np.eye(4), [1, 0, 1, 0], qid))


@trigger("eval_set[0] (validation data): X has 12 rows but eval_qid[0] has 5 entries")
def _(capsys, monkeypatch):
    X, y = np.random.default_rng(0).random((24, 3)), np.tile([1.0, 0.0, 0.0], 8)
    return _api(lambda: SVMMap().fit(X, y, np.repeat(np.arange(4), 6), eval_set=[(X[:12], y[:12])],
                                     eval_qid=[np.zeros(5)]))


@trigger("group holds a query size of 1e+20 rows, X has 24")
def _(capsys, monkeypatch):
    X, y = np.random.default_rng(0).random((24, 3)), np.tile([1.0, 0.0, 0.0], 8)
    return _api(lambda: SVMMap().fit(X, y, group=[1e20, 1e20]))


# -- the checks ----------------------------------------------------------------------------------

def test_every_message_of_the_table_has_a_trigger_and_no_other():
    messages = table_messages()
    assert len(messages) == len(set(messages))
    assert set(messages) == set(TRIGGERS)


@pytest.mark.parametrize("message", table_messages())
def test_the_trigger_produces_the_message_shown(message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    if message not in TRIGGERS:
        pytest.fail(f"no trigger for README's message {message!r}")
    produced = TRIGGERS[message](capsys, monkeypatch)
    assert pattern(message).search(produced), f"README: {message}\nproduced: {produced}"
