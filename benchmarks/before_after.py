"""Before/after in one run: two checkouts of svmmap measured alternately on the same machine.

For each checkout (``--before`` and ``--after``: repository roots with built extensions; each
run with ``PYTHONPATH=<root>`` in a fresh process, one BLAS thread):

1. the fused separation pass of the training loop (``MapPlugin.most_violated_constraints``,
   what every cutting-plane iteration calls) on MQ2007-shaped data (70,000 documents, 1,700
   queries, 46 features, dense and CSR, 1 thread) against ``X @ w`` + one ``np.argsort`` in
   the same process: the ratio;
2. end-to-end ``svmmap_learn -c 100`` on OHSUMED Fold1 train.txt (process wall time, reading
   and writing included);
3. ``python -m svmmap.experiments.letor`` on OHSUMED and MQ2008 with the C grid given by
   ``--grid`` (default: 78e14b8's default grid, so both checkouts run the same protocol):
   the 5-fold test MAP of every method, which must agree to 4 decimals.

Measurements 1 and 2 are repeated ``--rounds`` times, the checkouts alternating, and the
minimum is kept.

    python benchmarks/before_after.py --before ../base78 --after . [--rounds 3] [--quick]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import DATA, record, require_data

PROBE = r"""
import json, sys, time
import numpy as np, scipy.sparse as sp
from svmmap.core.collection import QueryCollection
from svmmap.core.plugins import MapPlugin

n_queries, repeats = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(2007)
sizes = rng.integers(20, 62, n_queries)
qid = np.repeat(np.arange(n_queries), sizes)
X = rng.random((len(qid), 46))
y = (rng.random(len(qid)) < 0.25).astype(float)
w = rng.normal(size=46)
out = {}
for layout in ("dense", "csr"):
    data = X if layout == "dense" else sp.csr_matrix(X)
    collection, _, _ = QueryCollection.from_arrays(data, y, qid).trainable()
    plugin = MapPlugin(collection)
    best = {"pass": np.inf, "bound": np.inf}
    for _ in range(repeats):
        start = time.perf_counter(); np.argsort(collection.X @ w)
        best["bound"] = min(best["bound"], time.perf_counter() - start)
        start = time.perf_counter(); plugin.most_violated_constraints(w)
        best["pass"] = min(best["pass"], time.perf_counter() - start)
    out[layout] = best
print(json.dumps(out))
"""

#: svmmap_learn of the revision measured (svmmap.cli before issue 24's svmmap.commands)
LEARN = ("import sys\ntry:\n    from svmmap.commands.learn import learn_main\n"
         "except ImportError:\n    from svmmap.cli import learn_main\nsys.exit(learn_main())")
#: the C grid of 78e14b8's experiments (svmmap.experiments.registry.C_GRID there)
BASE_GRID = "0.1,1,10,100,1000"


def run(root, args, env_extra=None):
    env = dict(os.environ, PYTHONPATH=str(root), OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1", **(env_extra or {}))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True,
                          text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{root}: {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return done.stdout, seconds


def letor_maps(root, dataset, grid, folds):
    with tempfile.TemporaryDirectory() as out:
        command = ["-m", "svmmap.experiments.letor", "--data", str(DATA / dataset),
                   "--out", out, "-q", "--grid", grid]
        if folds:
            command += ["--folds", folds]
        _, seconds = run(root, command)
        results = json.loads((Path(out) / "letor.json").read_text())
    maps = {m["label"]: [f["MAP"] for f in m["folds"].values()]
            for m in results["methods"].values()}
    return {label: sum(v) / len(v) for label, v in maps.items()}, seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, type=Path)
    parser.add_argument("--after", required=True, type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--grid", default=BASE_GRID)
    parser.add_argument("--only-oracle", action="store_true",
                        help="measurement 1 only (recorded as before_after_oracle)")
    parser.add_argument("--quick", action="store_true",
                        help="small oracle data, one fold of LETOR (for a smoke run)")
    args = parser.parse_args(argv)
    roots = {"before": args.before.resolve(), "after": args.after.resolve()}
    train = require_data("OHSUMED", "Fold1", "train.txt")
    n_queries, repeats = (170, 5) if args.quick else (1700, 20)
    oracle = {name: {} for name in roots}
    learn = {name: float("inf") for name in roots}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            order = list(roots) if round_ % 2 == 0 else list(roots)[::-1]
            for name in order:
                out, _ = run(roots[name], ["-c", PROBE, str(n_queries), str(repeats)])
                for layout, best in json.loads(out).items():
                    kept = oracle[name].get(layout, {"pass": float("inf"),
                                                     "bound": float("inf")})
                    oracle[name][layout] = {k: min(kept[k], best[k]) for k in best}
                if args.only_oracle:
                    continue
                _, seconds = run(roots[name], ["-c", LEARN, "-c", "100", "-v", "0",
                                               str(train), str(Path(tmp) / f"{name}.model")])
                learn[name] = min(learn[name], seconds)
    maps, letor_seconds = {}, {}
    datasets = () if args.only_oracle else ("OHSUMED", "MQ2008")
    for dataset in datasets:
        for name in roots:
            maps[(dataset, name)], letor_seconds[(dataset, name)] = letor_maps(
                roots[name], dataset, args.grid, "1" if args.quick else None)

    lines = ["### Fused separation pass (MapPlugin.most_violated_constraints, 1 thread) vs "
             "X @ w + argsort", "", "| checkout | X | pass (ms) | X@w + argsort (ms) | ratio |",
             "|---|---|---|---|---|"]
    rows = {"oracle": oracle, "learn_seconds": learn, "letor": {}}
    for name in roots:
        for layout, best in oracle[name].items():
            lines.append(f"| {name} | {layout} | {best['pass'] * 1e3:.2f} | "
                         f"{best['bound'] * 1e3:.2f} | {best['pass'] / best['bound']:.2f} |")
    if not args.only_oracle:
        lines += ["", "### `svmmap_learn -c 100` on OHSUMED Fold1 train.txt (process wall "
                  f"time, best of {args.rounds})", "", "| checkout | seconds |", "|---|---|"]
        lines += [f"| {name} | {learn[name]:.2f} |" for name in roots]
    for dataset in datasets:
        lines += ["", f"### {dataset}: test MAP, mean over folds (LETOR protocol, C grid "
                  f"{args.grid})", "", "| method | before | after | equal to 4 decimals |",
                  "|---|---|---|---|"]
        before, after = maps[(dataset, "before")], maps[(dataset, "after")]
        for label in before:
            same = round(before[label], 4) == round(after.get(label, float("nan")), 4)
            lines.append(f"| {label} | {before[label]:.4f} | {after.get(label, float('nan')):.4f}"
                         f" | {'yes' if same else 'NO'} |")
        lines.append(f"\nwall time: before {letor_seconds[(dataset, 'before')]:.0f} s, after "
                     f"{letor_seconds[(dataset, 'after')]:.0f} s")
        rows["letor"][dataset] = {"before": before, "after": after}
    command = "python benchmarks/before_after.py " + " ".join(argv or sys.argv[1:])
    name = "before_after" + ("_oracle" if args.only_oracle else "") + \
        ("_quick" if args.quick else "")
    record(name, command, rows,
           f"before: {roots['before']}, after: {roots['after']}\n\n" + "\n".join(lines))


if __name__ == "__main__":
    main()
