"""Training and prediction on a Dask cluster: the data stays on the workers.

``DaskSVMMap`` trains the same model as ``SVMMap`` (1-slack formulation) on Dask arrays or
DataFrames.  The training data is cut into partitions that each hold whole queries (a query
never spans two partitions: the row chunks are moved to query boundaries, or a clear error
names the query); every partition becomes the ranking plugin of its trainable queries,
persisted on the worker that holds it.  One cutting-plane iteration then is

    w  --(client -> every partition)-->  fused pass over the partition's queries
       (scores, per-query sort, oracle, dpsi_q = X_q^T (c*_q - c_hat_q): the plugin's batch
       hook, svmmap.kernels._map_kernels.map_constraints / _roc_kernels.roc_constraints)
       -->  (sum_q Delta_q, sum_q dpsi_q)  of the partition
       -->  pairwise tree reduction in partition order  -->  client,

so only w goes out and only a d-vector and a scalar per partition come back; the learner
(svmstruct_api.learner) and the working-set QP run on the client and see the whole pass as
the plugin interface's batch hook returning a ``SummedConstraint``.  The reduction order is
fixed by the partition order, so the same layout gives the same bits on every run.

Only the 1-slack formulation is distributed: n-slack keeps one working set per query on the
client, i.e. up to (iterations x queries) dense d-vectors there -- as large as the data for
LETOR-shaped queries -- and the constraint cache (``cache_size``) likewise stores outputs per
query.  Both are refused with a clear message.

``read_svmlight(paths)`` reads a list or a glob of SVMlight shards, each on a worker.

Dask (``pip install svmmap[dask]``) is imported when this module is.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import signal
import threading

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

try:
    import dask
    import dask.array as da
    from dask.distributed import Client, LocalCluster, default_client, wait
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("svmmap.dask needs Dask: pip install 'svmmap[dask]' "
                      "(dask[distributed])") from exc

from typing import TYPE_CHECKING

from svmstruct_api.plugin import ConstraintBatch, GroupedSums, StructuredModel, SummedConstraint

from . import metrics
from ._dask_partitions import _as_dask_matrix, _is_dataframe, aligned_partitions, query_boundaries
from .core import training
from .core.collection import QueryCollection
from .core.options import DEFAULT_EPSILON, DEFAULT_REL_GAP
from .core.params import DASK, rules_for
from .core.training import make_plugin
from .data import io as _io
from .data.io import STDIN, group_file
from .errors import InputFormatError, SVMMapError
from .estimator import SVMMap
from .kernels._csr import as_scipy

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any, Self, Union

    import dask.dataframe
    import numpy.typing as npt

    from .core._typing import Callbacks, FloatArray, IntArray, Matrix, PathLike, Vector
    from .features import BinnedFeatureMap

    #: what DaskSVMMap takes: Dask collections (kept on the workers) or local data
    DaskOrLocalMatrix = Union[da.Array, dask.dataframe.DataFrame, Matrix]
    DaskOrLocalVector = Union[da.Array, dask.dataframe.Series, Vector]

__all__ = ["DaskSVMMap", "aligned_partitions", "query_boundaries", "read_svmlight"]



class DaskSVMMap(SVMMap):
    """SVMMap trained on a Dask cluster (see the module docstring for how).

    Parameters: those of SVMMap, plus ``client``, the dask.distributed Client to use
    (default: the current one, ``dask.distributed.default_client()``).  ``algorithm`` must
    be "1-slack", ``cache_size`` 0, ``feature_map`` None and ``loss`` a ranking loss (not
    "acc": every ranking loss's fused pass runs per partition through its plugin).
    ``n_threads`` is the oracle's threads inside each partition's task.

    ``fit(X, y, qid)`` takes Dask arrays or DataFrames / Series (numpy arrays are cut into
    X's row chunks); ``decision_function`` / ``predict`` return a Dask array (a Dask Series
    for a DataFrame); ``score`` is MAP, reduced over query-aligned partitions;
    ``to_local()`` is the plain SVMMap with the same coefficients, and save/load use the
    one model-file path (the file is an ordinary svmmap model).
    """

    def __init__(self, C: float = 1.0, loss: str = "map", epsilon: float | None = DEFAULT_EPSILON,
                 algorithm: str = "1-slack", max_iter: int | None = None,
                 max_time: float | None = None, n_threads: int = 1, oracle: str = "divide",
                 verbose: int = 0, feature_map: BinnedFeatureMap | None = None,
                 cost_ratio: float = 1.0, qp_solver: str = "smo", cache_size: int = 0,
                 rel_gap: float | None = DEFAULT_REL_GAP, normalize: str | None = None,
                 client: Client | None = None) -> None:
        super().__init__(C=C, loss=loss, epsilon=epsilon, algorithm=algorithm,
                         max_iter=max_iter, max_time=max_time, n_threads=n_threads,
                         oracle=oracle, verbose=verbose, feature_map=feature_map,
                         cost_ratio=cost_ratio, qp_solver=qp_solver, cache_size=cache_size,
                         rel_gap=rel_gap, normalize=normalize)
        self.client = client

    _parameter_rules = rules_for(DASK)

    def check_params(self) -> None:
        """SVMMap's validation, then what the distributed trainer supports."""
        super().check_params()
        if self.loss == "acc":
            raise ValueError("DaskSVMMap trains the ranking losses, not loss='acc' (a "
                             "classifier over documents)")
        if self.algorithm != "1-slack" or self.cache_size:
            raise ValueError("DaskSVMMap trains the 1-slack formulation without constraint "
                             "cache only (algorithm='1-slack', cache_size=0): n-slack and "
                             "the cache keep per-query constraints on the client")
        if self.feature_map is not None:
            raise ValueError("DaskSVMMap does not fit binned features (feature_map=None): "
                             "bin the data first")
        if self.normalize is not None:
            raise ValueError("DaskSVMMap does not fit a normaliser (normalize=None): "
                             "normalise the data first")

    def _client(self):
        return self.client if self.client is not None else default_client()

    # -- training ----------------------------------------------------------------------------

    def fit(self, X: DaskOrLocalMatrix, y: DaskOrLocalVector,  # type: ignore[override]
            qid: DaskOrLocalVector, callbacks: Callbacks | None = None) -> Self:
        # (Dask collections, qid required: not SVMMap.fit's arguments)
        """Train on the documents X with labels y (relevant: y > 0) grouped by qid, all kept
        on the workers; return self.  ``callbacks`` as in SVMMap.fit."""
        self.check_params()
        client = self._client()
        if _is_dataframe(X):  # the names SVMMap keeps too (svmmap.export uses them)
            self.feature_names_in_ = np.array([str(c) for c in X.columns], dtype=np.object_)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        X, y, qid = aligned_partitions(X, y, qid, client)
        built = []

        def distributed_problem(params, data, sample_weight):
            """The Problem of the partitions on the workers (svmmap.core.training.fit's hook)."""
            model = DistributedRankingModel(*data, client, self._plugin_params())
            built.append(model)
            training.check_n_features(model.n_features)
            training.check_trainable(model.n_queries, model.n_examples,
                                     model.n_without_relevant, model.n_all_relevant)
            return training.Problem(plugin=model, n_queries_used=model.n_examples,
                                    n_queries_without_relevant=model.n_without_relevant,
                                    n_queries_all_relevant=model.n_all_relevant)

        try:
            fitted = training.fit(self.get_params(deep=False), (X, y, qid),
                                  callbacks=self._callbacks(callbacks),
                                  make_problem=distributed_problem)
        finally:
            for model in built:
                model.release()
        self._set_fitted(fitted)
        self.n_features_in_ = built[0].n_features
        self.n_queries_ = built[0].n_queries
        self.n_partitions_ = len(built[0].partitions)
        return self

    def _plugin_params(self):
        return {"loss": self.loss, "n_threads": self.n_threads, "oracle": self.oracle}

    # -- prediction --------------------------------------------------------------------------

    def to_local(self) -> SVMMap:
        """The plain SVMMap with the same parameters, coefficients and training record."""
        check_is_fitted(self)
        params = {key: value for key, value in self.get_params(deep=False).items()
                  if key != "client"}
        local = SVMMap(**params)
        local._set_fitted(training.FittedModel.from_attributes(self))
        for name in ("n_features_in_", "feature_names_in_"):
            if hasattr(self, name):
                setattr(local, name, getattr(self, name))
        return local

    def decision_function(  # type: ignore[override]
            self, X: DaskOrLocalMatrix, qid: DaskOrLocalVector | None = None
            ) -> da.Array | dask.dataframe.Series:
        # (a Dask collection of scores, not SVMMap's ndarray)
        """Scores w.x, one per row, as a Dask array (a Dask Series for a DataFrame), computed
        where the rows are."""
        local = self.to_local()
        if _is_dataframe(X):
            import pandas as pd

            def scores(frame):
                return pd.Series(local.decision_function(frame.to_numpy(np.float64)),
                                 index=frame.index, dtype=np.float64)

            return X.map_partitions(scores, meta=pd.Series(dtype=np.float64))
        X = _as_dask_matrix(X)
        return X.map_blocks(local.decision_function, drop_axis=1, dtype=np.float64,
                            meta=np.empty(0, dtype=np.float64))

    predict = decision_function  # type: ignore[assignment]  # (the Dask scores, as above)

    def score(self, X: DaskOrLocalMatrix, y: DaskOrLocalVector,  # type: ignore[override]
              qid: DaskOrLocalVector, convention: str = "letor") -> float:
        # (Dask collections, qid required: not BaseRanker.score's arguments)
        """MAP of the ranking by decision_function (svmmap.metrics, LETOR convention unless
        ``convention="trec_eval"``): per-query AP summed within query-aligned partitions."""
        local = self.to_local()
        client = self._client()
        blocks = [part.to_delayed().ravel() for part in aligned_partitions(X, y, qid, client)]
        parts = [dask.delayed(_ap_sum)(local, xb, yb, qb, convention)
                 for xb, yb, qb in zip(*blocks)]
        sums = client.gather(client.compute(parts))
        total, count = sum(s for s, _ in sums), sum(c for _, c in sums)
        return total / count if count else float("nan")

    # -- persistence -------------------------------------------------------------------------

    def save(self, path: PathLike) -> None:
        """Write the model file of ``to_local()`` (an ordinary svmmap model file)."""
        self.to_local().save(path)

    @classmethod
    def load(cls, path: PathLike, client: Client | None = None) -> DaskSVMMap:
        """Read a model file written by save (of this class or of SVMMap)."""
        local = SVMMap.load(path)
        params = local.get_params(deep=False)
        model = cls(**params, client=client)
        model.check_params()
        for name, value in vars(local).items():
            if name.endswith("_"):
                setattr(model, name, value)
        return model


class DistributedRankingModel(StructuredModel):
    """The training queries as persisted per-partition ranking plugins on the workers; its
    batch hook is the fused pass on every partition, tree-reduced to a SummedConstraint.

    Only the batch hook exists: the per-example SVMstruct hooks would pull single queries
    to the client, which the distributed model never does.
    """

    #: the batch hook returns sums over the queries: over all of them (SummedConstraint),
    #: or per cut group once the learner has set the groups (GroupedSums, sum_by_groups)
    per_example_batches = False

    def __init__(self, X: da.Array, y: da.Array, qid: da.Array, client: Client,
                 plugin_params: dict[str, Any]) -> None:
        self.client = client
        blocks = zip(X.to_delayed().ravel(), y.to_delayed().ravel(), qid.to_delayed().ravel())
        self.partitions = client.compute(
            [dask.delayed(Partition.build)(xb, yb, qb, **plugin_params) for xb, yb, qb in blocks])
        wait(self.partitions)
        summaries = client.gather([client.submit(Partition.summary, part, pure=False)
                                   for part in self.partitions])
        #: the trainable queries (examples) of every partition, in partition order
        self.partition_examples = [int(s[1]) for s in summaries]
        #: the cut group of every example, per partition, and the size of every group
        #: (None: one sum of all)
        self.cut_groups: tuple[list[IntArray], IntArray] | None = None
        counts = np.array([s[:4] for s in summaries], dtype=np.int64).sum(axis=0)
        self.n_queries, self.n_examples, self.n_without_relevant, self.n_all_relevant = \
            (int(c) for c in counts)
        self.n_features = int(X.shape[1])

    def release(self) -> None:
        """Drop the persisted partitions (the cluster frees their memory)."""
        for future in self.partitions:
            future.release()

    def sum_by_groups(self, groups: IntArray) -> bool:
        """Sum the batches per cut group from now on (StructuredModel.sum_by_groups):
        example j of the collection is the trainable query j in partition order, as the
        in-process collection numbers them."""
        offsets = np.cumsum([0, *self.partition_examples])
        self.cut_groups = ([np.ascontiguousarray(groups[a:b], dtype=np.intp)
                            for a, b in zip(offsets[:-1], offsets[1:])],
                           np.bincount(groups).astype(np.intp))
        return True

    def most_violated_constraints(self, w: FloatArray) -> SummedConstraint | GroupedSums:
        """The fused pass on every partition; sum_q Delta_q and sum_q dpsi_q over all
        queries (per cut group once sum_by_groups has set them), reduced pairwise in
        partition order."""
        w = np.ascontiguousarray(w, dtype=np.float64)
        if self.cut_groups is not None:
            partition_groups, counts = self.cut_groups
            per_group = [self.client.submit(Partition.group_sums, part, w, groups,
                                            len(counts), pure=False)
                         for part, groups in zip(self.partitions, partition_groups)]
            losses, dpsis = _tree_sum(self.client, per_group)
            return GroupedSums(counts=counts, loss=losses, dpsi=dpsis)
        sums = [self.client.submit(Partition.constraint_sum, part, w, pure=False)
                for part in self.partitions]
        loss, dpsi = _tree_sum(self.client, sums)
        return SummedConstraint(n=self.n_examples, loss=loss, dpsi=dpsi)

    @staticmethod
    def scoring_function(w: FloatArray) -> tuple[FloatArray, float]:
        """(coef, intercept) of the learned ranking function: w itself, no intercept."""
        return w, 0.0

    def _per_example(self, *args):
        raise NotImplementedError("the distributed model offers only the batch hook "
                                  "most_violated_constraints (1-slack)")

    psi = loss = find_most_violated_constraint = classify_example = true_output = _per_example


class Partition:
    """One partition on a worker: the ranking plugin of its trainable queries (None if it has
    none) and its query counts."""

    def __init__(self, plugin: StructuredModel | None, n_queries: int, n_trainable: int,
                 n_without_relevant: int, n_all_relevant: int, n_features: int) -> None:
        self.plugin = plugin
        self.counts = (n_queries, n_trainable, n_without_relevant, n_all_relevant)
        self.n_features = n_features

    @classmethod
    def build(cls, X: Matrix, y: Vector, qid: Vector, loss: str, n_threads: int,
              oracle: str) -> Partition:
        """The partition of one chunk of (X, y, qid), on the worker that holds it."""
        if isinstance(X, np.ndarray) and X.ctypes.data % 16:
            # a chunk can arrive in a buffer the transfer left at any byte offset; BLAS sums
            # in an order that depends on the alignment, so such a chunk is copied into
            # numpy's own (16-byte aligned) memory: the same layout gives the same bits
            # (float32 chunks stay float32)
            X = np.array(X, dtype=np.float32 if X.dtype == np.float32 else np.float64,
                         order="C")
        collection = QueryCollection.from_arrays(X, y, qid)
        queries, n_without_relevant, n_all_relevant = collection.trainable_queries()
        plugin = None
        if len(queries):
            plugin = make_plugin({"loss": loss, "n_threads": n_threads, "oracle": oracle},
                                 collection, queries=queries)
        return cls(plugin, collection.n_queries, len(queries), n_without_relevant,
                   n_all_relevant, collection.n_features)

    def summary(self) -> tuple[int, int, int, int, int]:
        """(queries, trainable queries, without relevant, all relevant, features)."""
        return (*self.counts, self.n_features)

    def constraint_sum(self, w: FloatArray) -> tuple[float, FloatArray]:
        """(sum_q Delta_q, sum_q dpsi_q) over the partition's trainable queries at w."""
        if self.plugin is None:
            return 0.0, np.zeros(self.n_features)
        batch = self.plugin.most_violated_constraints(w)
        return float(np.sum(batch.loss)), batch.dpsi.sum(axis=0)

    def group_sums(self, w: FloatArray, groups: IntArray, n_groups: int
                   ) -> tuple[FloatArray, FloatArray]:
        """(sum_{q in g} Delta_q, sum_{q in g} dpsi_q) of every cut group g over the
        partition's trainable queries at w (``groups``: the group of each of them)."""
        if self.plugin is None:
            return np.zeros(n_groups), np.zeros((n_groups, self.n_features))
        batch = self.plugin.most_violated_constraints(w)
        assert isinstance(batch, ConstraintBatch)  # a partition's plugin: one row per query
        return batch.group_sums(np.ones(len(groups)), groups, n_groups)


def _add(a, b):
    return a[0] + b[0], a[1] + b[1]


def _tree_sum(client: Client, sums: list[Any]) -> Any:
    """The sum of the partitions' (loss, dpsi) futures, reduced pairwise in partition
    order on the workers: the same order for the same layout, hence the same bits."""
    while len(sums) > 1:
        pairs = [client.submit(_add, sums[i], sums[i + 1], pure=False)
                 for i in range(0, len(sums) - 1, 2)]
        sums = pairs + sums[len(sums) - len(sums) % 2:]
    return sums[0].result()


def _ap_sum(model, X, y, qid, convention):
    values = metrics.per_query("ap", model.decision_function(X), y, qid,
                               convention=convention).values
    return float(values.sum()), len(values)


# -- a cluster for the command line ------------------------------------------------------------

@contextlib.contextmanager
def cluster_client(n_workers: int | None = None, scheduler: str | None = None
                   ) -> Iterator[Client]:
    """A Client of the scheduler at ``scheduler`` (an address), or of a LocalCluster of
    ``n_workers`` worker processes with one thread each on this machine, closed on exit."""
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="20s")
        except (ValueError, OSError) as exc:  # a malformed address, or none answering
            raise SVMMapError(f"--scheduler {scheduler}: cannot connect to a Dask scheduler "
                              f"there ({exc})") from None
        with client:
            yield client
        return
    # the workers' own logs (a task's failure, shutdown notices) are not the command's
    # output: the command reports errors in one line itself
    with contextlib.ExitStack() as stack:
        stack.enter_context(_quiet_logs())
        with _ctrl_c_left_to_this_process():
            cluster = stack.enter_context(LocalCluster(
                n_workers=n_workers, threads_per_worker=1, processes=True,
                dashboard_address=":0", silence_logs=logging.CRITICAL))
        yield stack.enter_context(Client(cluster))


@contextlib.contextmanager
def _ctrl_c_left_to_this_process():
    """Start a LocalCluster inside this block: SIGINT is blocked in this thread, so the
    threads the cluster starts and the worker processes they spawn (which inherit the signal
    mask of the thread that starts them, across fork and exec) never see a terminal's
    Ctrl-C, which goes to the whole process group: the command alone stops training, saves
    the model and closes the cluster (the workers printed tracebacks of their own
    KeyboardInterrupt).  A SIGINT that arrives inside the block stays pending and is
    delivered here when it ends.  multiprocessing's resource tracker is started first: its
    start unblocks SIGINT in the thread that starts it.  SIGTERM is left alone (the cluster
    stops its workers with it)."""
    if not hasattr(signal, "pthread_sigmask") or \
            threading.current_thread() is not threading.main_thread():
        yield
        return
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextlib.contextmanager
def _quiet_logs():
    """distributed's loggers in this process (client, scheduler) silenced below CRITICAL,
    their levels restored on exit."""
    loggers = [logging.getLogger(name) for name in ("distributed", "distributed.worker",
                                                    "distributed.scheduler",
                                                    "distributed.client")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


# -- reading shards on the workers -----------------------------------------------------------

def read_svmlight(paths: PathLike | Sequence[PathLike], n_features: int | None = None,
                  client: Client | None = None, max_abs_value: float | None = None,
                  dtype: npt.DTypeLike = np.float64) -> tuple[da.Array, da.Array, da.Array]:
    """Read SVMlight / LETOR shards on the workers, each shard where it is read.

    ``paths``: a glob pattern, a path, or a list of them (each list entry may itself be a
    glob); shards are taken in sorted order within a pattern, in list order across entries.
    Returns (X, y, qid) as Dask arrays with one row chunk per shard: X with chunks of
    n_features columns (default: the largest feature index over all shards) -- dense
    ndarrays when every shard reads dense (svmmap.data.io.read_svmlight: each line lists the
    features 1..d, d the same in every shard, or padded to the n_features given), else
    scipy.sparse CSR -- y float64 and qid int64 (or str if any shard has a non-integer id).
    A malformed line raises the same InputFormatError ``path:line: reason`` as
    svmmap.load_svmlight, whose ``max_abs_value`` (refuse larger feature values) and
    ``dtype`` (X's values: float64, or float32, which halves them; the learners read float32
    in place) are passed on.
    """
    client = client if client is not None else default_client()
    files = expand_paths(paths)
    # standard input ("-") is this process's: read here and sent to a worker (a worker
    # reading "-" would read its own, empty, standard input)
    shards = [client.scatter([_read_shard(STDIN, n_features, max_abs_value, dtype)],
                             hash=False)[0]
              if file == STDIN else
              client.submit(_read_shard, file, n_features, max_abs_value, dtype, pure=False)
              for file in files]
    shapes = client.gather(client.map(_shard_shape, shards))
    width = n_features if n_features is not None else max(d for _, d, _, _ in shapes)
    dense = all(is_dense and d == width for _, d, _, is_dense in shapes)
    numeric = all(kind != "U" and kind != "O" for _, _, kind, _ in shapes)
    qid_dtype = np.int64 if numeric else object
    offsets = _group_offsets(files, client.gather(
        [client.submit(_grouped_queries, shard, file, pure=False)
         for shard, file in zip(shards, files)]))
    padded = [client.submit(_pad_shard, shard, width, dense, not numeric, offset)
              for shard, offset in zip(shards, offsets)]
    meta = np.empty((0, width), dtype=dtype) if dense else sp.csr_matrix((0, width), dtype=dtype)
    parts = [client.submit(lambda s, i: s[i], shard, i) for shard in padded for i in range(3)]
    X = da.concatenate([
        da.from_delayed(parts[3 * k], shape=(m, width), dtype=np.dtype(dtype), meta=meta)
        for k, (m, *_) in enumerate(shapes)], axis=0)
    y = da.concatenate([da.from_delayed(parts[3 * k + 1], shape=(m,), dtype=np.float64)
                        for k, (m, *_) in enumerate(shapes)])
    qid = da.concatenate([da.from_delayed(parts[3 * k + 2], shape=(m,), dtype=qid_dtype)
                          for k, (m, *_) in enumerate(shapes)])
    return X, y, qid


def expand_paths(paths: PathLike | Sequence[PathLike]) -> list[str]:
    """The shard files named by a glob, a path or a list of them (sorted within a glob)."""
    entries = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    files: list[str] = []
    for entry in entries:
        entry = os.fspath(entry)
        matches = sorted(glob.glob(entry)) if glob.has_magic(entry) else [entry]
        if not matches:
            raise InputFormatError("no file matches this pattern", entry)
        files.extend(matches)
    if not files:
        raise InputFormatError("no shard to read: the list of paths is empty")
    return files


def _read_shard(path, n_features, max_abs_value, dtype=np.float64):
    """(X, y, qid) of a shard: X the reader's dense ndarray, or a scipy CSR matrix of its
    CSR arrays (shared, not copied)."""
    X, y, qid = _io.read_svmlight(path, n_features=n_features, max_abs_value=max_abs_value,
                                  dtype=dtype)
    return as_scipy(X), y, qid


def _shard_shape(shard):
    X, _, qid = shard
    return X.shape[0], X.shape[1], qid.dtype.kind, isinstance(X, np.ndarray)


def _grouped_queries(shard, path):
    """The number of queries of a shard whose queries come from a group file (numbered 1, 2,
    ...: svmmap.data.io.group_file), or None when its lines carry qid:."""
    return None if group_file(path) is None else int(shard[2].max(initial=0))


def _group_offsets(files, sizes):
    """What to add to each shard's query ids: shards whose queries come from group files are
    numbered 1, 2, ... on through the shards, as load_svmlight numbers the files of an index
    file (each shard's own 1, 2, ... would merge the shards' queries); such shards cannot be
    mixed with shards whose lines carry qid:."""
    if all(size is None for size in sizes):
        return [0] * len(files)
    if any(size is None for size in sizes):
        raise InputFormatError(
            "the lines carry qid: but other shards take their queries from group files: "
            "their query ids would be confused; give every shard qid: or a group file",
            files[sizes.index(None)])
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).tolist()


def _pad_shard(shard, n_features, dense, str_qid, qid_offset=0):
    """The shard as a chunk of X with n_features columns, dense when every shard is
    (``dense``), else its CSR matrix (one layout in a Dask array)."""
    X, y, qid = shard
    if isinstance(X, np.ndarray) and not dense:
        X = sp.csr_matrix(X)
    if X.shape[1] != n_features:
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
    if qid_offset:
        qid = qid + qid_offset
    if str_qid:
        qid = qid.astype(str).astype(object)
    return X, y, qid
