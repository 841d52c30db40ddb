"""An experiment's independent units (trials; fold-method grid searches) run in this
process, on local worker processes (``--jobs N``) or on a Dask cluster (``--scheduler
ADDRESS``), to the same records bit for bit.

A *work* object describes every unit of one run: a small, picklable, hashable value (the
command's settings: data paths, method names, grids, seeds) with two methods,

* ``load()`` -> state: what the units need, read from disk (the data pool, the methods);
* ``run(state, key)`` -> the unit's JSON-able record.

A task sends a worker the work object and one unit's key, never the data: each process loads
the state once (:func:`_state`, a per-process cache; the local workers load it as they start,
:func:`_start_worker`) from the same ``--data`` arguments, so that a memory-mapped data set is
shared between processes by the page cache.

Same results wherever a unit runs: a record depends only on the work and the key (each
trial's queries are fixed by the design, the learners are deterministic), and every process
runs its BLAS and OpenMP pools with one thread (threadpoolctl): svmmap's kernels give the
same bits for any thread count (tests/kernels/test_kernel_threads.py), multi-threaded BLAS
sums in the QP do not promise that.  The experiment's own kernels run with ``n_threads=1``.

The parent process alone writes the journal: ``on_done(key, record)`` is called in the parent
as each unit finishes (in key order in one process, in order of completion otherwise).

Stopping (svmmap.core.interrupts): local workers ignore SIGINT and SIGTERM; on either signal (or
an error) the parent cancels the units not started, kills its workers (they hold no state
that matters: the records written are the parent's) and waits for them, so no process is
left behind; the finished units are in the journal already.  On a Dask cluster the pending
tasks are cancelled; the cluster's workers are not the command's to end.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol

from ..core import interrupts
from ..errors import SVMMapError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from .journal import Journal, Record
    from .meter import Meter

    #: what run_units calls with each finished unit's key and record
    OnDone = Callable[[Any, Record], None]


class Work(Protocol):
    """The units of one run (module docstring): a small, picklable, hashable value (the key
    of the per-process cache of its state)."""

    def load(self) -> Any:
        """What the units need, read from disk (the data pool, the methods)."""

    def run(self, state: Any, key: Any) -> Record:
        """The unit ``key``'s JSON-able record."""


#: the loaded state of the work this process last ran (one: a long-lived Dask worker serving
#: several runs keeps only the current one)
_states: dict[Work, Any] = {}
_lock = threading.Lock()
#: bound on connecting to a Dask scheduler (a bound for a broken address, not a wait)
CONNECT_SECONDS = 60


def _limit_threads():
    """BLAS and OpenMP pools of this process to one thread (module docstring), until the
    returned object's ``restore_original_limits`` (it is also a context manager)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1)


def _state(work):
    """``work.load()``, once per process."""
    with _lock:
        if work not in _states:
            _states.clear()
            _limit_threads()
            _states[work] = work.load()
        return _states[work]


def _start_worker(work):
    """A local worker process's start: signals left to the parent, the state loaded."""
    interrupts.ignore_in_worker()
    _state(work)


def _run(work, key):
    """One unit in a worker: ``(key, record)``."""
    return key, work.run(_state(work), key)


def run_units(work: Work, keys: Iterable[Any], on_done: OnDone, jobs: int = 1,
              scheduler: str | None = None, state: Any = None) -> None:
    """Run ``work`` for every unit in ``keys``; ``on_done(key, record)`` in this process as
    each finishes.  ``jobs`` > 1: that many local worker processes; ``scheduler``: the
    address of a Dask scheduler (``tcp://host:port``) whose workers run the units; else this
    process, with ``state`` (``work.load()``, if loaded already)."""
    keys = list(keys)
    if not keys:
        return
    if scheduler is not None:
        _on_dask(work, keys, on_done, scheduler)
    elif jobs > 1:
        _on_processes(work, keys, on_done, jobs)
    else:
        with _limit_threads():
            if state is None:
                state = work.load()
            for key in keys:
                on_done(key, work.run(state, key))


def run_journaled(work: Work, keys: Iterable[Any], describe: Callable[[Any, Record], str],
                  journal: Journal | None = None, meter: Meter | None = None,
                  log: Callable[[str], object] | None = None, jobs: int = 1,
                  scheduler: str | None = None, state: Any = None) -> dict[Any, Record]:
    """``{key: record}`` of every unit in ``keys``: those kept in ``journal`` (a
    :class:`.journal.Journal`, or None) taken from it, the others run by :func:`run_units`
    and each added to the journal as it finishes; after each unit finished here ``meter``
    (a :class:`.meter.Meter`) is stepped with the line ``describe(key, record)``, else
    ``log``, if given, gets that line."""
    done = {} if journal is None else journal.done
    records = {key: done[key] for key in keys if key in done}

    def finished(key, record):
        if journal is not None:
            journal.add(key, record)
        records[key] = record
        line = describe(key, record)
        if meter is not None:
            meter.step(line)
        elif log:
            log(line)

    run_units(work, [key for key in keys if key not in records], finished, jobs, scheduler,
              state)
    return records


def _on_processes(work, keys, on_done, jobs):
    import multiprocessing
    from concurrent.futures import BrokenExecutor, ProcessPoolExecutor, as_completed

    # spawn, not fork: a forked child of a process whose OpenMP pool has run can hang in
    # its first parallel region (GNU libgomp), and the parent may hold other threads' locks
    executor = ProcessPoolExecutor(min(jobs, len(keys)),
                                   mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_start_worker, initargs=(work,))
    finished = False
    try:
        futures = [executor.submit(_run, work, key) for key in keys]
        try:
            for future in as_completed(futures):
                on_done(*future.result())
        except BrokenExecutor:
            raise SVMMapError("a worker process died (killed, or out of memory?); the "
                              "finished units are kept") from None
        finished = True
    finally:
        if finished:
            executor.shutdown()
        else:
            _end(executor)


def _end(executor):
    """Cancel the units not started and kill the workers, then wait for them; a second
    Ctrl-C meanwhile acts once they are gone (svmmap.core.interrupts.held)."""
    with interrupts.held():
        # the executor has no public way to stop a running task (Python 3.14 adds
        # kill_workers)
        processes = list((getattr(executor, "_processes", None) or {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.kill()
        for process in processes:
            process.join()


def _on_dask(work, keys, on_done, scheduler):
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise SVMMapError("--scheduler needs dask.distributed (pip install "
                          "'dask[distributed]')") from None
    try:
        client = Client(scheduler, timeout=CONNECT_SECONDS)
    except (OSError, ValueError) as exc:
        raise SVMMapError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    with client:
        futures = [client.submit(_run, work, key, pure=False) for key in keys]
        try:
            for future in as_completed(futures):
                on_done(*future.result())
        except BaseException:
            with interrupts.held():
                client.cancel(futures)
            raise
