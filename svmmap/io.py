"""Reading and writing SVMlight / LETOR ranking data.

Format: one document per line, ::

    <label> qid:<q> <index>:<value> <index>:<value> ... # comment

* ``label`` is any finite number: ``+1``/``-1`` (the original SVM-MAP sample), graded
  relevance ``0..4`` (LETOR), or another float.
* ``qid:<q>`` must follow the label. Query ids are integers, or arbitrary strings without
  whitespace, ``:`` or ``#``. The documents of a query need not be on contiguous lines: rows
  keep file order and the learners group them by ``qid`` themselves.
* Feature indices are positive integers (1-based: index ``i`` is column ``i - 1``) in strictly
  increasing order on each line; values are finite decimal numbers. Omitted features are zero.
* Text after ``#`` is a comment (LETOR puts ``docid = ...`` there). Blank and comment-only
  lines are skipped. Tokens are separated by any whitespace, lines end in ``\\n`` or ``\\r\\n``,
  and the file is UTF-8 (a leading byte-order mark is ignored).

Any deviation raises :class:`~svmmap.errors.InputFormatError` naming the file and line.
"""

import math
import os
import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .atomic import write_text_atomically
from .errors import InputFormatError

__all__ = ["load_svmlight", "dump_svmlight"]

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


def load_svmlight(path_or_paths, n_features=None, *, return_comments=False):
    """Read SVMlight / LETOR ranking data (format in the module docstring).

    Parameters
    ----------
    path_or_paths : str, PathLike, or list of them
        A data file, an *index file*, or a list of either, read and concatenated in order.
        An index file (as accepted by the original ``svm_map_learn``) lists one data file
        per non-blank, non-comment line, relative paths being taken from the index file's
        directory; it is recognised by its first non-comment line holding a single token
        that is not a number and contains no ``:``.
    n_features : int, optional
        Number of columns of ``X``; an index above it is an error. By default the largest
        index seen in the files (zero-valued features included).
    return_comments : bool
        Also return each document's comment (text after ``#``, stripped; ``''`` if none).

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
    sources = [source for given in path_or_paths for source in _sources(Path(given))]
    if not sources:
        raise InputFormatError("no input files")
    parts = [_parse(path, text, n_features) for path, text in sources]

    labels = [v for part in parts for v in part[0]]
    qids = [q for part in parts for q in part[1]]
    comments = [c for part in parts for c in part[2]]
    index, value, counts = (np.concatenate([part[k] for part in parts]) for k in (3, 4, 5))

    rows = len(labels)
    keep = value != 0
    row_of = np.repeat(np.arange(rows), counts)
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(row_of[keep], minlength=rows), out=indptr[1:])
    if n_features is None:
        n_features = int(index.max()) if index.size else 0
    X = sp.csr_matrix(
        (value[keep], index[keep].astype(np.int64) - 1, indptr), shape=(rows, n_features)
    )
    y = np.array(labels, dtype=np.float64)
    qid = _qid_array(qids)
    return (X, y, qid, comments) if return_comments else (X, y, qid)


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


def _number(v):
    """Shortest text that reads back as the float ``v``, without a trailing ``.0``."""
    text = repr(v)
    return text[:-2] if text.endswith(".0") else text


def _read_text(path):
    """Return the decoded contents of a data or index file."""
    if os.path.isdir(path):
        raise InputFormatError("is a directory", path)
    if not os.path.exists(path):
        raise InputFormatError("file not found", path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise InputFormatError(f"cannot read: {err.strerror}", path) from None
    if not data:
        raise InputFormatError("empty file", path)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise InputFormatError(
            f"not valid UTF-8 (byte 0x{data[err.start]:02x})", path, line
        ) from None


def _data_lines(text):
    """Yield (line number, tokens, comment) for every line that is not blank or a comment."""
    for lineno, line in enumerate(text.split("\n"), 1):
        body, _, comment = line.partition("#")
        tokens = body.split()
        if tokens:
            yield lineno, tokens, comment.strip()


def _sources(path):
    """(path, text) of the data files named by ``path``: itself, or those an index file lists."""
    text = _read_text(path)
    first = next(_data_lines(text), None)
    if first is None or not _is_index_line(first[1]):
        return [(path, text)]
    sources = []
    for lineno, line in enumerate(text.split("\n"), 1):
        entry = line.partition("#")[0].strip()
        if not entry:
            continue
        listed = path.parent / entry
        if os.path.isdir(listed):
            raise InputFormatError(f"listed file {entry!r} is a directory", path, lineno)
        if not os.path.exists(listed):
            raise InputFormatError(f"listed file {entry!r} not found", path, lineno)
        sources.append((listed, _read_text(listed)))
    return sources


def _is_index_line(tokens):
    if len(tokens) != 1 or ":" in tokens[0]:
        return False
    try:
        float(tokens[0])
    except ValueError:
        return True
    return False


def _parse(path, text, n_features):
    """Parse one data file.

    Returns lists of labels, qid strings and comments, then the float64 arrays of all feature
    indices and values in file order and the int64 array of feature counts per line.
    """
    labels, qids, feats, linenos, comments = [], [], [], [], []
    for lineno, tokens, comment in _data_lines(text):
        joined = " ".join(tokens[2:])
        reason = _line_error(tokens, joined, n_features)
        if reason is not None:
            _features(path, feats, linenos, n_features)  # an earlier line's error comes first
            raise InputFormatError(reason, path, lineno)
        labels.append(float(tokens[0]))
        qids.append(tokens[1][4:])
        feats.append(joined)
        linenos.append(lineno)
        comments.append(comment)
    if not labels:
        raise InputFormatError("no data lines", path)
    return (labels, qids, comments, *_features(path, feats, linenos, n_features))


def _line_error(tokens, joined, n_features):
    """The reason a line is malformed as far as per-line checks can tell, or None."""
    label = tokens[0]
    if ":" in label:
        return "missing label"
    if not _NUMBER_RE.fullmatch(label) or not math.isfinite(float(label)):
        return f"label {label!r} is not a finite number"
    if len(tokens) < 2 or not tokens[1].startswith("qid:"):
        return "missing qid:<id> after the label"
    if not tokens[1][4:] or ":" in tokens[1][4:]:
        return f"malformed qid {tokens[1]!r}"
    if not _FEATURES_RE.fullmatch(joined):
        return _feature_error(tokens[2:], n_features)
    return None


def _feature_error(tokens, n_features):
    """The reason the first bad token of a line's ``index:value`` tokens is bad, or None."""
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
        previous = index
    return None


def _features(path, feats, linenos, n_features):
    """Parse the feature tokens of lines that passed the per-line checks, in one pass.

    ``feats[k]`` holds line ``linenos[k]``'s tokens joined by single spaces. Raises for the first
    line with an index out of range, indices not increasing, or a value that overflows to
    infinity; returns float64 indices and values, and int64 feature counts per line.
    """
    pairs = np.fromstring(" ".join(feats).replace(":", " "), sep=" ")
    index, value = pairs[0::2], pairs[1::2]
    counts = np.array([f.count(":") for f in feats], dtype=np.int64)
    starts = np.cumsum(counts) - counts
    not_increasing = np.zeros(index.shape, dtype=bool)
    not_increasing[1:] = index[1:] <= index[:-1]
    not_increasing[starts[counts > 0]] = False
    limit = MAX_INDEX if n_features is None else n_features
    bad = not_increasing | (index > limit) | ~np.isfinite(value)
    if bad.any():
        row = int(np.searchsorted(starts, np.argmax(bad), side="right")) - 1
        reason = _feature_error(feats[row].split(" "), n_features)
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
