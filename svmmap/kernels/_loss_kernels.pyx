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

from libc.math cimport INFINITY, NAN
from libc.string cimport memset

from . cimport _query_core as core

from ._kernel_inputs import (
    checked_constraint_inputs,
    checked_gains,
    checked_query_arrays,
    largest_query,
)

#: the kinds of loss this module knows, by the name the kernels take
KINDS = {"p@k": 0, "rprec": 1, "mrr": 2, "ndcg": 3}
cdef enum:
    MAX_STATES = 16777216  # 2^24

#: the largest dynamic programme (states) the NDCG oracle runs on one query
MAX_NDCG_STATES = MAX_STATES

cdef enum:
    PRECISION = 0
    RPREC = 1
    MRR = 2
    NDCG = 3


cdef struct LossSpec:
    int kind
    Py_ssize_t k              # cutoff of p@k and ndcg@k (ndcg: the largest query for k = m)
    const double *discount    # discount[r] = 1 / log2(1 + r), r = 1..largest query


# ---------------------------------------------------------------------------------------------
# p@k, rprec, mrr: enumerate the loss value, clip the free interleaving
# ---------------------------------------------------------------------------------------------

cdef inline double _clipped_psi(Py_ssize_t c, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t n_non,
                                const double *S, const double *A, const double *T,
                                const double *count_le, double scale) noexcept nogil:
    """sum_j G_j(b_j)/PN with b_j = min(b*_j, lo) for j < c and max(b*_j, hi) for j >= c
    (0-based j): A = prefix sums of G_j(b*_j)/PN, T of t_j, S of s_i, count_le[x] =
    #{j : b*_j <= x}."""
    cdef Py_ssize_t u = <Py_ssize_t> count_le[lo]
    cdef Py_ssize_t v = 0 if hi == 0 else <Py_ssize_t> count_le[hi - 1]
    if u > c:
        u = c
    if v < c:
        v = c
    return A[u] + scale * ((c - u) * S[lo] - lo * (T[c] - T[u])) \
        + scale * ((v - c) * S[hi] - hi * (T[v] - T[c])) + A[n_non] - A[v]


cdef double _counting_oracle(const double *scores, const unsigned char *relevant,
                             const double *gains, Py_ssize_t size, Py_ssize_t n_rel,
                             core.Workspace *ws, double *coef, const void *context) noexcept nogil:
    """p@k, rprec or mrr on one query (a QueryOracle, ``context`` a LossSpec; module
    docstring).  O(m log m)."""
    cdef const LossSpec *spec = <const LossSpec *> context
    cdef Py_ssize_t n_non = size - n_rel, i, j, x, h, k, c, best_c = 0, best_lo = 0, best_hi = 0
    cdef Py_ssize_t lo, hi
    cdef const core.ScoredDoc *rel = ws.docs
    cdef const core.ScoredDoc *non = ws.docs + n_rel
    cdef Py_ssize_t *b = ws.counts
    cdef double scale = 2.0 / (<double> n_rel * <double> n_non)
    cdef double loss, value, best = -INFINITY, best_loss = 0.0, denom
    cdef double *S = <double *> core.workspace_reserve(
        ws, (2 * n_rel + 2 * n_non + 4) * sizeof(double))
    cdef double *A
    cdef double *T
    cdef double *count_le
    if S == NULL:
        return NAN
    A = S + n_rel + 1
    T = A + n_non + 1
    count_le = T + n_non + 1
    core.split_sorted(scores, relevant, size, n_rel, ws.docs)
    i = 0
    for j in range(n_non):  # b*_j = #{i : s_i > t_j}, non-decreasing in j
        while i < n_rel and rel[i].score > non[j].score:
            i += 1
        b[j] = i
    S[0] = 0.0
    for i in range(n_rel):
        S[i + 1] = S[i] + rel[i].score
    A[0] = 0.0
    T[0] = 0.0
    for j in range(n_non):
        A[j + 1] = A[j] + scale * (S[b[j]] - b[j] * non[j].score)
        T[j + 1] = T[j] + non[j].score
    j = 0
    for x in range(n_rel + 1):
        while j < n_non and b[j] <= x:
            j += 1
        count_le[x] = j
    if spec.kind == MRR:  # c non-relevant documents above the first relevant one
        for c in range(n_non + 1):
            loss = 1.0 - 1.0 / (c + 1.0)
            value = loss + _clipped_psi(c, 0, 1, n_non, S, A, T, count_le, scale)
            if value > best:
                best = value
                best_loss = loss
                best_c = c
                best_lo = 0
                best_hi = 1
    else:  # h relevant documents in the top k
        k = n_rel if spec.kind == RPREC else (spec.k if spec.k < size else size)
        denom = <double> (k if k < n_rel else n_rel)
        for h in range(k - n_non if k > n_non else 0, (k if k < n_rel else n_rel) + 1):
            loss = (denom - h) / denom
            value = loss + _clipped_psi(k - h, h, h, n_non, S, A, T, count_le, scale)
            if value > best:
                best = value
                best_loss = loss
                best_c = k - h
                best_lo = h
                best_hi = h
    for j in range(n_non):
        if j < best_c:
            lo = best_lo
            b[j] = b[j] if b[j] < lo else lo
        else:
            hi = best_hi
            b[j] = b[j] if b[j] > hi else hi
    core.coefficients_from_interleaving(rel, n_rel, non, n_non, b, coef)
    return best_loss


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
    cdef Py_ssize_t K = spec.k if spec.k < size else size
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
# Python entry points
# ---------------------------------------------------------------------------------------------

cdef object _spec(str kind, k, Py_ssize_t largest, LossSpec *spec):
    """Fill ``spec``; return the discount array it points into (keep it alive)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
    spec.kind = KINDS[kind]
    if kind in ("p@k", "ndcg"):
        if k is None:
            if kind == "p@k":
                raise ValueError("p@k needs a cutoff k")
            k = max(largest, 1)
        if int(k) != k or k < 1:
            raise ValueError(f"the cutoff k must be a positive integer, got {k!r}")
        spec.k = min(int(k), max(largest, 1))
    else:
        spec.k = 0
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
    ``kind`` ("p@k" with cutoff k, "rprec", "mrr", "ndcg" with cutoff k or None for k = m).

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
    if kind == "ndcg":
        coef, loss = core.oracle_pass(s_arr, r_arr, p_arr, _ndcg_oracle, &spec, n_threads, g_arr)
    else:
        coef, loss = core.oracle_pass(s_arr, r_arr, p_arr, _counting_oracle, &spec, n_threads)
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
    relevant = np.asarray(gains) > 0
    if kind == "ndcg":
        inputs = checked_constraint_inputs(X, w, relevant, ptr, gains)
    else:
        inputs = checked_constraint_inputs(X, w, relevant, ptr)
    return loss_pass(inputs, kind, k, n_threads)


def loss_pass(inputs, str kind, k=None, int n_threads=1):
    """``loss_constraints`` of inputs checked once: a ConstraintInputs that
    ``checked_constraint_inputs`` made (with the gains for "ndcg"; its ``w`` replaced by a
    C-contiguous float64 vector of its ``n_features``).  The plugins' per-iteration entry
    (svmmap.core.plugins.measure): the data are checked when the plugin is made, not on every
    pass; nothing here checks them."""
    cdef LossSpec spec
    discount = _spec(kind, k, largest_query(inputs.ptr), &spec)
    if kind == "ndcg":
        loss, coef, margin = core.constraints_pass(inputs, _ndcg_oracle, &spec, n_threads)
    else:
        loss, coef, margin = core.constraints_pass(inputs, _counting_oracle, &spec, n_threads)
    del discount
    return _checked_losses(loss, kind), coef, margin


cdef void _ranking_body(Py_ssize_t q, Py_ssize_t lo, Py_ssize_t size, Py_ssize_t n_rel,
                        core.Workspace *ws, const void *task) noexcept nogil:
    """A QueryBody (``task`` a QueryArrays, params a LossSpec, value the loss): Delta(y*, y)
    of query q's ranking y by score (module docstring)."""
    cdef const core.QueryArrays *a = <const core.QueryArrays *> task
    cdef const LossSpec *spec = <const LossSpec *> a.params
    cdef const unsigned char *r = a.relevant + lo
    cdef const double *gain = a.gains + lo
    cdef Py_ssize_t rank, cut, hits
    cdef double dcg, idcg
    if n_rel == 0 or n_rel == size:
        return
    for rank in range(size):
        ws.docs[rank].score = a.scores[lo + rank]
        ws.docs[rank].index = rank
    core.sort_by_score_descending(ws.docs, size)
    if spec.kind == MRR:
        rank = 0
        while not r[ws.docs[rank].index]:
            rank += 1
        a.value[q] = 1.0 - 1.0 / (rank + 1.0)
    elif spec.kind == NDCG:
        cut = spec.k if spec.k < size else size
        dcg = 0.0
        for rank in range(cut):
            dcg += gain[ws.docs[rank].index] * spec.discount[rank + 1]
        for rank in range(size):
            ws.docs[rank].score = gain[rank]
            ws.docs[rank].index = rank
        core.sort_by_score_descending(ws.docs, size)
        idcg = 0.0
        for rank in range(cut):
            idcg += ws.docs[rank].score * spec.discount[rank + 1]
        a.value[q] = 1.0 - dcg / idcg
    else:
        cut = n_rel if spec.kind == RPREC else (spec.k if spec.k < size else size)
        hits = 0
        for rank in range(cut):
            if r[ws.docs[rank].index]:
                hits += 1
        cut = cut if cut < n_rel else n_rel
        a.value[q] = (cut - hits) / (<double> cut)


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
