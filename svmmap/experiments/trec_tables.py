"""The paper's Tables 7, 8, 10 and 11 from a directory of TREC runs and a qrels file, in one
command.

    python -m svmmap.experiments.trec_tables --runs DIR --qrels QRELS --out OUT \\
        [--run-list runs.tsv --select automatic,not-title-only] [--trials 50] \\
        [--sizes 10,5,35] [--seed 0] [--methods ...] [--grid ...] [--depth 1000] \\
        [--jobs N | --scheduler ADDRESS] [--resume]

Every regular file of ``DIR`` (hidden files skipped, in name order; gzip, bzip2 or xz
compressed or plain) is a TREC run (``qid Q0 docno rank score tag``), i.e. one base retrieval
function.  ``--select`` keeps the runs the paper used (:func:`select_runs`): with a run list
(``--run-list``, a TSV with columns ``run``, ``type``, ``task``, as
``../shared/data/trec9/runs.tsv``) by type and task, and ``not-title-only`` by the run's tag
(:data:`TITLE_ONLY`).  The command

1. reads the runs once, one at a time (:class:`.trec.RunSet`: one index and one float per
   retrieved document, never a run's text), scores each (MAP, trec_eval convention, top
   ``--depth``) and names the best one -- "the best submission" -- by its file, so another run
   carrying the same tag is never dropped with it;
2. writes the data set of all runs (:meth:`.trec.RunSet.data_set`: the union of their top
   ``--depth`` documents per query, one feature per run) as an array folder
   ``OUT/all/data`` (:mod:`.datasets`: ``X.npy`` memory-mapped by every trial), then the one
   without the best run ``OUT/without_best/data`` (the union over the other runs);
3. runs the paper's protocol (:mod:`.trials`: ``--trials`` balanced trials of 10 training /
   5 validation / 35 test queries, binned features -- 50 thresholds per run at quantiles of
   the distinct training scores, ``--bin-spacing values`` -- C by validation MAP) on each,
   with SVM-MAP, SVM-ROC and the SVM-ACC variants by default (the paper's rows), on
   ``--jobs`` local processes or a Dask cluster (``--scheduler``);
4. writes ``OUT/tables.md``: the runs' MAP, then per data set the methods' mean test MAP
   with W/L and Wilcoxon of SVM-MAP against each method and against the best, 2nd and 3rd
   best base function -- the paper's Tables 7 and 10 (all runs) and 8 and 11 (without the
   best run).

Each protocol run keeps its finished trials in ``OUT/<data set>/``; ``--resume`` continues an
interrupted command (the data sets already written are reused when they hold the same runs).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..commands.common import ArgumentParser, positive_int
from ..core import interrupts
from ..data.atomic import write_text_atomically
from ..errors import InputFormatError, SVMMapError, error_line
from . import tables, trec, trials
from .datasets import is_array_folder, load_arrays, save_arrays
from .meter import Meter

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..core._typing import PathLike

#: the paper's rows: SVM-MAP against SVM-ROC and the accuracy SVMs
PAPER_METHODS = "svm-map,svm-roc,svm-acc,svm-acc2,svm-acc3,svm-acc4"
VARIANTS = (("all", "all runs"), ("without_best", "without the best run"))
#: How a title-only ("short") run is recognised from its tag, the run lists recording no topic
#: fields: the participants' naming conventions, one pattern each.  A reconstruction: runs
#: whose names encode no topic fields (CWI, Sab9web, UCCS, uwmt, NRK, Scai9Web, NE*, ric9 in
#: TREC-9) are kept whatever fields they used.
TITLE_ONLY = (
    ("'short' in the tag (PuShortBase, ...)", re.compile(r"short", re.IGNORECASE)),
    ("'title' in the tag (xvsmtitle)", re.compile(r"title", re.IGNORECASE)),
    ("Justsystem's jscbt9w{c,l}s{N}: s = short query, l = long",
     re.compile(r"^jscbt9w[cl]s\d+$")),
    ("a field code of t alone at the end (apl9t, apl9lt, iit00t, iswt, Mer9Wt0, pir0Wt1, "
     "Flab9atN, tnout9t2, att0010gbt): t = title, td / tdn = title and description (and "
     "narrative)", re.compile(r"(?<![td])t\d?N?$")),
)
#: the --select filters: run-list columns and their values, and the tag rule
SELECTIONS: dict[str, tuple[str, str] | None] = {
    "automatic": ("type", "automatic"), "manual": ("type", "manual"),
    "content-only": ("task", "content-only"), "content-link": ("task", "content-link"),
    "not-title-only": None}


def run_files(folder: PathLike) -> list[Path]:
    """The run files of ``folder``: regular, not hidden, in name order."""
    where = Path(folder)
    if not where.is_dir():
        raise SVMMapError(f"{where}: not a directory of run files")
    files = sorted(p for p in where.iterdir() if p.is_file() and not p.name.startswith("."))
    if len(files) < 2:
        raise SVMMapError(f"{where}: need at least two run files, found {len(files)}")
    return files


def is_title_only(tag: str) -> bool:
    """Whether the run tag names a title-only run (:data:`TITLE_ONLY`)."""
    return any(pattern.search(tag) for _, pattern in TITLE_ONLY)


def read_run_list(path: PathLike) -> dict[str, dict[str, str]]:
    """``{run tag: row}`` of a run list: a TSV whose header names at least ``run``, ``type``
    and ``task`` (``../shared/data/trec9/runs.tsv``)."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle, delimiter="\t"))
    except (OSError, UnicodeDecodeError) as err:
        raise InputFormatError(f"cannot read the run list: {err}", path) from None
    if not rows or not {"run", "type", "task"} <= set(rows[0]):
        raise InputFormatError("a run list is a TSV whose header names the columns run, "
                               "type and task", path, 1)
    return {row["run"]: row for row in rows}


def select_runs(paths: Sequence[Path], selection: Sequence[str],
                run_list: dict[str, dict[str, str]] | None = None,
                run_list_path: PathLike | None = None) -> tuple[list[Path], list[str], str]:
    """``(kept paths, their tags, one line saying what was kept)``: the runs of ``paths`` that
    pass every filter of ``selection`` (names of :data:`SELECTIONS`); a run-list filter needs
    ``run_list`` (:func:`read_run_list`), which must list every run."""
    tags = [trec.run_tag(path) for path in paths]
    unknown = [s for s in selection if s not in SELECTIONS]
    if unknown:
        raise SVMMapError(f"unknown --select {unknown[0]!r}; known: {', '.join(SELECTIONS)}")
    listed = [s for s in selection if SELECTIONS[s] is not None]
    if listed and run_list is None:
        raise SVMMapError(f"--select {listed[0]} needs --run-list (the runs' type and task)")
    kept = []
    for path, tag in zip(paths, tags):
        row: dict[str, str] = {}
        if run_list is not None and listed:
            if tag not in run_list:
                raise InputFormatError(f"run {tag!r} ({path.name}) is not in the run list",
                                       run_list_path)
            row = run_list[tag]
        if all(_passes(row, tag, SELECTIONS[s]) for s in selection):
            kept.append((path, tag))
    if len(kept) < 2:
        raise SVMMapError(f"--select {','.join(selection)} leaves {len(kept)} run(s); "
                          "need at least two")
    said = (f"--select {','.join(selection)}: {len(kept)} of {len(paths)} runs"
            if selection else f"{len(paths)} runs")
    return [p for p, _ in kept], [t for _, t in kept], said


def _passes(row: dict[str, str], tag: str, rule: tuple[str, str] | None) -> bool:
    """Whether a run passes one filter: its run-list ``row``'s column ``rule[0]`` holds
    ``rule[1]``, or (``rule`` None) ``tag`` is not title-only."""
    return row[rule[0]] == rule[1] if rule else not is_title_only(tag)


def feature_names(tags: Sequence[str], paths: Sequence[Path]) -> list[str]:
    """One name per run: its tag, with the file name where two runs share a tag."""
    counts = {t: tags.count(t) for t in tags}
    return [t if counts[t] == 1 else f"{t} ({p.name})" for t, p in zip(tags, paths)]


def _data_set(runs, keep, folder, names, resume):
    """The array folder of the runs ``keep`` in ``folder`` (reused on --resume when it holds
    the same features), written whole."""
    if resume and is_array_folder(folder):
        try:
            if load_arrays(folder)[2] == names:
                return
        except InputFormatError:
            pass
    X, y, qid, docnos, _ = runs.data_set(keep)
    save_arrays(folder, X, y, qid, docnos, names)


def main(argv: Sequence[str] | None = None) -> None:
    """The command (module docstring).  Ctrl-C / SIGTERM: one line on stderr and
    SystemExit(130 / 143)."""
    parser = ArgumentParser(prog="python -m svmmap.experiments.trec_tables",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", required=True, help="directory of TREC run files")
    parser.add_argument("--qrels", required=True, help="TREC qrels file")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--run-list", help="TSV of the runs' type and task (columns run, "
                                           "type, task), for --select")
    parser.add_argument("--select", default="",
                        help="keep the runs passing every filter, comma-separated: "
                             f"{', '.join(SELECTIONS)} (the paper: "
                             "automatic,not-title-only)")
    parser.add_argument("--trials", type=positive_int, default=50)
    parser.add_argument("--sizes", default="10,5,35", help="train,vali,test queries per trial")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", default=PAPER_METHODS,
                        help=f"comma-separated (default {PAPER_METHODS})")
    parser.add_argument("--grid", action="append", help="as for svmmap.experiments.trials")
    parser.add_argument("--bin-spacing", choices=("documents", "values"), default="values",
                        help="threshold quantiles of the training documents or of the "
                             "distinct score values (default values: svmmap.features)")
    parser.add_argument("--depth", type=positive_int, default=1000,
                        help="documents per run and query (default 1000)")
    parser.add_argument("--patience", type=positive_int, default=None,
                        help="stop each SVM's C path after this many C values in a row below "
                             "the best on validation (as for svmmap.experiments.trials)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=positive_int, default=1,
                       help="trials run at once in local worker processes (default 1)")
    where.add_argument("--scheduler", metavar="ADDRESS", default=None,
                       help="run the trials on this Dask cluster (tcp://host:port)")
    parser.add_argument("--resume", action="store_true",
                        help="continue an interrupted command (the trials kept in --out)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    out = Path(args.out)
    # one meter for both protocol runs: its estimate of the time left covers them both
    meter = None if args.quiet else Meter(2 * args.trials, workers=args.jobs)
    try:
        with interrupts.handled():
            sections, paths, names, best = _tables(args, out, meter)
    except (SVMMapError, OSError) as err:
        parser.exit(1, f"{parser.prog}: error: {error_line(err)}\n")
    except KeyboardInterrupt:
        parser.exit(interrupts.stopped(parser.prog, "the finished trials are kept in "
                                       f"{out}; rerun the command with --resume to continue"))
    finally:
        if meter is not None:
            meter.close()
    write_text_atomically(out / "tables.md", "\n\n".join(sections) + "\n")
    print(f"{out / 'tables.md'}: {len(paths)} runs; best run {names[best]}")


def _tables(args, out, meter):
    """The sections of ``tables.md`` (module docstring, steps 1-3), the runs' paths and
    names, and the best run's number."""
    selection = [s.strip() for s in args.select.split(",") if s.strip()]
    run_list = read_run_list(args.run_list) if args.run_list else None
    paths, tags, said = select_runs(run_files(args.runs), selection, run_list,
                                    args.run_list)
    runs = trec.RunSet(paths, args.qrels, args.depth)
    names = feature_names(runs.tags, runs.paths)
    ranking = sorted(range(len(paths)), key=lambda r: -runs.maps[r])
    best = ranking[0]
    official = ""
    if run_list is not None and run_list.get(runs.tags[best], {}).get("official_map"):
        official = f"; official MAP {run_list[runs.tags[best]]['official_map']}"
    sections = [
        f"Runs: {said} in {args.runs}; qrels {args.qrels}; best run {names[best]} "
        f"(MAP {runs.maps[best]:.4f}{official}; file {runs.paths[best].name}), left out "
        "of the second data set.",
        tables.markdown(["run", "file", "MAP"],
                        [[names[r], runs.paths[r].name, runs.maps[r]] for r in ranking]),
        "MAP: trec_eval convention over the judged queries, top "
        f"{args.depth} documents per query."]
    for name, title in VARIANTS:
        keep = [r for r in range(len(paths)) if name == "all" or r != best]
        folder = out / name
        _data_set(runs, keep, folder / "data", [names[r] for r in keep], args.resume)
        command = ["--data", str(folder / "data"), "--out", str(folder),
                   "--trials", str(args.trials), "--sizes", args.sizes,
                   "--seed", str(args.seed), "--methods", args.methods,
                   "--bin-spacing", args.bin_spacing]
        command += [x for g in args.grid or [] for x in ("--grid", g)]
        command += ["--patience", str(args.patience)] * bool(args.patience)
        command += (["--scheduler", args.scheduler] if args.scheduler
                    else ["--jobs", str(args.jobs)])
        command += ["--resume"] * args.resume + ["-q"] * args.quiet
        trials.main(command, meter=meter)
        features = ", ".join(f"feature {i} = {names[r]}" for i, r in enumerate(keep, 1))
        sections += [f"## {title.capitalize()} ({len(keep)} base functions)",
                     (folder / "trials.md").read_text().strip(), f"Features: {features}."]
    return sections, paths, names, best


if __name__ == "__main__":
    main()
