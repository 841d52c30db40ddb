"""The kernels of two checkouts measured alternately in one run: benchmarks/oracle_pass.py's
two measurements (the fused separation pass against X@w + argsort on MQ2007-shaped data, 1
and 2 threads, dense and CSR; Algorithm 2's divide and conquer and plain scan on single
queries) and every other per-query entry point of the kernels on the same data (1 thread).

Each round runs one fresh process per checkout (``PYTHONPATH=<root>``, one BLAS thread), the
checkouts alternating, and keeps each figure's minimum over the rounds; the table gives the
ratio after / before (below 1: faster).

    OPENBLAS_NUM_THREADS=1 python benchmarks/kernels_before_after.py --before ROOT \\
        --after ROOT [--rounds 6] [--quick]
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from _common import record

BENCHMARKS = Path(__file__).resolve().parent

PROBE = r"""
import json, sys
import numpy as np, scipy.sparse as sp
sys.path.insert(0, sys.argv[1])
import oracle_pass
from svmmap.kernels import _loss_kernels, _map_kernels, _roc_kernels

quick = sys.argv[2] == "quick"
out = {}
for row in oracle_pass.pass_vs_bound(quick)[0]:
    out[f"map_constraints {row['layout']} {row['threads']} thread(s)"] = row["pass_ms"]
    out[f"X@w + argsort {row['layout']}"] = row["bound_ms"]
for row in oracle_pass.divide_vs_scan(quick)[0]:
    shape = f"{row['relevant']} x {row['non_relevant']}"
    out[f"most_violated_map divide {shape}"] = row["divide_ms"]
    out[f"most_violated_map scan {shape}"] = row["scan_ms"]
collection, w = oracle_pass.mq2007_like(quick)
scores = collection.X @ w
relevant, ptr = collection.relevant, collection.ptr
gains = relevant.astype(float)
csr = _map_kernels.csr_for_kernels(sp.csr_matrix(collection.X))
calls = {
    "ranking_coefficients": lambda: _map_kernels.ranking_coefficients(scores, relevant, ptr),
    "most_violated_roc": lambda: _roc_kernels.most_violated_roc(scores, relevant, ptr),
    "ranking_roc_loss": lambda: _roc_kernels.ranking_roc_loss(scores, relevant, ptr),
    "roc_constraints csr": lambda: _roc_kernels.roc_constraints(csr, w, relevant, ptr),
    "loss_constraints ndcg@10 csr": lambda: _loss_kernels.loss_constraints(
        csr, w, gains, ptr, "ndcg", 10),
    "loss_constraints mrr csr": lambda: _loss_kernels.loss_constraints(
        csr, w, gains, ptr, "mrr"),
    "ranking_losses ndcg@10": lambda: _loss_kernels.ranking_losses(
        scores, gains, ptr, "ndcg", 10),
    "ranking_losses p@10": lambda: _loss_kernels.ranking_losses(scores, gains, ptr, "p@k", 10),
}
for name, call in calls.items():
    out[name] = oracle_pass.best_time(call, 5 if quick else 20) * 1e3
print(json.dumps(out))
"""


def measure(root, quick):
    env = dict(os.environ, PYTHONPATH=str(root), OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", PROBE, str(BENCHMARKS),
                           "quick" if quick else "full"],
                          env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, type=Path, help="checkout measured first")
    parser.add_argument("--after", required=True, type=Path, help="checkout measured second")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--quick", action="store_true", help="tiny sizes (for the tests)")
    parser.add_argument("--note", default="", help="a sentence on the machine's state")
    args = parser.parse_args(argv)
    best = {"before": {}, "after": {}}
    for _ in range(args.rounds):
        for label in ("before", "after"):
            for key, ms in measure(getattr(args, label), args.quick).items():
                best[label][key] = min(best[label].get(key, float("inf")), ms)
    rows = [{"kernel": key, "before_ms": best["before"][key], "after_ms": best["after"][key],
             "ratio": best["after"][key] / best["before"][key]} for key in best["before"]]
    lines = [f"before: {args.before}, after: {args.after}; minimum over {args.rounds} rounds, "
             "the checkouts alternating", ""]
    if args.note:
        lines += [args.note, ""]
    lines += ["| kernel | before (ms) | after (ms) | after / before |", "|---|---|---|---|"]
    lines += [f"| {r['kernel']} | {r['before_ms']:.3f} | {r['after_ms']:.3f} | "
              f"{r['ratio']:.3f} |" for r in rows]
    markdown = "\n".join(lines)
    name = "kernels_before_after_quick" if args.quick else "kernels_before_after"
    command = "OPENBLAS_NUM_THREADS=1 python benchmarks/kernels_before_after.py " + \
        shlex.join(argv if argv is not None else sys.argv[1:])
    record(name, command, {"before": str(args.before), "after": str(args.after),
                           "rounds": args.rounds, "note": args.note, "rows": rows}, markdown)
    return rows


if __name__ == "__main__":
    main()
