"""Does optimising a measure win that measure?  SVMs trained with each loss of svmmap (map,
ndcg@10, ndcg, mrr, p@10, rprec, and SVM-ROC) on OHSUMED and MQ2008, 5 folds, C chosen on
the validation split by the trained measure; test MAP, NDCG@10, MRR, P@10, training time of
the chosen fit, and the time of one fused oracle pass against MAP's.

    OPENBLAS_NUM_THREADS=1 python benchmarks/losses.py [--quick] [--datasets OHSUMED,MQ2008]

Writes benchmarks/results/losses.{json,md} (``--quick``: losses_quick, one fold, two C
values).  Test measures are svmmap.metrics' LETOR convention (NDCG: gain 2^label - 1,
discount 1 at ranks 1-2 and 1/log2(r) after; P@10 divided by 10); C is chosen by the same
measure on the validation split (R-precision for rprec, ROC-area for roc).  The training
losses follow issue 17's definitions (NDCG discount 1/log2(1 + r), P@k normalised by
min(k, |P|)).  Oracle time per pass: the median of ``repeats`` calls of the plugin's batch hook
(the fused pass: scores, sort, oracle, dpsi) on the fold's training queries at the MAP
model's w, one thread, and its ratio to MAP's in the same run.
"""

import argparse
import time
import warnings

import numpy as np
from _common import record, require_data

from svmmap import SVMMap, metrics
from svmmap.core.collection import QueryCollection
from svmmap.core.training import make_plugin
from svmmap.experiments.datasets import find_folds, load_fold

DATASETS = ("OHSUMED", "MQ2008")
LOSSES = ("map", "ndcg@10", "ndcg", "mrr", "p@10", "rprec", "roc")
MEASURES = ("MAP", "NDCG@10", "MRR", "P@10")
GRID = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
QUICK_GRID = (1.0, 100.0)
#: seconds a fit may take (full ndcg's oracle is slow on OHSUMED's largest queries); a fit
#: stopped by it is counted in the table
MAX_TIME = 120.0


def r_precision(scores, labels, qid):
    """Mean over queries of (#relevant in the top R) / R, R = #relevant (0 without any)."""
    return metrics.per_query(
        lambda s, y: (y[np.lexsort((np.arange(len(s)), -s))][:int((y > 0).sum())] > 0).sum()
        / max(int((y > 0).sum()), 1), scores, labels, qid).values.mean()


def selection_measure(loss, scores, labels, qid):
    """The measure a loss is trained for, on a ranking (LETOR convention)."""
    if loss == "map":
        return metrics.mean_average_precision(scores, labels, qid)
    if loss.startswith("ndcg"):
        return metrics.ndcg_at_k(scores, labels, qid, k=10 if loss == "ndcg@10" else None)
    if loss == "mrr":
        return metrics.mean_reciprocal_rank(scores, labels, qid)
    if loss == "p@10":
        return metrics.precision_at_k(scores, labels, qid, k=10)
    if loss == "rprec":
        return r_precision(scores, labels, qid)
    return metrics.roc_area(scores, labels, qid)


def select(loss, fold, grid):
    """(chosen C, its model, seconds of the chosen fit, seconds of the grid)."""
    best, start = None, time.perf_counter()
    for C in grid:
        tick = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = SVMMap(C=C, loss=loss, max_time=MAX_TIME).fit(*fold["train"].arrays)
        seconds = time.perf_counter() - tick
        vali = fold["vali"]
        value = selection_measure(loss, model.decision_function(vali.X), vali.y, vali.qid)
        if best is None or value > best[0]:
            best = (value, C, model, seconds)
    return best[1], best[2], best[3], time.perf_counter() - start


def oracle_seconds(loss, collection, w, repeats):
    plugin = make_plugin({"loss": loss, "n_threads": 1, "oracle": "divide"}, collection)
    times = []
    for _ in range(repeats):
        tick = time.perf_counter()
        plugin.most_violated_constraints(w)
        times.append(time.perf_counter() - tick)
    return float(np.median(times))


def run_fold(dataset, number, path, grid, repeats):
    fold = load_fold(path)
    collection, _, _ = QueryCollection.from_arrays(*fold["train"].arrays).trainable()
    rows, w_map = [], None
    for loss in LOSSES:
        C, model, fit_seconds, grid_seconds = select(loss, fold, grid)
        if loss == "map":
            w_map = model.coef_
        test = fold["test"]
        scores = model.decision_function(test.X)
        found = metrics.evaluate(scores, test.y, test.qid, at=(10,))
        rows.append({"dataset": dataset, "fold": number, "loss": loss, "C": C,
                     **{m: found[m] for m in MEASURES},
                     "iterations": model.training_result_.iterations,
                     "status": model.training_result_.status,
                     "fit_seconds": fit_seconds, "grid_seconds": grid_seconds})
        print(f"{dataset} Fold{number} {loss:8s} C={C:<7g} " +
              " ".join(f"{m} {found[m]:.4f}" for m in MEASURES) +
              f"  fit {fit_seconds:.2f}s", flush=True)
    for row in rows:
        row["oracle_seconds"] = oracle_seconds(row["loss"], collection, w_map, repeats)
    return rows


def table(rows, dataset):
    mine = [r for r in rows if r["dataset"] == dataset]
    folds = sorted({r["fold"] for r in mine})
    map_oracle = np.mean([r["oracle_seconds"] for r in mine if r["loss"] == "map"])
    lines = [f"### {dataset}, mean over folds {', '.join(map(str, folds))}", "",
             "| training loss | " + " | ".join(f"test {m}" for m in MEASURES) +
             " | C chosen (per fold) | fit seconds (chosen C) | oracle ms / pass | vs MAP |"
             " grid seconds | stopped at time limit |",
             "|---|" + "---|" * (len(MEASURES) + 6)]
    best = {m: max(np.mean([r[m] for r in mine if r["loss"] == loss]) for loss in LOSSES)
            for m in MEASURES}
    for loss in LOSSES:
        part = [r for r in mine if r["loss"] == loss]
        cells = []
        for m in MEASURES:
            value = np.mean([r[m] for r in part])
            cells.append(f"**{value:.4f}**" if value == best[m] else f"{value:.4f}")
        oracle = np.mean([r["oracle_seconds"] for r in part])
        lines.append(f"| {'svm-roc' if loss == 'roc' else loss} | " + " | ".join(cells) +
                     f" | {', '.join(format(r['C'], 'g') for r in part)} | "
                     f"{np.mean([r['fit_seconds'] for r in part]):.2f} | "
                     f"{1000 * oracle:.2f} | {oracle / map_oracle:.2f}x | "
                     f"{np.mean([r['grid_seconds'] for r in part]):.1f} | "
                     f"{sum(r['status'] != 'converged' for r in part)} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="Fold1, two C values")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)
    datasets = [d for d in args.datasets.split(",") if d]
    grid = QUICK_GRID if args.quick else GRID
    rows = []
    for dataset in datasets:
        folds = find_folds(require_data(dataset), [1] if args.quick else None)
        for number, path in folds.items():
            rows += run_fold(dataset, number, path, grid, 3 if args.quick else args.repeats)
    intro = (
        "Each row: an SVM trained with that loss (svmmap.SVMMap, 1-slack, epsilon 1e-3, raw "
        f"features), C from {', '.join(f'{c:g}' for c in grid)} chosen by the trained measure "
        "on the validation split (LETOR convention; R-precision for rprec, ROC-area for "
        "svm-roc); test measures on the test split (LETOR convention: NDCG gain 2^label - 1, "
        "discount 1 at ranks 1-2 then 1/log2(r); P@10 divided by 10), mean over folds, the "
        "best of each column in bold.  Oracle ms / pass: median of the fused batch hook "
        "(scores, sort, oracle, dpsi over all training queries) at the MAP model's w, one "
        "thread; vs MAP: its ratio to MAP's pass in the same run.  Grid seconds: all C "
        f"values of the grid; a fit stops after {MAX_TIME:g} s (stopped at time limit: chosen "
        "fits that did, which then keep their best w).\n\n")
    markdown = "## Training losses compared\n\n" + intro + \
        "\n\n".join(table(rows, d) for d in datasets)
    name = "losses_quick" if args.quick else "losses"
    command = "OPENBLAS_NUM_THREADS=1 python benchmarks/losses.py" + \
        (" --quick" if args.quick else "") + \
        ("" if datasets == list(DATASETS) else f" --datasets {args.datasets}")
    record(name, command, rows, markdown)
    return rows


if __name__ == "__main__":
    main()
