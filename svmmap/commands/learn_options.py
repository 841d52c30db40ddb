"""svmmap_learn's options: the parser, built from the parameter table
(svmmap.core.params.PARAMETERS), the checks of how options combine, and the SVMMap parameters
they describe -- all before numpy is imported (``--help`` and argument errors stay fast).
"""

from __future__ import annotations

import argparse
import functools
import os
from typing import TYPE_CHECKING, Any

from ..core.params import (
    ALGORITHMS,
    DEFAULT_CACHE_SIZE,
    DEFAULT_THRESHOLDS,
    PARAMETERS,
    PER_QUERY,
    SVMMAP_DEFAULTS,
    check_svmmap,
    learn_flags,
)
from .common import (
    ArgumentParser,
    HelpFormatter,
    add_force_option,
    add_group_option,
    add_table_options,
    check_params,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..features import BinnedFeatureMap

__all__ = ["SVMSTRUCT_ONLY", "add_query_weights_option", "learn_params", "learn_parser",
           "max_dask_workers", "refuse_argv"]


def learn_parser() -> ArgumentParser:
    """svmmap_learn's parser: the files, every option of the parameter table, and the
    options every command shares."""
    parser = ArgumentParser(
        formatter_class=HelpFormatter,
        prog="svmmap_learn",
        description="Train a linear ranking function with a structural SVM that optimises "
                    "Mean Average Precision (Yue et al., SIGIR 2007).",
        epilog="The objective is 1/2|w|^2 + C/n sum xi_q, n = training queries that have a "
               "relevant and a non-relevant document, as in SVMstruct 3.x and the original "
               "SVM-map V1.00 (svmCnorm = C/n), so -c C means the same there and here.  "
               "With -l acc it is the classification "
               "SVM 1/2|w|^2 + C/n sum hinge_d, n = training documents.")
    parser.add_argument("train_file", help="SVMlight/LETOR file (gzip, bzip2 or xz too; - for "
                                           "standard input), or an index file listing data "
                                           "files one per line; with --dask-workers or "
                                           "--scheduler a glob of shards (quote it)")
    parser.add_argument("model_file", help="where to write the model (JSON)")
    add_table_options(parser, PARAMETERS)
    add_group_option(parser)
    add_query_weights_option(parser)
    add_force_option(parser, "an svmmap model file")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return parser


def add_query_weights_option(parser: argparse.ArgumentParser) -> None:
    """--query-weights FILE: a weight per training query (fit's ``sample_weight``)."""
    parser.add_argument("--query-weights", default=None, metavar="FILE",
                        help="'qid weight' per line, every training query listed: the "
                             "objective becomes 1/2|w|^2 + C/V sum_q v_q xi_q, V the sum of "
                             "the weights of the queries that carry constraints (weight 2: "
                             "the query counted twice; 0: left out)")


def learn_params(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, Any]:
    """The parameters of the SVMMap the options describe (all of SVMMap's constructor
    arguments: each option of the table as given, but for the few the command spells its own
    way), checked by SVMMap's own rules (svmmap.core.params, before numpy is imported)."""
    _check_combinations(parser, args)
    features = _feature_map(args)
    params = {name: getattr(args, name, default) for name, default in SVMMAP_DEFAULTS.items()}
    params.update(
        C=args.C[0], algorithm=ALGORITHMS[args.algorithm], verbose=0, feature_map=features,
        cost_ratio=args.cost_ratio if args.cost_ratio is not None else (
            "balanced" if args.acc_variant == 2 else 1.0),
        cache_size=(DEFAULT_CACHE_SIZE if args.cache_size is None else args.cache_size)
        if args.algorithm == "4" else 0)
    flags = learn_flags()
    for C in args.C:  # every C of a path, as the estimator checks one
        check_params(parser, functools.partial(check_svmmap, "SVMMap", {**params, "C": C}),
                     flags)
    if features is not None:
        check_params(parser, features.check_params, flags)
    return params


def _n_thresholds(args: argparse.Namespace) -> int | None:
    """--n-thresholds, or the default of --acc-variant 3 and 4 (None: no binning)."""
    if args.n_thresholds is not None:
        return args.n_thresholds
    return DEFAULT_THRESHOLDS if args.acc_variant in PER_QUERY else None


def _feature_map(args: argparse.Namespace) -> BinnedFeatureMap | None:
    """The BinnedFeatureMap of --n-thresholds, --base-columns and --acc-variant, or None."""
    n_thresholds = _n_thresholds(args)
    if n_thresholds is None:
        return None
    from ..features import BinnedFeatureMap

    return BinnedFeatureMap(n_thresholds, base_columns=args.base_columns,
                            per_query=PER_QUERY.get(args.acc_variant))


def _check_combinations(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """parser.error for options that do not go together."""
    if args.loss != "acc" and (args.acc_variant or args.cost_ratio is not None):
        parser.error("--acc-variant and --cost-ratio apply to -l acc only")
    if args.epsilon is None and args.rel_gap is None:
        parser.error("-e off and --rel-gap off leave training without a stopping rule: give "
                     "one of them a value")
    _check_selection(parser, args)
    if args.dask_workers is not None and args.dask_workers > max_dask_workers():
        parser.error(f"argument --dask-workers: at most {max_dask_workers()} worker "
                     f"processes on this machine, got {args.dask_workers} (the cores, or "
                     f"{MIN_DASK_WORKER_LIMIT} on a smaller machine: each worker is a process "
                     "with one thread; use --scheduler ADDRESS for a larger cluster)")
    if (args.select_metric is not None or args.select_tol is not None) and \
            args.eval_set is None and args.holdout is None:
        parser.error("--select-metric and --select-tol say how C is chosen on validation "
                     "queries: give -c C1,C2,... with --eval-set FILE or --holdout FRACTION")
    if (args.eval_set is not None or args.holdout is not None) and \
            (args.dask_workers or args.scheduler):
        parser.error("choosing C on validation queries (--eval-set, --holdout) runs on one "
                     "machine: leave out --dask-workers / --scheduler")
    if args.cache_size is not None and args.algorithm != "4":
        parser.error("--cache-size sets the constraint cache of -w 4: give -w 4 too")
    if args.base_columns is not None and _n_thresholds(args) is None:
        parser.error("--base-columns selects the features to bin: give --n-thresholds N too")
    if (args.dask_workers or args.scheduler) and (
            ALGORITHMS[args.algorithm] != "1-slack" or args.algorithm == "4"
            or args.loss == "acc" or _n_thresholds(args) or args.group or args.normalize):
        parser.error("--dask-workers / --scheduler train -w 3 (1-slack) with a ranking loss "
                     "(not -l acc), without --n-thresholds, --acc-variant, --group or "
                     "--normalize")


def _check_selection(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """parser.error for options of choosing C given without what they need."""
    if args.eval_set is not None and args.holdout is not None:
        parser.error("--eval-set and --holdout both choose the validation queries: give one")
    if not args.refit and args.holdout is None:
        parser.error("--no-refit applies to --holdout (an --eval-set file leaves every "
                     "training query in training)")
    if len(args.C) > 1 and args.eval_set is None and args.holdout is None:
        parser.error("several -c values are chosen among on validation queries: give --eval-set "
                     "FILE or --holdout FRACTION")


#: --dask-workers is at most the machine's cores, and at least this limit on a smaller one
MIN_DASK_WORKER_LIMIT = 4


def max_dask_workers() -> int:
    """The largest --dask-workers: a LocalCluster of one-thread processes gains nothing from
    more workers than cores (1000 started 87 processes and 3 GB before it was stopped)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        os.cpu_count() or 1
    return max(cores, MIN_DASK_WORKER_LIMIT)


#: SVMstruct options svmmap does not have, and what it does instead
SVMSTRUCT_ONLY = {
    "-t": "the kernel type: svmmap trains linear ranking functions only (SVMstruct's -t 0); "
          "--n-thresholds N (alias --bin N) gives the paper's non-linear binned features",
    "-p": "the slack norm: svmmap uses L1 slacks only (SVMstruct's -p 1)",
    "-o": "the loss rescaling: svmmap uses margin rescaling only (SVMstruct's -o 2, its "
          "default)",
    "-#": "svm-light's QP iteration limit: svmmap solves each working-set QP to a duality gap "
          "of 0.01*C*epsilon itself; bound training with --max-iter N or --max-time SECONDS",
    "-f": "the constraint cache size: use --cache-size N (with -w 4)",
    "-y": "svm-light's verbosity: svmmap has no svm-light inside; -v 0|1|2 sets what it shows",
}


def refuse_argv(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """parser.error for what argparse would report less clearly: an SVMstruct option svmmap
    lacks (``-t 1``, ``-p2``), then C values after -c separated by blanks (``-c 0.1 1 10``,
    which argparse would report as unrecognized arguments: the files)."""
    argv = argv[:argv.index("--")] if "--" in argv else argv
    for token in argv:
        option = token[:2]
        if option in SVMSTRUCT_ONLY and token[:2] != "--":
            parser.error(f"{option} is an SVMstruct option svmmap does not have: "
                         f"{SVMSTRUCT_ONLY[option]}")
    for k, token in enumerate(argv):
        if token in ("-c", "--C"):
            values = []
            for value in argv[k + 1:]:
                try:
                    float(value)
                except ValueError:
                    break
                values.append(value)
            if len(values) > 1:
                parser.error(f"C values are comma-separated: {token} {','.join(values)}")
