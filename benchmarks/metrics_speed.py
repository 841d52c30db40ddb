"""Speed of the metrics against a reference measured in the same run (this was a timed
assertion in tests/api/test_metrics.py; timings belong here; the reader's, formerly in
tests/input_output/test_io.py, is benchmarks/reader.py):

``metrics.mean_average_precision`` on 16,000 documents of 106 queries (shuffled ids) against
its lower bound, one ``np.lexsort`` of (score, query) over all documents; and the same MAP
from rows already grouped (``ptr=``), which skips the grouping.

    python benchmarks/metrics_speed.py
"""

import time

import numpy as np
from _common import record

from svmmap import metrics
from svmmap.core.collection import QueryCollection


def best_time(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    rows = []
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
    record("metrics_speed", "python benchmarks/metrics_speed.py", rows,
           "\n".join(lines))


if __name__ == "__main__":
    main()
