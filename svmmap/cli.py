"""The command-line tools, with SVMstruct's conventions so that old scripts keep working:

    svmmap_learn    [-c C] [-e epsilon] [-w 0|3] [-l LOSS] [-v level]
                    [--bin N] [--base-columns LIST] [--acc-variant 2|3|4] [--cost-ratio J]
                    train_file model_file
    svmmap_classify [-v level] test_file model_file predictions_file

``--bin`` / ``--base-columns`` train on the binned features of Yue et al. (2007), Section
4.2 (svmmap.features); the model file keeps the thresholds, and svmmap_classify applies them.

Every error a user can cause is printed as one line ``prog: error: file:line: reason`` with
exit status 1 (``--debug`` shows the traceback instead); no output file is left half-written.

Start-up is in proportion to the work: parsing the arguments (``--help``, an argument error)
imports only this module's light dependencies; numpy, scipy, the extension and cvxopt are
imported when a command runs.
"""

import argparse
import contextlib
import math
import sys
import time
import warnings

from svmstruct_api.options import QP_SOLVERS, QPError

from .atomic import check_output
from .errors import InputFormatError, SVMMapError, error_line
from .options import (
    CONVENTIONS,
    LOSS_HELP,
    MAX_ABS_VALUE,
    METRICS_HELP,
    ORACLES,
    SELECT_METRIC_HELP,
    SELECT_METRIC_RE,
    parse_loss,
    parse_metrics,
)

ALGORITHMS = {0: "n-slack", 3: "1-slack", 4: "1-slack"}
#: -w 4: 1-slack with the constraint cache, this many outputs per query unless --cache-size
DEFAULT_CACHE_SIZE = 5
#: the paper's repairs of SVM-ACC: 2 weighs false negatives (cost ratio), 3 and 4 bin
#: within-query percentiles / min-max normalised scores
ACC_VARIANTS = (2, 3, 4)
PER_QUERY = {3: "percentile", 4: "minmax"}
DEFAULT_THRESHOLDS = 50


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text!r}")
    return value


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def _loss(text):
    try:
        parse_loss(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def _c_values(text):
    """'0.1,1,10' -> [0.1, 1.0, 10.0]: one or more positive finite numbers."""
    values = [_positive_float(part.strip()) for part in text.split(",")]
    if len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"a C value is listed twice in {text!r}")
    return values


def _fraction(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a fraction between 0 and 1, got {text!r}")
    return value


def _select_metric(text):
    if not SELECT_METRIC_RE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"must be {SELECT_METRIC_HELP}, got {text!r}")
    return text.lower()


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
    parser = argparse.ArgumentParser(
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
    parser.add_argument("-c", dest="C", type=_c_values, default=[1.0], metavar="C[,C...]",
                        help="trade-off C between training error and margin (default 1); "
                             "several values, e.g. 0.1,1,10,100,1000, with --vali or "
                             "--holdout: trained along a warm-started path from small to "
                             "large C, the one best on the validation queries kept")
    parser.add_argument("--vali", default=None, metavar="FILE",
                        help="validation file that chooses C among the -c values")
    parser.add_argument("--holdout", type=_fraction, default=None, metavar="FRACTION",
                        help="choose C on this fraction of the training queries, held out "
                             "at random (RankLib's -tvs), instead of a --vali file")
    parser.add_argument("--select-metric", default="map", type=_select_metric,
                        metavar="NAME",
                        help=f"validation measure that chooses C: {SELECT_METRIC_HELP} "
                             "(default map)")
    parser.add_argument("-e", dest="epsilon", type=_positive_float, default=1e-3,
                        help="tolerance on constraint violation (default 0.001)")
    parser.add_argument("-w", dest="algorithm", type=int, choices=sorted(ALGORITHMS), default=3,
                        help="0: n-slack (the paper's Algorithm 1), 3: 1-slack (default), "
                             "4: 1-slack with the constraint cache")
    parser.add_argument("--cache-size", type=_positive_int, default=None, metavar="N",
                        help=f"-w 4: outputs remembered per query (default "
                             f"{DEFAULT_CACHE_SIZE})")
    parser.add_argument("-l", dest="loss", type=_loss, default="map", metavar="LOSS",
                        help=f"loss to optimise: {LOSS_HELP}.  map: 1 - AP (default); roc: "
                             "1 - ROC-area; acc: classification error (SVM with bias); "
                             "ndcg@k, mrr, p@k, rprec: 1 - that measure, with the joint "
                             "feature map of map and an exact oracle (ndcg: the whole "
                             "ranking; gain 2^label - 1, discount 1/log2(1 + rank))")
    parser.add_argument("-v", dest="verbose", type=int, default=1,
                        help="0 quiet; 1 (default) the data read, a live progress display "
                             "on stderr while training (a line every few seconds when stderr "
                             "is not a terminal) and the final report; 2 a line per "
                             "iteration instead of the display")
    parser.add_argument("--max-iter", type=_positive_int, default=None,
                        help="stop after this many iterations (model marked not converged)")
    parser.add_argument("--max-time", type=_positive_float, default=None,
                        help="stop after this many seconds (model marked not converged)")
    parser.add_argument("--threads", type=_positive_int, default=1,
                        help="threads for the per-query oracle loop (default 1)")
    parser.add_argument("--qp-solver", choices=QP_SOLVERS, default="smo",
                        help="working-set QP: warm-started SMO with cvxopt behind it (default) "
                             "or cvxopt alone")
    parser.add_argument("--oracle", choices=ORACLES, default="divide",
                        help="Algorithm 2 variant: exact divide and conquer (default) or the "
                             "plain scan")
    parser.add_argument("--bin", dest="n_thresholds", type=_positive_int, default=None,
                        metavar="N",
                        help="replace each base feature f by the indicators 1[f > k] for N "
                             "thresholds k (quantiles of its training values; Section 4.2)")
    parser.add_argument("--base-columns", type=_column_list, default=None, metavar="LIST",
                        help="feature indices to bin, e.g. 1,3,5-9 (default all); the others "
                             "are dropped")
    cluster = parser.add_mutually_exclusive_group()
    cluster.add_argument("--dask-workers", type=_positive_int, default=None, metavar="N",
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
                             "thresholds in [0, 1) unless --bin N)")
    parser.add_argument("--cost-ratio", type=_positive_float, default=None, metavar="J",
                        help="with -l acc, cost of a false negative relative to a false "
                             "positive (SVM-light's -j; default 1, or #non-relevant/#relevant "
                             "with --acc-variant 2)")
    add_group_option(parser)
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return parser


def add_group_option(parser):
    """--group FILE: query sizes for data without qid: (LightGBM's .query files)."""
    parser.add_argument("--group", default=None, metavar="FILE",
                        help="for data without qid: one query size per line, the queries' "
                             "documents consecutive (default: <data file>.query if present)")


def _learn_options(parser, args):
    """(features, cost_ratio) for SVMMap from the binning and SVM-ACC options."""
    if args.loss != "acc" and (args.acc_variant or args.cost_ratio):
        parser.error("--acc-variant and --cost-ratio apply to -l acc only")
    if args.vali is not None and args.holdout is not None:
        parser.error("--vali and --holdout both choose the validation queries: give one")
    if len(args.C) > 1 and args.vali is None and args.holdout is None:
        parser.error("several -c values are chosen among on validation queries: give --vali "
                     "FILE or --holdout FRACTION")
    if (args.vali is not None or args.holdout is not None) and \
            (args.dask_workers or args.scheduler):
        parser.error("choosing C on validation queries (--vali, --holdout) runs on one "
                     "machine: leave out --dask-workers / --scheduler")
    per_query = PER_QUERY.get(args.acc_variant)
    n_thresholds = args.n_thresholds or (DEFAULT_THRESHOLDS if per_query else None)
    if args.cache_size is not None and args.algorithm != 4:
        parser.error("--cache-size sets the constraint cache of -w 4: give -w 4 too")
    if args.base_columns is not None and n_thresholds is None:
        parser.error("--base-columns selects the features to bin: give --bin N too")
    cost_ratio = args.cost_ratio or ("balanced" if args.acc_variant == 2 else 1.0)
    if (args.dask_workers or args.scheduler) and (
            args.algorithm != 3 or args.loss == "acc" or n_thresholds or args.group):
        parser.error("--dask-workers / --scheduler train -w 3 (1-slack) with a ranking loss "
                     "(not -l acc), without --bin, --acc-variant or --group")
    if n_thresholds is None:
        return None, cost_ratio
    from .features import BinnedFeatureMap

    features = BinnedFeatureMap(
        n_thresholds, columns=args.base_columns, per_query=per_query)
    return features, cost_ratio


def _classify_parser(prog="svmmap_classify", model_help="model written by svmmap_learn"):
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Score documents with a trained svmmap model and report ranking metrics.")
    parser.add_argument("test_file", help="SVMlight/LETOR file (gzip, bzip2 or xz too; - for "
                                          "standard input), or an index file")
    parser.add_argument("model_file", help=model_help)
    parser.add_argument("predictions_file", help="where to write one score per input line")
    parser.add_argument("-v", dest="verbose", type=int, default=1,
                        help="0 quiet, 1 metrics (default)")
    parser.add_argument("--convention", choices=CONVENTIONS, default="letor",
                        help="evaluation convention: letor (default; LETOR's scripts: ties "
                             "in file order, NDCG gain 2^label-1) or trec_eval (ties by docno, "
                             "here the later line first; NDCG gain = label, discount "
                             "1/log2(rank+1)); both count a query without a relevant document "
                             "with AP 0")
    parser.add_argument("--metrics", type=_metrics, default=None, metavar="LIST",
                        help=f"what to report, in this order: {METRICS_HELP} (default: MAP, "
                             "NDCG@1,3,5,10, P@1,3,5,10, MRR, NDCG, ROC)")
    add_group_option(parser)
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return parser


def _metrics(text):
    try:
        return ",".join(name + ("" if k is None else f"@{k}")
                        for name, k in parse_metrics(text))
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _run(prog, debug, action, data_file=None):
    """Run ``action``; turn the errors a user can cause into one line and exit status 1.

    ``data_file``: the data the command read (svmmap.errors.error_line)."""
    try:
        status = action()
    except (SVMMapError, QPError, OSError, MemoryError) as exc:
        if debug:
            raise
        print(f"{prog}: error: {error_line(exc, data_file)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    return status or 0


def _learn_callbacks(verbose):
    """-v 1: the live progress display on stderr; -v 2: a line per iteration on stdout (the
    report is printed once, by learn_main, in both)."""
    from .progress import IterationLines, ProgressDisplay

    if verbose >= 2:
        return [IterationLines()]
    return [ProgressDisplay()] if verbose == 1 else []


#: SVMstruct options svmmap does not have, and what it does instead
SVMSTRUCT_ONLY = {
    "-t": "the kernel type: svmmap trains linear ranking functions only (SVMstruct's -t 0); "
          "--bin N gives the paper's non-linear binned features",
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


def _looks_like_model_file(path):
    """True when ``path`` is a readable file whose first non-blank character is '{' (a JSON
    model file; data files start with a label, a comment or a file name)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(256).lstrip().startswith(b"{")
    except OSError:
        return False


def _refuse_swapped(parser, data_file, order):
    """parser.error when the data argument is a model file (arguments in the wrong order)."""
    if data_file != "-" and _looks_like_model_file(data_file):
        parser.error(f"{data_file} looks like a model file, not data: the arguments are "
                     f"{order}")


def learn_main(argv=None):
    parser = _learn_parser()
    _refuse_svmstruct_options(parser, sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    _refuse_swapped(parser, args.train_file, "train_file model_file")
    features, cost_ratio = _learn_options(parser, args)

    def learn():
        import numpy as np

        from .estimator import SVMMap
        from .io import input_files, load_svmlight

        params = dict(loss=args.loss, epsilon=args.epsilon,
                      algorithm=ALGORITHMS[args.algorithm], max_iter=args.max_iter,
                      max_time=args.max_time, n_threads=args.threads, oracle=args.oracle,
                      features=features, cost_ratio=cost_ratio, qp_solver=args.qp_solver,
                      cache_size=(args.cache_size or DEFAULT_CACHE_SIZE)
                      if args.algorithm == 4 else 0)
        selecting = args.vali is not None or args.holdout is not None
        fit_options = {}
        with contextlib.ExitStack() as stack, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            started = time.monotonic()
            if args.dask_workers or args.scheduler:
                from . import dask as svmmap_dask

                check_output(args.model_file, svmmap_dask.expand_paths(args.train_file))
                client = stack.enter_context(
                    svmmap_dask.cluster_client(args.dask_workers, args.scheduler))
                X, y, qid = svmmap_dask.read_svmlight(args.train_file, client=client,
                                                      max_abs_value=MAX_ABS_VALUE)
                model = svmmap_dask.DaskSVMMap(C=args.C[0], **params, client=client)
                n_queries = None
            else:
                vali_files = [] if args.vali is None else input_files(args.vali)
                check_output(args.model_file,
                             [*input_files(args.train_file), args.group, *vali_files])
                X, y, qid = load_svmlight(args.train_file, group=args.group,
                                          max_abs_value=MAX_ABS_VALUE)
                if selecting:
                    from .model_selection import SVMMapCV

                    model = SVMMapCV(Cs=args.C, select_metric=args.select_metric,
                                     holdout=args.holdout or 0.2, **params)
                    fit_options["eval_set"] = None if args.vali is None else load_svmlight(
                        args.vali, n_features=X.shape[1], max_abs_value=MAX_ABS_VALUE)
                else:
                    model = SVMMap(C=args.C[0], **params)
                n_queries = len(np.unique(qid))
            if args.verbose >= 1 and n_queries is not None:
                print(f"Read {X.shape[0]} documents, {n_queries} queries, {X.shape[1]} "
                      f"features from {args.train_file} in {time.monotonic() - started:.1f} s",
                      flush=True)
            if args.base_columns and max(args.base_columns) >= X.shape[1]:
                raise InputFormatError(f"--base-columns: feature {max(args.base_columns) + 1} "
                                       f"does not exist (the data has {X.shape[1]} features)",
                                       args.train_file)
            model.fit(X, y, qid, callbacks=_learn_callbacks(args.verbose), **fit_options)
        for warning in caught if args.verbose >= 1 else ():
            print(f"svmmap_learn: note: {warning.message}", file=sys.stderr)
        result = model.training_result_
        if args.verbose >= 1:
            if n_queries is None:  # Dask: the shards were read on the workers
                print(f"Read {X.shape[0]} documents, {model.n_queries_} queries, "
                      f"{X.shape[1]} features from {args.train_file} in "
                      f"{time.monotonic() - started:.1f} s (reading and training)")
            if model.features_ is not None:
                print(f"Binned {len(model.features_.columns_)} base features into "
                      f"{model.features_.n_output_features_} indicator features")
            if selecting:
                source = args.vali if args.vali is not None else \
                    f"{args.holdout:g} of the training queries held out"
                print(_path_table(model, source))
            print(result.report())
        if not result.converged and args.verbose >= 1:
            print(f"svmmap_learn: note: training stopped before convergence ({result.status}); "
                  "the model is the best one found and is marked as not converged",
                  file=sys.stderr)
        model.save(args.model_file)
        # Ctrl-C: the best model so far is saved; the exit status still says "interrupted"
        return 130 if result.status == "interrupted" else 0

    return _run("svmmap_learn", args.debug, learn, args.train_file)


def _path_table(model, source):
    """The C path of a fitted SVMMapCV as a table, and the chosen C."""
    selection = model.selection_
    lines = [f"Model selection by {model.select_metric} on {source}: warm-started path over "
             f"{len(model.path_)} C values in {selection['seconds']:.2f} s",
             f"{'C':>10} {'iterations':>10} {'seconds':>8} {'primal':>14} {'dual':>14} "
             f"{'rel. gap':>9} {'status':>10} {model.select_metric:>9}"]
    for row in model.path_:
        chosen = "  <- chosen" if row["C"] == model.C_ else ""
        lines.append(f"{row['C']:>10g} {row['iterations']:>10d} {row['seconds']:>8.3f} "
                     f"{row['primal_objective']:>14.8g} {row['dual_objective']:>14.8g} "
                     f"{row['relative_gap']:>9.2e} {row['status']:>10} "
                     f"{row['vali']:>9.4f}{chosen}")
    return "\n".join(lines)


def classify_main(argv=None):
    parser = _classify_parser()
    args = parser.parse_args(argv)
    _refuse_swapped(parser, args.test_file, "test_file model_file predictions_file")

    def classify():
        import numpy as np

        from . import metrics
        from .atomic import write_text_atomically
        from .estimator import SVMMap
        from .io import input_files, load_svmlight

        check_output(args.predictions_file,
                     [args.model_file, *input_files(args.test_file), args.group])
        model = SVMMap.load(args.model_file)
        X, y, qid = load_svmlight(args.test_file, n_features=model.n_features_in_,
                                  group=args.group, max_abs_value=MAX_ABS_VALUE)
        scores = model.decision_function(X, qid)
        write_text_atomically(args.predictions_file, [f"{s!r}\n" for s in scores.tolist()])
        if args.verbose >= 1:
            summary = metrics.evaluate(scores, y, qid, convention=args.convention,
                                       measures=args.metrics)
            print(f"Scored {len(scores)} documents of {len(np.unique(qid))} queries "
                  f"({args.convention} convention, {summary['queries']} queries averaged)")
            for name, value in summary.items():
                if name != "queries":
                    print(f"{name}: {value:.4f}")

    return _run("svmmap_classify", args.debug, classify, args.test_file)
