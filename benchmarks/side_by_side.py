"""What SVM-MAP costs against what a user would train instead, on the same folds: SVM-MAP
(svmmap, 1-slack), LightGBM's LambdaMART (``lightgbm.LGBMRanker``, objective "lambdarank")
and a pairwise RankSVM (scikit-learn's ``LinearSVC`` on difference vectors), on LETOR 3.0
OHSUMED and LETOR 4.0 MQ2008, each fold's official train / vali / test split.

    python benchmarks/side_by_side.py                      # both datasets, folds 1-5
    python benchmarks/side_by_side.py MQ2008 --folds 1,2   # fewer
    python benchmarks/side_by_side.py --quick              # tiny synthetic folds (for the tests)

What is measured, per dataset, fold and method:

* test MAP of the model chosen on the validation set, by ``svmmap.metrics`` in the LETOR
  convention (relevant = label > 0, ties in file order, a query without a relevant document
  counts as AP 0 and stays in the mean) -- the convention of every other benchmark here;
* the hyper-parameters chosen: the grid point with the highest validation MAP (same metric),
  ties to the smaller C / the earlier grid point;
* seconds of training only (``time.perf_counter`` around fit; loading, prediction and
  evaluation are not timed), split into
  - "grid": everything the selection trained -- every grid point, and for RankSVM the pair
    construction (once per fold, shared by the grid); for LightGBM each grid point is one
    early-stopped fit whose per-round validation MAP evaluation is part of the fit;
  - "chosen fit": what training the chosen model once costs a user who already knows its
    hyper-parameters.  SVM-MAP: that grid fit.  RankSVM: pair construction plus that
    ``LinearSVC`` fit.  LightGBM: a refit with ``n_estimators`` = the early-stopping round and
    no validation set (deterministic, so it equals the early-stopped model; the test MAP is
    the refit's); the refit is not counted in "grid".

Every method runs on one thread (SVM-MAP ``n_threads=1``, LightGBM ``n_jobs=1``, liblinear is
serial, BLAS limited to one thread with threadpoolctl), on the same dense float64 arrays.

Methods and grids:

* SVM-MAP: ``SVMMap(C, algorithm="1-slack", epsilon=1e-3)``, C in {0.1, 1, 10, 100, 1000,
  10000} (svmmap's C: the mean slack over queries, SVMstruct 3.x convention).
* RankSVM (Herbrich et al. 2000; Joachims 2002): a linear SVM on x_i - x_j for every pair of
  documents of one query with label_i > label_j (graded: 2 > 1 > 0), every other pair negated
  and labelled -1 so both classes appear; ``LinearSVC(loss="hinge", fit_intercept=False,
  dual=True, max_iter=10000)``, C in {1e-5, ..., 1} (liblinear's C: the *sum* of hinge losses
  over all pairs, hence the small values; OHSUMED Fold1 has 367,663 training pairs, MQ2008
  Fold1 52,325).  Fits that hit max_iter are counted as not converged.
* LightGBM LambdaMART: ``LGBMRanker(objective="lambdarank", deterministic=True,
  force_row_wise=True, n_jobs=1, random_state=0, verbose=-1)`` and otherwise LightGBM's
  defaults (so lambdarank's NDCG-based gradients, truncation level 30), grid num_leaves in
  {7, 31} x learning_rate in {0.02, 0.1} x min_child_samples in {20, 100}; each grid point up
  to 1000 trees with early stopping (patience 50 rounds) on the validation set's MAP, computed
  by ``svmmap.metrics`` through a custom ``eval_metric`` rather than LightGBM's built-in
  "map", which scores a query without a relevant document as 1 and breaks ties by an unstable
  sort.

The grids were fixed before the 5-fold run and not changed after it, and were not trimmed:
the whole run (both datasets, 5 folds) takes about 2 minutes on 2 cores, most of it RankSVM's
grid on OHSUMED, where C=1 stops at max_iter (and is counted as not converged).

If lightgbm is not installed the script says so in one line and leaves LightGBM out.
"""

import argparse
import inspect
import sys
import time
import warnings

import _common as common
import numpy as np
from _common import record

from svmmap import SVMMap, metrics

try:
    import lightgbm
except ImportError:  # reported by main(); the other methods still run
    lightgbm = None

DATASETS = ("OHSUMED", "MQ2008")
FOLDS = (1, 2, 3, 4, 5)
METHODS = ("SVM-MAP", "RankSVM", "LightGBM")
GRIDS = {
    "SVM-MAP": {"C": (0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0)},
    "RankSVM": {"C": (1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0), "max_iter": 10000},
    "LightGBM": {"points": [{"num_leaves": leaves, "learning_rate": rate,
                             "min_child_samples": child}
                            for leaves in (7, 31) for rate in (0.02, 0.1) for child in (20, 100)],
                 "max_trees": 1000, "patience": 50},
}
QUICK_GRIDS = {
    "SVM-MAP": {"C": (1.0, 100.0)},
    "RankSVM": {"C": (1e-3, 1e-1), "max_iter": 1000},
    "LightGBM": {"points": [{"num_leaves": 7, "learning_rate": 0.1, "min_child_samples": 5},
                            {"num_leaves": 15, "learning_rate": 0.1, "min_child_samples": 5}],
                 "max_trees": 40, "patience": 10},
}
PUBLISHED = {
    "OHSUMED": "LETOR 3.0 OHSUMED published 5-fold test MAP (../shared/data/README.md, as "
               "recalled): RankSVM 0.4334, RankBoost 0.4411, ListNet 0.4457, AdaRank-MAP "
               "0.4487, SVM-MAP about 0.445 (original software).",
    "MQ2008": "LETOR 4.0 MQ2008 published (as recalled, ../shared/data/README.md): RankSVM "
              "about 0.470, RankBoost 0.478, AdaRank-MAP 0.476, AdaRank-NDCG 0.482.",
}


# ----------------------------------------------------------------------------------- data


def contiguous(X, y, qid):
    """(X, y, qid) as dense float64 with each query's documents contiguous: queries in order
    of first appearance, documents in input order (so LETOR's file-order tie rule is kept);
    LightGBM needs contiguous groups."""
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)
    y, qid = np.asarray(y, dtype=np.float64), np.asarray(qid)
    _, first, inverse = np.unique(qid, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first)[inverse.ravel()], kind="stable")
    return np.ascontiguousarray(X[order], dtype=np.float64), y[order], qid[order]


def group_sizes(qid):
    """Sizes of the runs of equal qid (the queries of a contiguous collection)."""
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    return np.diff(np.r_[starts, len(qid)])


def load_fold(dataset, fold):
    return tuple(contiguous(*part) for part in common.load_fold(dataset, fold))


def quick_folds(n_folds=2):
    """Tiny LETOR-shaped folds from benchmarks/synthetic.py (train, vali, test by query)."""
    import synthetic

    folds = []
    for fold in range(1, n_folds + 1):
        X, y, qid = synthetic.letor_like(1500, n_features=10, sizes=(10, 40), seed=fold)
        part = qid % 5  # 3/5 train, 1/5 vali, 1/5 test
        folds.append((fold, *(contiguous(X[m], y[m], qid[m])
                              for m in (part < 3, part == 3, part == 4))))
    return folds


def letor_map(scores, data):
    """MAP of ``scores`` on (X, y, qid) by svmmap.metrics, LETOR convention."""
    return float(metrics.mean_average_precision(scores, data[1], data[2]))


# -------------------------------------------------------------------------------- methods


def _timed(fit):
    start = time.perf_counter()
    model = fit()
    return model, time.perf_counter() - start


def svmmap_select(train, vali, grid):
    """SVM-MAP over grid["C"]; returns the selection dict (see compare)."""
    fits = []
    for C in grid["C"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # queries without a relevant document are skipped
            model, seconds = _timed(lambda C=C: SVMMap(C=C, algorithm="1-slack", epsilon=1e-3,
                                                       n_threads=1).fit(*train))
        fits.append({"C": C, "seconds": seconds, "model": model,
                     "converged": model.training_result_.converged,
                     "vali_map": letor_map(model.decision_function(vali[0]), vali)})
    best = max(fits, key=lambda f: (f["vali_map"], -f["C"]))
    return {"chosen": {"C": best["C"]}, "vali_map": best["vali_map"],
            "score": best["model"].decision_function, "fit_seconds": best["seconds"],
            "grid_seconds": sum(f["seconds"] for f in fits), "grid_fits": len(fits),
            "not_converged": sum(not f["converged"] for f in fits)}


def ranking_pairs(X, y, qid):
    """The RankSVM training set of a contiguous collection: D = x_i - x_j for every pair of
    one query with y_i > y_j, and t = +1; every other row (1, 3, 5, ...) is negated with
    t = -1, so both classes appear and w.D > 0 still means "ranked correctly"."""
    first, second = [], []
    start = 0
    for size in group_sizes(qid):
        labels = y[start:start + size]
        i, j = np.nonzero(labels[:, None] > labels[None, :])
        first.append(i + start)
        second.append(j + start)
        start += size
    first, second = np.concatenate(first), np.concatenate(second)
    if len(first) == 0:
        raise ValueError("no query has two documents with different labels: no pairs")
    D = X[first] - X[second]
    t = np.ones(len(first))
    D[1::2] *= -1
    t[1::2] = -1
    return D, t


def ranksvm_select(train, vali, grid):
    """Pairwise RankSVM (liblinear, hinge loss, no intercept) over grid["C"]."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    (D, t), pair_seconds = _timed(lambda: ranking_pairs(*train))
    fits = []
    for C in grid["C"]:
        svc = LinearSVC(C=C, loss="hinge", fit_intercept=False, dual=True,
                        max_iter=grid["max_iter"], random_state=0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            svc, seconds = _timed(lambda svc=svc: svc.fit(D, t))
        w = svc.coef_.ravel().copy()
        fits.append({"C": C, "seconds": seconds, "w": w,
                     "converged": not any(issubclass(c.category, ConvergenceWarning)
                                          for c in caught),
                     "vali_map": letor_map(vali[0] @ w, vali)})
    best = max(fits, key=lambda f: (f["vali_map"], -f["C"]))
    return {"chosen": {"C": best["C"]}, "vali_map": best["vali_map"],
            "score": lambda X, w=best["w"]: X @ w,
            "fit_seconds": pair_seconds + best["seconds"],
            "grid_seconds": pair_seconds + sum(f["seconds"] for f in fits),
            "grid_fits": len(fits), "not_converged": sum(not f["converged"] for f in fits)}


def _letor_map_metric(y_true, y_pred, weight, group):
    """LightGBM eval_metric: validation MAP by svmmap.metrics (LETOR convention)."""
    qid = np.repeat(np.arange(len(group)), np.asarray(group, dtype=np.int64))
    return "letor_map", float(metrics.mean_average_precision(y_pred, y_true, qid)), True


def _lgbm(params, n_estimators):
    return lightgbm.LGBMRanker(objective="lambdarank", n_estimators=n_estimators,
                               deterministic=True, force_row_wise=True, n_jobs=1,
                               random_state=0, verbose=-1, metric="None", **params)


def lightgbm_select(train, vali, grid):
    """LambdaMART: each grid point early-stopped on validation MAP, then the chosen point
    refitted with its number of trees (the timed "chosen fit")."""
    X, y, qid = train
    groups = group_sizes(qid)
    # lightgbm 4.7 renamed eval_set=[(X, y)] to eval_X=, eval_y= (and deprecated the old name)
    if "eval_X" in inspect.signature(lightgbm.LGBMRanker.fit).parameters:
        eval_args = {"eval_X": (vali[0],), "eval_y": (vali[1],)}
    else:
        eval_args = {"eval_set": [(vali[0], vali[1])]}
    fits = []
    for params in grid["points"]:
        model = _lgbm(params, grid["max_trees"])
        model, seconds = _timed(lambda model=model: model.fit(
            X, y, group=groups, eval_group=[group_sizes(vali[2])],
            eval_metric=_letor_map_metric, **eval_args,
            callbacks=[lightgbm.early_stopping(grid["patience"], verbose=False)]))
        fits.append({"params": params, "seconds": seconds, "trees": int(model.best_iteration_),
                     "vali_map": float(model.best_score_["valid_0"]["letor_map"])})
    best = max(fits, key=lambda f: f["vali_map"])  # max keeps the earliest of equal points
    final, fit_seconds = _timed(lambda: _lgbm(best["params"], best["trees"]).fit(
        X, y, group=groups))
    return {"chosen": {**best["params"], "n_estimators": best["trees"]},
            "vali_map": best["vali_map"], "score": final.predict, "fit_seconds": fit_seconds,
            "grid_seconds": sum(f["seconds"] for f in fits), "grid_fits": len(fits),
            "not_converged": 0}


SELECT = {"SVM-MAP": svmmap_select, "RankSVM": ranksvm_select, "LightGBM": lightgbm_select}


def available_methods(methods=METHODS):
    """``methods`` without LightGBM when lightgbm cannot be imported (said in one line)."""
    if lightgbm is None and "LightGBM" in methods:
        print("lightgbm is not installed (pip install 'lightgbm>=4'): LightGBM omitted",
              file=sys.stderr)
        return tuple(m for m in methods if m != "LightGBM")
    return tuple(methods)


def compare(dataset, folds, grids=GRIDS, methods=METHODS):
    """Run every method on every fold; ``folds`` yields (fold, train, vali, test), each part
    a contiguous (X, y, qid) as made by :func:`contiguous`.  Returns one row per fold and
    method: chosen hyper-parameters, validation and test MAP (LETOR convention), seconds of
    the chosen fit and of the whole grid, the number of grid fits and of those not converged.
    """
    from threadpoolctl import threadpool_limits

    rows = []
    for fold, train, vali, test in folds:
        for method in methods:
            with threadpool_limits(limits=1):
                sel = SELECT[method](train, vali, grids[method])
            rows.append({"dataset": dataset, "fold": fold, "method": method,
                         "chosen": sel["chosen"], "vali_map": sel["vali_map"],
                         "test_map": letor_map(sel["score"](test[0]), test),
                         "fit_seconds": sel["fit_seconds"], "grid_seconds": sel["grid_seconds"],
                         "grid_fits": sel["grid_fits"], "not_converged": sel["not_converged"]})
            print(f"{dataset} fold {fold} {method}: test MAP {rows[-1]['test_map']:.4f} "
                  f"({_chosen(sel['chosen'])}; chosen fit {sel['fit_seconds']:.2f} s, grid "
                  f"{sel['grid_seconds']:.2f} s)", file=sys.stderr, flush=True)
    return rows


# -------------------------------------------------------------------------------- reports


def _chosen(chosen):
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in chosen.items())


def summarize(rows):
    """One row per (dataset, method): means over folds (seconds summed for the grid)."""
    out = []
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        for method in dict.fromkeys(r["method"] for r in rows if r["dataset"] == dataset):
            mine = [r for r in rows if r["dataset"] == dataset and r["method"] == method]
            out.append({"dataset": dataset, "method": method, "folds": [r["fold"] for r in mine],
                        "mean_test_map": float(np.mean([r["test_map"] for r in mine])),
                        "mean_fit_seconds": float(np.mean([r["fit_seconds"] for r in mine])),
                        "mean_grid_seconds": float(np.mean([r["grid_seconds"] for r in mine])),
                        "total_grid_seconds": float(sum(r["grid_seconds"] for r in mine))})
    return out


def markdown(summary, rows):
    lines = ["| dataset | method | mean test MAP | seconds per chosen fit (mean) | "
             "grid seconds per fold (mean) | grid seconds, all folds |", "|---" * 6 + "|"]
    lines += [f"| {s['dataset']} | {s['method']} | **{s['mean_test_map']:.4f}** | "
              f"{s['mean_fit_seconds']:.3f} | {s['mean_grid_seconds']:.2f} | "
              f"{s['total_grid_seconds']:.1f} |" for s in summary]
    parts = ["## Summary (test MAP, LETOR convention; training seconds, one thread)\n\n"
             + "\n".join(lines)]
    for dataset in dict.fromkeys(s["dataset"] for s in summary):
        mine = [r for r in rows if r["dataset"] == dataset]
        folds = list(dict.fromkeys(r["fold"] for r in mine))
        wide = ["| method | " + " | ".join(f"Fold{f}" for f in folds) + " | mean |",
                "|---" * (len(folds) + 2) + "|"]
        for s in (s for s in summary if s["dataset"] == dataset):
            maps = [r["test_map"] for r in mine if r["method"] == s["method"]]
            wide.append(f"| {s['method']} | " + " | ".join(f"{m:.4f}" for m in maps)
                        + f" | {s['mean_test_map']:.4f} |")
        detail = ["| fold | method | chosen (by vali MAP) | vali MAP | test MAP | chosen fit s | "
                  "grid s | grid fits (not converged) |", "|---" * 8 + "|"]
        detail += [f"| {r['fold']} | {r['method']} | {_chosen(r['chosen'])} | "
                   f"{r['vali_map']:.4f} | {r['test_map']:.4f} | {r['fit_seconds']:.3f} | "
                   f"{r['grid_seconds']:.2f} | {r['grid_fits']} ({r['not_converged']}) |"
                   for r in mine]
        published = f"\n\n{PUBLISHED[dataset]}" if dataset in PUBLISHED else ""
        parts.append(f"## {dataset}: test MAP per fold\n\n" + "\n".join(wide) + published
                     + f"\n\n### {dataset}: per fold\n\n" + "\n".join(detail))
    parts.append("Seconds: training only (no loading, prediction or evaluation). Grid: every "
                 "fit of the selection (RankSVM: plus building the pairs once; LightGBM: "
                 "early-stopped fits incl. per-round validation MAP). Chosen fit: one fit "
                 "with the chosen hyper-parameters (RankSVM: plus the pairs; LightGBM: a "
                 "refit with the early-stopping number of trees, not part of the grid "
                 "seconds). Grids and settings: benchmarks/side_by_side.py docstring.")
    return "\n\n".join(parts)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="*", help="OHSUMED and/or MQ2008 (default both)")
    parser.add_argument("--folds", default="1,2,3,4,5", help="comma-separated, default 1-5")
    parser.add_argument("--quick", action="store_true",
                        help="two tiny synthetic folds and small grids (for the tests)")
    args = parser.parse_args(argv)
    unknown = set(args.datasets) - set(DATASETS)
    if unknown:
        parser.error(f"unknown dataset {', '.join(sorted(unknown))}; expected {DATASETS}")
    methods = available_methods()
    if args.quick:
        rows = compare("synthetic", quick_folds(), QUICK_GRIDS, methods)
        name, command = "side_by_side_quick", "python benchmarks/side_by_side.py --quick"
    else:
        datasets = args.datasets or list(DATASETS)
        folds = [int(f) for f in args.folds.split(",")]
        rows = []
        for dataset in datasets:
            rows += compare(dataset, ((f, *load_fold(dataset, f)) for f in folds),
                            GRIDS, methods)
        name = "side_by_side"
        command = "python benchmarks/side_by_side.py" + "".join(
            f" {d}" for d in args.datasets) + (
            "" if folds == list(FOLDS) else f" --folds {args.folds}")
    summary = summarize(rows)
    record(name, command, {"summary": summary, "folds": rows}, markdown(summary, rows))
    return {"summary": summary, "folds": rows}


if __name__ == "__main__":
    main()
