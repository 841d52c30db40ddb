"""Training time of the cutting-plane solver on the synthetic 10^5-feature sparse set (or a
LETOR Fold1 training set), this checkout against a reference checkout, alternating, each fit
in its own child process.

    python benchmarks/solver_speed.py --reference CHECKOUT               # C = 100, full size
    python benchmarks/solver_speed.py --reference CHECKOUT --scale 0.2 --Cs 100,1000

Per C and round, three children fit ``SVMMap(C)`` at its defaults (1-slack, the certified
relative gap 1e-6) on ``synthetic.sparse_letor`` (50,000 documents x 100,000 features, 20
nonzeros a document; ``--scale`` shrinks documents and features; ``--dataset MQ2008`` or
``OHSUMED``: that Fold1 training set instead): this checkout ("after"),
the reference first on PYTHONPATH ("before"), and the reference again with
OPENBLAS_NUM_THREADS=1 ("before, 1 BLAS thread": what the reference costs without BLAS's
thread pool spinning beside the single-threaded oracle).  Recorded: the fit's own seconds
(``training_result_.seconds``: no reading, no start-up) and CPU seconds (steadier on a
shared machine), its oracle and QP seconds,
iterations, status and objective, medians over ``--repeats`` rounds and the ratio of each
variant to "after" (median of the per-round ratios; the machine may be shared, so compare
ratios and iterations).  The objectives must agree within the certified gap (1e-6 relative).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _common import record

HERE = Path(__file__).resolve().parent
CHILD = """
import json, sys, time, warnings
sys.path.insert(0, {benchmarks!r})
import _common, synthetic
from svmmap import SVMMap
SHAPES = {{"ltr_like": "ltr_challenge_like", "small_dense": "small_dense",
          "sparse_graded": "sparse_graded"}}
if {dataset!r} == "sparse":
    X, y, qid = synthetic.sparse_letor(n_docs=int(50_000 * {scale}),
                                       n_features=int(100_000 * {scale}))
elif ":" in {dataset!r}:  # issue 33's shapes, shape[@features[/queries]]:seed
    shape, seed = {dataset!r}.split(":")
    shape, _, size = shape.partition("@")
    features, _, queries = size.partition("/")
    size = {{}}
    if features:
        size["n_features"] = int(features)
    if queries:
        size["n_queries"] = int(queries)
    X, y, qid = getattr(synthetic, SHAPES[shape])(seed=int(seed), **size)
else:
    X, y, qid = _common.load_fold({dataset!r}, 1)[0]
if {cut_groups} is not None:  # the 1-slack learner's cut groups, at any width of w
    import svmstruct_api.cut_groups
    from svmmap.core import training
    svmstruct_api.cut_groups._MAX_FEATURES = X.shape[1]
    made = training.learner
    def with_groups(*args, **kwargs):
        chosen = made(*args, **kwargs)
        chosen.cut_groups = {cut_groups}
        return chosen
    training.learner = with_groups
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    cpu = time.process_time()
    r = SVMMap(C={C}, max_time={max_time}).fit(X, y, qid).training_result_
    cpu = time.process_time() - cpu
print(json.dumps({{"seconds": r.seconds, "cpu": cpu, "oracle": r.oracle_seconds,
                  "qp": r.qp_seconds, "iterations": r.iterations, "status": r.status,
                  "objective": r.primal_objective}}))
"""


def child(dataset, C, scale, max_time, pythonpath, env=None, cut_groups=None):
    code = CHILD.format(benchmarks=str(HERE), dataset=dataset, scale=scale, C=C,
                        max_time=max_time, cut_groups=cut_groups)
    environment = dict(os.environ, PYTHONPATH=pythonpath, **(env or {}))
    # run in the checkout measured: ``python -c`` puts its working directory before
    # PYTHONPATH, so from another checkout that one would be imported instead
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=environment, check=False,
                          cwd=pythonpath.split(os.pathsep)[0])
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip()[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", required=True,
                        help="a checkout with its extensions built (the 'before')")
    parser.add_argument("--dataset", default="sparse",
                        help="sparse (synthetic), MQ2008 / OHSUMED (Fold1 training set), or "
                             "one of issue 33's shapes with its seed: ltr_like:0, "
                             "small_dense:1, sparse_graded:0, and small_dense or "
                             "sparse_graded with features and queries: "
                             "small_dense@1000/40:1")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--Cs", default="100")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-time", type=float, default=600.0)
    parser.add_argument("--name", default="solver_speed")
    parser.add_argument("--cut-groups", type=int, default=None,
                        help="the 1-slack learner's cut_groups in both checkouts, whatever "
                             "the number of features (default: each checkout's own rule)")
    args = parser.parse_args(argv)
    this = str(HERE.parent)
    reference = os.pathsep.join([args.reference, this])
    variants = {"after": (this, None), "before": (reference, None),
                "before, 1 BLAS thread": (reference, {"OPENBLAS_NUM_THREADS": "1"})}
    rows = []
    for C in (float(c) for c in args.Cs.split(",")):
        runs = {name: [] for name in variants}
        for _ in range(args.repeats):
            for name, (path, env) in variants.items():
                runs[name].append(child(args.dataset, C, args.scale, args.max_time, path,
                                        env, args.cut_groups))
        for name, results in runs.items():
            ratios = [r["seconds"] / a["seconds"] for r, a in zip(results, runs["after"])]
            row = {"C": C, "variant": name, "ratio_to_after": statistics.median(ratios),
                   "ratios": ratios, "runs": results}
            for key in ("seconds", "cpu", "oracle", "qp"):
                row[key] = statistics.median(r[key] for r in results)
            last = results[-1]
            row.update(iterations=last["iterations"], status=last["status"],
                       objective=last["objective"])
            rows.append(row)
            print(row["C"], name, f"{row['seconds']:.2f} s", f"ratio {row['ratio_to_after']:.2f}",
                  row["iterations"], row["status"], flush=True)
    lines = ["| C | variant | fit s | fit CPU s | oracle s | QP s | ratio to after | "
             "iterations, status | P(w) |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['C']:g} | {r['variant']} | {r['seconds']:.3f} | {r['cpu']:.3f} | "
                     f"{r['oracle']:.3f} | {r['qp']:.3f} | {r['ratio_to_after']:.2f} | "
                     f"{r['iterations']}, {r['status']} | {r['objective']:.10g} |")
    command = (f"python benchmarks/solver_speed.py --reference CHECKOUT --dataset {args.dataset} "
               f"--scale {args.scale:g} --Cs {args.Cs} --repeats {args.repeats}"
               + (f" --cut-groups {args.cut_groups}" if args.cut_groups else ""))
    record(args.name, command, rows, "\n".join(lines))
    return rows


if __name__ == "__main__":
    main()
