"""What the journaled drivers' commands (trials, letor) share: the options of where and how
a run goes (``-q``, ``--resume``, ``--jobs`` / ``--scheduler``) and running the command's body
with an error or a stop said in one line (svmmap.core.interrupts): a stop says how many units
the journal keeps and how to go on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from svmstruct_api.qp import QPError

from ..commands.common import positive_int
from ..core import interrupts
from ..errors import SVMMapError, error_line

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from .journal import Journal

T = TypeVar("T")


def add_parallel_options(parser: argparse.ArgumentParser) -> None:
    """``--jobs`` and ``--scheduler`` (trials, letor)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=positive_int, default=1,
                       help="run this many units (trials) at a time in local worker "
                            "processes (default 1: this process); the tables are the same")
    where.add_argument("--scheduler", metavar="ADDRESS", default=None,
                       help="run the units on the workers of the Dask scheduler at ADDRESS "
                            "(tcp://host:port); each worker reads --data itself")


def add_run_options(parser: argparse.ArgumentParser, resume_help: str) -> None:
    """``-q``, ``--resume`` (``resume_help``: what it reads back) and the parallel options."""
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    parser.add_argument("--resume", action="store_true", help=resume_help)
    add_parallel_options(parser)


@dataclass
class Kept:
    """What a stopped run keeps: ``total`` units called ``units`` (e.g. "trials"), those
    finished in ``journal`` once the command's body has opened it."""

    units: str
    total: int = 0
    journal: Journal | None = None

    def line(self) -> str | None:
        """The stop's line of what is kept and how to go on; None before the journal."""
        if self.journal is None:
            return None
        return (f"{len(self.journal.done)} of {self.total} {self.units} are kept in "
                f"{self.journal.path}; rerun the command with --resume to continue")


def run_command(parser: argparse.ArgumentParser, body: Callable[[Kept], T], kept: Kept) -> T:
    """``body(kept)`` with stopping signals handled (svmmap.core.interrupts.handled); an
    SVMMapError, QPError or OSError ends the command with ``error: <line>`` and status 1, a
    stop (Ctrl-C, SIGTERM) with the interrupts' line and ``kept.line()`` and status 130 /
    143."""
    try:
        with interrupts.handled():
            return body(kept)
    except (SVMMapError, QPError, OSError) as err:
        parser.exit(1, f"error: {error_line(err)}\n")
    except KeyboardInterrupt:
        parser.exit(interrupts.stopped(parser.prog, kept.line()))
