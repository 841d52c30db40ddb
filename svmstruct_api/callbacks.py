"""How progress leaves the cutting-plane loop: callbacks.

A learner takes ``callbacks``: one callback or a list of them.  A callback is either

- an object with any of the methods ``on_start(learner, model)`` (before the first
  iteration), ``on_iteration(progress)`` (after every iteration, with a :class:`Progress`) and
  ``on_end(result)`` (once, with the TrainingResult, whatever the status); subclass
  :class:`Callback` to get no-op defaults; or
- a plain callable, called with the :class:`Progress` after every iteration and with the
  TrainingResult at the end.

An exception raised by a callback stops training and propagates (KeyboardInterrupt, as
everywhere in the loop, ends it with status "interrupted").
"""

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    """What a progress display needs after one iteration.

    ``record`` is the iteration's IterationRecord; the rest is the run's state after it.
    """

    record: object
    formulation: str
    C: float
    #: the tolerance on constraint violation (None: that rule is off)
    epsilon: object
    #: the iteration and time limits (None: none), e.g. a progress bar's total
    max_iter: object
    max_time: object
    #: the smallest P(w) measured so far (NaN before the first oracle pass); the w it belongs
    #: to is the one training returns if it stops now
    best_primal_objective: float
    #: a duality gap that, once training has converged, is at most ``gap_target``
    gap_target: float

    @property
    def iteration(self):
        return self.record.iteration

    @property
    def seconds(self):
        """Seconds since training started."""
        return self.record.seconds

    @property
    def primal_objective(self):
        """P(w) of this iteration's w (NaN when the constraint came from the cache)."""
        return self.record.primal_objective

    @property
    def dual_objective(self):
        return self.record.dual_objective

    @property
    def duality_gap(self):
        """best P(w) - D(alpha): how far the best w so far can be from the optimum."""
        return self.best_primal_objective - self.record.dual_objective

    @property
    def max_violation(self):
        """The largest violation at w; training converges when it is at most epsilon."""
        return self.record.max_violation

    @property
    def working_set_size(self):
        return self.record.working_set_size


class Callback:
    """Base class of a callback object: every hook does nothing unless overridden."""

    def on_start(self, learner, model):
        pass

    def on_iteration(self, progress):
        pass

    def on_end(self, result):
        pass


class _FunctionCallback(Callback):
    """A plain callable as a callback: called with every Progress and with the result."""

    def __init__(self, function):
        self.function = function

    def on_iteration(self, progress):
        self.function(progress)

    def on_end(self, result):
        self.function(result)


def as_callbacks(callbacks):
    """The list of Callback-like objects that ``callbacks`` (None, one, or a list) stands for."""
    if callbacks is None:
        return []
    if callable(callbacks) or _is_callback_object(callbacks):
        callbacks = [callbacks]
    out = []
    for callback in callbacks:
        if _is_callback_object(callback):
            out.append(callback)
        elif callable(callback):
            out.append(_FunctionCallback(callback))
        else:
            raise TypeError(f"a callback must be callable or have on_iteration / on_end "
                            f"methods, got {callback!r}")
    return out


def _is_callback_object(obj):
    return any(callable(getattr(obj, hook, None))
               for hook in ("on_start", "on_iteration", "on_end"))


def notify(callbacks, hook, *args):
    """Call ``hook`` on every callback that has it."""
    for callback in callbacks:
        method = getattr(callback, hook, None)
        if method is not None:
            method(*args)


class LogCallback(Callback):
    """SVMstruct-style text progress: one line per iteration and the final report, each
    passed to ``write`` (default: print to stdout)."""

    def __init__(self, write=None):
        self.write = print if write is None else write

    def on_iteration(self, progress):
        self.write(progress_line(progress.record))

    def on_end(self, result):
        self.write(result.report())


def progress_line(record):
    """One line describing an IterationRecord."""
    primal = "from cache" if math.isnan(record.primal_objective) else \
        f"{record.primal_objective:.6g}"
    return (f"iter {record.iteration:4d}  primal {primal}  "
            f"dual {record.dual_objective:.6g}  violation {record.max_violation:.3g}  "
            f"+{record.constraints_added} -> {record.working_set_size} constraints  "
            f"({record.seconds:.2f}s)")
