"""Issue 15 point 6: the share of the working-set QP in the training loop at large C, against a
reference checkout, in one run.

For each training file (LETOR Fold1 train of MQ2008 and OHSUMED), learner (1-slack, n-slack,
1-slack with the constraint cache) and C, one ``SVMMap(...).fit`` per side in its own
interpreter (``PYTHONPATH``), the sides alternating so that both see the same machine state:
iterations, working-set QPs by the solver that answered them (QPSolution.form: smo,
active-set, cvxopt's primal/dual), QP seconds, oracle seconds, loop seconds (the learner's
own clock: TrainingResult.seconds), QP share = QP / loop seconds, CPU seconds of the fit
(``time.process_time``: the machine is shared) and the final primal objective; then the
ratios this checkout / reference.

``--reference DIR``: the code before the change with its extensions built, e.g.
``git worktree add /tmp/ref <commit> && (cd /tmp/ref && python setup.py build_ext --inplace)``.
Without it only this checkout is measured.

    python benchmarks/qp_share.py --reference /tmp/ref [--Cs 100,1000,10000] [--repeats 1]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _common import ROOT, record, require_data

ALGORITHMS = {"1-slack": {"algorithm": "1-slack"}, "n-slack": {"algorithm": "n-slack"},
              "1-slack+cache": {"algorithm": "1-slack", "cache_size": 5}}

FIT = """
import collections, json, sys, time, warnings
from svmmap import SVMMap, load_svmlight
from svmstruct_api import qp

path, C, params = sys.argv[1], float(sys.argv[2]), json.loads(sys.argv[3])
X, y, qid = load_svmlight(path)[:3]
forms = collections.Counter()
solve = qp.WorkingSet.solve

def counted(self, *args, **kwargs):
    solution = solve(self, *args, **kwargs)
    forms[solution.form] += 1
    return solution

qp.WorkingSet.solve = counted
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    cpu = time.process_time()
    model = SVMMap(C=C, verbose=0, **params).fit(X, y, qid)
    cpu = time.process_time() - cpu
r = model.training_result_
print(json.dumps({"iterations": r.iterations, "forms": dict(forms), "qp": r.qp_seconds,
                  "oracle": r.oracle_seconds, "loop": r.seconds, "cpu": cpu,
                  "primal": r.primal_objective, "status": r.status}))
"""


def fit(code_dir, path, C, params):
    env = dict(os.environ, PYTHONPATH=str(code_dir))
    out = subprocess.run([sys.executable, "-c", FIT, str(path), str(C), json.dumps(params)],
                         env=env, capture_output=True, text=True, check=True, cwd=code_dir)
    return json.loads(out.stdout.strip().splitlines()[-1])


def median_run(runs):
    """The run of median loop seconds (its counts and objective with it)."""
    return sorted(runs, key=lambda r: r["loop"])[len(runs) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", type=Path, help="checkout of the code before")
    parser.add_argument("--datasets", default="MQ2008,OHSUMED")
    parser.add_argument("--Cs", default="100,1000,10000")
    parser.add_argument("--algorithms", default="1-slack,n-slack,1-slack+cache")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--name", default="qp_share")
    args = parser.parse_args()
    sides = [("this", ROOT)] + ([("reference", args.reference.resolve())]
                                if args.reference else [])
    rows = []
    for dataset in args.datasets.split(","):
        path = require_data(dataset, "Fold1", "train.txt")
        for algorithm in args.algorithms.split(","):
            for C in (float(c) for c in args.Cs.split(",")):
                runs = {name: [] for name, _ in sides}
                for _ in range(args.repeats):
                    for name, code in sides:  # alternating
                        runs[name].append(fit(code, path, C, ALGORITHMS[algorithm]))
                for name, _ in sides:
                    run = median_run(runs[name])
                    rows.append({"dataset": dataset, "algorithm": algorithm, "C": C,
                                 "side": name, **run,
                                 "share": run["qp"] / run["loop"] if run["loop"] else 0.0})
                    print(json.dumps(rows[-1]), flush=True)
    command = "python benchmarks/qp_share.py" + "".join(
        f" --{k} {v}" for k, v in (("datasets", args.datasets), ("Cs", args.Cs),
                                   ("algorithms", args.algorithms),
                                   ("repeats", args.repeats))) + \
        (f" --reference {args.reference}" if args.reference else "")
    record(args.name, command, rows, table(rows, [name for name, _ in sides]))


def _forms(forms):
    return ", ".join(f"{k} {v}" for k, v in sorted(forms.items())) or "-"


def table(rows, sides):
    lines = ["| Fold1 train | learner | C | code | iterations | QPs by solver | QP s | "
             "oracle s | loop s | QP share | CPU s | primal | status |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['dataset']} | {r['algorithm']} | {r['C']:g} | {r['side']} | "
            f"{r['iterations']} | {_forms(r['forms'])} | {r['qp']:.3f} | {r['oracle']:.3f} | "
            f"{r['loop']:.3f} | {100 * r['share']:.0f}% | {r['cpu']:.3f} | "
            f"{r['primal']:.6g} | {r['status']} |")
    if "reference" in sides:
        lines += ["", "Ratios this / reference (below 1: faster now):", "",
                  "| Fold1 train | learner | C | QP s | loop s | CPU s | primal difference "
                  "/ (1.01 C eps) |", "|---|---|---|---|---|---|---|"]
        keyed = {(r["dataset"], r["algorithm"], r["C"], r["side"]): r for r in rows}
        for (dataset, algorithm, C, side), new in keyed.items():
            if side != "this" or (dataset, algorithm, C, "reference") not in keyed:
                continue
            old = keyed[(dataset, algorithm, C, "reference")]
            lines.append(
                f"| {dataset} | {algorithm} | {C:g} | {new['qp'] / old['qp']:.2f} | "
                f"{new['loop'] / old['loop']:.2f} | {new['cpu'] / old['cpu']:.2f} | "
                f"{(new['primal'] - old['primal']) / (1.01 * C * 1e-3):+.3f} |")
        shares = [r["share"] for r in rows if r["side"] == "this"]
        lines += ["", f"QP share, this checkout: median {100 * statistics.median(shares):.0f}%,"
                  f" largest {100 * max(shares):.0f}%"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
