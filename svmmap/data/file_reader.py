"""One SVMlight / LETOR data file read into arrays, and the files' arrays made one X (the
front of the extension ``_svmlight_reader``; the loader API is svmmap.data.io).

A :class:`~svmmap.data.sources.Source` (file or stdin, decompression, memory map, byte-order
mark) hands bytes to :func:`parse` in blocks cut at line ends, and the parser knows nothing
about where they came from.  The parser is the extension (C++: per block one counting scan and
one parsing pass, numbers converted with ``std::from_chars``, so every value is the float64
Python's ``float()`` gives), whose arrays grow block by block: reading holds them and one
block, never the whole text.  They start dense (values only, 8 bytes a value in float64, as
svm_rank holds them) and become CSR in place at the first line that does not list the features
of the first, 1..d in order (12 bytes a stored value, zeros not stored); line numbers and
messages do not change.  It stops at the first line it rejects and
:func:`svmmap.data.line_parser.excerpt_reason` explains why (line numbers run on through the
blocks).  Text with whitespace beyond ASCII (which ``str.split`` splits on) goes to the Python
parser of the same rules, :func:`svmmap.data.line_parser.parse_text`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputFormatError
from ..kernels._kernel_inputs import CSRArrays
from ..kernels._svmlight_reader import MatrixBuilder, is_ascii
from .line_parser import (
    MAX_INDEX,
    MISSING_QID,
    LabelRule,
    Limits,
    Part,
    excerpt_reason,
    line_of_row,
    parse_text,
)
from .side_files import group_qids
from .sources import GROUP_SUFFIX, STDIN_NAME, Source, decode, has_qid, line_blocks, split_lines

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt

    from ..core._typing import PathLike

#: whitespace str.split() splits on beyond ASCII: such text goes to the Python parser
_UNICODE_SPACE_RE = re.compile("[\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")

#: bytes of text a thread parses at a time: a file is read in blocks of this many bytes per
#: thread, so that reading holds the arrays it returns and one block, never the whole text
BLOCK_BYTES = 1 << 23


def parse_source(source: Source, limits: Limits, group: PathLike | None,
                 return_comments: bool, n_threads: int = 1, dtype: npt.DTypeLike = np.float64,
                 label_rules: Sequence[LabelRule] = (), dense: bool = True) -> Part:
    """Parse one data file (a Source) into a Part; without ``qid:`` on its lines, number its
    queries from the group file (``group``, or ``<path>.query`` when it exists)."""
    path = source.path
    first = source.first_line
    first_lineno = None if first is None else first[0]
    with_qid = has_qid(first)
    if group is None and not with_qid and str(path) != STDIN_NAME:
        beside = Path(f"{path}{GROUP_SUFFIX}")
        group = beside if beside.is_file() else None
    if group is None:
        try:
            return parse(path, source, limits, return_comments, n_threads=n_threads,
                         dtype=dtype, label_rules=label_rules, dense=dense)
        except InputFormatError as err:
            if with_qid or err.reason != MISSING_QID or err.line != first_lineno:
                raise
            raise InputFormatError(f"{MISSING_QID} (data without qid: takes its queries from "
                                   f"a group file: {path.name}{GROUP_SUFFIX} beside it, or "
                                   "--group FILE)", path, err.line) from None
    if with_qid:
        raise InputFormatError(f"the lines carry qid: and a group file ({group}) was given: "
                               "use one or the other", path, first_lineno)
    part = parse(path, source, limits, return_comments, with_qid=False, n_threads=n_threads,
                 dtype=dtype, label_rules=label_rules, dense=dense)
    part.qid, part.qid_texts = group_qids(group, len(part.labels), path), None
    part.from_group = True
    return part


def parse(path: PathLike, data: Source | bytes | memoryview, limits: Limits,
          return_comments: bool, with_qid: bool = True, n_threads: int = 1,
          dtype: npt.DTypeLike = np.float64, label_rules: Sequence[LabelRule] = (),
          block_bytes: int | None = None, dense: bool = True) -> Part:
    """Parse one data file (a Source, or its bytes) into a Part (``with_qid=False``: lines
    are ``<label> <index>:<value> ...``, and the Part has no query ids), block by block
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
    whitespace beyond ASCII (then by :func:`parse_text`); line numbers in messages run on
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
            raise InputFormatError(excerpt_reason(block, parsed["error_start"],
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
        """Append the rows of a block's decoded text, parsed by :func:`parse_text`."""
        part = parse_text(self.path, text, self.limits, self.with_qid, self.lines, True)
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
                                self.lines + line_of_row(text, row))

    def part(self):
        """The Part of every block read (a malformed line was raised before)."""
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
        return Part(labels=np.concatenate(self.labels), indptr=indptr, indices=indices,
                     values=values, max_index=max_index,
                     qid=np.concatenate(self.qid_ints) if self.with_qid and self.qids_are_int
                     else None,
                     qid_texts=self.qid_texts, comments=self.comments)



def number_group_queries(parts: Sequence[Part],
                         sources: Sequence[Source | PathLike]) -> None:
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
            "group file", with_qid.path if isinstance(with_qid, Source) else with_qid)
    offset = 0
    for part in parts:
        assert part.qid is not None  # numbered from its group file
        part.qid = part.qid + offset
        offset = int(part.qid[-1]) if len(part.qid) else offset


def storage_dtype(dtype: npt.DTypeLike) -> np.dtype:
    """np.float64 or np.float32, the storages load_svmlight offers for X."""
    try:
        storage: np.dtype | None = np.dtype(dtype)
    except TypeError:
        storage = None
    if storage is None or storage not in (np.float64, np.float32):
        raise ValueError(f"dtype must be np.float64 or np.float32, got {storage!r}")
    return storage


def matrix(parts: Sequence[Part], n_features: int) -> np.ndarray | CSRArrays:
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

