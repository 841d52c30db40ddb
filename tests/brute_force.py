"""Brute force over every ranking of a small query: the reference the oracles are tested
against.  Rankings are rows of document positions, top first."""

import itertools

import numpy as np


def random_query(rng, n_rel, n_non, tied, tie_grid):
    """Scores and relevance of one query of ``n_rel`` relevant and ``n_non`` non-relevant
    documents in random positions.  ``tied``: the scores are integers in [-k, k] times one
    step drawn from ``steps``, ``tie_grid = (k, steps)`` (few distinct values, so ties within
    and across classes are common); otherwise normal at a scale of 0.01, 0.3 or 3."""
    n = n_rel + n_non
    if tied:
        k, steps = tie_grid
        scores = rng.integers(-k, k + 1, n) * rng.choice(steps)
    else:
        scores = rng.normal(scale=rng.choice([0.01, 0.3, 3.0]), size=n)
    relevant = np.zeros(n, dtype=bool)
    relevant[rng.choice(n, n_rel, replace=False)] = True
    return scores.astype(float), relevant


def small_queries(seed, trials, tie_grid, max_docs=7):
    """``trials`` random queries (random_query) of 1-4 relevant and 1-5 non-relevant documents,
    at most ``max_docs`` of them (brute force enumerates their max_docs! rankings); every
    other one tied on ``tie_grid``."""
    rng = np.random.default_rng(seed)
    for trial in range(trials):
        n_rel, n_non = rng.integers(1, 5), rng.integers(1, 6)
        if n_rel + n_non > max_docs:
            n_non = max_docs - n_rel
        yield random_query(rng, n_rel, n_non, trial % 2 == 0, tie_grid)


def all_orders(m):
    return np.array(list(itertools.permutations(range(m))), dtype=np.int64)


def pairwise_psi_dot_w(order, scores, relevant):
    """w.psi(x, y) from the definition 1/(|P||N|) sum_{i in P, j in N} y_ij (s_i - s_j),
    y_ij = +1 when i is ranked above j, for every ranking ``order`` (rows: docs top-down)."""
    rank = np.empty_like(order)
    rank[np.arange(len(order))[:, None], order] = np.arange(order.shape[1])
    pos, neg = np.flatnonzero(relevant), np.flatnonzero(~relevant)
    y = np.where(rank[:, pos][:, :, None] < rank[:, neg][:, None, :], 1.0, -1.0)
    diff = scores[pos][:, None] - scores[neg][None, :]
    return (y * diff).sum(axis=(1, 2)) / (len(pos) * len(neg))


def average_precision_of_orders(order, relevant):
    """AP of every ranking, from its definition: mean over relevant docs of precision at rank."""
    hits = relevant[order]
    precision = np.cumsum(hits, axis=1) / np.arange(1, order.shape[1] + 1)
    return (precision * hits).sum(axis=1) / hits.sum(axis=1)


def brute_force_max_h(scores, relevant):
    orders = all_orders(len(scores))
    h = 1.0 - average_precision_of_orders(orders, relevant)
    h += pairwise_psi_dot_w(orders, scores, relevant)
    return h.max()


def gains_of_labels(labels):
    """2^label - 1 for relevant documents (label > 0), 0 for the others."""
    labels = np.asarray(labels, dtype=float)
    return np.where(labels > 0, np.exp2(labels) - 1.0, 0.0)


def _precision_loss(hits, labels, k):
    n_rel = int((np.asarray(labels) > 0).sum())
    cut = n_rel if k is None else k
    return (min(cut, n_rel) - hits[:, :cut].sum(axis=1)) / min(cut, n_rel)


def _ndcg_loss(order, labels, k):
    m = order.shape[1]
    cut = m if k is None else min(k, m)
    discount = 1.0 / np.log2(np.arange(2, m + 2))[:cut]
    gains = gains_of_labels(labels)
    dcg = (gains[order][:, :cut] * discount).sum(axis=1)
    idcg = (np.sort(gains)[::-1][:cut] * discount).sum()
    return 1.0 - dcg / idcg


#: Delta of every ranking per loss kind of svmmap.kernels._loss_kernels.KINDS, from the
#: definitions of issue 17: (order, hits, labels, k) -> losses.  A kind missing here fails
#: the oracle tests, which run over every kind of the kernels' table.
LOSS_DEFINITIONS = {
    "p@k": lambda order, hits, labels, k: _precision_loss(hits, labels, k),
    "rprec": lambda order, hits, labels, k: _precision_loss(hits, labels, None),
    "mrr": lambda order, hits, labels, k: 1.0 - 1.0 / (np.argmax(hits, axis=1) + 1.0),
    "ndcg": lambda order, hits, labels, k: _ndcg_loss(order, labels, k),
}


def loss_of_orders(order, labels, kind, k=None):
    """Delta(y*, y) of every ranking (rows of ``order``) from the definitions of issue 17:
    p@k, rprec, mrr and ndcg@k (k=None: k = m; gain 2^label - 1, discount 1/log2(1 + r))."""
    labels = np.asarray(labels, dtype=float)
    return LOSS_DEFINITIONS[kind](order, (labels > 0)[order], labels, k)


def brute_force_max_h_loss(scores, labels, kind, k=None):
    """max over every ranking y of Delta(y*, y) + w.psi(x, y) for the losses of issue 17."""
    orders = all_orders(len(scores))
    relevant = np.asarray(labels) > 0
    h = loss_of_orders(orders, labels, kind, k) + pairwise_psi_dot_w(orders, scores, relevant)
    return h.max()
