"""The paper's protocol (Yue et al. 2007, Section 5): repeated small-sample trials.

From a pool of N queries, T trials (default 50) each train on 10 queries, select the
hyper-parameter on 5 validation queries by MAP (:mod:`svmmap.core.selection`) and test on 35 others.

Balanced design.  The pool is shuffled once (``--seed``) into a cyclic order q_0..q_{N-1};
trial t uses the window of 50 consecutive queries starting at offset o_t = floor(t N / T)
(cyclically): positions o_t .. o_t+9 train, the next 5 validate, the next 35 test.  A query
is in a role in exactly those trials whose offset falls in a cyclic window of the role's size,
so when T is a multiple of N every query is in training T*10/N times, in validation T*5/N
times and in test T*35/N times -- for the paper's N = T = 50: 10, 5 and 35 times.  For other
T the offsets are spread evenly and the counts of any two queries differ by at most one;
queries beyond the window (N > 50) sit out a trial.  The tables state the counts.

Reported, in the layout of the paper's Tables 6-11:

* mean test MAP of each method (mean over trials of the MAP over the trial's test queries);
* W/L of SVM-MAP against each method over queries: per query, its test AP summed over the
  trials in which it was tested; W = queries where SVM-MAP's sum is higher, L = lower;
  ``**``: two-tailed Wilcoxon signed-rank test on these per-query values significant at 0.95
  (:mod:`.stats`);
* the best, 2nd and 3rd best base function: the single input features ranked by their mean
  test MAP over the trials (chosen after the fact on test data, as in the paper -- an
  optimistic reference, not a method).

Features: the binned base-function features of Section 4.2 (``--bin 50``, the default when
:mod:`svmmap.features` is available) or the raw features (``--bin 0``).  The thresholds are
quantiles of the training scores, or with ``--bin-per-query minmax`` evenly spaced over each
query's score range (on LETOR's query-normalised features: evenly spaced over [0, 1), the
spacing the original SVM-MAP sample file suggests).  ``--epsilon`` / ``--algorithm`` change every
SVM's stopping tolerance / formulation.  Base-function rows always rank by the raw input
columns.

Hyper-parameters: each method's grid (:mod:`.registry`; C from 1e-5 to 1e3 for the SVMs) is
recorded in ``trials.json`` (``grid``), with each trial's choice (``chosen``) and whether it
is the grid's smallest or largest value (``end``); a choice at the low end of a C grid is
re-checked at C/100 (``low_end_stable``: the same test ranking means the grid reached the
C -> 0 limit).  The tables count both.

On LETOR data the pool is a data set's queries with at
least one relevant document (a folder: all of Fold1's train, validation and test files, i.e.
every query of the set; or the files given).

    python -m svmmap.experiments.trials --data FILE_OR_DIR [FILE ...] --out DIR \\
        [--trials 50] [--sizes 10,5,35] [--seed 0] [--bin 50] [--bin-per-query minmax] \\
        [--epsilon 1e-3] [--algorithm 1-slack] [--methods ...] [--grid ...]

Writes ``trials.md``, ``trials.csv`` and ``trials.json`` into ``--out``.

Long runs: each finished trial is appended to ``--out``/``trials.jsonl`` at once
(:mod:`.journal`); after an interruption (Ctrl-C, SIGTERM, a crash, a killed job) the same
command with ``--resume`` reads the finished trials back and runs the rest, to the same tables
as an uninterrupted run.  Ctrl-C and SIGTERM stop the run at once -- inside a fit too -- keep
the finished trials and end with one line saying how to resume, exit status 130 / 143
(svmmap.core.interrupts).  Progress: one line per trial with the trials done and an estimate of
the time left (:mod:`.meter`; a tqdm bar on a terminal).

Parallel trials (:mod:`.units`): ``--jobs N`` runs N trials at a time on local worker
processes, ``--scheduler tcp://host:port`` on the workers of a Dask cluster (each worker reads
``--data`` itself, once: the paths must be valid there).  The tables are the same, bit for
bit, as one process's (wall times aside); ``--resume`` and the estimate work as in one process.
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

from ..commands.common import ArgumentParser, positive_int
from ..core.selection import low_end_stable, select
from ..data.atomic import write_text_atomically
from ..errors import SVMMapError
from ..metrics import interpolated_precision
from . import registry, stats, tables
from .datasets import load_pool
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

    #: one trial: (train, vali, test) index arrays into the pool
    Trial = tuple[np.ndarray, ...]
    #: what TrialWork.load reads: (pool, ids, methods, design)
    TrialState = tuple[Split, np.ndarray, list[Method], list[Trial]]
    #: a result of run (JSON)
    Results = dict[str, Any]

SIZES = (10, 5, 35)
ROLES = ("train", "vali", "test")
REFERENCE = "svm-map"
#: the file in ``--out`` that keeps every finished trial (:mod:`.journal`)
JOURNAL = "trials.jsonl"


def balanced_design(n_queries: int, n_trials: int, sizes: Sequence[int] = SIZES,
                    seed: int = 0) -> list[Trial]:
    """Trials of the balanced cyclic design (module docstring).

    Returns a list of ``n_trials`` tuples ``(train, vali, test)`` of index arrays into the
    pool (0..n_queries-1).
    """
    need = sum(sizes)
    if min(sizes) < 1 or n_queries < need:
        raise SVMMapError(f"the design needs {need} distinct queries per trial "
                          f"(sizes {','.join(map(str, sizes))}) but the pool has {n_queries}")
    if n_trials < 1:
        raise SVMMapError(f"--trials must be at least 1, got {n_trials}")
    order = np.random.default_rng(seed).permutation(n_queries)
    bounds = np.cumsum((0, *sizes))
    design = []
    for t in range(n_trials):
        window = order[(t * n_queries // n_trials + np.arange(need)) % n_queries]
        design.append(tuple(window[a:b] for a, b in zip(bounds[:-1], bounds[1:])))
    return design


def role_counts(design: Sequence[Trial], n_queries: int) -> dict[str, np.ndarray]:
    """``{role: array}``: how often each pool query is in each role over the trials."""
    return {role: np.bincount(np.concatenate([trial[r] for trial in design]),
                              minlength=n_queries)
            for r, role in enumerate(ROLES)}





def run_trial(pool: Split, ids: np.ndarray, methods: Sequence[Method], trial: Trial,
              patience: int | None = None) -> Record:
    """One trial ``(train, vali, test)`` of the design: per method, the JSON-able record of
    its grid search and test results (``map``, ``grid``, ``chosen``, ``end``,
    ``low_end_stable``, ``seconds``, ``failed``, ``ap`` per test query, ``pr11``)."""
    from ..features import shared_binning

    parts = [pool.queries(ids[idx]) for idx in trial]
    record = {}
    with shared_binning():  # the SVMs bin each part once per distinct feature map
        for method in methods:
            record[method.name] = _method_record(method, parts, patience)
    return record


def _method_record(method, parts, patience):
    """The JSON-able record of one method in one trial (:func:`run_trial`)."""
    chosen = select(method, parts[0], parts[1], patience)
    scores = chosen.scores(parts[2])
    ap = stats.ap_by_query(scores, parts[2])
    return {"map": float(np.mean(list(ap.values()))), "grid": list(chosen.grid),
            "chosen": chosen.value, "end": chosen.end,
            "low_end_stable": low_end_stable(chosen, parts[0], parts[2]),
            "seconds": chosen.seconds, "failed": len(chosen.failed),
            "ap": {str(q): v for q, v in ap.items()},
            "pr11": interpolated_precision(scores, parts[2].y, parts[2].qid).tolist()}


@dataclass(frozen=True)
class TrialWork:
    """Every trial of one protocol run, as :mod:`.units` runs them: the data paths, the
    methods (names, ``--grid`` options, binning and SVM settings) and the design; small and
    picklable, so that a worker process rebuilds the pool and the methods from it once."""

    data: tuple[str, ...]
    methods: tuple[str, ...]
    grids: tuple[str, ...] = ()
    n_bins: int = 0
    bin_per_query: str | None = None
    settings: tuple[tuple[str, Any], ...] = ()
    n_trials: int = 50
    sizes: tuple[int, ...] = SIZES
    seed: int = 0
    bin_spacing: str | None = None
    patience: int | None = None

    def make_methods(self) -> list[Method]:
        """The configured methods (svmmap.experiments.registry)."""
        methods = registry.select_methods(list(self.methods),
                                          registry.parse_grids(list(self.grids)),
                                          self.n_bins or None)
        return registry.configure_svms(methods, self.bin_per_query, self.bin_spacing,
                                       **dict(self.settings))

    def load(self) -> TrialState:
        """(pool, ids, methods, design): read the pool, build the methods."""
        pool, ids = load_pool(list(self.data))
        return pool, ids, self.make_methods(), balanced_design(len(ids), self.n_trials,
                                                               self.sizes, self.seed)

    def run(self, state: TrialState, key: str) -> Record:
        """The record of trial ``key`` (its index, a string)."""
        pool, ids, methods, design = state
        return run_trial(pool, ids, methods, design[int(key)], self.patience)


def run(work: TrialWork, state: TrialState | None = None, journal: Journal | None = None,
        meter: Meter | None = None, log: Callable[[str], object] | None = None, jobs: int = 1,
        scheduler: str | None = None) -> Results:
    """Run the protocol ``work`` (a :class:`TrialWork`); a JSON-able dict.

    ``state``: ``work.load()`` when the caller has loaded it.  ``journal``
    (:class:`.journal.Journal`): trials found in it are taken from it, and each trial
    finished here is added to it as it finishes; ``meter`` (:class:`.meter.Meter`) is
    stepped after each trial finished here (else ``log``, if given, gets one line per trial).
    ``jobs`` / ``scheduler``: where the trials run (:func:`.units.run_units`)."""
    start = time.perf_counter()
    pool, ids, methods, design = state = work.load() if state is None else state
    n_trials = len(design)
    keys = [str(t) for t in range(n_trials)]

    def describe(key: str, record: Record) -> str:
        return f"trial {int(key) + 1}/{n_trials}: " + "  ".join(
            f"{m.label} {record[m.name]['map']:.4f}" for m in methods)

    records = run_journaled(work, keys, describe, journal, meter, log, jobs, scheduler, state)
    query_keys = [str(q) for q in ids.tolist()]
    results: dict[str, dict[str, Any]] = {
        m.name: {"label": m.label, "param": m.param, "grid": None, "trial_map": [],
                 "chosen": [], "end": [], "low_end_stable": [], "seconds": 0.0,
                 "failed": 0, "per_query": dict.fromkeys(query_keys, 0.0), "pr11": []}
        for m in methods}
    for key in keys:
        record = records[key]
        for method in methods:
            done, entry = record[method.name], results[method.name]
            entry["trial_map"].append(done["map"])
            entry["grid"] = done["grid"]
            for name in ("chosen", "end", "low_end_stable", "pr11"):
                entry[name].append(done[name])
            entry["seconds"] += done["seconds"]
            entry["failed"] += done["failed"]
            for q, v in done["ap"].items():
                entry["per_query"][q] += v
    for entry in results.values():
        entry["pr11"] = np.mean(entry["pr11"], axis=0).tolist()
    counts = role_counts(design, len(ids))
    return {"pool_queries": len(ids), "trials": n_trials, "sizes": list(work.sizes),
            "seed": work.seed,
            "role_counts": {r: [int(c.min()), int(c.max())] for r, c in counts.items()},
            "methods": results, "base_functions": _base_functions(pool, ids, design,
                                                                  query_keys),
            "seconds": time.perf_counter() - start}


def _base_functions(pool, ids, design, keys):
    """Every input column as a ranking: mean test MAP over the trials and per-query AP summed
    over the trials (a query's AP under a fixed feature does not depend on the trial)."""
    split = pool.queries(ids)
    X = split.X.tocsc() if hasattr(split.X, "tocsc") else split.X
    times_tested = role_counts(design, len(ids))["test"]
    rows = []
    for j in range(X.shape[1]):
        column = X[:, j]
        ap = stats.ap_by_query(column.toarray().ravel() if hasattr(column, "toarray")
                               else np.array(column), split)
        per_query = np.array([ap[q] for q in ids.tolist()])
        trial_map = [per_query[test].mean() for _, _, test in design]
        rows.append({"feature": j + 1, "map": float(np.mean(trial_map)),
                     "per_query": dict(zip(keys, (per_query * times_tested).tolist()))})
    return sorted(rows, key=lambda r: -r["map"])


def grid_ends(results: Results) -> list[list[str]]:
    """Rows ``[label, grid, at low end, at high end, low end stable]`` of every method with
    an ordered grid (not the best-feature choice): how many trials chose the grid's smallest
    / largest value, and of the low-end choices of a C grid, in how many the model trained
    with C/100 ranked the test queries identically
    (:func:`svmmap.core.selection.low_end_stable`)."""
    rows = []
    for entry in results["methods"].values():
        if entry["param"] == "feature":
            continue
        grid = entry["grid"]
        n = len(entry["end"])
        low, high = entry["end"].count("low"), entry["end"].count("high")
        checked = [s for s in entry["low_end_stable"] if s is not None]
        stable = f"{sum(checked)}/{len(checked)}" if checked else "-"
        shown = ", ".join(f"{v:g}" for v in grid) if len(grid) <= 12 else \
            f"{min(grid):g} ... {max(grid):g} ({len(grid)} values)"
        rows.append([entry["label"], f"{entry['param']} in {shown}", f"{low}/{n}", f"{high}/{n}",
                     stable])
    return rows


def render(results: Results, command: str, data: str, features: str) -> tuple[str, str]:
    """Markdown and CSV text of a :func:`run` result, rows in the paper's order."""
    methods = results["methods"]
    keys = sorted(next(iter(methods.values()))["per_query"])
    rows = [(entry["label"], float(np.mean(entry["trial_map"])), entry["per_query"],
             entry["seconds"]) for entry in methods.values()]
    rows += [(f"{rank} base function (feature {b['feature']})", b["map"], b["per_query"], None)
             for rank, b in zip(("Best", "2nd best", "3rd best"), results["base_functions"])]
    ref = methods.get(REFERENCE)
    table, csv_rows = [], []
    for label, value, per_query, seconds in rows:
        comparison = None
        if ref is not None and per_query is not ref["per_query"]:
            comparison = stats.compare([ref["per_query"][k] for k in keys],
                                       [per_query[k] for k in keys])
        table.append([label, value, comparison.cell() if comparison else "-",
                      f"{comparison.p_value:.3g}" if comparison else "",
                      "" if seconds is None else f"{seconds:.1f}"])
        csv_rows.append([label, value, comparison and comparison.wins,
                         comparison and comparison.losses, comparison and comparison.p_value,
                         seconds])
    counts = results["role_counts"]
    sizes = results["sizes"]
    md = "\n\n".join([
        f"Command: `{command}`  \nDate: {datetime.date.today().isoformat()}; data: {data}; "
        f"total wall time {results['seconds']:.0f} s",
        f"Pool: {results['pool_queries']} queries with a relevant document; "
        f"{results['trials']} trials of {sizes[0]} training / {sizes[1]} validation / "
        f"{sizes[2]} test queries (balanced cyclic design, seed {results['seed']}); "
        "times per query in training / validation / test: "
        + " / ".join(f"{lo}" if lo == hi else f"{lo}-{hi}" for lo, hi in counts.values())
        + f". Features: {features}. Hyper-parameter per trial by validation MAP.",
        tables.markdown(["Method", "MAP", "W/L (SVM-MAP vs)", "Wilcoxon p", "seconds"],
                        table),
        "MAP: mean over trials of the test MAP (LETOR convention). W/L: queries where "
        "SVM-MAP's test AP, summed over the trials testing the query, is higher / lower. "
        "`**`: two-tailed Wilcoxon signed-rank test significant at 0.95. Base function rows "
        "rank by one raw input feature, chosen by its test MAP (as in the paper). seconds: "
        "total grid-search time over all trials.",
    ])
    ends = grid_ends(results)
    if ends:
        md += "\n\n" + "\n\n".join([
            "### Where the chosen hyper-parameter sits in its grid",
            tables.markdown(["Method", "grid", "chosen at low end", "chosen at high end",
                             "low end: same test ranking at C/100"], ends),
            "A choice at the low end of a C grid is checked by training with C/100 as well: "
            "the same test ranking means the grid reached the C -> 0 limit, where "
            "the ranking no longer depends on C."])
    failed = [f"{e['label']} {e['failed']}" for e in methods.values() if e["failed"]]
    if failed:
        md += ("\n\nGrid values whose training failed in the QP solver (skipped in model "
               "selection), over all trials: " + ", ".join(failed) + ".")
    csv = tables.csv_text(["method", "map", "wins", "losses", "wilcoxon_p", "seconds"],
                          csv_rows)
    return md + "\n", csv


def _default_bins():
    try:
        import svmmap.features  # noqa: F401
    except ImportError:
        return 0
    return 50


def _parser() -> ArgumentParser:
    """The command's options (module docstring)."""
    parser = ArgumentParser(
        prog="python -m svmmap.experiments.trials",
        description="The paper's protocol: T balanced trials of 10 train / 5 validation / "
                    "35 test queries; Tables 6-11 layout.")
    parser.add_argument("--data", required=True, nargs="+",
                        help="data file(s), or a LETOR folder (all queries of Fold1)")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--trials", type=int, default=50,
                        help="number of trials T (default 50, as in the paper): trial t "
                             "takes a window of train / vali / test queries at offset t*N/T "
                             "of the shuffled pool of N queries (balanced design, see the "
                             "module docstring)")
    parser.add_argument("--sizes", default="10,5,35", help="train,vali,test queries per trial")
    parser.add_argument("--seed", type=int, default=0, help="seed of the pool permutation")
    parser.add_argument("--bin", type=int, default=None,
                        help="thresholds per base function of the binned features "
                             "(0: raw features; default 50 when svmmap.features exists)")
    parser.add_argument("--methods", default=None,
                        help=f"comma-separated, from: {', '.join(registry.CANDIDATES)} "
                             "(default: all available)")
    parser.add_argument("--grid", action="append",
                        help="'v1,v2,...' for every C grid, or 'method=v1,v2,...' (repeatable)")
    parser.add_argument("--bin-per-query", choices=("percentile", "minmax"), default=None,
                        help="make each base score relative to its query before binning, for "
                             "every SVM (svmmap.features; minmax on LETOR's query-normalised "
                             "features = thresholds evenly spaced over the score range)")
    parser.add_argument("--bin-spacing", choices=("documents", "values"), default=None,
                        help="what the thresholds' quantiles count: training documents "
                             "(default) or distinct score values (TREC runs, where most "
                             "pooled documents share a run's 'not retrieved' score; "
                             "svmmap.features)")
    parser.add_argument("--epsilon", type=float, default=None,
                        help=f"stopping tolerance of every SVM (default "
                             f"{registry.SVM_SETTINGS['epsilon']:g})")
    parser.add_argument("--algorithm", choices=("1-slack", "n-slack"), default=None,
                        help=f"cutting-plane formulation of every SVM (default "
                             f"{registry.SVM_SETTINGS['algorithm']})")
    parser.add_argument("--patience", type=positive_int, default=None,
                        help="stop an SVM's C path once this many C values in a row score "
                             "below the best so far on validation (default: the whole grid; "
                             "svmmap.core.selection.select_c)")
    add_run_options(parser, "continue the interrupted run kept in --out (trials.jsonl): its "
                            "finished trials are read back, the others are run")
    return parser


def main(argv: Sequence[str] | None = None, meter: Meter | None = None) -> None:
    """The command (module docstring).  ``meter``: a :class:`.meter.Meter` owned by the
    caller, counting this run's trials among others (trec_tables: both of its runs); it is
    stepped, not closed.  Ctrl-C / SIGTERM: one line on stderr and SystemExit(130 / 143)."""
    parser = _parser()
    args = parser.parse_args(argv)
    command = "python -m svmmap.experiments.trials " + shlex.join(
        sys.argv[1:] if argv is None else argv)
    n_bins = _default_bins() if args.bin is None else args.bin
    try:
        sizes = tuple(int(s) for s in args.sizes.split(","))
        if len(sizes) != 3 or min(sizes) < 1:
            raise ValueError
    except ValueError:
        parser.error(f"bad --sizes {args.sizes!r}: expected train,vali,test, three positive "
                     "numbers of queries")
    print(run_command(parser, lambda kept: _trials(args, command, n_bins, sizes, meter, kept),
                      Kept("trials", args.trials)))


def _trials(args: argparse.Namespace, command: str, n_bins: int,
            sizes: tuple[int, ...], meter: Meter | None, kept: Kept) -> str:
    """The run of :func:`main`: the trials (those ``--resume`` finds in the journal read
    back), then the tables written; returns the markdown.  ``kept.journal``: the journal,
    once open."""
    # before the run (hours of work), not after it
    tables.check_out_folder(args.out, ("trials.md", "trials.csv", "trials.json"))
    if args.bin_per_query and not n_bins:
        raise SVMMapError("--bin-per-query needs binned features (--bin N, N > 0)")
    if args.bin_spacing and not n_bins:
        raise SVMMapError("--bin-spacing needs binned features (--bin N, N > 0)")
    settings = {k: v for k, v in (("epsilon", args.epsilon),
                                  ("algorithm", args.algorithm)) if v is not None}
    names = registry.parse_names(args.methods)
    chosen = registry.select_methods(names, registry.parse_grids(args.grid), n_bins or None)
    work = TrialWork(tuple(args.data), tuple(m.name for m in chosen),
                     tuple(args.grid or ()), n_bins, args.bin_per_query,
                     tuple(sorted(settings.items())), args.trials, sizes, args.seed,
                     args.bin_spacing, args.patience)
    work.make_methods()  # the settings refused before the data is read
    state = work.load()
    svm = {**registry.SVM_SETTINGS, **settings}
    config = {"protocol": "trials",
              "data": [str(Path(d).resolve()) for d in args.data],
              "methods": list(work.methods), "grid": args.grid or [],
              "trials": args.trials, "sizes": list(sizes), "seed": args.seed,
              "bin": n_bins, "bin_per_query": args.bin_per_query, "svm": svm,
              **({"bin_spacing": args.bin_spacing} if args.bin_spacing else {}),
              **({"patience": args.patience} if args.patience else {})}
    journal = kept.journal = Journal(Path(args.out) / JOURNAL, config, args.resume)
    own_meter = None
    if meter is None and not args.quiet:
        meter = own_meter = Meter(args.trials, workers=args.jobs)
    if meter is not None:
        meter.restored(len(journal.done))
    try:
        results = run(work, state, journal=journal, meter=meter, jobs=args.jobs,
                      scheduler=args.scheduler)
    finally:
        journal.close()
        if own_meter is not None:
            own_meter.close()
    return write_tables(results, command, args, n_bins, svm)


def write_tables(results: Results, command: str, args: argparse.Namespace, n_bins: int,
                 svm: dict[str, Any]) -> str:
    """Write ``trials.md``, ``trials.csv`` and ``trials.json`` into ``args.out``, each
    atomically; return the markdown."""
    features = (f"binned, {n_bins} thresholds per base function (Section 4.2)" if n_bins
                else "raw input features")
    if args.bin_per_query:
        features += f", scores made relative to their query first ({args.bin_per_query})"
    elif args.bin_spacing == "values" and n_bins:
        features += ", thresholds at quantiles of the distinct training score values"
    features += f"; SVMs: {svm['algorithm']}, epsilon {svm['epsilon']:g}"
    if args.patience:
        features += (f"; each SVM's C path (warm-started) stopped after {args.patience} C "
                     "values in a row below the best on validation")
    data = " ".join(args.data)
    md, csv = render(results, command, data, features)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomically(out / "trials.md", md)
    write_text_atomically(out / "trials.csv", csv)
    write_text_atomically(out / "trials.json", json.dumps(
        {"command": command, "data": data, "features": features, **results}, indent=1))
    return md


if __name__ == "__main__":
    # run the importable module's main: its TrialWork pickles by reference (:mod:`.units`)
    from svmmap.experiments.trials import main as trials_main

    trials_main()
