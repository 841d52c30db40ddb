"""SVM-MAP training cost and accuracy as C grows: seconds, cutting-plane iterations, final
working-set size, QP and oracle shares of the time, primal objective, duality gap and test MAP
for C in 1 .. 1e5, on LETOR 3.0 OHSUMED and MQ2008.

    python benchmarks/c_sweep.py [--folds 1,2,3,4,5] [--algorithms 1-slack,1-slack+cvxopt]
                                 [--binned [--thresholds 50]] [--max-time 300]
                                 [--C 1,10,100] [--datasets OHSUMED,MQ2008] [--epsilon 0.001]

Each fit trains on Fold<k>/train.txt and is scored on Fold<k>/test.txt (MAP, LETOR
convention).  ``seconds`` is the cutting-plane loop of svmstruct_api.learner (TrainingResult
.seconds); the QP and oracle shares are qp_seconds / seconds and oracle_seconds / seconds (the
rest is bookkeeping).  ``--binned`` trains on the paper's binned features (Section 4.2,
svmmap.features.BinnedFeatureMap, 50 thresholds per base feature: 1,369 columns on OHSUMED
Fold1, 1,113 on MQ2008 Fold1), where the working-set QP dominates; its results are recorded
as c_sweep_binned.  ``--max-time`` bounds each fit (checked between cutting-plane iterations):
a fit that reaches it keeps the best w found and is reported with status max_time, its primal
objective the best one seen.  With several folds each dataset gets a table of the means over
folds, then one table per fold.
"""

import argparse
import sys
import time
import warnings

import numpy as np
from _common import record, require_data

from svmmap import SVMMap, load_svmlight
from svmmap.features import BinnedFeatureMap
from svmstruct_api.qp import QP_SOLVERS

C_GRID = (1.0, 10.0, 100.0, 1e3, 1e4, 1e5)
DATASETS = ("OHSUMED", "MQ2008")
ALGORITHMS = ("1-slack", "n-slack")
N_THRESHOLDS = 50
#: the numeric columns averaged over folds
MEASURES = ("seconds", "fit_seconds", "iterations", "qp_solves", "working_set_size",
            "qp_seconds", "oracle_seconds", "qp_share", "oracle_share", "primal_objective",
            "dual_objective", "duality_gap", "max_violation", "test_map")


def measure(train, test, C, algorithm="1-slack", n_thresholds=None, max_time=300.0,
            epsilon=1e-3):
    """Train SVM-MAP on ``train`` = (X, y, qid) and return one JSON-ready row: what the
    cutting-plane run cost (TrainingResult) and the MAP of the model on ``test``.

    ``n_thresholds``: None trains on X as given, an int on the binned features with that
    many thresholds per column.  ``algorithm`` is "1-slack" or "n-slack", optionally with
    "+cvxopt" (or "+smo", the default) to choose the working-set QP solver.
    """
    features = None if n_thresholds is None else BinnedFeatureMap(n_thresholds)
    formulation, _, qp_solver = algorithm.partition("+")
    model = SVMMap(C=C, epsilon=epsilon, algorithm=formulation, max_time=max_time,
                   feature_map=features, qp_solver=qp_solver or "smo")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # queries without a relevant document are skipped
        start = time.perf_counter()
        model.fit(*train)
        fit_seconds = time.perf_counter() - start
    r = model.training_result_
    return {
        "algorithm": algorithm, "C": float(r.C), "epsilon": float(r.epsilon),
        "n_features": len(model.coef_), "n_queries": int(model.n_queries_used_),
        "status": r.status, "seconds": float(r.seconds), "fit_seconds": fit_seconds,
        "iterations": int(r.iterations),
        "qp_solves": sum(1 for h in r.history if h.constraints_added),
        "working_set_size": int(r.working_set_size),
        "qp_seconds": float(r.qp_seconds), "oracle_seconds": float(r.oracle_seconds),
        "qp_share": float(r.qp_seconds / r.seconds),
        "oracle_share": float(r.oracle_seconds / r.seconds),
        "primal_objective": float(r.primal_objective),
        "dual_objective": float(r.dual_objective), "duality_gap": float(r.duality_gap),
        "max_violation": float(r.max_violation), "test_map": float(model.score(*test)),
    }


def sweep(data, Cs=C_GRID, algorithms=("1-slack",), n_thresholds=None, max_time=300.0,
          epsilon=1e-3):
    """Every fit of the sweep: ``data`` maps dataset -> {fold: (train, test)} (each part an
    (X, y, qid) triple, or a callable returning the pair, called once per fold).  Returns
    the per-fit rows, then one row of means per (dataset, algorithm, C) with fold "mean"
    when a dataset has several folds."""
    rows = []
    for dataset, folds in data.items():
        fold_rows = []
        for fold, parts in folds.items():
            train, test = parts() if callable(parts) else parts
            for algorithm in algorithms:
                for C in Cs:
                    row = {"dataset": dataset, "fold": fold,
                           **measure(train, test, C, algorithm, n_thresholds, max_time,
                                     epsilon)}
                    print(f"{dataset} Fold{fold} {algorithm} C={C:g}: {row['seconds']:.2f}s "
                          f"{row['iterations']} iterations, QP {row['qp_share']:.0%}, test MAP "
                          f"{row['test_map']:.4f} ({row['status']})", flush=True)
                    fold_rows.append(row)
        rows += fold_rows
        if len(folds) > 1:
            rows += _means(dataset, fold_rows, algorithms, Cs)
    return rows


def _means(dataset, fold_rows, algorithms, Cs):
    means = []
    for algorithm in algorithms:
        for C in Cs:
            group = [r for r in fold_rows if r["algorithm"] == algorithm and r["C"] == C]
            stopped = [r["status"] for r in group if r["status"] != "converged"]
            means.append({
                "dataset": dataset, "fold": "mean", "folds": [r["fold"] for r in group],
                "algorithm": algorithm, "C": float(C), "epsilon": group[0]["epsilon"],
                "n_features": group[0]["n_features"],
                "status": "converged" if not stopped else
                f"{', '.join(sorted(set(stopped)))} in {len(stopped)}/{len(group)}",
                **{k: float(np.mean([r[k] for r in group])) for k in MEASURES}})
    return means


HEADER = ["| C | algorithm | seconds | iterations | working set | QP share | oracle share | "
          "primal objective | duality gap | test MAP | status |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]


def table(rows):
    """One Markdown table, a row per fit (C within algorithm)."""
    lines = list(HEADER)
    for r in rows:
        iterations, working_set = (r["iterations"], r["working_set_size"])
        if r["fold"] == "mean":
            iterations, working_set = f"{iterations:.1f}", f"{working_set:.1f}"
        status = r["status"] if r["status"] == "converged" else f"**{r['status']}**"
        lines.append(f"| {r['C']:g} | {r['algorithm']} | {r['seconds']:.2f} | {iterations} | "
                     f"{working_set} | {r['qp_share']:.0%} | {r['oracle_share']:.0%} | "
                     f"{r['primal_objective']:.6g} | {r['duality_gap']:.3g} | "
                     f"{r['test_map']:.4f} | {status} |")
    return "\n".join(lines)


def markdown(rows, n_thresholds=None, max_time=300.0, epsilon=1e-3):
    """The report: per dataset, the means over folds (if several), then each fold."""
    features = "raw features" if n_thresholds is None else \
        f"binned features, {n_thresholds} thresholds per base feature"
    parts = [f"## SVM-MAP by C ({features}, epsilon {epsilon:g}, at most {max_time:g} s per "
             "fit)", "",
             "Train on Fold*k*/train.txt, MAP of Fold*k*/test.txt (LETOR convention). seconds: "
             "the cutting-plane loop; QP / oracle share: qp_seconds / seconds and "
             "oracle_seconds / seconds; working set: constraints at the end; duality gap: "
             "primal - dual objective of the last QP. A status other than converged means the "
             "fit stopped at the time limit with the best w seen."]
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    for dataset in datasets:
        mine = [r for r in rows if r["dataset"] == dataset]
        folds = list(dict.fromkeys(r["fold"] for r in mine if r["fold"] != "mean"))
        means = [r for r in mine if r["fold"] == "mean"]
        if means:
            parts += ["", f"### {dataset}, mean over folds {', '.join(map(str, folds))}", "",
                      table(means)]
        for fold in folds:
            each = [r for r in mine if r["fold"] == fold]
            parts += ["", f"### {dataset} Fold{fold} ({each[0]['n_queries']} training queries "
                      f"used, {each[0]['n_features']} features)", "", table(each)]
    return "\n".join(parts)


def _list(text, kind=str):
    return [kind(item) for item in text.split(",") if item.strip()]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", default="1", help="comma-separated folds (default 1)")
    parser.add_argument("--algorithms", default="1-slack",
                        help="1-slack, n-slack or both comma-separated (default 1-slack); "
                             "a suffix +cvxopt trains with cvxopt as the only QP solver")
    parser.add_argument("--binned", action="store_true",
                        help="train on the paper's binned features (Section 4.2)")
    parser.add_argument("--thresholds", type=int, default=N_THRESHOLDS,
                        help=f"thresholds per base feature with --binned (default "
                        f"{N_THRESHOLDS})")
    parser.add_argument("--max-time", type=float, default=300.0,
                        help="seconds allowed per fit (default 300)")
    parser.add_argument("--C", dest="Cs", default=",".join(f"{c:g}" for c in C_GRID),
                        help="comma-separated values of C (default 1,10,...,1e+05)")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--epsilon", type=float, default=1e-3)
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else list(argv)
    algorithms = _list(args.algorithms)
    for algorithm in algorithms:
        formulation, plus, solver = algorithm.partition("+")
        if formulation not in ALGORITHMS or (plus and solver not in QP_SOLVERS):
            parser.error(f"unknown algorithm {algorithm!r}: use {', '.join(ALGORITHMS)}, "
                         f"optionally +{' or +'.join(QP_SOLVERS)}")
    Cs = _list(args.Cs, float)
    folds = _list(args.folds, int)
    n_thresholds = args.thresholds if args.binned else None

    def loader(dataset, fold):
        def load():
            base = require_data(dataset, f"Fold{fold}")
            train = load_svmlight(base / "train.txt")
            return train, load_svmlight(base / "test.txt", n_features=train[0].shape[1])
        return load

    for dataset in _list(args.datasets):  # fail before the first fit if data is missing
        for fold in folds:
            require_data(dataset, f"Fold{fold}", "train.txt")
    data = {dataset: {fold: loader(dataset, fold) for fold in folds}
            for dataset in _list(args.datasets)}
    rows = sweep(data, Cs, algorithms, n_thresholds, args.max_time, args.epsilon)
    name = "c_sweep_binned" if args.binned else "c_sweep"
    record(name, " ".join(["python benchmarks/c_sweep.py", *argv]), rows,
           markdown(rows, n_thresholds, args.max_time, args.epsilon))
    return rows


if __name__ == "__main__":
    main()
