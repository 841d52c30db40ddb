"""Reading SVMlight / LETOR ranking data (where it comes from: svmmap.data.sources; group and
query-weights files: svmmap.data.side_files; writing it: svmmap.data.writer -- their public names
are
importable from here too).

Format: one document per line, ::

    <label> qid:<q> <index>:<value> <index>:<value> ... # comment

* ``label`` is any finite number: ``+1``/``-1`` (the original SVM-MAP sample), graded
  relevance ``0..4`` (LETOR), or another float.
* ``qid:<q>`` must follow the label. Query ids are integers, or arbitrary strings without
  whitespace, ``:`` or ``#``. The documents of a query need not be on contiguous lines: rows
  keep file order and the learners group them by ``qid`` themselves.
* Feature indices are positive integers (1-based: index ``i`` is column ``i - 1``) in strictly
  increasing order on each line; values are finite decimal numbers (the learners need
  magnitudes of at most 1e100, ``svmmap.core.options.MAX_ABS_VALUE``: see ``max_abs_value``).
  Omitted features are zero; a line may have none (``1 qid:1``).
* Text after ``#`` is a comment (LETOR puts ``docid = ...`` there). Blank and comment-only
  lines are skipped. Tokens are separated by any whitespace, lines end in ``\\n``, ``\\r\\n`` or
  ``\\r`` (old Mac OS), and the file is UTF-8 (a leading byte-order mark is ignored).

Files may be gzip-, bzip2- or xz-compressed (recognised by their first bytes, not by their
name); ``-`` reads standard input. Data without ``qid:`` takes its queries from a LightGBM-style
*group file*: one query size per line, the queries' documents on consecutive lines in that
order (``train.txt.query`` beside ``train.txt`` is used when present, or pass ``group=``).

Any deviation raises :class:`~svmmap.errors.InputFormatError` naming the file and line.

:func:`load_svmlight` returns X as a scipy.sparse matrix; :func:`read_svmlight`, which the
command-line tools use, returns X without importing scipy: a dense ndarray when every line of
the file lists the same features 1..d in order (LETOR files do, zeros written out), else the
arrays of the scipy matrix as ``CSRArrays`` (svmmap.kernels._csr).

Layers: :class:`svmmap.data.sources.Source` (file or stdin, decompression, memory map, byte-order
mark) hands bytes to the parser (:func:`_parse`) in blocks cut at line ends, and the parser
knows nothing about where they came from.  The parser is the extension (``_svmlight_reader``,
C++: per block one counting scan and one parsing pass, numbers converted with
``std::from_chars``, so every value is the float64 Python's ``float()`` gives), whose arrays
grow block by block: reading holds them and one block, never the whole text.  They start
dense (values only, 8 bytes a value in float64, as svm_rank holds them) and become CSR in
place at the first line that does not list the features of the first, 1..d in order (12
bytes a stored value, zeros not stored); line numbers and messages do not change.  It stops at
the first line it rejects and :func:`_line_reason` explains why, so every message is defined
here (line numbers run on through the blocks).  Text with whitespace beyond ASCII (which
``str.split`` splits on) goes to the Python parser of the same rules, :func:`_parse_text`.
"""

from __future__ import annotations

import math
import os
import re
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..core.options import MAX_NDCG_LABEL, ndcg_label_error, thread_count
from ..errors import InputFormatError
from ..kernels._csr import as_scipy
from ..kernels._kernel_inputs import CSRArrays
from ..kernels._svmlight_reader import MatrixBuilder, is_ascii
from ..metrics import ERR_MAX_GRADE, err_grade_error
from .side_files import group_file, group_qids, load_query_weights
from .sources import (
    COMPRESSION,
    GROUP_SUFFIX,
    STDIN,
    STDIN_NAME,
    Source,
    data_lines,
    decode,
    has_qid,
    input_files,
    line_blocks,
    open_sources,
    split_lines,
)
from .writer import dump_svmlight

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import numpy.typing as npt
    import scipy.sparse as sp

    from ..core._typing import PathLike, Vector

__all__ = ["load_svmlight", "read_svmlight", "dump_svmlight", "input_files", "load_query_weights",
           "group_file", "COMPRESSION", "GROUP_SUFFIX", "STDIN", "STDIN_NAME"]

#: Largest feature index accepted: every index up to it is exact in a float64.
MAX_INDEX = 2**53 - 1

_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_NUMBER_RE = re.compile(_NUMBER)
_INT_RE = re.compile(r"[+-]?[0-9]+")
_INDEX_RE = re.compile(r"[0-9]+")
# One line's feature tokens joined by single spaces, every index at most 16 digits (so that
# float64 parsing of the index is exact up to MAX_INDEX); anything else is diagnosed in Python.
_FEATURE = rf"0*[1-9][0-9]{{0,15}}:{_NUMBER}"
_FEATURES_RE = re.compile(rf"(?:{_FEATURE}(?: {_FEATURE})*)?")
#: whitespace str.split() splits on beyond ASCII: such text goes to the Python parser
_UNICODE_SPACE_RE = re.compile("[\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")



MISSING_QID = "missing qid:<id> after the label"


class _Limits(NamedTuple):
    """What the reader refuses of a line: a feature index above ``n_features`` (None: no
    limit but MAX_INDEX), a value of magnitude above ``max_abs_value``; ``width_of``: the
    file n_features comes from, named in the message (read_svmlight)."""

    n_features: int | None
    max_abs_value: float
    width_of: str | None = None


@dataclass(frozen=True)
class LabelRule:
    """What a command needs of every label of the data it reads, checked by the reader so
    that a refused label is named by file and line before any output is written:
    ``refuses(labels)`` is the boolean mask of the labels refused, ``reason(label)`` says
    why one is (one line)."""

    refuses: Callable[[np.ndarray], np.ndarray]
    reason: Callable[[float], str]


#: an NDCG loss's grades: at most MAX_NDCG_LABEL (svmmap.core.options.ndcg_label_error)
NDCG_GRADES = LabelRule(lambda labels: labels > MAX_NDCG_LABEL, ndcg_label_error)
#: ERR's grades: at most svmmap.metrics.ERR_MAX_GRADE (gdeval's 4)
ERR_GRADES = LabelRule(lambda labels: labels > ERR_MAX_GRADE, err_grade_error)


def measure_label_rules(measures):
    """The LabelRules of the labels the measures ``measures`` ((name, k) pairs,
    svmmap.core.measures.parse_metrics) are computed on: ERR's grades at most 4."""
    return (ERR_GRADES,) if any(name == "err" for name, _ in measures) else ()


def load_svmlight(path_or_paths: PathLike | Sequence[PathLike], n_features: int | None = None, *,
                  return_comments: bool = False, group: PathLike | Vector | None = None,
                  max_abs_value: float | None = None, n_threads: int = 1,
                  max_label: float | None = None, files_read: list[str] | None = None,
                  dtype: npt.DTypeLike = np.float64
                  ) -> (tuple[sp.csr_matrix, np.ndarray, np.ndarray]
                        | tuple[sp.csr_matrix, np.ndarray, np.ndarray, list[str]]):
    """Read SVMlight / LETOR ranking data (format in the module docstring).

    Parameters
    ----------
    path_or_paths : str, PathLike, or list of them
        A data file, an *index file*, or a list of either, read and concatenated in order;
        ``"-"`` is standard input; gzip, bzip2 and xz content is decompressed.
        An index file (as accepted by the original ``svm_map_learn``) lists one data file
        per non-blank, non-comment line, relative paths being taken from the index file's
        directory; it is recognised by its first non-comment line holding a single token
        that is not a number and contains no ``:``.
    n_features : int, optional
        Number of columns of ``X``; an index above it is an error. By default the largest
        index seen in the files (zero-valued features included).
    return_comments : bool
        Also return each document's comment (text after ``#``, stripped; ``''`` if none).
    group : str or PathLike, optional
        Group file for data whose lines carry no ``qid:`` (one query size per line, LightGBM's
        ``.query`` format); only with a single data file. Without it, ``<data file>.query``
        is used when such data has one beside it. Queries are numbered 1, 2, ... in order,
        on through every file read (an index file listing two such files, each with its
        ``.query``, gives the second file's queries the numbers after the first's); files
        whose lines carry ``qid:`` cannot be read together with files whose queries come
        from group files.

    max_abs_value : float, optional
        Refuse, with file and line, a feature value of larger magnitude.  The command-line
        tools pass ``svmmap.core.options.MAX_ABS_VALUE`` (1e100), which the learners require
        anyway; by default every finite value is read (what ``dump_svmlight`` writes).
    n_threads : int
        Threads parsing a file: its text is cut at line ends into up to that many chunks of
        at least 1 MiB, parsed in parallel and merged; the result is the same as with one.
    max_label : float, optional
        Refuse, with file and line, a label above it (``svmmap_learn -l ndcg...`` passes
        ``svmmap.core.options.MAX_NDCG_LABEL``: the gain 2^label - 1 of a larger grade overflows).
    files_read : list, optional
        The data files index files list, and the group files beside them, are appended to it
        before they are read: for an index file on standard input or in a pipe, which
        :func:`input_files` does not read (the commands check their output against them).
    dtype : np.float64 (default) or np.float32
        The storage of X's values.  float32 halves them (each value is parsed to the nearest
        float64 and stored rounded to float32); a value beyond float32's range (3.4e38) is
        refused with file and line.  The learners read float32 X in place and compute in
        float64: a model trained on float32 X is the float64 model of the values rounded to
        float32.

    Returns
    -------
    X : scipy.sparse.csr_matrix of float64 (or ``dtype``), shape (m, d)
        Feature values; zeros are not stored, column indices are sorted.
    y : ndarray of float64, shape (m,)
    qid : ndarray, shape (m,)
        int64 when every query id is an integer that fits, otherwise str. Rows keep file
        order: a query's documents need not be contiguous (the learners group by ``qid``).
    comments : list of str, only when ``return_comments`` is true

    Raises
    ------
    InputFormatError
        ``"path:line: reason"`` for a malformed line, ``"path: reason"`` for an unreadable,
        empty or comment-only file.
    """
    # CSR as it is read (no dense matrix made CSR afterwards: its peak would be both)
    X, *rest = read_svmlight(path_or_paths, n_features, return_comments=return_comments,
                             group=group, max_abs_value=max_abs_value, n_threads=n_threads,
                             label_rules=() if max_label is None else
                             (LabelRule(lambda labels: labels > max_label, ndcg_label_error),),
                             files_read=files_read, dtype=dtype, dense=False)
    return (as_scipy(X), *rest)


def read_svmlight(path_or_paths: PathLike | Sequence[PathLike], n_features: int | None = None,
                  *, return_comments: bool = False, group: PathLike | Vector | None = None,
                  max_abs_value: float | None = None, n_threads: int = 1,
                  label_rules: Sequence[LabelRule] = (), width_of: PathLike | None = None,
                  files_read: list[str] | None = None,
                  dtype: npt.DTypeLike = np.float64, dense: bool = True
                  ) -> (tuple[np.ndarray | CSRArrays, np.ndarray, np.ndarray]
                        | tuple[np.ndarray | CSRArrays, np.ndarray, np.ndarray, list[str]]):
    """:func:`load_svmlight` with X as the command-line tools take it, without importing
    scipy (svmmap.kernels._csr): a C-contiguous (m, d) ndarray of ``dtype`` when every data line
    lists the features 1..d in order (zeros included), else CSRArrays (the arrays the scipy
    matrix holds: sorted column indices, int32 indices and indptr when they fit).

    ``n_features`` larger than such a file's d: the ndarray has n_features columns, the
    ones beyond d zero, while that takes no more memory than the CSR arrays of the values
    listed (itemsize x n_features <= (itemsize + 4) x d bytes a row: n_features <= 1.5 d
    in float64, 2 d in float32), else X is CSRArrays.  Several files: an ndarray when each
    is dense and fits the same rule, else CSRArrays.  ``dense=False``: CSRArrays always.
    A file that lists many zeros is larger dense than CSR (8 bytes a listed value against 12
    a non-zero: MQ2008's train file, 53% non-zero, 3.5 MB against 2.8 MB); it is kept dense:
    its rows are held dense while they are read, so making them CSR afterwards would not
    lower the reading's peak.

    ``label_rules``: LabelRules every label must pass; the first label refused (by line) is
    an InputFormatError naming its file and line, raised once its file has parsed (a
    malformed line comes first).  (load_svmlight's ``max_label`` is such a rule.)

    ``width_of``: the file ``n_features`` comes from (the model a test file is scored with,
    the training file a validation file goes with).  The data must have the same features:
    a feature index above n_features, or a file in the dense layout with d != n_features
    (every line lists the features 1..d, zeros written out as some value shows: LETOR's
    files), is refused naming both files; a file that leaves out zero features (SVMlight's
    sparse lines) may have fewer."""
    if n_features is not None:
        if not isinstance(n_features, (int, np.integer)) or not 0 <= n_features <= MAX_INDEX:
            raise InputFormatError(
                f"n_features must be an integer in [0, {MAX_INDEX}], got {n_features!r}"
            )
        n_features = int(n_features)
    if isinstance(path_or_paths, (str, os.PathLike)):
        path_or_paths = [path_or_paths]
    if isinstance(n_threads, bool) or not isinstance(n_threads, (int, np.integer)) or \
            n_threads < 1:
        raise InputFormatError(f"n_threads must be a positive integer, got {n_threads!r}")
    dtype = _storage_dtype(dtype)
    largest = math.inf if max_abs_value is None else float(max_abs_value)
    if dtype == np.float32:
        largest = min(largest, float(np.finfo(np.float32).max))
    if width_of is not None and n_features is None:
        raise InputFormatError("width_of names where n_features comes from: give n_features")
    limits = _Limits(n_features, largest, None if width_of is None else str(width_of))
    parts = []
    with ExitStack() as stack:
        sources = [source for given in path_or_paths for source in open_sources(given, stack)]
        if not sources:
            raise InputFormatError("no input files")
        if files_read is not None:
            files_read += input_files([s for s in sources if not isinstance(s, Source)])
        if group is not None and len(sources) != 1:
            raise InputFormatError("a group file goes with a single data file", group)
        for source in sources:  # listed files are opened one at a time
            try:
                with source if isinstance(source, Source) else Source(source) as opened:
                    parts.append(_parse_source(opened, limits, group, return_comments,
                                               thread_count(n_threads), dtype,
                                               tuple(label_rules), dense))
            except MemoryError:  # name the file being read (the command adds what to do)
                raise MemoryError(f"reading {getattr(source, 'path', source)}") from None
    _number_group_queries(parts, sources)
    if n_features is None:
        n_features = max(part.max_index for part in parts)
    X = _matrix(parts, n_features)
    y = np.concatenate([part.labels for part in parts])
    if all(part.qid is not None for part in parts):
        qid = np.concatenate([part.qid for part in parts])
    else:
        qid = np.array([q for part in parts for q in part.qid_text()], dtype=str)
    if not return_comments:
        return X, y, qid
    return X, y, qid, [c for part in parts for c in part.comments]


def _line_of_row(text, row):
    """The line number of the ``row``-th document (0-based) of a data file's text."""
    for k, (lineno, _, _) in enumerate(data_lines(text)):
        if k == row:
            return lineno
    return None


def _number_group_queries(parts, sources):
    """Queries numbered from group files run on through the files: part k's 1, 2, ... follow
    the previous parts' (so that two files' queries are never merged); such parts cannot be
    mixed with parts whose lines carry ``qid:``."""
    grouped = [part.from_group for part in parts]
    if not any(grouped):
        return
    if not all(grouped):
        with_qid = sources[grouped.index(False)]
        raise InputFormatError(
            "the lines carry qid: but other files read with it take their queries from "
            "group files: their query ids would be confused; give every file qid: or a "
            "group file", getattr(with_qid, "path", with_qid))
    offset = 0
    for part in parts:
        part.qid = part.qid + offset
        offset = int(part.qid[-1]) if len(part.qid) else offset


def _storage_dtype(dtype):
    """np.float64 or np.float32, the storages load_svmlight offers for X."""
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        dtype = None
    if dtype not in (np.float64, np.float32):
        raise ValueError(f"dtype must be np.float64 or np.float32, got {dtype!r}")
    return dtype


@dataclass
class _Part:
    """One data file parsed: labels, its rows as CSR arrays (0-based columns, no zeros) or
    dense (``values`` the C-contiguous (rows, columns) matrix, ``indptr`` and ``indices``
    None), the largest feature index seen (zero values included), query ids as int64
    (``qid``, None when some are not integers) and/or their texts, and the comments when
    asked for."""

    labels: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    max_index: int
    qid: np.ndarray
    qid_texts: list
    comments: list
    from_group: bool = False

    @property
    def dense(self):
        return self.indptr is None

    def csr(self):
        """(indptr, indices, values) of the rows (a dense part's made by numpy: a copy)."""
        if not self.dense:
            return self.indptr, self.indices, self.values
        stored = self.values != 0
        indptr = np.zeros(len(self.values) + 1, dtype=np.int64)
        np.cumsum(stored.sum(axis=1), out=indptr[1:])
        return indptr, np.nonzero(stored)[1].astype(np.int64), self.values[stored]

    def qid_text(self):
        """The query ids as the file wrote them."""
        if self.qid_texts is not None:
            return self.qid_texts
        return [str(q) for q in self.qid.tolist()]


def _matrix(parts, n_features):
    """X of the parts' rows, ``n_features`` columns: the single part's arrays as they are
    (not copied); several dense parts, each no wider than n_features and fitting
    :func:`_pads_cheaply`, stacked in one ndarray; else CSRArrays."""
    if len(parts) == 1 and parts[0].dense and parts[0].values.shape[1] == n_features:
        return parts[0].values
    if len(parts) > 1 and all(part.dense and _pads_cheaply(part.values.shape[1], n_features,
                                                           part.values.dtype)
                              for part in parts):
        X = np.zeros((sum(len(part.values) for part in parts), n_features),
                     dtype=parts[0].values.dtype)
        start = 0
        for part in parts:
            rows, width = part.values.shape
            X[start:start + rows, :width] = part.values
            start += rows
        return X
    return _csr([part.csr() for part in parts], n_features)


def _pads_cheaply(width, columns, dtype):
    """Whether rows of ``width`` values made ``columns`` wide (zeros after) take no more
    memory than the CSR arrays of the ``width`` values (int32 indices)."""
    itemsize = np.dtype(dtype).itemsize
    return width <= columns and itemsize * columns <= (itemsize + 4) * width


def _csr(parts, n_features):
    """The CSRArrays of the parts' (indptr, indices, values) (the single part's arrays are
    used, not copied): indices and indptr int32 when every index and offset fits, as scipy
    keeps them, else intp."""
    n_rows = sum(len(indptr) - 1 for indptr, _, _ in parts)
    n_stored = sum(len(values) for _, _, values in parts)
    fits = max(n_rows, n_stored, n_features) <= np.iinfo(np.int32).max
    dtype = np.int32 if fits else np.intp
    if len(parts) == 1:
        indptr, indices, values = parts[0]
        indices, indptr = (a.astype(dtype, copy=False) for a in (indices, indptr))
    else:
        values = np.concatenate([values for _, _, values in parts])
        indices = np.concatenate([indices.astype(dtype, copy=False) for _, indices, _ in parts])
        offsets = np.cumsum([0] + [len(values) for _, _, values in parts])
        indptr = np.concatenate([np.zeros(1, dtype=dtype)] +
                                [(indptr[1:] + offset).astype(dtype)
                                 for (indptr, _, _), offset in zip(parts, offsets)])
    return CSRArrays(values, indices, indptr, (n_rows, n_features))


def _parse_source(source, limits, group, return_comments, n_threads=1, dtype=np.float64,
                  label_rules=(), dense=True):
    """Parse one data file (a Source) into a _Part; without ``qid:`` on its lines, number its
    queries from the group file (``group``, or ``<path>.query`` when it exists)."""
    path = source.path
    first = source.first_line
    with_qid = has_qid(first)
    if group is None and not with_qid and str(path) != STDIN_NAME:
        beside = Path(f"{path}{GROUP_SUFFIX}")
        group = beside if beside.is_file() else None
    if group is None:
        try:
            return _parse(path, source, limits, return_comments, n_threads=n_threads,
                          dtype=dtype, label_rules=label_rules, dense=dense)
        except InputFormatError as err:
            if with_qid or err.reason != MISSING_QID or err.line != first[0]:
                raise
            raise InputFormatError(f"{MISSING_QID} (data without qid: takes its queries from "
                                   f"a group file: {path.name}{GROUP_SUFFIX} beside it, or "
                                   "--group FILE)", path, err.line) from None
    if with_qid:
        raise InputFormatError(f"the lines carry qid: and a group file ({group}) was given: "
                               "use one or the other", path, first[0])
    part = _parse(path, source, limits, return_comments, with_qid=False, n_threads=n_threads,
                  dtype=dtype, label_rules=label_rules, dense=dense)
    part.qid, part.qid_texts = group_qids(group, len(part.labels), path), None
    part.from_group = True
    return part


#: bytes of text a thread parses at a time: a file is read in blocks of this many bytes per
#: thread, so that reading holds the arrays it returns and one block, never the whole text
BLOCK_BYTES = 1 << 23


def _parse(path, data, limits, return_comments, with_qid=True, n_threads=1, dtype=np.float64,
           label_rules=(), block_bytes=None, dense=True):
    """Parse one data file (a Source, or its bytes) into a _Part (``with_qid=False``: lines
    are ``<label> <index>:<value> ...``, and the _Part has no query ids), block by block
    (:class:`_Reading`), ``n_threads`` at a time, values stored as ``dtype``, dense when
    ``dense`` and every line lists the features 1..d (read_svmlight); a label one of
    ``label_rules`` refuses is refused once the whole file has parsed (a malformed line
    comes first);
    ``block_bytes``: a thread's block (default BLOCK_BYTES)."""
    size = (BLOCK_BYTES if block_bytes is None else block_bytes) * n_threads
    blocks = data.blocks(size) if isinstance(data, Source) else line_blocks(data, size)
    total = data.plain_size if isinstance(data, Source) else len(data)
    reading = _Reading(path, limits, with_qid, return_comments, dtype, label_rules, total,
                       dense)
    try:
        for block in blocks:
            reading.add(block, n_threads)
    finally:
        blocks.close()  # its views of the file released now, not with a traceback
    return reading.part()


class _Reading:
    """A data file's rows, appended block by block (each block ends at a line end): the
    arrays grow in the extension's MatrixBuilder (dense, then CSR from the first line that
    breaks the pattern, when ``dense``), per-row labels, query ids and comments in
    lists of the blocks' arrays.  A block is parsed by the extension unless its text has
    whitespace beyond ASCII (then by :func:`_parse_text`); line numbers in messages run on
    through the blocks."""

    def __init__(self, path, limits, with_qid, return_comments, dtype, label_rules=(),
                 total_bytes=None, dense=True):
        self.path, self.limits, self.with_qid = path, limits, with_qid
        #: the bytes of the whole file when known (the arrays are reserved for it)
        self.total_bytes = total_bytes or 0
        self.label_rules = label_rules
        self.builder, self.builder_dtype = MatrixBuilder(dtype, dense=dense), dtype
        self.labels, self.qid_ints = [], []
        #: every query id is an integer; the texts, kept once one is not str() of its integer
        self.qids_are_int, self.qid_texts = True, None
        self.comments = [] if return_comments else None
        #: lines of the blocks before the current one
        self.lines = 0
        #: the first label a label rule refuses: (reason, line)
        self.label_error = None

    def add(self, block, n_threads):
        """Parse one block and append its rows."""
        if not is_ascii(block):
            text = decode(block, self.path, self.lines)
            if _UNICODE_SPACE_RE.search(text):
                return self._add_text(block, text)
        n_features, max_abs_value, _ = self.limits
        parsed = self.builder.parse_block(block, MAX_INDEX if n_features is None else
                                          n_features, max_abs_value, self.with_qid, n_threads,
                                          total_bytes=self.total_bytes)
        if parsed["error_line"]:
            raise InputFormatError(_excerpt_reason(block, parsed["error_start"],
                                                   parsed["error_end"], self.limits,
                                                   self.with_qid),
                                   self.path, self.lines + parsed["error_line"])

        def texts(kind):
            starts, lengths = parsed[f"{kind}_start"].tolist(), parsed[f"{kind}_length"].tolist()
            return [str(block[a:a + n], "utf-8") for a, n in zip(starts, lengths)]

        if self.with_qid:
            self._add_qids(parsed["qid_int"], parsed["qids_are_int"],
                           parsed["qids_are_int"] and parsed["qids_canonical"],
                           lambda: texts("qid"))
        if self.comments is not None:
            self.comments += texts("comment")
        self._add_labels(block, parsed["labels"])
        self.lines += parsed["lines_read"]

    def _add_text(self, block, text):
        """Append the rows of a block's decoded text, parsed by :func:`_parse_text`."""
        part = _parse_text(self.path, text, self.limits, self.with_qid, self.lines, True)
        self.builder.append(part.indptr, part.indices, part.values, part.max_index)
        if self.with_qid:
            qid = part.qid if part.qid is not None else np.zeros(0, dtype=np.int64)
            self._add_qids(qid, part.qid is not None, part.qid is not None and
                           [str(q) for q in qid.tolist()] == part.qid_texts,
                           lambda: part.qid_texts)
        if self.comments is not None:
            self.comments += part.comments
        self._add_labels(block, part.labels)
        self.lines += len(split_lines(text)) - (text[-1] in "\r\n")

    def _add_qids(self, qid_int, are_int, canonical, texts):
        """Append a block's query ids: integers (when ``are_int``), and their texts (called
        for) once some block's are not all str() of their integers (``canonical``)."""
        if self.qid_texts is None and not canonical:  # every earlier query id was canonical
            self.qid_texts = [str(q) for q in np.concatenate(self.qid_ints).tolist()] \
                if self.qid_ints else []
        if self.qid_texts is not None:
            self.qid_texts += texts()
        self.qids_are_int = self.qids_are_int and are_int
        self.qid_ints = self.qid_ints + [qid_int] if self.qids_are_int else []

    def _add_labels(self, block, labels):
        """Append a block's labels, noting the first a label rule refuses."""
        self.labels.append(labels)
        if self.label_error is not None:
            return
        refused = [(int(rows[0]), rule) for rule in self.label_rules
                   if len(rows := np.flatnonzero(rule.refuses(labels)))]
        if refused:
            row, rule = min(refused, key=lambda found: found[0])
            text = str(block, "utf-8", "replace")
            self.label_error = (rule.reason(float(labels[row])),
                                self.lines + _line_of_row(text, row))

    def part(self):
        """The _Part of every block read (a malformed line was raised before)."""
        if self.label_error is not None:
            raise InputFormatError(self.label_error[0], self.path, self.label_error[1])
        if self.builder.rows == 0:
            raise InputFormatError("no data lines", self.path)
        max_index = int(self.builder.max_index)
        columns = self.limits.n_features  # given: dense rows padded to it, or CSR
        # the dense layout's width (zeros written out: the file lists every feature)
        rows, width = self.builder.rows, self.builder.width if self.builder.dense else None
        if self.builder.dense and columns is not None and \
                not _pads_cheaply(self.builder.width, columns, self.builder_dtype):
            self.builder.to_csr()
        indptr, indices, values = self.builder.finish(-1 if columns is None else columns)
        if self.limits.width_of is not None and width is not None and width != columns and \
                (len(values) < rows * width if indptr is not None
                 else np.any(values[:, :width] == 0)):
            raise InputFormatError(
                f"every line lists the features 1..{width}, zeros written out, but "
                f"{self.limits.width_of} has {columns} features: a file that lists every "
                "feature must list the same ones (one that leaves out zeros may have fewer)",
                self.path)
        return _Part(labels=np.concatenate(self.labels), indptr=indptr, indices=indices,
                     values=values, max_index=max_index,
                     qid=np.concatenate(self.qid_ints) if self.with_qid and self.qids_are_int
                     else None,
                     qid_texts=self.qid_texts, comments=self.comments)


def _excerpt_reason(data, start, end, limits, with_qid):
    """Why the line data[start:end] is malformed, from its first _EXCERPT_BYTES at most (a
    "line" can be most of a file: a data line followed by a sparse hole of NUL bytes made
    text of a whole gibibyte), quoting no token at length (_QUOTE_CHARS)."""
    cut = end - start > _EXCERPT_BYTES
    line = str(data[start:start + _EXCERPT_BYTES], "utf-8", "replace")
    reason = _line_reason(line, limits, with_qid)
    if cut and len(line.split()) > 1:  # the last token is cut: blame it only if nothing else
        whole_tokens = _line_reason(line[:len(line.rstrip()) - len(line.split()[-1])],
                                    limits, with_qid)
        reason = reason if whole_tokens == "malformed line" else whole_tokens
    if cut and reason == "malformed line":
        reason = f"malformed line of {end - start} bytes (its first {_EXCERPT_BYTES} bytes " \
                 "are well-formed)"
    return _LONG_QUOTE_RE.sub(lambda m: m[0][:_QUOTE_CHARS] + "...'", reason)


#: a malformed line is diagnosed from its first this many bytes
_EXCERPT_BYTES = 1 << 16
#: a token a message quotes is cut after this many characters
_QUOTE_CHARS = 40
_LONG_QUOTE_RE = re.compile(rf"'[^']{{{_QUOTE_CHARS},}}'")


def _line_reason(line, limits, with_qid):
    """Why the line ``line`` (its text) is malformed."""
    tokens = line.partition("#")[0].split()
    features = tokens[2 if with_qid else 1:]
    return (_line_error(tokens, " ".join(features), limits, with_qid)
            or _feature_error(features, limits) or "malformed line")


def _parse_text(path, text, limits, with_qid=True, lines_before=0, block=False):
    """Parse one data file's decoded text in Python (the same rules as the extension) into a
    _Part; used for text with whitespace beyond ASCII.  ``lines_before``: the lines of the
    file before ``text``; ``block``: text is a block of the file (it may hold no data
    line)."""
    labels, qids, feats, linenos, comments = [], [], [], [], []
    first_feature = 2 if with_qid else 1
    for lineno, tokens, comment in data_lines(text):
        lineno += lines_before
        joined = " ".join(tokens[first_feature:])
        reason = _line_error(tokens, joined, limits, with_qid)
        if reason is not None:
            _features(path, feats, linenos, limits)  # an earlier line's error comes first
            raise InputFormatError(reason, path, lineno)
        labels.append(float(tokens[0]))
        if with_qid:
            qids.append(tokens[1][4:])
        feats.append(joined)
        linenos.append(lineno)
        comments.append(comment)
    if not labels:
        if not block:
            raise InputFormatError("no data lines", path)
        return _Part(labels=np.zeros(0), indptr=np.zeros(1, dtype=np.int64),
                     indices=np.zeros(0, dtype=np.int64), values=np.zeros(0), max_index=0,
                     qid=np.zeros(0, dtype=np.int64) if with_qid else None,
                     qid_texts=[] if with_qid else None, comments=[])
    index, value, counts = _features(path, feats, linenos, limits)
    keep = value != 0
    indptr = np.zeros(len(labels) + 1, dtype=np.int64)
    np.cumsum(np.bincount(np.repeat(np.arange(len(labels)), counts)[keep],
                          minlength=len(labels)), out=indptr[1:])
    qid = _qid_array(qids) if with_qid else None
    return _Part(labels=np.array(labels, dtype=np.float64), indptr=indptr,
                 indices=index[keep].astype(np.int64) - 1, values=value[keep],
                 max_index=int(index.max()) if index.size else 0,
                 qid=qid if qid is not None and qid.dtype == np.int64 else None,
                 qid_texts=qids if with_qid else None, comments=comments)


def _line_error(tokens, joined, limits, with_qid=True):
    """The reason a line is malformed as far as per-line checks can tell, or None."""
    label = tokens[0]
    if ":" in label:
        return "missing label"
    if not _NUMBER_RE.fullmatch(label) or not math.isfinite(float(label)):
        return f"label {label!r} is not a finite number"
    if with_qid:
        if len(tokens) < 2 or not tokens[1].startswith("qid:"):
            return MISSING_QID
        if not tokens[1][4:] or ":" in tokens[1][4:]:
            return f"malformed qid {tokens[1]!r}"
    elif len(tokens) > 1 and tokens[1].startswith("qid:"):
        return "qid: on a line of data whose queries come from a group file"
    if not _FEATURES_RE.fullmatch(joined):
        return _feature_error(tokens[2 if with_qid else 1:], limits)
    return None


def _feature_error(tokens, limits):
    """The reason the first bad token of a line's ``index:value`` tokens is bad, or None;
    ``limits``: (n_features or None, largest magnitude of a value)."""
    n_features, max_abs_value, width_of = limits
    previous = 0
    for token in tokens:
        index_text, colon, value_text = token.partition(":")
        if not (colon and index_text and value_text):
            return f"malformed feature {token!r} (expected <index>:<value>)"
        if not _INDEX_RE.fullmatch(index_text) or int(index_text) == 0:
            return f"feature index {index_text!r} is not a positive integer"
        index = int(index_text)
        if n_features is not None and index > n_features:
            if width_of is not None:
                return (f"feature index {index} exceeds the {n_features} features of "
                        f"{width_of} (a file may have fewer features, never more)")
            return f"feature index {index} exceeds n_features={n_features}"
        if index > MAX_INDEX:
            return f"feature index {index} is too large (max {MAX_INDEX})"
        if index == previous:
            return f"feature index {index} repeated"
        if index < previous:
            return f"feature index {index} after {previous}: indices must increase"
        if not _NUMBER_RE.fullmatch(value_text) or not math.isfinite(float(value_text)):
            return f"feature {index}: value {value_text!r} is not a finite number"
        if abs(float(value_text)) > max_abs_value:
            return (f"feature {index}: value {value_text!r} is too large (magnitude at most "
                    f"{max_abs_value:g}; scale the features)")
        previous = index
    return None


def _features(path, feats, linenos, limits):
    """Parse the feature tokens of lines that passed the per-line checks, in one pass.

    ``feats[k]`` holds line ``linenos[k]``'s tokens joined by single spaces. Raises for the first
    line with an index out of range, indices not increasing, or a value that overflows to
    infinity or exceeds the largest magnitude of ``limits``; returns float64 indices and
    values, and int64 feature counts per line.
    """
    # lines without features are left out of the join: numpy reads " " as [-1.0]
    pairs = np.fromstring(" ".join(f for f in feats if f).replace(":", " "), sep=" ")
    index, value = pairs[0::2], pairs[1::2]
    counts = np.array([f.count(":") for f in feats], dtype=np.int64)
    starts = np.cumsum(counts) - counts
    not_increasing = np.zeros(index.shape, dtype=bool)
    not_increasing[1:] = index[1:] <= index[:-1]
    not_increasing[starts[counts > 0]] = False
    n_features, max_abs_value, _ = limits
    limit = MAX_INDEX if n_features is None else n_features
    bad = not_increasing | (index > limit) | ~np.isfinite(value) | \
        (np.abs(value) > max_abs_value)
    if bad.any():
        row = int(np.searchsorted(starts, np.argmax(bad), side="right")) - 1
        reason = _feature_error(feats[row].split(" "), limits)
        raise InputFormatError(reason, path, linenos[row])
    return index, value, counts


def _qid_array(qids):
    """int64 array when every query id is an integer that fits, otherwise a str array."""
    if all(map(_INT_RE.fullmatch, qids)):
        try:
            return np.array([int(q) for q in qids], dtype=np.int64)
        except OverflowError:
            pass
    return np.array(qids, dtype=str)
