"""TREC run and qrels files of scored documents: what trec_eval, ir_measures, ranx and
PyTerrier read.

Run: one line ``qid Q0 docno rank score tag`` per document; per query (queries in order of
first appearance) the documents in trec_eval's order -- score descending, ties by docno
descending in byte order (``comp_sim_docno`` of trec_eval's ``form_res_rels.c``) -- ranked
from 1.  Qrels: one line ``qid 0 docno label`` per document.

Docnos come from the data file's comments: LETOR's ``#docid = GX004-93-7097963 inc = ...``
gives ``GX004-93-7097963``, and a comment of one word (``python -m svmmap.experiments.trec
build`` writes the docno so) gives that word.  A file without such comments gets document
numbers: the line's position in the file (1, 2, ...), zero-padded to one width so that byte
order is file order, which is the order svmmap.metrics' ``trec_eval`` convention breaks ties
in without docnos.  With these docnos, svmmap's ``trec_eval`` figures are trec_eval's on the
written files (tests/ecosystem/test_trec_run.py checks them against ir_measures' pytrec_eval
backend).

Labels are written as integers (trec_eval's qrels hold integers); a label below 0 (LETOR's -1)
is written 0: both svmmap and trec_eval then call it non-relevant with gain 0.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputFormatError
from .atomic import OutputKind, first_tokens, write_text_atomically
from .io import LabelRule

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..core._typing import PathLike, Vector

__all__ = ["docnos_from_comments", "document_numbers", "run_lines", "qrels_lines",
           "write_run", "write_qrels", "run_tag_error", "RUN_FILE", "QRELS_FILE",
           "QRELS_GRADES"]

_DOCID = re.compile(r"docid\s*=\s*(\S+)")


def document_numbers(n_rows: int) -> list[str]:
    """``["1", ..., "n"]`` zero-padded to one width (byte order = row order)."""
    width = len(str(n_rows))
    return [f"{i:0{width}d}" for i in range(1, n_rows + 1)]


def docnos_from_comments(comments: Sequence[str]) -> list[str]:
    """The docno of every row from its comment (module docstring); document numbers for all
    rows when some row has none."""
    docnos = []
    for comment in comments:
        found = _DOCID.match(comment)
        if found:
            docnos.append(found.group(1))
        elif comment and len(comment.split()) == 1:
            docnos.append(comment)
        else:
            return document_numbers(len(comments))
    return docnos


def _ranked(qid, docnos, scores):
    """Yield (qid, [rows of the query in trec_eval's order]) per query, first-appearance
    order; InputFormatError for a docno twice in one query (trec_eval refuses it)."""
    qid = np.asarray(qid).astype(str)
    docnos = np.asarray(docnos).astype(str)
    scores = np.asarray(scores, dtype=np.float64)
    if not (len(qid) == len(docnos) == len(scores)):
        raise InputFormatError(f"{len(scores)} scores, {len(qid)} qids and {len(docnos)} "
                               "docnos")
    queries, first, inverse = np.unique(qid, return_index=True, return_inverse=True)
    # numpy orders str by code point, which is UTF-8 byte order, trec_eval's strcmp
    _, doc_rank = np.unique(docnos, return_inverse=True)
    order = np.lexsort((-doc_rank, -scores, inverse))
    bounds = np.searchsorted(inverse[order], np.arange(len(queries) + 1))
    for g in np.argsort(first, kind="stable"):
        rows = order[bounds[g]:bounds[g + 1]]
        seen = docnos[rows]
        if len(np.unique(seen)) != len(seen):
            values, counts = np.unique(seen, return_counts=True)
            raise InputFormatError(f"docno {str(values[counts > 1][0])!r} appears twice in query "
                                   f"{queries[g]}: a TREC run needs unique docnos per query")
        yield queries[g], rows


def run_tag_error(tag: str) -> str | None:
    """Why ``tag`` cannot be a run's tag (its last column), or None when it can: one word,
    without whitespace."""
    if not tag or any(c.isspace() for c in tag):
        return f"the run tag must be one word without blanks, got {tag!r}"
    return None


def run_lines(qid: Vector, docnos: Vector, scores: Vector, tag: str = "svmmap") -> list[str]:
    """The run's lines (module docstring)."""
    error = run_tag_error(tag)
    if error:
        raise InputFormatError(error)
    scores = np.asarray(scores, dtype=np.float64)
    docnos = np.asarray(docnos).astype(str)
    return [f"{q} Q0 {docnos[r]} {rank} {float(scores[r])!r} {tag}\n"
            for q, rows in _ranked(qid, docnos, scores)
            for rank, r in enumerate(rows, 1)]


def _fractional(labels):
    return labels != np.round(labels)


def _fractional_error(label):
    return f"label {label:g} is fractional: qrels hold integer labels"


#: what writing qrels needs of the data's labels (svmmap.data.io.LabelRule: refused with file and
#: line by the reader): integers
QRELS_GRADES = LabelRule(_fractional, _fractional_error)


def qrels_lines(qid: Vector, docnos: Vector, labels: Vector) -> list[str]:
    """The qrels' lines: every document's label (negative labels written 0)."""
    labels = np.asarray(labels, dtype=np.float64)
    if np.any(_fractional(labels)):
        raise InputFormatError(_fractional_error(labels[_fractional(labels)][0]))
    grades = np.maximum(labels, 0).astype(np.int64)
    docnos = np.asarray(docnos).astype(str)
    return [f"{q} 0 {docnos[r]} {grades[r]}\n"
            for q, rows in _ranked(qid, docnos, np.zeros(len(labels)))
            for r in sorted(rows)]


def write_run(path: PathLike, qid: Vector, docnos: Vector, scores: Vector,
              tag: str = "svmmap") -> None:
    """Write the run atomically (svmmap.data.atomic)."""
    write_text_atomically(path, run_lines(qid, docnos, scores, tag))


def write_qrels(path: PathLike, qid: Vector, docnos: Vector, labels: Vector) -> None:
    """Write the qrels atomically."""
    write_text_atomically(path, qrels_lines(qid, docnos, labels))


def _is_run(path):
    """A TREC run: its first lines ``qid Q0 docno rank score tag``."""
    first = first_tokens(path, 5)
    return bool(first) and all(len(t) == 6 and t[1] == "Q0" for t in first)


def _is_qrels(path):
    """TREC qrels: its first lines ``qid iteration docno relevance`` with integer relevance."""
    first = first_tokens(path, 5)
    return bool(first) and all(len(t) == 4 and t[3].lstrip("-").isdigit() for t in first)


#: what --run and --qrels write: an existing file of another kind is refused unless --force
RUN_FILE = OutputKind("a TREC run file ('qid Q0 docno rank score tag' lines)", _is_run)
QRELS_FILE = OutputKind("a TREC qrels file ('qid 0 docno relevance' lines)", _is_qrels)
