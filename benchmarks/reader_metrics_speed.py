"""Speed of the reader and of the metrics, each against a reference measured in the same run
(these were timed assertions in tests/test_io.py and tests/test_metrics.py; timings belong here).

1. ``load_svmlight`` on OHSUMED Fold1 train.txt (9,219 documents, 45 features) against
   scikit-learn's ``load_svmlight_file(query_id=True)`` (Cython parser, no per-line checks).
2. ``metrics.mean_average_precision`` on 16,000 documents of 106 queries (shuffled ids)
   against its lower bound: one ``np.lexsort`` of (score, query) over all documents; and the
   same MAP from rows already grouped (``ptr=``), which skips the grouping.

    python benchmarks/reader_metrics_speed.py
"""

import time

import numpy as np
from _common import record, require_data

from svmmap import load_svmlight, metrics
from svmmap.collection import QueryCollection


def best_time(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    from sklearn.datasets import load_svmlight_file

    path = str(require_data("OHSUMED", "Fold1", "train.txt"))
    rows = []
    ours = best_time(lambda: load_svmlight(path), 5)
    reference = best_time(lambda: load_svmlight_file(path, query_id=True), 5)
    rows.append({"what": "read OHSUMED Fold1 train.txt", "seconds": ours,
                 "reference": "sklearn load_svmlight_file", "reference_seconds": reference})

    rng = np.random.default_rng(0)
    m = 16_000
    qid = rng.integers(0, 106, m)
    scores, labels = rng.random(m), rng.integers(0, 3, m)
    grouped = QueryCollection.from_qid(qid)
    s, y = scores[grouped.rows], labels[grouped.rows]
    bound = best_time(lambda: np.lexsort((-scores, qid)), 20)
    for what, fn in (("MAP, 16,000 docs / 106 queries, by qid",
                      lambda: metrics.mean_average_precision(scores, labels, qid)),
                     ("MAP, same, grouped rows (ptr=)",
                      lambda: metrics.mean_average_precision(s, y, ptr=grouped.ptr))):
        rows.append({"what": what, "seconds": best_time(fn, 20),
                     "reference": "np.lexsort((-scores, qid))", "reference_seconds": bound})
    lines = ["| what | seconds | reference | reference seconds | ratio |", "|---|---|---|---|---|"]
    for r in rows:
        ratio = r["seconds"] / r["reference_seconds"]
        lines.append(f"| {r['what']} | {r['seconds']:.4f} | {r['reference']} | "
                     f"{r['reference_seconds']:.4f} | {ratio:.2f} |")
    record("reader_metrics_speed", "python benchmarks/reader_metrics_speed.py", rows,
           "\n".join(lines))


if __name__ == "__main__":
    main()
