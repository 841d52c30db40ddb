"""A progress display for training, fed by the learners' callbacks (svmstruct_api.callbacks).

:class:`ProgressDisplay` shows, while the cutting-plane loop runs: the iteration, the primal
and dual objectives, the duality gap against the target it must reach, the largest constraint
violation against epsilon, the working-set size, the elapsed time and an estimate of the time
left.  On a terminal it is one live tqdm line; otherwise (a log file, a pipe) a plain line
every ``interval`` seconds, and one for the last iteration.  It prints no final report: the
caller prints the TrainingResult once.

The estimate of the time left extrapolates the duality gap: over the recent iterations,
log(gap) has fallen at some rate per second; the time left is
``(log(gap) - log(gap_target)) / rate``, capped by ``max_time`` (and by ``max_iter`` at the
recent seconds per iteration).  It is shown as ``?`` until the gap has fallen twice.
"""

from __future__ import annotations

import math
import os
import sys
import time
from typing import TYPE_CHECKING, TextIO

from svmstruct_api.callbacks import Callback, progress_line

if TYPE_CHECKING:
    from svmstruct_api.callbacks import Progress
    from svmstruct_api.learner import BaseSSVM
    from svmstruct_api.plugin import StructuredModel
    from svmstruct_api.result import TrainingResult

#: seconds between two lines when the stream is not a terminal
DEFAULT_INTERVAL = 5.0
#: iterations over which the gap's rate of decrease is measured
WINDOW = 8


def _terminal_width(stream):
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return 0


def _number(value, digits=6):
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}g}"


def _duration(seconds):
    """``42s``, ``19m59s``, ``1h05m``; whole seconds first, so 1199.6 s is 20m00s, not
    19m60s."""
    if seconds is None:
        return "?"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds // 60:.0f}m{seconds % 60:02.0f}s"
    return f"{seconds // 3600:.0f}h{seconds % 3600 // 60:02.0f}m"


def _write_line(stream, text):
    """Write ``text`` and its newline in one call, then flush: print() writes the two
    separately, and a Ctrl-C or SIGTERM that lands between them (it is raised wherever
    Python next checks for signals) left the line open, so that the command's last line,
    ``prog: interrupted``, ran on after it."""
    stream.write(text + "\n")
    stream.flush()


class ProgressDisplay(Callback):
    """Live training progress on ``stream`` (default stderr): tqdm on a terminal, else a line
    every ``interval`` seconds.  ``tty`` overrides the terminal detection."""

    def __init__(self, stream: TextIO | None = None, interval: float = DEFAULT_INTERVAL,
                 tty: bool | None = None):
        self.stream = sys.stderr if stream is None else stream
        self.interval = interval
        self.tty = tty
        self._history: list[tuple[float, float]] = []
        self._last_line = -math.inf
        self._last: Progress | None = None
        self._printed: int | None = None
        self._bar = None

    def on_start(self, learner: BaseSSVM, model: StructuredModel) -> None:
        """A fresh display for a new training run (a terminal bar when one is wanted)."""
        self._history = []
        self._last_line = -math.inf
        self._last = None
        self._printed = None
        self._bar = None
        tty = self.tty
        if tty is None:
            tty = bool(getattr(self.stream, "isatty", lambda: False)())
        if tty:
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                # a terminal that reports no width (a pseudo-terminal of `script`, some CI
                # runners) would get an empty line from tqdm: give it one
                width = _terminal_width(self.stream)
                self._bar = tqdm(file=self.stream, unit="it", desc="training",
                                 bar_format="{desc} {n_fmt} iterations{postfix}",
                                 leave=False, **({"dynamic_ncols": True} if width > 0
                                                 else {"ncols": 120, "nrows": 24}))

    def on_iteration(self, progress: Progress) -> None:
        """Record the iteration's gap; update the bar, or write a line every ``interval``
        seconds."""
        now = time.monotonic()
        self._last = progress
        gap = progress.duality_gap
        if gap > 0 and math.isfinite(gap):
            self._history.append((progress.seconds, math.log(gap)))
            del self._history[:-WINDOW]
        if self._bar is not None:
            self._bar.set_postfix_str(self.status(progress), refresh=False)
            self._bar.update(1)
        elif now - self._last_line >= self.interval:
            self._write(progress)
            self._last_line = now

    def on_end(self, result: TrainingResult) -> None:
        """Close the bar, or write the last iteration's line if it was not written."""
        if self._bar is not None:
            self._bar.refresh()  # the final state once, however fast training was
            self._bar.close()
        elif self._last is not None and self._last.iteration != self._printed:
            self._write(self._last)

    def _write(self, progress: Progress) -> None:
        self._printed = progress.iteration
        _write_line(self.stream, f"iter {progress.iteration}  {self.status(progress)}")

    def status(self, progress: Progress) -> str:
        """The display's text for one iteration (without the iteration number)."""
        left = self.seconds_left(progress)
        return (f"gap {_number(progress.duality_gap, 3)}/{progress.gap_target:.3g}  "
                f"violation {_number(progress.max_violation, 3)}"
                f"{'' if progress.epsilon is None else f'/{progress.epsilon:.3g}'}  "
                f"{_duration(progress.seconds)} elapsed, ~{_duration(left)} left  "
                f"primal {_number(progress.best_primal_objective)}  "
                f"dual {_number(progress.dual_objective)}  "
                f"{progress.working_set_size} constraints")

    def seconds_left(self, progress: Progress) -> float | None:
        """Estimated seconds until the gap reaches its target (None: no estimate yet)."""
        if len(self._history) < 3:
            return None
        (t0, g0), (t1, g1) = self._history[0], self._history[-1]
        rate = (g0 - g1) / (t1 - t0) if t1 > t0 else 0.0
        if rate <= 0:
            return None
        left = max(0.0, (g1 - math.log(progress.gap_target)) / rate)
        if progress.max_time is not None:
            left = min(left, max(0.0, progress.max_time - progress.seconds))
        if progress.max_iter is not None and progress.iteration > 0:
            per_iteration = progress.seconds / progress.iteration
            left = min(left, (progress.max_iter - progress.iteration) * per_iteration)
        return left


class IterationLines(Callback):
    """One SVMstruct-style line per iteration on ``stream`` (default stdout), no report."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream

    def on_iteration(self, progress: Progress) -> None:
        """Write the iteration's line."""
        _write_line(self.stream or sys.stdout, progress_line(progress.record))
