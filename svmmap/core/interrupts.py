"""Ctrl-C and SIGTERM: the two ways to stop a command, handled as one.

SIGTERM -- what ``kill`` and job schedulers (Slurm, Kubernetes, systemd) send before they
kill -- raises KeyboardInterrupt as Ctrl-C (SIGINT) does, so that whatever Ctrl-C does happens
for it too: training stops after the step in progress and the best model so far is saved,
marked ``interrupted``.  The commands then exit with 128 + the signal's number, 130 for
SIGINT and 143 for SIGTERM, and say which: ``prog: interrupted`` / ``prog: terminated``.

:func:`handled` installs the handlers for the duration of a command (svmmap.commands.console's entry
points install their own, which record here too); :func:`exit_status` and :func:`message`
tell what to report.  This module imports only the standard library (not threading: every
command imports it before its work, and start-up is measured, benchmarks/startup.py).

The long commands (the experiments' drivers, export) follow the same rule and act on a
signal at a safe point: a fit stopped by the signal is not taken as a finished result
(:func:`stop_requested`; svmmap.core.selection.select re-raises), a record being written is
written whole first (:func:`held`), and their last line says what was kept and how to go on
(:func:`stopped`).  Worker processes of a command (svmmap.experiments.units) ignore both
signals (:func:`ignore_in_worker`): their parent decides, and ends them.
"""

from __future__ import annotations

import signal
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from types import FrameType

    #: a signal handler as signal.signal takes it
    Handler = Callable[[int, FrameType | None], object]

#: the signals that stop a command, and the word its last line says
STOPPING: dict[int, str] = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}

#: the stopping signals received since the outermost handled() block began, first first
_received: list[int] = []
#: handled() blocks open (the outermost installs the handlers)
_depth: list[bool] = []


def record(signum: int) -> None:
    """Note that the stopping signal ``signum`` arrived (the first one is reported)."""
    _received.append(signum)


def raise_interrupt(signum: int, frame: FrameType | None) -> None:
    """The handler of SIGINT and SIGTERM: record the signal and raise KeyboardInterrupt."""
    record(signum)
    raise KeyboardInterrupt


def received() -> int:
    """The first stopping signal received (SIGINT when none was recorded: a KeyboardInterrupt
    raised by Python's own SIGINT handler)."""
    return _received[0] if _received else signal.SIGINT


def exit_status() -> int:
    """128 + the number of the signal that stopped the command: 130 (SIGINT), 143 (SIGTERM)."""
    return 128 + received()


def message(prog: str) -> str:
    """The command's last line after a stopping signal: ``prog: interrupted`` (Ctrl-C) or
    ``prog: terminated`` (SIGTERM)."""
    return f"{prog}: {STOPPING[received()]}"


@contextmanager
def handled(handler: Handler = raise_interrupt) -> Iterator[None]:
    """Inside the block, SIGINT and SIGTERM call ``handler`` (by default raise_interrupt),
    and received() starts afresh.  A nested block, or one outside the main thread (where
    Python allows no handler), changes nothing."""
    if _depth:
        yield
        return
    try:
        previous = {signum: signal.signal(signum, handler) for signum in STOPPING}
    except ValueError:  # not the main thread: signal.signal refuses before changing anything
        yield
        return
    _received.clear()
    _depth.append(True)
    try:
        yield
    finally:
        _depth.pop()
        for signum, action in previous.items():
            signal.signal(signum, action)


def stop_requested() -> bool:
    """True inside a :func:`handled` block once a stopping signal has arrived: work that
    caught the KeyboardInterrupt (a fit returning its best model so far) must not be taken
    for finished work."""
    return bool(_depth and _received)


@contextmanager
def held() -> Iterator[None]:
    """Inside the block a stopping signal is recorded, not raised; KeyboardInterrupt is
    raised when the block ends.  For a write that must be whole (a journal record).  Outside
    the main thread it changes nothing."""
    arrived: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        record(signum)
        arrived.append(signum)

    try:
        previous = {signum: signal.signal(signum, hold) for signum in STOPPING}
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for signum, action in previous.items():
            signal.signal(signum, action)
    if arrived:
        raise KeyboardInterrupt


def stopped(prog: str, kept: str | None = None) -> int:
    """The end of a command stopped by a signal: ignore further stopping signals (the
    command is ending: a second Ctrl-C must not interrupt its clean-up), print its one last
    line ``prog: interrupted[: kept]`` (or ``terminated``) on stderr and return the exit
    status, 130 or 143.  ``kept``: what was kept and how to continue."""
    for signum in STOPPING:
        signal.signal(signum, signal.SIG_IGN)
    line = message(prog) + ("" if kept is None else f": {kept}")
    print(line, file=sys.stderr, flush=True)
    return exit_status()


def ignore_in_worker() -> None:
    """In a worker process of a command: SIGINT and SIGTERM ignored.  A terminal's Ctrl-C
    reaches the whole process group; the parent alone acts on it, cancels the pending work
    and ends its workers."""
    for signum in STOPPING:
        signal.signal(signum, signal.SIG_IGN)
