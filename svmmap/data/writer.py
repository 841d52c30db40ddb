"""Writing ranking data in the SVMlight / LETOR format svmmap.data.io reads."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputFormatError
from .atomic import write_text_atomically

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..core._typing import Matrix, PathLike, Vector

__all__ = ["dump_svmlight"]


def dump_svmlight(path: PathLike, X: Matrix, y: Vector, qid: Vector,
                  comments: Sequence[str] | None = None) -> None:
    """Write documents in the format :func:`load_svmlight` reads, atomically.

    ``X`` (dense or sparse, shape (m, d)) is written with 1-based indices, zero entries
    omitted, and every number in its shortest form that reads back to the same float64
    (trailing ``.0`` dropped). Trailing all-zero columns are not recorded: pass
    ``n_features=X.shape[1]`` when loading to get them back. ``qid`` holds integers or strings
    without whitespace, ``:`` or ``#``; ``comments`` (one per row, single-line) are written
    after ``#``. The file is written to a temporary file in the same directory, then renamed.
    """
    import scipy.sparse as sp  # only here: reading data (svmmap.data.io) needs no scipy

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
