"""Query groups and validation sets in the forms other ranking libraries pass them.

LightGBM and XGBoost rankers (and PyTerrier's ``pt.ltr.apply_learned_model(..., form="ltr")``,
which calls ``fit`` as it would call LightGBM's) describe queries by their *sizes*:
``group=[n_1, n_2, ...]`` says that rows 0..n_1-1 are the first query, the next n_2 rows the
second, and so on (rows contiguous per query).  Validation data comes as
``eval_set=[(X_1, y_1), (X_2, y_2), ...]`` with ``eval_group=[sizes_1, sizes_2, ...]``;
svmmap also takes ``eval_qid=[qid_1, qid_2, ...]`` (query ids, rows in any order) and its own
single ``eval_set=(X, y, qid)``.

Every svmmap ranker turns these into query ids once, here, and records the measure of the
fitted model on each validation set as ``best_score_`` (LightGBM's attribute and shape:
``{"valid_0": {"map": 0.61}, "valid_1": {...}}``), a record of the fit that model files
do not keep (SVMMapCV's files keep the C path's validation measures).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputFormatError

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ._typing import EvalSets, IntArray, Matrix, Vector

__all__ = ["qid_from_group", "training_qid", "eval_sets", "set_best_score"]


def qid_from_group(group: Vector, n_rows: int, name: str = "group") -> IntArray:
    """Query ids 0, 0, ..., 1, 1, ... of rows contiguous per query, from the query sizes
    ``group`` (non-negative integers adding up to ``n_rows``)."""
    sizes = np.asarray(group)
    if sizes.ndim != 1 or (sizes.size and sizes.dtype.kind not in "iuf"):
        raise InputFormatError(f"{name} must be a list of query sizes, got {group!r:.80}")
    if sizes.dtype.kind == "f" and not np.all(np.isfinite(sizes) & (sizes == np.round(sizes))):
        raise InputFormatError(f"{name} must hold whole numbers of rows")
    if np.any(sizes < 0):
        raise InputFormatError(f"{name} holds a negative query size")
    if np.any(sizes > n_rows):  # before int64 (a size of 1e20 wrapped round to a negative sum)
        raise InputFormatError(f"{name} holds a query size of {sizes.max().item()!r} rows, X has "
                               f"{n_rows}")
    sizes = sizes.astype(np.int64)
    if int(sizes.sum()) != n_rows:
        raise InputFormatError(f"{name} sizes add up to {int(sizes.sum())} rows, X has "
                               f"{n_rows}")
    return np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)


def _n_rows(X):
    return X.shape[0] if hasattr(X, "shape") else len(X)


def training_qid(qid: Vector | None, group: Vector | None, X: Matrix) -> Any:
    """The query id of every row of X from ``qid`` or ``group`` (at most one of them; None
    for both: None, one query)."""
    if group is None:
        return qid
    if qid is not None:
        raise InputFormatError("give qid or group, not both")
    return qid_from_group(group, _n_rows(X))


def _is_one_set(eval_set):
    """True for svmmap's single ``(X, y, qid)`` or ``(X, y)``: a tuple whose items are not all
    tuples (a list, or a tuple of tuples, is a list of sets)."""
    return isinstance(eval_set, tuple) and not all(isinstance(s, tuple) for s in eval_set)


def eval_sets(eval_set: EvalSets | None, eval_group: Any = None,
              eval_qid: Any = None) -> list[tuple[Any, Any, Any]]:
    """The validation sets as a list of ``(X, y, qid)``.

    ``eval_set``: None (no sets, ``[]``), one set ``(X, y, qid)`` or ``(X, y)``, or a list of
    them.  A set of two items takes its queries from ``eval_group[i]`` (query sizes, rows
    contiguous per query) or ``eval_qid[i]`` (one id per row); without either it is one
    query."""
    if eval_set is None:
        if eval_group is not None or eval_qid is not None:
            raise InputFormatError("eval_group / eval_qid describe the queries of eval_set: "
                                   "give eval_set too")
        return []
    if eval_group is not None and eval_qid is not None:
        raise InputFormatError("give eval_group or eval_qid, not both")
    sets = [eval_set] if _is_one_set(eval_set) else list(eval_set)
    per_set = eval_group if eval_group is not None else eval_qid
    if per_set is not None and len(per_set) != len(sets):
        raise InputFormatError(f"{len(sets)} eval_set entries but "
                               f"{len(per_set)} in eval_{'group' if eval_qid is None else 'qid'}")
    result = []
    for i, entry in enumerate(sets):
        if not isinstance(entry, (tuple, list)) or len(entry) not in (2, 3):
            raise InputFormatError(f"eval_set[{i}] must be (X, y) or (X, y, qid)")
        X, y = entry[0], entry[1]
        qid = entry[2] if len(entry) == 3 else None
        if per_set is not None:
            if qid is not None:
                raise InputFormatError(f"eval_set[{i}] has its qid already: leave out "
                                       "eval_group / eval_qid")
            qid = qid_from_group(per_set[i], _n_rows(X), f"eval_group[{i}]") \
                if eval_group is not None else per_set[i]
        if qid is None:
            qid = np.zeros(_n_rows(X), dtype=np.int64)
        result.append((X, y, qid))
    return result


def set_best_score(model: Any, sets: list[tuple[Any, Any, Any]], measure_name: str,
                   measure: Callable[..., float]) -> None:
    """Set ``model.best_score_`` to ``{"valid_i": {measure_name: value}}``, the value
    ``measure(scores, y, qid)`` of the fitted model's decision_function on each validation set
    (LightGBM's attribute); without validation sets, the model has no ``best_score_``."""
    if not sets:
        vars(model).pop("best_score_", None)
        return
    model.best_score_ = {
        f"valid_{i}": {measure_name: float(measure(model.decision_function(X, qid=qid),
                                                   np.asarray(y), qid))}
        for i, (X, y, qid) in enumerate(sets)}
