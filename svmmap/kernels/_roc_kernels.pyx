# cython: language_level=3
# distutils: language = c++
"""Per-query kernels of SVM-ROC over a whole collection, in one call each.

The structural form of the ROC-area SVM (Joachims, ICML 2005) on the joint feature map of
Yue et al. (2007): for a query with relevant set P and non-relevant set N,

    psi(x, y) = 1/(|P||N|) sum_{i in P, j in N} y_ij (phi_i - phi_j)
    Delta_ROC(y*, y) = 1 - ROC-area(y) = #{(i, j) : y_ij = -1} / (|P||N|)

(y_ij = +1 when relevant i is ranked above non-relevant j).  Inputs follow _map_kernels:
documents in grouped order (query g is rows ``ptr[g]:ptr[g + 1]``), one score and one
relevance flag (``relevant[d] != 0``) per document; the loop over queries runs without the
GIL, in parallel when the extension was built with OpenMP.

The separation oracle decouples over pairs.  With s_i = w.phi_i and s_j = w.phi_j,

    Delta_ROC(y) + w.psi(y) = 1/(|P||N|) sum_{i, j} g_ij(y_ij),
    g_ij(+1) = s_i - s_j,    g_ij(-1) = 1 - (s_i - s_j),

so the most violated y has y_ij = -1 exactly when 1 - (s_i - s_j) > s_i - s_j, i.e. when
s_i - s_j < 1/2.  At s_i - s_j = 1/2 both values are 1/2 and either choice is optimal: we
take y_ij = +1 (the relevant document stays above).  This pairwise choice is a ranking:
it is the order by the shifted scores s_i - 1/4 (relevant) and s_j + 1/4 (non-relevant),
descending, a relevant document placed above a non-relevant one of equal shifted score;
relevant documents keep their order by score among themselves, and so do the non-relevant
ones (ties: position).  Its psi coefficients (psi = X^T c) are

    c_i = (|N| - 2 a_i) / (|P||N|),   a_i = #{j in N : s_i - s_j < 1/2}    (i in P)
    c_j = (|P| - 2 b_j) / (|P||N|),   b_j = #{i in P : s_i - s_j >= 1/2}   (j in N)

and its loss is sum_i a_i / (|P||N|).  With both lists sorted by score, a_i is the length of
a prefix of the non-relevant list that grows with i, and b_j = #{i : a_i <= j - 1} (j
counted from 1) likewise, so one sort and one counting sweep give everything in
O(m log m) per query, without enumerating the |P||N| pairs.

``roc_constraints`` fuses the whole separation step: scores X_q w, this oracle and
the coefficients of dpsi_q = X_q^T (c* - c_hat), in one pass over the data
(``_query_core.constraints_pass``).
"""

cimport svmmap.kernels._query_core as core

from ._kernel_inputs import checked_constraint_inputs, checked_query_arrays


cdef double _write_coefficients(const core.ScoredDoc *rel, Py_ssize_t n_rel,
                                const core.ScoredDoc *non, Py_ssize_t n_non,
                                const Py_ssize_t *non_above, double *coef) noexcept nogil:
    """Write the psi coefficients of the ranking in which the i-th relevant document (in score
    order) has ``non_above[i]`` non-relevant documents above it (non-decreasing in i) into
    ``coef`` (indexed by position in the query); return its number of swapped pairs
    sum_i a_i."""
    cdef double pn = <double> n_rel * <double> n_non
    cdef double swapped = 0.0
    cdef Py_ssize_t i, j, k = 0
    for i in range(n_rel):
        coef[rel[i].index] = (n_non - 2.0 * non_above[i]) / pn
        swapped += non_above[i]
    for j in range(n_non):
        # b_j: relevant documents whose prefix of non-relevant ones above them ends before j
        while k < n_rel and non_above[k] <= j:
            k += 1
        coef[non[j].index] = (n_rel - 2.0 * k) / pn
    return swapped


cdef double _most_violated_one(const double *scores, const unsigned char *relevant,
                               const double *gains, Py_ssize_t size, Py_ssize_t n_rel,
                               core.Workspace *ws, double *coef,
                               const void *context) noexcept nogil:
    """The most violated ranking of one query with 0 < n_rel < size relevant documents (a
    QueryOracle; no ``context``): write its psi coefficients to coef[0:size] and return its
    loss Delta_ROC = sum_i a_i / (|P||N|) (module docstring)."""
    cdef Py_ssize_t n_non = size - n_rel, i, j = 0
    cdef const core.ScoredDoc *rel = ws.docs
    cdef const core.ScoredDoc *non = ws.docs + n_rel
    core.split_sorted(scores, relevant, size, n_rel, ws.docs)
    # a_i = #{j : s_i - s_j < 1/2}, a prefix of the non-relevant list growing with i
    for i in range(n_rel):
        while j < n_non and rel[i].score - non[j].score < 0.5:
            j += 1
        ws.counts[i] = j
    return _write_coefficients(rel, n_rel, non, n_non, ws.counts, coef) \
        / (<double> n_rel * <double> n_non)


def most_violated_roc(scores, relevant, ptr, int n_threads=1):
    """The ranking y_hat = argmax_y Delta_ROC(y) + w.psi(y) of every query (module docstring).

    Parameters
    ----------
    scores : float64 array (m,), w.phi(x, d) of each document in grouped order
    relevant : array (m,), non-zero for relevant documents
    ptr : int array (n + 1,), query offsets
    n_threads : threads to split the queries over (1 without OpenMP)

    Returns
    -------
    coef : float64 (m,), psi coefficients of y_hat (psi(x, y_hat) = X_q^T coef_q)
    loss : float64 (n,), Delta_ROC(y*, y_hat), the fraction of swapped pairs
    Queries without a relevant or without a non-relevant document get coefficients 0, loss 0.
    """
    s_arr, r_arr, p_arr = checked_query_arrays(scores, relevant, ptr)
    return core.oracle_pass(s_arr, r_arr, p_arr, _most_violated_one, NULL, n_threads)


cdef void _ranking_body(Py_ssize_t q, Py_ssize_t lo, Py_ssize_t size, Py_ssize_t n_rel,
                        core.Workspace *ws, const void *task) noexcept nogil:
    """A QueryBody (``task`` a QueryArrays, value the loss): Delta_ROC of query q's ranking
    by score, the fraction of (relevant, non-relevant) pairs in the wrong order."""
    cdef const core.QueryArrays *a = <const core.QueryArrays *> task
    cdef Py_ssize_t n_non = size - n_rel, i, j = 0
    cdef const core.ScoredDoc *rel = ws.docs
    cdef const core.ScoredDoc *non = ws.docs + n_rel
    cdef double swapped = 0.0
    if n_rel == 0 or n_non == 0:
        return
    core.split_sorted(a.scores + lo, a.relevant + lo, size, n_rel, ws.docs)
    for i in range(n_rel):
        while j < n_non and (non[j].score > rel[i].score or (
                non[j].score == rel[i].score and non[j].index < rel[i].index)):
            j += 1
        swapped += j
    a.value[q] = swapped / (<double> n_rel * <double> n_non)


def ranking_roc_loss(scores, relevant, ptr, int n_threads=1):
    """Delta_ROC = 1 - ROC-area of the ranking by ``scores`` of every query.

    The ranking is by score descending with ties broken by position (the earlier document
    first) -- the same total order that ``_map_kernels.ranking_coefficients`` gives psi of,
    so loss and psi describe the same ranking.  (svmmap.metrics.roc_area instead counts a
    tied pair as 1/2; the two agree when scores are distinct.)  A pair (i, j) is swapped when
    non-relevant j is ranked above relevant i.  Queries without a relevant or without a
    non-relevant document get loss 0.
    """
    s_arr, r_arr, p_arr = checked_query_arrays(scores, relevant, ptr)
    _, loss = core.per_query_pass(_ranking_body, s_arr, r_arr, p_arr, None, NULL, False, n_threads)
    return loss


def roc_constraints(X, w, relevant, ptr, int n_threads=1):
    """The whole separation step of one cutting-plane iteration for Delta_ROC, in one pass
    over the data.

    For every query q: scores s = X_q w, the most violated ranking
    y_hat_q = argmax_y Delta_ROC(y*, y) + w.psi(y) (the pairwise rule of the module docstring:
    y_ij = -1 exactly when s_i - s_j < 1/2), its loss Delta_q = sum_i a_i / (|P||N|), the
    coefficients c* - c_hat of

        dpsi_q = psi(x_q, y*_q) - psi(x_q, y_hat_q) = X_q^T (c* - c_hat),

    c*_i = 1/|P| (relevant), c*_j = -1/|N| (non-relevant), c_hat_i = (|N| - 2 a_i)/(|P||N|),
    c_hat_j = (|P| - 2 b_j)/(|P||N|), and the margin w.dpsi_q
    (``_query_core.constraints_pass``).  The same as ``most_violated_roc`` on the scores X w,
    without the intermediate scores.

    X is a C-contiguous float64 or float32 ndarray, the CSRArrays of a sparse matrix (see
    ``_kernel_inputs.csr_for_kernels``) or BinnedArrays (binned features), documents in grouped order; ``n_threads`` as in
    ``most_violated_roc`` (the results do not depend on it).  Returns (loss (n,), coef (m,),
    margin (n,)); queries without a relevant or without a non-relevant document get loss 0,
    coefficients 0 and margin 0.
    """
    return roc_pass(checked_constraint_inputs(X, w, relevant, ptr), n_threads)[:3]


def roc_pass(inputs, int n_threads=1):
    """``roc_constraints`` of inputs checked once: a ConstraintInputs that
    ``checked_constraint_inputs`` made (its ``w`` replaced by a C-contiguous float64 vector of
    its ``n_features``).  The plugins' per-iteration entry (svmmap.core.plugins.roc): the data are
    checked when the plugin is made, not on every pass; nothing here checks them.  Returns
    (loss, coef, margin, the sums of ``inputs.sums`` or None): ``_query_core.constraints_pass``."""
    return core.constraints_pass(inputs, _most_violated_one, NULL, n_threads)
