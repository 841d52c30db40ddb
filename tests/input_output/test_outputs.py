"""No command destroys a file it reads or a file it does not write (issue 22, class 1).

Every file a command reads -- the data, an index file (compressed or not) and every file it
lists, the group files beside them or given by --group, vali, eval-set and query-weights
files, the model -- is refused as its output, through links too.  An existing output that is
not of the kind the command writes (an svmmap model for svmmap_learn, a baseline model for
svmmap_baseline_learn, a predictions file for svmmap_classify) is refused unless --force."""

import bz2
import gzip
import lzma
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svmmap import SVMMap, load_svmlight
from svmmap.baselines import PRank
from svmmap.commands import baseline_learn as baseline_cli
from svmmap.commands.classify import PREDICTIONS, classify_main
from svmmap.commands.learn import learn_main

from conftest import ROOT, one_error_line

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
WITH_QID = "1 qid:{q} 1:0.5 2:1\n0 qid:{q} 1:0.2\n0 qid:{q} 1:0.9 2:0.1\n"
WITHOUT_QID = "1 1:0.5 2:1\n0 1:0.2\n0 1:0.9 2:0.1\n"
COMPRESS = {"none": lambda b: b, "gzip": gzip.compress, "bzip2": bz2.compress,
            "xz": lzma.compress}


def _write(path, text, compression="none"):
    path.write_bytes(COMPRESS[compression](text.encode()))
    return path


@st.composite
def layouts(draw):
    """A command's inputs: the training (or test) data given directly or through an index
    file (compressed or not) listing 1-3 parts, all with qid: or all with a group file beside
    each (the reader refuses the two kinds together), each compressed or not, in the index
    file's folder or a subfolder, listed by a relative or an absolute path; an optional vali
    file (direct or through an index) and an optional query-weights file."""
    n_parts = draw(st.integers(1, 3))
    with_qid = draw(st.booleans())
    parts = [(with_qid, draw(st.sampled_from(sorted(COMPRESS))),
              draw(st.sampled_from(["", "sub/"])), draw(st.booleans()))
             for _ in range(n_parts)]
    indexed = n_parts > 1 or draw(st.booleans())
    return {"parts": parts, "indexed": indexed,
            "index_compression": draw(st.sampled_from(sorted(COMPRESS))),
            "vali": draw(st.sampled_from([None, "direct", "indexed"])),
            "weights": draw(st.booleans()),
            "command": draw(st.sampled_from(["learn", "baseline-learn", "classify"])),
            "link": draw(st.sampled_from(["same", "symlink", "hardlink"]))}


def _make_inputs(d, layout):
    """Write the layout's files into ``d``; return (argv with OUT for the output, the files
    read)."""
    read, parts, listing = [], [], "# the parts\n"
    (d / "sub").mkdir()
    for k, (with_qid, compression, folder, absolute) in enumerate(layout["parts"]):
        part = d / f"{folder}part{k}.txt"
        listing += f"{part if absolute else f'{folder}{part.name}'}\n\n"
        if with_qid:
            _write(part, WITH_QID.format(q=k + 1) + WITH_QID.format(q=k + 10), compression)
        else:
            _write(part, WITHOUT_QID * 2, compression)
            read.append(_write(d / f"{folder}part{k}.txt.query", "3\n3\n"))
        read.append(part)
        parts.append(part)
    if layout["indexed"]:
        data = _write(d / "index", listing, layout["index_compression"])
        read.append(data)
    else:
        data = parts[0]
    options = []
    if layout["vali"] is not None and layout["command"] != "classify":
        vali = _write(d / "vali.txt", WITH_QID.format(q=7) + WITH_QID.format(q=8))
        read.append(vali)
        if layout["vali"] == "indexed":
            vali = _write(d / "vali.index", "vali.txt\n")
            read.append(vali)
    if layout["command"] == "learn":
        if layout["vali"] is not None:
            options += ["-c", "1,10", "--vali", str(vali)]
        if layout["weights"] and layout["vali"] is None:
            weights = d / "weights.txt"
            X, y, qid = load_svmlight(data)
            weights.write_text("".join(f"{q} 1\n" for q in sorted(set(qid.tolist()))))
            read.append(weights)
            options += ["--query-weights", str(weights)]
        return ["-v", "0", *options, str(data), "OUT"], read
    if layout["command"] == "baseline-learn":
        if layout["vali"] is not None:
            options += ["--eval-set", str(vali)]
        return ["--method", "rankboost", "-t", "3", "-v", "0", *options, str(data),
                "OUT"], read
    model = d / "model.json"
    SVMMap().fit(*load_svmlight(data)).save(model)
    read.append(model)
    return ["-v", "0", str(data), str(model), "OUT"], read


MAINS = {"learn": learn_main, "baseline-learn": baseline_cli.learn_main,
         "classify": classify_main}


@SETTINGS
@given(layout=layouts(), data=st.data())
def test_no_file_a_command_reads_is_its_output(tmp_path_factory, capsys, layout, data):
    """The issue's cases among them: a gzip index file listing the data given as the model
    path, the group file beside the data, the vali file, the weights file."""
    d = tmp_path_factory.mktemp("inputs")
    argv, read = _make_inputs(d, layout)
    victim = data.draw(st.sampled_from(read))
    out = d / "alias"
    if layout["link"] == "same":
        out = victim
    elif layout["link"] == "symlink":
        out.symlink_to(victim)
    else:
        os.link(victim, out)
    before = {path: path.read_bytes() for path in read}
    for force in ([], ["--force"]):  # --force never makes an input writable
        status = MAINS[layout["command"]](
            [*force, *[str(out) if a == "OUT" else a for a in argv]])
        assert status == 1
        line = one_error_line(capsys)
        assert "refusing to overwrite" in line and str(out) in line, line
    assert {path: path.read_bytes() for path in read} == before


@pytest.fixture
def files(tmp_path):
    train = _write(tmp_path / "train.txt", WITH_QID.format(q=1) + WITH_QID.format(q=2))
    X, y, qid = load_svmlight(train)
    SVMMap().fit(X, y, qid).save(tmp_path / "svmmap.json")
    PRank().fit(X, y, qid).save(tmp_path / "prank.json")
    _write(tmp_path / "other.txt.gz", WITH_QID.format(q=5) * 2, "gzip")
    (tmp_path / "lightgbm.txt").write_text("tree\nversion=v4\nnum_class=1\n")
    (tmp_path / "predictions.txt").write_text("0.5\n-1.25\n3.0\n1e-05\n")
    (tmp_path / "group.txt").write_text("3\n3\n")
    (tmp_path / "empty").write_text("")
    return tmp_path


#: command -> (argv before the output, the existing outputs it replaces, those it refuses)
CASES = {
    "learn": (lambda d: [learn_main, "-v", "0", d / "train.txt"],
              ["svmmap.json", "empty"],
              ["other.txt.gz", "lightgbm.txt", "prank.json", "predictions.txt"]),
    "baseline-learn": (lambda d: [baseline_cli.learn_main, "--method", "prank", "-v", "0",
                                  d / "train.txt"],
                       ["prank.json", "empty"],
                       ["other.txt.gz", "lightgbm.txt", "svmmap.json"]),
    "classify": (lambda d: [classify_main, "-v", "0", d / "train.txt", d / "svmmap.json"],
                 ["predictions.txt", "empty"],
                 ["other.txt.gz", "lightgbm.txt", "prank.json", "group.txt"]),
}


@pytest.mark.parametrize("command", sorted(CASES))
def test_an_existing_output_of_another_kind_is_refused_unless_forced(files, capsys, command):
    """`svmmap_learn test.txt.gz train.txt.gz`, `svmmap_classify test model train2.txt.gz`
    and an existing LightGBM model as output replaced the file, exit 0."""
    prefix, replaced, refused = CASES[command]
    main, *argv = prefix(files)
    for name in refused:
        before = (files / name).read_bytes()
        assert main([*map(str, argv), str(files / name)]) == 1
        line = one_error_line(capsys)
        assert line.split(": error: ")[1].startswith(f"{files / name}: exists and is not ")
        assert "--force" in line
        assert (files / name).read_bytes() == before
    for name in refused[:2] + replaced:
        force = ["--force"] if name in refused else []
        assert main([*force, *map(str, argv), str(files / name)]) == 0, capsys.readouterr()
        if command == "classify":
            assert PREDICTIONS.recognises(files / name)
        else:
            assert (files / name).read_bytes().startswith(b"{")


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=30))
def test_what_classify_writes_is_recognised_as_predictions(tmp_path_factory, scores):
    """Every file svmmap_classify writes (Python's float repr, one per line) is a predictions
    file: a second run over the same path is never refused."""
    path = tmp_path_factory.mktemp("p") / "predictions"
    path.write_text("".join(f"{s!r}\n" for s in scores))
    assert PREDICTIONS.recognises(path)


@pytest.mark.parametrize("text", [
    "3\n3\n", "1 qid:1 1:0.5\n", "0.5\n0.25 0.5\n", "0.5\n\n0.25\n", "0.5\nabc\n",
    "1e5 2\n", "\xe9\n", "1\n2\n0.5 # comment\n", "0.5\n" * 1000 + "x\n",
    "0.5\n" * 1000 + "1 qid:1 1:0.5\n" + "\0" * 3_000_000])
def test_what_is_not_a_predictions_file(tmp_path, text):
    path = tmp_path / "p"
    path.write_text(text)
    assert not PREDICTIONS.recognises(path)


def _exit_status(main, argv):
    try:
        return main(argv)
    except SystemExit as exc:  # trec.main exits through argparse
        return exc.code


@pytest.mark.parametrize("command", ["trec-build", "trec-run", "export-ltr",
                                     "export-ranklib"])
def test_the_drivers_refuse_an_existing_output_of_another_kind(files, capsys, command):
    """The experiment drivers and the export: the same rule, the same --force."""
    from svmmap import export
    from svmmap.experiments import trec

    (files / "qrels").write_text("1 0 d1 1\n1 0 d2 0\n")
    (files / "run1").write_text("1 Q0 d1 1 2.0 r1\n1 Q0 d2 2 1.0 r1\n")
    data = files / "docs.txt"
    data.write_text("1 qid:1 1:2 # d1\n0 qid:1 1:1 # d2\n")
    SVMMap().fit(*load_svmlight(data)).save(files / "m1.json")
    main, argv = {
        "trec-build": (trec.main, ["build", "--runs", files / "run1", "--qrels",
                                   files / "qrels", "--out"]),
        "trec-run": (trec.main, ["run", "--data", data, "--model", files / "m1.json",
                                 "--out"]),
        "export-ltr": (export.main, ["--format", "ltr", files / "m1.json"]),
        "export-ranklib": (export.main, ["--format", "ranklib", files / "m1.json"]),
    }[command]
    argv = [str(a) for a in argv]
    for name in ("lightgbm.txt", "other.txt.gz", "svmmap.json"):
        before = (files / name).read_bytes()
        assert _exit_status(main, [*argv, str(files / name)]) == 1
        assert "exists and is not" in one_error_line(capsys)
        assert (files / name).read_bytes() == before
    out = files / "written"
    assert _exit_status(main, [*argv, str(out)]) in (0, None)
    assert _exit_status(main, [*argv, str(out)]) in (0, None)  # its own kind: replaced
    assert _exit_status(main, ["--force", *argv, str(files / "lightgbm.txt")]
                        if main is export.main else
                        [argv[0], "--force", *argv[1:], str(files / "lightgbm.txt")]) in (0, None)
    capsys.readouterr()


def test_readme_error_table_rows_of_an_output_of_another_kind(files, capsys, monkeypatch):
    """The rows the manual's error table (docs/pages/errors.md) gives for these refusals are
    what the commands print."""
    readme = (ROOT / "docs" / "pages" / "errors.md").read_text()
    monkeypatch.chdir(files)
    _write(files / "test.txt", WITH_QID.format(q=3) * 2)
    assert learn_main(["-v", "0", "train.txt", "test.txt"]) == 1
    message = one_error_line(capsys).removeprefix("svmmap_learn: error: ")
    assert f"| `{message}` |" in readme
    assert classify_main(["-v", "0", "train.txt", "svmmap.json", "test.txt"]) == 1
    message = one_error_line(capsys).removeprefix("svmmap_classify: error: ")
    assert message == "test.txt: exists and is not a predictions file (every line one number, " \
        "not all integers): refusing to replace it (check the order of the arguments, or give " \
        "--force)"
    assert "`... is not a predictions file (every line one number, not all integers) ...`" \
        in readme


@pytest.mark.parametrize("command", ["svmmap_learn", "svmmap_baseline_learn",
                                     "svmmap_classify"])
@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_an_index_file_on_standard_input_cannot_name_the_output(files, command, compression):
    """An index file read from a pipe is not looked into before the command reads it (that
    would consume it): the files it lists are checked once it is read, before any training
    or writing (--force: the data is not an output of the command's kind either)."""
    import shutil
    import subprocess

    victim = files / "train.txt"
    before = victim.read_bytes()
    listing = COMPRESS[compression](f"{victim}\n".encode())
    argv = {"svmmap_learn": ["-"], "svmmap_baseline_learn": ["--method", "prank", "-"],
            "svmmap_classify": ["-", str(files / "svmmap.json")]}[command]
    done = subprocess.run([shutil.which(command), "-v", "0", "--force", *argv, str(victim)],
                          input=listing, capture_output=True, timeout=120)
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert f"{victim}: is the input file " in err and "refusing to overwrite" in err
    assert victim.read_bytes() == before
