"""TREC run files and qrels -> SVMlight data set -> TREC run, on tiny synthetic files."""

import numpy as np
import pytest

from svmmap import SVMMap, load_svmlight
from svmmap.errors import InputFormatError
from svmmap.experiments import trec

RUN_A = """\
1 Q0 d1 1 3.0 runA
1 Q0 d2 2 2.0 runA
1 Q0 d3 3 1.5 runA
2 Q0 d7 1 0.9 runA
"""
RUN_B = """\
1 Q0 d2 1 10 runB
1 Q0 d4 2 8 runB
2 Q0 d8 1 5 runB
2 Q0 d7 2 4 runB
3 Q0 d9 1 1 runB
"""
QRELS = """\
1 0 d1 1
1 0 d4 2
1 0 d3 0
2 0 d8 1
"""


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, text in (("runA", RUN_A), ("runB", RUN_B), ("qrels", QRELS)):
        paths[name] = tmp_path / name
        paths[name].write_text(text)
    return paths


def test_build_union_missing_value_and_labels(files):
    X, y, qid, docnos, tags = trec.build([files["runA"], files["runB"]], files["qrels"])
    assert tags == ["runA", "runB"]
    assert qid.tolist() == ["1"] * 4 + ["2"] * 2   # query 3 is not in the qrels
    assert docnos == ["d1", "d2", "d3", "d4", "d7", "d8"]
    # a document missing from a run: the run's minimum score for the query minus 1
    assert X[:, 0] == pytest.approx([3.0, 2.0, 1.5, 0.5, 0.9, -0.1])
    assert X[:, 1].tolist() == [7.0, 10.0, 7.0, 8.0, 4.0, 5.0]
    assert y.tolist() == [1, 0, 0, 2, 0, 1]            # unjudged documents are 0


def test_depth_and_drop_run(files):
    X, _, _, docnos, tags = trec.build([files["runA"], files["runB"]], files["qrels"],
                                       depth=1, drop={"runB"})
    assert tags == ["runA"] and X.shape == (2, 1)
    assert docnos == ["d1", "d7"]


def test_cli_round_trip_through_svmlight_and_run_file(files, tmp_path):
    data = tmp_path / "data.txt"
    trec.main(["build", "--runs", str(files["runA"]), str(files["runB"]), "--qrels",
               str(files["qrels"]), "--out", str(data), "--drop-run", "runA"])
    X, y, qid, comments = load_svmlight(data, return_comments=True)
    assert comments == ["d2", "d4", "d8", "d7"]        # runA's documents are gone
    assert X.toarray()[:, 0].tolist() == [10.0, 8.0, 5.0, 4.0]
    assert y.tolist() == [0, 2, 1, 0]
    model = SVMMap(C=1.0).fit(X, y, qid)
    model_path = tmp_path / "model"
    model.save(model_path)
    run_path = tmp_path / "run.txt"
    trec.main(["run", "--data", str(data), "--model", str(model_path), "--out",
               str(run_path), "--tag", "mine"])
    tag, run = trec.read_run(run_path)
    assert tag == "mine" and sorted(run) == ["1", "2"]
    scores = model.decision_function(X)
    assert run["1"] == pytest.approx(dict(zip(comments[:2], scores[:2])))
    lines = run_path.read_text().splitlines()
    assert [line.split()[3] for line in lines] == ["1", "2", "1", "2"]
    ranked = [float(line.split()[4]) for line in lines[:2]]
    assert ranked == sorted(ranked, reverse=True)


def test_write_run_breaks_ties_by_docno_descending(tmp_path):
    path = tmp_path / "run"
    trec.write_run(path, ["q", "q", "q"], ["a", "c", "b"], np.array([1.0, 1.0, 2.0]))
    assert [line.split()[2] for line in path.read_text().splitlines()] == ["b", "c", "a"]


@pytest.mark.parametrize("text, line, reason", [
    ("1 Q0 d1 1 3.0 runA\n1 Q0 d2 2 runA\n", 2, "expected 6 fields"),
    ("\n1 Q0 d1 1 high runA\n", 2, "score 'high' is not a finite number"),
    ("1 Q0 d1 1 nan runA\n", 1, "not a finite number"),
    ("1 Q0 d1 1 3 r\n1 Q0 d1 2 2 r\n", 2, "listed twice"),
])
def test_bad_run_lines_name_file_and_line(tmp_path, text, line, reason):
    path = tmp_path / "bad.run"
    path.write_text(text)
    with pytest.raises(InputFormatError) as err:
        trec.read_run(path)
    assert str(err.value).startswith(f"{path}:{line}: ") and reason in str(err.value)


def test_bad_qrels_line_and_cli_message(files, tmp_path, capsys):
    qrels = tmp_path / "bad.qrels"
    qrels.write_text("1 0 d1 1\n1 0 d2 yes\n")
    with pytest.raises(SystemExit) as exit_info:
        trec.main(["build", "--runs", str(files["runA"]), "--qrels", str(qrels), "--out",
                   str(tmp_path / "out.txt")])
    assert exit_info.value.code == 1
    assert f"{qrels}:2: relevance 'yes' is not a finite number" in capsys.readouterr().err
    assert not (tmp_path / "out.txt").exists()


def test_compressed_runs_read_as_plain(files, tmp_path):
    import bz2
    import gzip

    packed = tmp_path / "runA.gz"
    packed.write_bytes(gzip.compress(RUN_A.encode()))
    other = tmp_path / "runB.bz2"
    other.write_bytes(bz2.compress(RUN_B.encode()))
    plain = trec.build([files["runA"], files["runB"]], files["qrels"])
    read = trec.build([packed, other], files["qrels"])
    for a, b in zip(plain, read):
        assert np.array_equal(np.asarray(a), np.asarray(b))
    assert trec.run_tag(packed) == "runA"


def test_corrupt_compressed_run_is_one_line_naming_the_file(files, tmp_path):
    import gzip

    broken = tmp_path / "broken.gz"
    broken.write_bytes(gzip.compress(RUN_A.encode())[:-12])
    with pytest.raises(InputFormatError, match="broken.gz: cannot decompress"):
        trec.build([broken, files["runB"]], files["qrels"])
    latin = tmp_path / "latin"
    latin.write_bytes("1 Q0 d\xe9 1 1.0 x\n".encode("latin-1"))
    with pytest.raises(InputFormatError, match="latin:1: not UTF-8"):
        trec.read_run(latin)


def test_run_set_builds_every_subset_from_one_reading(files):
    """A RunSet's data set of a subset of its runs equals build() of those runs alone: the
    documents only the left-out runs retrieved are gone, the order is first retrieval over
    the runs kept, and a missing document scores its run's minimum for the query minus 1."""
    runs = trec.RunSet([files["runA"], files["runB"]], files["qrels"])
    assert runs.tags == ["runA", "runB"]
    assert runs.maps[0] == pytest.approx(((1 + 0) / 2 + 0) / 2)   # q1: d1 at 1; q2: d8 missing
    for keep, drop in (([0, 1], set()), ([1], {"runA"}), ([0], {"runB"})):
        subset = runs.data_set(keep)
        alone = trec.build([files["runA"], files["runB"]], files["qrels"], drop=drop)
        for a, b in zip(subset, alone):
            assert np.array_equal(np.asarray(a), np.asarray(b))
    X, y, qid, docnos, _ = runs.data_set([1])
    assert docnos == ["d2", "d4", "d8", "d7"] and qid.tolist() == ["1", "1", "2", "2"]
    assert trec.unretrieved_score(np.array([3.0, 1.5])) == 0.5
    assert trec.unretrieved_score(np.zeros(0)) == 0.0


def test_build_to_an_array_folder_that_the_trials_map(files, tmp_path):
    from svmmap.experiments.datasets import load_arrays, load_pool

    out = tmp_path / "data"
    trec.main(["build", "--runs", str(files["runA"]), str(files["runB"]), "--qrels",
               str(files["qrels"]), "--out", str(out), "--format", "arrays"])
    split, docnos, names = load_arrays(out)
    X, y, qid, built_docnos, tags = trec.build([files["runA"], files["runB"]], files["qrels"])
    assert isinstance(split.X, np.memmap) and np.array_equal(split.X, X)
    assert split.y.tolist() == y.tolist() and split.qid.tolist() == qid.tolist()
    assert docnos == built_docnos and names == tags
    pool, ids = load_pool([out])
    assert ids.tolist() == ["1", "2"] and np.array_equal(pool.X, X)
    (out / "y.npy").write_bytes(b"junk")
    with pytest.raises(InputFormatError, match="not a readable array folder"):
        load_arrays(out)
