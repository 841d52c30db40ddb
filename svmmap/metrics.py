"""Ranking metrics: the single definition of every number svmmap reports.

All collection-level functions take per-document arrays ``scores, labels, qid`` (any row
order; the documents of a query need not be contiguous) and group them with
:meth:`svmmap.core.collection.QueryCollection.from_qid`.  ``qid=None`` treats all rows as one
query.  Rows that are already grouped are passed without regrouping, either as
``qid=collection`` (a :class:`~svmmap.core.collection.QueryCollection`; scores and labels in its
grouped order) or as ``ptr=`` (query ``g`` is rows ``ptr[g]:ptr[g + 1]``; its ids are
0..n-1).  Means are plain (macro) averages over queries.

Two conventions, selected by ``convention=``:

``"letor"`` (default) -- the LETOR 3.0 / 4.0 ``Eval-Score`` scripts
    * Ranking: score descending; ties keep the input (file) order of the rows.  The scripts
      sort the documents of a query by line number and then (Perl's stable merge sort) by
      prediction descending.
    * Relevant: ``label > 0`` (the scripts' graded 1 and 2; for integer grades this is
      ``label >= 1``).
    * A query with no relevant document has AP = 0, RR = 0, P@k = 0 and NDCG@k = 0 (the
      scripts return 0 when there is no relevant document / when the ideal DCG is 0) and
      it stays in every mean (the scripts divide by the number of queries).
    * NDCG gain ``2**label - 1`` (labels <= 0 give gain 0), discount 1 at ranks 1 and 2 and
      ``1 / log2(r)`` at rank ``r >= 3``; the ideal DCG sorts the query's own documents by
      gain.
    * A query with fewer than ``k`` documents: P@k counts the missing ranks as
      non-relevant (``#relevant / k``) and NDCG@k is DCG/ideal-DCG over all documents,
      i.e. the missing ranks are non-relevant for both -- the LETOR 4.0 script's stated
      intent ("consider the hole as irrelevant", 2009-04-24).  Note the published scripts
      differ here: LETOR 3.0 leaves P@k and NDCG@k of such a query undefined and so adds
      0 to the mean, and the LETOR 4.0 script does that for NDCG@k only.  OHSUMED queries
      have >= 58 documents, so this only matters on MQ2008 (queries of 6+ documents).

``"trec_eval"`` -- trec_eval 9 / pytrec_eval
    * Ranking: score descending, ties broken by docno *descending* in byte-wise string
      order (``comp_sim_docno`` in trec_eval's ``form_res_rels.c``).  Pass ``docnos=`` (any
      array, converted with ``str``); without it the docno of row ``i`` is ``i`` zero-padded
      to a common width, so string order equals row order and **ties put the later row
      first**.  Docnos must be unique within a query (trec_eval rejects duplicates).
    * Relevant: ``label > 0`` (trec_eval's default ``relevance_level`` 1 for integer
      labels).
    * A query with no relevant document counts with AP 0 (and P@k, NDCG, RR 0) and stays in
      every mean: its documents are judgments, so its topic is in the qrels, and trec_eval /
      pytrec_eval count a topic whose judgments are all non-relevant (trec_eval's
      ``num_q`` includes it).  Only a topic absent from the qrels is left out, and every
      query of a data file has judged documents.
    * NDCG is trec_eval's ``ndcg_cut_k`` / ``ndcg``: gain = label (labels <= 0 give 0),
      discount ``1 / log2(r + 1)``.
    * P@k divides by ``k`` (``P_k``), RR is ``recip_rank``, MAP is ``map``, MAP@k is
      ``map_cut_k``.

Common to both: AP = (1/R) * sum over relevant ranks r of precision@r, R = number of
relevant documents of the query.  MAP@k truncates that sum at rank k but still divides by
R (trec_eval's ``map_cut_k``; LETOR has no MAP@k).  RR = 1 / rank of the first relevant
document.  ERR@k (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009) is the same in both
conventions but for the order of ties: ``sum_{r <= k} R_r / r * prod_{i < r} (1 - R_i)``,
``R_i = (2**g_i - 1) / 2**4`` for the grade ``g_i = max(label, 0)`` at rank i -- the fixed
largest grade 4 of gdeval, the TREC Web track script ir_measures computes ``ERR@k`` with
(not the query's own largest grade); grades above 4 are refused, as gdeval refuses them.
A query without a relevant document has ERR 0 and stays in the mean (gdeval leaves it out
of its output, and ir_measures fills it in with 0 and averages it in).  ROC-area and
best-threshold accuracy do not depend on the order of tied scores.

Which names exist (``"ndcg@10"``, ``"err@20"``, ...), how they print and which kernel of
``svmmap.core.rankings.Ranking`` computes each is the measure registry's (svmmap.core.measures).
"""

from __future__ import annotations

from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np

from .core.collection import QueryCollection
from .core.measures import MEASURES, label, parse_metrics
from .core.options import CONVENTIONS
from .core.rankings import ERR_MAX_GRADE as ERR_MAX_GRADE  # (svmmap.data.io reads it here)
from .core.rankings import Ranking, check_k
from .core.rankings import err_grade_error as err_grade_error
from .errors import InputFormatError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from .core._typing import FloatArray, Vector

__all__ = [
    "CONVENTIONS",
    "PerQuery",
    "average_precision",
    "mean_average_precision",
    "precision_at_k",
    "ndcg_at_k",
    "reciprocal_rank",
    "mean_reciprocal_rank",
    "roc_area",
    "best_threshold_accuracy",
    "expected_reciprocal_rank",
    "per_query",
    "evaluate",
    "measure_mean",
]


PerQuery = namedtuple("PerQuery", ["ids", "values"])
PerQuery.__doc__ = """Per-query metric values.

``ids[i]`` is the query id of ``values[i]``; queries appear in order of first appearance
and only those that count in the convention's mean are listed, so ``values.mean()`` is the
mean the module's collection functions return."""


# ----------------------------------------------------------------------------- validation


def _mean(values, mask):
    v = values[mask & ~np.isnan(values)]
    return float(v.mean()) if len(v) else float("nan")


_KERNELS = {
    "ap": lambda r, k: r.ap(k),
    "p": lambda r, k: r.precision(check_k(k, allow_none=False)),
    "ndcg": lambda r, k: r.ndcg(k),
    "rr": lambda r, k: r.rr(),
    "rprec": lambda r, k: r.rprec(),
    "roc": lambda r, k: r.roc(),
    "accuracy": lambda r, k: r.accuracy(),
    "err": lambda r, k: r.err(check_k(k, allow_none=False)),
}

#: names of the kernels besides the registry's (svmmap.core.measures) and their own
_ALIASES = {
    "average_precision": "ap",
    "precision": "p",
    "r_precision": "rprec",
    "recip_rank": "rr",
    "reciprocal_rank": "rr",
    "roc_area": "roc",
    "best_threshold_accuracy": "accuracy",
}


def _kernel(name):
    """The ``_KERNELS`` key of a measure name (svmmap.core.measures), an alias or a kernel."""
    measure = MEASURES.get(name)
    return measure.metric if measure is not None else _ALIASES.get(name, name)


def _collection(kind, scores, labels, qid, k, convention, docnos, ptr):
    k = check_k(k, allow_none=True)
    r = Ranking(scores, labels, qid, docnos, convention, ptr)
    return _mean(_KERNELS[kind](r, k), r.counted())


# --------------------------------------------------------------------------- public API


def average_precision(scores: Vector, labels: Vector, k: int | None = None, *,
                      convention: str = "letor", docnos: Sequence[str] | None = None) -> float:
    """Average precision of one query (all rows are one ranking).

    ``AP = (1/R) * sum_{r: doc at rank r relevant} (#relevant in top r) / r`` with ``R``
    the number of relevant documents; 0 when ``R == 0`` (LETOR's value, and pytrec_eval's
    per-query value).  With ``k``, only ranks ``r <= k`` are summed, still divided by ``R``
    (trec_eval ``map_cut_k``).  ``convention`` and ``docnos`` only decide the order of tied
    scores (see the module docstring).
    """
    k = check_k(k, allow_none=True)
    return float(Ranking(scores, labels, None, docnos, convention).ap(k)[0])


def mean_average_precision(scores: Vector, labels: Vector, qid: Vector | None = None,
                           convention: str = "letor", k: int | None = None,
                           docnos: Sequence[str] | None = None, *,
                           ptr: Vector | None = None) -> float:
    """MAP: mean over queries of :func:`average_precision` (MAP@k with ``k``).

    A query without relevant documents has AP 0 and is averaged in, in both conventions
    (LETOR's scripts and trec_eval agree on this; they differ in the order of tied scores).
    """
    return _collection("ap", scores, labels, qid, k, convention, docnos, ptr)


def precision_at_k(scores: Vector, labels: Vector, qid: Vector | None = None, k: int = 10,
                   convention: str = "letor", docnos: Sequence[str] | None = None, *,
                   ptr: Vector | None = None) -> float:
    """Mean P@k: ``(#relevant among the top k) / k`` per query, missing ranks non-relevant."""
    if k is None:
        check_k(k, allow_none=False)
    return _collection("p", scores, labels, qid, k, convention, docnos, ptr)


def ndcg_at_k(scores: Vector, labels: Vector, qid: Vector | None = None, k: int = 10,
              convention: str = "letor", docnos: Sequence[str] | None = None, *,
              ptr: Vector | None = None) -> float:
    """Mean NDCG@k (``k=None``: over the whole ranking).

    ``NDCG@k = DCG@k / ideal DCG@k``, ``DCG@k = sum_{r <= k} gain(label_r) * disc(r)``,
    the ideal ranking sorting the query's documents by gain; 0 when the ideal DCG is 0
    (no document with positive label).
    ``"letor"``: ``gain = 2**label - 1``, ``disc(r) = 1`` for r <= 2, ``1/log2(r)`` after.
    ``"trec_eval"``: ``gain = label``, ``disc(r) = 1/log2(r + 1)`` (``ndcg_cut_k``; with
    ``k=None`` trec_eval's ``ndcg``).  Negative labels have gain 0.
    """
    return _collection("ndcg", scores, labels, qid, k, convention, docnos, ptr)


def reciprocal_rank(scores: Vector, labels: Vector, *, convention: str = "letor",
                    docnos: Sequence[str] | None = None) -> float:
    """1 / rank of the first relevant document of one query (0 if there is none)."""
    return float(Ranking(scores, labels, None, docnos, convention).rr()[0])


def mean_reciprocal_rank(scores: Vector, labels: Vector, qid: Vector | None = None,
                         convention: str = "letor", docnos: Sequence[str] | None = None, *,
                         ptr: Vector | None = None) -> float:
    """MRR: mean over queries of :func:`reciprocal_rank` (trec_eval ``recip_rank``)."""
    return _collection("rr", scores, labels, qid, None, convention, docnos, ptr)


def r_precision(scores: Vector, labels: Vector, qid: Vector | None = None,
                convention: str = "letor", docnos: Sequence[str] | None = None, *,
                ptr: Vector | None = None) -> float:
    """Mean R-precision: ``(#relevant among the top R) / R`` per query, R its number of
    relevant documents (trec_eval ``Rprec``); 0 for a query without relevant documents, which
    stays in the mean (in both conventions, as in trec_eval)."""
    return _collection("rprec", scores, labels, qid, None, convention, docnos, ptr)


def roc_area(scores: Vector, labels: Vector, qid: Vector | None = None, convention: str = "letor",
             *, ptr: Vector | None = None) -> float:
    """ROC area: fraction of (relevant, non-relevant) pairs of a query ordered correctly.

    A pair counts 1 if the relevant document scores strictly higher, 1/2 if the scores
    tie, 0 otherwise; divided by ``R * (n - R)``.  With ``qid`` the result is the mean over
    queries that have both a relevant and a non-relevant document (the area is undefined
    for the others; ``"trec_eval"`` drops no further query, since the only queries it
    drops have no relevant document).  ``qid=None`` pools all rows into one ranking.
    NaN if no query qualifies.
    """
    return _collection("roc", scores, labels, qid, None, convention, None, ptr)


def best_threshold_accuracy(scores: Vector, labels: Vector, qid: Vector | None = None,
                            convention: str = "letor", *, ptr: Vector | None = None) -> float:
    """Accuracy of the best single score threshold.

    ``max_t (#{relevant, score >= t} + #{non-relevant, score < t}) / n`` over all ``t``,
    including ``t`` above every score (everything predicted non-relevant); tied scores
    fall on the same side.  ``qid=None``: one threshold for all rows (a query, or a whole
    collection).  With ``qid``: each query gets its own best threshold and the result is
    the mean over queries.
    """
    return _collection("accuracy", scores, labels, qid, None, convention, None, ptr)


def expected_reciprocal_rank(scores: Vector, labels: Vector, qid: Vector | None = None,
                             k: int = 10, convention: str = "letor",
                             docnos: Sequence[str] | None = None, *,
                             ptr: Vector | None = None) -> float:
    """Mean ERR@k: ``sum_{r <= k} R_r / r * prod_{i < r} (1 - R_i)`` per query, with the
    stopping probability ``R_i = (2**g_i - 1) / 16`` of the grade ``g_i = max(label, 0)``
    at rank i (Chapelle et al., CIKM 2009, with gdeval's largest grade 4: ir_measures'
    ``ERR@k``); 0 for a query without a relevant document.  Labels above 4 are refused."""
    if k is None:
        check_k(k, allow_none=False)
    return _collection("err", scores, labels, qid, k, convention, docnos, ptr)


_FUNCTION_KINDS = {
    average_precision: "ap",
    mean_average_precision: "ap",
    precision_at_k: "p",
    ndcg_at_k: "ndcg",
    reciprocal_rank: "rr",
    mean_reciprocal_rank: "rr",
    r_precision: "rprec",
    roc_area: "roc",
    best_threshold_accuracy: "accuracy",
    expected_reciprocal_rank: "err",
}


def per_query(metric: Callable[[FloatArray, FloatArray], float], scores: Vector, labels: Vector,
              qid: Vector | None = None, *, convention: str = "letor",
              docnos: Sequence[str] | None = None, k: int | None = None, skip_empty: bool = False,
              ptr: Vector | None = None) -> PerQuery:
    """Per-query values of a metric, with their query ids (e.g. for paired tests).

    ``metric`` is one of this module's metric functions, or a name (a measure of
    svmmap.core.measures: ``"map"``, ``"p"``, ``"ndcg"``, ``"mrr"``, ``"err"``, ...; or a kernel:
    ``"ap"``, ``"rr"``, ``"accuracy"``), or any other callable ``f(scores_q, labels_q) ->
    float`` applied to each query's rows (in input order).  ``k`` is the cut-off of
    AP/P/NDCG/ERR (required for P and ERR).

    Returns :class:`PerQuery` ``(ids, values)`` for the queries counted in the mean:
    every query, unless ``skip_empty`` drops those without relevant documents; ROC
    additionally drops queries where it is undefined.  Hence ``values.mean()`` equals the
    corresponding collection function.
    """
    kind = _FUNCTION_KINDS.get(metric) if callable(metric) else None
    if kind is None and isinstance(metric, str):
        kind = _kernel(metric.lower())
        if kind not in _KERNELS:
            raise InputFormatError(f"unknown metric {metric!r}")
    if kind is None and not callable(metric):
        raise InputFormatError(f"metric must be a name or a callable, got {metric!r}")
    k = check_k(k, allow_none=True)
    r = Ranking(scores, labels, qid, docnos, convention, ptr)
    if kind is not None:
        values = np.asarray(_KERNELS[kind](r, k), dtype=np.float64)
    else:
        s = np.asarray(scores, dtype=np.float64)
        y = np.asarray(labels, dtype=np.float64)
        order, ptr = r.qg.rows, r.ptr
        values = np.array(
            [float(metric(s[order[a:b]], y[order[a:b]])) for a, b in zip(ptr[:-1], ptr[1:])]
        )
    mask = r.counted(skip_empty) & ~np.isnan(values)
    return PerQuery(ids=r.qg.query_ids[mask], values=values[mask])


def evaluate(scores: Vector, labels: Vector, qid: Vector | None = None, convention: str = "letor",
             at: Sequence[int] = (1, 3, 5, 10), docnos: Sequence[str] | None = None, *,
             ptr: Vector | None = None,
             measures: str | Sequence[str] | None = None) -> dict[str, float]:
    """Summary of a ranking: ``{"MAP", "NDCG@k"..., "P@k"..., "MRR", "NDCG", "ROC",
    "queries"}``, or with ``measures`` exactly those, in that order.

    ``measures``: a list of names (or one comma-separated string) as
    :func:`svmmap.core.measures.parse_metrics` reads them: ``map``, ``map@k``, ``ndcg``,
    ``ndcg@k``, ``p@k``, ``err@k``, ... (svmmap.core.measures.help_text("report")); the keys are
    their labels (``"NDCG@10"``, ``"P@5"``).  Every value is the mean over the queries
    (``"queries"`` is their number; ROC further skips queries where it is undefined).
    ``"NDCG"`` is over the full ranking.  The ranking is computed once.
    """
    chosen: Sequence[tuple[str, int | None]]
    if measures is None:
        ks = [check_k(k, allow_none=False) for k in at]
        chosen = [("map", None), *(("ndcg", k) for k in ks), *(("p", k) for k in ks),
                  ("mrr", None), ("ndcg", None), ("roc", None)]
    else:
        try:
            chosen = parse_metrics(measures if isinstance(measures, str)
                                   else ",".join(measures))
        except ValueError as err:
            raise InputFormatError(str(err)) from None
    r = Ranking(scores, labels, qid, docnos, convention, ptr)
    mask = r.counted()
    out: dict[str, float] = {}
    for name, k in chosen:
        out[label(name, k)] = _mean(_KERNELS[_kernel(name)](r, k), mask)
    out["queries"] = int(mask.sum())
    return out


def measure_mean(name: str, scores: Vector, labels: Vector, qid: Vector | None = None,
                 convention: str = "letor", docnos: Sequence[str] | None = None, *,
                 ptr: Vector | None = None) -> float:
    """The mean over queries of one measure named as svmmap.core.measures writes it (``"map"``,
    ``"ndcg@10"``, ``"err@20"``): :func:`evaluate` of that measure alone."""
    values = evaluate(scores, labels, qid, convention, docnos=docnos, ptr=ptr,
                      measures=[name])
    return values[next(iter(values))]


#: the recall levels of the 11-point interpolated precision-recall curve
RECALL_LEVELS = np.linspace(0.0, 1.0, 11)


def interpolated_precision(scores: Vector, labels: Vector, qid: Vector) -> FloatArray:
    """Mean 11-point interpolated precision over the queries with a relevant document.

    Per query, ranked by score descending (ties in input order, the LETOR convention), the
    interpolated precision at recall level r is ``max{precision@k : recall@k >= r}`` (0 if
    no rank reaches r), for r = 0, 0.1, ..., 1 (trec_eval's ``iprec_at_recall``); relevant
    means label > 0.  Returns an array of 11 values (NaN if no query has a relevant document).
    """
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.float64)
    groups = QueryCollection.from_qid(np.asarray(qid))
    curves = []
    for a, b in zip(groups.ptr[:-1], groups.ptr[1:]):
        rows = groups.rows[a:b]
        ranked = labels[rows[np.argsort(-scores[rows], kind="stable")]] > 0
        n_rel = ranked.sum()
        if n_rel == 0:
            continue
        hits = np.cumsum(ranked)
        precision = hits / np.arange(1, len(ranked) + 1)
        recall = hits / n_rel
        # best precision at or after each rank, then at the first rank reaching each level
        best_after = np.maximum.accumulate(precision[::-1])[::-1]
        first = np.searchsorted(recall, RECALL_LEVELS - 1e-12)
        curves.append(np.where(first < len(ranked),
                               best_after[np.minimum(first, len(ranked) - 1)], 0.0))
    return np.mean(curves, axis=0) if curves else np.full(len(RECALL_LEVELS), np.nan)
