"""The C path: validation MAP against C on MQ2008 Fold1 (bundled), C chosen by SVMMapCV.

    python docs/examples/c_path.py c_path.png

SVMMapCV trains along the C values from small to large, each fit warm-started from the last,
scores every fit on the validation queries and keeps the smallest C within ``select_tol`` of
the best validation MAP (what ``svmmap_learn -c C1,C2,... --eval-set vali`` does).  The
figure shows each C's validation MAP and the chosen C.
"""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from svmmap import datasets  # noqa: E402
from svmmap.model_selection import SVMMapCV  # noqa: E402

CS = [1e-3, 1e-2, 0.1, 1, 10, 100, 1000]


def main(out):
    splits = datasets.load_mq2008_fold1()
    model = SVMMapCV(Cs=CS).fit(*splits["train"], eval_set=splits["vali"])
    cs = [row["C"] for row in model.path_]
    vali = [row["vali"] for row in model.path_]
    test_map = model.score(*splits["test"])
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.semilogx(cs, vali, "o-", label="validation MAP (157 queries)")
    ax.axvline(model.C_, color="grey", linestyle=":",
               label=f"chosen C = {model.C_:g} (test MAP {test_map:.4f})")
    ax.set_xlabel("C")
    ax.set_ylabel("MAP")
    ax.set_title("SVM-MAP on MQ2008 Fold1: the C path")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"chosen C {model.C_:g}, validation MAP "
          + ", ".join(f"{c:g}: {v:.4f}" for c, v in zip(cs, vali)))


if __name__ == "__main__":
    main(sys.argv[1])
