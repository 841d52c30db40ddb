"""The console scripts' entry points (setup.py ``console_scripts``).

Each runs its command under a Ctrl-C guard installed before any heavy import, so that Ctrl-C
at any moment -- importing the command, numpy, scipy and the extensions takes about a second
-- prints one line and exits with status 130, as Ctrl-C during the work does
(svmmap.commands.common.run; during training the best model so far is still saved).  SIGTERM is
guarded the same way and ends the same way, with its own line (``prog: terminated``) and
status 143 (svmmap.core.interrupts).  This module imports nothing but the standard library and
svmmap.core.interrupts.  A command's process keeps OpenBLAS to one thread, collects cyclic
garbage less often and ends without the interpreter's teardown when that has nothing to do
(GC_THRESHOLD, _exit_now): start-up costs a small run more than its work does.

A KeyboardInterrupt raised while a module is being imported is not safe: inside a C
extension's start-up numpy's ``import_array`` prints it and raises ImportError,
``PyCapsule_Import`` turns it into ``ImportError: could not import module "datetime"``, an
import lock's weakref callback reports it as "Exception ignored", and C code that clears
errors loses it.  So a SIGINT that arrives while any module is importing is held back and
delivered again (``_thread.interrupt_main``, from a helper thread started with ``_thread``:
threading's import would cost every run's start-up) every 50 ms until it lands in ordinary
code, where it is an ordinary KeyboardInterrupt.  Any exception after a recorded SIGINT is
reported as the interruption it is.
"""

from __future__ import annotations

import _thread
import atexit
import gc
import importlib
import os
import signal
import sys
import time

from ..core import interrupts

REDELIVER_SECONDS = 0.05

# Before numpy loads OpenBLAS: its thread pool, started at load, would spin on the other
# cores while the command works alone (the commands' kernels are svmmap's own and their QPs
# small, no BLAS work threads speed up).  On a busy 2-core machine the pool's spinning
# thread slowed ``import numpy`` from 0.07 s to 0.20 s (median).  A value the user has set
# is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _importing(frame):
    """Whether ``frame`` runs inside an import (importlib's frames are on the stack)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


class _CtrlCGuard:
    """The SIGINT and SIGTERM handler of one command's run (see the module's docstring)."""

    def __init__(self):
        self.interrupted = False
        self._finished = False
        self._lock = _thread.allocate_lock()

    def __enter__(self):
        self._handled = interrupts.handled(self._on_signal)
        self._handled.__enter__()
        return self

    def __exit__(self, *exc):
        with self._lock:
            self._finished = True
        self._handled.__exit__(None, None, None)
        if self.interrupted:  # the command is ending: a second signal is ignored
            for signum in interrupts.STOPPING:
                signal.signal(signum, signal.SIG_IGN)

    def _on_signal(self, signum, frame):
        self.interrupted = True
        interrupts.record(signum)
        if _importing(frame):  # delivered again (as SIGINT; the first signal is reported)
            _thread.start_new_thread(self._redeliver, ())
            return
        raise KeyboardInterrupt

    def _redeliver(self):
        """(In a helper thread) interrupt the main thread again after REDELIVER_SECONDS,
        unless the command has finished by then."""
        time.sleep(REDELIVER_SECONDS)
        with self._lock:
            if not self._finished:
                _thread.interrupt_main()


#: the cyclic garbage collector's first threshold in a command (Python's default is 700): a
#: command's start-up allocates some 20,000 lasting objects (the modules of numpy and
#: svmmap), which the default made the collector traverse 50 times (11 of the 870 million
#: instructions of training on MQ2008 Fold1 at C = 1); cycles are still collected every this
#: many allocations
GC_THRESHOLD = 100_000


def _command(prog, module, function):
    def main():
        gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
        with _CtrlCGuard() as guard:
            try:
                status = getattr(importlib.import_module(module), function)()
            except BaseException:
                if not guard.interrupted:
                    raise
                status = None
        if guard.interrupted and status != interrupts.exit_status():
            print(interrupts.message(prog), file=sys.stderr)
            status = interrupts.exit_status()
        _exit_now(status)
        return status

    main.__name__ = main.__qualname__ = function
    main.__doc__ = f"``{prog}``: {module}.{function}, Ctrl-C and SIGTERM at start-up included."
    return main


def _exit_now(status):
    """End the process with ``status`` (None: 0) at once, without the interpreter's teardown
    of every module (numpy's and svmmap's: 44 of the 870 million instructions of training on
    MQ2008 Fold1 at C = 1, counted by valgrind), when the teardown has nothing else to do: no
    atexit function is registered, no other thread of the threading module runs, and
    standard output and error flush without error.  Otherwise return, and the process ends
    the ordinary way (which reports a failed flush as it always has).  The command's files
    are closed by then: the model and predictions are written atomically and flushed to disk
    (svmmap.data.atomic)."""
    if status is None:
        status = 0
    if not isinstance(status, int):
        return
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return
    registered = getattr(atexit, "_ncallbacks", None)  # CPython's
    if registered is None or registered():
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(status)


learn_main = _command("svmmap_learn", "svmmap.commands.learn", "learn_main")
classify_main = _command("svmmap_classify", "svmmap.commands.classify", "classify_main")
baseline_learn_main = _command("svmmap_baseline_learn", "svmmap.commands.baseline_learn",
                               "learn_main")
baseline_classify_main = _command("svmmap_baseline_classify",
                                  "svmmap.commands.baseline_classify", "classify_main")


def print_output(prog: str, text: str) -> int:
    """Print ``text`` (and a newline) on standard output; return the exit status.  A write
    that fails (``> /dev/full``) is one line on stderr and status 1, not a traceback; a reader
    that stopped early (``| head``) is no error (status 0).  Standard output is then pointed at
    /dev/null, so that the interpreter's final flush does not fail a second time."""
    try:
        print(text, flush=True)
        return 0
    except OSError as err:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        if isinstance(err, BrokenPipeError):
            return 0
        print(f"{prog}: error: cannot write to standard output: {err.strerror}",
              file=sys.stderr)
        return 1
