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

Rooms: this module is the loader API (the public names; the checks of the arguments);
svmmap.data.file_reader reads one file into arrays through the extension (``_svmlight_reader``)
block by block and makes the files' arrays one X; svmmap.data.line_parser holds the rules of a
line in Python and every message of a refused line.
"""

from __future__ import annotations

import math
import os
from contextlib import ExitStack
from typing import TYPE_CHECKING

import numpy as np

from ..core.options import MAX_NDCG_LABEL, ndcg_label_error, thread_count
from ..errors import InputFormatError
from ..kernels._csr import as_scipy
from ..metrics import ERR_MAX_GRADE, err_grade_error
from .file_reader import matrix, number_group_queries, parse_source, storage_dtype
from .line_parser import MAX_INDEX, LabelRule, Limits
from .side_files import group_file, load_query_weights
from .sources import COMPRESSION, GROUP_SUFFIX, STDIN, STDIN_NAME, Source, input_files, open_sources
from .writer import dump_svmlight

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

    import numpy.typing as npt
    import scipy.sparse as sp

    from ..core._typing import PathLike
    from ..kernels._kernel_inputs import CSRArrays

__all__ = ["load_svmlight", "read_svmlight", "dump_svmlight", "input_files", "load_query_weights",
           "group_file", "COMPRESSION", "GROUP_SUFFIX", "STDIN", "STDIN_NAME", "MAX_INDEX",
           "LabelRule"]


#: an NDCG loss's grades: at most MAX_NDCG_LABEL (svmmap.core.options.ndcg_label_error)
NDCG_GRADES = LabelRule(lambda labels: labels > MAX_NDCG_LABEL, ndcg_label_error)
#: ERR's grades: at most svmmap.metrics.ERR_MAX_GRADE (gdeval's 4)
ERR_GRADES = LabelRule(lambda labels: labels > ERR_MAX_GRADE, err_grade_error)


def measure_label_rules(measures: Iterable[tuple[str, int | None]]) -> tuple[LabelRule, ...]:
    """The LabelRules of the labels the measures ``measures`` ((name, k) pairs,
    svmmap.core.measures.parse_metrics) are computed on: ERR's grades at most 4."""
    return (ERR_GRADES,) if any(name == "err" for name, _ in measures) else ()


def load_svmlight(path_or_paths: PathLike | Sequence[PathLike], n_features: int | None = None, *,
                  return_comments: bool = False, group: PathLike | None = None,
                  max_abs_value: float | None = None, n_threads: int = 1,
                  max_label: float | None = None, files_read: list[Path] | None = None,
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
                  *, return_comments: bool = False, group: PathLike | None = None,
                  max_abs_value: float | None = None, n_threads: int = 1,
                  label_rules: Sequence[LabelRule] = (), width_of: PathLike | None = None,
                  files_read: list[Path] | None = None,
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
    dtype = storage_dtype(dtype)
    largest = math.inf if max_abs_value is None else float(max_abs_value)
    if dtype == np.float32:
        largest = min(largest, float(np.finfo(np.float32).max))
    if width_of is not None and n_features is None:
        raise InputFormatError("width_of names where n_features comes from: give n_features")
    limits = Limits(n_features, largest, None if width_of is None else str(width_of))
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
                    parts.append(parse_source(opened, limits, group, return_comments,
                                               thread_count(n_threads), dtype,
                                               tuple(label_rules), dense))
            except MemoryError:  # name the file being read (the command adds what to do)
                raise MemoryError(f"reading {getattr(source, 'path', source)}") from None
    number_group_queries(parts, sources)
    if n_features is None:
        n_features = max(part.max_index for part in parts)
    X = matrix(parts, n_features)
    y = np.concatenate([part.labels for part in parts])
    if all(part.qid is not None for part in parts):
        qid = np.concatenate([part.qid for part in parts])
    else:
        qid = np.array([q for part in parts for q in part.qid_text()], dtype=str)
    if not return_comments:
        return X, y, qid
    return X, y, qid, [c for part in parts for c in part.comments or ()]

