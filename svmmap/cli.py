"""The command-line tools, with SVMstruct's conventions so that old scripts keep working:

    svmmap_learn    [-c C] [-e epsilon] [-w 0|3] [-l map] [-v level] train_file model_file
    svmmap_classify [-v level] test_file model_file predictions_file

Every error a user can cause is printed as one line ``prog: error: file:line: reason`` with
exit status 1 (``--debug`` shows the traceback instead); no output file is left half-written.
"""

import argparse
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

from svmstruct_api.qp import QPError

from . import metrics
from .errors import SVMMapError
from .estimator import ORACLES, PLUGINS, SVMMap
from .io import load_svmlight

ALGORITHMS = {0: "n-slack", 3: "1-slack"}


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (value > 0 and np.isfinite(value)):
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


def _learn_parser():
    parser = argparse.ArgumentParser(
        prog="svmmap_learn",
        description="Train a linear ranking function with a structural SVM that optimises "
                    "Mean Average Precision (Yue et al., SIGIR 2007).",
        epilog="The objective is 1/2|w|^2 + C/n sum xi_q, n = training queries that have a "
               "relevant and a non-relevant document (SVMstruct 3.x convention; the original "
               "SVM-MAP release used C without the 1/n).")
    parser.add_argument("train_file", help="SVMlight/LETOR file, or an index file listing data "
                                           "files one per line")
    parser.add_argument("model_file", help="where to write the model (JSON)")
    parser.add_argument("-c", dest="C", type=_positive_float, default=1.0,
                        help="trade-off C between training error and margin (default 1)")
    parser.add_argument("-e", dest="epsilon", type=_positive_float, default=1e-3,
                        help="tolerance on constraint violation (default 0.001)")
    parser.add_argument("-w", dest="algorithm", type=int, choices=sorted(ALGORITHMS), default=3,
                        help="0: n-slack (the paper's Algorithm 1), 3: 1-slack (default)")
    parser.add_argument("-l", dest="loss", choices=sorted(PLUGINS), default="map",
                        help="loss to optimise (default map)")
    parser.add_argument("-v", dest="verbose", type=int, default=1,
                        help="0 quiet, 1 final report (default), 2 a line per iteration")
    parser.add_argument("--max-iter", type=_positive_int, default=None,
                        help="stop after this many iterations (model marked not converged)")
    parser.add_argument("--max-time", type=_positive_float, default=None,
                        help="stop after this many seconds (model marked not converged)")
    parser.add_argument("--threads", type=_positive_int, default=1,
                        help="threads for the per-query oracle loop (default 1)")
    parser.add_argument("--oracle", choices=ORACLES, default="divide",
                        help="Algorithm 2 variant: exact divide and conquer (default) or the "
                             "plain scan")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return parser


def _classify_parser():
    parser = argparse.ArgumentParser(
        prog="svmmap_classify",
        description="Score documents with a trained svmmap model and report ranking metrics.")
    parser.add_argument("test_file", help="SVMlight/LETOR file (or index file)")
    parser.add_argument("model_file", help="model written by svmmap_learn")
    parser.add_argument("predictions_file", help="where to write one score per input line")
    parser.add_argument("-v", dest="verbose", type=int, default=1,
                        help="0 quiet, 1 metrics (default)")
    parser.add_argument("--convention", choices=metrics.CONVENTIONS, default="letor",
                        help="evaluation convention (default letor: queries without relevant "
                             "documents count as AP 0; trec_eval leaves them out)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return parser


def _run(prog, debug, action):
    """Run ``action``; turn the errors a user can cause into one line and exit status 1."""
    try:
        action()
    except (SVMMapError, QPError, OSError) as exc:
        if debug:
            raise
        message = str(exc)
        if isinstance(exc, OSError) and exc.filename is not None:
            message = f"{exc.filename}: {exc.strerror}"
        print(f"{prog}: error: {message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    return 0


def _write_lines_atomically(path, lines):
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                               dir=path.parent if str(path.parent) else ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.writelines(lines)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def learn_main(argv=None):
    args = _learn_parser().parse_args(argv)

    def learn():
        X, y, qid = load_svmlight(args.train_file)
        model = SVMMap(C=args.C, loss=args.loss, epsilon=args.epsilon,
                       algorithm=ALGORITHMS[args.algorithm], max_iter=args.max_iter,
                       max_time=args.max_time, n_threads=args.threads, oracle=args.oracle,
                       verbose=1 if args.verbose >= 2 else 0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.fit(X, y, qid)
        for warning in caught:
            print(f"svmmap_learn: note: {warning.message}", file=sys.stderr)
        result = model.training_result_
        if args.verbose >= 1:
            print(f"Read {X.shape[0]} documents, {len(np.unique(qid))} queries, "
                  f"{X.shape[1]} features from {args.train_file}")
            print(result.report())
        if not result.converged:
            print(f"svmmap_learn: note: training stopped before convergence ({result.status}); "
                  "the model is the best one found and is marked as not converged",
                  file=sys.stderr)
        model.save(args.model_file)

    return _run("svmmap_learn", args.debug, learn)


def classify_main(argv=None):
    args = _classify_parser().parse_args(argv)

    def classify():
        model = SVMMap.load(args.model_file)
        X, y, qid = load_svmlight(args.test_file, n_features=len(model.coef_))
        scores = model.decision_function(X)
        _write_lines_atomically(args.predictions_file, [f"{s!r}\n" for s in scores.tolist()])
        if args.verbose >= 1:
            summary = metrics.evaluate(scores, y, qid, convention=args.convention)
            print(f"Scored {len(scores)} documents of {len(np.unique(qid))} queries "
                  f"({args.convention} convention, {summary['queries']} queries averaged)")
            for name, value in summary.items():
                if name != "queries":
                    print(f"{name}: {value:.4f}")

    return _run("svmmap_classify", args.debug, classify)
