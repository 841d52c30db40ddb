"""Time of what one 1-slack iteration asks of an oracle pass: the fused pass, the averaged
constraint (dpsi.mean) and the margins (dpsi @ w), against X @ w + argsort, on MQ2007-like
synthetic data (1,700 queries of 20-61 documents, 46 features), dense and CSR, one thread.

    OMP_NUM_THREADS=1 python benchmarks/iteration_step.py
    OMP_NUM_THREADS=1 PYTHONPATH=<checkout of another revision> python benchmarks/iteration_step.py

(run the two lines one after the other to compare revisions: the pass before the memory change
formed the queries x features dpsi, this one keeps document coefficients.)  Prints only.
"""

import time
import warnings

import numpy as np
import scipy.sparse as sp

import svmmap
from svmmap import SVMMap


def best_of(step, repeats=30):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    sizes = rng.integers(20, 62, 1700)
    qid = np.repeat(np.arange(1700), sizes)
    X = rng.random((len(qid), 46))
    y = (rng.random(len(qid)) < 0.25).astype(float)
    w = rng.normal(size=46)
    for layout in ("dense", "csr"):
        X_in = X if layout == "dense" else sp.csr_matrix(X)
        plugin = SVMMap()._prepare(X_in, y, qid)["plugin"]

        def step(plugin=plugin):
            batch = plugin.most_violated_constraints(w)
            batch.dpsi.mean(axis=0)
            batch.dpsi @ w

        step_s = best_of(step)
        bound_s = best_of(lambda X_in=X_in: np.argsort(X_in @ w))
        print(f"{svmmap.__file__}: {layout}: pass + mean + margins {step_s * 1e3:.2f} ms, "
              f"X @ w + argsort {bound_s * 1e3:.2f} ms, ratio {step_s / bound_s:.2f}")


if __name__ == "__main__":
    main()
