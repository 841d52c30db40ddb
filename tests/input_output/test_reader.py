"""The extension's SVMlight parser (svmmap.kernels._svmlight_reader) against independent readers:
the
Python parser of the same rules (svmmap.data.io._parse_text), Python's float(), and scikit-learn's
load_svmlight_file on real LETOR files."""

import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svmmap import _svmlight_reader as _reader
from svmmap.data import io
from svmmap.errors import InputFormatError

from conftest import data_file, traced_peak


def both_parsers(path, data, n_features=None, with_qid=True, max_abs_value=math.inf):
    """(extension result, Python result): each a _Part or the InputFormatError message."""
    limits = io._Limits(n_features, max_abs_value)
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
    (indptr, indices, values), (slow_indptr, slow_indices, slow_values) = fast.csr(), slow.csr()
    assert np.array_equal(indptr, slow_indptr)
    assert np.array_equal(indices, slow_indices)
    assert values.tobytes() == slow_values.tobytes()  # bit for bit
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


def _same_parse(a, b):
    """The same parse_svmlight result: the same first rejected line, or else the same arrays
    (qid_int and qids_canonical are defined only while every qid is an integer: the parser
    stops converting at the first that is not)."""
    assert a.keys() == b.keys()
    errors = ("error_line", "error_start", "error_end")
    assert [a[key] for key in errors] == [b[key] for key in errors]
    if a["error_line"]:  # the rest is what was read before it: not part of the result
        return
    for key in a:
        if key in ("qid_int", "qids_canonical") and not a["qids_are_int"]:
            continue
        if isinstance(a[key], np.ndarray):
            assert a[key].dtype == b[key].dtype and a[key].tobytes() == b[key].tobytes(), key
        else:
            assert a[key] == b[key], key


ROWS = st.lists(
    st.tuples(NUMBERS, st.sampled_from(["1", "007", "q", "99999999999999999999"]),
              st.lists(st.tuples(st.integers(1, 3_000_000_000), NUMBERS), max_size=4),
              st.sampled_from(["", "#c", " # docid = x "]),
              st.sampled_from(["\n", "\r\n", "\r", "\n\n", "\n# only a comment\n"])),
    min_size=1, max_size=30).map(lambda rows: "".join(
        f"{label} qid:{q} " + " ".join(f"{i}:{v}" for i, v in sorted(dict(feats).items()))
        + f"{c}{end}" for label, q, feats, c, end in rows))


@settings(max_examples=150, deadline=None)
@given(content=st.one_of(ASCII_LINES, ROWS), n_threads=st.integers(2, 6),
       min_chunk_bytes=st.sampled_from([1, 5, 40]), limit=st.sampled_from([2**40, 50]),
       with_qid=st.booleans())
def test_parsing_in_chunks_gives_what_one_pass_gives(content, n_threads, min_chunk_bytes,
                                                     limit, with_qid):
    """Chunks cut at line ends and parsed in parallel, merged: the same arrays, the same
    first rejected line (number and bytes), the same retry with int64 indices (indices up to
    3e9 here) -- whatever the line ends, comments and errors."""
    data = content.encode()
    one = _reader.parse_svmlight(data, limit, 1e3, with_qid)
    chunked = _reader.parse_svmlight(data, limit, 1e3, with_qid, False, n_threads,
                                     min_chunk_bytes)
    _same_parse(one, chunked)


def test_load_svmlight_in_threads_reads_the_same_letor_file():
    path = data_file("MQ2008", "Fold1", "train.txt")
    one = io.load_svmlight(path, return_comments=True)
    two = io.load_svmlight(path, return_comments=True, n_threads=2)
    assert (one[0] != two[0]).nnz == 0 and one[0].indices.tobytes() == two[0].indices.tobytes()
    assert np.array_equal(one[1], two[1]) and np.array_equal(one[2], two[2])
    assert one[3] == two[3]
    text = path.read_bytes()
    middle = text.index(b"\n", len(text) // 2) + 1  # a bad line in the second chunk
    bad = text[:middle] + b"1 qid:1 3:x\n" + text[middle:]
    line = text[:middle].count(b"\n") + 1
    errors = [_reader.parse_svmlight(bad, 2**40, math.inf, True, False, n, 1 << 20)
              for n in (1, 2)]
    assert errors[0]["error_line"] == errors[1]["error_line"] == line
    with pytest.raises(InputFormatError, match="n_threads must be a positive integer"):
        io.load_svmlight(path, n_threads=0)


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
    indptr, _, stored = fast.csr()
    dense = np.zeros(len(values))
    dense[np.repeat(np.arange(len(values)), np.diff(indptr))] = stored
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


# --- reading in blocks ------------------------------------------------------------------------

UNICODE_ROWS = st.lists(st.sampled_from(
    ["1 qid:1 1:2\n", "0 qid:1\u00a02:1 # x\u2003\n", "2 qid:q 3:-1\r\n", "\n", "# c\r",
     "1 qid:007 1:1 2:0\n", "0 qid:2 1:x\n", "1 qid:3 3:1e3\n"]),
    min_size=1, max_size=12).map("".join)


@settings(max_examples=150, deadline=None)
@given(content=st.one_of(ASCII_LINES, ROWS, UNICODE_ROWS), block_bytes=st.sampled_from([1, 7, 60]),
       n_threads=st.integers(1, 3), with_qid=st.booleans(), return_comments=st.booleans())
def test_reading_in_blocks_gives_what_one_block_gives(content, block_bytes, n_threads, with_qid,
                                                      return_comments):
    """A file cut into blocks at line ends (a block may hold one line, text the Python parser
    reads, or a rejected line): the same arrays, query ids (integers, or texts from the block
    where one is not canonical on), comments, and the same first rejected line with its
    number counted through the blocks."""
    data = content.encode()
    limits = io._Limits(50, 1e3)
    results = []
    for size in (1 << 30, block_bytes):
        try:
            results.append(io._parse("f.txt", data, limits, return_comments, with_qid,
                                     n_threads=n_threads, block_bytes=size))
        except InputFormatError as err:
            results.append(str(err))
    assert_same_part(*results)


@pytest.mark.parametrize("kind", ["plain", "gzip", "bzip2", "xz", "stdin"])
def test_a_source_is_read_in_blocks_cut_at_line_ends(tmp_path, monkeypatch, kind):
    import bz2
    import gzip
    import io as std_io
    import lzma
    import sys
    import types

    from svmmap.data.sources import Source

    text = b"".join(f"{k % 3} qid:{k // 7} 1:{k}.5 {2 + k % 5}:1e-3\r\n".encode()
                    if k % 4 else f"1 qid:{k // 7} 3:{k}\r# a comment\n".encode()
                    for k in range(6000))  # beyond the head read to find the first line
    compress = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}
    path = tmp_path / "d.txt"
    path.write_bytes(compress.get(kind, bytes)(text))
    if kind == "stdin":
        monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=std_io.BytesIO(text)))
        path = "-"
    with Source(path) as source:
        blocks = [bytes(block) for block in source.blocks(64, first=16)]
    assert b"".join(blocks) == text and len(blocks) > 20
    for block in blocks[:-1]:  # whole lines: "\r\n" never split
        assert block.endswith((b"\n", b"\r")) and not block.endswith(b"\r\r")
    assert not any(block.startswith(b"\n") for block in blocks)
    if kind == "stdin":
        monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=std_io.BytesIO(text)))
    (tmp_path / "plain.txt").write_bytes(text)
    reference = io.load_svmlight(tmp_path / "plain.txt", return_comments=True)
    monkeypatch.setattr(io, "BLOCK_BYTES", 64)
    small = io.load_svmlight(path, return_comments=True)
    assert (small[0] != reference[0]).nnz == 0
    assert all(np.array_equal(a, b) for a, b in zip(small[1:3], reference[1:3]))
    assert small[3] == reference[3]


def test_a_mapped_file_gives_a_line_longer_than_the_block_whole(tmp_path):
    """A plain file's blocks are views of its mapping: a line longer than the block size is
    in one block (the block grows), "\r\n" is never split, and the views join to the text."""
    from svmmap.data.sources import Source

    long_line = "1 qid:3 " + " ".join(f"{j}:{j}.25" for j in range(1, 200)) + "\r\n"
    text = ("0 qid:1 1:1\r\n" * 5 + long_line + "2 qid:4 7:1\r" * 9).encode()
    path = tmp_path / "d.txt"
    path.write_bytes(text)
    with Source(path) as source:
        blocks = [bytes(block) for block in source.blocks(32)]
    assert b"".join(blocks) == text
    assert any(block.startswith(long_line.encode()) for block in blocks)
    assert all(block.endswith((b"\n", b"\r")) and not block.startswith(b"\n")
               for block in blocks)


def _letor_like(path, n_docs, n_features=40, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.random((n_docs, n_features))
    with open(path, "w") as out:
        for k in range(n_docs):
            features = " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(values[k]))
            out.write(f"{k % 3 // 2} qid:{1000 + k // 50} {features}\n")


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_reading_holds_little_more_than_the_arrays_it_returns(tmp_path, compressed, dtype):
    """The text is never held whole: the peak of traced memory (tracemalloc: numpy's arrays,
    the reader's growing arrays, the block buffer, a decompressor's buffers) while reading
    a 16 MB file is at most 1.3 times the arrays returned (the whole text alone is about as
    large as them)."""
    import gzip
    path = tmp_path / "d.txt"
    _letor_like(path, 40_000)
    if compressed:
        path = tmp_path / "d.txt.gz"
        path.write_bytes(gzip.compress((tmp_path / "d.txt").read_bytes(), 1))
    io.load_svmlight(path, dtype=dtype)  # imports and caches warmed up
    (X, y, qid), peak = traced_peak(lambda: io.load_svmlight(path, dtype=dtype))
    arrays = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes + y.nbytes + qid.nbytes
    assert X.dtype == dtype and X.indices.dtype == np.int32
    assert peak <= 1.3 * arrays, peak / arrays


_PEAK_RSS = """\
import sys
from svmmap.data.io import load_svmlight

def status(key):  # this process's own (ru_maxrss would start from the forking parent's)
    lines = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
    return int(lines[key].split()[0]) * 1024

load_svmlight(sys.argv[3])  # the reader's modules loaded
before = status("VmRSS")
X, y, qid = load_svmlight(sys.argv[1], dtype=sys.argv[2])
growth = status("VmHWM") - before
print(growth / (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes + y.nbytes + qid.nbytes))
"""


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_reading_a_file_holds_one_block_of_its_text(tmp_path, dtype):
    """The growth of the reading process's peak RSS (VmHWM: its real high-water mark,
    whatever allocates) is at most 1.3 times the arrays returned, for a 100 MB file (the whole
    text held, or memory-mapped whole, would make it twice them in float64, three times in
    float32)."""
    import subprocess
    import sys

    n_docs, n_features = 60_000, 136
    prefix = "".join(f" {j}:0.000000" for j in range(1, n_features + 1))
    line = np.frombuffer(f"1 qid:100000{prefix}\n".encode(), dtype=np.uint8)
    digits = np.flatnonzero(np.frombuffer(line.tobytes().replace(b"0.000000", b"0.######"),
                                          dtype=np.uint8) == ord("#"))
    rows = np.tile(line, (n_docs, 1))
    rows[:, digits] = np.random.default_rng(0).integers(48, 58, (n_docs, len(digits)),
                                                        dtype=np.uint8)
    path = tmp_path / "d.txt"
    path.write_bytes(rows.tobytes())
    assert path.stat().st_size > 95e6
    (tmp_path / "small.txt").write_bytes(rows[:10].tobytes())
    out = subprocess.run([sys.executable, "-c", _PEAK_RSS, str(path), dtype,
                          str(tmp_path / "small.txt")],
                         capture_output=True, text=True, check=True).stdout
    assert float(out) <= 1.3, out
