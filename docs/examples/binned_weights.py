"""The trained weights of binned features as step functions (Yue et al. 2007, Section 4.2 and
Figure 2), on MQ2008 Fold1 (bundled).

    python docs/examples/binned_weights.py binned_weights.png

BinnedFeatureMap replaces each base function f by the indicators 1[f(d|x) > theta_k] for its
thresholds theta_1 < ... < theta_K, so a linear model on them scores a document by
sum_f g_f(f(d|x)) with  g_f(v) = sum_k w_{f,k} 1[v > theta_k]:  a non-decreasing or
non-monotone step function of each base score, learned by SVM-MAP.  The figure draws g_f of
a few base functions (LETOR 4.0 feature numbers; feature 25 is BM25).
"""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from svmmap import SVMMap, datasets  # noqa: E402
from svmmap.features import BinnedFeatureMap  # noqa: E402

#: LETOR 4.0 feature numbers (1-based, as in the data files) of the base functions drawn
FEATURES = [25, 30, 40, 45]


def step_function(thresholds, weights):
    """(v, g(v)) of g(v) = sum_k w_k 1[v > theta_k] over [0, 1], ready for plt.step."""
    v = np.concatenate([[0.0], thresholds, [1.0]])
    g = np.concatenate([[0.0], np.cumsum(weights)])
    return v, np.append(g, g[-1])


def main(out):
    X, y, qid = datasets.load_mq2008_fold1()["train"]
    binning = BinnedFeatureMap(n_thresholds=20, base_columns=[f - 1 for f in FEATURES])
    model = SVMMap(C=10, feature_map=binning).fit(X, y, qid)
    fitted = model.feature_map_
    fig, ax = plt.subplots(figsize=(6, 3.8))
    start = 0
    for column, thresholds in zip(fitted.base_columns_, fitted.thresholds_):
        weights = model.coef_[start:start + len(thresholds)]
        start += len(thresholds)
        v, g = step_function(thresholds, weights)
        ax.step(v, g, where="post", label=f"feature {column + 1}")
    assert start == model.coef_.shape[0]
    ax.set_xlabel("base function value f(d|x) (LETOR: normalised per query to [0, 1])")
    ax.set_ylabel("learned contribution g_f")
    ax.set_title("SVM-MAP on binned features (20 thresholds each), MQ2008")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"{model.coef_.shape[0]} binned features, |w| = {np.linalg.norm(model.coef_):.4f}")


if __name__ == "__main__":
    main(sys.argv[1])
