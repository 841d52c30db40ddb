"""Brute force over every ranking of a small query: the reference the oracles are tested
against.  Rankings are rows of document positions, top first."""

import itertools

import numpy as np


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
