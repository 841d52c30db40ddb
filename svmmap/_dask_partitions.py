"""Dask collections cut into partitions that hold whole queries (svmmap.dask's training and
scoring): X, y and qid as Dask arrays with the same row chunks, a query never spanning two."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeGuard

import dask
import dask.array as da
import numpy as np

from .errors import InputFormatError

if TYPE_CHECKING:
    import dask.dataframe as dd
    from dask.distributed import Client


def _is_dataframe(obj: object) -> TypeGuard[dd.DataFrame]:
    """Whether ``obj`` is a Dask DataFrame (without importing dask.dataframe)."""
    return hasattr(obj, "map_partitions") and hasattr(obj, "columns")


def _is_series(obj):
    return hasattr(obj, "map_partitions") and not hasattr(obj, "columns")


def _as_dask_matrix(X):
    if _is_dataframe(X):
        X = X.to_dask_array(lengths=True)
    elif not isinstance(X, da.Array):
        X = da.from_array(X, chunks=(max(X.shape[0], 1), X.shape[1]))
    if X.ndim != 2:
        raise InputFormatError(f"X must be two-dimensional, got shape {X.shape}")
    if np.isnan(X.shape[0]) or any(np.isnan(c) for c in X.chunks[0]):
        X = X.compute_chunk_sizes()
    return X.rechunk({1: -1})


def _as_dask_vector(v, chunks, name):
    if _is_series(v):
        v = v.to_dask_array(lengths=True)
    elif not isinstance(v, da.Array):
        v = np.asarray(v).ravel()
        if len(v) != sum(chunks):
            raise InputFormatError(f"X has {sum(chunks)} rows but {name} has {len(v)} entries")
        return da.from_array(v, chunks=(chunks,))
    if v.ndim != 1:
        v = v.ravel()
    if np.isnan(v.shape[0]):
        v = v.compute_chunk_sizes()
    if v.shape[0] != sum(chunks):
        raise InputFormatError(f"X has {sum(chunks)} rows but {name} has {v.shape[0]} entries")
    return v.rechunk((chunks,))


def _qid_summary(qid):
    """(first id, its leading run, its count, last id, its trailing run, its count, the
    unique ids, size) of one chunk's query ids."""
    qid = np.asarray(qid).ravel()
    if not len(qid):
        return None, 0, 0, None, 0, 0, qid[:0], 0
    change = np.flatnonzero(qid[1:] != qid[:-1])
    lead = int(change[0]) + 1 if len(change) else len(qid)
    trail = len(qid) - int(change[-1]) - 1 if len(change) else len(qid)
    return (qid[0], lead, int(np.sum(qid == qid[0])), qid[-1], trail,
            int(np.sum(qid == qid[-1])), np.unique(qid), len(qid))


def aligned_partitions(X: Any, y: Any, qid: Any, client: Client
                       ) -> tuple[da.Array, da.Array, da.Array]:
    """(X, y, qid) as Dask arrays with the same row chunks, each holding whole queries.

    A query whose documents run contiguously across chunk boundaries moves whole into the
    chunk where it starts; a query found in two chunks in any other way is refused with an
    InputFormatError naming it (sort the rows by qid, or repartition by query).  Empty
    chunks are dropped."""
    X = _as_dask_matrix(X)
    if X.shape[0] == 0:
        raise InputFormatError("X has no rows")
    chunks = tuple(int(c) for c in X.chunks[0])
    y = _as_dask_vector(y, chunks, "y")
    qid = _as_dask_vector(qid, chunks, "qid")
    summaries = client.gather(client.compute(
        [dask.delayed(_qid_summary)(block) for block in qid.to_delayed().ravel()]))
    cuts = query_boundaries(summaries)
    if cuts != [int(c) for c in np.cumsum(chunks)]:
        new_chunks = tuple(int(c) for c in np.diff([0, *cuts]))
        X, y, qid = X.rechunk((new_chunks, -1)), y.rechunk((new_chunks,)), \
            qid.rechunk((new_chunks,))
    return X, y, qid


def query_boundaries(summaries):
    """End rows of the query-aligned chunks, from the chunks' ``_qid_summary``: each chunk
    end inside a run of one query moves forward to the end of that run."""
    _check_queries_contiguous(summaries)
    starts = np.cumsum([0] + [s[7] for s in summaries])
    nonempty = [k for k, s in enumerate(summaries) if s[7]]
    cuts = []
    for position, k in enumerate(nonempty):
        end = int(starts[k + 1])
        if cuts and end <= cuts[-1]:
            continue  # this chunk went whole into the previous one
        last = summaries[k][3]
        for j in nonempty[position + 1:]:
            first, lead, size = summaries[j][0], summaries[j][1], summaries[j][7]
            if first != last:
                break
            end = int(starts[j]) + lead
            if lead < size:
                break
        cuts.append(end)
    return cuts


def _check_queries_contiguous(summaries):
    """Refuse a query found in two chunks unless its documents there are one contiguous run
    across the boundary (the end of one non-empty chunk, the start of the next)."""
    seen = {}  # query id -> the last chunk it was found in
    for k, (first, lead, first_count, *_, ids, _) in enumerate(summaries):
        for q in ids.tolist():
            p = seen.get(q)
            if p is not None:
                previous = summaries[p]
                if not (previous[3] == q and previous[5] == previous[4]
                        and first == q and first_count == lead
                        and all(s[7] == 0 for s in summaries[p + 1:k])):
                    raise InputFormatError(
                        f"query {q!r} has documents in partitions {p} and {k} that are not "
                        "one contiguous run: sort the rows by qid or repartition so that "
                        "each query lies in one partition")
            seen[q] = k
