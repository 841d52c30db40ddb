# cython: language_level=3
# distutils: language = c++
"""Exact most violated constraints for Precision@k, R-precision, MRR and NDCG@k on the joint
feature map of SVM-MAP, over a whole collection in one call each.

Inputs follow _map_kernels: documents in grouped order (query g is rows ``ptr[g]:ptr[g + 1]``),
a score s = w.phi per document, and a *gain* per document: 2^label - 1 for the relevant
documents (label > 0), 0 for the others (for the losses other than NDCG only gain > 0, i.e.
relevance, matters).  A query without a relevant or without a non-relevant document has no
constraint: coefficients 0, loss 0.

The losses (a ranking y of a query with relevant set P, non-relevant set N, m = |P| + |N|,
l_r the label at rank r, D(r) = 1 / log2(1 + r)):

    p@k:    Delta = (min(k, |P|) - #relevant in the top k) / min(k, |P|)
    rprec:  p@k with k = |P|
    mrr:    Delta = 1 - 1 / (rank of the first relevant document)
    ndcg@k: Delta = 1 - DCG@k(y) / IDCG@k,  DCG@k = sum_{r <= min(k, m)} (2^{l_r} - 1) D(r),
            IDCG@k the DCG@k of the gains sorted decreasingly; ``ndcg`` is k = m.

The joint feature map (Yue et al. 2007) psi = 1/(|P||N|) sum_{i in P, j in N} y_ij (phi_i -
phi_j) sees only which relevant document is above which non-relevant one.  With the relevant
documents sorted by score s_1 >= ... >= s_|P| and the non-relevant ones t_1 >= ... >= t_|N|
(ties: position), write a_i for the non-relevant documents above relevant i and b_j for the
relevant documents above non-relevant j.  Then (PN = |P||N|, T_a = t_1 + ... + t_a,
S_b = s_1 + ... + s_b)

    PN w.psi(y) = const + sum_{i in P} 2 (T_{a_i} - a_i s_i)                           (1)
                = const + sum_{j in N} 2 (S_{b_j} - b_j t_j)   (relevant in score order)  (2)

Two facts used throughout.  (i) Exchange: for a fixed pattern of relevant / non-relevant
slots, psi is largest with both classes in score order (rearrangement inequality: the
coefficients (|N| - 2 a_i) and (|P| - 2 b_j) do not increase down the ranking); losses that
depend on the pattern only can therefore be maximised over interleavings of the two sorted
lists, i.e. non-decreasing (b_j).  (ii) Concavity: G_j(b) = 2 (S_b - b t_j) has increments
2 (s_b - t_j), non-increasing in b, so over an interval [L, U] it is maximised by clipping
its free maximiser b*_j = #{i : s_i > t_j} into [L, U]; b*_j does not decrease in j, so
clipping with bounds that do not decrease in j still gives an interleaving.

p@k, rprec, mrr (Chakrabarti, Khanna, Sawant & Bhattacharyya, KDD 2008, Section 4: enumerate
the value of the loss, then solve the constrained interleaving).  With h relevant documents
in the top K = min(k, m) the top K holds exactly the first K - h non-relevant ones, i.e.
b_j <= h for j <= K - h and b_j >= h for j > K - h; with the first relevant document at rank
c + 1, b_j = 0 for j <= c and b_j >= 1 for j > c.  Each case is fact (ii) with bounds
[0, lo] before a split c and [hi, |P|] after it, and its psi part is

    sum_{j <= c} G_j(min(b*_j, lo)) + sum_{j > c} G_j(max(b*_j, hi)),

which prefix sums of G_j(b*_j), of t_j and S_b give in O(1) per case.  The loss is the same
for every ranking of a case, so the best case is the most violated ranking.  Cost
O(m log m) per query (the sort; O(m) after it).

ndcg@k.  The loss depends on the grades of the relevant documents in the top K = min(k, m),
so fact (i) holds within a grade only: two relevant documents of equal gain above each
other (a <= a') are best in score order (swapping changes (1) by 2 (a' - a)(s_lower -
s_upper)/PN and DCG not at all), but documents of different grades trade DCG against psi
(Chakrabarti et al. solve this trade-off by an assignment of the top-k slots; here it is a
dynamic programme over the merge, exact for any k).  So an optimal ranking is an
interleaving of G + 1 sorted lists: each distinct gain's relevant documents by score, and
the non-relevant ones by score.  By (1) the objective decouples over relevant documents
given a_i:

    H(y) = Delta + w.psi = const + sum_{i in P} [ 2 (T_{a_i} - a_i s_i) / PN
                                                  - gain_i D(rank_i) [rank_i <= K] / IDCG ].

Dynamic programme over the top K ranks: a state is (u_1, ..., u_G, n) -- the first u_g
documents of grade g and the first n non-relevant ones fill ranks 1..sum u + n; placing the
next document of grade g at rank r = sum u + n + 1 adds 2 (T_n - n s) / PN - gain_g D(r) /
IDCG, placing a non-relevant one adds 0.  A state with rank K filled (or every relevant
document placed) is completed by the rest: the remaining relevant documents lie below
rank K, so each only needs a_i >= n, and by (ii) on (1) each takes a_i = max(a*_i, n),
a*_i = #{j : t_j > s_i} (non-decreasing in score order, so again an interleaving).  Every
ranking with the within-class orders of (i) is one path of the programme, so its maximum
is the maximum of H.  Cost O(m log m + S (G + 1) + F |P|), S = prod_g (min(|P_g|, K) + 1)
(min(|N|, K) + 1) the states and F <= S the completed ones: for a fixed number of grades
polynomial, O(K^{G+1}) for ndcg@K (LETOR's 2 relevant grades, K = 10: at most 1,331
states), O(|P_1| |P_2| |N|) for full ndcg on LETOR (benchmarks/losses.py measures it).
A query needing more than 2^24 states (many distinct grades with a large k) is refused with
an error rather than run for hours.

Ties in the scores: the relevant and non-relevant lists are sorted by score with ties by
position, as for SVM-MAP; the maximum of H does not depend on how ties are broken (the tests
compare with brute force over every permutation, ties and graded labels included).
"""

import numpy as np

from collections import namedtuple

from libc.math cimport INFINITY, NAN
from libc.string cimport memset

cimport svmmap.kernels._query_core as core

from ._kernel_inputs import (
    checked_constraint_inputs,
    checked_gains,
    checked_query_arrays,
    largest_query,
)

cdef enum:
    MAX_STATES = 16777216  # 2^24

#: the largest dynamic programme (states) the NDCG oracle runs on one query
MAX_NDCG_STATES = MAX_STATES

# the cutoff rules of the loss kinds: what the cutoff k of a call means
cdef enum:
    CUTOFF_REQUIRED = 0  # a positive k must be given (p@k)
    CUTOFF_OPTIONAL = 1  # a positive k, or None for the whole query (ndcg)
    CUTOFF_RELEVANT = 2  # no k: the query's number of relevant documents |P| (rprec)
    CUTOFF_NONE = 3      # no k (mrr)

_CUTOFF_NAMES = ("required", "optional", "relevant", "none")


cdef struct LossSpec:
    const LossKind *kind
    Py_ssize_t k              # cutoff of p@k and ndcg@k (ndcg: the largest query for k = m)
    const double *discount    # discount[r] = 1 / log2(1 + r), r = 1..largest query


# Delta(y*, y) of one query's ranking y: ``ranked[0:size]`` its documents top first (their
# positions in the query), ``relevant`` and ``gains`` per position (0 < n_rel < size); ``ws``
# the calling thread's workspace, whose ``docs`` are ``ranked`` and may be reused.
ctypedef double (*RankingLoss)(const unsigned char *relevant, const double *gains,
                               Py_ssize_t size, Py_ssize_t n_rel, core.Workspace *ws,
                               const LossSpec *spec) noexcept nogil


cdef struct LossKind:
    # one kind of loss: everything the entry points below ask of it
    const char *name           # as the kernels take it (svmmap.core.measures' ``oracle``)
    int cutoff                 # CUTOFF_*
    bint graded                # reads the graded gains (else only gain > 0 counts)
    core.QueryOracle oracle    # its exact most violated ranking on one query
    RankingLoss ranking_loss   # Delta of a given ranking


cdef inline Py_ssize_t _top(const LossSpec *spec, Py_ssize_t size, Py_ssize_t n_rel) noexcept nogil:
    """The number of top ranks the loss looks at on a query: |P| for CUTOFF_RELEVANT, else
    min(k, m)."""
    if spec.kind.cutoff == CUTOFF_RELEVANT:
        return n_rel
    return spec.k if spec.k < size else size


# ---------------------------------------------------------------------------------------------
# p@k, rprec, mrr: enumerate the loss value, clip the free interleaving
# ---------------------------------------------------------------------------------------------

cdef struct Counting:
    # one query's prefix sums for the counting oracles (module docstring)
    const core.ScoredDoc *rel  # the relevant documents by score
    const core.ScoredDoc *non  # the non-relevant ones by score
    Py_ssize_t n_rel
    Py_ssize_t n_non
    double scale               # 2 / (|P||N|)
    double *S                  # S[i]: sum of the i best relevant scores
    double *A                  # A[j]: sum of G_l(b*_l)/PN over the j best non-relevant
    double *T                  # T[j]: sum of the j best non-relevant scores
    double *count_le           # count_le[x] = #{j : b*_j <= x}
    Py_ssize_t *b              # b*_j, then the chosen b_j


cdef bint _counting_sums(const double *scores, const unsigned char *relevant, Py_ssize_t size,
                         Py_ssize_t n_rel, core.Workspace *ws, Counting *c) noexcept nogil:
    """Fill ``c`` for one query; False when the workspace cannot grow."""
    cdef Py_ssize_t n_non = size - n_rel, i, j, x
    c.S = <double *> core.workspace_reserve(ws, (2 * n_rel + 2 * n_non + 4) * sizeof(double))
    if c.S == NULL:
        return False
    c.rel, c.non, c.n_rel, c.n_non, c.b = ws.docs, ws.docs + n_rel, n_rel, n_non, ws.counts
    c.scale = 2.0 / (<double> n_rel * <double> n_non)
    c.A = c.S + n_rel + 1
    c.T = c.A + n_non + 1
    c.count_le = c.T + n_non + 1
    core.split_sorted(scores, relevant, size, n_rel, ws.docs)
    i = 0
    for j in range(n_non):  # b*_j = #{i : s_i > t_j}, non-decreasing in j
        while i < n_rel and c.rel[i].score > c.non[j].score:
            i += 1
        c.b[j] = i
    c.S[0] = 0.0
    for i in range(n_rel):
        c.S[i + 1] = c.S[i] + c.rel[i].score
    c.A[0] = 0.0
    c.T[0] = 0.0
    for j in range(n_non):
        c.A[j + 1] = c.A[j] + c.scale * (c.S[c.b[j]] - c.b[j] * c.non[j].score)
        c.T[j + 1] = c.T[j] + c.non[j].score
    j = 0
    for x in range(n_rel + 1):
        while j < n_non and c.b[j] <= x:
            j += 1
        c.count_le[x] = j
    return True


cdef inline double _clipped_psi(const Counting *c, Py_ssize_t split, Py_ssize_t lo,
                                Py_ssize_t hi) noexcept nogil:
    """sum_j G_j(b_j)/PN with b_j = min(b*_j, lo) for j < split and max(b*_j, hi) for
    j >= split (0-based j)."""
    cdef Py_ssize_t u = <Py_ssize_t> c.count_le[lo]
    cdef Py_ssize_t v = 0 if hi == 0 else <Py_ssize_t> c.count_le[hi - 1]
    if u > split:
        u = split
    if v < split:
        v = split
    return c.A[u] + c.scale * ((split - u) * c.S[lo] - lo * (c.T[split] - c.T[u])) \
        + c.scale * ((v - split) * c.S[hi] - hi * (c.T[v] - c.T[split])) \
        + c.A[c.n_non] - c.A[v]


cdef double _clipped_ranking(Counting *c, Py_ssize_t split, Py_ssize_t lo, Py_ssize_t hi,
                             double loss, double *coef) noexcept nogil:
    """Write the psi coefficients of the case's ranking (b*_j clipped as in _clipped_psi);
    return its ``loss``."""
    cdef Py_ssize_t j
    for j in range(c.n_non):
        if j < split:
            c.b[j] = c.b[j] if c.b[j] < lo else lo
        else:
            c.b[j] = c.b[j] if c.b[j] > hi else hi
    core.coefficients_from_interleaving(c.rel, c.n_rel, c.non, c.n_non, c.b, coef)
    return loss


cdef double _precision_oracle(const double *scores, const unsigned char *relevant,
                              const double *gains, Py_ssize_t size, Py_ssize_t n_rel,
                              core.Workspace *ws, double *coef, const void *context) noexcept nogil:
    """p@k or rprec on one query (a QueryOracle, ``context`` a LossSpec): h relevant
    documents in the top k.  O(m log m)."""
    cdef Counting c
    cdef Py_ssize_t k = _top(<const LossSpec *> context, size, n_rel), h, best_h = 0
    cdef double denom = <double> (k if k < n_rel else n_rel), loss, value, best = -INFINITY
    if not _counting_sums(scores, relevant, size, n_rel, ws, &c):
        return NAN
    for h in range(k - c.n_non if k > c.n_non else 0, (k if k < n_rel else n_rel) + 1):
        value = (denom - h) / denom + _clipped_psi(&c, k - h, h, h)
        if value > best:
            best = value
            best_h = h
    return _clipped_ranking(&c, k - best_h, best_h, best_h, (denom - best_h) / denom, coef)


cdef double _mrr_oracle(const double *scores, const unsigned char *relevant,
                        const double *gains, Py_ssize_t size, Py_ssize_t n_rel,
                        core.Workspace *ws, double *coef, const void *context) noexcept nogil:
    """mrr on one query (a QueryOracle): c non-relevant documents above the first relevant
    one.  O(m log m)."""
    cdef Counting c
    cdef Py_ssize_t split, best_split = 0
    cdef double value, best = -INFINITY
    if not _counting_sums(scores, relevant, size, n_rel, ws, &c):
        return NAN
    for split in range(c.n_non + 1):
        value = 1.0 - 1.0 / (split + 1.0) + _clipped_psi(&c, split, 0, 1)
        if value > best:
            best = value
            best_split = split
    return _clipped_ranking(&c, best_split, 0, 1, 1.0 - 1.0 / (best_split + 1.0), coef)


# ---------------------------------------------------------------------------------------------
# ndcg@k: dynamic programme over the merge of the grades and the non-relevant list
# ---------------------------------------------------------------------------------------------

cdef double _ndcg_oracle(const double *scores, const unsigned char *relevant,
                         const double *gains, Py_ssize_t size, Py_ssize_t n_rel,
                         core.Workspace *ws, double *coef, const void *context) noexcept nogil:
    """ndcg@k on one query (a QueryOracle, ``context`` a LossSpec; module docstring).
    Returns NaN when the workspace cannot grow or the programme would exceed
    MAX_NDCG_STATES states."""
    cdef const LossSpec *spec = <const LossSpec *> context
    cdef const double *disc = spec.discount
    cdef Py_ssize_t n_non = size - n_rel
    cdef Py_ssize_t K = _top(spec, size, n_rel)
    cdef const core.ScoredDoc *rel = ws.docs
    cdef const core.ScoredDoc *non = ws.docs + n_rel
    cdef double pn = <double> n_rel * <double> n_non
    cdef double scale = 2.0 / pn
    cdef Py_ssize_t i, j, g, t, n_grades, idx, rem, p, placed, nn, nxt, best_idx = -1, d, a
    cdef double idcg, value, v, best = -INFINITY, dcg, n_states_f
    cdef Py_ssize_t n_states
    cdef char *buf
    cdef core.ScoredDoc *keyed
    cdef double *T
    cdef double *grade_gain
    cdef Py_ssize_t *astar
    cdef Py_ssize_t *a_of
    cdef Py_ssize_t *grade_start
    cdef Py_ssize_t *radix
    cdef Py_ssize_t *stride
    cdef Py_ssize_t *coord
    cdef double *V
    cdef int *choice
    cdef size_t head = ((n_rel + 1) * sizeof(core.ScoredDoc) + (n_non + n_rel + 2) * sizeof(double)
                        + (7 * n_rel + 16) * sizeof(Py_ssize_t))

    core.split_sorted(scores, relevant, size, n_rel, ws.docs)
    buf = <char *> core.workspace_reserve(ws, head)
    if buf == NULL:
        return NAN
    # grades: the relevant documents keyed by (gain descending, score order)
    keyed = <core.ScoredDoc *> buf
    for i in range(n_rel):
        keyed[i].score = gains[rel[i].index]
        keyed[i].index = i
    core.sort_by_score_descending(keyed, n_rel)
    n_grades = 0
    for i in range(n_rel):
        if i == 0 or keyed[i].score != keyed[i - 1].score:
            n_grades += 1
    # the programme's size, before asking for its memory
    n_states_f = (K if K < n_non else n_non) + 1.0
    g = 0
    t = 0
    for i in range(n_rel + 1):
        if i == n_rel or (i > 0 and keyed[i].score != keyed[i - 1].score):
            n_states_f *= (K if K < i - t else i - t) + 1.0
            t = i
    if n_states_f > MAX_STATES:
        return NAN
    n_states = <Py_ssize_t> n_states_f
    buf = <char *> core.workspace_reserve(ws, head + n_states * (sizeof(double) + sizeof(int)))
    if buf == NULL:
        return NAN
    keyed = <core.ScoredDoc *> buf
    T = <double *> (keyed + n_rel + 1)
    grade_gain = T + n_non + 1
    astar = <Py_ssize_t *> (grade_gain + n_rel + 1)
    a_of = astar + n_rel + 1
    grade_start = a_of + n_rel + 1
    radix = grade_start + n_rel + 2
    stride = radix + n_rel + 2
    coord = stride + n_rel + 3
    V = <double *> (buf + head)
    choice = <int *> (V + n_states)

    T[0] = 0.0
    for j in range(n_non):
        T[j + 1] = T[j] + non[j].score
    g = -1
    for i in range(n_rel):
        if i == 0 or keyed[i].score != keyed[i - 1].score:
            g += 1
            grade_gain[g] = keyed[i].score
            grade_start[g] = i
    grade_start[n_grades] = n_rel
    # a*_i = #{j : t_j > s_i}, per document in keyed order
    for i in range(n_rel):
        d = keyed[i].index
        j = 0
        a = n_non
        while j < a:  # binary search: first j with t_j <= s
            t = (j + a) // 2
            if non[t].score > rel[d].score:
                j = t + 1
            else:
                a = t
        astar[i] = j
    idcg = 0.0
    for i in range(n_rel if n_rel < K else K):
        idcg += keyed[i].score * disc[i + 1]
    stride[0] = 1
    for g in range(n_grades + 1):
        if g < n_grades:
            t = grade_start[g + 1] - grade_start[g]
        else:
            t = n_non
        radix[g] = (t if t < K else K) + 1
        stride[g + 1] = stride[g] * radix[g]

    for idx in range(n_states):
        V[idx] = -INFINITY
    V[0] = 0.0
    for idx in range(n_states):
        v = V[idx]
        if v == -INFINITY:
            continue
        rem = idx
        p = 0
        placed = 0
        for g in range(n_grades + 1):
            coord[g] = rem % radix[g]
            rem = rem // radix[g]
            p += coord[g]
            if g < n_grades:
                placed += coord[g]
        nn = coord[n_grades]
        if p == K or placed == n_rel:
            # complete with the rest: a_i = max(a*_i, nn) below rank K
            value = v
            for g in range(n_grades):
                for i in range(grade_start[g] + coord[g], grade_start[g + 1]):
                    a = astar[i] if astar[i] > nn else nn
                    value += scale * (T[a] - a * rel[keyed[i].index].score)
            if value > best:
                best = value
                best_idx = idx
            continue
        for g in range(n_grades):
            if coord[g] < radix[g] - 1:
                i = grade_start[g] + coord[g]
                value = v + scale * (T[nn] - nn * rel[keyed[i].index].score) \
                    - grade_gain[g] * disc[p + 1] / idcg
                nxt = idx + stride[g]
                if value > V[nxt]:
                    V[nxt] = value
                    choice[nxt] = <int> g
        if nn < radix[n_grades] - 1:
            nxt = idx + stride[n_grades]
            if v > V[nxt]:
                V[nxt] = v
                choice[nxt] = <int> n_grades

    # the ranking of the best completed state: a_i along the path, then the rest
    idx = best_idx
    rem = idx
    for g in range(n_grades + 1):
        coord[g] = rem % radix[g]
        rem = rem // radix[g]
    nn = coord[n_grades]
    for g in range(n_grades):
        for i in range(grade_start[g] + coord[g], grade_start[g + 1]):
            a_of[i] = astar[i] if astar[i] > nn else nn
    dcg = 0.0
    while idx != 0:
        rem = idx
        p = 0
        for g in range(n_grades + 1):
            coord[g] = rem % radix[g]
            rem = rem // radix[g]
            p += coord[g]
        g = choice[idx]
        if g < n_grades:
            i = grade_start[g] + coord[g] - 1
            a_of[i] = coord[n_grades]
            dcg += grade_gain[g] * disc[p]
        idx -= stride[g]
    # psi coefficients: c_i = (|N| - 2 a_i)/PN, c_j = (|P| - 2 b_j)/PN, b_j = #{i : a_i <= j}
    memset(ws.counts, 0, (n_non + 1) * sizeof(Py_ssize_t))
    for i in range(n_rel):
        ws.counts[a_of[i]] += 1
        coef[rel[keyed[i].index].index] = (n_non - 2.0 * a_of[i]) / pn
    t = 0
    for j in range(n_non):
        t += ws.counts[j]
        coef[non[j].index] = (n_rel - 2.0 * t) / pn
    return 1.0 - dcg / idcg


# ---------------------------------------------------------------------------------------------
# Delta of a given ranking
# ---------------------------------------------------------------------------------------------

cdef double _precision_of_ranking(const unsigned char *relevant, const double *gains,
                                  Py_ssize_t size, Py_ssize_t n_rel, core.Workspace *ws,
                                  const LossSpec *spec) noexcept nogil:
    """p@k or rprec of the ranking in ``ws.docs`` (a RankingLoss)."""
    cdef Py_ssize_t rank, cut = _top(spec, size, n_rel), hits = 0
    for rank in range(cut):
        if relevant[ws.docs[rank].index]:
            hits += 1
    cut = cut if cut < n_rel else n_rel
    return (cut - hits) / (<double> cut)


cdef double _mrr_of_ranking(const unsigned char *relevant, const double *gains,
                            Py_ssize_t size, Py_ssize_t n_rel, core.Workspace *ws,
                            const LossSpec *spec) noexcept nogil:
    """mrr of the ranking in ``ws.docs`` (a RankingLoss)."""
    cdef Py_ssize_t rank = 0
    while not relevant[ws.docs[rank].index]:
        rank += 1
    return 1.0 - 1.0 / (rank + 1.0)


cdef double _ndcg_of_ranking(const unsigned char *relevant, const double *gains,
                             Py_ssize_t size, Py_ssize_t n_rel, core.Workspace *ws,
                             const LossSpec *spec) noexcept nogil:
    """ndcg@k of the ranking in ``ws.docs`` (a RankingLoss; sorts ``ws.docs`` by gain for
    the ideal DCG)."""
    cdef Py_ssize_t rank, cut = _top(spec, size, n_rel)
    cdef double dcg = 0.0, idcg = 0.0
    for rank in range(cut):
        dcg += gains[ws.docs[rank].index] * spec.discount[rank + 1]
    for rank in range(size):
        ws.docs[rank].score = gains[rank]
        ws.docs[rank].index = rank
    core.sort_by_score_descending(ws.docs, size)
    for rank in range(cut):
        idcg += ws.docs[rank].score * spec.discount[rank + 1]
    return 1.0 - dcg / idcg


# ---------------------------------------------------------------------------------------------
# The table of loss kinds: adding a loss is one record here (its oracle and its Delta of a
# ranking above); the Python entry points, the plugin and the tests read it
# ---------------------------------------------------------------------------------------------

cdef LossKind[4] _TABLE  # its size: the number of records below (Cython checks it)
_TABLE[:] = [
    LossKind(b"p@k", CUTOFF_REQUIRED, False, _precision_oracle, _precision_of_ranking),
    LossKind(b"rprec", CUTOFF_RELEVANT, False, _precision_oracle, _precision_of_ranking),
    LossKind(b"mrr", CUTOFF_NONE, False, _mrr_oracle, _mrr_of_ranking),
    LossKind(b"ndcg", CUTOFF_OPTIONAL, True, _ndcg_oracle, _ndcg_of_ranking),
]

#: one record of a loss kind, as Python sees it: its index in the kernels' table, its cutoff
#: rule ("required": p@k; "optional": ndcg, None for the whole query; "relevant": k = |P|;
#: "none") and whether it reads the graded gains (else only gain > 0, relevance, counts)
Kind = namedtuple("Kind", ("code", "cutoff", "graded"))

#: the kinds of loss this module knows, by the name the kernels take, in table order
KINDS = {_TABLE[i].name.decode(): Kind(i, _CUTOFF_NAMES[_TABLE[i].cutoff], bool(_TABLE[i].graded))
         for i in range(sizeof(_TABLE) // sizeof(LossKind))}


# ---------------------------------------------------------------------------------------------
# Python entry points
# ---------------------------------------------------------------------------------------------

cdef object _spec(str kind, k, Py_ssize_t largest, LossSpec *spec):
    """Fill ``spec`` from the table record of ``kind``; return the discount array it points
    into (keep it alive)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
    spec.kind = &_TABLE[<int> KINDS[kind].code]
    spec.k = 0
    if spec.kind.cutoff == CUTOFF_REQUIRED or spec.kind.cutoff == CUTOFF_OPTIONAL:
        if k is None:
            if spec.kind.cutoff == CUTOFF_REQUIRED:
                raise ValueError(f"{kind} needs a cutoff k")
            k = max(largest, 1)
        if int(k) != k or k < 1:
            raise ValueError(f"the cutoff k must be a positive integer, got {k!r}")
        spec.k = min(int(k), max(largest, 1))
    discount = np.zeros(largest + 2)
    discount[1:] = 1.0 / np.log2(np.arange(2, largest + 3))
    cdef const double[::1] view = discount
    spec.discount = &view[0]
    return discount


def _checked_losses(loss, kind):
    if np.isnan(loss).any():
        raise MemoryError(
            f"the {kind} oracle could not run on some query: out of memory, or its dynamic "
            f"programme would need more than {MAX_NDCG_STATES} states (too many distinct "
            "relevance grades for this cutoff)")
    return loss


def most_violated(scores, gains, ptr, str kind, k=None, int n_threads=1):
    """The ranking y_hat = argmax_y Delta(y*, y) + w.psi(y) of every query for the loss
    ``kind`` (a name of ``KINDS``: "p@k" with cutoff k, "rprec", "mrr", "ndcg" with cutoff k
    or None for k = m).

    Parameters
    ----------
    scores : float64 (m,), w.phi(x, d) per document in grouped order
    gains : float64 (m,), 2^label - 1 for relevant documents, 0 for the others
    ptr : int (n + 1,), query offsets
    n_threads : threads to split the queries over (1 without OpenMP)

    Returns (coef (m,), the psi coefficients of y_hat, psi(x, y_hat) = X_q^T coef_q;
    loss (n,), Delta(y*, y_hat)); queries without a relevant or without a non-relevant
    document get coefficients 0 and loss 0.
    """
    cdef LossSpec spec
    s_arr, r_arr, p_arr = checked_query_arrays(scores, np.asarray(gains) > 0, ptr)
    g_arr = checked_gains(gains, r_arr)
    discount = _spec(kind, k, largest_query(p_arr), &spec)
    coef, loss = core.oracle_pass(s_arr, r_arr, p_arr, spec.kind.oracle, &spec, n_threads,
                                  g_arr if spec.kind.graded else None)
    del discount
    return coef, _checked_losses(loss, kind)


def loss_constraints(X, w, gains, ptr, str kind, k=None, int n_threads=1):
    """The whole separation step of one cutting-plane iteration for the loss ``kind`` (as in
    ``most_violated``), in one pass over the data (``_query_core.constraints_pass``): for
    every query the scores X_q w, the most violated ranking y_hat_q, its loss Delta_q, the
    coefficients c* - c_hat of dpsi_q = X_q^T (c* - c_hat) and the margin w.dpsi_q.  X is a
    C-contiguous float64 or float32 ndarray, the CSRArrays of a sparse matrix or BinnedArrays
    (binned features, scored by lookup: ``_query_core.constraints_pass``), documents in
    grouped order.  Returns (loss (n,), coef (m,), margin (n,))."""
    graded = kind in KINDS and KINDS[kind].graded
    inputs = checked_constraint_inputs(X, w, np.asarray(gains) > 0, ptr,
                                       gains if graded else None)
    return loss_pass(inputs, kind, k, n_threads)[:3]


def loss_pass(inputs, str kind, k=None, int n_threads=1):
    """``loss_constraints`` of inputs checked once: a ConstraintInputs that
    ``checked_constraint_inputs`` made (with the gains for a graded kind; its ``w`` replaced
    by a C-contiguous float64 vector of its ``n_features``).  The plugins' per-iteration entry
    (svmmap.core.plugins.measure): the data are checked when the plugin is made, not on every
    pass; nothing here checks them.  Returns (loss, coef, margin, the sums of ``inputs.sums``
    or None): ``_query_core.constraints_pass``."""
    cdef LossSpec spec
    discount = _spec(kind, k, largest_query(inputs.ptr), &spec)
    loss, coef, margin, sums = core.constraints_pass(inputs, spec.kind.oracle, &spec,
                                                     n_threads)
    del discount
    return _checked_losses(loss, kind), coef, margin, sums


cdef void _ranking_body(Py_ssize_t q, Py_ssize_t lo, Py_ssize_t size, Py_ssize_t n_rel,
                        core.Workspace *ws, const void *task) noexcept nogil:
    """A QueryBody (``task`` a QueryArrays, params a LossSpec, value the loss): Delta(y*, y)
    of query q's ranking y by score (module docstring)."""
    cdef const core.QueryArrays *a = <const core.QueryArrays *> task
    cdef const LossSpec *spec = <const LossSpec *> a.params
    cdef Py_ssize_t rank
    if n_rel == 0 or n_rel == size:
        return
    for rank in range(size):
        ws.docs[rank].score = a.scores[lo + rank]
        ws.docs[rank].index = rank
    core.sort_by_score_descending(ws.docs, size)
    a.value[q] = spec.kind.ranking_loss(a.relevant + lo, a.gains + lo, size, n_rel, ws, spec)


def ranking_losses(scores, gains, ptr, str kind, k=None, int n_threads=1):
    """Delta(y*, y) of the ranking y by ``scores`` of every query (descending, ties broken by
    position, as ``_map_kernels.ranking_coefficients``); loss names and inputs as in
    ``most_violated``.  Queries without a relevant or without a non-relevant document get
    loss 0."""
    cdef LossSpec spec
    s_arr, r_arr, p_arr = checked_query_arrays(scores, np.asarray(gains) > 0, ptr)
    g_arr = checked_gains(gains, r_arr)
    discount = _spec(kind, k, largest_query(p_arr), &spec)
    _, loss = core.per_query_pass(_ranking_body, s_arr, r_arr, p_arr, g_arr, &spec, False,
                                  n_threads)
    del discount
    return loss
