"""The rules of an SVMlight / LETOR data line (svmmap.data.io's module docstring) in Python:
the parser of text the extension does not take (whitespace beyond ASCII), :func:`parse_text`,
and the reason for every refused line, :func:`line_reason` and :func:`excerpt_reason` (the
extension stops at the first line it rejects; every message is defined here).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..errors import InputFormatError
from .sources import data_lines

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..core._typing import PathLike

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


MISSING_QID = "missing qid:<id> after the label"


class Limits(NamedTuple):
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


@dataclass
class Part:
    """One data file parsed: labels, its rows as CSR arrays (0-based columns, no zeros) or
    dense (``values`` the C-contiguous (rows, columns) matrix, ``indptr`` and ``indices``
    None), the largest feature index seen (zero values included), query ids as int64
    (``qid``, None when some are not integers) and/or their texts, and the comments when
    asked for."""

    labels: np.ndarray
    indptr: np.ndarray | None
    indices: np.ndarray | None
    values: np.ndarray
    max_index: int
    qid: np.ndarray | None
    qid_texts: list[str] | None
    comments: list[str] | None
    from_group: bool = False

    @property
    def dense(self) -> bool:
        """Whether the rows are the dense matrix ``values`` (no indptr, indices)."""
        return self.indptr is None

    def csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(indptr, indices, values) of the rows (a dense part's made by numpy: a copy)."""
        if self.indptr is not None and self.indices is not None:
            return self.indptr, self.indices, self.values
        stored = self.values != 0
        indptr = np.zeros(len(self.values) + 1, dtype=np.int64)
        np.cumsum(stored.sum(axis=1), out=indptr[1:])
        return indptr, np.nonzero(stored)[1].astype(np.int64), self.values[stored]

    def qid_text(self) -> list[str]:
        """The query ids as the file wrote them."""
        if self.qid_texts is not None:
            return self.qid_texts
        assert self.qid is not None  # a part holds its query ids as integers or as texts
        return [str(q) for q in self.qid.tolist()]



def excerpt_reason(data: bytes | memoryview, start: int, end: int, limits: Limits,
                   with_qid: bool) -> str:
    """Why the line data[start:end] is malformed, from its first _EXCERPT_BYTES at most (a
    "line" can be most of a file: a data line followed by a sparse hole of NUL bytes made
    text of a whole gibibyte), quoting no token at length (_QUOTE_CHARS)."""
    cut = end - start > _EXCERPT_BYTES
    line = str(data[start:start + _EXCERPT_BYTES], "utf-8", "replace")
    reason = line_reason(line, limits, with_qid)
    if cut and len(line.split()) > 1:  # the last token is cut: blame it only if nothing else
        whole_tokens = line_reason(line[:len(line.rstrip()) - len(line.split()[-1])],
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


def line_reason(line: str, limits: Limits, with_qid: bool) -> str:
    """Why the line ``line`` (its text) is malformed."""
    tokens = line.partition("#")[0].split()
    features = tokens[2 if with_qid else 1:]
    return (_line_error(tokens, " ".join(features), limits, with_qid)
            or _feature_error(features, limits) or "malformed line")


def parse_text(path: PathLike, text: str, limits: Limits, with_qid: bool = True,
               lines_before: int = 0, block: bool = False) -> Part:
    """Parse one data file's decoded text in Python (the same rules as the extension) into a
    Part; used for text with whitespace beyond ASCII.  ``lines_before``: the lines of the
    file before ``text``; ``block``: text is a block of the file (it may hold no data
    line)."""
    labels: list[float] = []
    qids: list[str] = []
    feats: list[str] = []
    linenos: list[int] = []
    comments: list[str] = []
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
        return Part(labels=np.zeros(0), indptr=np.zeros(1, dtype=np.int64),
                     indices=np.zeros(0, dtype=np.int64), values=np.zeros(0), max_index=0,
                     qid=np.zeros(0, dtype=np.int64) if with_qid else None,
                     qid_texts=[] if with_qid else None, comments=[])
    index, value, counts = _features(path, feats, linenos, limits)
    keep = value != 0
    indptr = np.zeros(len(labels) + 1, dtype=np.int64)
    np.cumsum(np.bincount(np.repeat(np.arange(len(labels)), counts)[keep],
                          minlength=len(labels)), out=indptr[1:])
    qid = _qid_array(qids) if with_qid else None
    return Part(labels=np.array(labels, dtype=np.float64), indptr=indptr,
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


def line_of_row(text: str, row: int) -> int | None:
    """The line number of the ``row``-th document (0-based) of a data file's text."""
    for k, (lineno, _, _) in enumerate(data_lines(text)):
        if k == row:
            return lineno
    return None

