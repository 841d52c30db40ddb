"""Progress of a long experiment in finished units (trials, fold-method pairs), with an
estimate of the time left.

The estimate is the mean wall time of the units finished in this session times the units
left (units taken from a journal cost nothing and do not count).  On a terminal the meter is a
tqdm bar on stderr and each unit's line is written above it; otherwise (a log file, a pipe)
each unit's line ends with ``[done/total, elapsed, ~left]``.

Units run in parallel (``--jobs N``): the elapsed time over the units finished is the wall
time per unit, whatever ran them, once N units have finished; before that the N running
units started together and finish together, so the first finished counts for
``min(N, units of the session)`` (``workers``): after the first of four trials on two workers
the estimate is 1.5 times its time, not 3 times (benchmarks/results/parallel_trials.md
measured 2x overestimates with the plain rule).

One meter can count several runs (``trec_tables``: two sets of trials): its owner gives the
total of all of them, and each run adds the units it takes from its journal
(:meth:`Meter.restored`).
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from ..core.progress import _duration

if TYPE_CHECKING:
    from typing import TextIO


class Meter:
    """Counts ``total`` units of which ``done`` are finished already, run ``workers`` at a
    time; :meth:`step` after each unit this session finishes."""

    def __init__(self, total: int, done: int = 0, stream: TextIO | None = None,
                 tty: bool | None = None, label: str = "trials", workers: int = 1) -> None:
        self.total, self.done = total, done
        self.workers = workers
        self.stream = sys.stdout if stream is None else stream
        self._start = time.monotonic()
        self._session = 0
        if tty is None:
            tty = bool(getattr(sys.stderr, "isatty", lambda: False)())
        self._bar = None
        if tty:
            from tqdm import tqdm

            self._bar = tqdm(total=total, initial=done, unit=label[:-1] if
                             label.endswith("s") else label, desc=label, file=sys.stderr,
                             leave=False, mininterval=0)  # units take minutes: draw each

    def restored(self, units: int) -> None:
        """``units`` more are finished already (taken from a journal): counted done, not
        timed."""
        self.done += units
        if self._bar is not None:
            self._bar.update(units)

    def seconds_left(self) -> float | None:
        """Estimated seconds until every unit is done; None before the first unit."""
        if self._session == 0:
            return None
        elapsed = time.monotonic() - self._start
        left = self.total - self.done
        finished = max(self._session, min(self.workers, self._session + left))
        return elapsed / finished * left

    def step(self, line: str) -> None:
        """One more unit finished; ``line`` says what it gave."""
        self.done += 1
        self._session += 1
        if self._bar is not None:
            self._bar.write(line, file=self.stream)
            self._bar.update(1)
            return
        elapsed = _duration(time.monotonic() - self._start)
        print(f"{line}  [{self.done}/{self.total}, {elapsed} elapsed, "
              f"~{_duration(self.seconds_left())} left]", file=self.stream, flush=True)

    def close(self) -> None:
        """Remove the bar from the terminal (no-op without one)."""
        if self._bar is not None:
            self._bar.close()
