"""The paper's Tables 6-11 from a directory of TREC runs and a qrels file, in one command.

For holders of the TREC-9 / TREC-10 Web track submissions (not public; the qrels are, e.g.
``qrels.trec9.main_web`` / ``qrels.trec10.main_web``, or Anserini's
``qrels.adhoc.451-550.txt``), or of any set of runs:

    python -m svmmap.experiments.trec_tables --runs DIR --qrels QRELS --out OUT \\
        [--trials 50] [--sizes 10,5,35] [--seed 0] [--methods ...] [--depth 1000] [--resume]

Every regular file of ``DIR`` (hidden files skipped, in name order) is a TREC run (``qid Q0
docno rank score tag``), i.e. one base retrieval function.  The command

1. scores each run (MAP, trec_eval convention: the relevant documents not retrieved count) and
   names the best one -- "the best submission";
2. builds the data set of all runs (:func:`.trec.build`: the union of their top ``--depth``
   documents per query, one feature per run) into ``OUT/all/data.txt``, and the data set
   without the best submission into ``OUT/without_best/data.txt``;
3. runs the paper's protocol (:mod:`.trials`: ``--trials`` balanced trials of 10 training / 5
   validation / 35 test queries, binned features whose thresholds are quantiles of the pooled
   training scores -- one scale for all queries --, C by validation MAP) on each, with
   SVM-MAP, SVM-ROC and the SVM-ACC variants by default (the paper's rows);
4. writes ``OUT/tables.md``: the runs' MAP, then per data set the methods' mean test MAP with
   W/L and Wilcoxon of SVM-MAP against each method and against the best, 2nd and 3rd best base
   function -- the rows of Tables 6-11 (SVM-MAP against the other SVMs and against the base
   functions, with all submissions and without the best one); run the command once per TREC
   year.  (Which table number holds which of these rows is not checked against the paper.)

Each protocol run keeps its finished trials in ``OUT/<data set>/trials.jsonl``; ``--resume``
continues an interrupted command.
"""

import argparse
import json
from pathlib import Path

import numpy as np

from ..atomic import write_text_atomically
from ..commands.common import positive_int
from ..errors import SVMMapError, error_line
from ..io import dump_svmlight
from . import tables, trec, trials
from .classic import run_map

#: the paper's rows: SVM-MAP against SVM-ROC and the accuracy SVMs
PAPER_METHODS = "svm-map,svm-roc,svm-acc,svm-acc2,svm-acc3,svm-acc4"
VARIANTS = (("all", "all runs"), ("without_best", "without the best run"))


def run_files(folder):
    """The run files of ``folder``: regular, not hidden, in name order."""
    folder = Path(folder)
    if not folder.is_dir():
        raise SVMMapError(f"{folder}: not a directory of run files")
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    if len(files) < 2:
        raise SVMMapError(f"{folder}: need at least two run files, found {len(files)}")
    return files


def score_runs(paths, qrels_path, depth=1000):
    """``[(path, tag, MAP)]`` of each run's top ``depth`` documents per query, best first
    (trec_eval's ranking and ``map``)."""
    qrels = trec.read_qrels(qrels_path)
    scored = []
    for path in paths:
        tag, run = trec.read_run(path)
        ranked = {}
        for q, ranking in run.items():
            top = trec._top(ranking, depth)
            ranked[q] = (list(top), np.fromiter(top.values(), dtype=np.float64))
        scored.append((path, tag, run_map(ranked, qrels)[0]))
    return sorted(scored, key=lambda item: -item[2])


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m svmmap.experiments.trec_tables",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", required=True, help="directory of TREC run files")
    parser.add_argument("--qrels", required=True, help="TREC qrels file")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--trials", type=positive_int, default=50)
    parser.add_argument("--sizes", default="10,5,35", help="train,vali,test queries per trial")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", default=PAPER_METHODS,
                        help=f"comma-separated (default {PAPER_METHODS})")
    parser.add_argument("--grid", action="append", help="as for svmmap.experiments.trials")
    parser.add_argument("--depth", type=positive_int, default=1000,
                        help="documents per run and query (default 1000)")
    parser.add_argument("--resume", action="store_true",
                        help="continue an interrupted command (the trials kept in --out)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    out = Path(args.out)
    try:
        scored = score_runs(run_files(args.runs), args.qrels, args.depth)
        best = scored[0]
        sections = [
            f"Runs: {len(scored)} in {args.runs}; qrels {args.qrels}; best run "
            f"{best[1]} (MAP {best[2]:.4f}), left out of the second data set.",
            tables.markdown(["run", "file", "MAP"], [[t, p.name, m] for p, t, m in scored]),
            "MAP: trec_eval convention over the judged queries, top "
            f"{args.depth} documents per query."]
        for name, title in VARIANTS:
            drop = {best[1]} if name == "without_best" else set()
            X, y, qid, docnos, tags = trec.build([p for p, _, _ in scored], args.qrels,
                                                 args.depth, drop)
            folder = out / name
            folder.mkdir(parents=True, exist_ok=True)
            data = folder / "data.txt"
            dump_svmlight(data, X, y, qid, comments=docnos)
            (folder / "features.json").write_text(json.dumps(
                {str(i): t for i, t in enumerate(tags, 1)}, indent=1) + "\n")
            command = ["--data", str(data), "--out", str(folder), "--trials", str(args.trials),
                       "--sizes", args.sizes, "--seed", str(args.seed),
                       "--methods", args.methods]
            command += [x for g in args.grid or [] for x in ("--grid", g)]
            command += ["--resume"] * args.resume + ["-q"] * args.quiet
            trials.main(command)
            names = ", ".join(f"feature {i} = {t}" for i, t in enumerate(tags, 1))
            sections += [f"## {title.capitalize()} ({len(tags)} base functions)",
                         (folder / "trials.md").read_text().strip(), f"Features: {names}."]
    except (SVMMapError, OSError) as err:
        parser.exit(1, f"{parser.prog}: error: {error_line(err)}\n")
    write_text_atomically(out / "tables.md", "\n\n".join(sections) + "\n")
    print(f"{out / 'tables.md'}: {len(scored)} runs; best run {best[1]}")


if __name__ == "__main__":
    main()
