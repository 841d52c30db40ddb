"""svmmap_classify (also installed as svmmap_baseline_classify): score a data file with a model
file of any kind (svmmap.data.model_file), write one score per input line and report the ranking
metrics:

    svmmap_classify [-v level] [--metrics LIST] [--convention letor|trec_eval]
                    test_file model_file predictions_file

Parsing the arguments imports no numpy, scipy or scikit-learn; the readers, the scorer and the
metrics are imported inside the command body, and an svmmap model scores the reader's CSR
arrays without scipy (svmmap.kernels._csr; another kind's estimator gets a scipy matrix).
"""

import argparse
import re
import sys

from ..core.measures import help_text, parse_metrics
from ..core.options import CONVENTIONS, DTYPES, MAX_ABS_VALUE
from ..data.atomic import OutputKind, check_output
from .common import (
    ArgumentParser,
    HelpFormatter,
    add_force_option,
    add_group_option,
    positive_int,
    refuse_swapped,
    run,
)

__all__ = ["classify_main"]


def classify_parser(prog, model_help="model written by svmmap_learn or svmmap_baseline_learn"):
    """The parser of a classify command named ``prog`` (its model argument described by
    ``model_help``)."""
    parser = ArgumentParser(
        formatter_class=HelpFormatter,
        prog=prog,
        description="Score documents with a trained svmmap model of any kind (SVM-MAP and "
                    "the other structural SVMs, AdaRank, RankBoost, PRank) and report ranking "
                    "metrics.")
    parser.add_argument("test_file", help="SVMlight/LETOR file (gzip, bzip2 or xz too; - for "
                                          "standard input), or an index file")
    parser.add_argument("model_file", help=model_help)
    parser.add_argument("predictions_file", help="where to write one score per input line "
                                                 "(- for standard output; the metrics then "
                                                 "go to standard error)")
    parser.add_argument("-v", "--verbose", type=int, default=1,
                        help="0 quiet, 1 metrics (default)")
    parser.add_argument("--convention", choices=CONVENTIONS, default="letor",
                        help="evaluation convention: letor (default; LETOR's scripts: ties "
                             "in file order, NDCG gain 2^label-1) or trec_eval (ties by docno "
                             "descending: LETOR's '#docid = X' comments, else line numbers, "
                             "the later line first; NDCG gain = label, discount "
                             "1/log2(rank+1)); both count a query without a relevant document "
                             "with AP 0")
    parser.add_argument("--metrics", type=_metrics, default=None, metavar="LIST",
                        help=f"what to report, in this order: {help_text('report')} "
                             "(default: MAP, NDCG@1,3,5,10, P@1,3,5,10, MRR, NDCG, ROC)")
    add_group_option(parser)
    parser.add_argument("--run", default=None, metavar="FILE",
                        help="also write the scores as a TREC run (qid Q0 docno rank score "
                             "tag; docnos from LETOR's '#docid = X' comments, else line "
                             "numbers), for trec_eval, ir_measures, ranx or PyTerrier")
    parser.add_argument("--run-tag", default="svmmap", metavar="TAG",
                        help="the run's tag, its last column (default svmmap)")
    parser.add_argument("--qrels", default=None, metavar="FILE",
                        help="also write the test file's labels as TREC qrels (qid 0 docno "
                             "label, negative labels as 0)")
    parser.add_argument("--n-threads", "--threads", dest="n_threads", type=positive_int,
                        default=1, metavar="N",
                        help="threads reading the test file (default 1)")
    parser.add_argument("--dtype", choices=DTYPES, default="float64",
                        help="storage of the feature values read (load_svmlight's dtype): "
                             "float32 halves it (default float64)")
    add_force_option(parser, "a predictions file (every line one number, not all integers)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return parser


#: one line of a predictions file: one decimal number (Python's float repr: '0.5', '1.0',
#: '-2e-05', 'nan', 'inf', '-inf'), blanks around it
_PREDICTION_LINES = re.compile(
    rb"(?:[ \t]*[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|nan|inf)"
    rb"[ \t]*\r?\n)*")
#: a number that is not an integer has one of these
_NOT_INTEGER = re.compile(rb"[.eEni]")
_PREDICTIONS_CHUNK = 1 << 20


def _is_predictions_file(path):
    """True when every line of the file ``path`` holds one number and not all of them are
    integers: svmmap_classify writes one Python float repr per line ('0.5', '1.0', '-2e-05'),
    svm_rank's and other tools' scores look the same, whereas a data file has more than one
    token on a line and a group file holds integers only.  Reads the file in chunks of whole
    lines and stops at the first chunk with a line that is not a number."""
    fraction, rest = False, b""
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(_PREDICTIONS_CHUNK):
                lines, _, rest = (rest + chunk).rpartition(b"\n")
                if len(rest) > _PREDICTIONS_CHUNK or \
                        not _PREDICTION_LINES.fullmatch(lines + b"\n" if lines else b""):
                    return False
                fraction = fraction or _NOT_INTEGER.search(lines) is not None
    except OSError:
        return False
    if rest.strip():  # the last line, without a line end
        if not _PREDICTION_LINES.fullmatch(rest + b"\n"):
            return False
        fraction = fraction or _NOT_INTEGER.search(rest) is not None
    return fraction


#: what svmmap_classify writes (svmmap.data.atomic.check_output)
PREDICTIONS = OutputKind("a predictions file (every line one number, not all integers)",
                         _is_predictions_file)


def _metrics(text):
    try:
        return ",".join(name + ("" if k is None else f"@{k}")
                        for name, k in parse_metrics(text))
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _n_distinct(ordered):
    """The number of distinct values of a sorted array (np.unique would also import
    numpy.ma, 6 ms of a small run's start-up)."""
    return int(len(ordered) > 0) + int((ordered[1:] != ordered[:-1]).sum())


#: the predictions path that means standard output (the metrics then go to standard error)
STDOUT = "-"


def classify_main(argv=None, prog="svmmap_classify"):
    """Score ``test_file`` with the model of ``model_file`` (any kind: svmmap.data.model_file);
    ``predictions_file`` "-" writes the scores to standard output."""
    parser = classify_parser(prog)
    args = parser.parse_args(argv)
    refuse_swapped(parser, args.test_file, "test_file model_file predictions_file")
    outputs = [p for p in (args.predictions_file, args.run, args.qrels) if p is not None]
    if len(set(outputs)) < len(outputs):
        parser.error("the predictions, --run and --qrels files must be different files")
    if args.run is not None:  # the run's tag checked before anything is read or written
        from ..data.trec_run import run_tag_error

        if run_tag_error(args.run_tag):
            parser.error(f"argument --run-tag: {run_tag_error(args.run_tag)}")

    def classify():
        import numpy as np

        from .. import metrics
        from ..data import trec_run
        from ..data.atomic import write_text_atomically
        from ..data.io import input_files, measure_label_rules, read_svmlight
        from ..data.model_file import load_scorer

        to_stdout = args.predictions_file == STDOUT
        inputs = [args.model_file, *input_files(args.test_file), args.group]
        outputs = [(None if to_stdout else args.predictions_file, PREDICTIONS),
                   (args.run, trec_run.RUN_FILE), (args.qrels, trec_run.QRELS_FILE)]
        outputs = [(path, kind) for path, kind in outputs if path is not None]
        for path, kind in outputs:
            check_output(path, inputs, writes=kind, force=args.force)
        n_features, score = load_scorer(args.model_file)
        trec = args.run is not None or args.qrels is not None or \
            args.convention == "trec_eval"
        # what the outputs need of the labels, refused with file and line while reading
        label_rules = measure_label_rules(parse_metrics(args.metrics)) \
            if args.metrics is not None and args.verbose >= 1 else ()
        if args.qrels is not None:
            label_rules = (*label_rules, trec_run.QRELS_GRADES)
        listed = []  # what an index file in a pipe lists: known once it is read
        # X as the reader gives it (dense, or CSR arrays): scored without importing scipy
        X, y, qid, *comments = read_svmlight(
            args.test_file, n_features=n_features, group=args.group,
            max_abs_value=MAX_ABS_VALUE, n_threads=args.n_threads, return_comments=trec,
            files_read=listed, dtype=args.dtype, label_rules=label_rules,
            width_of=args.model_file)
        for path, _ in outputs:
            check_output(path, listed)
        docnos = trec_run.docnos_from_comments(comments[0]) if trec else None
        scores = score(X, qid)
        # every output and the report made before the first file is written: a failure
        # leaves the file system as it was
        written = [(args.predictions_file, [f"{s!r}\n" for s in scores.tolist()])]
        if args.run is not None:
            written.append((args.run, trec_run.run_lines(qid, docnos, scores, args.run_tag)))
        if args.qrels is not None:
            written.append((args.qrels, trec_run.qrels_lines(qid, docnos, y)))
        summary = None
        if args.verbose >= 1:
            summary = metrics.evaluate(scores, y, qid, convention=args.convention,
                                       measures=args.metrics,
                                       docnos=docnos if args.convention == "trec_eval"
                                       else None)
        for path, lines in written:
            if path == STDOUT:
                sys.stdout.writelines(lines)
                sys.stdout.flush()
            else:
                write_text_atomically(path, lines)
        if summary is not None:
            report = sys.stderr if to_stdout else sys.stdout
            print(f"Scored {len(scores)} documents of {_n_distinct(np.sort(qid))} queries "
                  f"({args.convention} convention, {summary['queries']} queries averaged)",
                  file=report)
            for name, value in summary.items():
                if name != "queries":
                    print(f"{name}: {value:.4f}", file=report)

    return run(prog, args.debug, classify, args.test_file)
