"""Command-line tools of the baselines, with svmmap_learn's conventions:

    svmmap_baseline_learn    -l adarank-map|adarank-ndcg|rankboost|prank [options]
                             train_file model_file
    svmmap_baseline_classify [-v level] test_file model_file predictions_file

``svmmap_baseline_classify`` reads a model file of any kind (dispatching on its ``kind``);
SVMMap model files are handed to ``svmmap_classify`` unchanged.  Errors are one line and exit
status 1, as in svmmap.cli.
"""

import argparse
import sys
import warnings

import numpy as np

from .. import cli, metrics
from ..atomic import check_output, write_text_atomically
from ..errors import InputFormatError
from ..io import input_files, load_svmlight
from ..model_file import model_kind, read_model
from ..options import MAX_ABS_VALUE
from . import AdaRank, PRank, RankBoost, load_model

METHODS = ("adarank-map", "adarank-ndcg", "rankboost", "prank")


def _learn_parser():
    parser = argparse.ArgumentParser(
        prog="svmmap_baseline_learn",
        description="Train a baseline ranker: AdaRank (Xu & Li 2007), RankBoost (Freund et al. "
                    "2003) or PRank (Crammer & Singer 2001).")
    parser.add_argument("train_file", help="SVMlight/LETOR file (or index file)")
    parser.add_argument("model_file", help="where to write the model (JSON)")
    parser.add_argument("-l", dest="method", choices=METHODS, required=True,
                        help="the method")
    parser.add_argument("-t", dest="rounds", type=cli._positive_int, default=None,
                        help="boosting rounds (AdaRank: at most, default 500; RankBoost: "
                             "default 300) or PRank epochs (default 10)")
    parser.add_argument("--valid", default=None,
                        help="validation file: AdaRank / RankBoost keep the round count with "
                             "the best validation measure")
    parser.add_argument("--ndcg-k", type=cli._positive_int, default=10,
                        help="cut-off k of AdaRank.NDCG's NDCG@k (default 10)")
    parser.add_argument("--thresholds", type=cli._positive_int, default=32,
                        help="RankBoost: candidate thresholds per feature (default 32)")
    parser.add_argument("--no-average", action="store_true",
                        help="PRank: the last weights instead of the averaged ones")
    parser.add_argument("-v", dest="verbose", type=int, default=1,
                        help="0 quiet, 1 summary (default), 2 a line per round")
    cli.add_group_option(parser)
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return parser


def _model(args):
    verbose = 1 if args.verbose >= 2 else 0
    if args.method.startswith("adarank"):
        return AdaRank(measure=args.method.split("-")[1], k=args.ndcg_k,
                       max_rounds=args.rounds or 500, verbose=verbose)
    if args.method == "rankboost":
        return RankBoost(n_rounds=args.rounds or 300, n_thresholds=args.thresholds,
                         verbose=verbose)
    return PRank(n_epochs=args.rounds or 10, averaged=not args.no_average)


def learn_main(argv=None):
    args = _learn_parser().parse_args(argv)

    def learn():
        inputs = [*input_files(args.train_file), args.group]
        if args.valid is not None:
            inputs += input_files(args.valid)
        check_output(args.model_file, inputs)
        X, y, qid = load_svmlight(args.train_file, group=args.group,
                                  max_abs_value=MAX_ABS_VALUE)
        model = _model(args)
        options = {}
        if args.valid is not None:
            if isinstance(model, PRank):
                raise InputFormatError("--valid applies to AdaRank and RankBoost only")
            options["eval_set"] = load_svmlight(args.valid, n_features=X.shape[1],
                                                max_abs_value=MAX_ABS_VALUE)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.fit(X, y, qid, **options)
        for warning in caught:
            print(f"svmmap_baseline_learn: note: {warning.message}", file=sys.stderr)
        if args.verbose >= 1:
            size = f"{model.n_rounds_} rounds" if hasattr(model, "n_rounds_") else \
                f"{model.n_epochs} epochs, {int(model.n_updates_.sum())} updates"
            print(f"Read {X.shape[0]} documents, {len(np.unique(qid))} queries, "
                  f"{X.shape[1]} features from {args.train_file}; trained {args.method} "
                  f"({size}); training MAP {model.score(X, y, qid):.4f}")
        model.save(args.model_file)

    return cli._run("svmmap_baseline_learn", args.debug, learn, args.train_file)


def classify_main(argv=None):
    parser = cli._classify_parser(prog="svmmap_baseline_classify",
                                  model_help="model written by svmmap_baseline_learn (or by "
                                             "svmmap_learn)")
    args = parser.parse_args(argv)
    kind = []

    def classify():
        kind.append(model_kind(read_model(args.model_file)))
        if kind[0] == "svmmap":
            return
        check_output(args.predictions_file,
                     [args.model_file, *input_files(args.test_file), args.group])
        model = load_model(args.model_file)
        X, y, qid = load_svmlight(args.test_file, n_features=model.n_features_in_,
                                  group=args.group, max_abs_value=MAX_ABS_VALUE)
        scores = model.decision_function(X)
        write_text_atomically(args.predictions_file, [f"{s!r}\n" for s in scores.tolist()])
        if args.verbose >= 1:
            summary = metrics.evaluate(scores, y, qid, convention=args.convention,
                                       measures=args.metrics)
            print(f"Scored {len(scores)} documents of {len(np.unique(qid))} queries with a "
                  f"{kind[0]} model ({args.convention} convention, {summary['queries']} "
                  "queries averaged)")
            for name, value in summary.items():
                if name != "queries":
                    print(f"{name}: {value:.4f}")

    status = cli._run("svmmap_baseline_classify", args.debug, classify, args.test_file)
    if status == 0 and kind == ["svmmap"]:
        return cli.classify_main(argv)
    return status
