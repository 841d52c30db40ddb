"""The project's own error types.

Every problem a user can cause (a malformed input line, a foreign model file, a bad option)
is raised as a subclass of :class:`SVMMapError` whose message is one line; the command-line
tools print that line and exit non-zero instead of showing a traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .core._typing import PathLike


class SVMMapError(Exception):
    """Base class of every error svmmap raises on purpose."""


class InputFormatError(SVMMapError, ValueError):
    """A data file (or an array handed to the API) cannot be used as it is.

    ``str(err)`` is ``"path:line: reason"`` when a file and line are known,
    ``"path: reason"`` when only the file is, and ``"reason"`` otherwise.
    """

    def __init__(self, reason: str, path: PathLike | None = None,
                 line: int | None = None) -> None:
        self.reason = reason
        self.path = None if path is None else str(path)
        self.line = line
        super().__init__(self._format())

    def _format(self) -> str:
        if self.path is None:
            return self.reason
        if self.line is None:
            return f"{self.path}: {self.reason}"
        return f"{self.path}:{self.line}: {self.reason}"


class ModelFileError(SVMMapError, ValueError):
    """A model file is unreadable, truncated, of an unknown version, or not an svmmap model."""

    def __init__(self, reason: str, path: PathLike | None = None) -> None:
        self.reason = reason
        self.path = None if path is None else str(path)
        super().__init__(reason if self.path is None else f"{self.path}: {reason}")


class OutputPathError(SVMMapError, ValueError):
    """An output path that must not or cannot be written: an input file (through links too),
    a directory, or a path in a missing or read-only directory.  Raised before any work."""

    def __init__(self, reason: str, path: PathLike) -> None:
        self.reason = reason
        self.path = str(path)
        super().__init__(f"{self.path}: {reason}")


def error_line(exc: BaseException, data_file: PathLike | None = None) -> str:
    """The one line a command prints for an error the user can cause.

    An OSError names its file (``path: No space left on device``); an InputFormatError raised
    without a file (by the estimator, on arrays) is reported against ``data_file``, the data
    the command read; a MemoryError says what to reduce."""
    message = str(exc)
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {exc.strerror}"
    if isinstance(exc, InputFormatError) and exc.path is None and data_file is not None:
        return str(InputFormatError(exc.reason, data_file, exc.line))
    if isinstance(exc, MemoryError):
        return (f"out of memory{': ' + message if message else ''} (the data, its number of "
                "features or the binning is too large for this machine)")
    return message
