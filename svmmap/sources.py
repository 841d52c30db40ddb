"""Where ranking data comes from: files, standard input, compressed files and index files
(svmmap.io reads what they hold).

* :class:`Source`: the bytes of a file or of standard input (``"-"``), decompressed when they
  start with the magic bytes of gzip, bzip2 or xz, without a leading byte-order mark; a plain
  file is memory-mapped, not copied.
* An *index file* lists data files, one path a line (relative to its own directory):
  :func:`open_sources` expands it; :func:`input_files` names every file a load may read (each
  path given, the group file beside it, the files an index lists) from the heads of regular
  files only, so that a command can refuse to overwrite one before reading anything.
* The line rules every reader here shares: lines end in ``\\n``, ``\\r\\n`` or ``\\r``
  (:func:`split_lines`), ``#`` starts a comment, blank and comment-only lines are skipped
  (:func:`data_lines`), text is UTF-8 (:func:`decode` names the line of a bad byte).
"""

import bz2
import gzip
import lzma
import mmap
import os
import re
import stat
import sys
import zlib
from functools import cached_property
from pathlib import Path

from .errors import InputFormatError

#: Standard input's name in arguments and in messages.
STDIN = "-"
STDIN_NAME = "<stdin>"
#: First bytes of the compressed formats read transparently, and their decompressors.
COMPRESSION = (
    (b"\x1f\x8b", "gzip", gzip.decompress, (OSError, EOFError, zlib.error)),
    (b"BZh", "bzip2", bz2.decompress, (OSError, EOFError, ValueError)),
    (b"\xfd7zXZ\x00", "xz", lzma.decompress, (lzma.LZMAError, EOFError)),
)
#: Suffix of the group file looked for beside a data file without ``qid:`` (LightGBM's).
GROUP_SUFFIX = ".query"
BOM = b"\xef\xbb\xbf"
_LINE_END_RE = re.compile(r"\r\n|\r|\n")
#: input_files reads this much of a file to tell an index file from a data file
INDEX_HEAD_BYTES = 1 << 16


def split_lines(text):
    """The lines of ``text``, ending in \\n, \\r\\n or \\r (the reader's line numbers)."""
    return _LINE_END_RE.split(text)


class Source:
    """The bytes of a data, index or group file (``"-"``: standard input), decompressed when
    they start with the magic bytes of gzip, bzip2 or xz, without a leading byte-order mark:
    ``view`` (a memoryview; a plain file is memory-mapped, not copied) and ``path``, the name
    messages give.  Use it as a context manager (or ``close()``)."""

    def __init__(self, given):
        self.path = Path(STDIN_NAME if str(given) == STDIN else given)
        self._mapped = None
        if str(given) == STDIN:
            data = sys.stdin.buffer.read()
        else:
            data = self._map(self.path)
        for magic, name, decompress, errors in COMPRESSION:
            if data[:len(magic)] == magic:
                try:
                    data = decompress(data)
                except errors as err:
                    self.close()
                    raise InputFormatError(f"corrupt or truncated {name} data ({err})",
                                           self.path) from None
                self.close()
                break
        if not len(data):
            self.close()
            raise InputFormatError("empty file", self.path)
        self._whole = memoryview(data)
        self.view = self._whole[3:] if self._whole[:3] == BOM else self._whole[:]

    @cached_property
    def first_line(self):
        """(line number, tokens) of the first line that is not blank or a comment, or None
        (:func:`find_first_line`): found once, however many readers ask (is it an index file,
        does it carry ``qid:``)."""
        return find_first_line(self.view)

    def _map(self, path):
        if os.path.isdir(path):
            raise InputFormatError("is a directory", path)
        if not os.path.exists(path):
            raise InputFormatError("file not found", path)
        try:
            with open(path, "rb") as file:
                try:
                    self._mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
                except (ValueError, OSError):  # empty, or not a regular file
                    return file.read()
        except OSError as err:
            raise InputFormatError(f"cannot read: {err.strerror}", path) from None
        return self._mapped

    def close(self):
        for name in ("view", "_whole"):
            if hasattr(self, name):
                getattr(self, name).release()
        if self._mapped is not None:
            self._mapped.close()
            self._mapped = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read_text(path):
    """Return the decoded contents of an index or group file."""
    with Source(path) as source:
        return decode(source.view, source.path)


def decode(data, path):
    """UTF-8 text of ``data`` (bytes-like), or the error naming the line of the first byte
    that is not UTF-8."""
    try:
        return str(data, "utf-8")
    except UnicodeDecodeError as err:
        line = len(split_lines(str(data[:err.start], "utf-8")))
        raise InputFormatError(
            f"not valid UTF-8 (byte 0x{data[err.start]:02x})", path, line
        ) from None


def find_first_line(data, step=INDEX_HEAD_BYTES):
    """(line number, tokens) of the first line of ``data`` (bytes) that is not blank or a
    comment, or None; reads a head of the data that doubles until it holds that line whole."""
    size = step
    while True:
        head = str(data[:size], "utf-8", "replace")
        whole = size >= len(data)
        n_lines = len(split_lines(head))
        for lineno, tokens, _ in data_lines(head):
            if whole or lineno < n_lines:  # the head's last line may be cut
                return lineno, tokens
            break
        if whole:
            return None
        size *= 2


def data_lines(text):
    """Yield (line number, tokens, comment) for every line that is not blank or a comment."""
    for lineno, line in enumerate(split_lines(text), 1):
        body, _, comment = line.partition("#")
        tokens = body.split()
        if tokens:
            yield lineno, tokens, comment.strip()


def open_sources(given, stack):
    """The data files named by ``given``: itself (an open Source, registered on ``stack``), or
    the paths an index file lists (relative to the index file's directory; for standard
    input, the working directory)."""
    source = stack.enter_context(Source(given))
    first = source.first_line
    if first is None or not is_index_line(first[1]):
        return [source]
    path = source.path
    base = Path(".") if str(given) == STDIN else path.parent
    text = decode(source.view, path)
    source.close()
    listed_files = []
    for lineno, entry, listed in index_entries(base, text):
        if os.path.isdir(listed):
            raise InputFormatError(f"listed file {entry!r} is a directory", path, lineno)
        if not os.path.exists(listed):
            raise InputFormatError(f"listed file {entry!r} not found", path, lineno)
        listed_files.append(listed)
    return listed_files


def index_entries(base, text):
    """(line number, entry, path) of every file an index file lists, relative to ``base``."""
    for lineno, line in enumerate(split_lines(text), 1):
        entry = line.partition("#")[0].strip()
        if entry:
            yield lineno, entry, base / entry


def input_files(path_or_paths):
    """Every file :func:`load_svmlight` may read for ``path_or_paths`` (outputs are checked
    against all of them, see svmmap.atomic.check_output): each path given, the group file
    beside it (``<path>.query``), and when it is an index file (compressed or not) the data
    files it lists and the group files beside those.  Only the head of a file is read (and
    decompressed) to tell an index file, and only of a regular file: a pipe, a FIFO or
    standard input is read once, by load_svmlight.  Files that cannot be read are listed as
    given (loading them reports the problem)."""
    if isinstance(path_or_paths, (str, os.PathLike)):
        path_or_paths = [path_or_paths]
    files = []
    for given in path_or_paths:
        if str(given) == STDIN:
            continue
        files += [Path(given), Path(f"{given}{GROUP_SUFFIX}")]
        text = _head_text(given)
        first = None if text is None else next(data_lines(text), None)
        if first is not None and is_index_line(first[1]):
            try:
                text = read_text(given)
            except InputFormatError:
                continue
            for _, _, listed in index_entries(Path(given).parent, text):
                files += [listed, Path(f"{listed}{GROUP_SUFFIX}")]
    return files


def _head_text(path):
    """The first INDEX_HEAD_BYTES of a regular file, decompressed as load_svmlight would
    (only that much is decompressed), as text; None for a file that is not regular or cannot
    be read."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as handle:
            magic = handle.read(8)
            handle.seek(0)
            opener = next((_OPENERS[name] for prefix, name, *_ in COMPRESSION
                           if magic.startswith(prefix)), None)
            if opener is None:
                head = handle.read(INDEX_HEAD_BYTES)
            else:
                with opener(handle) as stream:
                    head = stream.read(INDEX_HEAD_BYTES)
    except (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error):
        return None
    return head.decode("utf-8", errors="replace").removeprefix("\ufeff")


#: streaming readers of the compressed formats (a head is decompressed, not the whole file)
_OPENERS = {"gzip": lambda f: gzip.GzipFile(fileobj=f), "bzip2": bz2.BZ2File,
            "xz": lzma.LZMAFile}


def is_index_line(tokens):
    if len(tokens) != 1 or ":" in tokens[0]:
        return False
    try:
        float(tokens[0])
    except ValueError:
        return True
    return False



def has_qid(first):
    """Whether a file's first data line ((line number, tokens) or None) carries ``qid:``."""
    return first is not None and len(first[1]) > 1 and first[1][1].startswith("qid:")
