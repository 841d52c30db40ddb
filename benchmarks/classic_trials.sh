#!/bin/sh
# The paper's protocol (Yue et al. 2007, Tables 6-11) on a classic test collection, end to end:
# retrieval runs of 23 functions -> `trec build` (one feature per run) -> the trials driver
# (SVM-MAP, SVM-ROC, SVM-ACC2, best feature by validation; binned features, thresholds the
# quantiles of the pooled training scores: one scale for all queries) for each seed -> plots.
#
#   sh benchmarks/classic_trials.sh COLLECTION TRIALS "SEEDS" [WORK]
#   e.g. sh benchmarks/classic_trials.sh cacm 10 "0 1 2"
#
# Trial sizes: the paper's 10 training and 5 validation queries, and every other query of the
# pool (queries with a relevant document among the retrieved) as test queries, as the paper's
# trials used its whole pool of 50 topics.  Results: benchmarks/results/classic_COLLECTION/
# (runs.md: each run's MAP; seedS/: the trials tables, json and plots).  Intermediate files
# (runs, data set) go to WORK (default /tmp/svmmap_classic).
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
collection=$1; trials=$2; seeds=$3; work=${4:-/tmp/svmmap_classic}
data=${CLASSIC_DATA:-$root/../shared/data/classic}/$collection
out=$root/benchmarks/results/classic_$collection
mkdir -p "$work/$collection" "$out"
python -m svmmap.experiments.classic --collection "$collection" --data "$data" \
    --out "$work/$collection"
cp "$work/$collection/runs.md" "$out/runs.md"
python -m svmmap.experiments.trec build --runs "$work/$collection"/runs/*.run \
    --qrels "$work/$collection/qrels.txt" --out "$work/$collection/data.txt" > "$out/build.txt"
pool=$(python -c "import sys; from svmmap.experiments.datasets import load_pool; \
print(len(load_pool([sys.argv[1]])[1]))" "$work/$collection/data.txt")
for seed in $seeds; do
    python -m svmmap.experiments.trials --data "$work/$collection/data.txt" \
        --sizes "10,5,$((pool - 15))" --trials "$trials" --seed "$seed" \
        --methods svm-map,svm-roc,svm-acc2,best-feature --out "$out/seed$seed" --resume
    python -m svmmap.experiments.plots --results "$out/seed$seed" --baseline svm-roc \
        --baseline svm-acc2
done
