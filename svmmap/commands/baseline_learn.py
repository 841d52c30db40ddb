"""svmmap_baseline_learn, with svmmap_learn's conventions and vocabulary:

    svmmap_baseline_learn    --method adarank|rankboost|prank [-l map|ndcg] [options]
                             train_file model_file

Every option's long name is the estimator parameter's (``--max-rounds`` / ``max_rounds``,
``--ndcg-k`` / ``ndcg_k``, ``--n-thresholds`` / ``n_thresholds``).  ``-l`` / ``--loss`` is
what is optimised, as in svmmap_learn: AdaRank's measure (``map`` for AdaRank.MAP, ``ndcg``
for AdaRank.NDCG); RankBoost (exponential pairwise loss) and PRank (ranking loss) have no
choice to make and refuse it.  ``svmmap_baseline_classify`` is ``svmmap_classify``
(svmmap.commands.baseline_classify), which reads a model file of any kind.  Errors are one
line and exit status 1, as in svmmap_learn.  numpy, the readers and the estimators are
imported inside the command bodies, after the argument parsing: ``--help`` and argument
errors import nothing heavy.
"""

import argparse

from ..core.options import MAX_ABS_VALUE
from ..data.atomic import check_output
from ..data.model_file import model_output
from ..errors import InputFormatError
from .common import (
    ArgumentParser,
    HelpFormatter,
    add_force_option,
    add_group_option,
    check_params,
    run,
    warnings_as_notes,
)

METHODS = ("adarank", "rankboost", "prank")
#: what svmmap_baseline_learn writes: an existing model_file of another kind is refused
BASELINE_MODEL = model_output(METHODS, "a baseline model file (adarank, rankboost or prank)")


def _learn_parser():
    parser = ArgumentParser(
        formatter_class=HelpFormatter,
        prog="svmmap_baseline_learn",
        description="Train a baseline ranker: AdaRank (Xu & Li 2007), RankBoost (Freund et al. "
                    "2003) or PRank (Crammer & Singer 2001).")
    parser.add_argument("train_file", help="SVMlight/LETOR file (or index file)")
    parser.add_argument("model_file", help="where to write the model (JSON)")
    parser.add_argument("--method", choices=METHODS, required=True,
                        help="the learning method")
    parser.add_argument("-l", "--loss", choices=("map", "ndcg"), default=None,
                        help="what is optimised (as svmmap_learn's -l): AdaRank's measure, "
                             "map (AdaRank.MAP, default) or ndcg (AdaRank.NDCG)")
    parser.add_argument("-t", "--max-rounds", type=int, default=None,
                        help="AdaRank / RankBoost: at most this many boosting rounds "
                             "(default 500 / 300)")
    parser.add_argument("--n-epochs", type=int, default=10,
                        help="PRank: passes over the training documents (default 10)")
    parser.add_argument("--eval-set", "--valid", dest="eval_set", default=None, metavar="FILE",
                        help="validation file: AdaRank / RankBoost keep the round count with "
                             "the best validation measure")
    parser.add_argument("--ndcg-k", type=int, default=10,
                        help="cut-off k of AdaRank.NDCG's NDCG@k (default 10)")
    parser.add_argument("--n-thresholds", "--thresholds", dest="n_thresholds", type=int,
                        default=32, help="RankBoost: candidate thresholds per feature "
                                         "(default 32)")
    parser.add_argument("--averaged", action=argparse.BooleanOptionalAction, default=True,
                        help="PRank: the averaged weights (default) or, with --no-averaged, "
                             "the last ones")
    parser.add_argument("-v", "--verbose", type=int, default=1,
                        help="0 quiet, 1 summary (default), 2 a line per round")
    add_group_option(parser)
    add_force_option(parser, "a baseline model file")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return parser


#: baseline parameter -> the svmmap_baseline_learn option that sets it
FLAGS = {"loss": "-l/--loss", "max_rounds": "-t/--max-rounds", "n_epochs": "--n-epochs",
         "ndcg_k": "--ndcg-k", "n_thresholds": "--n-thresholds"}


def _model(parser, args):
    """The baseline the options describe, its parameters validated by the estimator (this
    imports the estimators: after the argument parsing, not for --help)."""
    if args.loss is not None and args.method != "adarank":
        parser.error(f"-l/--loss chooses AdaRank's measure; {args.method} has no choice")
    if args.max_rounds is not None and args.method == "prank":
        parser.error("-t/--max-rounds applies to AdaRank and RankBoost; PRank has --n-epochs")
    from ..baselines import AdaRank, PRank, RankBoost

    verbose = 1 if args.verbose >= 2 else 0
    if args.method == "adarank":
        model = AdaRank(loss=args.loss or "map", ndcg_k=args.ndcg_k,
                        max_rounds=500 if args.max_rounds is None else args.max_rounds,
                        verbose=verbose)
    elif args.method == "rankboost":
        model = RankBoost(max_rounds=300 if args.max_rounds is None else args.max_rounds,
                          n_thresholds=args.n_thresholds, verbose=verbose)
    else:
        model = PRank(n_epochs=args.n_epochs, averaged=args.averaged)
    check_params(parser, model.check_params, FLAGS)
    return model


def learn_main(argv=None):
    """svmmap_baseline_learn: train a baseline ranker on ``argv``'s files (default: the
    command line's) and write its model; return the exit status."""
    parser = _learn_parser()
    args = parser.parse_args(argv)
    model = _model(parser, args)

    def learn():
        import numpy as np

        from ..baselines.prank import PRank
        from ..data.io import input_files, load_svmlight, read_svmlight
        from ..kernels._csr import as_scipy

        inputs = [*input_files(args.train_file), args.group]
        if args.eval_set is not None:
            inputs += input_files(args.eval_set)
        check_output(args.model_file, inputs, BASELINE_MODEL, args.force)
        listed = []  # what an index file in a pipe lists: known once it is read
        X, y, qid = load_svmlight(args.train_file, group=args.group,
                                  max_abs_value=MAX_ABS_VALUE, files_read=listed)
        check_output(args.model_file, listed)
        options = {}
        if args.eval_set is not None:
            if isinstance(model, PRank):
                raise InputFormatError("--eval-set applies to AdaRank and RankBoost only")
            Xv, yv, qv = read_svmlight(args.eval_set, n_features=X.shape[1],
                                       max_abs_value=MAX_ABS_VALUE, width_of=args.train_file)
            options["eval_set"] = (as_scipy(Xv), yv, qv)
        with warnings_as_notes("svmmap_baseline_learn"):
            try:
                model.fit(X, y, qid, **options)
            except InputFormatError as exc:  # the validation data's: name its file
                if exc.path is not None or not exc.reason.startswith("eval_set"):
                    raise
                raise InputFormatError(exc.reason, args.eval_set) from None
        if args.verbose >= 1:
            size = f"{model.n_rounds_} rounds" if hasattr(model, "n_rounds_") else \
                f"{model.n_epochs} epochs, {int(model.n_updates_.sum())} updates"
            print(f"Read {X.shape[0]} documents, {len(np.unique(qid))} queries, "
                  f"{X.shape[1]} features from {args.train_file}; trained {model!r} "
                  f"({size}); training MAP {model.score(X, y, qid):.4f}")
        model.save(args.model_file)

    return run("svmmap_baseline_learn", args.debug, learn, args.train_file)
