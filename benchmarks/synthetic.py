"""A synthetic collection shaped like LETOR: queries of varying size, dense features in
[0, 1], a given share of relevant documents that depend on the features."""

import numpy as np


def letor_like(n_docs, n_features=46, sizes=(20, 1000), relevant_rate=0.25, seed=0):
    """(X, y, qid) with about ``n_docs`` documents in queries of ``sizes[0]..sizes[1]``."""
    rng = np.random.default_rng(seed)
    mean_size = (sizes[0] + sizes[1]) / 2
    query_sizes = rng.integers(sizes[0], sizes[1] + 1, int(np.ceil(n_docs / mean_size)) + 1)
    query_sizes = query_sizes[np.cumsum(query_sizes) <= n_docs]
    if len(query_sizes) == 0:  # fewer documents than one query holds: a single query
        query_sizes = np.array([n_docs])
    qid = np.repeat(np.arange(len(query_sizes)), query_sizes)
    X = rng.random((len(qid), n_features))
    signal = X @ rng.normal(size=n_features) + rng.normal(scale=2.0, size=len(qid))
    y = (signal > np.quantile(signal, 1 - relevant_rate)).astype(float)
    return X, y, qid


def _query_sizes(rng, n_docs, sizes):
    """Query sizes drawn uniformly from ``sizes[0]..sizes[1]`` summing to at most n_docs."""
    mean_size = (sizes[0] + sizes[1]) / 2
    query_sizes = rng.integers(sizes[0], sizes[1] + 1, int(np.ceil(n_docs / mean_size)) + 1)
    query_sizes = query_sizes[np.cumsum(query_sizes) <= n_docs]
    return query_sizes if len(query_sizes) else np.array([n_docs])


def sparse_letor(n_docs=50_000, n_features=100_000, nnz_per_doc=20, sizes=(20, 80),
                 relevant_rate=0.2, seed=0):
    """(X, y, qid): ``n_docs`` documents (fewer when the query sizes do not add up) with
    ``nnz_per_doc`` nonzero features each, drawn from ``n_features`` columns with a Zipf-like
    popularity (a few columns are common, most are rare, as in bag-of-words features), values
    in (0, 1]; binary labels from a sparse linear signal plus noise.  X is scipy.sparse CSR."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    query_sizes = _query_sizes(rng, n_docs, sizes)
    n = int(query_sizes.sum())
    qid = np.repeat(np.arange(len(query_sizes)), query_sizes)
    popularity = 1.0 / np.arange(1, n_features + 1) ** 0.8
    popularity /= popularity.sum()
    cols = rng.choice(n_features, size=(n, nnz_per_doc), p=popularity)
    cols.sort(axis=1)
    keep = np.ones_like(cols, dtype=bool)
    keep[:, 1:] = cols[:, 1:] != cols[:, :-1]  # a column at most once per row
    indptr = np.concatenate([[0], np.cumsum(keep.sum(axis=1))])
    indices = cols[keep]
    values = rng.random(len(indices)) + 1e-3
    X = sp.csr_matrix((values, indices, indptr), shape=(n, n_features))
    signal = X @ rng.normal(size=n_features) + rng.normal(scale=1.0, size=n)
    y = (signal > np.quantile(signal, 1 - relevant_rate)).astype(float)
    return X, y, qid


def graded_dense(n_docs=20_000, n_features=300, sizes=(5, 60), seed=0):
    """(X, y, qid): dense features shaped like a public web-search LTR sample -- correlated
    columns (a low-rank factor model plus noise, so the Gram matrices of the cuts are
    ill-conditioned), values clipped to [0, 1], graded labels 0..4 from a noisy linear
    signal (about half the documents 0, few 4)."""
    rng = np.random.default_rng(seed)
    query_sizes = _query_sizes(rng, n_docs, sizes)
    n = int(query_sizes.sum())
    qid = np.repeat(np.arange(len(query_sizes)), query_sizes)
    factors = rng.normal(size=(n, 20))
    X = factors @ rng.normal(size=(20, n_features)) / np.sqrt(20)
    X += 0.1 * rng.normal(size=(n, n_features))
    X = np.clip(0.5 + 0.2 * X, 0.0, 1.0)
    signal = X @ rng.normal(size=n_features) / np.sqrt(n_features)
    signal += rng.normal(scale=signal.std(), size=n)
    y = np.digitize(signal, np.quantile(signal, [0.5, 0.75, 0.9, 0.97])).astype(float)
    return X, y, qid
