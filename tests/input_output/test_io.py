"""Tests of svmmap.data.io: the SVMlight / LETOR reader and writer."""

import os

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svmmap.data.io import MAX_INDEX, dump_svmlight, load_svmlight
from svmmap.errors import InputFormatError

from conftest import DATA


def write(tmp_path, text, name="data.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def error_of(path, **kwargs):
    with pytest.raises(InputFormatError) as info:
        load_svmlight(path, **kwargs)
    return str(info.value)


# --- round trip -------------------------------------------------------------------------------


@pytest.mark.parametrize("qid_kind", ["int", "str"])
def test_dump_load_round_trip(tmp_path, qid_kind):
    rng = np.random.default_rng(0)
    m, d = 60, 17
    dense = rng.standard_normal((m, d)) * 10.0 ** rng.integers(-300, 300, (m, d))
    dense[rng.random((m, d)) < 0.7] = 0.0
    dense[5] = 0.0  # a document with no non-zero feature
    X = sp.csr_matrix(dense)
    y = rng.integers(0, 5, m) + rng.choice([0.0, 0.25, 1 / 3], m)
    qid = rng.integers(-5, 10**12, m)
    if qid_kind == "str":
        qid = np.array([f"q{q}" for q in qid])
    comments = [f"docid = {i}" if i % 3 else "" for i in range(m)]
    path = tmp_path / "out.txt"
    dump_svmlight(path, X, y, qid, comments)
    X2, y2, qid2, comments2 = load_svmlight(path, n_features=d, return_comments=True)
    assert X2.shape == (m, d) and X2.dtype == np.float64
    assert np.array_equal(X2.toarray(), dense)  # exact: values round-trip bit for bit
    assert np.array_equal(y2, y) and y2.dtype == np.float64
    assert np.array_equal(qid2, qid)
    assert qid2.dtype == (np.int64 if qid_kind == "int" else qid.dtype)
    assert comments2 == comments
    assert sorted(os.listdir(tmp_path)) == ["out.txt"]  # the temporary file is gone


def test_dump_writes_compact_lines_and_does_not_modify_x(tmp_path):
    X = sp.csr_matrix(np.array([[0.0, 1.0, 0.1], [0.0, 0.0, 0.0]]))
    X.data[0] = 0.0  # an explicitly stored zero
    path = tmp_path / "out.txt"
    dump_svmlight(path, X, [1, -1], [7, 7], ["a b", ""])
    assert path.read_text() == "1 qid:7 3:0.1 # a b\n-1 qid:7\n"
    assert X.nnz == 2


def test_dump_rejects_unwritable_input(tmp_path):
    path = tmp_path / "out.txt"
    with pytest.raises(InputFormatError, match="must be finite"):
        dump_svmlight(path, np.array([[np.nan]]), [1], [1])
    with pytest.raises(InputFormatError, match="qid 'a b' cannot be written"):
        dump_svmlight(path, np.ones((1, 1)), [1], ["a b"])
    with pytest.raises(InputFormatError, match="X has 1 rows but y has shape"):
        dump_svmlight(path, np.ones((1, 1)), [1, 2], [1])
    with pytest.raises(InputFormatError, match="single lines"):
        dump_svmlight(path, np.ones((1, 1)), [1], [1], ["a\nb"])
    assert not path.exists()


# --- accepted variations ----------------------------------------------------------------------


def test_line_endings_tabs_spaces_comments(tmp_path):
    text = (
        "# header comment\r\n"
        "\r\n"
        "2\tqid:3\t1:0.5\t3:-2 \t # docid = 7 \r\n"
        "   \t\r\n"
        "+1 qid:3 2:1e3   \r\n"
        "-1 qid:4#no space before the comment\r\n"
        "0.5 qid:3 1:0 4:.25\r\n"
    )
    X, y, qid, comments = load_svmlight(write(tmp_path, text), return_comments=True)
    assert X.shape == (4, 4)
    assert np.array_equal(
        X.toarray(), [[0.5, 0, -2, 0], [0, 1000, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0.25]]
    )
    assert X.nnz == 4  # the explicit 1:0 is not stored
    assert np.array_equal(y, [2, 1, -1, 0.5])
    assert np.array_equal(qid, [3, 3, 4, 3]) and qid.dtype == np.int64  # not contiguous: fine
    assert comments == ["docid = 7", "", "no space before the comment", ""]


def test_byte_order_mark_is_ignored(tmp_path):
    X, y, qid = load_svmlight(write(tmp_path, b"\xef\xbb\xbf1 qid:1 1:2\n"))
    assert y.tolist() == [1.0] and X.toarray().tolist() == [[2.0]]


def test_string_qids(tmp_path):
    _, _, qid = load_svmlight(write(tmp_path, "1 qid:10 1:1\n0 qid:q-2 1:1\n"))
    assert qid.tolist() == ["10", "q-2"] and qid.dtype.kind == "U"
    _, _, qid = load_svmlight(write(tmp_path, "1 qid:99999999999999999999 1:1\n"))
    assert qid.tolist() == ["99999999999999999999"]  # does not fit int64


def test_n_features(tmp_path):
    path = write(tmp_path, "1 qid:1 2:1 3:0\n")
    assert load_svmlight(path)[0].shape == (1, 3)  # a zero-valued index still counts
    assert load_svmlight(path, n_features=10)[0].shape == (1, 10)
    assert error_of(path, n_features=2) == f"{path}:1: feature index 3 exceeds n_features=2"
    with pytest.raises(InputFormatError, match="n_features must be an integer"):
        load_svmlight(path, n_features=-1)


def test_huge_index_is_sparse(tmp_path):
    X, _, _ = load_svmlight(write(tmp_path, f"1 qid:1 5:1 {2**31}:0.5\n"))
    assert X.shape == (1, 2**31)
    assert X.indices.dtype == np.int64
    assert X.indices.tolist() == [4, 2**31 - 1] and X.data.tolist() == [1.0, 0.5]
    X, _, _ = load_svmlight(write(tmp_path, f"1 qid:1 {MAX_INDEX}:1\n"))
    assert X.shape == (1, MAX_INDEX) and X.indices.tolist() == [MAX_INDEX - 1]


def test_list_of_paths_is_concatenated(tmp_path):
    a = write(tmp_path, "1 qid:1 1:1 # a\n", "a.txt")
    b = write(tmp_path, "0 qid:x 3:2 # b\n", "b.txt")
    X, y, qid, comments = load_svmlight([a, str(b)], return_comments=True)
    assert X.toarray().tolist() == [[1, 0, 0], [0, 0, 2]]
    assert y.tolist() == [1, 0] and qid.tolist() == ["1", "x"] and comments == ["a", "b"]


def test_index_file(tmp_path):
    (tmp_path / "sub").mkdir()
    write(tmp_path, "1 qid:1 1:1\n", "sub/a.txt")
    write(tmp_path, "0 qid:2 2:3\n", "b.txt")
    index = write(tmp_path, f"# training files\nsub/a.txt\n\n  {tmp_path / 'b.txt'}  \n", "idx")
    X, y, qid = load_svmlight(index)
    assert X.toarray().tolist() == [[1, 0], [0, 3]] and y.tolist() == [1, 0]
    assert qid.tolist() == [1, 2]


def test_index_file_errors(tmp_path):
    (tmp_path / "sub").mkdir()
    write(tmp_path, "1 qid:1 1:1\n", "a.txt")
    index = write(tmp_path, "a.txt\nmissing.txt\n", "idx")
    assert error_of(index) == f"{index}:2: listed file 'missing.txt' not found"
    index = write(tmp_path, "a.txt\n# comment\nsub\n", "idx")
    assert error_of(index) == f"{index}:3: listed file 'sub' is a directory"
    bad = write(tmp_path, "1 qid:1 1:1\n1 qid:1 x\n", "bad.txt")
    index = write(tmp_path, "bad.txt\n", "idx")
    assert error_of(index) == f"{bad}:2: malformed feature 'x' (expected <index>:<value>)"


# --- errors -----------------------------------------------------------------------------------

GOOD = "1 qid:1 1:0.5 2:1\n"

LINE_ERRORS = [
    ("qid:1 1:0.5", "missing label"),
    ("1:0.5 2:1", "missing label"),
    ("abc qid:1 1:1", "label 'abc' is not a finite number"),
    ("nan qid:1 1:1", "label 'nan' is not a finite number"),
    ("-inf qid:1 1:1", "label '-inf' is not a finite number"),
    ("1e999 qid:1 1:1", "label '1e999' is not a finite number"),
    ("1_0 qid:1 1:1", "label '1_0' is not a finite number"),
    ("1", "missing qid:<id> after the label"),
    ("1 1:0.5", "missing qid:<id> after the label"),
    ("1 QID:1 1:0.5", "missing qid:<id> after the label"),
    ("1 qid: 1:0.5", "malformed qid 'qid:'"),
    ("1 qid:1:2 1:0.5", "malformed qid 'qid:1:2'"),
    ("1 qid:1 abc", "malformed feature 'abc' (expected <index>:<value>)"),
    ("1 qid:1 1:", "malformed feature '1:' (expected <index>:<value>)"),
    ("1 qid:1 :1", "malformed feature ':1' (expected <index>:<value>)"),
    ("1 qid:1 0:1", "feature index '0' is not a positive integer"),
    ("1 qid:1 -3:1", "feature index '-3' is not a positive integer"),
    ("1 qid:1 1.5:1", "feature index '1.5' is not a positive integer"),
    ("1 qid:1 x:1", "feature index 'x' is not a positive integer"),
    ("1 qid:1 1:1 3:1 3:2", "feature index 3 repeated"),
    ("1 qid:1 1:1 3:1 2:2", "feature index 2 after 3: indices must increase"),
    ("1 qid:1 1:1 11:NULL", "feature 11: value 'NULL' is not a finite number"),
    ("1 qid:1 2:nan", "feature 2: value 'nan' is not a finite number"),
    ("1 qid:1 2:inf", "feature 2: value 'inf' is not a finite number"),
    ("1 qid:1 2:-Infinity", "feature 2: value '-Infinity' is not a finite number"),
    ("1 qid:1 2:1e999", "feature 2: value '1e999' is not a finite number"),
    ("1 qid:1 2:0x10", "feature 2: value '0x10' is not a finite number"),
    ("1 qid:1 2:1:2", "feature 2: value '1:2' is not a finite number"),
    (f"1 qid:1 {2**53}:1", f"feature index {2**53} is too large (max {MAX_INDEX})"),
    ("1 qid:1 " + "1" * 30 + ":1", f"feature index {'1' * 30} is too large (max {MAX_INDEX})"),
]


@pytest.mark.parametrize("line, reason", LINE_ERRORS)
def test_line_errors_name_file_and_line(tmp_path, line, reason):
    path = write(tmp_path, "# comment\n" + GOOD + "\n" + line + " # docid = 3\r\n" + GOOD)
    assert error_of(path) == f"{path}:4: {reason}"


def test_first_error_in_file_order_is_reported(tmp_path):
    # line 2's problems are only found by the vectorised pass, line 3's by the per-line one
    for second in ["1 qid:1 2:1 1:1", "1 qid:1 2:1e999", "1 qid:1 3:1"]:
        path = write(tmp_path, GOOD + second + "\n1 qid:1 x:1\n")
        assert error_of(path, n_features=2).startswith(f"{path}:2: ")


def test_file_level_errors(tmp_path):
    assert error_of(write(tmp_path, b"")) == f"{tmp_path / 'data.txt'}: empty file"
    path = write(tmp_path, "# only\n\n  # comments\n")
    assert error_of(path) == f"{path}: no data lines"
    path = write(tmp_path, GOOD.encode() + b"2 qid:1 1:\xff\n")
    assert error_of(path) == f"{path}:2: not valid UTF-8 (byte 0xff)"
    assert error_of(tmp_path / "nope.txt") == f"{tmp_path / 'nope.txt'}: file not found"
    assert error_of(tmp_path) == f"{tmp_path}: is a directory"
    assert error_of([]) == "no input files"


# --- real data --------------------------------------------------------------------------------


def real(relative):
    path = DATA / relative
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return path


def test_ohsumed_fold1_train():
    path = real("OHSUMED/Fold1/train.txt")
    X, y, qid, comments = load_svmlight(path, return_comments=True)
    assert X.shape == (9219, 45) and len(y) == len(qid) == len(comments) == 9219
    assert qid.dtype == np.int64 and len(np.unique(qid)) == 63
    assert np.bincount(y.astype(int)).tolist() == [6052, 1765, 1402]
    # line 1: "0 qid:1 1:1.000000 2:1.000000 3:0.833333 ... 5:0 ... 45:0.971425 #docid = 244338"
    assert (y[0], qid[0], comments[0]) == (0.0, 1, "docid = 244338")
    assert X[0, 2] == 0.833333 and X[0, 44] == 0.971425 and X[0, 4] == 0.0
    assert (y[1], X[1, 0]) == (2.0, 0.6)  # line 2: "2 qid:1 1:0.600000 ..."
    # last line: "2 qid:63 1:0.000000 ... 45:0.000000 #docid = 9897", every feature zero
    assert (y[-1], qid[-1], comments[-1], X[-1].nnz) == (2.0, 63, "docid = 9897", 0)


def test_svmmap_sample():
    X, y, qid = load_svmlight(real("svmmap_sample/sample.data"))
    assert X.shape == (917, 750)
    assert set(y.tolist()) == {-1.0, 1.0} and int((y > 0).sum()) == 10
    assert set(qid.tolist()) == {451}
    assert y[1] == 1 and X[1, 745] == 1 and X[1, 746] == 0  # line 2 ends "745:1 746:1"...


def test_feature_null_excerpt_names_first_null_line():
    path = real("OHSUMED/feature-null-excerpt.txt")
    assert error_of(path) == f"{path}:2: feature 11: value 'NULL' is not a finite number"


# --- fuzzing ----------------------------------------------------------------------------------

LETORISH = st.text(alphabet=list("0123456789.:-+eE qid#NULnaf\t\r\n\x00é"), max_size=200)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(content=st.one_of(st.text(max_size=200), LETORISH, st.binary(max_size=200)))
def test_fuzz_reader_returns_consistent_arrays_or_input_format_error(tmp_path, content):
    folder = tmp_path / "fuzz"
    folder.mkdir(exist_ok=True)
    path = write(folder, content, "fuzz-input")
    try:
        X, y, qid, comments = load_svmlight(path, return_comments=True)
    except InputFormatError as err:
        assert "\n" not in str(err)  # one line, as the command-line tools print it
        return
    assert sp.issparse(X) and X.dtype == np.float64 and y.dtype == np.float64
    assert X.shape[0] == len(y) == len(qid) == len(comments) > 0
    assert np.all(np.isfinite(X.data)) and np.all(X.data != 0) and np.all(np.isfinite(y))
