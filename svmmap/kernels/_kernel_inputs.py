"""Input checks shared by the per-query kernels (kept in Python: they run once per call)."""

from collections import namedtuple

import numpy as np

CSRArrays = namedtuple("CSRArrays", ["data", "indices", "indptr", "shape"])
CSRArrays.__doc__ = """A CSR matrix as plain arrays, sorted column indices in every row: what
the reader produces for the commands from a file whose lines do not all list the same
features 1..d (svmmap.data.io.read_svmlight, which gives the others as a dense ndarray;
operations without scipy: svmmap.kernels._csr) and what the kernels read (float64 or float32 data,
read in place and summed in float64; indices and indptr both int32 or both intp: the kernels
take either, so scipy's int32 arrays are read in place)."""

BinnedArrays = namedtuple("BinnedArrays", ["bins", "widths", "shape"])
BinnedArrays.__doc__ = """The binned features of svmmap.features.BinnedFeatureMap held
implicitly: ``bins`` (m, F) C-contiguous, uint8 when every width is below 256, else uint16,
b_{d,f} = the number of thresholds of base function f below document d's score;
``widths`` intp (F,), W_f = the number of thresholds of base f; ``shape`` (m, d),
d = sum_f W_f.  It stands for the m x d indicator matrix whose column off_f + j
(off_f = W_0 + ... + W_{f-1}) is 1[b_{d,f} > j]; the kernels (svmmap.kernels._binned_rows) compute
X w by cumulative-weight lookup and X^T u by per-base histograms and suffix sums, never
forming it.  The X of a collection trained with a feature map, from the map to the
kernels."""

ConstraintInputs = namedtuple(
    "ConstraintInputs",
    ["is_csr", "is_binned", "n_features", "dense", "data", "indices", "indptr", "bins",
     "widths", "w", "relevant", "ptr", "gains", "sums"], defaults=[None])
ConstraintInputs.__doc__ = """The checked inputs of a fused constraint pass
(``_query_core.constraints_pass``): X either dense (C-contiguous float64 or float32, raveled),
as CSR arrays, or binned (``bins`` and ``widths`` of BinnedArrays), the unused layouts'
arrays (and an empty w) replaced by one-element placeholders so that every buffer has an
address; ``gains`` (float64, one per document) or None for the losses that do not need
graded gains; ``sums`` None, or the PassSums the pass also forms."""

PassSums = namedtuple("PassSums", ["weights", "targets", "n_targets", "order", "starts"])
PassSums.__doc__ = """Weighted sums of the constraint vectors that a fused constraint pass forms
while each query's rows are at hand (``checked_pass_sums``): row t of the (n_targets, d)
result is sum_{q: targets_q = t} weights_q dpsi_q, the cut groups' vectors of one pass
(svmstruct_api.cut_groups).  ``weights`` float64 and ``targets`` intp, one per query of the
collection (weight 0: the query adds nothing); ``order`` the queries by target, each target's
in ascending order, target t's at order[starts[t]:starts[t + 1]] (every sum is added in query
order, as ``_map_kernels.combine_rows`` adds it, whatever the number of threads)."""


def csr_for_kernels(X):
    """The arrays of a sparse X in the form the fused constraint passes read: X's own arrays
    when they already are (float64 or float32 data, int32 or intp indices and indptr of one
    type, sorted indices), otherwise the converted copies -- never more than needed.  X:
    CSRArrays (their indices are sorted), or a scipy.sparse matrix (or what
    scipy.sparse.csr_matrix takes)."""
    if not isinstance(X, CSRArrays):
        import scipy.sparse as sp  # X is scipy's or becomes scipy's: scipy is loaded

        if not (sp.issparse(X) and X.format == "csr" and X.dtype in (np.float64, np.float32)):
            X = sp.csr_matrix(X, dtype=np.float64)
        if not X.has_sorted_indices:
            X = X.sorted_indices()
    elif X.data.dtype not in (np.float64, np.float32):
        X = X._replace(data=X.data.astype(np.float64))
    index_type = X.indices.dtype
    if index_type not in (np.int32, np.intp) or X.indptr.dtype != index_type:
        index_type = np.intp
    return CSRArrays(np.ascontiguousarray(X.data),
                     np.ascontiguousarray(X.indices, dtype=index_type),
                     np.ascontiguousarray(X.indptr, dtype=index_type), X.shape)


def _value_type(X):
    """The storage the kernels read X's values in: float32 when X's are, else float64."""
    return np.float32 if X.dtype == np.float32 else np.float64


def checked_offsets(relevant, ptr):
    """Contiguous uint8 / intp copies of the relevance flags and the query offsets, with
    offsets that run from 0 to the number of documents without decreasing."""
    relevant = np.ascontiguousarray(relevant, dtype=np.uint8)
    ptr = np.ascontiguousarray(ptr, dtype=np.intp)
    if ptr.ndim != 1 or len(ptr) < 1 or ptr[0] != 0 or ptr[-1] != len(relevant):
        raise ValueError("ptr must run from 0 to the number of documents")
    if np.any(np.diff(ptr) < 0):
        raise ValueError("ptr must be non-decreasing")
    return relevant, ptr


def checked_query_arrays(scores, relevant, ptr):
    """Contiguous float64 / uint8 / intp copies of the inputs, with consistent lengths."""
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    relevant, ptr = checked_offsets(relevant, ptr)
    if scores.shape[0] != relevant.shape[0]:
        raise ValueError("scores and relevant differ in length")
    return scores, relevant, ptr


def checked_constraint_inputs(X, w, relevant, ptr, gains=None):
    """ConstraintInputs of X (a float64 or float32 ndarray, the CSRArrays of
    ``csr_for_kernels``, or BinnedArrays), w, the relevance flags, the query offsets and the
    optional per-document gains, checked to fit together."""
    is_csr, is_binned = isinstance(X, CSRArrays), isinstance(X, BinnedArrays)
    w = np.ascontiguousarray(w, dtype=np.float64)
    relevant, ptr = checked_offsets(relevant, ptr)
    n_features = X.shape[1]
    if w.shape != (n_features,) or X.shape[0] != relevant.shape[0]:
        raise ValueError("X, w, relevant and ptr do not fit together")
    empty, empty_index = np.zeros(1), np.zeros(1, dtype=np.intp)
    bins, widths = np.zeros((1, 1), dtype=np.uint8), empty_index
    if is_binned:
        bins, widths = checked_bins(X)
        dense, data, indices, indptr = empty, empty, empty_index, empty_index
        if not bins.size:
            bins = np.zeros((1, 1), dtype=bins.dtype)
    elif is_csr:
        has_data = len(X.data) > 0
        dense = empty
        data = X.data if has_data else empty
        indices = X.indices if has_data else np.zeros(1, dtype=X.indices.dtype)
        indptr = X.indptr
    else:
        dense = np.ascontiguousarray(X, dtype=_value_type(X)).ravel()
        if not len(dense):
            dense = empty
        data, indices, indptr = empty, empty_index, empty_index
    if gains is not None:
        gains = checked_gains(gains, relevant)
    return ConstraintInputs(is_csr, is_binned, n_features, dense, data, indices, indptr, bins,
                            widths, w if n_features else empty, relevant, ptr, gains)


def checked_bins(X, values=True):
    """(bins, widths) of BinnedArrays X as the kernels read them: C-contiguous uint8 or
    uint16 bins of shape (m, F), intp widths (F,) summing to X's columns, and (``values``)
    every bin at most its base's width (ValueError otherwise).  The bins' bound holds where
    BinnedArrays are made (BinnedFeatureMap, take_rows keeps it): the per-iteration
    products (svmmap.kernels._csr.scores, combine_rows) check the structure only, one pass over
    the bins less; the fused passes' inputs, checked once per plugin, check the values."""
    bins = np.ascontiguousarray(X.bins)
    widths = np.ascontiguousarray(X.widths, dtype=np.intp)
    if bins.dtype not in (np.uint8, np.uint16) or bins.ndim != 2 \
            or bins.shape != (X.shape[0], len(widths)) or int(widths.sum()) != X.shape[1] \
            or np.any(widths < 0):
        raise ValueError("binned X: bins (m, F) uint8 or uint16, widths (F,) summing to "
                         "its columns")
    if values and bins.size and np.any(bins.max(axis=0) > widths):
        raise ValueError("binned X: a bin is above its base function's number of thresholds")
    return bins, widths


def checked_gains(gains, relevant):
    """A contiguous float64 copy of the per-document gains: finite, positive exactly for the
    relevant documents."""
    gains = np.ascontiguousarray(gains, dtype=np.float64)
    if gains.shape != relevant.shape:
        raise ValueError("gains and relevant differ in length")
    if not np.all(np.isfinite(gains)) or np.any((gains > 0) != (relevant != 0)) \
            or np.any(gains < 0):
        raise ValueError("gains must be finite, positive for relevant documents and 0 for "
                         "the others")
    return gains


def checked_pass_sums(weights, targets, n_targets, n_queries):
    """The PassSums of per-query ``weights`` (finite) and ``targets`` (in 0..n_targets-1),
    one of each per query of a collection of ``n_queries``."""
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    targets = np.ascontiguousarray(targets, dtype=np.intp)
    n_targets = int(n_targets)
    if weights.shape != (n_queries,) or targets.shape != (n_queries,) or n_targets < 1 \
            or (n_queries and not 0 <= targets.min() <= targets.max() < n_targets) \
            or not np.all(np.isfinite(weights)):
        raise ValueError("the sums' weights and targets must be one finite weight and one "
                         "target in 0..n_targets-1 per query")
    order = np.argsort(targets, kind="stable").astype(np.intp)
    starts = np.zeros(n_targets + 1, dtype=np.intp)
    np.cumsum(np.bincount(targets, minlength=n_targets), out=starts[1:])
    return PassSums(weights, targets, n_targets, order, starts)


def largest_query(ptr):
    """The number of documents of the largest query (0 without queries)."""
    return int(np.max(np.diff(ptr), initial=0))
