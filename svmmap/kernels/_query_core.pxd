# cython: language_level=3
"""Per-query building blocks shared by the ranking kernels (compiled into each module that
cimports them).  All positions are local to the query: document k of a query is row
``lo + k`` of the collection."""

cimport cython
from cython.parallel cimport prange, threadid
from libc.stdlib cimport calloc, free, malloc, realloc


cdef extern from "_sort.h" nogil:
    struct ScoredDoc:
        double score
        Py_ssize_t index
    void sort_by_score_descending(ScoredDoc *first, Py_ssize_t n)


cdef struct Workspace:
    # room for one query of up to ``capacity`` documents
    ScoredDoc *docs
    Py_ssize_t *counts
    double *values
    double *scores
    double *coef
    # a growable scratch buffer for oracles that need more than the per-document arrays
    # (``workspace_reserve``)
    void *extra
    size_t extra_size


cdef inline Workspace *workspace_new(Py_ssize_t capacity) noexcept nogil:
    """A workspace for queries of up to ``capacity`` documents, or NULL when out of memory.
    (Returned by pointer so that each thread of a parallel block owns its own.)"""
    cdef Workspace *ws = <Workspace *> calloc(1, sizeof(Workspace))
    if ws == NULL:
        return NULL
    capacity = capacity + 1
    ws.docs = <ScoredDoc *> malloc(capacity * sizeof(ScoredDoc))
    ws.counts = <Py_ssize_t *> malloc(capacity * sizeof(Py_ssize_t))
    ws.values = <double *> malloc(capacity * sizeof(double))
    ws.scores = <double *> malloc(capacity * sizeof(double))
    ws.coef = <double *> malloc(capacity * sizeof(double))
    if ws.docs == NULL or ws.counts == NULL or ws.values == NULL or ws.scores == NULL \
            or ws.coef == NULL:
        workspace_delete(ws)
        return NULL
    return ws


cdef inline void workspace_delete(Workspace *ws) noexcept nogil:
    if ws == NULL:
        return
    free(ws.docs)
    free(ws.counts)
    free(ws.values)
    free(ws.scores)
    free(ws.coef)
    free(ws.extra)
    free(ws)


cdef inline void *workspace_reserve(Workspace *ws, size_t nbytes) noexcept nogil:
    """The workspace's scratch buffer, grown to at least ``nbytes`` bytes (realloc: its
    contents are kept), or NULL when out of memory (the old buffer stays)."""
    cdef void *grown
    if nbytes > ws.extra_size:
        grown = realloc(ws.extra, nbytes)
        if grown == NULL:
            return NULL
        ws.extra = grown
        ws.extra_size = nbytes
    return ws.extra


cdef inline Workspace **new_workspaces(int count, Py_ssize_t capacity) except NULL:
    """One workspace per thread (indexed by ``threadid()``), each for ``capacity`` documents."""
    cdef Workspace **workspaces = <Workspace **> calloc(count, sizeof(Workspace *))
    cdef int t
    if workspaces == NULL:
        raise MemoryError("no memory for the per-query workspaces")
    for t in range(count):
        workspaces[t] = workspace_new(capacity)
        if workspaces[t] == NULL:
            delete_workspaces(workspaces, count)
            raise MemoryError("no memory for the per-query workspaces")
    return workspaces


cdef inline void delete_workspaces(Workspace **workspaces, int count) noexcept:
    cdef int t
    for t in range(count):
        workspace_delete(workspaces[t])
    free(workspaces)


cdef inline Py_ssize_t count_relevant(const unsigned char *relevant,
                                      Py_ssize_t size) noexcept nogil:
    cdef Py_ssize_t k, n = 0
    for k in range(size):
        if relevant[k]:
            n += 1
    return n


cdef inline void split_sorted(const double *scores, const unsigned char *relevant,
                              Py_ssize_t size, Py_ssize_t n_rel, ScoredDoc *docs) noexcept nogil:
    """docs[0:n_rel]: the relevant documents, docs[n_rel:size]: the others, each sorted by
    score descending (ties: position ascending)."""
    cdef Py_ssize_t k, i = 0, j = n_rel
    for k in range(size):
        if relevant[k]:
            docs[i].score = scores[k]
            docs[i].index = k
            i += 1
        else:
            docs[j].score = scores[k]
            docs[j].index = k
            j += 1
    sort_by_score_descending(docs, n_rel)
    sort_by_score_descending(docs + n_rel, size - n_rel)


cdef inline double coefficients_from_interleaving(const ScoredDoc *rel, Py_ssize_t n_rel,
                                                  const ScoredDoc *non, Py_ssize_t n_non,
                                                  const Py_ssize_t *rel_above,
                                                  double *coef) noexcept nogil:
    """Write the psi coefficients of the ranking in which the j-th non-relevant document (in
    score order) has ``rel_above[j]`` relevant documents above it (non-decreasing in j):
    c_i = (|N| - 2 a_i)/(|P||N|), c_j = (|P| - 2 b_j)/(|P||N|); return that ranking's
    AP = 1/|P| sum_i i / (i + a_i)."""
    cdef double pn = <double> n_rel * <double> n_non
    cdef double ap = 0.0
    cdef Py_ssize_t i, j
    for j in range(n_non):
        coef[non[j].index] = (n_rel - 2.0 * rel_above[j]) / pn
    j = 0
    for i in range(n_rel):
        # a_i: non-relevant documents with fewer than i + 1 relevant documents above them
        while j < n_non and rel_above[j] <= i:
            j += 1
        coef[rel[i].index] = (n_non - 2.0 * j) / pn
        ap += (i + 1.0) / (i + 1.0 + j)
    return ap / n_rel


ctypedef fused value_t:
    # the storage of X's values: float64, or float32 (read in place, summed in float64)
    double
    float


cdef inline void dense_scores(const value_t *X, Py_ssize_t n_features, Py_ssize_t lo,
                              Py_ssize_t size, const double *w, double *out) noexcept nogil:
    """out[k] = X[lo + k] . w for a C-contiguous dense X: one pass over the query's rows
    with four partial sums (a row stream is memory-bound like BLAS dgemv, and the loop keeps
    scipy.linalg's BLAS, a sixth of a second to import, out of every run)."""
    cdef Py_ssize_t k, j, end4 = n_features - n_features % 4
    cdef const value_t *row
    cdef double s0, s1, s2, s3
    for k in range(size):
        row = X + (lo + k) * n_features
        s0 = s1 = s2 = s3 = 0.0
        for j in range(0, end4, 4):
            s0 += row[j] * w[j]
            s1 += row[j + 1] * w[j + 1]
            s2 += row[j + 2] * w[j + 2]
            s3 += row[j + 3] * w[j + 3]
        for j in range(end4, n_features):
            s0 += row[j] * w[j]
        out[k] = (s0 + s1) + (s2 + s3)


ctypedef fused index_t:
    # the index type of a CSR X: scipy's int32 when the indices fit, else intp
    int
    Py_ssize_t


cdef inline void csr_scores(const value_t *data, const index_t *indices, const index_t *indptr,
                            Py_ssize_t lo, Py_ssize_t size, const double *w,
                            double *out) noexcept nogil:
    """out[k] = X[lo + k] . w for a CSR X."""
    cdef Py_ssize_t k, p
    cdef double total
    for k in range(size):
        total = 0.0
        for p in range(indptr[lo + k], indptr[lo + k + 1]):
            total += data[p] * w[indices[p]]
        out[k] = total


cdef inline void add_dense_row(const value_t *row, Py_ssize_t n_features, double u,
                               double *out) noexcept nogil:
    """out += u * row (a dense row of n_features values)."""
    cdef Py_ssize_t j
    for j in range(n_features):
        out[j] += u * row[j]


cdef inline void add_csr_row(const value_t *data, const index_t *indices, Py_ssize_t lo,
                             Py_ssize_t hi, double u, double *out) noexcept nogil:
    """out += u * the CSR row whose stored values are lo .. hi - 1."""
    cdef Py_ssize_t j
    for j in range(lo, hi):
        out[indices[j]] += u * data[j]


# ---------------------------------------------------------------------------------------------
# The parallel driver: the one loop over the queries of every kernel
# ---------------------------------------------------------------------------------------------

cdef struct QueryArrays:
    # a kernel's per-document inputs and outputs (document k of query q is entry lo + k) and
    # its own parameters, as a QueryBody reads them; the caller keeps the arrays alive
    const double *scores          # w.phi per document (NULL where the body computes X_q w)
    const unsigned char *relevant
    const double *gains           # graded gains (0 for non-relevant documents), or NULL
    double *coef                  # per-document output (psi coefficients), or NULL
    double *value                 # per-query output (a loss, an AP)
    const void *params            # the kernel's parameters (a loss's cutoff, ...), or NULL


# A kernel's work on query q: documents lo .. lo + size - 1 of the collection, n_rel of them
# relevant (any of 0 .. size: the body decides what a query without a relevant or without a
# non-relevant document gets); ``ws`` is the calling thread's workspace, with room for the
# largest query; ``task`` the kernel's arrays (a QueryArrays, or a struct that starts with
# one).  A body writes query q's entries of the outputs only.
ctypedef void (*QueryBody)(Py_ssize_t q, Py_ssize_t lo, Py_ssize_t size, Py_ssize_t n_rel,
                           Workspace *ws, const void *task) noexcept nogil


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline int for_each_query(relevant, ptr, QueryBody body, const void *task,
                               int n_threads) except -1:
    """body(q, lo, size, n_rel, ws, task) for every query q of the checked relevance flags
    (uint8, one per document) and query offsets (intp, ``_kernel_inputs.checked_offsets``),
    without the GIL.  The queries are split over ``n_threads`` threads (dynamic schedule;
    one when the extension is built without OpenMP), each with its own workspace; every query
    is computed by one thread with the same code whatever their number, so the results do not
    depend on it.  Raises MemoryError when the workspaces cannot be allocated."""
    import numpy as np

    n_queries = len(ptr) - 1
    return for_each_query_by_group(relevant, ptr, np.arange(n_queries, dtype=np.intp),
                                   np.arange(n_queries + 1, dtype=np.intp), body, task,
                                   n_threads)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline int for_each_query_by_group(relevant, ptr, order, starts, QueryBody body,
                                        const void *task, int n_threads) except -1:
    """``for_each_query`` with the queries dealt into groups: group g's queries are
    order[starts[g]:starts[g + 1]] (intp), each group's taken by one thread in that order,
    so that a body adding to a per-group sum adds in one order whatever the number of
    threads (the groups are split over the threads, dynamic schedule; ``for_each_query``
    is every query its own group)."""
    from ._kernel_inputs import largest_query

    cdef const unsigned char[::1] r = relevant
    cdef const Py_ssize_t[::1] p = ptr
    cdef const Py_ssize_t[::1] o = order
    cdef const Py_ssize_t[::1] b = starts
    cdef Py_ssize_t n_groups = b.shape[0] - 1, g, i, q, lo, size
    cdef int threads = max(n_threads, 1)
    cdef Workspace **workspaces = new_workspaces(threads, largest_query(ptr))
    cdef Workspace *ws
    try:
        for g in prange(n_groups, nogil=True, schedule="dynamic", num_threads=threads):
            ws = workspaces[threadid()]
            for i in range(b[g], b[g + 1]):
                q = o[i]
                lo = p[q]
                size = p[q + 1] - lo
                body(q, lo, size, count_relevant(&r[lo], size), ws, task)
    finally:
        delete_workspaces(workspaces, threads)
    return 0


cdef inline const double *input_doubles(values) except? NULL:
    """The address of a C-contiguous float64 array's data, NULL for None (the caller keeps
    the array alive; an empty array's is never read)."""
    if values is None:
        return NULL
    cdef const double[::1] view = values
    return &view[0]


cdef inline double *output_doubles(values) except NULL:
    """The address of a writable C-contiguous float64 array's data (the caller keeps the
    array alive)."""
    cdef double[::1] view = values
    return &view[0]


cdef inline QueryArrays query_arrays(scores, relevant, gains, coef, value,
                                     const void *params) except *:
    """The QueryArrays of checked contiguous arrays (float64 scores, gains and outputs,
    uint8 relevance flags; scores, gains and coef may be None)."""
    cdef QueryArrays arrays
    cdef const unsigned char[::1] r = relevant
    arrays.scores = input_doubles(scores)
    arrays.relevant = &r[0]
    arrays.gains = input_doubles(gains)
    arrays.coef = <double *> NULL if coef is None else output_doubles(coef)
    arrays.value = output_doubles(value)
    arrays.params = params
    return arrays


cdef inline tuple per_query_pass(QueryBody body, scores, relevant, ptr, gains,
                                 const void *params, bint with_coef, int n_threads):
    """``body`` on every query (for_each_query), its task the QueryArrays of the checked
    arrays (``_kernel_inputs.checked_query_arrays``; ``gains`` float64 or None), ``params``
    and fresh zeroed outputs; returns (coef (m,), or None without ``with_coef``; value (n,))."""
    import numpy as np

    coef = np.zeros(len(relevant)) if with_coef else None
    value = np.zeros(len(ptr) - 1)
    cdef QueryArrays arrays = query_arrays(scores, relevant, gains, coef, value, params)
    for_each_query(relevant, ptr, body, &arrays, n_threads)
    return coef, value


# ---------------------------------------------------------------------------------------------
# The separation oracles of the losses, and their fused pass
# ---------------------------------------------------------------------------------------------

# A loss's separation oracle on one query of ``size`` documents, ``n_rel`` of them relevant
# (0 < n_rel < size): write the psi coefficients c_hat of the most violated ranking
# y_hat = argmax_y Delta(y*, y) + w.psi(y) to coef[0:size] and return Delta(y*, y_hat)
# (NaN when out of memory; the caller raises).  ``gains`` is the query's graded gains (one per
# document, 0 for non-relevant ones) for the losses that need them, else NULL.  ``params``
# carries the loss's own parameters; ``ws`` is the calling thread's workspace, whose
# ``scores`` and ``coef`` may be the arguments and must not be used otherwise.
ctypedef double (*QueryOracle)(const double *scores, const unsigned char *relevant,
                               const double *gains, Py_ssize_t size, Py_ssize_t n_rel,
                               Workspace *ws, double *coef, const void *params) noexcept nogil


cdef struct OracleCall:
    # the ``params`` of the oracle bodies' QueryArrays: which oracle, with which parameters
    QueryOracle oracle
    const void *params


cdef struct Rows:
    # the rows of X as the constraint pass reads them: dense (C-contiguous, raveled) or CSR
    # with int32 (``wide`` false) or intp indices; float64 values, or float32 (``single``:
    # dense32 / data32); or binned (``is_binned``: (m, n_bases) bins, uint8 in bins8 or,
    # ``wide``, uint16 in bins16; w then the lookup tables of svmmap.kernels._binned_rows, base f's
    # at table_starts[f])
    bint is_csr
    bint is_binned
    bint wide
    bint single
    Py_ssize_t n_features
    Py_ssize_t n_bases
    const unsigned char *bins8
    const unsigned short *bins16
    const Py_ssize_t *table_starts
    const double *dense
    const double *data
    const float *dense32
    const float *data32
    const int *indices32
    const int *indptr32
    const Py_ssize_t *indices64
    const Py_ssize_t *indptr64
    const double *w


cdef struct ConstraintTask:
    QueryArrays arrays            # scores NULL (X_q w is computed per query), value the loss
    Rows rows
    double *margin
    # the cut groups' sums formed in the pass (``constraints_pass``), or sums NULL: query q
    # adds weight[q] (c* - c_hat)_k x_k of its documents to row target[q] of sums (n_features
    # a row)
    double *sums
    const double *weight
    const Py_ssize_t *target


ctypedef fused bin_t:
    # the storage of a binned X's bins
    unsigned char
    unsigned short


cdef inline void binned_scores(const bin_t *bins, Py_ssize_t n_bases,
                               const Py_ssize_t *table_starts, Py_ssize_t lo, Py_ssize_t size,
                               const double *lookup, double *out) noexcept nogil:
    """out[k] = sum_f L_f[b_{lo+k,f}] for a binned X (svmmap.kernels._binned_rows): the lookup
    table L of the pass's w, documents then bases, summed in base order."""
    cdef Py_ssize_t k, f
    cdef const bin_t *row
    cdef double total
    for k in range(size):
        row = bins + (lo + k) * n_bases
        total = 0.0
        for f in range(n_bases):
            total += lookup[table_starts[f] + row[f]]
        out[k] = total


cdef inline void rows_scores(const Rows *rows, Py_ssize_t lo, Py_ssize_t size,
                             double *out) noexcept nogil:
    """out[k] = X[lo + k] . w for the rows' layout."""
    if rows.is_binned:
        if rows.wide:
            binned_scores(rows.bins16, rows.n_bases, rows.table_starts, lo, size, rows.w, out)
        else:
            binned_scores(rows.bins8, rows.n_bases, rows.table_starts, lo, size, rows.w, out)
    elif not rows.is_csr:
        if rows.single:
            dense_scores(rows.dense32, rows.n_features, lo, size, rows.w, out)
        else:
            dense_scores(rows.dense, rows.n_features, lo, size, rows.w, out)
    elif rows.single:
        if rows.wide:
            csr_scores(rows.data32, rows.indices64, rows.indptr64, lo, size, rows.w, out)
        else:
            csr_scores(rows.data32, rows.indices32, rows.indptr32, lo, size, rows.w, out)
    elif rows.wide:
        csr_scores(rows.data, rows.indices64, rows.indptr64, lo, size, rows.w, out)
    else:
        csr_scores(rows.data, rows.indices32, rows.indptr32, lo, size, rows.w, out)


cdef inline void rows_add(const Rows *rows, Py_ssize_t k, double u, double *out) noexcept nogil:
    """out += u X[k] for the dense or CSR rows' layout (not binned)."""
    if not rows.is_csr:
        if rows.single:
            add_dense_row(rows.dense32 + k * rows.n_features, rows.n_features, u, out)
        else:
            add_dense_row(rows.dense + k * rows.n_features, rows.n_features, u, out)
    elif rows.single:
        if rows.wide:
            add_csr_row(rows.data32, rows.indices64, rows.indptr64[k], rows.indptr64[k + 1], u,
                        out)
        else:
            add_csr_row(rows.data32, rows.indices32, rows.indptr32[k], rows.indptr32[k + 1], u,
                        out)
    elif rows.wide:
        add_csr_row(rows.data, rows.indices64, rows.indptr64[k], rows.indptr64[k + 1], u, out)
    else:
        add_csr_row(rows.data, rows.indices32, rows.indptr32[k], rows.indptr32[k + 1], u, out)


cdef inline double run_oracle(const QueryArrays *a, const double *scores, Py_ssize_t lo,
                              Py_ssize_t size, Py_ssize_t n_rel, Workspace *ws) noexcept nogil:
    """The oracle of ``a.params`` (an OracleCall) on the query at ``lo`` with the given
    scores, its coefficients written to a.coef; returns its loss."""
    cdef const OracleCall *call = <const OracleCall *> a.params
    return call.oracle(scores, a.relevant + lo, a.gains + lo if a.gains != NULL else NULL,
                       size, n_rel, ws, a.coef + lo, call.params)


cdef inline void oracle_body(Py_ssize_t q, Py_ssize_t lo, Py_ssize_t size, Py_ssize_t n_rel,
                             Workspace *ws, const void *task) noexcept nogil:
    """A QueryBody (``task`` a QueryArrays, params an OracleCall): the oracle on the given
    scores."""
    cdef const QueryArrays *a = <const QueryArrays *> task
    if n_rel > 0 and n_rel < size:
        a.value[q] = run_oracle(a, a.scores + lo, lo, size, n_rel, ws)


cdef inline void constraint_body(Py_ssize_t q, Py_ssize_t lo, Py_ssize_t size,
                                 Py_ssize_t n_rel, Workspace *ws,
                                 const void *task) noexcept nogil:
    """A QueryBody (``task`` a ConstraintTask): scores, oracle, c* - c_hat, margin; with
    ``t.sums``, weight[q] (c* - c_hat)_k x_k added to row target[q] of the sums, document by
    document in order (skipping zero products, as ``_map_kernels.combine_rows``), while the
    query's rows are still in cache from its scores."""
    cdef const ConstraintTask *t = <const ConstraintTask *> task
    cdef const unsigned char *r = t.arrays.relevant + lo
    cdef double *coef = t.arrays.coef + lo
    cdef double *out
    cdef double total = 0.0, u
    cdef Py_ssize_t k
    if n_rel == 0 or n_rel == size:
        return
    rows_scores(&t.rows, lo, size, ws.scores)
    t.arrays.value[q] = run_oracle(&t.arrays, ws.scores, lo, size, n_rel, ws)
    for k in range(size):
        coef[k] = (1.0 / n_rel if r[k] else -1.0 / (size - n_rel)) - coef[k]
        total = total + coef[k] * ws.scores[k]
    t.margin[q] = total
    if t.sums == NULL or t.weight[q] == 0.0:
        return
    out = t.sums + t.target[q] * t.rows.n_features
    for k in range(size):
        u = t.weight[q] * coef[k]
        if u != 0.0:
            rows_add(&t.rows, lo + k, u, out)


cdef inline tuple oracle_pass(scores, relevant, ptr, QueryOracle oracle, const void *params,
                              int n_threads, gains=None):
    """The oracle on every query q of the checked arrays (``_kernel_inputs.
    checked_query_arrays``), scores given: returns coef (m,), the psi coefficients c_hat of
    each query's most violated ranking y_hat_q (psi(x_q, y_hat_q) = X_q^T c_hat_q), and
    loss (n,), Delta(y*_q, y_hat_q).  Queries without a relevant or without a non-relevant
    document get coefficients 0 and loss 0.  ``gains`` (m,) float64, or None: the graded
    gains handed to the oracle.  Threads and workspaces as in for_each_query."""
    cdef OracleCall call = OracleCall(oracle, params)
    return per_query_pass(oracle_body, scores, relevant, ptr, gains, &call, True, n_threads)


cdef inline tuple constraints_pass(inputs, QueryOracle oracle, const void *params,
                                   int n_threads):
    """One pass over all queries q of the checked ``inputs`` (``_kernel_inputs.
    checked_constraint_inputs``): the scores s = X_q w (dense_scores on dense rows, the CSR
    rows, int32 or intp indices, or binned rows: the lookup tables L of w made once for the
    pass, then s_d = sum_f L_f[b_{d,f}]), the oracle's y_hat_q with its loss Delta_q, and the
    coefficients of

        dpsi_q = psi(x_q, y*_q) - psi(x_q, y_hat_q) = X_q^T (c* - c_hat),
        c*_i = 1/|P| for relevant i,  c*_j = -1/|N| for non-relevant j

    (c*: the coefficients of the correct ranking, every relevant document on top), with the
    margin w.dpsi_q = sum_k (c* - c_hat)_k s_k.  dpsi_q itself is not formed: it is a
    combination of the query's rows of X, which the caller forms only where it is needed
    (svmmap.core.plugins.rows), so the pass allocates O(documents + queries), never
    queries x features.  The oracle is handed the query's slice of ``inputs.gains`` when it
    is not None.  Queries without a relevant or without a non-relevant document get
    Delta_q = 0, coefficients 0 and margin 0.  Threads and workspaces as in for_each_query.
    With ``inputs.sums`` (a PassSums, ``_kernel_inputs.checked_pass_sums``) and dense or CSR
    rows, each query's weighted dpsi_q is also added to its target's row of an
    (n_targets, d) array while its rows are in cache (constraint_body): the cut groups'
    vectors without a second pass over X, the same bits as ``_map_kernels.combine_rows``
    (the queries are then dealt to threads by target: for_each_query_by_group).
    Returns (loss (n,), coef (m,) = c* - c_hat, margin (n,), those sums or None)."""
    import numpy as np

    from ._binned_rows import binned_lookup, table_starts

    cdef bint binned = inputs.is_binned
    cdef bint wide_bins = inputs.bins.dtype == np.uint16
    cdef const unsigned char[:, ::1] bins8 = \
        inputs.bins if not wide_bins else np.zeros((1, 1), np.uint8)
    cdef const unsigned short[:, ::1] bins16 = \
        inputs.bins if wide_bins else np.zeros((1, 1), np.uint16)
    starts_arr = table_starts(inputs.widths) if binned else np.zeros(1, np.intp)
    lookup_arr = binned_lookup(inputs.w, inputs.widths) if binned else inputs.w
    cdef const Py_ssize_t[::1] starts = starts_arr if len(starts_arr) else np.zeros(1, np.intp)
    values = inputs.data if inputs.is_csr else inputs.dense
    cdef bint single = values.dtype == np.float32
    cdef const float[::1] values32 = values if single else np.zeros(1, np.float32)
    cdef bint wide_index = inputs.indices.dtype.itemsize == sizeof(Py_ssize_t)
    cdef const int[::1] indices32 = inputs.indices if not wide_index else np.zeros(1, np.intc)
    cdef const int[::1] indptr32 = inputs.indptr if not wide_index else np.zeros(1, np.intc)
    cdef const Py_ssize_t[::1] indices64 = \
        inputs.indices if wide_index else np.zeros(1, np.intp)
    cdef const Py_ssize_t[::1] indptr64 = inputs.indptr if wide_index else np.zeros(1, np.intp)
    cdef bint wide = wide_bins if binned else wide_index
    cdef OracleCall call = OracleCall(oracle, params)
    loss_arr = np.zeros(len(inputs.ptr) - 1)
    margin_arr = np.zeros(len(inputs.ptr) - 1)
    coef_arr = np.zeros(len(inputs.relevant))
    cdef ConstraintTask task
    task.arrays = query_arrays(None, inputs.relevant, inputs.gains, coef_arr, loss_arr, &call)
    task.margin = output_doubles(margin_arr)
    empty = np.zeros(1)
    task.rows = Rows(inputs.is_csr, binned, wide, single, inputs.n_features,
                     len(inputs.widths) if binned else 0, &bins8[0, 0], &bins16[0, 0],
                     &starts[0], input_doubles(empty if single else inputs.dense),
                     input_doubles(empty if single else inputs.data),
                     &values32[0], &values32[0], &indices32[0], &indptr32[0], &indices64[0],
                     &indptr64[0], input_doubles(lookup_arr))
    sums = inputs.sums
    sums_arr = None
    cdef const double[::1] weight
    cdef const Py_ssize_t[::1] target
    task.sums = NULL
    if sums is None or binned or len(loss_arr) == 0:
        for_each_query(inputs.relevant, inputs.ptr, constraint_body, &task, n_threads)
        return loss_arr, coef_arr, margin_arr, None
    sums_arr = np.zeros((sums.n_targets, inputs.n_features))
    if inputs.n_features:
        task.sums = output_doubles(sums_arr.ravel())
    weight, target = sums.weights, sums.targets
    task.weight, task.target = &weight[0], &target[0]
    for_each_query_by_group(inputs.relevant, inputs.ptr, sums.order, sums.starts,
                            constraint_body, &task, n_threads)
    return loss_arr, coef_arr, margin_arr, sums_arr
