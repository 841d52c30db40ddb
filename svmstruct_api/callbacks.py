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

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Progress:
    """What a progress display needs after one iteration.

    ``record`` is the iteration's IterationRecord; the rest is the run's state after it.
    """

    record: Any
    formulation: str
    C: float
    #: the tolerance on constraint violation (None: that rule is off)
    epsilon: float | None
    #: the iteration and time limits (None: none), e.g. a progress bar's total
    max_iter: int | None
    max_time: float | None
    #: the smallest P(w) measured so far (NaN before the first oracle pass); the w it belongs
    #: to is the one training returns if it stops now
    best_primal_objective: float
    #: a duality gap that, once training has converged, is at most ``gap_target``
    gap_target: float

    @property
    def iteration(self) -> int:
        """The iteration's number, from 1."""
        return self.record.iteration

    @property
    def seconds(self) -> float:
        """Seconds since training started."""
        return self.record.seconds

    @property
    def primal_objective(self) -> float:
        """P(w) of this iteration's w (NaN when the constraint came from the cache)."""
        return self.record.primal_objective

    @property
    def dual_objective(self) -> float:
        """D(alpha) of the working-set QP solved at the end of the iteration."""
        return self.record.dual_objective

    @property
    def duality_gap(self) -> float:
        """best P(w) - D(alpha): how far the best w so far can be from the optimum."""
        return self.best_primal_objective - self.record.dual_objective

    @property
    def max_violation(self) -> float:
        """The largest violation at w; training converges when it is at most epsilon."""
        return self.record.max_violation

    @property
    def working_set_size(self) -> int:
        """The number of constraints in the working set after the iteration."""
        return self.record.working_set_size


class Callback:
    """Base class of a callback object: every hook does nothing unless overridden."""

    def on_start(self, learner: Any, model: Any) -> None:
        """Before the first iteration: the learner and the StructuredModel it fits."""

    def on_iteration(self, progress: Progress) -> None:
        """After every iteration."""

    def on_end(self, result: Any) -> None:
        """Once, with the TrainingResult, whatever the status."""


class _FunctionCallback(Callback):
    """A plain callable as a callback: called with every Progress and with the result."""

    def __init__(self, function: Callable[[Any], Any]) -> None:
        self.function = function

    def on_iteration(self, progress: Progress) -> None:
        self.function(progress)

    def on_end(self, result: Any) -> None:
        self.function(result)


def as_callbacks(callbacks: Any) -> list[Any]:
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


def _is_callback_object(obj: Any) -> bool:
    return any(callable(getattr(obj, hook, None))
               for hook in ("on_start", "on_iteration", "on_end"))


def notify(callbacks: Iterable[Any], hook: str, *args: Any) -> None:
    """Call ``hook`` on every callback that has it."""
    for callback in callbacks:
        method = getattr(callback, hook, None)
        if method is not None:
            method(*args)


class LogCallback(Callback):
    """SVMstruct-style text progress: one line per iteration and the final report, each
    passed to ``write`` (default: print to stdout)."""

    def __init__(self, write: Callable[[str], Any] | None = None) -> None:
        self.write = print if write is None else write

    def on_iteration(self, progress: Progress) -> None:
        """Write the iteration's progress line."""
        self.write(progress_line(progress.record))

    def on_end(self, result: Any) -> None:
        """Write the end-of-training report."""
        self.write(result.report())


def progress_line(record: Any) -> str:
    """One line describing an IterationRecord."""
    primal = "from cache" if math.isnan(record.primal_objective) else \
        f"{record.primal_objective:.6g}"
    return (f"iter {record.iteration:4d}  primal {primal}  "
            f"dual {record.dual_objective:.6g}  violation {record.max_violation:.3g}  "
            f"+{record.constraints_added} -> {record.working_set_size} constraints  "
            f"({record.seconds:.2f}s)")
