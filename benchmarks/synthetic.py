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
