"""Training time and peak memory of one SVM-MAP run as the collection grows from 10^3 to 10^6
documents (synthetic, LETOR-shaped: queries of 20-1000 documents, dense features), each size
in a fresh process so that its peak resident memory is its own.

    python benchmarks/scaling.py [--sizes 1000,10000,100000,1000000] [--features 136]
"""

import argparse
import json
import resource
import subprocess
import sys
import time

from _common import record


def one_run(n_docs, n_features):
    """Child process: generate, train (C=1, 1-slack, epsilon 1e-3), print a JSON line."""
    import numpy as np
    from synthetic import letor_like

    from svmmap import SVMMap

    X, y, qid = letor_like(n_docs, n_features=n_features, seed=n_docs)
    start = time.perf_counter()
    model = SVMMap(C=1.0).fit(X, y, qid)
    seconds = time.perf_counter() - start
    result = model.training_result_
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    print(json.dumps({"documents": len(y), "queries": int(len(np.unique(qid))),
                      "features": n_features, "seconds": seconds,
                      "iterations": result.iterations, "qp_share": result.qp_seconds / seconds,
                      "x_bytes": X.nbytes, "peak_bytes": peak}))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--features", type=int, default=136)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return one_run(args.child, args.features)
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        out = subprocess.run([sys.executable, __file__, "--child", str(size), "--features",
                              str(args.features)], capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(rows[-1], flush=True)
    lines = ["| documents | queries | features | training s | iterations | QP share | X (MB) | "
             "peak RSS (MB) | peak / X |", "|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['documents']} | {r['queries']} | {r['features']} | {r['seconds']:.2f} | "
              f"{r['iterations']} | {r['qp_share']:.0%} | {r['x_bytes'] / 2**20:.0f} | "
              f"{r['peak_bytes'] / 2**20:.0f} | {r['peak_bytes'] / r['x_bytes']:.2f} |"
              for r in rows]
    record("scaling", "python benchmarks/scaling.py " + " ".join(argv or sys.argv[1:]),
           rows, "## One SVM-MAP training run (C=1, 1-slack) as the data grows\n\n"
           + "\n".join(lines))
    return rows


if __name__ == "__main__":
    main()
