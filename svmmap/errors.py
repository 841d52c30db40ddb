"""The project's own error types.

Every problem a user can cause (a malformed input line, a foreign model file, a bad option)
is raised as a subclass of :class:`SVMMapError` whose message is one line; the command-line
tools print that line and exit non-zero instead of showing a traceback.
"""


class SVMMapError(Exception):
    """Base class of every error svmmap raises on purpose."""


class InputFormatError(SVMMapError, ValueError):
    """A data file (or an array handed to the API) cannot be used as it is.

    ``str(err)`` is ``"path:line: reason"`` when a file and line are known,
    ``"path: reason"`` when only the file is, and ``"reason"`` otherwise.
    """

    def __init__(self, reason, path=None, line=None):
        self.reason = reason
        self.path = None if path is None else str(path)
        self.line = line
        super().__init__(self._format())

    def _format(self):
        if self.path is None:
            return self.reason
        if self.line is None:
            return f"{self.path}: {self.reason}"
        return f"{self.path}:{self.line}: {self.reason}"


class ModelFileError(SVMMapError, ValueError):
    """A model file is unreadable, truncated, of an unknown version, or not an svmmap model."""

    def __init__(self, reason, path=None):
        self.reason = reason
        self.path = None if path is None else str(path)
        super().__init__(reason if self.path is None else f"{self.path}: {reason}")

