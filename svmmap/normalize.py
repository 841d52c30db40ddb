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
import scipy.sparse as sp

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
        """The normaliser of ``kind`` fitted on the rows of X (ndarray or sparse)."""
        if kind not in NORMALIZERS:
            raise ValueError(f"normalize must be one of {NORMALIZERS} or None, got {kind!r}")
        low, high = X.min(axis=0), X.max(axis=0)
        if sp.issparse(X):
            low, high = low.toarray().ravel(), high.toarray().ravel()
        low, high = np.asarray(low, float), np.asarray(high, float)
        if kind == "minmax":
            shift, scale = low, high - low
        elif sp.issparse(X):  # sum (x - mean)^2 over the stored values and the zeros
            X = sp.csr_matrix(X)
            n, d = X.shape
            shift = np.asarray(X.mean(axis=0)).ravel()
            deviation = X.data - shift[X.indices]
            stored = np.bincount(X.indices, minlength=d)
            squares = np.bincount(X.indices, weights=deviation * deviation, minlength=d)
            scale = np.sqrt((squares + (n - stored) * shift * shift) / n)
        else:
            shift, scale = X.mean(axis=0), X.std(axis=0)
        # constant columns (and spreads too small for a float32 engine to divide by): 1
        scale = np.where((high > low) & (np.float32(scale) > 0), scale, 1.0)
        return cls(kind, shift, scale)

    def scale_columns(self, X):
        """X with column j divided by scale_j (sparse stays sparse): what training sees."""
        inverse = 1.0 / self.scale
        if sp.issparse(X):  # the same structure (sorted indices kept), values scaled
            X = sp.csr_matrix(X, copy=True)
            X.data *= inverse[X.indices]
            return X
        return np.ascontiguousarray(X * inverse)

    def transform(self, X):
        """z = (x - shift) / scale, dense (tests and small data; scoring uses ``scores``)."""
        X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        return (X - self.shift) / self.scale

    def scores(self, X, coef):
        """w.z for the rows of X, computed as (X @ (w / scale)) - w.(shift / scale) without
        forming z."""
        folded, constant = self.fold(coef)
        return np.asarray(X @ folded).ravel() + constant

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
        return cls(state["kind"], state["shift"], state["scale"])


def per_query_normalized(X, ptr):
    """True when the documents look normalised within each query (module docstring): every
    value in [0, 1] and, in every query of at least two documents, every column's minimum 0
    and its maximum 0 or 1, with some maximum 1.  X holds the queries' rows contiguously,
    query g being rows ptr[g]:ptr[g + 1].  Binary features present in every query look so
    too: callers warn rather than refuse.  Extra memory: a query x column table for dense X
    (at most X's size), in proportion to the non-zero values for sparse X."""
    ptr = np.asarray(ptr)
    sizes = np.diff(ptr)
    if X.shape[0] == 0 or X.shape[1] == 0 or not np.any(sizes >= 2):
        return False
    if not sp.issparse(X):  # per query and column extremes: nq x d, at most X's size
        if X.min() < 0 or X.max() > 1:
            return False
        high = np.maximum.reduceat(X, ptr[:-1], axis=0)[sizes >= 2]
        low = np.minimum.reduceat(X, ptr[:-1], axis=0)[sizes >= 2]
        return bool(np.all(low == 0) and np.all((high == 0) | (high == 1))
                    and np.any(high == 1))
    X = sp.csr_matrix(X)
    if X.data.size and (X.data.min() < 0 or X.data.max() > 1):
        return False
    # queries a chunk at a time: the temporaries are in proportion to a chunk's non-zero
    # values, not to X's
    ends = X.indptr[ptr]  # the non-zero values before each query
    any_group, first = False, 0
    while first < len(sizes):
        last = max(first + 1, int(np.searchsorted(ends, ends[first] + _CHUNK_VALUES,
                                                  side="right")) - 1)
        rows = slice(ptr[first], ptr[last])
        groups = _column_groups(X[rows], sizes[first:last])
        if groups is not None:
            if not groups:
                return False
            any_group = True
        first = last
    return any_group


#: non-zero values per chunk of queries in per_query_normalized (its temporaries: about 60
#: bytes each)
_CHUNK_VALUES = 1 << 20


def _column_groups(X, sizes):
    """For the queries of a CSR X (``sizes`` documents each, in order): None when no query of
    at least two documents has a non-zero value, else whether every (query, column) group of
    their non-zero values has maximum 1 and a zero in the column."""
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    cols, values = X.indices, X.data
    nonzero = values != 0
    query = np.repeat(np.arange(len(sizes)), sizes)[rows[nonzero]]
    keep = sizes[query] >= 2  # a query of one document has nothing to normalise
    query, cols, values = query[keep], cols[nonzero][keep], values[nonzero][keep]
    if values.size == 0:
        return None
    keys = query.astype(np.int64) * X.shape[1] + cols
    order = np.argsort(keys, kind="stable")
    keys, values, query = keys[order], values[order], query[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    counts = np.diff(np.r_[starts, len(keys)])
    return bool(np.all(np.maximum.reduceat(values, starts) == 1.0)
                and np.all(counts < sizes[query[starts]]))
