"""The LETOR protocol: 5-fold cross-validation with model selection on validation MAP.

For each fold (``FoldN/{train,vali,test}.txt``) and each method: train on ``train`` for every
value of the method's grid, keep the value with the best MAP on ``vali``
(:mod:`svmmap.core.selection`), and evaluate that model on ``test``: MAP, NDCG@1/3/5/10, P@1/3/5/10
(:func:`svmmap.metrics.evaluate`, LETOR convention: queries without a relevant document have
AP 0 and stay in the mean, NDCG gain 2^label - 1).  The tables report every fold and the
mean over folds (the LETOR papers' figure), the chosen hyper-parameter, the wall time of the
grid search per fold, and W/L counts with a Wilcoxon test of SVM-MAP against each method over
the per-query test AP of all folds (each query is tested in exactly one fold).

    python -m svmmap.experiments.letor --data ../shared/data/OHSUMED --out results/ohsumed \\
        [--methods svm-map,svm-roc,...] [--grid 0.1,1,10] [--grid adarank-map=10,50] [--folds 1,2]

Writes ``letor.md``, ``letor.csv`` (one row per method and fold, and the means) and
``letor.json`` (also per-query test AP and 11-point precision-recall curves, for
:mod:`.plots`) into ``--out``.

Long runs: each finished (fold, method) grid search is appended to ``--out``/``letor.jsonl``
(:mod:`.journal`); ``--resume`` continues an interrupted run to the same tables.  Ctrl-C and
SIGTERM stop the run at once -- inside a fit too --, keep the finished units and end with one
line saying how to resume, exit status 130 / 143 (svmmap.core.interrupts).  Progress: one line per
fold and method with an estimate of the time left (:mod:`.meter`).

Parallel units (:mod:`.units`): ``--jobs N`` runs N fold-method grid searches at a time on
local worker processes, ``--scheduler tcp://host:port`` on a Dask cluster's workers (each
reads the folds it needs itself, once); the tables are the same as one process's.
"""

from __future__ import annotations

import datetime
import json
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .. import metrics
from ..commands.common import ArgumentParser
from ..core.selection import select
from ..data.atomic import write_text_atomically
from ..errors import SVMMapError
from ..metrics import interpolated_precision
from . import registry, stats, tables
from .datasets import find_folds, load_fold
from .driver import Kept, add_run_options, run_command
from .journal import Journal
from .meter import Meter
from .units import run_journaled

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import Any

    from .datasets import Split
    from .journal import Record
    from .registry import Method

    #: a result of run: {"data": ..., "methods": {name: {...}}, "seconds": ...} (JSON)
    Results = dict[str, Any]

CUTOFFS = (1, 3, 5, 10)
MEASURES = ("MAP", *(f"NDCG@{k}" for k in CUTOFFS), *(f"P@{k}" for k in CUTOFFS))
REFERENCE = "svm-map"
#: the file in ``--out`` that keeps every finished fold-method run (:mod:`.journal`)
JOURNAL = "letor.jsonl"
#: Not run unless named: their per-query normalisation repairs raw retrieval scores (the
#: LETOR features are already normalised per query) and their binned classification SVMs
#: take minutes per fold.
NOT_BY_DEFAULT = ("svm-acc3", "svm-acc4")


def run_unit(method: Method, split: dict[str, Split]) -> Record:
    """The JSON-able record of one method on one fold (``split``: its train / vali / test
    Splits): the chosen value, validation and test measures, time, failures, 11-point
    curve and per-query test AP."""
    test = split["test"]
    chosen = select(method, split["train"], split["vali"])
    scores = chosen.scores(test)
    row = metrics.evaluate(scores, test.y, test.qid, at=CUTOFFS)
    ap = stats.ap_by_query(scores, test)
    return {"grid": list(chosen.grid),
            "value": tables.format_value(chosen.value, method.param), "end": chosen.end,
            "vali_map": chosen.vali_map[chosen.value], "seconds": chosen.seconds,
            "failed": [value for value, _ in chosen.failed],
            **{m: float(row[m]) for m in MEASURES},
            "pr11": interpolated_precision(scores, test.y, test.qid).tolist(),
            "ap": {str(q): v for q, v in ap.items()}}


@dataclass(frozen=True)
class LetorWork:
    """Every fold-method unit of one run, as :mod:`.units` runs them: the fold folders
    (``((fold, path), ...)``), the method names and the ``--grid`` options; small and
    picklable.  A process reads each fold it needs once."""

    folds: tuple[tuple[int, str], ...]
    methods: tuple[str, ...]
    grids: tuple[str, ...] = ()

    def load(self) -> tuple[dict[str, Method], dict[str, dict[str, Split]]]:
        """(methods by name, folds read so far): the folds are read as units need them."""
        methods = registry.select_methods(list(self.methods),
                                          registry.parse_grids(list(self.grids)))
        return {m.name: m for m in methods}, {}

    def run(self, state: tuple[dict[str, Method], dict[str, dict[str, Split]]],
            key: str) -> Record:
        """The record of unit ``key``, ``"<fold>:<method>"``."""
        methods, splits = state
        fold, name = key.split(":", 1)
        if fold not in splits:
            splits[fold] = load_fold(dict(self.folds)[int(fold)])
        return run_unit(methods[name], splits[fold])


def run(work: LetorWork, journal: Journal | None = None, meter: Meter | None = None,
        log: Callable[[str], object] | None = None, jobs: int = 1,
        scheduler: str | None = None, data: str | None = None) -> Results:
    """Run the protocol ``work`` (a :class:`LetorWork`); returns a JSON-able dict (see
    :func:`render`; ``data`` names the data folder there).

    ``journal`` (:class:`.journal.Journal`): (fold, method) units found in it are taken from
    it and each unit finished here is added as it finishes (key ``"<fold>:<method>"``);
    ``meter`` (:class:`.meter.Meter`) is stepped after each unit finished here (else ``log``,
    if given, gets one line per unit).  ``jobs`` / ``scheduler``: where the units run
    (:func:`.units.run_units`)."""
    state = work.load()
    methods = list(state[0].values())
    results: dict[str, dict[str, Any]] = {
        m.name: {"label": m.label, "param": m.param, "grid": None, "folds": {},
                 "per_query": {}} for m in methods}
    start = time.perf_counter()
    keys = [f"{fold}:{m.name}" for fold, _ in work.folds for m in methods]

    def describe(key: str, record: Record) -> str:
        fold, name = key.split(":", 1)
        return (f"Fold{fold} {state[0][name].label:<14} {record['value']:<12} vali MAP "
                f"{record['vali_map']:.4f}  test MAP {record['MAP']:.4f}  "
                f"{record['seconds']:.1f}s")

    records = run_journaled(work, keys, describe, journal, meter, log, jobs, scheduler, state)
    for key in keys:
        record = records[key]
        fold, name = key.split(":", 1)
        entry = results[name]
        entry["grid"] = record["grid"]
        entry["folds"][int(fold)] = {k: v for k, v in record.items() if k not in ("grid", "ap")}
        entry["per_query"].update({f"{fold}:{q}": v for q, v in record["ap"].items()})
    for entry in results.values():
        entry["pr11"] = np.mean([f["pr11"] for f in entry["folds"].values()], axis=0).tolist()
    return {"data": str(data), "methods": results, "seconds": time.perf_counter() - start}


def _mean(entry, key):
    return float(np.mean([f[key] for f in entry["folds"].values()]))


def _comparisons(results):
    """``{name: Comparison}`` of SVM-MAP against every other method (per-query test AP)."""
    methods = results["methods"]
    if REFERENCE not in methods:
        return {}
    ref = methods[REFERENCE]["per_query"]
    keys = sorted(ref)
    return {name: stats.compare([ref[k] for k in keys], [m["per_query"][k] for k in keys])
            for name, m in methods.items() if name != REFERENCE}


def render(results: Results, command: str) -> tuple[str, str]:
    """Markdown and CSV text of a :func:`run` result."""
    methods = results["methods"]
    folds = sorted({f for m in methods.values() for f in m["folds"]})
    comparisons = _comparisons(results)
    summary = []
    for name, entry in methods.items():
        cell = comparisons[name].cell() if name in comparisons else "-"
        summary.append([entry["label"], *(_mean(entry, m) for m in MEASURES), cell,
                        _mean(entry, "seconds")])
    per_fold = [[entry["label"], *(entry["folds"][f]["MAP"] for f in folds),
                 _mean(entry, "MAP")] for entry in methods.values()]
    chosen = [[entry["label"], f, entry["folds"][f]["value"], entry["folds"][f]["vali_map"],
               entry["folds"][f]["MAP"], entry["folds"][f]["seconds"]]
              for entry in methods.values() for f in folds]
    n_queries = len(next(iter(methods.values()))["per_query"])
    md = "\n\n".join([
        f"Command: `{command}`  \nDate: {datetime.date.today().isoformat()}; "
        f"data: {results['data']}; total wall time {results['seconds']:.0f} s",
        f"### Test set, mean over folds {', '.join(map(str, folds))} (LETOR convention)",
        tables.markdown(["Method", *MEASURES, "W/L vs SVM-MAP", "seconds/fold"],
                        [r[:-1] + [f"{r[-1]:.1f}"] for r in summary]),
        f"W/L: queries where SVM-MAP's test AP is higher / lower, over the {n_queries} test "
        "queries of all folds; `**`: two-tailed Wilcoxon signed-rank test significant at "
        "0.95. seconds/fold: wall time of the grid search (all values, validation included).",
        "### Test MAP per fold",
        tables.markdown(["Method", *(f"Fold{f}" for f in folds), "mean"], per_fold),
        "### Chosen hyper-parameter (by validation MAP) and grid-search time",
        tables.markdown(["Method", "fold", "chosen", "vali MAP", "test MAP", "seconds"],
                        [r[:-1] + [f"{r[-1]:.2f}"] for r in chosen]),
    ])
    failed = [f"{e['label']} Fold{f}: {', '.join(map(str, e['folds'][f]['failed']))}"
              for e in methods.values() for f in folds if e["folds"][f]["failed"]]
    if failed:
        md += ("\n\nGrid values whose training failed in the QP solver (skipped in model "
               "selection): " + "; ".join(failed) + ".")
    header = ["method", "fold", "chosen", "vali_map", *MEASURES, "seconds"]
    rows = [[name, f, entry["folds"][f]["value"], entry["folds"][f]["vali_map"],
             *(entry["folds"][f][m] for m in MEASURES), entry["folds"][f]["seconds"]]
            for name, entry in methods.items() for f in folds]
    rows += [[name, "mean", "", "", *(_mean(entry, m) for m in MEASURES),
              _mean(entry, "seconds")] for name, entry in methods.items()]
    return md + "\n", tables.csv_text(header, rows)


def parse_folds(text: str | None) -> list[int] | None:
    """``--folds``: ``"1,2"`` -> [1, 2]; None -> None (every fold)."""
    if text is None:
        return None
    try:
        return [int(f) for f in text.split(",") if f.strip()]
    except ValueError:
        raise SVMMapError(f"bad --folds {text!r}: expected e.g. 1,2") from None


def main(argv: Sequence[str] | None = None) -> None:
    """The command (module docstring).  Ctrl-C / SIGTERM: one line on stderr and
    SystemExit(130 / 143)."""
    parser = ArgumentParser(
        prog="python -m svmmap.experiments.letor",
        description="LETOR 5-fold protocol: hyper-parameters by validation MAP, test metrics "
                    "per fold and averaged.")
    parser.add_argument("--data", required=True, help="folder with Fold1..Fold5")
    parser.add_argument("--methods", default=None,
                        help="comma-separated, from: "
                             f"{', '.join(registry.CANDIDATES)} (default: all available "
                             f"except {', '.join(NOT_BY_DEFAULT)})")
    parser.add_argument("--grid", action="append",
                        help="'v1,v2,...' for every C grid, or 'method=v1,v2,...' (repeatable)")
    parser.add_argument("--folds", default=None, help="e.g. 1,2 (default: all)")
    parser.add_argument("--out", required=True, help="output folder")
    add_run_options(parser, "continue the interrupted run kept in --out (letor.jsonl): its "
                            "finished fold-method pairs are read back, the others are run")
    args = parser.parse_args(argv)
    command = "python -m svmmap.experiments.letor " + shlex.join(
        sys.argv[1:] if argv is None else argv)
    print(run_command(parser, lambda kept: _letor(args, command, kept),
                      Kept("fold-method runs")))


def _letor(args: argparse.Namespace, command: str, kept: Kept) -> str:
    """The run of :func:`main`: every fold-method pair (those ``--resume`` finds in the
    journal read back), then the tables written; returns the markdown.  ``kept``: the
    journal once open, and the number of pairs."""
    # before the run (hours of work), not after it
    tables.check_out_folder(args.out, ("letor.md", "letor.csv", "letor.json"))
    methods = registry.select_methods(registry.parse_names(args.methods),
                                      registry.parse_grids(args.grid),
                                      exclude=NOT_BY_DEFAULT)
    folds = find_folds(args.data, parse_folds(args.folds))
    work = LetorWork(tuple((f, str(path)) for f, path in folds.items()),
                     tuple(m.name for m in methods), tuple(args.grid or ()))
    config = {"protocol": "letor", "data": str(Path(args.data).resolve()),
              "methods": [m.name for m in methods], "grid": args.grid or [],
              "folds": list(folds), "svm": registry.SVM_SETTINGS}
    journal = kept.journal = Journal(Path(args.out) / JOURNAL, config, args.resume)
    kept.total = len(folds) * len(methods)
    meter = None if args.quiet else Meter(kept.total, len(journal.done), label="runs",
                                          workers=args.jobs)
    try:
        results = run(work, journal=journal, meter=meter, jobs=args.jobs,
                      scheduler=args.scheduler, data=args.data)
    finally:
        journal.close()
        if meter is not None:
            meter.close()
    md, csv = render(results, command)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomically(out / "letor.md", md)
    write_text_atomically(out / "letor.csv", csv)
    write_text_atomically(out / "letor.json",
                          json.dumps({"command": command, **results}, indent=1))
    return md


if __name__ == "__main__":
    # run the importable module's main: its LetorWork pickles by reference (:mod:`.units`)
    from svmmap.experiments.letor import main as letor_main

    letor_main()
