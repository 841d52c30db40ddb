"""Issue 22, class 2: inputs that gave a wrong result without a word -- queries of grouped
files merged through an index file, a C "chosen" on validation data that cannot tell the C
values apart, options that were silently ignored, a names file whose blank line shifted every
name, query ids compared as text where the reader made numbers of them, a C path training a C
twice, ``-`` taken for a file name.  Generated (hypothesis) where the input has a shape to
generate."""

import gzip
import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from svmmap import InputFormatError, SVMMap, load_svmlight
from svmmap.commands.classify import classify_main
from svmmap.commands.learn import learn_main
from svmmap.core.rules import check_c_path
from svmmap.data.io import load_query_weights
from svmmap.export import read_feature_names
from svmmap.model_selection import SVMMapCV

from conftest import FAST, query_lines


def _error(capsys):
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if ": error: " in line]
    assert len(lines) == 1, err
    return lines[0]


# -- an index file listing grouped files ---------------------------------------------------------

@FAST
@given(parts=st.lists(st.lists(st.integers(1, 4), min_size=1, max_size=4), min_size=1,
                      max_size=4),
       compressed=st.booleans())
def test_index_of_grouped_files_keeps_every_files_queries_apart(tmp_path_factory, parts,
                                                                compressed):
    """Each listed file's .query sizes make its own queries: N group lines over all files give
    N queries, numbered 1..N in file order (they were merged: the second file's query 1 was
    the first file's)."""
    folder = tmp_path_factory.mktemp("grouped")
    names = []
    for k, sizes in enumerate(parts):
        name = f"part{k}.txt"
        (folder / name).write_text("".join(f"{(i + q) % 2} 1:{i + 1} 2:{k}\n"
                                           for q, size in enumerate(sizes)
                                           for i in range(size)))
        (folder / f"{name}.query").write_text("".join(f"{size}\n" for size in sizes))
        names.append(name)
    text = "".join(f"{name}\n" for name in names).encode()
    index = folder / ("index.gz" if compressed else "index.txt")
    index.write_bytes(gzip.compress(text) if compressed else text)
    _, _, qid = load_svmlight(index)
    sizes = [size for sizes in parts for size in sizes]
    assert qid.tolist() == np.repeat(np.arange(1, len(sizes) + 1), sizes).tolist()


def test_files_with_qid_and_grouped_files_are_not_read_together(tmp_path):
    (tmp_path / "a.txt").write_text("1 qid:1 1:1\n0 qid:1 1:2\n")
    (tmp_path / "b.txt").write_text("1 1:1\n0 1:2\n")
    (tmp_path / "b.txt.query").write_text("2\n")
    (tmp_path / "index.txt").write_text("a.txt\nb.txt\n")
    with pytest.raises(InputFormatError, match="a.txt: the lines carry qid: but other files"):
        load_svmlight(tmp_path / "index.txt")


def test_the_issues_index_of_two_grouped_parts(tmp_path, capsys):
    for name in ("a", "b"):
        (tmp_path / f"{name}.txt").write_text(
            "".join(query_lines(q, qid=False) for q in range(3)))
        (tmp_path / f"{name}.txt.query").write_text("8\n8\n8\n")
    (tmp_path / "index.txt").write_text("a.txt\nb.txt\n")
    assert learn_main([str(tmp_path / "index.txt"), str(tmp_path / "m.json")]) == 0
    assert "Read 48 documents, 6 queries" in capsys.readouterr().out


# -- validation data that cannot choose C ----------------------------------------------------

#: a validation query on which every ranking scores the same: one label for all documents
_flat_query = st.tuples(st.integers(1, 6), st.sampled_from([0.0, 0.0, -1.0, 1.0, 2.0]))


@FAST
@given(queries=st.lists(_flat_query, min_size=1, max_size=5),
       metric=st.sampled_from(["map", "mrr", "roc", "p@3", "ndcg", "ndcg@5"]))
def test_validation_without_an_informative_query_is_refused(queries, metric):
    """Every C scores the same on such data (0 without a relevant document): refused, not a
    silent choice of the smallest C; one query with two labels (one relevant) is enough."""
    rng = np.random.default_rng(0)
    X, y, qid = rng.random((48, 4)), np.tile([1.0, 0, 0, 0], 12), np.repeat(np.arange(6), 8)
    y_vali = np.concatenate([[label] * n for n, label in queries])
    q_vali = np.repeat(np.arange(len(queries)), [n for n, _ in queries])
    X_vali = rng.random((len(y_vali), 4))
    model = SVMMapCV(Cs=[1, 10], select_metric=metric)
    with pytest.raises(InputFormatError, match=r"none of the .* validation queries \(eval_set\)"):
        model.fit(X, y, qid, eval_set=(X_vali, y_vali, q_vali))
    informative = (np.append(X_vali, [[0.1] * 4, [0.9] * 4], axis=0),
                   np.append(y_vali, [1.0, 0.0]), np.append(q_vali, [99, 99]))
    assert model.fit(X, y, qid, eval_set=informative).C_ in (1.0, 10.0)


def test_held_out_queries_without_an_informative_one_are_refused():
    """The same rule for the queries SVMMapCV holds out when it has no eval_set."""
    from svmmap.core.selection import holdout_split

    rng = np.random.default_rng(1)
    qid = np.repeat(np.arange(10), 6)
    held = holdout_split(qid, 0.2, random_state=0)
    y = np.where(held, 0.0, np.tile([1.0, 0, 0], 20))
    with pytest.raises(InputFormatError, match=r"validation queries \(holdout 0.2 of the "):
        SVMMapCV(Cs=[1, 10], holdout=0.2, random_state=0).fit(rng.random((60, 3)), y, qid)


def test_the_issues_vali_file_of_zeros_is_refused(good, tmp_path, capsys):
    vali = tmp_path / "vali.dat"
    vali.write_text(good.read_text().replace("1 qid", "0 qid"))
    model = tmp_path / "m.json"
    assert learn_main(["-c", "0.1,1,10", "--vali", str(vali), str(good), str(model)]) == 1
    assert _error(capsys).startswith(f"svmmap_learn: error: {vali}: none of the 6 validation "
                                     "queries has both a relevant")
    assert not model.exists()


# -- options that were ignored ---------------------------------------------------------------

@pytest.mark.parametrize("option", [["--select-metric", "mrr"], ["--select-tol", "0"]])
def test_selection_options_without_validation_are_refused(good, tmp_path, capsys, option):
    with pytest.raises(SystemExit) as info:
        learn_main([*option, str(good), str(tmp_path / "m.json")])
    assert info.value.code == 2
    assert "give -c C1,C2,... with --eval-set FILE or --holdout FRACTION" in _error(capsys)


def test_select_metric_with_validation_is_used(good, tmp_path, capsys):
    assert learn_main(["--select-metric", "mrr", "--vali", str(good), str(good),
                       str(tmp_path / "m.json")]) == 0
    assert "Model selection by mrr on" in capsys.readouterr().out


def test_cache_size_zero_with_w4_is_refused(good, tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        learn_main(["-w", "4", "--cache-size", "0", str(good), str(tmp_path / "m.json")])
    assert info.value.code == 2
    assert "argument --cache-size: must be at least 1" in _error(capsys)
    assert learn_main(["-v", "0", "-w", "4", "--cache-size", "1", str(good),
                       str(tmp_path / "m.json")]) == 0


# -- one rule for a C path -----------------------------------------------------------------

_c_values = st.lists(st.sampled_from([1e-3, 0.1, 1.0, 10.0, 100.0, 1e5]), min_size=2,
                     max_size=6)


@FAST
@given(Cs=_c_values)
def test_a_c_path_is_refused_by_the_api_exactly_when_the_command_refuses_it(Cs, capsys):
    """SVMMapCV(Cs) and ``svmmap_learn -c ...`` apply check_c_path: a C listed twice is refused
    by both with the same words (SVMMapCV trained it twice)."""
    repeated = len(set(Cs)) != len(Cs)
    try:
        SVMMapCV(Cs=Cs).check_params()
        api = None
    except ValueError as exc:
        api = str(exc)
    with pytest.raises(SystemExit) as info:  # no files: the usage check comes first
        learn_main(["-c", ",".join(repr(c) for c in Cs), "--vali", "v", "--max-iter", "0",
                    "t", "m"])
    err = capsys.readouterr().err
    assert (api is not None) == repeated
    if repeated:
        assert info.value.code == 2 and f"argument -c/--C: {api}" in err
    else:
        assert "argument -c/--C" not in err
    assert check_c_path(list(reversed(Cs)) if not repeated else [1.0]) == \
        (sorted(Cs) if not repeated else [1.0])


def test_the_issues_path_1_10_1_is_refused_by_the_api(good):
    with pytest.raises(ValueError, match="C = 1 is listed twice"):
        SVMMapCV(Cs=[1, 10, 1]).fit(*load_svmlight(good))


# -- a names file with a blank line ----------------------------------------------------------

@FAST
@given(n=st.integers(2, 8), blank=st.integers(0, 7), trailing=st.integers(0, 3))
def test_a_blank_line_in_a_names_file_is_refused_with_its_line(tmp_path_factory, n, blank,
                                                               trailing):
    """Line k names feature k: a blank line is refused where it is (skipping it exported w_2
    as the third name); blank lines after the last name are nothing."""
    path = tmp_path_factory.mktemp("names") / "names.txt"
    names = [f"f{k}" for k in range(1, n + 1)]
    path.write_text("\n".join(names) + "\n" * (1 + trailing))
    assert read_feature_names(path) == names
    if blank < n - 1:
        lines = names[:blank + 1] + [""] + names[blank + 1:]
        path.write_text("\n".join(lines) + "\n")
        with pytest.raises(InputFormatError, match=rf"names.txt:{blank + 2}: blank line"):
            read_feature_names(path)


# -- query ids as the reader makes them ------------------------------------------------------

@FAST
@given(ids=st.lists(st.integers(0, 999), min_size=1, max_size=5, unique=True),
       data_width=st.integers(1, 5), file_width=st.integers(1, 5),
       weights=st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=5, max_size=5))
def test_weights_file_ids_compare_as_the_readers_numbers(tmp_path_factory, ids, data_width,
                                                          file_width, weights):
    """``qid:001`` is query 1 to the reader, so a weights file's ``001``, ``1`` or ``0001`` is
    the same query (decision: integer ids compare as numbers)."""
    folder = tmp_path_factory.mktemp("weights")
    data, listed = folder / "data.txt", folder / "weights.txt"
    data.write_text("".join(f"{i % 2} qid:{q:0{data_width}d} 1:{i}\n"
                            for q in ids for i in range(2)))
    listed.write_text("".join(f"{q:0{file_width}d} {w}\n" for q, w in zip(ids, weights)))
    _, _, qid = load_svmlight(data)
    assert load_query_weights(listed, qid) == dict(zip(ids, weights))
    listed.write_text(listed.read_text() + f"{ids[0]:0{file_width + 1}d} 1\n")
    with pytest.raises(InputFormatError, match="listed twice"):
        load_query_weights(listed, qid)


def test_string_ids_still_compare_as_text(tmp_path):
    (tmp_path / "w.txt").write_text("a1 1\n001 2\n")
    qid = np.array(["a1", "001"])
    assert load_query_weights(tmp_path / "w.txt", qid) == {"a1": 1.0, "001": 2.0}


def test_the_issues_zero_padded_qids_train_with_their_weights(good, tmp_path):
    data = tmp_path / "q00.dat"
    data.write_text(good.read_text().replace("qid:", "qid:00"))
    (tmp_path / "w.txt").write_text("".join(f"00{q} 1\n" for q in range(1, 7)))
    assert learn_main(["-v", "0", "--query-weights", str(tmp_path / "w.txt"), str(data),
                       str(tmp_path / "m.json")]) == 0


# -- "-" is standard output ------------------------------------------------------------------

def test_classify_dash_writes_predictions_to_standard_output(good, tmp_path, capsys,
                                                             monkeypatch):
    model = tmp_path / "m.json"
    assert learn_main(["-v", "0", str(good), str(model)]) == 0
    monkeypatch.chdir(tmp_path)
    assert classify_main([str(good), str(model), "-"]) == 0
    captured = capsys.readouterr()
    X, _, _ = load_svmlight(good)
    expected = SVMMap.load(model).decision_function(X)
    assert [float(s) for s in captured.out.splitlines()] == expected.tolist()
    assert "MAP: " in captured.err  # the metrics go to stderr, out of the predictions' way
    assert not os.path.exists(tmp_path / "-")
