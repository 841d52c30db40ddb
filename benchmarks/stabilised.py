"""Cutting-plane iterations with and without the stabilised oracle points of the 1-slack
learner (svmstruct_api.learner's module docstring), and the objectives they reach.

    python benchmarks/stabilised.py                 # OHSUMED and MQ2008 Fold1, C = 1, 100, 1000
    python benchmarks/stabilised.py --Cs 1000 --datasets MQ2008

Per (dataset, C): ``SVMMap(C)`` at its defaults (1-slack, the relative-gap stop) fitted twice
on the fold's training file -- "plain", with ``OneSlackSSVM._stabilized`` patched to return
False (the oracle always at the QP's solution: the method before stabilisation), and
"stabilised" (the default) -- alternating; recorded: iterations, final working-set size,
primal objective P(w) of each and their relative difference, CPU seconds of each fit
(``time.process_time``; the machine may be shared, so the iteration counts are the figures
to compare).  Both stop on a certified relative duality gap of 1e-6, so their objectives
must agree to about 1e-6 relative.
"""

import argparse
import time

import _common as common
from _common import record

from svmmap import SVMMap
from svmstruct_api import learner

DATASETS = ("OHSUMED", "MQ2008")


def fit(X, y, qid, C, stabilised):
    original = learner.OneSlackSSVM._stabilized
    if not stabilised:
        learner.OneSlackSSVM._stabilized = lambda self: False
    try:
        start = time.process_time()
        result = SVMMap(C=C).fit(X, y, qid).training_result_
        return result, time.process_time() - start
    finally:
        learner.OneSlackSSVM._stabilized = original


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--Cs", default="1,100,1000")
    args = parser.parse_args(argv)
    rows = []
    for dataset in args.datasets.split(","):
        X, y, qid = common.load_fold(dataset, 1)[0]
        for C in (float(c) for c in args.Cs.split(",")):
            plain, plain_cpu = fit(X, y, qid, C, stabilised=False)
            stab, stab_cpu = fit(X, y, qid, C, stabilised=True)
            rows.append({
                "dataset": dataset, "C": C,
                "plain_iterations": plain.iterations, "iterations": stab.iterations,
                "plain_working_set": plain.working_set_size,
                "working_set": stab.working_set_size,
                "plain_objective": plain.primal_objective, "objective": stab.primal_objective,
                "relative_difference": (stab.primal_objective - plain.primal_objective)
                / plain.primal_objective,
                "plain_cpu": plain_cpu, "cpu": stab_cpu})
    lines = ["| dataset | C | iterations plain -> stabilised | working set | P(w) plain | "
             "P(w) stabilised | relative difference | CPU s plain / stabilised |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['dataset']} Fold1 | {r['C']:g} | {r['plain_iterations']} -> "
            f"{r['iterations']} | {r['plain_working_set']} -> {r['working_set']} | "
            f"{r['plain_objective']:.10g} | {r['objective']:.10g} | "
            f"{r['relative_difference']:+.1e} | {r['plain_cpu']:.2f} / {r['cpu']:.2f} |")
    command = "python benchmarks/stabilised.py" + (
        f" --datasets {args.datasets}" if args.datasets != ",".join(DATASETS) else "") + (
        f" --Cs {args.Cs}" if args.Cs != "1,100,1000" else "")
    record("stabilised", command, rows, "\n".join(lines))
    return rows


if __name__ == "__main__":
    main()
