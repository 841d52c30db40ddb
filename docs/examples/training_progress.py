"""Training progress: the duality gap after every iteration of the cutting-plane loop, for the
1-slack and the n-slack formulation, on MQ2008 Fold1 (bundled) at C = 10.

    python docs/examples/training_progress.py training_progress.png

A callback passed to ``fit(..., callbacks=...)`` receives each iteration's Progress; its
``duality_gap`` is the best primal objective so far minus the dual objective of the working
set's QP, an upper bound on how far the best w is from the optimum.  Training stops when the
gap reaches ``gap_target`` (rel_gap times the primal objective).
"""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from svmmap import SVMMap, datasets  # noqa: E402
from svmstruct_api.callbacks import Progress  # noqa: E402


def gaps(algorithm, X, y, qid):
    history = []
    SVMMap(C=10, algorithm=algorithm).fit(
        X, y, qid, callbacks=[history.append])  # every Progress, then the result
    progress = [event for event in history if isinstance(event, Progress)]
    return ([p.iteration for p in progress], [p.duality_gap for p in progress],
            progress[-1].gap_target)


def main(out):
    X, y, qid = datasets.load_mq2008_fold1()["train"]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for algorithm in ("1-slack", "n-slack"):
        iterations, gap, target = gaps(algorithm, X, y, qid)
        line, = ax.semilogy(iterations, gap, ".-", label=f"{algorithm} ({len(gap)} iterations)")
        ax.axhline(target, color=line.get_color(), linestyle=":", linewidth=0.8)
        print(f"{algorithm}: {len(gap)} iterations, final gap {gap[-1]:.3g} "
              f"(target {target:.3g})")
    ax.set_xlabel("iteration")
    ax.set_ylabel("duality gap (dotted: target)")
    ax.set_title("SVM-MAP on MQ2008 Fold1, C = 10")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=100)


if __name__ == "__main__":
    main(sys.argv[1])
