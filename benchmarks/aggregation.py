"""Training with and without the aggregation of a large working set (svmstruct_api.upkeep,
BaseSSVM._aggregate), alternating, on the sets where it applies and on the LETOR folds where
it must change nothing.

    python benchmarks/aggregation.py                        # sparse set at C = 100, 1000
    python benchmarks/aggregation.py --datasets sparse,MQ2008 --Cs 1000 --rounds 3

Per (dataset, C) and round: ``SVMMap(C)`` at its defaults fitted twice on the training set,
"aggregated" (the default) and "kept" (``_AGGREGATE_NUMBERS`` patched to infinity: every
supporting cut kept), in alternating order; recorded: iterations, the largest working set,
the primal objective of each and their relative difference (both stop on a certified
relative gap of 1e-6, so they must agree to about that), CPU seconds of each fit (medians
over the rounds; ``time.process_time``).  ``sparse`` is benchmarks/synthetic.py's
sparse_letor (5 10^4 documents x 10^5 features, the set of benchmarks/vs_svm_rank.py);
MQ2008 and OHSUMED are Fold1's training files.
"""

import argparse
import math
import statistics
import time

import _common as common
import synthetic
from _common import record

from svmmap import SVMMap
from svmstruct_api import upkeep


def data(name):
    if name == "sparse":
        return synthetic.sparse_letor()
    return common.load_fold(name, 1)[0]


def fit(X, y, qid, C, aggregated):
    original = upkeep._AGGREGATE_NUMBERS
    if not aggregated:
        upkeep._AGGREGATE_NUMBERS = math.inf
    try:
        start = time.process_time()
        result = SVMMap(C=C).fit(X, y, qid).training_result_
        return result, time.process_time() - start
    finally:
        upkeep._AGGREGATE_NUMBERS = original


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="sparse")
    parser.add_argument("--Cs", default="100,1000")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    rows = []
    for dataset in args.datasets.split(","):
        X, y, qid = data(dataset)
        for C in (float(c) for c in args.Cs.split(",")):
            runs = {True: [], False: []}
            for r in range(args.rounds):
                for aggregated in ((True, False) if r % 2 == 0 else (False, True)):
                    runs[aggregated].append(fit(X, y, qid, C, aggregated))
            on, off = runs[True][-1][0], runs[False][-1][0]
            rows.append({
                "dataset": dataset, "C": C,
                "iterations": on.iterations, "kept_iterations": off.iterations,
                "working_set": max(h.working_set_size for h in on.history),
                "kept_working_set": max(h.working_set_size for h in off.history),
                "objective": on.primal_objective, "kept_objective": off.primal_objective,
                "relative_difference": (on.primal_objective - off.primal_objective)
                / off.primal_objective,
                "cpu": statistics.median(c for _, c in runs[True]),
                "kept_cpu": statistics.median(c for _, c in runs[False])})
            print(rows[-1], flush=True)
    lines = ["| dataset | C | iterations kept -> aggregated | largest working set | "
             "P(w) kept | P(w) aggregated | relative difference | CPU s kept / aggregated "
             "(ratio) |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['dataset']} | {r['C']:g} | {r['kept_iterations']} -> {r['iterations']} | "
            f"{r['kept_working_set']} -> {r['working_set']} | {r['kept_objective']:.10g} | "
            f"{r['objective']:.10g} | {r['relative_difference']:+.1e} | "
            f"{r['kept_cpu']:.2f} / {r['cpu']:.2f} ({r['cpu'] / r['kept_cpu']:.2f}) |")
    command = "python benchmarks/aggregation.py" + "".join(
        f" --{k} {v}" for k, v in (("datasets", args.datasets), ("Cs", args.Cs),
                                   ("rounds", args.rounds))
        if str(v) != {"datasets": "sparse", "Cs": "100,1000", "rounds": "2"}[k])
    record("aggregation", command, rows, "\n".join(lines))
    return rows


if __name__ == "__main__":
    main()
