"""The side files of ranking data: a *group file* (LightGBM's: one query size per line, the
queries of a data file without ``qid:``) and a *query-weights file* (``qid weight`` per line,
``svmmap_learn --query-weights``); both follow the line rules of svmmap.data.sources."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputFormatError
from .sources import GROUP_SUFFIX, STDIN, Source, data_lines, has_qid, read_text

if TYPE_CHECKING:
    from ..core._typing import IntArray, PathLike, Vector

#: a query id the reader takes as an integer (signed decimal digits)
_INT_RE = re.compile(r"[+-]?[0-9]+")
#: a query size (decimal digits)
_INDEX_RE = re.compile(r"[0-9]+")


def load_query_weights(path: PathLike, qid: Vector) -> dict[int | str, float]:
    """The weight of every query of ``qid`` from a file of ``qid weight`` lines (``#``
    comments and blank lines ignored; the format ``svmmap_learn --query-weights`` reads):
    ``{qid value: weight}``, the keys as ``qid`` holds them.  Weights are finite and
    non-negative, each query listed once; a query of ``qid`` the file does not list is an
    error.  Query ids are compared as the reader makes them: when ``qid`` holds integers
    (load_svmlight reads ``qid:001`` as 1), a listed id that is an integer is compared as a
    number (``001`` and ``1`` are the same query); otherwise ids are compared as text."""
    text = read_text(path)
    numeric = np.issubdtype(np.asarray(qid).dtype, np.integer)
    weights: dict[str, float] = {}
    lines: dict[str, int] = {}
    for lineno, tokens, _ in data_lines(text):
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
    found: dict[int | str, float] = {}
    for q in np.unique(np.asarray(qid)).tolist():
        if str(q) not in weights:
            raise InputFormatError(f"no weight for query {q!r} of the training data", path)
        found[q] = weights[str(q)]
    return found


def group_file(path: PathLike) -> Path | None:
    """The group file load_svmlight takes the queries of the single data file ``path`` from
    when no ``group`` is given: ``<path>.query`` if it exists and the file's lines carry no
    ``qid:``; otherwise (and for standard input) None."""
    beside = Path(f"{path}{GROUP_SUFFIX}")
    if str(path) == STDIN or not beside.is_file():
        return None
    with Source(path) as source:
        return None if has_qid(source.first_line) else beside


def group_qids(group: PathLike, n_documents: int, data_path: PathLike) -> IntArray:
    """Query ids 1, 2, ... repeated by the sizes in a group file (one positive integer a line)."""
    sizes: list[int] = []
    for lineno, tokens, _ in data_lines(read_text(group)):
        if len(tokens) != 1 or not _INDEX_RE.fullmatch(tokens[0]) or int(tokens[0]) == 0:
            raise InputFormatError(f"expected one query size (a positive integer), got "
                                   f"{' '.join(tokens)!r}", group, lineno)
        sizes.append(int(tokens[0]))
    if sum(sizes) != n_documents:
        raise InputFormatError(f"the query sizes add up to {sum(sizes)} documents but "
                               f"{data_path} has {n_documents}", group)
    return np.repeat(np.arange(1, len(sizes) + 1, dtype=np.int64), sizes)
