"""Summary of the paper's protocol on the classic collections (benchmarks/classic_trials.sh).

    python benchmarks/classic_summary.py

reads ``results/classic_<collection>/seed<s>/trials.json`` and ``build.txt`` and writes
``results/classic_summary.md`` / ``.json``: per collection and seed, the mean test MAP of
SVM-MAP, SVM-ROC, SVM-ACC2, the best feature chosen on validation and the best base function
chosen on test, with W/L and Wilcoxon p of SVM-MAP against each; and per collection over all
seeds (MAP: mean over the seeds' trials; W/L and Wilcoxon on each query's test AP summed over
every trial of every seed that tested it).
"""

import json
import re
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from svmmap.experiments import stats, tables  # noqa: E402

COLUMNS = (("svm-roc", "SVM-ROC"), ("svm-acc2", "SVM-ACC2"),
           ("best-feature", "best feature (vali)"))


def _cell(value, comparison):
    mark = " **" if comparison.significant else ""
    return (f"{value:.4f} ({comparison.wins}/{comparison.losses}{mark}, "
            f"p {comparison.p_value:.2g})")


def _row(label, runs):
    """One table row from a list of trials.json results (one per seed)."""
    keys = sorted(runs[0]["methods"]["svm-map"]["per_query"])

    def summed(per_query_of):
        return np.sum([[per_query_of(r)[k] for k in keys] for r in runs], axis=0)

    ref = summed(lambda r: r["methods"]["svm-map"]["per_query"])
    def mean_map(name):
        return float(np.mean([m for r in runs for m in r["methods"][name]["trial_map"]]))

    cells = [label, f"{mean_map('svm-map'):.4f}"]
    out = {"svm-map": mean_map("svm-map")}
    for name, _ in COLUMNS:
        other = summed(lambda r, n=name: r["methods"][n]["per_query"])
        comparison = stats.compare(ref, other)
        cells.append(_cell(mean_map(name), comparison))
        out[name] = {"map": mean_map(name), "wins": comparison.wins,
                     "losses": comparison.losses, "p": comparison.p_value}
    best = [r["base_functions"][0] for r in runs]
    other = np.sum([[b["per_query"][k] for k in keys] for b in best], axis=0)
    comparison = stats.compare(ref, other)
    value = float(np.mean([b["map"] for b in best]))
    cells.append(_cell(value, comparison))
    out["best-base-function"] = {"map": value, "features": [b["feature"] for b in best],
                                 "wins": comparison.wins, "losses": comparison.losses,
                                 "p": comparison.p_value}
    for name in ("svm-roc", "svm-acc2"):
        by_trial = stats.compare(
            [m for r in runs for m in r["methods"]["svm-map"]["trial_map"]],
            [m for r in runs for m in r["methods"][name]["trial_map"]])
        cells.append(f"{by_trial.wins}/{by_trial.losses}{' **' * by_trial.significant}, "
                     f"p {by_trial.p_value:.2g}")
        out[name]["trials"] = {"wins": by_trial.wins, "losses": by_trial.losses,
                               "p": by_trial.p_value}
    low = [sum(e == "low" for e in r["methods"][n]["end"])
           for r in runs for n in ("svm-map", "svm-roc")]
    trials = sum(r["trials"] for r in runs)
    cells.append(f"{sum(low[0::2])}, {sum(low[1::2])} of {trials}")
    return cells, out


def main():
    rows, summary = [], {}
    for folder in sorted(HERE.glob("results/classic_*/")):
        collection = folder.name.removeprefix("classic_")
        build = (folder / "build.txt").read_text()
        found = re.search(r"(\d+) queries, (\d+) documents, (\d+) relevant", build)
        queries, documents, relevant = map(int, found.groups())
        runs = []
        for seed_folder in sorted(folder.glob("seed*/trials.json")):
            result = json.loads(seed_folder.read_text())
            runs.append(result)
            cells, out = _row(f"{collection} seed {result['seed']}", [result])
            rows.append(cells)
        if not runs:
            continue
        sizes = runs[0]["sizes"]
        cells, out = _row(f"**{collection}, {len(runs)} seed{'s' * (len(runs) > 1)}**", runs)
        rows.append(cells)
        summary[collection] = {"queries": queries, "documents": documents,
                               "relevant": relevant, "pool": runs[0]["pool_queries"],
                               "sizes": sizes, "trials_per_seed": [r["trials"] for r in runs],
                               "seeds": [r["seed"] for r in runs], **out}
    header = ["collection", "SVM-MAP", *(label for _, label in COLUMNS),
              "best base function (on test)", "trials: SVM-MAP vs SVM-ROC",
              "trials: SVM-MAP vs SVM-ACC2", "C at low end (MAP, ROC)"]
    pools = "; ".join(
        f"{c}: {s['pool']} queries, {s['documents']} query-document pairs, "
        f"{100 * s['relevant'] / s['documents']:.2f}% relevant, trials of "
        f"{s['sizes'][0]}/{s['sizes'][1]}/{s['sizes'][2]} queries, "
        f"{' + '.join(map(str, s['trials_per_seed']))} trials (seeds "
        f"{', '.join(map(str, s['seeds']))})" for c, s in summary.items())
    md = "\n\n".join([
        "Command: `python benchmarks/classic_summary.py` (after "
        "`sh benchmarks/classic_trials.sh COLLECTION 10 \"0 1 2\"` for each collection; each "
        "seed's own command is at the top of its trials.md)",
        f"Pools: {pools}.",
        tables.markdown(header, rows),
        "Cells: mean test MAP over the trials (LETOR convention), then W/L of SVM-MAP against "
        "the method over queries (each query's test AP summed over the trials testing it; over "
        "all seeds for the bold rows) and the two-tailed Wilcoxon p; `**` significant at 0.95. "
        "Best feature (vali): the single run chosen on the validation queries of each trial, a "
        "method. Best base function (on test): the run with the best mean test MAP over the "
        "trials, chosen after the fact as in the paper -- an optimistic reference. Trials columns: "
        "the trials where SVM-MAP's test MAP is higher / lower than the method's, and the "
        "Wilcoxon test over the trials' paired MAPs (the trial as the unit: it carries the "
        "variance of the few training and validation queries, which the per-query test "
        "does not).",
    ]) + "\n"
    (HERE / "results" / "classic_summary.md").write_text(md)
    (HERE / "results" / "classic_summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(md)


if __name__ == "__main__":
    main()
