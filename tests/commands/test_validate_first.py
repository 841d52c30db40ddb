"""Issue 32, items 4 and 6: every command checks its inputs (qrels grades, grades against the
measures, the run tag, the validation file, the width of the data against the model's) before
it creates or replaces an output, so that a failed command leaves the file system as it found
it, and says so in one line naming the file (and line) at fault.

The generated test runs each command on a bad input of each kind, with and without outputs
already present, and compares the whole directory before and after."""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from svmmap import SVMMap, load_svmlight
from svmmap.commands import baseline_classify, baseline_learn
from svmmap.commands.classify import classify_main
from svmmap.commands.learn import learn_main

from conftest import FAST, one_error_line, query_lines

#: the data of every case: six queries of eight documents, four features listed on every line
#: (the dense layout, as LETOR's files)
LINES = "".join(query_lines(q) for q in range(1, 7)).splitlines(keepends=True)


def _snapshot(folder):
    """Every file of ``folder`` and its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _call(main, argv):
    try:
        return main(argv)
    except SystemExit as exc:  # a usage error
        return exc.code


def _with_label(line, label):
    return f"{label}{line[line.index(' '):]}"


def _case(kind, line, value):
    """(the data file's lines, the extra arguments, the file and line the message must name,
    what it must say) of one bad input: ``line`` (1-based) is the line made bad."""
    lines = list(LINES)
    i = line - 1
    if kind == "fractional qrels grade":
        lines[i] = _with_label(lines[i], f"{value + 0.5}")
        return lines, ["--qrels", "OUT/qrels.txt", "--run", "OUT/run.txt"], ("test.dat", line),\
            "is fractional: qrels hold integer labels"
    if kind == "ERR grade above 4":
        lines[i] = _with_label(lines[i], f"{value + 5}")
        return lines, ["--metrics", "map,err@10"], ("test.dat", line), "ERR takes grades 0 to 4"
    if kind == "run tag with a blank":
        return lines, ["--run", "OUT/run.txt", "--run-tag", f"run {value}"], (None, None), \
            "--run-tag: the run tag must be one word"
    if kind == "wider than the model":
        lines[i] = lines[i].rstrip("\n") + f" {5 + value}:0.5\n"
        return lines, [], ("test.dat", line), \
            f"feature index {5 + value} exceeds the 4 features of "
    if kind == "dense and narrower than the model":  # LETOR's layout: zeros written out
        lines = [" ".join(x.split()[:-1]) + "\n" for x in lines]
        tokens = lines[i].split()
        tokens[2 + value % 3] = f"{1 + value % 3}:0"
        lines[i] = " ".join(tokens) + "\n"
        return lines, [], ("test.dat", None), \
            "every line lists the features 1..3, "
    raise AssertionError(kind)


CLASSIFY_CASES = ["fractional qrels grade", "ERR grade above 4", "run tag with a blank",
                  "wider than the model", "dense and narrower than the model"]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    (folder / "train.dat").write_text("".join(LINES))
    X, y, qid = load_svmlight(folder / "train.dat")
    SVMMap().fit(X, y, qid).save(folder / "model.json")
    return folder


@FAST
@given(kind=st.sampled_from(CLASSIFY_CASES), line=st.integers(1, len(LINES)),
       value=st.integers(0, 20), existing=st.booleans(),
       command=st.sampled_from(["svmmap_classify", "svmmap_baseline_classify"]))
@example(kind="fractional qrels grade", line=3, value=1, existing=False,
         command="svmmap_classify")  # the run.txt left behind
@example(kind="ERR grade above 4", line=1, value=0, existing=True,
         command="svmmap_classify")  # the predictions left behind
def test_classify_leaves_the_files_as_they_were(tmp_path_factory, model_dir, capsys, kind,
                                                line, value, existing, command):
    folder = tmp_path_factory.mktemp("classify")
    lines, extra, (path, lineno), says = _case(kind, line, value)
    (folder / "test.dat").write_text("".join(lines))
    (folder / "model.json").write_bytes((model_dir / "model.json").read_bytes())
    if existing:  # outputs of an earlier run: kept as they were
        (folder / "pred.txt").write_text("0.5\n" * len(LINES))
        (folder / "run.txt").write_text("1 Q0 d1 1 0.5 old\n")
        (folder / "qrels.txt").write_text("1 0 d1 1\n")
    before = _snapshot(folder)
    main = classify_main if command == "svmmap_classify" else baseline_classify.classify_main
    argv = [str(folder / "test.dat"), str(folder / "model.json"), str(folder / "pred.txt"),
            *(a.replace("OUT", str(folder)) for a in extra)]
    assert _call(main, argv) in (1, 2)
    message = one_error_line(capsys)
    assert says in message
    if path is not None:
        where = f"{folder / path}:{lineno}: " if lineno else f"{folder / path}: "
        assert f"error: {where}" in message
    if kind.endswith("the model"):  # both files named
        assert str(folder / "model.json") in message
    assert _snapshot(folder) == before


@FAST
@given(kind=st.sampled_from(["ERR grade above 4", "wider than the model",
                             "dense and narrower than the model"]),
       line=st.integers(1, len(LINES)), value=st.integers(0, 20), existing=st.booleans(),
       baseline=st.booleans())
@example(kind="ERR grade above 4", line=2, value=0, existing=False,
         baseline=False)  # blamed on train.dat
def test_a_bad_validation_file_is_named_and_nothing_is_written(
        tmp_path_factory, capsys, kind, line, value, existing, baseline):
    """--eval-set: a grade the validation measure cannot take, or a width other than the
    training file's, is refused naming the validation file (and the training file for the
    width), before any model is written (svmmap_learn, svmmap_baseline_learn)."""
    if baseline and kind.startswith("ERR"):  # the baselines choose by MAP
        kind = "wider than the model"
    folder = tmp_path_factory.mktemp("learn")
    lines, _, (_, lineno), says = _case(kind, line, value)
    (folder / "train.dat").write_text("".join(LINES))
    (folder / "test.dat").write_text("".join(lines))
    if existing:
        (folder / "model.json").write_text("{}")
    before = _snapshot(folder)
    if baseline:
        main, prog = baseline_learn.learn_main, "svmmap_baseline_learn"
        argv = ["-v", "0", "--method", "rankboost", "-t", "5"]
    else:
        main, prog = learn_main, "svmmap_learn"
        argv = ["-v", "0", "-c", "1,10", "--select-metric",
                "err@10" if kind.startswith("ERR") else "map"]
    argv += ["--eval-set", str(folder / "test.dat"), str(folder / "train.dat"),
             str(folder / "model.json")]
    if existing:
        argv.insert(0, "--force")
    assert main(argv) == 1
    message = one_error_line(capsys)
    where = f"{folder / 'test.dat'}:{lineno}: " if lineno else f"{folder / 'test.dat'}: "
    assert f"{prog}: error: {where}" in message and says.replace(
        "the model", "") in message
    if kind != "ERR grade above 4":
        assert str(folder / "train.dat") in message
    assert _snapshot(folder) == before


def test_a_sparse_file_may_leave_out_trailing_zero_features(tmp_path, model_dir, capsys):
    """SVMlight files do not list zero features: a test file whose last feature is zero
    everywhere has fewer columns than the model and is scored (the rule: more features than
    the model, or a dense file of another width, is refused; a sparse file may have fewer)."""
    sparse = [" ".join(t for t in x.split() if not t.startswith("4:")) + "\n" for x in LINES]
    sparse[0] = sparse[0].replace(" 3:", " 9:").split(" 9:")[0] + "\n"  # one line shorter
    (tmp_path / "test.dat").write_text("".join(sparse))
    status = classify_main(["-v", "0", str(tmp_path / "test.dat"),
                            str(model_dir / "model.json"), str(tmp_path / "pred.txt")])
    assert status == 0, capsys.readouterr().err
    scores = np.loadtxt(tmp_path / "pred.txt")
    X, _, _ = load_svmlight(tmp_path / "test.dat", n_features=4)
    assert np.allclose(scores, X @ SVMMap.load(model_dir / "model.json").coef_)


@pytest.mark.parametrize("typo, noted", [(100_000, True), (400, False), (4 * 100 + 1, False)])
def test_a_feature_count_far_above_the_features_used_is_noted(tmp_path, capsys, typo, noted):
    """A mistyped index (the issue's 100000000 wrote an 800 MB model) is noted naming the
    file, before training (the note precedes the training report): the feature count at
    least 1000 and more than 100 times the distinct features."""
    lines = list(LINES)
    lines[5] = lines[5].rstrip("\n") + f" {typo}:1\n"
    (tmp_path / "train.dat").write_text("".join(lines))
    assert learn_main([str(tmp_path / "train.dat"), str(tmp_path / "m.json")]) == 0
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if "distinct features" in line]
    assert notes == ([f"svmmap_learn: note: {tmp_path / 'train.dat'}: the highest feature index "
                      f"is {typo} but the lines use only 5 distinct features: the model holds "
                      f"{typo} weights ({8 * typo / 2**20:.0f} MiB); a mistyped index? renumber "
                      "the features consecutively"] if noted else [])
    if noted:  # before training: the training progress and notes come after it
        assert err.startswith(notes[0])


def test_more_features_than_a_weight_vector_holds_are_refused_before_any_allocation(
        tmp_path, capsys):
    """Item 5: the width check comes before any array as long as the feature count (under
    a memory limit, per_query_normalized's arrays made the message 'out of memory: Unable to
    allocate 7.45 GiB' naming no file).  Checked by tracing: nothing near 10^9 bytes."""
    from conftest import traced_peak

    (tmp_path / "train.dat").write_text("".join(LINES[:5]) + "0 qid:1 1000000000:1\n")
    status, peak = traced_peak(lambda: learn_main(["-v", "0", str(tmp_path / "train.dat"),
                                                   str(tmp_path / "m.json")]))
    assert status == 1 and peak < 10**8
    assert one_error_line(capsys) == (
        f"svmmap_learn: error: {tmp_path / 'train.dat'}: X has 1000000000 features (highest "
        "feature index): more than the 134217728 a dense weight vector can reasonably hold; "
        "renumber the features")


@FAST
@given(separator=st.sampled_from([",", ";", "\t", " "]), header=st.booleans(),
       command=st.sampled_from(["svmmap_learn", "svmmap_classify"]))
@example(separator=",", header=True, command="svmmap_learn")  # the train.csv
def test_a_table_is_recognised_and_the_format_expected_is_said(tmp_path_factory, model_dir,
                                                                 capsys, separator, header,
                                                                 command):
    """A CSV or TSV file given as data is named as such with the format expected (before: a
    CSV was read as an index file, 'listed file 'label,qid,f1,...' not found')."""
    folder = tmp_path_factory.mktemp("table")
    rows = [["label", "qid", "f1", "f2"]] if header else []
    rows += [["1", "1", "0.5", "0.25"], ["0", "1", "0.1", "0.75"]]
    (folder / "train.csv").write_text("".join(separator.join(r) + "\n" for r in rows))
    before = _snapshot(folder)
    if command == "svmmap_learn":
        status = learn_main(["-v", "0", str(folder / "train.csv"), str(folder / "m.json")])
    else:
        status = classify_main(["-v", "0", str(folder / "train.csv"),
                                str(model_dir / "model.json"), str(folder / "p.txt")])
    assert status == 1
    message = one_error_line(capsys)
    assert message.startswith(f"{command}: error: {folder / 'train.csv'}:1: this looks like ")
    assert ("CSV" if separator in ",;" else "TSV") in message
    assert "expected lines '<label> qid:<q> <index>:<value> ...'" in message
    assert _snapshot(folder) == before


def test_an_index_file_listing_a_name_with_a_comma_is_still_an_index_file(tmp_path):
    (tmp_path / "a,b.dat").write_text("".join(LINES))
    (tmp_path / "index").write_text("a,b.dat\n")
    X, y, _ = load_svmlight(tmp_path / "index")
    assert X.shape == (len(LINES), 4)


def test_an_mq2008_model_refuses_the_ohsumed_test_file(tmp_path, capsys):
    """The issue's case: a model of 46 features (MQ2008's) scored OHSUMED's 45-feature test
    file without a word ('MAP 0.2822'); LETOR files list every feature, zeros written out."""
    from conftest import data_file

    test = data_file("OHSUMED", "Fold1", "test.txt")
    rng = np.random.default_rng(0)
    SVMMap().fit(rng.random((20, 46)), np.tile([1.0, 0.0], 10)).save(tmp_path / "mq.json")
    assert classify_main([str(test), str(tmp_path / "mq.json"), str(tmp_path / "p.txt")]) == 1
    assert one_error_line(capsys) == (
        f"svmmap_classify: error: {test}: every line lists the features 1..45, zeros written "
        f"out, but {tmp_path / 'mq.json'} has 46 features: a file that lists every feature "
        "must list the same ones (one that leaves out zeros may have fewer)")
    assert not (tmp_path / "p.txt").exists()
