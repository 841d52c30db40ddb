"""How the thresholds of the original SVM-MAP sample file relate to the scores.

The sample file shipped with SVM-MAP (data/svmmap_sample/sample.data: one TREC-9
topic, 917 documents, 750 binary features = 15 retrieval functions x 50 thresholds) holds
only the indicators 1[f(d) > k] of Section 4.2, not the scores.  What they still show, per
function f: whether each document's indicators are a prefix of ones (nested thresholds), and
how many documents pass each threshold k_1 < ... < k_50.  Per-query quantile (or rank)
thresholds would make these counts fall evenly, by m/50 per threshold, down to about m/50 at
the last one; per-query min-max thresholds would leave the top document above every
threshold.  The table reports, per function: documents above the first / last threshold,
thresholds no document passes (above the query's highest score), thresholds passed by fewer
than 5% of the documents, distinct counts, the largest gap to the even per-query-quantile
counts (fraction of m), and the mean count / m.

    python benchmarks/sample_thresholds.py [--data data/svmmap_sample/sample.data]
"""

import argparse
import sys

import numpy as np
from _common import ROOT, record

N_THRESHOLDS = 50


def threshold_counts(X, n_thresholds=N_THRESHOLDS):
    """One row per base function of the dense 0/1 matrix X (columns grouped by function,
    ``n_thresholds`` each): the statistics of the module docstring."""
    m = X.shape[0]
    even = m * (1 - np.arange(n_thresholds) / n_thresholds)
    rows = []
    for f in range(X.shape[1] // n_thresholds):
        block = X[:, f * n_thresholds:(f + 1) * n_thresholds]
        passed = block.sum(axis=1).astype(int)
        counts = block.sum(axis=0).astype(int)
        rows.append({
            "function": f + 1,
            "nested": bool(np.all(block == (np.arange(n_thresholds) < passed[:, None]))),
            "first": int(counts[0]), "last": int(counts[-1]),
            "above_max": int((counts == 0).sum()),
            "under_5pct": int((counts < 0.05 * m).sum()),
            "distinct": len(np.unique(counts)),
            "max_gap_to_even": float(np.abs(counts - even).max() / m),
            "mean_fraction": float(counts.mean() / m),
            "counts": counts.tolist()})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT / "data" / "svmmap_sample" / "sample.data"))
    args = parser.parse_args(argv)
    from svmmap.data.io import load_svmlight

    X, y, qid = load_svmlight(args.data)
    rows = threshold_counts(X.toarray())
    header = ["function", "nested", "first", "last", "above_max", "under_5pct", "distinct",
              "max_gap_to_even", "mean_fraction"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(f"{r[h]:.2f}" if isinstance(r[h], float) else str(r[h])
                                for h in header) + " |" for r in rows]
    text = (f"{X.shape[0]} documents of {len(np.unique(qid))} query, {int((y > 0).sum())} "
            f"relevant, {X.shape[1]} features.\n\n" + "\n".join(lines) + "\n\nDocuments "
            "above each threshold, per function:\n\n" + "\n".join(
                f"- f{r['function']}: {' '.join(map(str, r['counts']))}" for r in rows))
    command = "python benchmarks/sample_thresholds.py " + " ".join(
        sys.argv[1:] if argv is None else argv)
    record("sample_thresholds", command.strip(), rows, text)
    return rows


if __name__ == "__main__":
    main()
