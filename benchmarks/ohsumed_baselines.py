"""AdaRank.MAP, AdaRank.NDCG, RankBoost and PRank on LETOR 3.0 OHSUMED (and LETOR 4.0 MQ2008):
5-fold test MAP, the number of rounds / epochs chosen on the validation set.

    python benchmarks/ohsumed_baselines.py            # OHSUMED and MQ2008
"""

import sys
import time
import warnings

import numpy as np
from _common import load_fold, record

from svmmap import metrics
from svmmap.baselines import AdaRank, PRank, RankBoost

EPOCHS = (1, 2, 5, 10, 20, 50)
PUBLISHED = {
    "OHSUMED": "LETOR 3.0 OHSUMED published 5-fold test MAP: RankBoost 0.4411, AdaRank-MAP 0.4487 "
               "(also RankSVM 0.4334, ListNet 0.4457, SVM-MAP about 0.445).",
    "MQ2008": "LETOR 4.0 MQ2008 published (as recalled, ../shared/data/README.md): RankBoost "
              "0.478, AdaRank-MAP 0.476, AdaRank-NDCG 0.482, RankSVM about 0.470.",
}


def adarank(measure):
    def fit(train, vali):
        model = AdaRank(loss=measure, max_rounds=500).fit(*train, eval_set=vali)
        return model, f"T={model.n_rounds_}"
    return fit


def rankboost(train, vali):
    model = RankBoost(max_rounds=500).fit(*train, eval_set=vali)
    return model, f"T={model.n_rounds_}"


def prank(train, vali):
    models = {n: PRank(n_epochs=n).fit(*train) for n in EPOCHS}
    best = max(EPOCHS, key=lambda n: (models[n].score(*vali), -n))
    return models[best], f"epochs={best}"


METHODS = {"AdaRank.MAP": adarank("map"), "AdaRank.NDCG": adarank("ndcg"),
           "RankBoost": rankboost, "PRank": prank}


def run(dataset):
    rows = []
    for fold in range(1, 6):
        train, vali, test = load_fold(dataset, fold)
        for name, fit in METHODS.items():
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model, chosen = fit(train, vali)
            seconds = time.perf_counter() - start
            Xt, yt, qt = test
            summary = metrics.evaluate(model.decision_function(Xt), yt, qt)
            rows.append({"dataset": dataset, "fold": fold, "method": name, "chosen": chosen,
                         "vali_map": model.score(*vali), "test_map": summary["MAP"],
                         "ndcg@10": summary["NDCG@10"], "seconds": seconds})
            print(rows[-1], file=sys.stderr)
    lines = ["| method | " + " | ".join(f"Fold{f} test MAP (chosen)" for f in range(1, 6))
             + " | mean test MAP | mean NDCG@10 | seconds/fold |",
             "|---" * 9 + "|"]
    for name in METHODS:
        mine = [r for r in rows if r["method"] == name]
        cells = " | ".join(f"{r['test_map']:.4f} ({r['chosen']})" for r in mine)
        lines.append(f"| {name} | {cells} | **{np.mean([r['test_map'] for r in mine]):.4f}** | "
                     f"{np.mean([r['ndcg@10'] for r in mine]):.4f} | "
                     f"{np.mean([r['seconds'] for r in mine]):.1f} |")
    return rows, "\n".join(lines)


def main():
    datasets = sys.argv[1:] or ["OHSUMED", "MQ2008"]
    all_rows, parts = [], []
    for dataset in datasets:
        rows, table = run(dataset)
        all_rows += rows
        parts.append(f"## {dataset}, 5 folds, LETOR convention (queries without relevant "
                     "documents count as AP 0)\n\n" + table + "\n\n" + PUBLISHED[dataset])
    settings = (
        "Settings: AdaRank max_rounds 500, rounds rolled back when the training measure does "
        "not rise, T = best validation round (AdaRank.NDCG: by validation NDCG@10); RankBoost "
        "32 quantile thresholds per feature, 500 rounds, T = best validation MAP round; PRank "
        f"averaged, epochs from {{{', '.join(map(str, EPOCHS))}}} by validation MAP.")
    record("ohsumed_baselines", "python benchmarks/ohsumed_baselines.py " + " ".join(datasets),
           all_rows, settings + "\n\n" + "\n\n".join(parts))


if __name__ == "__main__":
    main()
