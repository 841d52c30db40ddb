"""One SVM-MAP fit on the binned features of Section 4.2, implicit against explicit, in one run.

    python benchmarks/binned_features.py [--shapes trec9,trec9/10,classic] [--rounds 2]
        [--C 1] [--limit-gb 8] [--name binned_features]

Each measurement runs in a child process of its own (``--child``) under an address-space
limit of ``--limit-gb`` GB (prlimit: the explicit matrix of a TREC-9 trial does not fit in
memory, which is what the implicit one is for), alternating the two ways round by round:

- implicit: ``SVMMap(C, feature_map=BinnedFeatureMap(50)).fit(X, y, qid)``: the bins, one
  small integer per (document, base function), from the map to the kernels
  (svmmap.kernels._kernel_inputs.BinnedArrays);
- explicit: ``BinnedFeatureMap(50).fit_transform(X)`` (the scipy CSR indicator matrix,
  about 25 ones per document and base) then ``SVMMap(C).fit`` on it, as before the bins.

Per run: the seconds of the whole fit (binning included; the data are made before), the
peak RSS growth over the fit (VmHWM, reset before it, minus VmRSS before it: what the fit
needed beyond the generated scores) and the fit's iterations and MAP on its training data;
an explicit run that dies of the limit is recorded as such.  Medians over rounds; ratios
explicit / implicit.

The passes (``--passes``, one child per shape): the seconds of one fused SVM-MAP constraint
pass (scores X w, Algorithm 2, the coefficients; ``_map_kernels.map_pass``, one thread) and
of one X^T u (``combine_rows``), medians of ``--repeats`` alternating calls, with X the bins,
the raw base-function scores (a dense (m, F) float64 array: what the scores cost) and the
explicit indicator CSR (where it fits under the limit).

Generated data, shaped like the paper's trials: ``trec9``, one TREC-9 trial (10 training
queries x 17,700 documents, 92 base functions: the runs' scores); ``trec9/10`` the same with
1,770 documents a query; ``classic`` a classic-collection trial (10 queries x 1,000
documents, 23 base functions: benchmarks/results/classic_*).  About 2% of a query's
documents are relevant; every base function scores relevance plus noise of its own scale,
some with ties (rounded scores) or a mass at 0 (documents a run did not retrieve).
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, record  # noqa: E402

SHAPES = {"trec9": (10, 17_700, 92), "trec9/10": (10, 1_770, 92), "classic": (10, 1_000, 23)}
N_THRESHOLDS = 50


def generate(n_queries, per_query, n_bases, seed=0):
    """(X, y, qid): base-function scores of relevant (about 2%) and other documents."""
    rng = np.random.default_rng(seed)
    m = n_queries * per_query
    qid = np.repeat(np.arange(n_queries), per_query)
    y = (rng.random(m) < 0.02).astype(np.float64)
    strength = rng.uniform(0.1, 0.6, n_bases)
    X = y[:, None] * strength[None, :] + rng.normal(size=(m, n_bases))
    X[:, ::4] = np.round(X[:, ::4], 1)  # ties
    X[:, 1::5] *= rng.random((m, len(range(1, n_bases, 5)))) < 0.5  # not retrieved: 0
    return X, y, qid


def _vm(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def child(way, shape, C):
    """One fit, in this process: prints its JSON record."""
    import warnings

    from svmmap import SVMMap
    from svmmap.features import BinnedFeatureMap
    from svmmap.metrics import mean_average_precision

    warnings.simplefilter("ignore")
    X, y, qid = generate(*SHAPES[shape])
    before = _vm("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
    start = time.perf_counter()
    if way == "implicit":
        model = SVMMap(C=C, feature_map=BinnedFeatureMap(N_THRESHOLDS)).fit(X, y, qid)
        scores = model.decision_function(X)
    else:
        explicit = BinnedFeatureMap(N_THRESHOLDS).fit_transform(X)
        model = SVMMap(C=C).fit(explicit, y, qid)
        scores = model.decision_function(explicit)
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "peak_growth": _vm("VmHWM") - before,
                      "iterations": model.training_result_.iterations,
                      "status": model.training_result_.status,
                      "train_map": float(mean_average_precision(scores, y, qid))}))


def child_passes(shape, repeats):
    """Per-pass seconds of each layout of X, in this process: prints its JSON record."""
    from svmmap.features import BinnedFeatureMap
    from svmmap.kernels._kernel_inputs import checked_constraint_inputs, csr_for_kernels
    from svmmap.kernels._map_kernels import combine_rows, harmonic_numbers, map_pass

    X, y, qid = generate(*SHAPES[shape])
    ptr = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True]).astype(np.intp)
    relevant = (y > 0).astype(np.uint8)
    fitted = BinnedFeatureMap(N_THRESHOLDS).fit(X)
    layouts = {"bins": fitted.transform_bins(X), "scores": X}
    try:
        layouts["explicit"] = csr_for_kernels(fitted.transform(X))
    except MemoryError:
        pass
    rng = np.random.default_rng(1)
    w = {name: rng.normal(size=layout.shape[1]) for name, layout in layouts.items()}
    inputs = {name: checked_constraint_inputs(layout, w[name], relevant, ptr)
              for name, layout in layouts.items()}
    harmonic = harmonic_numbers(ptr)
    u = rng.normal(size=len(y))
    ones = np.ones(len(ptr) - 1)
    seconds = {name: {"pass": [], "transpose": []} for name in layouts}
    for _ in range(repeats):
        for name in layouts:  # alternately
            start = time.perf_counter()
            map_pass(inputs[name], harmonic)
            seconds[name]["pass"].append(time.perf_counter() - start)
            start = time.perf_counter()
            combine_rows(layouts[name], u, ptr, ones)
            seconds[name]["transpose"].append(time.perf_counter() - start)
    print(json.dumps({name: {key: float(np.median(v)) for key, v in times.items()}
                      for name, times in seconds.items()}))


def _run_child(arguments, limit_gb):
    """The JSON record of a child (this script with ``arguments``) under the limit, or
    {"failed": why}."""
    command = ["prlimit", f"--as={int(limit_gb * 2**30)}", "--", sys.executable,
               str(Path(__file__).resolve()), *arguments]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(command, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        died = "MemoryError" in proc.stderr or "memory" in tail.lower() or proc.returncode < 0
        return {"failed": f"out of memory under {limit_gb:g} GB" if died else tail}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(way, shape, C, limit_gb):
    return _run_child(["--child", way, "--shape", shape, "--C", str(C)], limit_gb)


def _median(runs, key):
    values = [r[key] for r in runs if "failed" not in r]
    return float(np.median(values)) if values else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default="classic,trec9/10,trec9")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--limit-gb", type=float, default=8.0)
    parser.add_argument("--name", default="binned_features")
    parser.add_argument("--passes", action="store_true",
                        help="time single constraint passes and X^T u, not whole fits")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--child", choices=["implicit", "explicit", "passes"])
    parser.add_argument("--shape", choices=sorted(SHAPES))
    args = parser.parse_args()
    if args.child == "passes":
        return child_passes(args.shape, args.repeats)
    if args.child:
        return child(args.child, args.shape, args.C)
    if args.passes:
        return main_passes(args)
    rows = []
    for shape in args.shapes.split(","):
        runs = {"implicit": [], "explicit": []}
        for _ in range(args.rounds):
            for way in ("implicit", "explicit"):  # alternately, in this invocation
                result = measure(way, shape, args.C, args.limit_gb)
                runs[way].append(result)
                print(shape, way, result, flush=True)
        n_queries, per_query, n_bases = SHAPES[shape]
        row = {"shape": shape, "queries": n_queries, "documents": n_queries * per_query,
               "bases": n_bases, "runs": runs}
        for way in runs:
            row[way] = {key: _median(runs[way], key)
                        for key in ("seconds", "peak_growth", "iterations", "train_map")}
        rows.append(row)
    lines = ["| shape | queries x documents | bases | way | seconds | peak RSS growth (MB) | "
             "iterations | training MAP |", "|---|---|---|---|---|---|---|---|"]
    ratios = ["| shape | seconds explicit / implicit | memory explicit / implicit |",
              "|---|---|---|"]
    for row in rows:
        for way in ("implicit", "explicit"):
            m = row[way]
            failed = [r["failed"] for r in row["runs"][way] if "failed" in r]
            if m["seconds"] is None:
                cells = [failed[0], "", "", ""]
            else:
                cells = [f"{m['seconds']:.2f}", f"{m['peak_growth'] / 1e6:.0f}",
                         f"{m['iterations']:.0f}", f"{m['train_map']:.4f}"]
            lines.append(f"| {row['shape']} | {row['queries']} x "
                         f"{row['documents'] // row['queries']} | {row['bases']} | {way} | "
                         + " | ".join(cells) + " |")
        a, b = row["implicit"], row["explicit"]
        if a["seconds"] and b["seconds"]:
            ratios.append(f"| {row['shape']} | {b['seconds'] / a['seconds']:.2f} | "
                          f"{b['peak_growth'] / a['peak_growth']:.1f} |")
        else:
            ratios.append(f"| {row['shape']} | explicit failed | explicit failed |")
    command = "python " + " ".join(shlex.quote(a) for a in
                                   ["benchmarks/binned_features.py", *sys.argv[1:]])
    markdown = (f"## One SVM-MAP fit on binned features ({N_THRESHOLDS} thresholds per base "
                f"function), C = {args.C:g}, 1-slack, epsilon 0.001: implicit bins against "
                f"the explicit CSR indicator matrix\n\nMedians of {args.rounds} rounds, the two "
                f"ways alternating, each run a child process under a {args.limit_gb:g} GB "
                "address-space limit; seconds: the whole fit and scoring of the training "
                "data (binning included); peak RSS growth: VmHWM over VmRSS before the fit "
                "(the generated scores not counted).\n\n" + "\n".join(lines) + "\n\n"
                + "\n".join(ratios))
    record(args.name, command, rows, markdown)


def main_passes(args):
    rows, lines = [], ["| shape | queries x documents | bases | X | pass (ms) | X^T u (ms) | "
                       "pass / scores' |", "|---|---|---|---|---|---|---|"]
    for shape in args.shapes.split(","):
        result = _run_child(["--child", "passes", "--shape", shape, "--repeats",
                             str(args.repeats)], args.limit_gb)
        print(shape, result, flush=True)
        n_queries, per_query, n_bases = SHAPES[shape]
        rows.append({"shape": shape, "queries": n_queries, "documents": n_queries * per_query,
                     "bases": n_bases, "seconds": result})
        if "failed" in result:
            lines.append(f"| {shape} | {n_queries} x {per_query} | {n_bases} | "
                         f"{result['failed']} | | | |")
            continue
        for name in ("bins", "scores", "explicit"):
            if name not in result:
                lines.append(f"| {shape} | {n_queries} x {per_query} | {n_bases} | {name} | "
                             f"does not fit under {args.limit_gb:g} GB | | |")
                continue
            t = result[name]
            lines.append(f"| {shape} | {n_queries} x {per_query} | {n_bases} | {name} | "
                         f"{1e3 * t['pass']:.1f} | {1e3 * t['transpose']:.1f} | "
                         f"{t['pass'] / result['scores']['pass']:.2f} |")
    command = "python " + " ".join(shlex.quote(a) for a in
                                   ["benchmarks/binned_features.py", *sys.argv[1:]])
    markdown = (f"## One fused SVM-MAP constraint pass and one X^T u ({N_THRESHOLDS} "
                "thresholds per base function, one thread)\n\nMedians of "
                f"{args.repeats} calls, the layouts alternating, in one child process under "
                f"a {args.limit_gb:g} GB address-space limit.  X: bins = the implicit binned "
                "features (uint8, one per document and base function); scores = the raw "
                "base-function scores as a dense float64 (m, F) array (what the scores "
                "cost); explicit = the CSR indicator matrix.\n\n" + "\n".join(lines))
    record(args.name, command, rows, markdown)


if __name__ == "__main__":
    main()
