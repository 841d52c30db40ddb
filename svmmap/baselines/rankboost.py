"""RankBoost for bipartite feedback (Freund, Iyer, Schapire & Singer, JMLR 2003, Sec. 3.2 and
4.2) and its semi-supervised extension (Amini, Truong & Goutte, SIGIR 2008).

Crucial pairs are (non-relevant x0, relevant x1) of the same query; D_1 is uniform over all of
them.  Weak rankers are thresholds h(x) = 1[x_j > theta], theta from a per-feature grid of
quantiles of the training values.  Round t:

    r_t(h)  = sum_{(x0, x1)} D_t(x0, x1) (h(x1) - h(x0))      (pick the h maximising |r_t|)
    alpha_t = 1/2 ln((1 + r_t) / (1 - r_t))                   (minimises the bound
                                                                Z_t <= sqrt(1 - r_t^2))
    D_{t+1}(x0, x1) = D_t(x0, x1) exp(alpha_t (h_t(x0) - h_t(x1))) / Z_t

and the final ranker is H(x) = sum_t alpha_t h_t(x).  The exponential loss
sum_{(x0, x1)} D_1(x0, x1) exp(H(x0) - H(x1)) equals prod_t Z_t.

O(n) per round (the paper's RankBoost.B): D_t is kept factored per query,
D_t(x0, x1) = c_t(q) v_t(x0) v_t(x1) with v_t summing to 1 over each side of each query, so

    r_t(h)   = sum_x s_t(x) h(x),   s_t(x) = c_t(q) v_t(x) (+1 relevant, -1 non-relevant),
    v_{t+1}(x) = v_t(x) exp(-/+ alpha_t h_t(x)) / Z_t^{1/0}(q)   (per side, per query),
    Z_t = sum_q c_t(q) Z_t^0(q) Z_t^1(q),   c_{t+1}(q) = c_t(q) Z_t^0(q) Z_t^1(q) / Z_t,

and r_t of every (feature, threshold) is one weighted histogram of the documents' threshold
bins: no pair weight is ever materialised.

Semi-supervised (``fit(..., unlabeled=mask)``): every unlabeled document takes the majority
relevance of its ``n_neighbors`` nearest labeled documents of the same query (Euclidean
distance; a tie counts as non-relevant), and the loss is
    L(H) = L_labeled(H) + lam * L_pseudo(H),
the two exponential pair losses each normalised to 1 at the start, the pseudo pairs being
(pseudo-relevant, pseudo-non-relevant) unlabeled documents of a query.  Both pair sets are
bipartite per query, so they share the factored update above: each pseudo-labeled query is one
more group, with initial mass lam * (its pairs) / (all pseudo pairs) next to
(its pairs) / (all labeled pairs) for a labeled query, and D_t is the mixture of the two pair
distributions; r_t, alpha_t and the threshold search are those of RankBoost on that D_t.
With lam = 0 the pseudo groups carry no mass and the algorithm is exactly supervised
RankBoost on the labeled documents.  Thresholds come from the labeled documents only.

RankBoost's model is not linear: decision_function evaluates the stored
(feature, threshold, alpha) list.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

import numpy as np

from ..core.collection import QueryCollection
from ..core.groups import eval_sets, training_qid
from ..core.rules import Interval, Verbosity
from ..data.model_file import renamed
from ..errors import InputFormatError
from ._base import BaselineRanker, query_measure, validation_collection

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Self

    import numpy.typing as npt

    from ..core._typing import EvalSets, FloatArray, IntArray, Matrix, Vector

    BoolArray = npt.NDArray[np.bool_]

R_MAX = 1.0 - 1e-12


def threshold_grid(X: Matrix, n_thresholds: int) -> FloatArray:
    """Per feature, the distinct ``n_thresholds``-quantiles of its values strictly below its
    maximum (so h = 1[x > theta] fires on some document); padded with +inf (never fires).
    Returns an array (n_features, n_thresholds)."""
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X)
    levels = np.linspace(0.0, 1.0, n_thresholds + 2)[1:-1]
    grid = np.full((X.shape[1], n_thresholds), np.inf)
    quantiles = np.quantile(X, levels, axis=0).T
    top = X.max(axis=0)
    for j in range(X.shape[1]):
        values = np.unique(quantiles[j][quantiles[j] < top[j]])
        grid[j, :len(values)] = values
    return grid


def bins(X: Matrix, grid: FloatArray) -> IntArray:
    """bins[i, j] = number of thresholds of feature j strictly below x_ij, so that
    h_{j,k}(x_i) = 1[x_ij > grid[j, k]] = 1[bins[i, j] > k]."""
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X)
    return np.column_stack([np.searchsorted(grid[j], X[:, j], side="left")
                            for j in range(grid.shape[0])])


def pseudo_labels(X: Matrix, labels: FloatArray, unlabeled: BoolArray, ptr: IntArray,
                  n_neighbors: int) -> FloatArray:
    """Relevance (0/1) of each unlabeled document: the majority relevance of its
    ``n_neighbors`` nearest labeled documents of the same query (fewer if the query has
    fewer); ties and queries without labeled documents give non-relevant."""
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X)
    out = np.zeros(len(labels))
    for a, b in zip(ptr[:-1], ptr[1:]):
        u = np.flatnonzero(unlabeled[a:b]) + a
        lab = np.flatnonzero(~unlabeled[a:b]) + a
        if len(u) == 0 or len(lab) == 0:
            continue
        dist = ((X[u, None, :] - X[None, lab, :]) ** 2).sum(axis=2)
        kk = min(n_neighbors, len(lab))
        nearest = np.argsort(dist, axis=1, kind="stable")[:, :kk]
        votes = (labels[lab] > 0)[nearest].mean(axis=1)
        out[u] = (votes > 0.5).astype(float)
    return out


class RankBoost(BaselineRanker):
    """Bipartite RankBoost with threshold weak rankers; semi-supervised with ``unlabeled=``.

    Parameters
    ----------
    max_rounds : boosting rounds T (fewer when no threshold orders a weighted pair any more).
    n_thresholds : candidate thresholds per feature (quantiles of the training values).
    lam : weight lambda of the pseudo-labeled loss (semi-supervised fit only).
    n_neighbors : k of the k-nearest-labeled-neighbour pseudo labels.
    verbose : 0 silent, 1 a line per round.

    Attributes (after fit)
    ----------------------
    features_, thresholds_, alphas_ : the weak rankers h_t(x) = 1[x_{features_[t]} >
        thresholds_[t]] and their weights.
    z_ : Z_t per round; ``np.cumprod(z_)`` is the exponential loss after each round.
    n_rounds_ : rounds kept (T, or fewer with an eval_set).
    valid_map_ : with eval_set, the validation MAP after each round.
    """

    KIND = "rankboost"

    _parameter_rules = {
        "max_rounds": [Interval(1, None, closed="left", integer=True)],
        "n_thresholds": [Interval(1, None, closed="left", integer=True)],
        "lam": [Interval(0, math.inf, closed="left")],
        "n_neighbors": [Interval(1, None, closed="left", integer=True)],
        "verbose": [Verbosity()],
    }

    def __init__(self, max_rounds: int = 300, n_thresholds: int = 32, lam: float = 1.0,
                 n_neighbors: int = 3, verbose: int = 0) -> None:
        self.max_rounds = max_rounds
        self.n_thresholds = n_thresholds
        self.lam = lam
        self.n_neighbors = n_neighbors
        self.verbose = verbose


    @staticmethod
    def _unlabeled_mask(full: QueryCollection, unlabeled: Vector | None) -> BoolArray:
        """``unlabeled`` in the collection's grouped order (all False without it)."""
        n_docs = full.n_documents
        if unlabeled is None:
            mask = np.zeros(n_docs, dtype=np.bool_)
        else:
            mask = np.asarray(unlabeled, dtype=np.bool_).ravel()
            if len(mask) != n_docs:
                raise InputFormatError(f"X has {n_docs} rows but unlabeled has "
                                       f"{len(mask)} entries")
            mask = mask[full.rows]
        if mask.all():
            raise InputFormatError("every document is unlabeled: there is nothing to train on")
        return mask

    def _weighted_pairs(self, full: QueryCollection, mask: BoolArray, pseudo: FloatArray,
                        semi_supervised: bool,
                        ) -> tuple[IntArray, IntArray, BoolArray, FloatArray]:
        """The groups of the pairwise loss -- the labeled part of every query (g < n), then
        its pseudo-labeled part (n + g) -- and their mass (the labeled pairs sum to 1, the
        pseudo-labeled ones to ``lam``): (the documents in some pair, their group, their
        relevance, the mass per group)."""
        n_q = full.n_queries
        query_of_doc = full.query_of_doc
        group = np.where(mask, query_of_doc + n_q, query_of_doc)
        relevant = np.where(mask, pseudo > 0, np.asarray(full.labels) > 0)
        n_groups = 2 * n_q
        n_pos = np.bincount(group, weights=relevant, minlength=n_groups)
        n_neg = np.bincount(group, weights=~relevant, minlength=n_groups)
        pairs = n_pos * n_neg
        labeled_pairs, pseudo_pairs = pairs[:n_q].sum(), pairs[n_q:].sum()
        if labeled_pairs == 0:
            raise InputFormatError("no query has both a relevant and a non-relevant labeled "
                                   "document: there is nothing to train on")
        mass = pairs / labeled_pairs
        if pseudo_pairs > 0:
            mass[n_q:] = self.lam * pairs[n_q:] / pseudo_pairs
        else:
            mass[n_q:] = 0.0
        if semi_supervised and pseudo_pairs == 0 and self.lam > 0:
            warnings.warn("the pseudo labels form no (relevant, non-relevant) pair: the "
                          "unlabeled documents do not enter the loss", stacklevel=3)
        docs = np.flatnonzero(pairs[group] > 0)
        return docs, group[docs], relevant[docs], mass

    def _rounds(self, doc_bins: IntArray, grid: FloatArray, group: IntArray,
                relevant: BoolArray, mass: FloatArray, valid: QueryCollection | None,
                ) -> tuple[list[int], list[float], list[float], list[float], list[float]]:
        """The boosting rounds over the documents' bins of ``grid``: the feature, threshold,
        alpha and Z of every round, and the MAP on ``valid`` after it."""
        n_groups = len(mass)
        sign = np.where(relevant, 1.0, -1.0)
        side = 2 * group + relevant
        side_size = np.bincount(side, minlength=2 * n_groups)
        v = 1.0 / side_size[side]
        c = mass / mass.sum()
        if valid is not None:
            valid_scores = np.zeros(valid.n_documents)
            valid_X = np.asarray(valid.X.toarray() if hasattr(valid.X, "toarray") else valid.X)
        d, n_thr = grid.shape
        flat = doc_bins + (n_thr + 1) * np.arange(d)
        features: list[int] = []
        thresholds: list[float] = []
        alphas: list[float] = []
        zs: list[float] = []
        valid_map: list[float] = []
        for t in range(self.max_rounds):
            s = c[group] * v * sign
            hist = np.bincount(flat.ravel(), weights=np.repeat(s, d),
                               minlength=d * (n_thr + 1)).reshape(d, n_thr + 1)
            # r[j, k] = sum of s over documents with bin > k
            r = np.cumsum(hist[:, ::-1], axis=1)[:, ::-1][:, 1:]
            j, k = np.unravel_index(int(np.argmax(np.abs(r))), r.shape)
            if r[j, k] == 0.0:
                break  # no threshold orders any weighted pair: nothing left to gain
            r_t = float(np.clip(r[j, k], -R_MAX, R_MAX))
            alpha = 0.5 * np.log((1.0 + r_t) / (1.0 - r_t))
            h = (doc_bins[:, j] > k).astype(np.float64)
            v = v * np.exp(-alpha * sign * h)
            side_sum = np.bincount(side, weights=v, minlength=2 * n_groups)
            v = v / side_sum[side]
            z_group = side_sum[0::2] * side_sum[1::2]
            z = float(c @ z_group)
            c = c * z_group / z
            features.append(int(j))
            thresholds.append(float(grid[j, k]))
            alphas.append(float(alpha))
            zs.append(z)
            if valid is not None:
                valid_scores += alpha * (valid_X[:, j] > grid[j, k])
                valid_map.append(float(query_measure(valid_scores, valid.labels, valid.ptr,
                                                    "map", None).mean()))
            if self.verbose:
                print(f"RankBoost round {t + 1}: feature {j + 1} > {grid[j, k]:.4g} "
                      f"alpha {alpha:.4g} r {r_t:.4f} loss {np.prod(zs):.6g}")
            if abs(r_t) >= R_MAX:
                break
        return features, thresholds, alphas, zs, valid_map

    def fit(self, X: Matrix, y: Vector, qid: Vector | None = None,
            unlabeled: Vector | None = None, eval_set: EvalSets | None = None,
            *, group: Vector | None = None,
            eval_group: Sequence[Vector] | None = None,
            eval_qid: Sequence[Vector] | None = None) -> Self:
        """Train on documents X with labels y (relevant: y > 0) grouped by qid; return self.

        ``unlabeled``: boolean mask of the rows whose label is unknown (their y is ignored)
        -- the semi-supervised variant.  ``eval_set=(X_valid, y_valid, qid_valid)`` (or
        LightGBM's forms with ``eval_group`` / ``eval_qid``, and ``group`` sizes instead of
        qid: svmmap.core.groups) keeps the number of rounds with the best MAP on the first
        validation set; ``best_score_`` records MAP on each.
        """
        qid = training_qid(qid, group, X)
        full = self._training_collection(X, y, qid)
        sets = self._validate_eval_sets(eval_sets(eval_set, eval_group, eval_qid),
                                        eval_qid is not None)
        eval_set = sets[0] if sets else None
        mask = self._unlabeled_mask(full, unlabeled)
        Xd = np.asarray(full.X.toarray() if hasattr(full.X, "toarray") else full.X)
        grid = threshold_grid(Xd[np.flatnonzero(~mask)], self.n_thresholds)
        pseudo = pseudo_labels(Xd, full.labels, mask, full.ptr, self.n_neighbors)
        docs, group, relevant, mass = self._weighted_pairs(full, mask, pseudo,
                                                           unlabeled is not None)
        valid = validation_collection(eval_set, Xd.shape[1])
        features, thresholds, alphas, zs, valid_map = self._rounds(
            bins(Xd[docs], grid), grid, group, relevant, mass, valid)
        if not features:
            raise InputFormatError("no threshold of any feature separates a relevant from a "
                                   "non-relevant document: RankBoost selected no weak ranker")
        self.features_ = np.array(features, dtype=np.int64)
        self.thresholds_ = np.array(thresholds)
        self.alphas_ = np.array(alphas)
        self.z_ = np.array(zs)
        self.n_rounds_ = len(features)
        if valid is not None:
            self.valid_map_ = np.array(valid_map)
            self.n_rounds_ = 1 + int(np.argmax(valid_map))
        self._record_eval(sets)
        return self

    def decision_function(self, X: Matrix, qid: Vector | None = None) -> FloatArray:
        """Scores H(x) = sum_{t <= n_rounds_} alpha_t 1[x_{j_t} > theta_t] (``qid`` is
        accepted for the common ranker API and not needed)."""
        X, _ = self._validate_X(X, qid)
        T = self.n_rounds_
        features = self.features_[:T]
        cols = X[:, features]
        cols = np.asarray(cols.toarray() if hasattr(cols, "toarray") else cols)
        return (cols > self.thresholds_[:T]).astype(np.float64) @ self.alphas_[:T]

    def predict(self, X: Matrix, qid: Vector | None = None) -> FloatArray:
        """The ranking scores of decision_function."""
        return self.decision_function(X, qid=qid)

    def _fitted_state(self):
        model = {"features": [int(j) for j in self.features_],
                 "thresholds": [float(t) for t in self.thresholds_],
                 "alphas": [float(a) for a in self.alphas_], "n_rounds": int(self.n_rounds_)}
        training = {"z": [float(z) for z in self.z_]}
        if hasattr(self, "valid_map_"):
            training["valid_map"] = [float(v) for v in self.valid_map_]
        return model, training

    def _restore(self, model, training):
        self.features_ = np.array(model["features"], dtype=np.int64)
        self.thresholds_ = np.array(model["thresholds"], dtype=np.float64)
        self.alphas_ = np.array(model["alphas"], dtype=np.float64)
        self.n_rounds_ = int(model["n_rounds"])
        self.z_ = np.array(training["z"], dtype=np.float64)
        if training.get("valid_map") is not None:
            self.valid_map_ = np.array(training["valid_map"], dtype=np.float64)
        lengths = {len(self.features_), len(self.thresholds_), len(self.alphas_)}
        if len(lengths) != 1 or not 0 <= self.n_rounds_ <= len(self.features_):
            raise ValueError("weak ranker lists do not match")
        if np.any((self.features_ < 0) | (self.features_ >= self.n_features_in_)):
            raise ValueError("a weak ranker's feature is out of range")


def upgrade_v1(document: dict[str, Any], v2: dict[str, Any]) -> None:
    """The RankBoost part of a version-1 file's version-2 layout (svmmap.data.model_file.ModelKind):
    the weak rankers and the number of rounds become ``model``, ``n_rounds`` ``max_rounds``."""
    v2["model"] = {**document["weak_rankers"], "n_rounds": document["n_rounds"]}
    v2["params"] = renamed(v2["params"], {"n_rounds": "max_rounds"})
