"""File output: never half-written, never over an input, never over a device.

:func:`check_output` runs before any work is done (before training): it refuses an output
path that is the same file as one of the inputs (``os.path.samefile``: through symbolic and
hard links), a directory, or one in a directory that does not exist or is not writable; and,
unless the user forces it (``--force``), an existing file that is not of the kind the command
writes (an :class:`OutputKind`: a data file given as the model path is not replaced by a model).

:func:`write_text_atomically` writes a regular file (or a new path) atomically: the text goes
to a temporary file in the target's directory, is flushed to disk and renamed over the target
(``os.replace``, atomic on POSIX and Windows); the temporary file is created exclusively
(``O_EXCL``, a random name) with the mode a new file gets (0o666 less the umask); any
failure or interruption removes the temporary file and leaves a previous target untouched.
A target that exists and is not a regular file (a character device such as ``/dev/null``, a
FIFO) is written directly: renaming over it would replace the device by a regular file.  An
OSError of either way names the user's path, never the temporary file.

This module is imported by every command before numpy and uses ``os`` alone: importing
tempfile took 3 ms of every command's start-up, dataclasses and pathlib 5 and 3 ms more of a
command that stops at its arguments (``--help``; benchmarks/startup.py).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING, NamedTuple

from ..errors import OutputPathError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from ..core._typing import PathLike


def _special(path):
    """True when ``path`` exists (after following links) and is not a regular file."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


class OutputKind(NamedTuple):
    """The kind of file a command writes: ``name`` (as messages say it, e.g. "an svmmap model
    file") and ``recognises(path)``, true when the existing regular file ``path`` is one (the
    command may replace it)."""

    name: str
    recognises: Callable[[str], bool]


def first_tokens(path: PathLike, lines: int = 1) -> list[list[str]]:
    """The whitespace-separated tokens of the first ``lines`` non-blank lines of ``path`` (at
    most 64 KiB read; [] when it cannot be read): what an OutputKind looks at."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(1 << 16).decode("utf-8", "replace")
    except OSError:
        return []
    return [line.split() for line in head.splitlines() if line.strip()][:lines]


def check_output(path: PathLike, inputs: Iterable[PathLike | None] = (),
                 writes: OutputKind | None = None, force: bool = False) -> None:
    """Refuse ``path`` as an output before any work is done; raise OutputPathError.

    ``inputs``: the files the command reads (None entries are skipped).  The same file as an
    input -- also through a symbolic or hard link -- is refused, even with ``force``, as are
    a directory and a path whose directory is missing or not writable (the atomic write needs
    a temporary file there).  An existing non-regular target (``/dev/null``) only needs to be
    writable.  ``writes``: the OutputKind of the command's output; an existing, non-empty
    regular file it does not recognise is refused unless ``force`` (the user's --force).
    """
    path = os.fspath(path)
    for source in inputs:
        if source is None:
            continue
        try:
            same = os.path.samefile(path, source)
        except OSError:  # one of them does not exist (yet): not the same file
            same = False
        if same:
            raise OutputPathError(f"is the input file {str(source)!r}: refusing to overwrite "
                                  "it (choose another output path)", path)
    if os.path.isdir(path):
        raise OutputPathError("is a directory", path)
    if _special(path):
        if not os.access(path, os.W_OK):
            raise OutputPathError("not writable", path)
        return
    if writes is not None and not force and _holds_something(path) and \
            not writes.recognises(path):
        raise OutputPathError(f"exists and is not {writes.name}: refusing to replace it "
                              "(check the order of the arguments, or give --force)", path)
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        raise OutputPathError(f"directory {str(directory)!r} does not exist", path)
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputPathError(f"directory {str(directory)!r} is not writable", path)


def _holds_something(path):
    """True when ``path`` is an existing regular file that is not empty."""
    try:
        return os.stat(path).st_size > 0
    except OSError:
        return False


def write_text_atomically(path: PathLike, text: str | Iterable[str]) -> None:
    """Write ``text`` (str, or an iterable of str) to ``path``, UTF-8, '\\n' line ends:
    atomically for a regular file, directly for a device or FIFO (module docstring)."""
    path = os.fspath(path)
    try:
        if _special(path):
            with open(path, "w", encoding="utf-8", newline="\n") as handle:
                _write(handle, text)
            return
        fd, tmp = _create_temporary(path)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            _write(handle, text)
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    except BaseException:
        _remove(tmp)
        raise


#: the temporary file's open flags: a new file (never one that exists, nor a link followed)
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | \
    getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
#: names tried before giving up (tempfile's number): each is 16 random hex digits
_ATTEMPTS = 10000


def _create_temporary(path):
    """(descriptor, name) of a new file ``.<name>.<random>.tmp`` beside ``path``, opened for
    writing with the mode a new file gets (0o666 less the umask): tempfile.mkstemp's
    exclusive creation, without importing tempfile."""
    directory, name = os.path.split(path)
    for _ in range(_ATTEMPTS):
        tmp = os.path.join(directory, f".{name}.{os.urandom(8).hex()}.tmp")
        try:
            return os.open(tmp, _CREATE_FLAGS, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", path)


def _write(handle, text):
    if isinstance(text, str):
        handle.write(text)
    else:
        handle.writelines(text)
    handle.flush()


def _remove(tmp):
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
