"""The reader's dense layout (svmmap.data.io.read_svmlight): a file whose every data line lists the
features 1..d in order comes back as the (m, d) ndarray of its values; a file that breaks
that pattern anywhere comes back as the CSR arrays today's reader (``dense=False``) gives,
with the same messages and line numbers; and the dense result trains and scores as its CSR
reading does, without a copy of X."""

import bz2
import functools
import gzip
import io as std_io
import lzma
import sys
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svmmap.data import io
from svmmap.errors import InputFormatError
from svmmap.kernels._kernel_inputs import CSRArrays

from conftest import random_collection, run_command, traced_peak

VALUES = st.sampled_from(["0", "1", "-2.5", "0.000000", "1e-3", "-0", "0.5", "3E2", "7"])


def dense_lines(rows, d, comment=False):
    """SVMlight lines of rows x d values drawn by ``rows`` (lists of value texts), every
    feature 1..d written out."""
    return [f"{k % 3} qid:{k // 4} " + " ".join(f"{j + 1}:{v}" for j, v in enumerate(row))
            + (" # doc" if comment else "") + "\n" for k, row in enumerate(rows)]


def read_both(data, **kwargs):
    """(the dense-allowed reading, the CSR reading) of ``data``: each a _Part or the
    InputFormatError message."""
    results = []
    for dense in (True, False):
        try:
            results.append(io._parse("f.txt", data, io._Limits(kwargs.get("n_features"), 1e3), True,
                                     n_threads=kwargs.get("n_threads", 1),
                                     dtype=kwargs.get("dtype", np.float64),
                                     block_bytes=kwargs.get("block_bytes"), dense=dense))
        except InputFormatError as err:
            results.append(str(err))
    return results


def assert_same_rows(dense, csr):
    """The same labels, query ids and comments, and bit for bit the CSR arrays."""
    if isinstance(dense, str) or isinstance(csr, str):
        assert dense == csr
        return
    assert not csr.dense
    assert np.array_equal(dense.labels, csr.labels) and np.array_equal(dense.qid, csr.qid)
    assert dense.comments == csr.comments and dense.max_index == csr.max_index
    for a, b in zip(dense.csr(), csr.csr()):
        assert a.tobytes() == b.astype(a.dtype).tobytes()
        assert a.dtype == b.dtype or a.dtype.kind == b.dtype.kind == "i"


@settings(max_examples=120, deadline=None)
@given(d=st.integers(0, 6), n=st.integers(1, 12), data=st.data(),
       block_bytes=st.sampled_from([1, 40, None]), n_threads=st.integers(1, 3),
       dtype=st.sampled_from([np.float64, np.float32]), comment=st.booleans())
def test_letor_shaped_text_reads_dense_and_equal_to_its_csr_reading(d, n, data, block_bytes,
                                                                     n_threads, dtype,
                                                                     comment):
    rows = data.draw(st.lists(st.lists(VALUES, min_size=d, max_size=d), min_size=n,
                              max_size=n))
    lines = dense_lines(rows, d, comment)
    lines.insert(data.draw(st.integers(0, n)), "# a comment line\n\n")
    text = "".join(lines).encode()
    dense, csr = read_both(text, block_bytes=block_bytes, n_threads=n_threads, dtype=dtype)
    assert dense.dense and dense.values.shape == (n, d) and dense.values.dtype == dtype
    assert dense.values.flags.c_contiguous and dense.values.flags.owndata is False
    expected = np.array([[float(v) for v in row] for row in rows]).reshape(n, d)
    assert dense.values.tobytes() == expected.astype(dtype).tobytes() or \
        np.array_equal(dense.values, expected.astype(dtype))  # -0 and 0 compare equal
    assert_same_rows(dense, csr)


BREAKS = {
    "gap": lambda d: " ".join(f"{j}:1" for j in range(1, d + 2) if j != 2),
    "fewer": lambda d: " ".join(f"{j}:1" for j in range(1, d)),
    "more": lambda d: " ".join(f"{j}:1" for j in range(1, d + 2)),
    "shifted": lambda d: " ".join(f"{j}:1" for j in range(2, d + 2)),
    "none": lambda d: "",
}


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 12), data=st.data(), kind=st.sampled_from(sorted(BREAKS)),
       block_bytes=st.sampled_from([1, 50, None]), n_threads=st.integers(1, 3),
       dtype=st.sampled_from([np.float64, np.float32]))
def test_text_that_breaks_the_pattern_reads_as_csr_as_today(n, data, kind, block_bytes,
                                                            n_threads, dtype):
    """A line that lists other features than the first line (a gap, fewer, more, another
    start, none) at line 1, in the middle or last: CSR, the arrays today's reader gives."""
    d = 4
    rows = data.draw(st.lists(st.lists(VALUES, min_size=d, max_size=d), min_size=n,
                              max_size=n))
    lines = dense_lines(rows, d)
    at = data.draw(st.sampled_from([0, n // 2, n]))
    lines.insert(at, f"2 qid:{at // 4} {BREAKS[kind](d)}\n")
    dense, csr = read_both("".join(lines).encode(), block_bytes=block_bytes,
                           n_threads=n_threads, dtype=dtype)
    assert not dense.dense
    assert_same_rows(dense, csr)


POOL = ["1 qid:1 1:1 2:0 3:2\n", "0 qid:1 1:0 2:0 3:0 # c\n", "2 qid:2 1:1 3:2\n",
        "1 qid:2 1:1 2:2 3:3 4:4\n", "\n", "# comment\n", "1 qid:3 1:x 2:1 3:1\n",
        "x qid:3 1:1 2:1 3:1\n", "1 qid:3 1:1 2:1e9 3:1\n", "1 qid:3 1:1 3:1 2:1\n",
        "1 qid:4\n", "1 1:1 2:1 3:1\n", "1 qid:5 1:1 1:1 2:1 3:1\n", "1 qid:5 0:1 1:2 2:3\n"]


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.sampled_from(POOL), min_size=1, max_size=14),
       block_bytes=st.sampled_from([1, 30, None]), n_threads=st.integers(1, 3),
       n_features=st.sampled_from([None, 3, 4, 5, 40]))
def test_any_text_reads_as_today_dense_or_not(lines, block_bytes, n_threads, n_features):
    """Dense lines, lines that break the pattern and malformed lines in any order, cut into
    any blocks: dense or not, the same rows as today's reader, or the same message naming the
    same line (errors after the switch included)."""
    dense, csr = read_both("".join(lines).encode(), block_bytes=block_bytes,
                           n_threads=n_threads, n_features=n_features)
    assert_same_rows(dense, csr)


@pytest.mark.parametrize("at", ["first", "middle", "last"])
def test_an_error_after_the_switch_names_its_line(tmp_path, at):
    rows = [["1", "0", "2"]] * 6
    lines = dense_lines(rows, 3)
    breaking = {"first": 0, "middle": 3, "last": 6}[at]
    lines.insert(breaking, "1 qid:9 1:1 3:1\n")
    lines.append("1 qid:9 1:1 2:nan 3:1\n")
    path = tmp_path / "bad.txt"
    path.write_text("".join(lines))
    with pytest.raises(InputFormatError, match=r"bad.txt:8: feature 2: value 'nan' is not"):
        io.read_svmlight(path)


@pytest.mark.parametrize("kind", ["plain", "gzip", "bzip2", "xz", "stdin"])
def test_a_break_in_a_later_block_of_any_source_gives_todays_arrays(tmp_path, monkeypatch,
                                                                    kind):
    rng = np.random.default_rng(3)
    values = np.round(rng.random((400, 5)), 3)
    values[values < 0.2] = 0
    text = "".join(f"{k % 3} qid:{k // 10} " + " ".join(f"{j + 1}:{v}" for j, v in
                                                         enumerate(row)) + "\n"
                   for k, row in enumerate(values))
    text += "1 qid:99 1:1 5:2\n"  # the last line breaks the pattern
    compress = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}
    path = tmp_path / "d.txt"
    path.write_bytes(compress.get(kind, bytes)(text.encode()))
    monkeypatch.setattr(io, "BLOCK_BYTES", 256)  # the break is dozens of blocks in
    results = []
    for dense in (True, False):
        if kind == "stdin":
            stdin = types.SimpleNamespace(buffer=std_io.BytesIO(text.encode()))
            monkeypatch.setattr(sys, "stdin", stdin)
        results.append(io.read_svmlight("-" if kind == "stdin" else path, dense=dense))
    (X, y, qid), (X_csr, y_csr, qid_csr) = results
    assert isinstance(X, CSRArrays) and X.shape == X_csr.shape == (401, 5)
    for a, b in zip(X[:3], X_csr[:3]):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    assert np.array_equal(y, y_csr) and np.array_equal(qid, qid_csr)
    without_last = tmp_path / "dense.txt"
    without_last.write_text(text[:text.rindex("1 qid:99")])
    X_dense = io.read_svmlight(without_last)[0]
    assert isinstance(X_dense, np.ndarray) and np.array_equal(X_dense, values)


def test_n_features_beyond_the_files_pads_while_cheaper_than_csr(tmp_path):
    """n_features > d: dense with zero columns up to 1.5 d (float64; 2 d in float32), beyond
    that CSR: the same values either way."""
    path = tmp_path / "d.txt"
    values = np.arange(1.0, 13.0).reshape(3, 4)
    path.write_text("".join(dense_lines(values.tolist(), 4)))
    for n_features, dtype, dense in ((4, np.float64, True), (6, np.float64, True),
                                     (7, np.float64, False), (8, np.float32, True),
                                     (9, np.float32, False)):
        X = io.read_svmlight(path, n_features=n_features, dtype=dtype)[0]
        assert isinstance(X, np.ndarray) == dense and X.shape == (3, n_features)
        reference = io.load_svmlight(path, n_features=n_features, dtype=dtype)[0].toarray()
        assert np.array_equal(X if dense else io.as_scipy(X).toarray(), reference)
    with pytest.raises(InputFormatError, match="d.txt:1: feature index 4 exceeds n_features=3"):
        io.read_svmlight(path, n_features=3)


def test_several_files_stack_dense_or_fall_back_to_csr(tmp_path):
    a, b, c = (tmp_path / f"{name}.txt" for name in "abc")
    a.write_text("".join(dense_lines([["1", "2", "3"]] * 2, 3)))
    b.write_text("".join(dense_lines([["4", "0", "6"]] * 3, 3)))
    c.write_text("1 qid:7 2:5\n")
    X = io.read_svmlight([a, b])[0]
    assert isinstance(X, np.ndarray) and X.tolist() == [[1, 2, 3]] * 2 + [[4, 0, 6]] * 3
    X = io.read_svmlight([a, c])[0]
    assert isinstance(X, CSRArrays)
    assert io.as_scipy(X).toarray().tolist() == [[1, 2, 3]] * 2 + [[0, 5, 0]]


def test_load_svmlight_stays_scipy_csr(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("".join(dense_lines([["1", "0", "3"]] * 2, 3)))
    X = io.load_svmlight(path)[0]
    assert X.format == "csr" and X.nnz == 4  # zeros not stored


@functools.cache
def _letor_like_bytes(kind, last_line):
    """A 16 MB LETOR-shaped text (its last line breaking the pattern or not), compressed as
    ``kind`` says (plain and stdin: as it is)."""
    rng = np.random.default_rng(0)
    values = rng.random((40_000, 40))
    text = "".join(f"{k % 3 // 2} qid:{1000 + k // 50} "
                   + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(values[k])) + "\n"
                   for k in range(len(values)))
    if last_line == "breaks":
        text += "1 qid:5000 1:1 3:1\n"
    compress = {"gzip": lambda b: gzip.compress(b, 1), "bzip2": lambda b: bz2.compress(b, 1),
                "xz": lambda b: lzma.compress(b, preset=0)}
    return compress.get(kind, bytes)(text.encode())


@pytest.mark.parametrize("kind, dtype", [
    ("plain", np.float64), ("plain", np.float32), ("gzip", np.float64), ("gzip", np.float32),
    ("bzip2", np.float64), ("xz", np.float64), ("stdin", np.float64)])
@pytest.mark.parametrize("last_line", ["dense", "breaks"])
def test_reading_dense_or_switching_holds_little_more_than_the_arrays(tmp_path, monkeypatch,
                                                                      kind, dtype, last_line):
    """The peak of traced memory reading a 16 MB LETOR-shaped file (plain, compressed or on
    standard input) is at most 1.3 times the arrays returned: the dense ndarray (8 or 4
    bytes a value), or, when the last line breaks the pattern, the CSR arrays every row is
    made into in place at that line.  Blocks of 256 KiB: the block a decompressed file is
    read in is a constant (8 MiB by default, made for arrays of gigabytes), as large as this
    small file's float32 arrays."""
    monkeypatch.setattr(io, "BLOCK_BYTES", 1 << 18)
    data = _letor_like_bytes(kind, last_line)
    path = tmp_path / "d.txt"
    path.write_bytes(data)

    def read():
        if kind == "stdin":
            monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=std_io.BytesIO(data)))
        return io.read_svmlight("-" if kind == "stdin" else path, dtype=dtype)

    read()  # imports and caches warmed up
    (X, y, qid), peak = traced_peak(read)
    if last_line == "dense":
        assert isinstance(X, np.ndarray) and X.shape == (40_000, 40)
        arrays = X.nbytes
    else:
        assert isinstance(X, CSRArrays) and X.indices.dtype == np.int32
        arrays = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    arrays += y.nbytes + qid.nbytes
    assert (X if last_line == "dense" else X.data).dtype == dtype
    assert peak <= 1.3 * arrays, peak / arrays


# --- the dense result in training and scoring ---------------------------------------------

@pytest.fixture(scope="module")
def letor_file(tmp_path_factory):
    X, y, qid = random_collection(seed=7, n_queries=30, docs=(5, 25), n_features=8, rate=0.3)
    X[np.abs(X) < 0.3] = 0  # zeros written out, as LETOR writes them
    path = tmp_path_factory.mktemp("dense") / "train.txt"
    path.write_text("".join(f"{int(label)} qid:{q} " + " ".join(f"{j + 1}:{v!r}" for j, v in
                                                               enumerate(row)) + "\n"
                            for label, q, row in zip(y, qid, X.tolist())))
    return path


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_models_trained_from_the_dense_and_the_csr_reading_agree(letor_file, dtype):
    """The objective is 1-strongly convex: |w - w*| <= sqrt(2 gap) for each model."""
    from svmmap import SVMMap

    X, y, qid = io.read_svmlight(letor_file, dtype=dtype)
    X_csr = io.load_svmlight(letor_file, dtype=dtype)[0]
    assert isinstance(X, np.ndarray) and X.dtype == dtype
    for C in (1.0, 100.0):
        dense, csr = (SVMMap(C=C).fit(data, y, qid) for data in (X, X_csr))
        gaps = [m.training_result_.duality_gap for m in (dense, csr)]
        bound = sum(np.sqrt(2 * max(g, 0)) for g in gaps)
        assert np.linalg.norm(dense.coef_ - csr.coef_) <= bound + 1e-9


def test_the_commands_train_and_score_the_dense_reading(letor_file, tmp_path):
    """svmmap_learn on the dense reading gives the model of the CSR reading (within the
    gaps); svmmap_classify's scores are bit for bit those of the CSR arrays."""
    from svmmap import SVMMap
    from svmmap.data.model_file import load_model
    from svmmap.kernels._csr import scores

    model = tmp_path / "m.json"
    run_command("svmmap_learn", "-v", "0", "-c", "10", letor_file, model)
    learned = load_model(model)
    X_csr, y, qid = io.load_svmlight(letor_file)
    reference = SVMMap(C=10.0).fit(X_csr, y, qid)
    gaps = [m.training_result_.duality_gap for m in (learned, reference)]
    assert np.linalg.norm(np.asarray(learned.coef_) - reference.coef_) <= \
        sum(np.sqrt(2 * max(g, 0)) for g in gaps) + 1e-9
    run_command("svmmap_classify", "-v", "0", letor_file, model, tmp_path / "p.txt")
    predicted = np.array([float(s) for s in (tmp_path / "p.txt").read_text().split()])
    arrays = io.read_svmlight(letor_file, dense=False)[0]
    assert predicted.tobytes() == scores(arrays, np.asarray(learned.coef_)).tobytes()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_training_on_the_dense_reading_makes_no_copy_of_x(tmp_path, dtype):
    """The command's training path (svmmap.core.training.fit on the reader's ndarray: the
    collection, the per-query-normalised check, the fused passes) keeps the reader's X and
    allocates less than a float64 copy of it would take."""
    from svmmap.core import training
    from svmmap.core.collection import QueryCollection
    from svmmap.core.params import SVMMAP_DEFAULTS

    X, y, qid = random_collection(seed=5, n_queries=400, docs=(40, 60), n_features=40)
    path = tmp_path / "dense.txt"
    path.write_text("".join(f"{int(label)} qid:{q} " + " ".join(f"{j + 1}:{v!r}" for j, v in
                                                               enumerate(row)) + "\n"
                            for label, q, row in zip(y, qid, X.tolist())))
    X, y, qid = io.read_svmlight(path, dtype=dtype)
    assert isinstance(X, np.ndarray) and X.dtype == dtype
    collection = QueryCollection.from_checked(X, y, qid)
    assert collection.kernel_X is X
    params = dict(SVMMAP_DEFAULTS, C=1.0, max_iter=20)
    training.fit(dict(params, max_iter=3), collection)  # imports, caches
    fitted, peak = traced_peak(lambda: training.fit(params, collection))
    assert fitted.training_result.iterations > 3
    assert peak < X.size * 8 / 2, peak / (X.size * 8)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_standard_normaliser_of_a_dense_x_is_float64_without_a_copy(monkeypatch, dtype):
    """Mean and deviation in float64 (those of the float64 values, float32 storage or not),
    from a few rows at a time: traced memory far below a float64 copy of X."""
    from svmmap.core import normalize

    monkeypatch.setattr(normalize, "DENSE_ROWS", 100)
    rng = np.random.default_rng(2)
    X = (rng.standard_normal((3000, 50)) * 30 + 1000).astype(dtype)
    fitted, peak = traced_peak(lambda: normalize.Normalizer.fit("standard", X))
    exact = X.astype(np.float64)
    np.testing.assert_allclose(fitted.shift, exact.mean(axis=0), rtol=1e-13)
    np.testing.assert_allclose(fitted.scale, exact.std(axis=0), rtol=1e-10)
    assert peak < X.size * 8 / 4, peak / (X.size * 8)


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.sampled_from(POOL[:6] + POOL[6:8] + POOL[10:11]), min_size=1,
                      max_size=16),
       n_threads=st.integers(2, 4), split=st.integers(1, 3))
def test_chunks_parsed_in_parallel_find_the_first_break(lines, n_threads, split):
    """Text cut into chunks of a few bytes parsed on several threads: each chunk learns the
    width of its first data line, and the merge finds the first line that breaks the
    pattern (a chunk of another width than the chunks before it, or a break inside one):
    the same rows, or the same first rejected line, as one thread's CSR parse.  Blocks
    parsed one after another keep the width learned from the first."""
    from svmmap.kernels._svmlight_reader import MatrixBuilder

    text = "".join(lines).encode()
    cut = len(text) * split // 4
    cut = text.rfind(b"\n", 0, cut) + 1  # blocks end at line ends
    blocks = [text[:cut], text[cut:]] if 0 < cut < len(text) else [text]
    results = []
    for dense, threads in ((True, n_threads), (False, 1)):
        builder = MatrixBuilder(np.float64, dense=dense)
        errors = [builder.parse_block(block, 2**53 - 1, np.inf, True, threads,
                                      min_chunk_bytes=1)["error_line"] for block in blocks]
        first_error = next(((k, e) for k, e in enumerate(errors) if e), None)
        results.append((first_error, builder.dense, builder.rows,
                        builder.finish() if builder.rows and first_error is None else None))
    (error, dense, rows, arrays), (csr_error, _, csr_rows, csr_arrays) = results
    assert error == csr_error and rows == csr_rows
    if arrays is None:
        return
    if dense:
        _, _, values = arrays
        stored = values != 0
        indptr = np.concatenate([[0], np.cumsum(stored.sum(axis=1))])
        arrays = indptr, np.nonzero(stored)[1], values[stored]
    for a, b in zip(arrays, csr_arrays):
        assert np.array_equal(a, b)
