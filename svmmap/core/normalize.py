"""Global feature normalisers: fitted on the training documents, stored in the model, applied
at scoring -- the normalisers search engines apply before a linear model (the OpenSearch /
Elasticsearch LTR plugin's ``standard`` / ``min_max`` feature normalizers, Solr LTR's
``StandardNormalizer`` / ``MinMaxNormalizer``), so that an exported model scores as svmmap does.

For feature j the normalised value is  z_j = (x_j - shift_j) / scale_j:

* ``"standard"``: shift = the mean of the training values, scale = their standard deviation
  (population, ddof 0, as scikit-learn's StandardScaler);
* ``"minmax"``: shift = the minimum, scale = maximum - minimum.

A constant training column gets scale 1 (z = x - shift, 0 on the training data): engines
refuse a zero standard deviation or an empty range, and any scale gives the same model there.

Training needs no centred copy of X (which would make sparse data dense): every ranking loss
compares documents of one query, so a shift common to all documents changes no constraint, and
SVM-ACC's bias is unregularised and absorbs it; svmmap trains on the scaled columns
x_j / scale_j and the learned w is the weight vector over z.  The model's score is
w.z + b with b = 0 for the ranking losses (the constant -w.(shift/scale) that w.(x/scale)
differs by changes no ranking and is what engines, which have no intercept, leave out too) and,
for loss="acc", b = the trained bias + w.(shift/scale).

``per_query_normalized`` detects data normalised within each query (LETOR's QueryLevelNorm:
x' = (x - min_q) / (max_q - min_q) per query q), which no engine can reproduce from one
document's features.
"""

import numpy as np

from ..kernels._csr import CSRArrays, as_scipy, is_sparse, scores
from ..kernels._csr_rows import csr_query_normalized, dense_query_normalized
from ..kernels._kernel_inputs import csr_for_kernels

__all__ = ["NORMALIZERS", "Normalizer", "per_query_normalized"]

NORMALIZERS = ("standard", "minmax")


class Normalizer:
    """A fitted global normaliser (module docstring): ``kind``, ``shift``, ``scale``."""

    def __init__(self, kind, shift, scale):
        if kind not in NORMALIZERS:
            raise ValueError(f"normalize must be one of {NORMALIZERS} or None, got {kind!r}")
        self.kind = kind
        self.shift = np.asarray(shift, dtype=np.float64)
        self.scale = np.asarray(scale, dtype=np.float64)
        if self.shift.shape != self.scale.shape or self.shift.ndim != 1:
            raise ValueError("shift and scale must be vectors of one length")
        if not (np.all(np.isfinite(self.shift)) and np.all(np.isfinite(self.scale))
                and np.all(self.scale > 0)):
            raise ValueError("shift must be finite and scale finite and positive")

    @classmethod
    def fit(cls, kind, X):
        """The normaliser of ``kind`` fitted on the rows of X (ndarray, scipy.sparse, or the
        reader's CSRArrays: no scipy needed for those)."""
        if kind not in NORMALIZERS:
            raise ValueError(f"normalize must be one of {NORMALIZERS} or None, got {kind!r}")
        sparse = is_sparse(X)
        if isinstance(X, CSRArrays):
            low, high = _column_extremes(X)
        else:
            low, high = X.min(axis=0), X.max(axis=0)
            if sparse:
                low, high = low.toarray().ravel(), high.toarray().ravel()
            low, high = np.asarray(low, float), np.asarray(high, float)
        if kind == "minmax":
            shift, scale = low, high - low
        elif sparse:  # sum (x - mean)^2 over the stored values and the zeros
            if not isinstance(X, CSRArrays):
                import scipy.sparse as sp  # loaded already: X is scipy's

                X = sp.csr_matrix(X)
            n, d = X.shape
            # the mean as scipy's X.mean(axis=0) sums it: values times 1/n, row by row
            shift = np.bincount(X.indices, weights=X.data * (1.0 / n), minlength=d)
            deviation = X.data - shift[X.indices]
            stored = np.bincount(X.indices, minlength=d)
            squares = np.bincount(X.indices, weights=deviation * deviation, minlength=d)
            scale = np.sqrt((squares + (n - stored) * shift * shift) / n)
        else:
            shift, scale = _column_mean_std(X)
        # constant columns (and spreads too small for a float32 engine to divide by): 1
        scale = np.where((high > low) & (np.float32(scale) > 0), scale, 1.0)
        return cls(kind, shift, scale)

    def scale_columns(self, X):
        """X with column j divided by scale_j (sparse stays sparse): what training sees."""
        inverse = 1.0 / self.scale
        if isinstance(X, CSRArrays):  # the same structure, values scaled
            return X._replace(data=X.data * inverse[X.indices])
        if is_sparse(X):  # the same structure (sorted indices kept), values scaled
            import scipy.sparse as sp  # loaded already: X is scipy's

            X = sp.csr_matrix(X, copy=True)
            X.data *= inverse[X.indices]
            return X
        return np.ascontiguousarray(X * inverse)

    def transform(self, X):
        """z = (x - shift) / scale, dense (tests and small data; scoring uses ``scores``)."""
        X = as_scipy(X)
        X = X.toarray() if is_sparse(X) else np.asarray(X, dtype=np.float64)
        return (X - self.shift) / self.scale

    def scores(self, X, coef):
        """w.z for the rows of X, computed as (X @ (w / scale)) - w.(shift / scale) without
        forming z."""
        folded, constant = self.fold(coef)
        return scores(X, folded) + constant

    def fold(self, coef):
        """(weights on the raw features, constant): w.z = (w / scale).x - w.(shift / scale)
        -- the normaliser folded into a linear model without normalisers (RankLib)."""
        coef = np.asarray(coef, dtype=np.float64)
        return coef / self.scale, -float(np.dot(coef, self.shift / self.scale))

    def state(self):
        """What a model file keeps (JSON)."""
        return {"kind": self.kind, "shift": [float(v) for v in self.shift],
                "scale": [float(v) for v in self.scale]}

    @classmethod
    def from_state(cls, state):
        """The normaliser a model file's ``state()`` record describes."""
        return cls(state["kind"], state["shift"], state["scale"])


#: rows of a dense X whose deviations from the mean _column_mean_std holds at a time
DENSE_ROWS = 4096


def _column_mean_std(X):
    """(mean, standard deviation) of every column of a dense X, in float64 whatever X's
    storage: std_j = sqrt(sum_i (x_ij - mean_j)^2 / n), the deviations formed DENSE_ROWS rows
    at a time (numpy's X.std would hold them for all of X: a float64 temporary of X's
    size)."""
    X = np.asarray(X)
    shift = X.mean(axis=0, dtype=np.float64)
    squares = np.zeros(X.shape[1])
    for start in range(0, X.shape[0], DENSE_ROWS):
        deviation = X[start:start + DENSE_ROWS] - shift
        squares += np.einsum("ij,ij->j", deviation, deviation)
    return shift, np.sqrt(squares / max(X.shape[0], 1))


def _column_extremes(X):
    """(minimum, maximum) of every column of CSRArrays X (no index repeated within a row),
    the zeros it does not store included."""
    n, d = X.shape
    low, high = np.full(d, np.inf), np.full(d, -np.inf)
    np.minimum.at(low, X.indices, X.data)
    np.maximum.at(high, X.indices, X.data)
    has_zero = np.bincount(X.indices, minlength=d) < n
    return np.where(has_zero, np.minimum(low, 0.0), low), \
        np.where(has_zero, np.maximum(high, 0.0), high)


def per_query_normalized(X, ptr):
    """True when the documents look normalised within each query (module docstring): every
    value in [0, 1] and, in every query of at least two documents, every column's minimum 0
    and its maximum 0 or 1, with some maximum 1.  X holds the queries' rows contiguously,
    query g being rows ptr[g]:ptr[g + 1].  Binary features present in every query look so
    too: callers warn rather than refuse.  One pass of the extension over the values, with
    O(d) memory: per-column minima and maxima of the current query for dense X
    (svmmap.kernels._csr_rows.dense_query_normalized), per-column counts for sparse X (scipy's or
    CSRArrays: csr_query_normalized)."""
    ptr = np.asarray(ptr)
    sizes = np.diff(ptr)
    if X.shape[0] == 0 or X.shape[1] == 0 or not np.any(sizes >= 2):
        return False
    if not is_sparse(X):  # one pass of the extension, X read in place
        X = np.asarray(X)
        if X.dtype not in (np.float64, np.float32):
            X = X.astype(np.float64)
        return bool(dense_query_normalized(X, np.ascontiguousarray(ptr, dtype=np.intp)))
    X = csr_for_kernels(X)  # CSRArrays as they are; scipy's (loaded already) as its arrays
    if X.data.size and (X.data.min() < 0 or X.data.max() > 1):
        return False
    return csr_query_normalized(X.data, X.indices, X.indptr,
                                np.ascontiguousarray(ptr, dtype=np.intp), X.shape[1]) == 1
