"""Atomic file output: a file svmmap writes is either complete or not there at all.

The text goes to a temporary file in the target's directory, is flushed to disk, and is then
renamed over the target (``os.replace``, atomic on POSIX and Windows); any failure or
interruption removes the temporary file and leaves a previous target untouched.
"""

import os
import tempfile
from pathlib import Path


def write_text_atomically(path, text):
    """Write ``text`` (str, or an iterable of str) to ``path`` atomically, UTF-8, '\\n' line
    ends."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                               dir=path.parent if str(path.parent) else ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            if isinstance(text, str):
                handle.write(text)
            else:
                handle.writelines(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
