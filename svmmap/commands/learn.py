"""svmmap_learn, with SVMstruct's conventions so that old scripts keep working:

    svmmap_learn    [-c C] [-e epsilon] [-w 0|3|4] [-l LOSS] [-v level]
                    [--query-weights FILE]
                    [--n-thresholds N] [--base-columns LIST] [--acc-variant 2|3|4]
                    [--cost-ratio J] train_file model_file

Every option has one long name, the estimator parameter's (``--max-iter`` / ``max_iter``);
SVMstruct's short flags ``-c -e -w -l -v`` are aliases of ``--C --epsilon --algorithm --loss
--verbose``; the glossary in README.md lists them all.  svmmap_classify applies the model
(svmmap.commands.classify).

``--n-thresholds`` (alias ``--bin``) / ``--base-columns`` train on the binned features of Yue
et al. (2007), Section 4.2 (svmmap.features); the model file keeps the thresholds, and
svmmap_classify applies them.

Every error a user can cause is printed as one line ``prog: error: file:line: reason`` with
exit status 1 (``--debug`` shows the traceback instead); no output file is left half-written.

Start-up is in proportion to the work: parsing and checking the arguments (``--help``, an
argument or parameter error) imports only this module's light dependencies; numpy and the
extensions are imported when a command runs (the data stays the reader's arrays:
svmmap.kernels._csr), cvxopt when a QP needs it, scipy and scikit-learn only for binned features
(``--n-thresholds``) or Dask: training goes through svmmap.core.training and svmmap.core.selection,
scoring an svmmap model through svmmap.data.model_file.load_scorer.
"""

import argparse
import contextlib
import os
import sys
import time

from svmstruct_api.options import QP_SOLVERS

from ..core import interrupts
from ..core.measures import help_text, parse_loss, parse_metrics, parse_select_metric
from ..core.options import (
    DEFAULT_EPSILON,
    DEFAULT_REL_GAP,
    DEFAULT_SELECT_TOL,
    DTYPES,
    MAX_ABS_VALUE,
    ORACLES,
)
from ..core.params import ParameterError, check_c_path, check_svmmap
from ..data.atomic import check_output
from ..data.model_file import model_output
from ..errors import InputFormatError, SVMMapError
from .common import (
    ArgumentParser,
    Background,
    HelpFormatter,
    add_force_option,
    add_group_option,
    check_params,
    positive_int,
    refuse_swapped,
    run,
    warnings_as_notes,
)

__all__ = ["learn_main"]

#: -w / --algorithm: SVMstruct's numbers and the estimator's names; 4 is 1-slack with the
#: constraint cache
ALGORITHMS = {"0": "n-slack", "n-slack": "n-slack", "3": "1-slack", "1-slack": "1-slack",
              "4": "1-slack"}
#: -w 4: 1-slack with the constraint cache, this many outputs per query unless --cache-size
DEFAULT_CACHE_SIZE = 5
#: the paper's repairs of SVM-ACC: 2 weighs false negatives (cost ratio), 3 and 4 bin
#: within-query percentiles / min-max normalised scores
ACC_VARIANTS = (2, 3, 4)
PER_QUERY = {3: "percentile", 4: "minmax"}
DEFAULT_THRESHOLDS = 50


def _loss(text):
    try:
        parse_loss(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def _c_values(text):
    """'0.1,1,10' -> [0.1, 1.0, 10.0]: one or more numbers (a path's values are checked by
    SVMMapCV's rule, svmmap.core.params.check_c_path; a single C by SVMMap's)."""
    values = []
    for part in text.split(","):
        try:
            values.append(float(part))  # the range is the estimator's check (_learn_model)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {part.strip()!r}") from None
    if len(values) > 1:
        try:
            check_c_path(values)
        except ParameterError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return values


def _fraction(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a fraction between 0 and 1, got {text!r}")
    return value


def _number_or_off(text):
    """-e, --rel-gap: a number (its range is the estimator's check) or "off" (None)."""
    if text.strip().lower() == "off":
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number or 'off': {text!r}") from None


def _shown(default):
    return "off" if default is None else f"{default:g}"


def _select_tol(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text!r}")
    return value


def _select_metric(text):
    try:
        return parse_select_metric(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {help_text('select')}, got {text!r}") \
            from None


def _column_list(text):
    """'1,3,5-9' -> 0-based columns [0, 2, 4, 5, 6, 7, 8] (the file's 1-based indices)."""
    columns = []
    for part in text.split(","):
        first, sep, last = part.strip().partition("-")
        try:
            lo, hi = int(first), int(last if sep else first)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"not a list of feature indices and ranges like 1,3,5-9: {text!r}") from None
        if lo < 1 or hi < lo:
            raise argparse.ArgumentTypeError(f"bad feature index or range {part.strip()!r} "
                                             "(indices start at 1)")
        columns.extend(range(lo - 1, hi))
    if len(set(columns)) != len(columns):
        raise argparse.ArgumentTypeError(f"a feature index is listed twice in {text!r}")
    return columns


def _learn_parser():
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
    parser.add_argument("-c", "--C", dest="C", type=_c_values, default=[1.0],
                        metavar="C[,C...]",
                        help="trade-off C between training error and margin (default 1); "
                             "several values, e.g. 0.1,1,10,100,1000, with --eval-set or "
                             "--holdout: trained along a warm-started path from small to "
                             "large C, the one best on the validation queries kept")
    parser.add_argument("--eval-set", "--vali", "--valid", dest="eval_set", default=None,
                        metavar="FILE",
                        help="validation file that chooses C among the -c values (aliases "
                             "--vali, --valid)")
    parser.add_argument("--holdout", type=_fraction, default=None, metavar="FRACTION",
                        help="choose C on this fraction of the training queries, held out "
                             "at random (RankLib's -tvs), instead of an --eval-set file")
    parser.add_argument("--refit", action=argparse.BooleanOptionalAction, default=True,
                        help="with --holdout: train again on all the training queries at the "
                             "chosen C (the default), or, with --no-refit, keep the model "
                             "trained without the held-out queries (RankLib's -tvs)")
    parser.add_argument("--select-metric", default=None, type=_select_metric,
                        metavar="NAME",
                        help=f"validation measure that chooses C: {help_text('select')} "
                             "(default map; with --eval-set or --holdout only)")
    parser.add_argument("--select-tol", type=_select_tol, default=None,
                        metavar="T",
                        help="validation measures within T of the best are ties, won by the "
                             f"smallest C (default {DEFAULT_SELECT_TOL:g}: equal to 3 "
                             "decimals; 0: the best; with --vali or --holdout only)")
    parser.add_argument("-e", "--epsilon", type=_number_or_off, default=DEFAULT_EPSILON,
                        help="stop when no constraint is violated by more than EPSILON, or "
                             f"'off' (default {_shown(DEFAULT_EPSILON)}); with --rel-gap too, "
                             "the first rule that holds stops training")
    parser.add_argument("--rel-gap", type=_number_or_off, default=DEFAULT_REL_GAP, metavar="R",
                        help="stop when the relative duality gap (primal - dual) / primal is "
                             f"at most R, in (0, 1), or 'off' (default {_shown(DEFAULT_REL_GAP)})")
    parser.add_argument("-w", "--algorithm", choices=list(ALGORITHMS), default="3",
                        metavar="{0,3,4,n-slack,1-slack}",
                        help="0 or n-slack: the paper's Algorithm 1; 3 or 1-slack (default): "
                             "Joachims et al. 2009; 4: 1-slack with the constraint cache")
    parser.add_argument("--cache-size", type=positive_int, default=None, metavar="N",
                        help=f"-w 4: outputs remembered per query (default "
                             f"{DEFAULT_CACHE_SIZE})")
    parser.add_argument("-l", "--loss", type=_loss, default="map", metavar="LOSS",
                        help=f"what is optimised: {help_text('loss')}.  map: 1 - AP "
                             "(default); roc: 1 - ROC-area; acc: classification error (SVM "
                             "with bias); the others: 1 - that measure, with the joint "
                             "feature map of map and an exact oracle (ndcg: the whole "
                             "ranking; gain 2^label - 1, discount 1/log2(1 + rank))")
    parser.add_argument("-v", "--verbose", type=int, default=1,
                        help="0 quiet; 1 (default) the data read, a live progress display "
                             "on stderr while training (a line every few seconds when stderr "
                             "is not a terminal) and the final report; 2 a line per "
                             "iteration instead of the display")
    parser.add_argument("--max-iter", type=int, default=None,
                        help="stop after this many iterations (model marked not converged)")
    parser.add_argument("--max-time", type=float, default=None,
                        help="stop after this many seconds (model marked not converged)")
    parser.add_argument("--n-threads", "--threads", dest="n_threads", type=int, default=1,
                        help="threads for reading the data files and for the per-query "
                             "oracle loop (default 1)")
    parser.add_argument("--dtype", choices=DTYPES, default="float64",
                        help="storage of the feature values read (load_svmlight's dtype): "
                             "float32 halves it, the model being the float64 one of the "
                             "values rounded to float32 (default float64)")
    parser.add_argument("--qp-solver", choices=QP_SOLVERS, default="smo",
                        help="working-set QP: warm-started SMO with cvxopt behind it (default) "
                             "or cvxopt alone")
    parser.add_argument("--oracle", choices=ORACLES, default="divide",
                        help="Algorithm 2 variant: exact divide and conquer (default) or the "
                             "plain scan")
    parser.add_argument("--normalize", choices=("standard", "minmax"), default=None,
                        help="fit a global normaliser on the training documents, z = (x - "
                             "mean) / std or (x - min) / (max - min) per feature, stored in "
                             "the model and applied when scoring (the search engines' LTR "
                             "normalisers: python -m svmmap.export writes it as theirs)")
    parser.add_argument("--n-thresholds", "--bin", dest="n_thresholds", type=int, default=None,
                        metavar="N",
                        help="replace each base feature f by the indicators 1[f > k] for N "
                             "thresholds k (quantiles of its training values; Section 4.2)")
    parser.add_argument("--base-columns", type=_column_list, default=None, metavar="LIST",
                        help="feature indices to bin, e.g. 1,3,5-9 (default all); the others "
                             "are dropped")
    cluster = parser.add_mutually_exclusive_group()
    cluster.add_argument("--dask-workers", type=positive_int, default=None, metavar="N",
                         help="train on a Dask LocalCluster of N worker processes on this "
                              "machine (svmmap.dask; needs the [dask] extra)")
    cluster.add_argument("--scheduler", default=None, metavar="ADDRESS",
                         help="train on the Dask cluster whose scheduler is at ADDRESS, e.g. "
                              "tcp://10.0.0.1:8786 (the shards are read on its workers)")
    parser.add_argument("--acc-variant", type=int, choices=ACC_VARIANTS, default=None,
                        help="with -l acc, the paper's repairs: 2 false negatives cost "
                             "#non-relevant/#relevant times more (or --cost-ratio), 3 bin "
                             "within-query percentiles, 4 bin per-query min-max normalised "
                             f"scores (3 and 4 bin at {DEFAULT_THRESHOLDS} evenly spaced "
                             "thresholds in [0, 1) unless --n-thresholds N)")
    parser.add_argument("--cost-ratio", type=float, default=None, metavar="J",
                        help="with -l acc, cost of a false negative relative to a false "
                             "positive (SVM-light's -j; default 1, or #non-relevant/#relevant "
                             "with --acc-variant 2)")
    add_group_option(parser)
    add_query_weights_option(parser)
    add_force_option(parser, "an svmmap model file")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return parser


#: SVMMap parameter -> the svmmap_learn option that sets it
LEARN_FLAGS = {
    "C": "-c/--C", "epsilon": "-e/--epsilon", "algorithm": "-w/--algorithm",
    "loss": "-l/--loss", "max_iter": "--max-iter", "max_time": "--max-time",
    "n_threads": "--n-threads", "qp_solver": "--qp-solver", "oracle": "--oracle",
    "cost_ratio": "--cost-ratio", "cache_size": "--cache-size", "rel_gap": "--rel-gap",
    "feature_map": "--n-thresholds", "n_thresholds": "--n-thresholds",
    "normalize": "--normalize"}


#: what svmmap_learn writes: an existing model_file of another kind is refused (--force)
SVMMAP_MODEL = model_output(("svmmap",), "an svmmap model file")


def _learn_model(parser, args):
    """The parameters of the SVMMap the options describe (all of SVMMap's constructor
    arguments), checked by SVMMap's own rules (svmmap.core.params, before numpy is imported)."""
    features, cost_ratio = _learn_options(parser, args)
    params = dict(C=args.C[0], loss=args.loss, epsilon=args.epsilon, rel_gap=args.rel_gap,
                  algorithm=ALGORITHMS[args.algorithm], max_iter=args.max_iter,
                  max_time=args.max_time, n_threads=args.n_threads, oracle=args.oracle,
                  verbose=0, feature_map=features,
                  cost_ratio=cost_ratio, qp_solver=args.qp_solver,
                  cache_size=(DEFAULT_CACHE_SIZE if args.cache_size is None
                              else args.cache_size) if args.algorithm == "4" else 0,
                  normalize=args.normalize)
    for C in args.C:  # every C of a path, as the estimator checks one
        check_params(parser, lambda C=C: check_svmmap("SVMMap", {**params, "C": C}),
                     LEARN_FLAGS)
    if features is not None:
        check_params(parser, features.check_params, LEARN_FLAGS)
    return params


def add_query_weights_option(parser):
    parser.add_argument("--query-weights", default=None, metavar="FILE",
                        help="'qid weight' per line, every training query listed: the "
                             "objective becomes 1/2|w|^2 + C/V sum_q v_q xi_q, V the sum of "
                             "the weights of the queries that carry constraints (weight 2: "
                             "the query counted twice; 0: left out)")


def _learn_options(parser, args):
    """(features, cost_ratio) for SVMMap from the binning and SVM-ACC options."""
    if args.loss != "acc" and (args.acc_variant or args.cost_ratio is not None):
        parser.error("--acc-variant and --cost-ratio apply to -l acc only")
    if args.epsilon is None and args.rel_gap is None:
        parser.error("-e off and --rel-gap off leave training without a stopping rule: give "
                     "one of them a value")
    if args.eval_set is not None and args.holdout is not None:
        parser.error("--eval-set and --holdout both choose the validation queries: give one")
    if not args.refit and args.holdout is None:
        parser.error("--no-refit applies to --holdout (an --eval-set file leaves every "
                     "training query in training)")
    if len(args.C) > 1 and args.eval_set is None and args.holdout is None:
        parser.error("several -c values are chosen among on validation queries: give --eval-set "
                     "FILE or --holdout FRACTION")
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
    per_query = PER_QUERY.get(args.acc_variant)
    n_thresholds = args.n_thresholds if args.n_thresholds is not None else (
        DEFAULT_THRESHOLDS if per_query else None)
    if args.cache_size is not None and args.algorithm != "4":
        parser.error("--cache-size sets the constraint cache of -w 4: give -w 4 too")
    if args.base_columns is not None and n_thresholds is None:
        parser.error("--base-columns selects the features to bin: give --n-thresholds N too")
    cost_ratio = args.cost_ratio if args.cost_ratio is not None else (
        "balanced" if args.acc_variant == 2 else 1.0)
    if (args.dask_workers or args.scheduler) and (
            ALGORITHMS[args.algorithm] != "1-slack" or args.algorithm == "4"
            or args.loss == "acc" or n_thresholds or args.group or args.normalize):
        parser.error("--dask-workers / --scheduler train -w 3 (1-slack) with a ranking loss "
                     "(not -l acc), without --n-thresholds, --acc-variant, --group or "
                     "--normalize")
    if n_thresholds is None:
        return None, cost_ratio
    from ..features import BinnedFeatureMap

    features = BinnedFeatureMap(
        n_thresholds, base_columns=args.base_columns, per_query=per_query)
    return features, cost_ratio


#: --dask-workers is at most the machine's cores, and at least this limit on a smaller one
MIN_DASK_WORKER_LIMIT = 4


def max_dask_workers():
    """The largest --dask-workers: a LocalCluster of one-thread processes gains nothing from
    more workers than cores (1000 started 87 processes and 3 GB before it was stopped)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        os.cpu_count() or 1
    return max(cores, MIN_DASK_WORKER_LIMIT)


def _learn_callbacks(verbose):
    """-v 1: the live progress display on stderr; -v 2: a line per iteration on stdout (the
    report is printed once, by learn_main, in both)."""
    from ..core.progress import IterationLines, ProgressDisplay

    if verbose >= 2:
        return [IterationLines()]
    return [ProgressDisplay()] if verbose == 1 else []


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


def _refuse_svmstruct_options(parser, argv):
    """parser.error naming an SVMstruct option svmmap lacks (e.g. ``-t 1``, ``-p2``)."""
    for token in argv:
        if token == "--":
            return
        option = token[:2]
        if option in SVMSTRUCT_ONLY and token[:2] != "--":
            parser.error(f"{option} is an SVMstruct option svmmap does not have: "
                         f"{SVMSTRUCT_ONLY[option]}")


def _refuse_spaced_c_values(parser, argv):
    """parser.error with the fix when C values follow -c separated by blanks (``-c 0.1 1
    10``, which argparse would report as unrecognized arguments: the files)."""
    for k, token in enumerate(argv):
        if token == "--":
            return
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


def learn_main(argv=None):
    parser = _learn_parser()
    _refuse_svmstruct_options(parser, sys.argv[1:] if argv is None else argv)
    _refuse_spaced_c_values(parser, sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    refuse_swapped(parser, args.train_file, "train_file model_file")
    params = _learn_model(parser, args)

    def learn():
        selecting = args.eval_set is not None or args.holdout is not None
        with contextlib.ExitStack() as stack:
            stack.enter_context(warnings_as_notes("svmmap_learn", show=args.verbose >= 1))
            started = time.monotonic()
            if args.dask_workers or args.scheduler:
                fitted, save, n_read = _learn_on_dask(args, params, stack,
                                                      _learn_callbacks(args.verbose))
            else:
                fitted, save, n_read = _learn_here(args, params, selecting, started)
        result = fitted.training_result
        if args.verbose >= 1:
            if n_read is not None:  # Dask: the shards were read on the workers
                print(f"Read {n_read[0]} documents, {n_read[1]} queries, {n_read[2]} "
                      f"features from {args.train_file} in "
                      f"{time.monotonic() - started:.1f} s (reading and training)")
            if fitted.feature_map is not None:
                print(f"Binned {len(fitted.feature_map.base_columns_)} base features into "
                      f"{fitted.feature_map.n_output_features_} indicator features")
            if selecting:
                from ..core.selection import path_table

                source = args.eval_set if args.eval_set is not None else \
                    f"{args.holdout:g} of the training queries held out"
                print(path_table(fitted.selection, source))
            print(result.report())
        if not result.converged and args.verbose >= 1:
            print(f"svmmap_learn: note: training stopped before convergence ({result.status}); "
                  "the model is the best one found and is marked as not converged",
                  file=sys.stderr)
        save(args.model_file)
        if result.status != "interrupted":
            return 0
        # Ctrl-C or SIGTERM: the best model so far is saved; the last line and the exit
        # status still say how the command was stopped (svmmap.core.interrupts)
        print(interrupts.message("svmmap_learn"), file=sys.stderr)
        return interrupts.exit_status()

    return run("svmmap_learn", args.debug, learn, args.train_file)


def _learn_here(args, params, selecting, started):
    """Read the data and train in this process, through svmmap.core.training and
    svmmap.core.selection (no scikit-learn unless binning); return (the
    svmmap.core.training.FittedModel, a function writing the model file, None).

    The training file is read in a helper thread while this one imports the training
    modules (the reader's parsing runs without the GIL): start-up and reading overlap, as
    they take about as long on a small file (benchmarks/startup.py)."""
    from ..data.io import (
        NDCG_GRADES,
        input_files,
        load_query_weights,
        measure_label_rules,
        read_svmlight,
    )

    vali_files = [] if args.eval_set is None else input_files(args.eval_set)
    check_output(args.model_file, [*input_files(args.train_file), args.group, *vali_files,
                                   args.query_weights], SVMMAP_MODEL, args.force)
    loss = parse_loss(args.loss)[0]
    listed = []  # what an index file in a pipe lists: known once it is read
    # X as the reader gives it (dense, or CSR arrays): no scipy import (svmmap.kernels._csr)
    reading = Background(lambda: read_svmlight(
        args.train_file, group=args.group, max_abs_value=MAX_ABS_VALUE,
        n_threads=args.n_threads, label_rules=(NDCG_GRADES,) if loss == "ndcg" else (),
        files_read=listed, dtype=args.dtype))
    # the modules training needs, imported now, while the file is read: the plugin of the
    # loss and the solvers (svmmap.core.training imports the learner only where one is made)
    import svmstruct_api.learner  # noqa: F401

    from ..core import training
    from ..core.collection import QueryCollection
    from ..core.measures import MEASURES
    from ..data.model_file import write_model

    training.plugin_class(MEASURES[loss].plugin)
    callbacks = _learn_callbacks(args.verbose)
    X, y, qid = reading.result()
    check_output(args.model_file, listed)
    # the reader refused what QueryCollection.from_arrays would (svmmap.core.collection): its
    # documents are grouped, not checked again
    data = QueryCollection.from_checked(X, y, qid)
    n_features = X.shape[1]
    if args.verbose >= 1:
        _note_unused_width(X, args.train_file)
    sample_weight = None
    if args.query_weights is not None:
        if selecting:
            raise SVMMapError("--query-weights is not available with a list of C values")
        sample_weight = load_query_weights(args.query_weights, qid)
    if args.verbose >= 1:
        print(f"Read {X.shape[0]} documents, {data.n_queries} queries, {n_features} "
              f"features from {args.train_file} in {time.monotonic() - started:.1f} s",
              flush=True)
    if args.base_columns and max(args.base_columns) >= n_features:
        raise InputFormatError(f"--base-columns: feature {max(args.base_columns) + 1} "
                               f"does not exist (the data has {n_features} features)",
                               args.train_file)
    if selecting:
        from ..core import selection

        metric = args.select_metric or "map"
        tol = DEFAULT_SELECT_TOL if args.select_tol is None else args.select_tol
        vali = None
        if args.eval_set is not None:
            vali = QueryCollection.from_checked(*read_svmlight(
                args.eval_set, n_features=n_features, max_abs_value=MAX_ABS_VALUE,
                n_threads=args.n_threads, dtype=args.dtype, width_of=args.train_file,
                label_rules=measure_label_rules(parse_metrics(metric))))
        fitted = selection.fit_c_path(params, data, sorted(args.C), vali, metric, tol,
                                      callbacks, holdout_fraction=args.holdout,
                                      refit_all=args.refit, vali_path=args.eval_set)
        params = {**params, "C": fitted.selection["C"]}
    else:
        try:
            fitted = training.fit(params, data, sample_weight, callbacks)
        except training.QueryWeightsError as exc:  # the weights file is what is wrong
            raise InputFormatError(exc.reason, args.query_weights) from None

    def save(path):
        write_model(path, training.model_content(params, n_features, fitted))

    return fitted, save, None


#: a training file's feature count (its highest index) more than this many times the number
#: of distinct features its lines use is noted: every dense vector of training and the model
#: are that long (a mistyped index of 100000000 made an 800 MB model)
UNUSED_WIDTH_RATIO = 100
#: ... from this feature count on
UNUSED_WIDTH_MIN = 1000


def _note_unused_width(X, path):
    """Print a note, at once (before training), when the sparse X's feature count is at least
    UNUSED_WIDTH_MIN and more than UNUSED_WIDTH_RATIO times the distinct features its rows
    use (a dense X uses every feature).  A count that svmmap.core.training refuses (above
    MAX_FEATURES) is left to it."""
    import numpy as np

    from ..core.training import MAX_FEATURES, _check_memory
    from ..errors import InputFormatError

    n_features = X.shape[1]
    if isinstance(X, np.ndarray) or not UNUSED_WIDTH_MIN <= n_features <= MAX_FEATURES:
        return
    try:  # a width training cannot hold is refused by training, in one line, not noted
        _check_memory(n_features, 0)
    except InputFormatError:
        return
    used = np.zeros(n_features, dtype=bool)
    used[X.indices] = True
    n_used = int(np.count_nonzero(used))
    if n_features > UNUSED_WIDTH_RATIO * n_used:
        print(f"svmmap_learn: note: {path}: the highest feature index is {n_features} but the "
              f"lines use only {n_used} distinct features: the model holds {n_features} "
              f"weights ({8 * n_features / 2**20:.0f} MiB); a mistyped index? renumber the "
              "features consecutively", file=sys.stderr, flush=True)


def _learn_on_dask(args, params, stack, callbacks):
    """Train on a Dask cluster (svmmap.dask.DaskSVMMap, the data read by the workers); return
    (the svmmap.core.training.FittedModel, a function writing the model file, (documents,
    queries, features))."""
    from .. import dask as svmmap_dask

    if args.query_weights is not None:
        raise SVMMapError("--query-weights is not available with --dask-workers / "
                          "--scheduler")
    from ..core.training import FittedModel
    from ..data.io import input_files

    check_output(args.model_file, input_files(svmmap_dask.expand_paths(args.train_file)),
                 SVMMAP_MODEL, args.force)
    client = stack.enter_context(svmmap_dask.cluster_client(args.dask_workers, args.scheduler))
    X, y, qid = svmmap_dask.read_svmlight(args.train_file, client=client,
                                          max_abs_value=MAX_ABS_VALUE, dtype=args.dtype)
    model = svmmap_dask.DaskSVMMap(**params, client=client)
    model.fit(X, y, qid, callbacks=callbacks)
    counts = X.shape[0], model.n_queries_, X.shape[1]
    return FittedModel.from_attributes(model), model.save, counts
