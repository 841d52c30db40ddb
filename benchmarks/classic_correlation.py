"""How alike are the base functions of the classic-collection experiments?

    python benchmarks/classic_correlation.py WORK   # WORK: benchmarks/classic_trials.sh's

For each collection's data set (``WORK/<collection>/data.txt``, written by
``benchmarks/classic_trials.sh``) and each pool query: the Spearman correlation of every pair of
the 23 runs' scores over the query's documents (a document a run did not retrieve has that
run's lowest score minus 1, as ``trec build`` writes it); the mean over pairs, then its mean and
minimum over the queries.  Writes ``results/classic_correlation.md``.
"""

import datetime
import sys
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from svmmap.experiments import tables  # noqa: E402
from svmmap.experiments.datasets import load_pool  # noqa: E402


def main(work):
    rows = []
    for collection in ("cranfield", "cisi", "cacm"):
        pool, ids = load_pool([Path(work) / collection / "data.txt"])
        X = pool.X.toarray()
        upper = np.triu_indices(X.shape[1], 1)
        means = [np.nanmean(spearmanr(X[pool.qid == q]).statistic[upper]) for q in ids]
        rows.append([collection, len(ids), float(np.mean(means)), float(np.min(means))])
    md = "\n\n".join([
        f"Command: `python benchmarks/classic_correlation.py {work}`  \n"
        f"Date: {datetime.date.today().isoformat()}",
        tables.markdown(["collection", "pool queries", "mean Spearman (runs' pairs)",
                         "lowest query"], rows, digits=3),
        "Per query: the mean over the 253 pairs of runs of the Spearman correlation of their "
        "scores over the query's documents; then the mean and the minimum over the queries."])
    (HERE / "results" / "classic_correlation.md").write_text(md + "\n")
    print(md)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/svmmap_classic")
