"""Per-query test AP of SVM-MAP against SVM-ROC on MQ2008 Fold1 (bundled), each at the C
its validation MAP chooses.

    python docs/examples/per_query_ap.py per_query_ap.png

Both SVMs share the joint feature map psi and differ only in the loss (1 - AP against
1 - ROC-area); each point is one test query, above the diagonal where SVM-MAP ranks it better.
"""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from svmmap import datasets, metrics  # noqa: E402
from svmmap.model_selection import SVMMapCV  # noqa: E402

CS = [1e-3, 1e-2, 0.1, 1, 10, 100, 1000]


def per_query_ap(loss, splits):
    model = SVMMapCV(Cs=CS, loss=loss).fit(*splits["train"], eval_set=splits["vali"])
    X, y, qid = splits["test"]
    ap = metrics.per_query(metrics.average_precision, model.decision_function(X), y, qid)
    return model.C_, ap


def main(out):
    splits = datasets.load_mq2008_fold1()
    c_map, ap_map = per_query_ap("map", splits)
    c_roc, ap_roc = per_query_ap("roc", splits)
    assert list(ap_map.ids) == list(ap_roc.ids)
    wins = int((ap_map.values > ap_roc.values).sum())
    losses = int((ap_map.values < ap_roc.values).sum())
    fig, ax = plt.subplots(figsize=(4.8, 4.8))
    ax.plot([0, 1], [0, 1], color="grey", linewidth=0.8)
    ax.scatter(ap_roc.values, ap_map.values, s=12, alpha=0.6)
    ax.set_xlabel(f"SVM-ROC AP (C = {c_roc:g}; MAP {ap_roc.values.mean():.4f})")
    ax.set_ylabel(f"SVM-MAP AP (C = {c_map:g}; MAP {ap_map.values.mean():.4f})")
    ax.set_title(f"{len(ap_map.values)} MQ2008 Fold1 test queries:\n"
                 f"SVM-MAP better on {wins}, worse on {losses}")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"SVM-MAP {ap_map.values.mean():.4f} (C {c_map:g}), "
          f"SVM-ROC {ap_roc.values.mean():.4f} (C {c_roc:g}), W/L {wins}/{losses}")


if __name__ == "__main__":
    main(sys.argv[1])
