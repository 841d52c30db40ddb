"""What the command-line tools share (svmmap_learn, svmmap_classify, svmmap_baseline_learn,
svmmap_baseline_classify): parameter validation by the estimators' own rules, the error
policy (one line, exit status 1, no traceback unless --debug), training warnings printed as
notes, the options several commands have (--group, --force) and the check that the data
argument is not a model file (arguments in the wrong order).

Importing this module loads no numpy, scipy or scikit-learn: ``--help`` and argument errors
stay fast (see svmmap.commands).
"""

from __future__ import annotations

import _thread
import argparse
import os
import stat
import sys
import warnings
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

from svmstruct_api.options import QPError

from ..core import interrupts
from ..core.rules import ParameterError
from ..core.text_values import positive_int
from ..errors import SVMMapError, error_line

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

    from ..core._typing import PathLike
    from ..core.params import Parameter

__all__ = ["ArgumentParser", "Background", "HelpFormatter", "add_force_option",
           "add_group_option", "add_table_options", "check_params", "looks_like_model_file",
           "positive_int", "refuse_swapped", "run", "warnings_as_notes"]


class Background:
    """``function()`` run in a helper thread while the caller goes on (svmmap_learn reads its
    training file so while it imports the training modules); :meth:`result` waits for it
    and returns its value or raises its exception.  The thread is started with ``_thread``
    (threading's import would cost the start-up it is there to save); Ctrl-C reaches the
    caller, waiting or not, as ever, and the process does not wait for the thread at exit."""

    def __init__(self, function: Callable[[], Any]) -> None:
        self._value = self._error = None
        self._done = _thread.allocate_lock()
        self._done.acquire()
        _thread.start_new_thread(self._run, (function,))

    def _run(self, function):
        try:
            self._value = function()
        except BaseException as exc:  # raised again by result(), in the caller
            self._error = exc
        finally:
            self._done.release()

    def result(self) -> Any:
        """function()'s value, once it has returned; its exception raised here, if any."""
        with self._done:
            pass
        if self._error is not None:
            raise self._error
        return self._value


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, its width found without importing shutil: argparse imports
    shutil (and with it bz2, lzma and zlib, 1.6 ms of every command's start-up) for
    ``shutil.get_terminal_size`` whenever an option is added.  The width is the same: the
    COLUMNS variable, else the terminal's of standard output, else 80; less 2."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_columns() - 2 if width is None else width)


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser whose usage errors are one line, ``prog: error: message (see prog
    --help)``, exit status 2: the usage argparse prints before the message is 5-14 lines
    that hide it.  ``--help`` prints the usage and the options as ever."""

    def error(self, message: str) -> NoReturn:
        """Print ``prog: error: message (see prog --help)`` and exit with status 2."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _terminal_columns():
    """shutil.get_terminal_size().columns: the COLUMNS variable (a positive integer), else
    standard output's terminal width, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def check_params(parser: argparse.ArgumentParser, check: Callable[[], object],
                 flags: Mapping[str, str]) -> None:
    """Run ``check()``, a check of parameters by their svmmap.core.params rules (an estimator's
    ``check_params``, or svmmap.core.params.check_svmmap for svmmap_learn: the rules the Python API
    checks), and report a bad value as a usage error naming the option: ``flags`` maps
    parameter -> option."""
    try:
        check()
    except ParameterError as exc:
        message = str(exc)
        name = next((p for p in flags if f"'{p}' parameter" in message), None)
        parser.error(f"argument {flags[name]}: {message}" if name else message)


def run(prog: str, debug: bool, action: Callable[[], int | None],
        data_file: PathLike | None = None) -> int:
    """Run ``action``; turn the errors a user can cause into one line and exit status 1, and
    Ctrl-C or SIGTERM (svmmap.core.interrupts) into ``prog: interrupted`` / ``prog: terminated``
    and exit status 130 / 143.

    ``data_file``: the data the command read (svmmap.errors.error_line)."""
    try:
        with interrupts.handled():
            status = action()
    except (SVMMapError, QPError, OSError, MemoryError) as exc:
        if debug:
            raise
        print(f"{prog}: error: {error_line(exc, data_file)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(interrupts.message(prog), file=sys.stderr)
        return interrupts.exit_status()
    return status or 0


@contextmanager
def warnings_as_notes(prog: str, show: bool = True) -> Iterator[None]:
    """Print every warning raised inside the block as ``prog: note: message`` on stderr
    (``show=False``: swallow them, for -v 0)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for warning in caught if show else ():
        print(f"{prog}: note: {warning.message}", file=sys.stderr)


def add_group_option(parser: argparse.ArgumentParser) -> None:
    """--group FILE: query sizes for data without qid: (LightGBM's .query files)."""
    parser.add_argument("--group", default=None, metavar="FILE",
                        help="for data without qid: one query size per line, the queries' "
                             "documents consecutive (default: <data file>.query if present)")


def add_table_options(parser: argparse.ArgumentParser, parameters: Iterable[Parameter]
                      ) -> None:
    """Add the option of every parameter of the table (svmmap.core.params.PARAMETERS) that
    has one, in the table's order; options of one ``exclusive`` name exclude each other.  An
    ``action`` named after an argparse class (``BooleanOptionalAction``) is that class."""
    groups: dict[str, argparse._MutuallyExclusiveGroup] = {}
    for parameter in parameters:
        if not parameter.flags:
            continue
        flags, details = parameter.argparse()
        if isinstance(details.get("action"), str) and hasattr(argparse, details["action"]):
            details["action"] = getattr(argparse, details["action"])
        target: argparse._ActionsContainer = parser
        if parameter.exclusive is not None:
            if parameter.exclusive not in groups:
                groups[parameter.exclusive] = parser.add_mutually_exclusive_group()
            target = groups[parameter.exclusive]
        target.add_argument(*flags, **details)


def add_force_option(parser: argparse.ArgumentParser, kind: str) -> None:
    """--force: replace an existing output that is not of the kind the command writes."""
    parser.add_argument("--force", action="store_true",
                        help=f"replace an existing output file that is not {kind} (without "
                             "it such a file is refused: it may be data given in the wrong "
                             "place); an input file is never replaced")


def looks_like_model_file(path: PathLike) -> bool:
    """True when ``path`` is a readable regular file whose first non-blank character is '{'
    (a JSON model file; data files start with a label, a comment or a file name).  A pipe,
    FIFO or /dev/stdin is not looked at: what this read would be lost to the reader."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as handle:
            return handle.read(256).lstrip().startswith(b"{")
    except OSError:
        return False


def refuse_swapped(parser: argparse.ArgumentParser, data_file: str, order: str) -> None:
    """parser.error when the data argument is a model file (arguments in the wrong order)."""
    if data_file != "-" and looks_like_model_file(data_file):
        parser.error(f"{data_file} looks like a model file, not data: the arguments are "
                     f"{order}")
