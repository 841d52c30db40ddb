"""Which stopping defaults give the optimum's model: for every LETOR fold (OHSUMED and MQ2008,
Folds 1-5) and C of the grid, does the model depend on how the data is stored or on the
threads, and what does a tighter default cost?

For each candidate default (epsilon, rel_gap; either may be off, and training stops when the
first rule that is on holds) and each (dataset, fold, C) the script trains
SVMMap (1-slack, MAP loss, the package's other defaults) four ways -- CSR and dense input,
1 and 2 oracle threads -- and records each fit's validation MAP (LETOR convention), primal
objective and CPU seconds.  Against a tight reference fit (epsilon 1e-6, CSR, 1 thread; computed
once and cached in results/defaults.json, reused by later runs unless --fresh-reference) it
records the primal's excess (P - P_ref) / P_ref and |MAP - MAP_ref|.  It also runs the one
command's path (SVMMapCV on the fold's vali file, warm-started from small to large C, CSR) and
checks that it selects the same C as the separate cold CSR fits do.

"Same validation MAP to 3 decimals" is taken as |MAP_a - MAP_b| < 0.0005 (half a unit of the
third decimal: two values that close round to the same 3 decimals unless they straddle a
rounding boundary, which no criterion on the difference can exclude).

CPU seconds are process time (both threads counted for the 2-thread fits), the figure that
stays meaningful on a shared machine; the cost ratio of a candidate is its total CPU over all
fits divided by that of today's default (the first candidate).  Training only: reading the
files is the same for every candidate and is not counted.

    python benchmarks/defaults.py [--candidates 1e-3:off,off:1e-6,...] [--datasets ...]
        [--folds 1,2,3,4,5] [--fresh-reference]
"""

import argparse
import json
import time
import warnings

import numpy as np
from _common import RESULTS, load_fold, record

from svmmap import SVMMap
from svmmap.core.options import DEFAULT_EPSILON, DEFAULT_REL_GAP, DEFAULT_SELECT_TOL
from svmmap.model_selection import SVMMapCV, choose

CS = (0.1, 1, 10, 100, 1000)
#: the fits of each candidate: (name, dense input?, n_threads)
VARIANTS = (("csr/1", False, 1), ("dense/1", True, 1), ("csr/2", False, 2),
            ("dense/2", True, 2))
REFERENCE_EPSILON = 1e-6
#: |MAP_a - MAP_b| below this counts as the same MAP to 3 decimals (module docstring)
SAME_TO_3_DECIMALS = 5e-4


def parse_candidate(text):
    """"1e-3:off" -> (0.001, None); "off:1e-6" -> (None, 1e-06) (epsilon:rel_gap)."""
    epsilon, _, rel_gap = text.partition(":")
    return tuple(None if value in ("", "off") else float(value) for value in (epsilon, rel_gap))


def _shown(value):
    return "off" if value is None else f"{value:g}"


def name(candidate):
    epsilon, rel_gap = candidate
    return f"-e {_shown(epsilon)} --rel-gap {_shown(rel_gap)}"


def fit(X, y, qid, vali, C, epsilon, rel_gap, n_threads=1):
    """(vali MAP, primal, relative gap, CPU seconds, iterations) of one cold fit."""
    start = time.process_time()
    model = SVMMap(C=C, epsilon=epsilon, rel_gap=rel_gap, n_threads=n_threads).fit(X, y, qid)
    cpu = time.process_time() - start
    result = model.training_result_
    return {"vali_map": model.score(*vali[:2], qid=vali[2]), "primal": result.primal_objective,
            "relative_gap": result.relative_gap, "cpu": cpu, "iterations": result.iterations,
            "status": result.status}


def path_choice(X, y, qid, vali, epsilon, rel_gap):
    """(C the one command's warm path selects, CPU seconds, vali MAP per C)."""
    start = time.process_time()
    model = SVMMapCV(Cs=CS, epsilon=epsilon, rel_gap=rel_gap).fit(X, y, qid, eval_set=vali)
    return model.C_, time.process_time() - start, [row["vali"] for row in model.path_]


def load_reference(fresh):
    """The cached reference fits of an earlier run: {"dataset/fold/C": fit dict}."""
    path = RESULTS / "defaults.json"
    if fresh or not path.exists():
        return {}
    document = json.loads(path.read_text())
    return document.get("reference", {}) if document.get("reference_epsilon") == \
        REFERENCE_EPSILON else {}


def run_fold(dataset, fold, candidates, reference):
    (X, y, qid), vali, _ = load_fold(dataset, fold)
    X_dense = X.toarray()
    cells = []
    for C in CS:
        key = f"{dataset}/{fold}/{C:g}"
        if key not in reference:
            reference[key] = fit(X, y, qid, vali, C, REFERENCE_EPSILON, None)
        ref = reference[key]
        for candidate in candidates:
            fits = {variant: fit(X_dense if dense else X, y, qid, vali, C, *candidate,
                                 n_threads=threads)
                    for variant, dense, threads in VARIANTS}
            cells.append({"dataset": dataset, "fold": fold, "C": C,
                          "candidate": name(candidate), "fits": fits})
        print(f"{key}: reference P {ref['primal']:.6g} MAP {ref['vali_map']:.4f} "
              f"({ref['cpu']:.2f} s)", flush=True)
    paths = []
    for candidate in candidates:
        chosen, cpu, vali_maps = path_choice(X, y, qid, vali, *candidate)
        separate = [c for c in cells if c["candidate"] == name(candidate)]
        maps = [c["fits"]["csr/1"]["vali_map"] for c in separate]
        # the rule SVMMapCV applies (values within DEFAULT_SELECT_TOL of the best are ties,
        # won by the smallest C), and the plain argmax
        chosen_separate = CS[choose(maps, DEFAULT_SELECT_TOL)]
        paths.append({"dataset": dataset, "fold": fold, "candidate": name(candidate),
                      "chosen_path": chosen, "chosen_separate": chosen_separate,
                      "chosen_path_argmax": CS[choose(vali_maps)],
                      "chosen_separate_argmax": CS[choose(maps)],
                      "path_cpu": cpu, "path_vali_map": vali_maps,
                      "separate_vali_map": maps})
    ref_maps = [reference[f"{dataset}/{fold}/{C:g}"]["vali_map"] for C in CS]
    for p in paths:
        p["chosen_reference"] = CS[choose(ref_maps, DEFAULT_SELECT_TOL)]
    return cells, paths


def summarise(candidates, cells, paths, reference):
    """One row per candidate: the largest differences, the cells that disagree, the costs."""
    rows = []
    for candidate in candidates:
        mine = [c for c in cells if c["candidate"] == name(candidate)]
        storage, threads, to_ref, excess, disagree = [], [], [], [], 0
        cpu = 0.0
        for cell in mine:
            f = cell["fits"]
            ref = reference[f"{cell['dataset']}/{cell['fold']}/{cell['C']:g}"]
            maps = [f[v]["vali_map"] for v, _, _ in VARIANTS]
            storage += [abs(f["csr/1"]["vali_map"] - f["dense/1"]["vali_map"]),
                        abs(f["csr/2"]["vali_map"] - f["dense/2"]["vali_map"])]
            threads += [abs(f["csr/1"]["vali_map"] - f["csr/2"]["vali_map"]),
                        abs(f["dense/1"]["vali_map"] - f["dense/2"]["vali_map"])]
            disagree += max(maps) - min(maps) >= SAME_TO_3_DECIMALS
            to_ref += [abs(m - ref["vali_map"]) for m in maps]
            excess += [(f[v]["primal"] - ref["primal"]) / ref["primal"] for v, _, _ in VARIANTS]
            cpu += sum(f[v]["cpu"] for v, _, _ in VARIANTS)
        chosen = [p for p in paths if p["candidate"] == name(candidate)]
        rows.append({
            "candidate": name(candidate), "epsilon": candidate[0], "rel_gap": candidate[1],
            "cells": len(mine), "cells_disagreeing": int(disagree),
            "max_map_diff_storage": max(storage), "max_map_diff_threads": max(threads),
            "max_map_diff_reference": max(to_ref), "max_primal_excess": max(excess),
            "cpu": cpu,
            "path_same_C": sum(p["chosen_path"] == p["chosen_separate"] for p in chosen),
            "path_same_C_argmax": sum(p["chosen_path_argmax"] == p["chosen_separate_argmax"]
                                      for p in chosen),
            "path_reference_C": sum(p["chosen_path"] == p["chosen_reference"] for p in chosen),
            "folds": len(chosen), "path_cpu": sum(p["path_cpu"] for p in chosen)})
    today = rows[0]["cpu"]
    for row in rows:
        row["cpu_ratio"] = row["cpu"] / today
    return rows


def markdown(rows, datasets, folds):
    lines = [f"{', '.join(datasets)}, folds {folds}, C in {{{', '.join(f'{c:g}' for c in CS)}}}:"
             f" each cell trained 4 ways (CSR / dense input x 1 / 2 threads); reference: "
             f"epsilon {REFERENCE_EPSILON:g}.  'Same to 3 decimals': |difference| < 0.0005.",
             f"Package defaults when this ran: epsilon {_shown(DEFAULT_EPSILON)}, rel_gap "
             f"{_shown(DEFAULT_REL_GAP)}, select_tol {DEFAULT_SELECT_TOL:g}.", "",
             "| candidate | cells with a MAP spread >= 0.0005 | max MAP diff CSR vs dense | "
             "max MAP diff 1 vs 2 threads | max MAP diff to reference | max (P - P_ref)/P_ref "
             "| training CPU s (4 fits per cell) | CPU ratio to the first | warm path selects "
             "the separate fits' C (ties within select_tol) | ... by plain argmax | warm path "
             "selects the reference's C | path CPU s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| `{r['candidate']}` | {r['cells_disagreeing']}/{r['cells']} | "
            f"{r['max_map_diff_storage']:.4f} | {r['max_map_diff_threads']:.4f} | "
            f"{r['max_map_diff_reference']:.4f} | {r['max_primal_excess']:.2e} | "
            f"{r['cpu']:.1f} | {r['cpu_ratio']:.2f} | {r['path_same_C']}/{r['folds']} | "
            f"{r['path_same_C_argmax']}/{r['folds']} | "
            f"{r['path_reference_C']}/{r['folds']} | {r['path_cpu']:.1f} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", default="1e-3:off,1e-4:off,1e-5:off,off:1e-5,"
                                                "off:1e-6")
    parser.add_argument("--datasets", default="OHSUMED,MQ2008")
    parser.add_argument("--folds", default="1,2,3,4,5")
    parser.add_argument("--fresh-reference", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # the skipped-query notes of every fit
    candidates = [parse_candidate(c) for c in args.candidates.split(",")]
    datasets, folds = args.datasets.split(","), [int(f) for f in args.folds.split(",")]
    reference = load_reference(args.fresh_reference)
    cells, paths = [], []
    for dataset in datasets:
        for fold in folds:
            more_cells, more_paths = run_fold(dataset, fold, candidates, reference)
            cells += more_cells
            paths += more_paths
    rows = summarise(candidates, cells, paths, reference)
    command = (f"python benchmarks/defaults.py --candidates {args.candidates} --datasets "
               f"{args.datasets} --folds {args.folds}")
    record("defaults", command, {"summary": rows, "cells": cells, "paths": paths},
           markdown(rows, datasets, args.folds))
    # the cached reference, for the next run (record wrote rows; add it beside them)
    path = RESULTS / "defaults.json"
    document = json.loads(path.read_text())
    document["reference_epsilon"] = REFERENCE_EPSILON
    document["reference"] = reference
    path.write_text(json.dumps(document, indent=1) + "\n")
    print(json.dumps({r["candidate"]: np.round(r["cpu_ratio"], 2) for r in rows}))


if __name__ == "__main__":
    main()
