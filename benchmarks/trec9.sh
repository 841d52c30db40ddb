#!/bin/sh
# The paper's TREC-9 experiment (Yue et al. 2007, Tables 7, 8, 10 and 11, TREC-9 column) on the
# real Web track runs in ../shared/data/trec9 (NIST data: read there, never copied here):
# the automatic, not title-only runs as base functions, 50 trials of 10 / 5 / 35 topics,
# SVM-MAP, SVM-ROC and SVM-ACC, ACC2, ACC3, ACC4 against the three best runs, with all runs and
# without the best one, on both cores.  Memory: the whole process tree's peak (PSS) and the
# largest process's (/usr/bin/time -v); each process limited to 12 GB of address space.
#
#   sh benchmarks/trec9.sh [WORK]        # about 1.5 h on the 2-core machine
#
# Results: benchmarks/results/trec9/ (tables.md, each data set's trials.md and trials.json,
# memory.json, time.txt); the data sets and journals stay in WORK (default /tmp/svmmap_trec9).
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
trec9=${TREC9_DATA:-$root/../shared/data/trec9}
work=${1:-/tmp/svmmap_trec9}
out=$root/benchmarks/results/trec9
mkdir -p "$work" "$out"
prlimit --as=12000000000 python "$here/tree_memory.py" --out "$out/memory.json" -- \
    /usr/bin/time -v -o "$out/time.txt" \
    python -m svmmap.experiments.trec_tables --runs "$trec9/runs" \
        --qrels "$trec9/qrels.trec9.web.txt" --run-list "$trec9/runs.tsv" \
        --select automatic,not-title-only --out "$work" --trials 50 \
        --grid 1e-7,1e-6,1e-5,1e-4,1e-3,0.01,0.1,1,10,100,1000,10000 --patience 3 --jobs 2 \
        --resume
cp "$work/tables.md" "$out/tables.md"
for variant in all without_best; do
    mkdir -p "$out/$variant"
    cp "$work/$variant/trials.md" "$work/$variant/trials.json" "$out/$variant/"
done
