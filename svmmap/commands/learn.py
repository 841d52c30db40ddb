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

from __future__ import annotations

import contextlib
import sys
import time
from typing import TYPE_CHECKING, Any

from ..core import interrupts
from ..core.measures import parse_loss, parse_metrics
from ..core.options import DEFAULT_SELECT_TOL, MAX_ABS_VALUE
from ..data.atomic import check_output
from ..data.model_file import model_output
from ..errors import InputFormatError, SVMMapError
from .common import Background, refuse_swapped, run, warnings_as_notes
from .learn_options import learn_params, learn_parser, refuse_argv

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from pathlib import Path

    from svmstruct_api.callbacks import Callback

    from ..core._typing import FloatArray, Vector
    from ..core.collection import QueryCollection
    from ..core.training import FittedModel

    #: X as the reader gives it: a dense ndarray or CSR arrays (svmmap.kernels._csr)
    ReaderMatrix = Any

__all__ = ["learn_main"]

#: what svmmap_learn writes: an existing model_file of another kind is refused (--force)
SVMMAP_MODEL = model_output(("svmmap",), "an svmmap model file")


def learn_main(argv: list[str] | None = None) -> int:
    """svmmap_learn (module docstring): train on ``argv``'s files (default: the command
    line's) and write the model; return the exit status."""
    parser = learn_parser()
    refuse_argv(parser, sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    refuse_swapped(parser, args.train_file, "train_file model_file")
    params = learn_params(parser, args)

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


def _learn_here(args: argparse.Namespace, params: dict[str, Any], selecting: bool,
                started: float) -> tuple[FittedModel, Callable[[str], None], None]:
    """Read the data and train in this process, through svmmap.core.training and
    svmmap.core.selection (no scikit-learn unless binning); return (the
    svmmap.core.training.FittedModel, a function writing the model file, None).

    The training file is read in a helper thread while this one imports the training
    modules (the reader's parsing runs without the GIL): start-up and reading overlap, as
    they take about as long on a small file (benchmarks/startup.py)."""
    from ..data.io import NDCG_GRADES, input_files, read_svmlight

    vali_files = [] if args.eval_set is None else input_files(args.eval_set)
    check_output(args.model_file, [*input_files(args.train_file), args.group, *vali_files,
                                   args.query_weights], SVMMAP_MODEL, args.force)
    loss = parse_loss(args.loss)[0]
    listed: list[Path] = []  # what an index file in a pipe lists: known once it is read
    # X as the reader gives it (dense, or CSR arrays): no scipy import (svmmap.kernels._csr);
    # CSR arrays that take no less memory than X dense (SVMlight lines of a dense set) are
    # made X dense and let go: the smaller X, and the faster to train on
    reading = Background(lambda: _dense_if_no_larger(read_svmlight(
        args.train_file, group=args.group, max_abs_value=MAX_ABS_VALUE,
        n_threads=args.n_threads, label_rules=(NDCG_GRADES,) if loss == "ndcg" else (),
        files_read=listed, dtype=args.dtype)))
    # the modules training needs, imported now, while the file is read: the plugin of the
    # loss and the solvers (svmmap.core.training imports the learner only where one is made)
    import svmstruct_api.learner  # noqa: F401

    from ..core import training
    from ..core.measures import MEASURES
    from ..data.model_file import write_model

    training.plugin_class(MEASURES[loss].plugin)
    callbacks = _learn_callbacks(args.verbose)
    X, y, qid = reading.result()
    check_output(args.model_file, listed)
    data, sample_weight = _training_data(args, X, y, qid, selecting, started)
    if selecting:
        fitted = _fit_path(args, params, data, callbacks)
        assert fitted.selection is not None  # a path's model records its selection
        params = {**params, "C": fitted.selection["C"]}
    else:
        try:
            fitted = training.fit(params, data, sample_weight, callbacks)
        except training.QueryWeightsError as exc:  # the weights file is what is wrong
            raise InputFormatError(exc.reason, args.query_weights) from None

    def save(path: str) -> None:
        write_model(path, training.model_content(params, data.n_features, fitted))

    return fitted, save, None


def _dense_if_no_larger(read: tuple) -> tuple:
    """The reader's (X, y, qid) with X dense where that takes no more memory than its CSR
    arrays (svmmap.kernels._csr.dense_if_no_larger), which are then let go (both are held
    while the one is made from the other): the fused passes score dense rows and sum them a
    row of contiguous values at a time, not a value at a time through its index (with the
    cut groups' sums in the pass, 0.74-0.98 of the command's time on issue 33's ltr_like
    sets, 72% non-zero: docs/pages/benchmarks.md, vs_svm_rank_issue33_s8.md)."""
    from ..kernels._csr import dense_if_no_larger

    X, *rest = read
    return (dense_if_no_larger(X), *rest)


def _training_data(args: argparse.Namespace, X: ReaderMatrix, y: FloatArray, qid: Vector,
                   selecting: bool, started: float
                   ) -> tuple[QueryCollection, dict[int | str, float] | None]:
    """(the QueryCollection, the query weights or None) of the reader's training arrays,
    with the notes and the line on what was read."""
    from ..core.collection import QueryCollection
    from ..data.io import load_query_weights

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
    return data, sample_weight


def _fit_path(args: argparse.Namespace, params: dict[str, Any], data: QueryCollection,
              callbacks: list[Callback]) -> FittedModel:
    """The model chosen along the C path of -c on --eval-set or --holdout
    (svmmap.core.selection.fit_c_path)."""
    from ..core import selection
    from ..core.collection import QueryCollection
    from ..data.io import measure_label_rules, read_svmlight

    metric = args.select_metric or "map"
    vali = None
    if args.eval_set is not None:
        vali = QueryCollection.from_checked(*read_svmlight(
            args.eval_set, n_features=data.n_features, max_abs_value=MAX_ABS_VALUE,
            n_threads=args.n_threads, dtype=args.dtype, width_of=args.train_file,
            label_rules=measure_label_rules(parse_metrics(metric))))
    tol = DEFAULT_SELECT_TOL if args.select_tol is None else args.select_tol
    return selection.fit_c_path(params, data, sorted(args.C), vali, metric, tol, callbacks,
                                holdout_fraction=args.holdout, refit_all=args.refit,
                                vali_path=args.eval_set)


#: a training file's feature count (its highest index) more than this many times the number
#: of distinct features its lines use is noted: every dense vector of training and the model
#: are that long (a mistyped index of 100000000 made an 800 MB model)
UNUSED_WIDTH_RATIO = 100
#: ... from this feature count on
UNUSED_WIDTH_MIN = 1000


def _learn_callbacks(verbose: int) -> list[Callback]:
    """-v 1: the live progress display on stderr; -v 2: a line per iteration on stdout (the
    report is printed once, by learn_main, in both)."""
    from ..core.progress import IterationLines, ProgressDisplay

    if verbose >= 2:
        return [IterationLines()]
    return [ProgressDisplay()] if verbose == 1 else []


def _note_unused_width(X: ReaderMatrix, path: str) -> None:
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


def _learn_on_dask(args: argparse.Namespace, params: dict[str, Any],
                   stack: contextlib.ExitStack, callbacks: list[Callback]
                   ) -> tuple[FittedModel, Callable[[str], None], tuple[int, int, int]]:
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
