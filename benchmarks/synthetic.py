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


def _grades(rng, signal, shares):
    """Graded labels 0..len(shares): the signal plus as much noise, cut at the quantiles
    that leave ``shares[g]`` of the documents at grade g or above (g >= 1)."""
    noisy = signal + rng.normal(scale=signal.std(), size=len(signal))
    return np.digitize(noisy, np.quantile(noisy, 1.0 - np.asarray(shares))).astype(float)


def small_dense(n_queries=200, n_features=300, sizes=(10, 25), seed=0):
    """(X, y, qid): issue 33's first shape -- ``n_queries`` queries of ``sizes[0]..sizes[1]``
    documents (3,500 at the defaults), dense correlated features in [0, 1] (a 20-factor model
    plus noise, as graded_dense), grades 0..4 (about half the documents 0)."""
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), rng.integers(sizes[0], sizes[1] + 1, n_queries))
    n = len(qid)
    factors = rng.normal(size=(n, 20))
    X = factors @ rng.normal(size=(20, n_features)) / np.sqrt(20)
    X += 0.1 * rng.normal(size=(n, n_features))
    X = np.clip(0.5 + 0.2 * X, 0.0, 1.0)
    signal = X @ rng.normal(size=n_features) / np.sqrt(n_features)
    return X, _grades(rng, signal, [0.5, 0.25, 0.1, 0.03]), qid


def ltr_challenge_like(n_queries=200, n_features=300, sizes=(5, 25), seed=0):
    """(X, y, qid): issue 33's second shape, a sample shaped like a public web-search
    learning-to-rank challenge set -- about 15 documents a query (3,000 at the defaults),
    each with about 217 of the 300 features present (a feature's presence rate drawn from
    0.3..1, most near 1; absent features are not stored), present values in (0, 1] with
    correlated columns; grades 0..4 (about half 0, few 4).  X is scipy.sparse CSR."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), rng.integers(sizes[0], sizes[1] + 1, n_queries))
    n = len(qid)
    presence = np.clip(rng.beta(1.2, 0.35, n_features), 0.3, 1.0)
    presence *= (217.0 / 300.0) / presence.mean()
    present = rng.random((n, n_features)) < np.minimum(presence, 1.0)
    factors = rng.normal(size=(n, 10))
    values = factors @ rng.normal(size=(10, n_features)) / np.sqrt(10)
    values = np.clip(1.0 / (1.0 + np.exp(-values - 0.3 * rng.normal(size=values.shape))),
                     1e-3, 1.0)
    X = sp.csr_matrix(np.where(present, values, 0.0))
    signal = X @ (rng.normal(size=n_features) * (rng.random(n_features) < 0.3))
    return X, _grades(rng, signal, [0.5, 0.2, 0.07, 0.02]), qid


def sparse_graded(n_docs=50_000, n_features=100_000, n_queries=500, nnz_per_doc=20, seed=0):
    """(X, y, qid): issue 33's third shape -- sparse_letor's bag-of-words-like documents
    (``nnz_per_doc`` non-zeros from ``n_features`` Zipf-popular columns) in ``n_queries``
    queries of about n_docs / n_queries documents (0.6..1.4 times that), grades 0..2
    (about 20% 1, 5% 2).  X is scipy.sparse CSR."""
    mean = n_docs / n_queries
    X, _, qid = sparse_letor(n_docs=n_docs, n_features=n_features, nnz_per_doc=nnz_per_doc,
                             sizes=(int(0.6 * mean), int(1.4 * mean)), seed=seed)
    rng = np.random.default_rng(seed + 1)
    signal = X @ rng.normal(size=n_features)
    return X, _grades(rng, signal, [0.25, 0.05]), qid
