"""Ctrl-C and SIGTERM: the two ways to stop a command, handled as one.

SIGTERM -- what ``kill`` and job schedulers (Slurm, Kubernetes, systemd) send before they
kill -- raises KeyboardInterrupt as Ctrl-C (SIGINT) does, so that whatever Ctrl-C does happens
for it too: training stops after the step in progress and the best model so far is saved,
marked ``interrupted``.  The commands then exit with 128 + the signal's number, 130 for
SIGINT and 143 for SIGTERM, and say which: ``prog: interrupted`` / ``prog: terminated``.

:func:`handled` installs the handlers for the duration of a command (svmmap.console's entry
points install their own, which record here too); :func:`exit_status` and :func:`message`
tell what to report.  This module imports only the standard library (not threading: every
command imports it before its work, and start-up is measured, benchmarks/startup.py).
"""

import signal
from contextlib import contextmanager

#: the signals that stop a command, and the word its last line says
STOPPING = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}

#: the stopping signals received since the outermost handled() block began, first first
_received = []
#: handled() blocks open (the outermost installs the handlers)
_depth = []


def record(signum):
    """Note that the stopping signal ``signum`` arrived (the first one is reported)."""
    _received.append(signum)


def raise_interrupt(signum, frame):
    """The handler of SIGINT and SIGTERM: record the signal and raise KeyboardInterrupt."""
    record(signum)
    raise KeyboardInterrupt


def received():
    """The first stopping signal received (SIGINT when none was recorded: a KeyboardInterrupt
    raised by Python's own SIGINT handler)."""
    return _received[0] if _received else signal.SIGINT


def exit_status():
    """128 + the number of the signal that stopped the command: 130 (SIGINT), 143 (SIGTERM)."""
    return 128 + received()


def message(prog):
    """The command's last line after a stopping signal: ``prog: interrupted`` (Ctrl-C) or
    ``prog: terminated`` (SIGTERM)."""
    return f"{prog}: {STOPPING[received()]}"


@contextmanager
def handled(handler=raise_interrupt):
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
