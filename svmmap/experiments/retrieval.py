"""Retrieval functions over one document-term matrix: every query scored against every
document at once (scipy.sparse products, no loop over documents).

Notation: N documents, tf(t, d) the count of term t in document d, dl(d) = sum_t tf(t, d),
avgdl the mean dl, df(t) the documents containing t, cf(t) = sum_d tf(t, d), T = sum_t cf(t),
p(t) = cf(t) / T, qtf(t) the count of t in the query, |q| = sum_t qtf(t).  Query terms not in
the vocabulary are dropped.  A score is computed for every (query, document) pair, but a run
lists only the documents that contain at least one query term (:meth:`Index.matches`), as a
search engine's inverted index would.

Families (:data:`MODELS` lists the runs made with each; ``ln`` natural, ``log2`` base 2):

* ``bm25``: sum_t qtf * idf(t) * tf / (tf + k1 (1 - b + b dl / avgdl)) times a constant, by
  the ``bm25s`` package (variants of Kamphuis et al., ECIR 2020): ``lucene`` idf
  ln(1 + (N - df + 0.5) / (df + 0.5)); ``robertson`` idf ln((N - df + 0.5) / (df + 0.5))
  clamped at 0; ``atire`` idf ln(N / df) and the tf part multiplied by (k1 + 1).
* ``smart``: SMART weighting ``ddd.qqq`` (Salton & Buckley 1988; Singhal et al. 1996),
  score = sum_t w_d(t) w_q(t), each weight the product of a tf letter (``n`` tf, ``l``
  1 + ln tf, ``b`` 1, ``L`` (1 + ln tf) / (1 + ln(mean tf of the text's terms))), an idf
  letter (``n`` 1, ``t`` ln(N / df)) and a normalisation letter (``n`` none, ``c`` cosine:
  divided by the weight vector's Euclidean norm, ``u`` pivoted unique: divided by
  (1 - s) * pivot + s * (distinct terms of the text), pivot the mean over documents of their
  distinct terms, s = 0.2; for a query, pivot = its own distinct terms).
* ``dirichlet``: log p(q | d) = sum_t qtf ln((tf + mu p(t)) / (dl + mu)) (Zhai & Lafferty
  2001), computed as sum_t qtf ln(1 + tf / (mu p(t))) + |q| ln(mu / (dl + mu))
  + sum_t qtf ln p(t).
* ``jelinek-mercer``: log p(q | d) = sum_t qtf ln((1 - lambda) tf / dl + lambda p(t)),
  computed as sum_t qtf ln(1 + (1 - lambda) tf / (lambda dl p(t))) + sum_t qtf ln(lambda p(t)).
* ``pl2`` (divergence from randomness, Amati & van Rijsbergen 2002): with
  tfn = tf log2(1 + c avgdl / dl) and lambda = cf / N, sum over the document's query terms
  of qtf / (tfn + 1) * (tfn log2(tfn / lambda) + (lambda - tfn) log2(e)
  + 0.5 log2(2 pi tfn)).
* ``dph`` (divergence from randomness, Amati 2007, parameter-free): with f = tf / dl,
  sum over the document's query terms of qtf (1 - f)^2 / (tf + 1) *
  (tf log2(tf avgdl N / (dl cf)) + 0.5 log2(2 pi tf (1 - f))); 0 where tf = dl.
* ``f2exp`` (axiomatic, Fang & Zhai 2005): sum_t qtf ((N + 1) / df)^k tf / (tf + s + s dl / avgdl).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from ..errors import SVMMapError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

    from ..core._typing import FloatArray, IntArray

    #: a query or document as its index terms
    Terms = Sequence[str]


class Index:
    """Documents and queries as term-count matrices over one vocabulary.

    ``tf``: CSR (N documents x V terms) of counts, float64; ``vocabulary``: term -> column;
    ``tokens``: the documents' term lists (for ``bm25s``).
    """

    def __init__(self, documents: Iterable[Iterable[str]]) -> None:
        """``documents``: a list of term lists."""
        self.tokens = [list(d) for d in documents]
        lengths = np.fromiter(map(len, self.tokens), dtype=np.intp, count=len(self.tokens))
        if not lengths.sum():
            raise SVMMapError("no document has an index term")
        flat = np.fromiter(chain.from_iterable(self.tokens), dtype=object, count=lengths.sum())
        terms, cols = np.unique(flat.astype(str), return_inverse=True)
        self.vocabulary = {term: j for j, term in enumerate(terms.tolist())}
        rows = np.repeat(np.arange(len(self.tokens)), lengths)
        self.tf = sp.csr_matrix((np.ones(len(rows)), (rows, cols.ravel())),
                                shape=(len(self.tokens), len(terms)))
        self.tf.sum_duplicates()
        self.n_documents = self.tf.shape[0]
        self.dl = np.asarray(self.tf.sum(axis=1)).ravel()
        self.avgdl = self.dl.mean()
        self.df = np.bincount(self.tf.indices, minlength=len(terms)).astype(np.float64)
        self.cf = np.asarray(self.tf.sum(axis=0)).ravel()
        self.p = self.cf / self.cf.sum()

    def queries(self, queries: Sequence[Terms]) -> sp.csr_matrix:
        """CSR (n queries x V) of the query term counts (out-of-vocabulary terms dropped)."""
        known = [[self.vocabulary[t] for t in terms if t in self.vocabulary]
                 for terms in queries]
        rows = np.repeat(np.arange(len(known)), [len(k) for k in known])
        cols = np.fromiter(chain.from_iterable(known), dtype=np.intp, count=len(rows))
        Q = sp.csr_matrix((np.ones(len(rows)), (rows, cols)),
                          shape=(len(queries), len(self.vocabulary)))
        Q.sum_duplicates()
        return Q

    def matches(self, Q: sp.csr_matrix) -> np.ndarray:
        """Dense bool (queries x documents): the document contains a query term."""
        product = (Q > 0).astype(np.float64) @ (self.tf > 0).astype(np.float64).T
        return product.toarray() > 0

    def with_values(self, values: FloatArray) -> sp.csr_matrix:
        """A CSR matrix with the sparsity of ``tf`` and the given data (aligned with
        ``tf.data``)."""
        return sp.csr_matrix((values, self.tf.indices, self.tf.indptr), shape=self.tf.shape)

    @property
    def rows_of_data(self) -> IntArray:
        """The document of every stored entry of ``tf``."""
        return np.repeat(np.arange(self.n_documents), np.diff(self.tf.indptr))


def _dense(matrix):
    return matrix.toarray() if sp.issparse(matrix) else np.asarray(matrix)


def _term_sum(index, Q, values):
    """sum_t qtf(t) * w(t, d) for the sparse document weights ``values`` (aligned with
    ``index.tf.data``): dense (queries x documents)."""
    return _dense(Q @ index.with_values(values).T)


# -- SMART ------------------------------------------------------------------------------


def _smart_weights(counts, letters, index, slope=0.2, pivot=None):
    """The SMART weights of a CSR count matrix (rows: texts) for one ``tf idf norm`` triple."""
    tf_letter, idf_letter, norm_letter = letters
    W = counts.copy().astype(np.float64)
    W.eliminate_zeros()
    row = np.repeat(np.arange(W.shape[0]), np.diff(W.indptr))
    tf = W.data
    if tf_letter == "n":
        weights = tf.copy()
    elif tf_letter == "l":
        weights = 1.0 + np.log(tf)
    elif tf_letter == "b":
        weights = np.ones_like(tf)
    elif tf_letter == "L":
        distinct = np.maximum(np.diff(W.indptr), 1)
        mean_tf = np.asarray(W.sum(axis=1)).ravel() / distinct
        weights = (1.0 + np.log(tf)) / (1.0 + np.log(mean_tf[row]))
    else:
        raise SVMMapError(f"unknown SMART tf letter {tf_letter!r}")
    if idf_letter == "t":
        weights *= np.log(index.n_documents / index.df[W.indices])
    elif idf_letter != "n":
        raise SVMMapError(f"unknown SMART idf letter {idf_letter!r}")
    if norm_letter == "c":
        norms = np.sqrt(np.bincount(row, weights * weights, minlength=W.shape[0]))
        weights /= np.where(norms > 0, norms, 1.0)[row]
    elif norm_letter == "u":
        distinct = np.diff(W.indptr).astype(np.float64)
        pivot = distinct if pivot is None else pivot
        weights /= ((1.0 - slope) * pivot + slope * distinct)[row]
    elif norm_letter != "n":
        raise SVMMapError(f"unknown SMART normalisation letter {norm_letter!r}")
    W.data = weights
    return W


def smart(index: Index, Q: sp.csr_matrix, scheme: str) -> FloatArray:
    """SMART ``ddd.qqq`` scores (module docstring), e.g. ``scheme="lnc.ltc"``."""
    document, query = scheme.split(".")
    pivot = np.diff(index.tf.indptr).mean()
    D = _smart_weights(index.tf, document, index, pivot=pivot)
    Qw = _smart_weights(Q, query, index)
    return _dense(Qw @ D.T)


# -- language models ---------------------------------------------------------------------


def _query_constant(Q, per_term):
    """sum_t qtf(t) * per_term(t), one value per query."""
    return np.asarray(Q @ per_term).ravel()


def dirichlet(index: Index, Q: sp.csr_matrix, mu: float) -> FloatArray:
    """Query log-likelihood with Dirichlet smoothing (module docstring)."""
    tf, terms = index.tf.data, index.tf.indices
    sparse = _term_sum(index, Q, np.log1p(tf / (mu * index.p[terms])))
    q_len = np.asarray(Q.sum(axis=1)).ravel()
    length = np.log(mu / (index.dl + mu))
    return sparse + np.outer(q_len, length) + _query_constant(Q, np.log(index.p))[:, None]


def jelinek_mercer(index: Index, Q: sp.csr_matrix, lam: float) -> FloatArray:
    """Query log-likelihood with Jelinek-Mercer smoothing (module docstring)."""
    tf, terms = index.tf.data, index.tf.indices
    dl = index.dl[index.rows_of_data]
    sparse = _term_sum(index, Q, np.log1p((1.0 - lam) * tf / (lam * dl * index.p[terms])))
    return sparse + _query_constant(Q, np.log(lam * index.p))[:, None]


# -- divergence from randomness and axiomatic ----------------------------------------------


def pl2(index: Index, Q: sp.csr_matrix, c: float) -> FloatArray:
    """PL2 (module docstring)."""
    tf, terms = index.tf.data, index.tf.indices
    dl = index.dl[index.rows_of_data]
    tfn = tf * np.log2(1.0 + c * index.avgdl / dl)
    lam = index.cf[terms] / index.n_documents
    w = (tfn * np.log2(tfn / lam) + (lam - tfn) * np.log2(np.e)
         + 0.5 * np.log2(2.0 * np.pi * tfn)) / (tfn + 1.0)
    return _term_sum(index, Q, w)


def dph(index: Index, Q: sp.csr_matrix) -> FloatArray:
    """DPH (module docstring)."""
    tf, terms = index.tf.data, index.tf.indices
    dl = index.dl[index.rows_of_data]
    f = tf / dl
    w = np.zeros_like(tf)
    inner = f < 1.0
    t, fi, dli = tf[inner], f[inner], dl[inner]
    w[inner] = (1.0 - fi) ** 2 / (t + 1.0) * (
        t * np.log2(t * index.avgdl * index.n_documents / (dli * index.cf[terms][inner]))
        + 0.5 * np.log2(2.0 * np.pi * t * (1.0 - fi)))
    return _term_sum(index, Q, w)


def f2exp(index: Index, Q: sp.csr_matrix, s: float = 0.5, k: float = 0.35) -> FloatArray:
    """F2EXP (module docstring)."""
    tf, terms = index.tf.data, index.tf.indices
    dl = index.dl[index.rows_of_data]
    w = ((index.n_documents + 1.0) / index.df[terms]) ** k * tf / (tf + s + s * dl / index.avgdl)
    return _term_sum(index, Q, w)


# -- BM25 by bm25s ---------------------------------------------------------------------------


def bm25(index: Index, queries: Sequence[Terms], k1: float, b: float,
         method: str = "lucene") -> FloatArray:
    """BM25 scores by ``bm25s`` (module docstring); ``queries``: term lists."""
    try:
        import bm25s
    except ImportError:
        raise SVMMapError("BM25 runs need bm25s: pip install 'svmmap[experiments]' "
                          "(or pip install bm25s)") from None
    retriever = bm25s.BM25(k1=k1, b=b, method=method, dtype="float64")
    retriever.index(index.tokens, show_progress=False)
    known = [[t for t in q if t in index.vocabulary] for q in queries]
    return np.array([retriever.get_scores(q) if q else np.zeros(index.n_documents)
                     for q in known], dtype=np.float64).reshape(len(queries), -1)


# -- the runs ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Model:
    """One retrieval function: a run name, its family and parameters."""

    name: str
    family: str
    params: tuple[tuple[str, float | str], ...] = ()

    def scores(self, index: Index, queries: Sequence[Terms], Q: sp.csr_matrix) -> FloatArray:
        """Dense (queries x documents) scores; ``queries`` the term lists, ``Q`` their
        :meth:`Index.queries` matrix."""
        params: dict[str, Any] = dict(self.params)  # each family's own parameters
        if self.family == "bm25":
            return bm25(index, queries, **params)
        return _FAMILIES[self.family](index, Q, **params)


#: the families but bm25, scores(index, Q, **params)
_FAMILIES: dict[str, Callable[..., FloatArray]] = {
    "smart": smart, "dirichlet": dirichlet, "jelinek-mercer": jelinek_mercer, "pl2": pl2,
    "dph": dph, "f2exp": f2exp}


def _bm25(k1, b, method="lucene"):
    suffix = "" if method == "lucene" else f"-{method}"
    return Model(f"bm25{suffix}-k{k1:g}-b{b:g}", "bm25",
                 (("k1", k1), ("b", b), ("method", method)))


#: The runs made by default, in this order (23 retrieval functions of 7 families).
MODELS = (
    _bm25(1.2, 0.75), _bm25(0.9, 0.4), _bm25(2.0, 0.75), _bm25(0.6, 0.75), _bm25(1.2, 0.3),
    _bm25(1.2, 1.0), _bm25(1.2, 0.75, "robertson"), _bm25(1.2, 0.75, "atire"),
    *(Model(f"tfidf-{s}", "smart", (("scheme", s),))
      for s in ("lnc.ltc", "ltc.ltc", "ntc.ntc", "bnn.btn", "Lnu.ltu")),
    *(Model(f"ql-dirichlet-mu{mu}", "dirichlet", (("mu", mu),)) for mu in (100, 500, 2000)),
    *(Model(f"ql-jm-lambda{lam:g}", "jelinek-mercer", (("lam", lam),))
      for lam in (0.1, 0.5, 0.9)),
    Model("dfr-pl2-c1", "pl2", (("c", 1.0),)), Model("dfr-pl2-c7", "pl2", (("c", 7.0),)),
    Model("dfr-dph", "dph"), Model("axiomatic-f2exp", "f2exp", (("s", 0.5), ("k", 0.35))),
)
