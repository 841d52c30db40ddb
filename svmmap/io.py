"""Reading and writing SVMlight / LETOR ranking data.

Format: one document per line, ::

    <label> qid:<q> <index>:<value> <index>:<value> ... # comment

* ``label`` is any finite number: ``+1``/``-1`` (the original SVM-MAP sample), graded
  relevance ``0..4`` (LETOR), or another float.
* ``qid:<q>`` must follow the label. Query ids are integers, or arbitrary strings without
  whitespace, ``:`` or ``#``. The documents of a query need not be on contiguous lines: rows
  keep file order and the learners group them by ``qid`` themselves.
* Feature indices are positive integers (1-based: index ``i`` is column ``i - 1``) in strictly
  increasing order on each line; values are finite decimal numbers (the learners need
  magnitudes of at most 1e100, ``svmmap.options.MAX_ABS_VALUE``: see ``max_abs_value``).
  Omitted features are zero; a line may have none (``1 qid:1``).
* Text after ``#`` is a comment (LETOR puts ``docid = ...`` there). Blank and comment-only
  lines are skipped. Tokens are separated by any whitespace, lines end in ``\\n``, ``\\r\\n`` or
  ``\\r`` (old Mac OS), and the file is UTF-8 (a leading byte-order mark is ignored).

Files may be gzip-, bzip2- or xz-compressed (recognised by their first bytes, not by their
name); ``-`` reads standard input. Data without ``qid:`` takes its queries from a LightGBM-style
*group file*: one query size per line, the queries' documents on consecutive lines in that
order (``train.txt.query`` beside ``train.txt`` is used when present, or pass ``group=``).

Any deviation raises :class:`~svmmap.errors.InputFormatError` naming the file and line.

Layers: :class:`_Source` (file or stdin, decompression, memory map, byte-order mark) hands bytes
to the parser (:func:`_parse`), which knows nothing about where they came from.  The parser is
the extension (``_svmlight_reader``, C++: one counting scan, one parsing pass, numbers converted
with ``std::from_chars``, so every value is the float64 Python's ``float()`` gives); it stops
at the first line it rejects and :func:`_line_reason` explains why, so every message is defined
here.  Text with whitespace beyond ASCII (which ``str.split`` splits on) goes to the Python
parser of the same rules, :func:`_parse_text`.
"""

import bz2
import gzip
import lzma
import math
import mmap
import os
import re
import stat
import sys
import zlib
from contextlib import ExitStack
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ._svmlight_reader import is_ascii, parse_svmlight
from .atomic import write_text_atomically
from .errors import InputFormatError
from .options import ndcg_label_error, thread_count

__all__ = ["load_svmlight", "dump_svmlight", "input_files"]

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
_BOM = b"\xef\xbb\xbf"
_LINE_END_RE = re.compile(r"\r\n|\r|\n")
#: input_files reads this much of a file to tell an index file from a data file
_INDEX_HEAD_BYTES = 1 << 16


def _split_lines(text):
    """The lines of ``text``, ending in \\n, \\r\\n or \\r (the reader's line numbers)."""
    return _LINE_END_RE.split(text)


#: Standard input's name in arguments and in messages.
STDIN = "-"
STDIN_NAME = "<stdin>"
#: First bytes of the compressed formats read transparently, and their decompressors.
COMPRESSION = (
    (b"\x1f\x8b", "gzip", gzip.decompress, (OSError, EOFError, zlib.error)),
    (b"BZh", "bzip2", bz2.decompress, (OSError, EOFError, ValueError)),
    (b"\xfd7zXZ\x00", "xz", lzma.decompress, (lzma.LZMAError, EOFError)),
)
#: Suffix of the group file looked for beside a data file without ``qid:`` (LightGBM's).
GROUP_SUFFIX = ".query"
MISSING_QID = "missing qid:<id> after the label"


def load_svmlight(path_or_paths, n_features=None, *, return_comments=False, group=None,
                  max_abs_value=None, n_threads=1, max_label=None, files_read=None):
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
        tools pass ``svmmap.options.MAX_ABS_VALUE`` (1e100), which the learners require
        anyway; by default every finite value is read (what ``dump_svmlight`` writes).
    n_threads : int
        Threads parsing a file: its text is cut at line ends into up to that many chunks of
        at least 1 MiB, parsed in parallel and merged; the result is the same as with one.
    max_label : float, optional
        Refuse, with file and line, a label above it (``svmmap_learn -l ndcg...`` passes
        ``svmmap.options.MAX_NDCG_LABEL``: the gain 2^label - 1 of a larger grade overflows).
    files_read : list, optional
        The data files index files list, and the group files beside them, are appended to it
        before they are read: for an index file on standard input or in a pipe, which
        :func:`input_files` does not read (the commands check their output against them).

    Returns
    -------
    X : scipy.sparse.csr_matrix of float64, shape (m, d)
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
    limits = (n_features, math.inf if max_abs_value is None else float(max_abs_value))
    parts = []
    with ExitStack() as stack:
        sources = [source for given in path_or_paths for source in _sources(given, stack)]
        if not sources:
            raise InputFormatError("no input files")
        if files_read is not None:
            files_read += input_files([s for s in sources if not isinstance(s, _Source)])
        if group is not None and len(sources) != 1:
            raise InputFormatError("a group file goes with a single data file", group)
        for source in sources:  # listed files are opened one at a time
            try:
                with source if isinstance(source, _Source) else _Source(source) as opened:
                    parts.append(_parse_source(opened, limits, group, return_comments,
                                               thread_count(n_threads)))
                    if max_label is not None:
                        _check_labels(opened, parts[-1].labels, max_label)
            except MemoryError:  # name the file being read (the command adds what to do)
                raise MemoryError(f"reading {getattr(source, 'path', source)}") from None
    _number_group_queries(parts, sources)
    if n_features is None:
        n_features = max(part.max_index for part in parts)
    X = _csr(parts, n_features)
    y = np.concatenate([part.labels for part in parts])
    if all(part.qid is not None for part in parts):
        qid = np.concatenate([part.qid for part in parts])
    else:
        qid = np.array([q for part in parts for q in part.qid_text()], dtype=str)
    if not return_comments:
        return X, y, qid
    return X, y, qid, [c for part in parts for c in part.comments]


def _check_labels(source, labels, max_label):
    """Refuse, naming the file and line, the first label above ``max_label`` (an NDCG loss's
    largest grade: svmmap.options.ndcg_label_error)."""
    over = np.flatnonzero(labels > max_label)
    if len(over):
        row = int(over[0])
        raise InputFormatError(ndcg_label_error(labels[row]), source.path,
                               _line_of_row(source.view, row))


def _line_of_row(data, row):
    """The line number of the ``row``-th document (0-based) of a data file's bytes."""
    text = str(data, "utf-8", "replace")
    for k, (lineno, _, _) in enumerate(_data_lines(text)):
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


@dataclass
class _Part:
    """One data file parsed: labels, CSR arrays of its rows (0-based columns, no zeros), the
    largest feature index seen (zero values included), query ids as int64 (``qid``, None
    when some are not integers) and/or their texts, and the comments when asked for."""

    labels: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    max_index: int
    qid: np.ndarray
    qid_texts: list
    comments: list
    from_group: bool = False

    def qid_text(self):
        """The query ids as the file wrote them."""
        if self.qid_texts is not None:
            return self.qid_texts
        return [str(q) for q in self.qid.tolist()]


def _csr(parts, n_features):
    """One CSR matrix of the parts' rows (the single part's arrays are used, not copied)."""
    if len(parts) == 1:
        part = parts[0]
        values, indices, indptr = part.values, part.indices, part.indptr
    else:
        dtype = np.result_type(*(part.indptr for part in parts))
        values = np.concatenate([part.values for part in parts])
        indices = np.concatenate([part.indices.astype(dtype, copy=False) for part in parts])
        offsets = np.cumsum([0] + [len(part.values) for part in parts])
        indptr = np.concatenate([[0]] + [part.indptr[1:].astype(dtype) + offset
                                         for part, offset in zip(parts, offsets)])
    return sp.csr_matrix((values, indices, indptr), shape=(len(indptr) - 1, n_features))


def dump_svmlight(path, X, y, qid, comments=None):
    """Write documents in the format :func:`load_svmlight` reads, atomically.

    ``X`` (dense or sparse, shape (m, d)) is written with 1-based indices, zero entries
    omitted, and every number in its shortest form that reads back to the same float64
    (trailing ``.0`` dropped). Trailing all-zero columns are not recorded: pass
    ``n_features=X.shape[1]`` when loading to get them back. ``qid`` holds integers or strings
    without whitespace, ``:`` or ``#``; ``comments`` (one per row, single-line) are written
    after ``#``. The file is written to a temporary file in the same directory, then renamed.
    """
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    X.sum_duplicates()
    X.eliminate_zeros()
    y = np.asarray(y, dtype=np.float64)
    qid = np.asarray(qid)
    m = X.shape[0]
    if y.shape != (m,) or qid.shape != (m,):
        raise InputFormatError(
            f"X has {m} rows but y has shape {y.shape} and qid has shape {qid.shape}"
        )
    if not (np.all(np.isfinite(X.data)) and np.all(np.isfinite(y))):
        raise InputFormatError("X and y must be finite")
    qids = [str(q) for q in qid.tolist()]
    for q in qids:
        if not q or ":" in q or "#" in q or len(q.split()) != 1:
            raise InputFormatError(f"qid {q!r} cannot be written (empty, whitespace, ':' or '#')")
    if comments is None:
        comments = [""] * m
    if len(comments) != m:
        raise InputFormatError(f"X has {m} rows but {len(comments)} comments were given")
    if any("\n" in c or "\r" in c for c in comments):
        raise InputFormatError("comments must be single lines")

    lines = []
    for i, (label, q, comment) in enumerate(zip(y.tolist(), qids, comments)):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        feats = [
            f" {j + 1}:{_number(v)}"
            for j, v in zip(X.indices[lo:hi].tolist(), X.data[lo:hi].tolist())
        ]
        tail = f" # {comment}" if comment else ""
        lines.append(f"{_number(label)} qid:{q}{''.join(feats)}{tail}\n")

    write_text_atomically(path, lines)


def load_query_weights(path, qid):
    """The weight of every query of ``qid`` from a file of ``qid weight`` lines (``#``
    comments and blank lines ignored; the format ``svmmap_learn --query-weights`` reads):
    ``{qid value: weight}``, the keys as ``qid`` holds them.  Weights are finite and
    non-negative, each query listed once; a query of ``qid`` the file does not list is an
    error.  Query ids are compared as the reader makes them: when ``qid`` holds integers
    (load_svmlight reads ``qid:001`` as 1), a listed id that is an integer is compared as a
    number (``001`` and ``1`` are the same query); otherwise ids are compared as text."""
    text = _read_text(path)
    numeric = np.issubdtype(np.asarray(qid).dtype, np.integer)
    weights, lines = {}, {}
    for lineno, tokens, _ in _data_lines(text):
        if len(tokens) != 2:
            raise InputFormatError("expected 'qid weight'", path, lineno)
        name, value = tokens
        if name.startswith("qid:"):
            name = name[4:]
        if numeric and _INT_RE.fullmatch(name):
            name = str(int(name))
        try:
            weight = float(value)
        except ValueError:
            raise InputFormatError(f"weight {value!r} is not a number", path, lineno) from None
        if not (math.isfinite(weight) and weight >= 0):
            raise InputFormatError(f"weight {value!r} must be finite and non-negative", path,
                                   lineno)
        if name in weights:
            raise InputFormatError(f"query {name!r} listed twice (first on line "
                                   f"{lines[name]})", path, lineno)
        weights[name], lines[name] = weight, lineno
    found = {}
    for q in np.unique(np.asarray(qid)).tolist():
        if str(q) not in weights:
            raise InputFormatError(f"no weight for query {q!r} of the training data", path)
        found[q] = weights[str(q)]
    return found


def _number(v):
    """Shortest text that reads back as the float ``v``, without a trailing ``.0``."""
    text = repr(v)
    return text[:-2] if text.endswith(".0") else text


class _Source:
    """The bytes of a data, index or group file (``"-"``: standard input), decompressed when
    they start with the magic bytes of gzip, bzip2 or xz, without a leading byte-order mark:
    ``view`` (a memoryview; a plain file is memory-mapped, not copied) and ``path``, the name
    messages give.  Use it as a context manager (or ``close()``)."""

    def __init__(self, given):
        self.path = Path(STDIN_NAME if str(given) == STDIN else given)
        self._mapped = None
        if str(given) == STDIN:
            data = sys.stdin.buffer.read()
        else:
            data = self._map(self.path)
        for magic, name, decompress, errors in COMPRESSION:
            if data[:len(magic)] == magic:
                try:
                    data = decompress(data)
                except errors as err:
                    self.close()
                    raise InputFormatError(f"corrupt or truncated {name} data ({err})",
                                           self.path) from None
                self.close()
                break
        if not len(data):
            self.close()
            raise InputFormatError("empty file", self.path)
        self._whole = memoryview(data)
        self.view = self._whole[3:] if self._whole[:3] == _BOM else self._whole[:]

    @cached_property
    def first_line(self):
        """(line number, tokens) of the first line that is not blank or a comment, or None
        (:func:`_first_line`): found once, however many readers ask (is it an index file,
        does it carry ``qid:``)."""
        return _first_line(self.view)

    def _map(self, path):
        if os.path.isdir(path):
            raise InputFormatError("is a directory", path)
        if not os.path.exists(path):
            raise InputFormatError("file not found", path)
        try:
            with open(path, "rb") as file:
                try:
                    self._mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
                except (ValueError, OSError):  # empty, or not a regular file
                    return file.read()
        except OSError as err:
            raise InputFormatError(f"cannot read: {err.strerror}", path) from None
        return self._mapped

    def close(self):
        for name in ("view", "_whole"):
            if hasattr(self, name):
                getattr(self, name).release()
        if self._mapped is not None:
            self._mapped.close()
            self._mapped = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _read_text(path):
    """Return the decoded contents of an index or group file."""
    with _Source(path) as source:
        return _decode(source.view, source.path)


def _decode(data, path):
    """UTF-8 text of ``data`` (bytes-like), or the error naming the line of the first byte
    that is not UTF-8."""
    try:
        return str(data, "utf-8")
    except UnicodeDecodeError as err:
        line = len(_split_lines(str(data[:err.start], "utf-8")))
        raise InputFormatError(
            f"not valid UTF-8 (byte 0x{data[err.start]:02x})", path, line
        ) from None


def _first_line(data, step=_INDEX_HEAD_BYTES):
    """(line number, tokens) of the first line of ``data`` (bytes) that is not blank or a
    comment, or None; reads a head of the data that doubles until it holds that line whole."""
    size = step
    while True:
        head = str(data[:size], "utf-8", "replace")
        whole = size >= len(data)
        n_lines = len(_split_lines(head))
        for lineno, tokens, _ in _data_lines(head):
            if whole or lineno < n_lines:  # the head's last line may be cut
                return lineno, tokens
            break
        if whole:
            return None
        size *= 2


def _data_lines(text):
    """Yield (line number, tokens, comment) for every line that is not blank or a comment."""
    for lineno, line in enumerate(_split_lines(text), 1):
        body, _, comment = line.partition("#")
        tokens = body.split()
        if tokens:
            yield lineno, tokens, comment.strip()


def _sources(given, stack):
    """The data files named by ``given``: itself (an open _Source, registered on ``stack``), or
    the paths an index file lists (relative to the index file's directory; for standard
    input, the working directory)."""
    source = stack.enter_context(_Source(given))
    first = source.first_line
    if first is None or not _is_index_line(first[1]):
        return [source]
    path = source.path
    base = Path(".") if str(given) == STDIN else path.parent
    text = _decode(source.view, path)
    source.close()
    listed_files = []
    for lineno, entry, listed in _index_entries(base, text):
        if os.path.isdir(listed):
            raise InputFormatError(f"listed file {entry!r} is a directory", path, lineno)
        if not os.path.exists(listed):
            raise InputFormatError(f"listed file {entry!r} not found", path, lineno)
        listed_files.append(listed)
    return listed_files


def _index_entries(base, text):
    """(line number, entry, path) of every file an index file lists, relative to ``base``."""
    for lineno, line in enumerate(_split_lines(text), 1):
        entry = line.partition("#")[0].strip()
        if entry:
            yield lineno, entry, base / entry


def input_files(path_or_paths):
    """Every file :func:`load_svmlight` may read for ``path_or_paths`` (outputs are checked
    against all of them, see svmmap.atomic.check_output): each path given, the group file
    beside it (``<path>.query``), and when it is an index file (compressed or not) the data
    files it lists and the group files beside those.  Only the head of a file is read (and
    decompressed) to tell an index file, and only of a regular file: a pipe, a FIFO or
    standard input is read once, by load_svmlight.  Files that cannot be read are listed as
    given (loading them reports the problem)."""
    if isinstance(path_or_paths, (str, os.PathLike)):
        path_or_paths = [path_or_paths]
    files = []
    for given in path_or_paths:
        if str(given) == STDIN:
            continue
        files += [Path(given), Path(f"{given}{GROUP_SUFFIX}")]
        text = _head_text(given)
        first = None if text is None else next(_data_lines(text), None)
        if first is not None and _is_index_line(first[1]):
            try:
                text = _read_text(given)
            except InputFormatError:
                continue
            for _, _, listed in _index_entries(Path(given).parent, text):
                files += [listed, Path(f"{listed}{GROUP_SUFFIX}")]
    return files


def _head_text(path):
    """The first _INDEX_HEAD_BYTES of a regular file, decompressed as load_svmlight would
    (only that much is decompressed), as text; None for a file that is not regular or cannot
    be read."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as handle:
            magic = handle.read(8)
            handle.seek(0)
            opener = next((_OPENERS[name] for prefix, name, *_ in COMPRESSION
                           if magic.startswith(prefix)), None)
            if opener is None:
                head = handle.read(_INDEX_HEAD_BYTES)
            else:
                with opener(handle) as stream:
                    head = stream.read(_INDEX_HEAD_BYTES)
    except (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error):
        return None
    return head.decode("utf-8", errors="replace").removeprefix("\ufeff")


#: streaming readers of the compressed formats (a head is decompressed, not the whole file)
_OPENERS = {"gzip": lambda f: gzip.GzipFile(fileobj=f), "bzip2": bz2.BZ2File,
            "xz": lzma.LZMAFile}


def _is_index_line(tokens):
    if len(tokens) != 1 or ":" in tokens[0]:
        return False
    try:
        float(tokens[0])
    except ValueError:
        return True
    return False


def _parse_source(source, limits, group, return_comments, n_threads=1):
    """Parse one data file into a _Part; without ``qid:`` on its lines, number its queries
    from the group file (``group``, or ``<path>.query`` when it exists)."""
    path = source.path
    first = source.first_line
    has_qid = _has_qid(first)
    if group is None and not has_qid and str(path) != STDIN_NAME:
        beside = Path(f"{path}{GROUP_SUFFIX}")
        group = beside if beside.is_file() else None
    if group is None:
        try:
            return _parse(path, source.view, limits, return_comments, n_threads=n_threads)
        except InputFormatError as err:
            if has_qid or err.reason != MISSING_QID or err.line != first[0]:
                raise
            raise InputFormatError(f"{MISSING_QID} (data without qid: takes its queries from "
                                   f"a group file: {path.name}{GROUP_SUFFIX} beside it, or "
                                   "--group FILE)", path, err.line) from None
    if has_qid:
        raise InputFormatError(f"the lines carry qid: and a group file ({group}) was given: "
                               "use one or the other", path, first[0])
    part = _parse(path, source.view, limits, return_comments, with_qid=False,
                  n_threads=n_threads)
    part.qid, part.qid_texts = _group_qids(group, len(part.labels), path), None
    part.from_group = True
    return part


def _has_qid(first):
    """Whether a file's first data line ((line number, tokens) or None) carries ``qid:``."""
    return first is not None and len(first[1]) > 1 and first[1][1].startswith("qid:")


def group_file(path):
    """The group file load_svmlight takes the queries of the single data file ``path`` from
    when no ``group`` is given: ``<path>.query`` if it exists and the file's lines carry no
    ``qid:``; otherwise (and for standard input) None."""
    beside = Path(f"{path}{GROUP_SUFFIX}")
    if str(path) == STDIN or not beside.is_file():
        return None
    with _Source(path) as source:
        return None if _has_qid(source.first_line) else beside


def _group_qids(group, n_documents, data_path):
    """Query ids 1, 2, ... repeated by the sizes in a group file (one positive integer a line)."""
    sizes = []
    for lineno, tokens, _ in _data_lines(_read_text(group)):
        if len(tokens) != 1 or not _INDEX_RE.fullmatch(tokens[0]) or int(tokens[0]) == 0:
            raise InputFormatError(f"expected one query size (a positive integer), got "
                                   f"{' '.join(tokens)!r}", group, lineno)
        sizes.append(int(tokens[0]))
    if sum(sizes) != n_documents:
        raise InputFormatError(f"the query sizes add up to {sum(sizes)} documents but "
                               f"{data_path} has {n_documents}", group)
    return np.repeat(np.arange(1, len(sizes) + 1, dtype=np.int64), sizes)


def _parse(path, data, limits, return_comments, with_qid=True, n_threads=1):
    """Parse one data file's bytes into a _Part (``with_qid=False``: lines are ``<label>
    <index>:<value> ...``, and the _Part has no query ids), in the extension (``n_threads``
    at a time) unless the text has whitespace beyond ASCII (then :func:`_parse_text`)."""
    if not is_ascii(data):
        text = _decode(data, path)
        if _UNICODE_SPACE_RE.search(text):
            return _parse_text(path, text, limits, with_qid)
    n_features, max_abs_value = limits
    parsed = parse_svmlight(data, MAX_INDEX if n_features is None else n_features,
                            max_abs_value, with_qid, n_threads=n_threads)
    if parsed["error_line"]:
        raise InputFormatError(_excerpt_reason(data, parsed["error_start"],
                                               parsed["error_end"], limits, with_qid),
                               path, parsed["error_line"])
    if not len(parsed["labels"]):
        raise InputFormatError("no data lines", path)

    def texts(starts, lengths):
        return [str(data[a:a + n], "utf-8") for a, n in zip(starts.tolist(), lengths.tolist())]

    int_qids = with_qid and parsed["qids_are_int"]
    return _Part(
        labels=parsed["labels"], indptr=parsed["indptr"], indices=parsed["indices"],
        values=parsed["values"], max_index=parsed["max_index"],
        qid=parsed["qid_int"] if int_qids else None,
        qid_texts=None if not with_qid or (int_qids and parsed["qids_canonical"]) else
        texts(parsed["qid_start"], parsed["qid_length"]),
        comments=texts(parsed["comment_start"], parsed["comment_length"])
        if return_comments else None)


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


def _parse_text(path, text, limits, with_qid=True):
    """Parse one data file's decoded text in Python (the same rules as the extension) into a
    _Part; used for text with whitespace beyond ASCII."""
    labels, qids, feats, linenos, comments = [], [], [], [], []
    first_feature = 2 if with_qid else 1
    for lineno, tokens, comment in _data_lines(text):
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
        raise InputFormatError("no data lines", path)
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
    n_features, max_abs_value = limits
    previous = 0
    for token in tokens:
        index_text, colon, value_text = token.partition(":")
        if not (colon and index_text and value_text):
            return f"malformed feature {token!r} (expected <index>:<value>)"
        if not _INDEX_RE.fullmatch(index_text) or int(index_text) == 0:
            return f"feature index {index_text!r} is not a positive integer"
        index = int(index_text)
        if n_features is not None and index > n_features:
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
    n_features, max_abs_value = limits
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
