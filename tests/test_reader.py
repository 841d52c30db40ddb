"""The extension's SVMlight parser (svmmap._svmlight_reader) against independent readers: the
Python parser of the same rules (svmmap.io._parse_text), Python's float(), and scikit-learn's
load_svmlight_file on real LETOR files."""

import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svmmap import io
from svmmap.errors import InputFormatError

from conftest import data_file


def both_parsers(path, data, n_features=None, with_qid=True, max_abs_value=math.inf):
    """(extension result, Python result): each a _Part or the InputFormatError message."""
    limits = (n_features, max_abs_value)
    results = []
    for parse in (lambda: io._parse(path, memoryview(data), limits, True, with_qid),
                  lambda: io._parse_text(path, data.decode("utf-8"), limits, with_qid)):
        try:
            results.append(parse())
        except InputFormatError as err:
            results.append(str(err))
    return results


def assert_same_part(fast, slow):
    if isinstance(slow, str) or isinstance(fast, str):
        assert fast == slow
        return
    assert np.array_equal(fast.labels, slow.labels)
    assert np.array_equal(fast.indptr, slow.indptr)
    assert np.array_equal(fast.indices, slow.indices)
    assert fast.values.tobytes() == slow.values.tobytes()  # bit for bit
    assert fast.max_index == slow.max_index
    has_qids = fast.qid is not None or fast.qid_texts is not None
    assert has_qids == (slow.qid is not None or slow.qid_texts is not None)
    if has_qids:
        assert fast.qid_text() == slow.qid_text()
    assert (fast.qid is None) == (slow.qid is None)
    if fast.qid is not None:
        assert np.array_equal(fast.qid, slow.qid)
    assert fast.comments == slow.comments


NUMBERS = st.from_regex(
    r"\A[+-]?([0-9]{1,25}(\.[0-9]{0,25})?|\.[0-9]{1,25})([eE][+-]?[0-9]{1,3})?\Z")
ASCII_LINES = st.text(alphabet=list("0123456789.:-+eE qid#NULnaf\t\r\n\x00\x0b\x0c\x1cx"),
                      max_size=200)


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.one_of(ASCII_LINES, st.lists(
    st.tuples(NUMBERS, st.sampled_from(["1", "007", "-3", "+4", "q", "99999999999999999999"]),
              st.lists(st.tuples(st.integers(1, 60), NUMBERS), max_size=6),
              st.sampled_from(["", "#c", " # docid = é "])),
    min_size=1, max_size=8).map(lambda rows: "".join(
        f"{label} qid:{q} " + " ".join(f"{i}:{v}" for i, v in feats) + f"{c}\n"
        for label, q, feats, c in rows))))
def test_extension_and_python_parser_agree(content):
    fast, slow = both_parsers("f.txt", content.encode("utf-8"))
    assert_same_part(fast, slow)
    fast, slow = both_parsers("f.txt", content.encode("utf-8"), n_features=30,
                              max_abs_value=1e3)
    assert_same_part(fast, slow)
    without_qids = re.sub(r"qid:\S*", "", content)  # the lines of data with a group file
    assert_same_part(*both_parsers("f.txt", without_qids.encode("utf-8"), with_qid=False))
    assert_same_part(*both_parsers("f.txt", content.encode("utf-8"), with_qid=False))


@settings(max_examples=200, deadline=None)
@given(numbers=st.lists(NUMBERS | st.sampled_from(
    ["4.9406564584124654e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
     "1e-400", "-1e-400", "1.7976931348623157e308", "1.7976931348623158e308", "1e309",
     "0.1", "9007199254740993", "2.2250738585072011e-308", "-0", "+.5"]), min_size=1,
    max_size=20))
def test_values_are_what_float_gives(numbers):
    text = "".join(f"1 qid:1 1:{v}\n" for v in numbers).encode()
    values = [float(v) for v in numbers]
    fast, _ = both_parsers("f.txt", text)
    if not all(np.isfinite(values)):
        assert isinstance(fast, str) and "is not a finite number" in fast
        return
    dense = np.zeros(len(values))
    dense[np.repeat(np.arange(len(values)), np.diff(fast.indptr))] = fast.values
    assert dense.tobytes() == np.array(values).tobytes() or np.array_equal(dense, values)
    assert all(a == b for a, b in zip(dense.tolist(), values))


def test_non_ascii_whitespace_goes_to_the_python_parser(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("1 qid:1\u00a01:2 # x\u2003\n0 qid:1 2:1\n", encoding="utf-8")
    X, y, qid, comments = io.load_svmlight(path, return_comments=True)
    assert X.toarray().tolist() == [[2, 0], [0, 1]] and comments == ["x", ""]


def test_wide_indices_are_int64_and_exact(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text(f"1 qid:1 3:1 {2**40}:2\n")
    X, _, _ = io.load_svmlight(path)
    assert X.indices.dtype == np.int64 and X.indices.tolist() == [2, 2**40 - 1]


@pytest.mark.parametrize("name", ["MQ2008/Fold1/vali.txt", "OHSUMED/Fold1/vali.txt"])
def test_letor_files_match_scikit_learn_and_the_python_parser(name):
    sklearn_datasets = pytest.importorskip("sklearn.datasets")
    path = data_file(name)
    X, y, qid = io.load_svmlight(path)
    X_ref, y_ref, qid_ref = sklearn_datasets.load_svmlight_file(
        str(path), query_id=True, n_features=X.shape[1])
    assert (X != X_ref).nnz == 0 and np.array_equal(y, y_ref) and np.array_equal(qid, qid_ref)
    data = path.read_bytes()
    assert_same_part(*both_parsers(path, data))
