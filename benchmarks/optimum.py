"""The optimum is kept: SVMMap's primal objective and iterations at its defaults on the LETOR
Fold1 training sets, C = 1, 100, 1000, for the checkout first on the path, kept per label so
that two revisions sit side by side with their relative difference.

    python benchmarks/optimum.py --label after
    PYTHONPATH=<checkout of an earlier revision, extensions built> \\
        python benchmarks/optimum.py --label before

Both stop on a certified relative duality gap of 1e-6 (the default), so the objectives of two
correct revisions agree to about 1e-6 relative; iterations are deterministic (no timing).
"""

import argparse
import json
import warnings

import _common as common
from _common import RESULTS, record

from svmmap import SVMMap

DATASETS = ("OHSUMED", "MQ2008")
CS = (1.0, 100.0, 1000.0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="after")
    args = parser.parse_args(argv)
    rows = []
    for dataset in DATASETS:
        X, y, qid = common.load_fold(dataset, 1)[0]
        for C in CS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # queries without a relevant document
                result = SVMMap(C=C).fit(X, y, qid).training_result_
            rows.append({"label": args.label, "dataset": dataset, "C": C,
                         "primal_objective": result.primal_objective,
                         "iterations": result.iterations, "status": result.status})
    path = RESULTS / "optimum.json"
    kept = []
    if path.exists():
        kept = [r for r in json.loads(path.read_text())["rows"] if r["label"] != args.label]
    rows = kept + rows
    labels = list(dict.fromkeys(r["label"] for r in rows))
    by_key = {(r["label"], r["dataset"], r["C"]): r for r in rows}
    first = labels[0]
    header = " | ".join(f"{label}: P(w), iterations" for label in labels)
    lines = [f"| dataset | C | {header} | relative difference to {first} |",
             "|---|---|" + "---|" * len(labels) + "---|"]
    for dataset in DATASETS:
        for C in CS:
            cells, base = [], by_key.get((first, dataset, C))
            for label in labels:
                r = by_key.get((label, dataset, C))
                cells.append("-" if r is None else
                             f"{r['primal_objective']:.10g}, {r['iterations']}")
            diffs = [(by_key[(label, dataset, C)]["primal_objective"]
                      - base["primal_objective"]) / base["primal_objective"]
                     for label in labels[1:] if base and (label, dataset, C) in by_key]
            lines.append(f"| {dataset} Fold1 | {C:g} | " + " | ".join(cells) + " | "
                         + (", ".join(f"{d:+.1e}" for d in diffs) or "-") + " |")
    record("optimum", f"python benchmarks/optimum.py --label {args.label}", rows,
           "\n".join(lines))
    return rows


if __name__ == "__main__":
    main()
