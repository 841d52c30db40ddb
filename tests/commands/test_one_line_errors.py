"""Issue 22, classes 5 and 6: inputs that gave a traceback where one line is promised, and
messages that named the wrong file or none.  Generators (hypothesis) over the API's array
arguments (qid kinds and shapes, NaN, eval_set), group files, large grades and hostile result
files; the issue's reproducers as examples."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from svmmap import InputFormatError, SVMMap, load_svmlight
from svmmap.commands import baseline_learn as baseline_cli
from svmmap.commands.learn import learn_main
from svmmap.data import io as io_module
from svmmap.experiments import letor, plots, trec, trials
from svmmap.export import main as export_main
from svmmap.model_selection import SVMMapCV

from conftest import FAST, ROOT, one_error_line, query_lines

# -- group files -----------------------------------------------------------------------------

#: characters str.isdigit() accepts beyond ASCII ('²', '٣', ...)
_not_ascii_digits = st.sampled_from([chr(c) for c in range(128, 0x30000) if chr(c).isdigit()])


@FAST
@given(digit=_not_ascii_digits, line=st.integers(1, 3))
@example(digit="\u00b2", line=1)  # the group size written '²'
def test_a_group_size_in_other_digits_is_one_line(tmp_path_factory, digit, line):
    """str.isdigit() holds for '²' or '٣' but int() refuses some of them: sizes are ASCII."""
    folder = tmp_path_factory.mktemp("group")
    (folder / "data.txt").write_text("1 1:1\n0 1:2\n" * 3)
    sizes = ["2"] * 3
    sizes[line - 1] = digit
    (folder / "data.txt.query").write_text("\n".join(sizes) + "\n")
    with pytest.raises(InputFormatError, match=rf"data.txt.query:{line}: expected one query "
                                               "size"):
        load_svmlight(folder / "data.txt")


# -- large grades ----------------------------------------------------------------------------

@FAST
@given(label=st.one_of(st.integers(513, 10**6), st.floats(512.5, 1e300)),
       loss=st.sampled_from(["ndcg", "ndcg@5", "ndcg@1"]), line=st.integers(1, 48))
@example(label=2000, loss="ndcg@5", line=1)
def test_an_ndcg_grade_above_512_is_refused_with_file_and_line(tmp_path_factory, capsys,
                                                               label, loss, line):
    """Decision: an NDCG loss takes grades up to 512 (gain 2^512 - 1); a larger one would make
    the gains, or their sums, overflow: refused with its file and line."""
    path = tmp_path_factory.mktemp("grades") / "train.dat"
    lines = "".join(query_lines(q) for q in range(1, 7)).splitlines(keepends=True)
    lines[line - 1] = f"{label!r}" + lines[line - 1][1:]
    path.write_text("".join(lines))
    assert learn_main(["-v", "0", "-l", loss, str(path), str(path.with_name("m.json"))]) == 1
    assert one_error_line(capsys).startswith(f"svmmap_learn: error: {path}:{line}: label ")
    X, y, qid = load_svmlight(path)
    with pytest.raises(InputFormatError, match="too large for an NDCG loss"):
        SVMMap(loss=loss).fit(X, y, qid)


@pytest.mark.parametrize("loss", ["mrr", "p@3", "rprec"])
def test_other_measures_take_any_grade(good, loss):
    """mrr, p@k and rprec only ask whether a label is > 0: any grade trains the model that
    label 1 trains (the issue's "infinite NDCG gains" for -l mrr)."""
    X, y, qid = load_svmlight(good)
    big = SVMMap(loss=loss).fit(X, np.where(y > 0, 2000.0, y), qid)
    assert np.array_equal(big.coef_, SVMMap(loss=loss).fit(X, y, qid).coef_)


# -- the API's array arguments ---------------------------------------------------------------

def _qid_of(kind, n, rng):
    if kind == "int":
        return rng.integers(0, 3, n)
    if kind == "str":
        return np.array([f"q{k}" for k in rng.integers(0, 3, n)])
    if kind == "mixed":
        return np.array([int(k) if k % 2 else f"q{k}" for k in rng.integers(0, 4, n)],
                        dtype=object)
    if kind == "object-int":
        return np.array([int(k) for k in rng.integers(0, 3, n)], dtype=object)
    if kind == "none":
        return np.array([None] * n, dtype=object)
    if kind == "nan":
        qid = rng.integers(0, 3, n).astype(float)
        qid[0] = np.nan
        return qid
    if kind == "2d":
        return rng.integers(0, 3, (n, 2))
    raise AssertionError(kind)


@FAST
@given(kind=st.sampled_from(["int", "str", "mixed", "object-int", "none", "nan", "2d"]),
       extra=st.integers(-2, 2), seed=st.integers(0, 2**16), cv=st.booleans())
def test_any_qid_array_trains_or_is_refused_in_one_line(kind, extra, seed, cv):
    """Whatever qid holds or however long it is: a model, or a ValueError of one line naming
    what is wrong (a TypeError from sorting ints with strings, an IndexError from SVMMapCV's
    split, before)."""
    rng = np.random.default_rng(seed)
    X, y = rng.random((24, 3)), np.tile([1.0, 0.0, 0.0], 8)
    qid = _qid_of(kind, max(24 + extra, 1), rng)
    model = SVMMapCV(Cs=[1, 10]) if cv else SVMMap()
    try:
        model.fit(X, y, qid)
    except ValueError as exc:
        assert isinstance(exc, InputFormatError) and "\n" not in str(exc)
        return
    assert kind in ("int", "str", "object-int") and extra == 0


@FAST
@given(change=st.sampled_from(["wider", "narrower", "nan", "inf", "short qid", "nan label",
                               "not a triple", "same"]),
       seed=st.integers(0, 2**16))
def test_any_eval_set_is_used_or_refused_in_one_line(change, seed):
    """An eval_set of another width, with NaN, a qid of another length or neither (X, y) nor
    (X, y, qid):
    refused as ``eval_set: ...`` in one line (numpy's matmul message and "scores contains
    NaN" before)."""
    rng = np.random.default_rng(seed)
    X, y, qid = rng.random((24, 3)), np.tile([1.0, 0.0, 0.0], 8), np.repeat(np.arange(4), 6)
    Xv, yv, qv = rng.random((12, 3)), np.tile([1.0, 0.0], 6), np.repeat(np.arange(2), 6)
    if change == "wider":
        Xv = np.hstack([Xv, Xv])
    elif change == "narrower":
        Xv = Xv[:, :2]
    elif change in ("nan", "inf"):
        Xv[rng.integers(12), rng.integers(3)] = np.nan if change == "nan" else np.inf
    elif change == "short qid":
        qv = qv[:-1]
    elif change == "nan label":
        yv = yv.copy()
        yv[0] = np.nan
    eval_set = (Xv, yv, qv, qv) if change == "not a triple" else (Xv, yv, qv)
    model = SVMMapCV(Cs=[1, 10])
    if change == "same":
        assert model.fit(X, y, qid, eval_set=eval_set).C_ in (1.0, 10.0)
        return
    with pytest.raises(InputFormatError, match="^eval_set") as info:
        model.fit(X, y, qid, eval_set=eval_set)
    assert "\n" not in str(info.value)


# -- files the experiments read and write ----------------------------------------------------

@pytest.mark.parametrize("driver, names", [(letor, "letor"), (trials, "trials")])
def test_out_naming_a_file_is_refused_before_the_run(tmp_path, capsys, monkeypatch, driver,
                                                     names):
    """``--out`` is checked before hours of work, not after (FileExistsError then)."""
    def not_run(*args, **kwargs):
        raise AssertionError("the experiment ran before --out was checked")

    monkeypatch.setattr(driver, "run", not_run)
    out = tmp_path / "results"
    out.write_text("not a folder")
    with pytest.raises(SystemExit) as info:
        driver.main(["--data", str(tmp_path), "--out", str(out)])
    assert info.value.code == 1
    line = one_error_line(capsys)
    assert f"--out {out}: exists and is not a folder" in line and f"{names}.json" in line
    assert out.read_text() == "not a folder"


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.sampled_from(["methods", "data", "label", "pr11",
                                                        "per_query", "folds", "svm-map"]),
                                       inner, max_size=3),
                     max_leaves=8)


def _method(label, queries, value=0.5):
    return {"label": label, "pr11": [value] * 11, "folds": {"1": {}},
            "per_query": {q: value for q in queries}}


#: results that look like letor.json but are not: one field broken at a time
_almost_results = st.sampled_from([
    {"data": "d", "methods": {"svm-map": _method("SVM-MAP", "ab"),
                              "svm-roc": _method("SVM-ROC", "a")}},
    {"data": "d", "methods": {"svm-map": _method("SVM-MAP", "ab"),
                              "svm-roc": {**_method("SVM-ROC", "ab"), "pr11": [0.5] * 3}}},
    {"data": "d", "methods": {"svm-map": {**_method("SVM-MAP", "ab"),
                                          "per_query": {"a": "x"}}}},
    {"data": "d", "methods": {"svm-map": {**_method("SVM-MAP", "ab"), "label": None}}},
    {"data": "d", "methods": {"svm-map": {**_method("SVM-MAP", "ab"), "folds": 3}}},
    {"methods": {"svm-map": _method("SVM-MAP", "ab")}},
    {"data": "d", "methods": {"svm-roc": _method("SVM-ROC", "ab")}},
])


@FAST
@given(content=st.one_of(_json.map(json.dumps), st.text(max_size=20),
                         _almost_results.map(json.dumps)))
@example(content="{}")
@example(content="not JSON")
def test_plots_name_a_results_file_that_is_not_a_result(tmp_path_factory, capsys, content):
    folder = tmp_path_factory.mktemp("results")
    (folder / "letor.json").write_text(content)
    with pytest.raises(SystemExit) as info:
        plots.main(["--results", str(folder)])
    assert info.value.code == 1
    assert one_error_line(capsys).startswith(f"error: {folder / 'letor.json'}: ")
    assert not list(folder.glob("*.png"))


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("module, args", [("svmmap.datasets", ["list"]),
                                          ("svmmap.datasets", ["path", "mq2008", "train"]),
                                          ("svmmap.experiments.plots", ["--results", "."])])
def test_a_full_standard_output_is_one_line(tmp_path, module, args):
    """``python -m svmmap.datasets list > /dev/full`` (OSError before), and the paths plots
    prints (svmmap.commands.console.print_output)."""
    if module.endswith("plots"):
        pytest.importorskip("matplotlib")
        results = ROOT / "benchmarks/results/letor_ohsumed/letor.json"
        (tmp_path / "letor.json").write_text(results.read_text())
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", module, *args], stdout=full, cwd=tmp_path,
                              stderr=subprocess.PIPE, text=True, timeout=300)
    assert proc.returncode == 1
    assert proc.stderr == (f"python -m {module}: error: cannot write to standard output: "
                           "No space left on device\n")


def test_qrels_relevance_nan_and_a_run_topic_with_a_colon_name_file_and_line(tmp_path,
                                                                              capsys):
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("1 Q0 d1 1 3 r\n1 Q0 d2 2 2 r\n")
    qrels.write_text("1 0 d1 1\n1 0 d2 nan\n")
    out = tmp_path / "data.txt"
    for bad, line in ((qrels, f"{qrels}:2: relevance 'nan' is not a finite number"),
                      (run, f"{run}:2: topic '1:a' cannot be a query id")):
        if bad is run:
            qrels.write_text("1 0 d1 1\n")
            run.write_text("1 Q0 d1 1 3 r\n1:a Q0 d2 2 2 r\n")
        with pytest.raises(SystemExit):
            trec.main(["build", "--runs", str(run), "--qrels", str(qrels), "--out", str(out)])
        assert line in one_error_line(capsys)
    assert not out.exists()


# -- messages that name the right file -------------------------------------------------------

def test_all_zero_query_weights_name_the_weights_file(good, tmp_path, capsys):
    weights = tmp_path / "w.txt"
    weights.write_text("".join(f"{q} 0\n" for q in range(1, 7)))
    assert learn_main(["-v", "0", "--query-weights", str(weights), str(good),
                       str(tmp_path / "m.json")]) == 1
    assert one_error_line(capsys).startswith(f"svmmap_learn: error: {weights}: every query")


@pytest.mark.parametrize("names, message", [
    ("a\nb\n", "2 feature names for a model of 4 features"),
    ("a\nb\nc\nd\ne\n", "5 feature names for a model of 4 features"),
    ("a\nb\nc\na\n", ":4: feature name 'a' repeated (first on line 1)"),
    (b"caf\xe9\nb\nc\nd\n", ":1: not valid UTF-8 (byte 0xe9)"),
])
def test_a_names_file_that_does_not_fit_is_named(good, tmp_path, capsys, names, message):
    model, path = tmp_path / "m.json", tmp_path / "names.txt"
    assert learn_main(["-v", "0", str(good), str(model)]) == 0
    path.write_bytes(names if isinstance(names, bytes) else names.encode())
    assert export_main(["--feature-names", str(path), str(model), str(tmp_path / "o")]) == 1
    assert one_error_line(capsys).startswith(f"python -m svmmap.export: error: {path}{message}"
                                             if message.startswith(":") else
                                             f"python -m svmmap.export: error: {path}: {message}")


@pytest.mark.parametrize("make", ["binned", "rankboost"])
def test_export_of_a_model_that_is_not_linear_names_the_model_file(good, tmp_path, capsys,
                                                                   make):
    model = tmp_path / "m.json"
    if make == "binned":
        assert learn_main(["-v", "0", "--bin", "3", str(good), str(model)]) == 0
    else:
        assert baseline_cli.learn_main(["-v", "0", "--method", "rankboost", str(good),
                                        str(model)]) == 0
    assert export_main([str(model), str(tmp_path / "o")]) == 1
    assert one_error_line(capsys).startswith(f"python -m svmmap.export: error: {model}: ")


def test_out_of_memory_while_reading_names_the_file_being_read(tmp_path, capsys, monkeypatch):
    """The second file of an index file runs out of memory: that file is named."""
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text("".join(query_lines(q) for q in range(1, 3)))
    (tmp_path / "index.txt").write_text("a.txt\nb.txt\n")
    parse = io_module._parse_source

    def second_fails(source, *args, **kwargs):
        if source.path.name == "b.txt":
            raise MemoryError
        return parse(source, *args, **kwargs)

    monkeypatch.setattr(io_module, "_parse_source", second_fails)
    assert learn_main([str(tmp_path / "index.txt"), str(tmp_path / "m.json")]) == 1
    assert one_error_line(capsys) == (
        f"svmmap_learn: error: out of memory: reading {tmp_path / 'b.txt'}"
        " (the data, its number of features or the binning is too large for this machine)")


def test_a_scheduler_address_that_is_not_one_is_one_line(good, tmp_path, capsys):
    pytest.importorskip("dask.distributed")
    assert learn_main(["--scheduler", "notanaddress", str(good), str(tmp_path / "m.json")]) == 1
    assert one_error_line(capsys).startswith(
        "svmmap_learn: error: --scheduler notanaddress: cannot connect to a Dask scheduler there")


def test_dask_workers_read_standard_input_without_worker_logs(good, tmp_path):
    """``cat good.dat | svmmap_learn --dask-workers 1 - m``: the command's own standard input
    is read (a worker read its empty one: "<stdin>: empty file"), and the local cluster's
    logs stay out of the output."""
    pytest.importorskip("dask.distributed")
    model = tmp_path / "m.json"
    with open(good, "rb") as data:
        proc = subprocess.run(["svmmap_learn", "-v", "1", "--dask-workers", "1", "-",
                               str(model)], stdin=data, capture_output=True, text=True,
                              timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "Read 48 documents, 6 queries, 4 features from -" in proc.stdout
    logs = [line for line in proc.stderr.splitlines()
            if "distributed." in line or " - INFO - " in line or " - ERROR - " in line]
    assert not logs, proc.stderr
    X, y, qid = load_svmlight(good)  # the same problem as read here, solved to rel_gap 1e-6
    read = SVMMap.load(model).training_result_.primal_objective
    assert read == pytest.approx(SVMMap().fit(X, y, qid).training_result_.primal_objective,
                                 rel=1e-5)
