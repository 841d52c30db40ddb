"""Where ranking data comes from: files, standard input, compressed files and index files
(svmmap.data.io reads what they hold).

* :class:`Source`: the bytes of a file or of standard input (``"-"``), decompressed when they
  start with the magic bytes of gzip, bzip2 or xz, without a leading byte-order mark, read as
  a stream in blocks cut at line ends (a data file is never held whole).
* An *index file* lists data files, one path a line (relative to its own directory):
  :func:`open_sources` expands it; :func:`input_files` names every file a load may read (each
  path given, the group file beside it, the files an index lists) from the heads of regular
  files only, so that a command can refuse to overwrite one before reading anything.
* The line rules every reader here shares: lines end in ``\\n``, ``\\r\\n`` or ``\\r``
  (:func:`split_lines`), ``#`` starts a comment, blank and comment-only lines are skipped
  (:func:`data_lines`), text is UTF-8 (:func:`decode` names the line of a bad byte).
"""

from __future__ import annotations

import io
import math
import mmap
import os
import re
import stat
import sys
from functools import cached_property
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ..errors import InputFormatError

if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
    from contextlib import ExitStack

    from ..core._typing import PathLike

    #: a file's first data line: (line number, tokens)
    FirstLine = tuple[int, list[str]]

#: Standard input's name in arguments and in messages.
STDIN = "-"
STDIN_NAME = "<stdin>"
#: First bytes of the compressed formats read transparently and their names (decompressor:
#: how they are decompressed).
COMPRESSION = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"))


def decompressor(name: str) -> tuple[Callable[..., io.BufferedIOBase],
                                     tuple[type[BaseException], ...]]:
    """(opener, errors) of the compression ``name`` of COMPRESSION: the stream that
    decompresses a compressed stream (given it), and the errors that stream raises on bad
    data.  The codec's module is imported here, when a file is compressed: gzip, bz2 and lzma
    would cost every command's start-up 1.6 ms."""
    if name == "gzip":
        import gzip
        import zlib

        return (lambda raw: gzip.GzipFile(fileobj=raw)), (OSError, EOFError, zlib.error)
    if name == "bzip2":
        import bz2

        return bz2.BZ2File, (OSError, EOFError, ValueError)
    import lzma

    return lzma.LZMAFile, (lzma.LZMAError, EOFError)

#: Suffix of the group file looked for beside a data file without ``qid:`` (LightGBM's).
GROUP_SUFFIX = ".query"
BOM = b"\xef\xbb\xbf"
_LINE_END_RE = re.compile(r"\r\n|\r|\n")
#: input_files reads this much of a file to tell an index file from a data file
INDEX_HEAD_BYTES = 1 << 16
#: find_first_line's first head (doubled until the first data line is whole in it)
FIRST_LINE_BYTES = 1 << 12
#: the first block of a data file (Source.blocks: the buffer's first size)
MIN_BLOCK_BYTES = 1 << 20
#: madvise's "map these pages of the file in one call" (Linux 5.14; not in Python 3.11's mmap
#: module), read ahead and faulted in by the kernel; refused (ignored) on an older kernel
MADV_POPULATE_READ = getattr(mmap, "MADV_POPULATE_READ",
                             22 if sys.platform.startswith("linux") else None)


def split_lines(text: str) -> list[str]:
    """The lines of ``text``, ending in \\n, \\r\\n or \\r (the reader's line numbers)."""
    return _LINE_END_RE.split(text)


class Source:
    """The bytes of a data, index or group file (``"-"``: standard input), decompressed when
    they start with the magic bytes of gzip, bzip2 or xz, without a leading byte-order mark:
    :meth:`blocks` hands them over in blocks cut at line ends (a plain file mapped, one block
    of it in the process at a time; a stream read into one buffer: a data file is never held
    whole), ``view`` holds them whole
    (index and group files); ``path`` is the name messages give.  Use it as a context manager
    (or ``close()``)."""

    def __init__(self, given: PathLike) -> None:
        self.path = Path(STDIN_NAME if str(given) == STDIN else given)
        self._file = None
        self._stream: io.BufferedIOBase | IO[bytes] | None = None
        self._errors: tuple[type[BaseException], ...] = (OSError,)
        self._compression = None
        self._eof = False
        self._view: memoryview | None = None
        self._mapped = None
        self._plain_size = None
        raw = sys.stdin.buffer if str(given) == STDIN else self._open(self.path)
        try:
            magic = _read_up_to(raw, max(len(m) for m, _ in COMPRESSION))
        except OSError as err:
            self.close()
            raise InputFormatError(f"cannot read: {err.strerror}", self.path) from None
        self._head = bytearray()
        for prefix, name in COMPRESSION:
            if magic.startswith(prefix):
                opener, self._errors = decompressor(name)
                self._compression = name
                self._stream = opener(_Prefixed(magic, raw))
                break
        else:
            self._stream = raw
            self._head += magic
        # the size of a plain regular file (None for anything else)
        if self._file is not None and self._compression is None:
            status = os.fstat(self._file.fileno())
            self._plain_size = status.st_size if stat.S_ISREG(status.st_mode) else None
        self._fill_head(len(BOM))
        if not self._head:
            self.close()
            raise InputFormatError("empty file", self.path)
        if self._head[:len(BOM)] == BOM:
            del self._head[:len(BOM)]

    @cached_property
    def first_line(self) -> FirstLine | None:
        """(line number, tokens) of the first line that is not blank or a comment, or None
        (:func:`find_first_line`): found once, however many readers ask (is it an index file,
        does it carry ``qid:``)."""
        return find_first_line(self)

    @property
    def plain_size(self) -> int | None:
        """The size in bytes of a plain regular file (None for a stream or a compressed
        file)."""
        return self._plain_size

    def head(self, size: int) -> tuple[bytes, bool]:
        """(the first ``size`` bytes, whether that is all of them): read once, kept for
        :meth:`blocks`."""
        self._fill_head(size)
        return bytes(self._head[:size]), self._eof and size >= len(self._head)

    @property
    def view(self) -> memoryview:
        """All the bytes, read whole (for index and group files)."""
        if self._view is None:
            self._fill_head(math.inf)
            self._view = memoryview(self._head)
        return self._view

    def blocks(self, size: int, first: int = MIN_BLOCK_BYTES) -> Generator[memoryview, None, None]:
        """Yield the bytes in memoryviews ending at a line end (``\\n``, ``\\r\\n`` or
        ``\\r``) or at the end of the bytes, each of at most a line more than ``size``
        bytes; a view is valid until the next is asked for.  A plain regular file is mapped
        and its blocks are views of the mapping (:meth:`_mapped_blocks`: no copy of the
        text); anything else (or a file that cannot be mapped) is read into one buffer that
        starts at ``first`` bytes and doubles while it is less than a sixteenth of the bytes
        read (up to ``size``): a large stream is not read into a large buffer from the
        start.  Reads the stream once."""
        if self._plain_size and self._map():
            yield from self._mapped_blocks(size)
            return
        head, self._head = self._head, bytearray()  # read before the rest of the stream
        buffer = bytearray(max(min(first, size), 1))
        filled = taken = done = 0
        while True:
            n = min(len(head) - taken, len(buffer) - filled)
            buffer[filled:filled + n] = head[taken:taken + n]
            filled, taken = filled + n, taken + n
            if taken == len(head):
                filled += self._read_into(buffer, filled)
            at_end = self._eof and taken == len(head)
            cut = filled if at_end else whole_lines(buffer, filled)
            if cut == 0 and not at_end:  # a line longer than the buffer
                buffer += bytes(len(buffer))
                continue
            if cut:
                with memoryview(buffer) as whole, whole[:cut] as block:
                    yield block
            if at_end and cut == filled:
                return
            buffer[:filled - cut] = buffer[cut:filled]
            filled -= cut
            done += cut
            if len(buffer) < size and len(buffer) * 16 < done:
                buffer += bytes(min(len(buffer), size - len(buffer)))

    def _fill_head(self, size):
        """Read until the head holds ``size`` bytes or the stream ends."""
        while len(self._head) < size and not self._eof:
            more = max(min(size - len(self._head), len(self._head)), INDEX_HEAD_BYTES)
            start = len(self._head)
            self._head += bytes(more)
            self._head[start + self._read_into(self._head, start):] = b""

    def _map(self):
        """Map the file: whether it could be (else it is read into the buffer)."""
        try:
            self._mapped = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # e.g. no address space left: the buffer may fit
            return False
        return True

    def _mapped_blocks(self, size):
        """:meth:`blocks` of a mapped plain file: views of the mapping (the page cache's
        pages, no copy).  Each block's pages are mapped into the process in one call before
        it is parsed (``MADV_POPULATE_READ``, where the kernel has it: not a fault per few
        pages) and dropped from it afterwards (``MADV_DONTNEED``: the page cache keeps
        them), so that reading holds one block of the file, not the whole text."""
        self._head, self._eof = bytearray(), True
        mapped, page = self._mapped, mmap.PAGESIZE
        start = len(BOM) if mapped[:len(BOM)] == BOM else 0
        dropped = 0
        with memoryview(mapped) as whole:
            while start < len(mapped):
                stop = start + size
                cut = len(mapped) if stop >= len(mapped) else whole_lines(mapped, stop, start)
                if cut == start:  # a line longer than size: the block grows
                    size *= 2
                    continue
                _advise(mapped, MADV_POPULATE_READ, start // page * page, cut)
                with whole[start:cut] as block:
                    yield block
                if cut == len(mapped):  # the last block: unmapped with the file
                    return
                kept = cut // page * page  # the page holding the next block's start stays
                _advise(mapped, getattr(mmap, "MADV_DONTNEED", None), dropped, kept)
                dropped, start = kept, cut

    def _read_into(self, buffer, start):
        """Read into buffer[start:] until it is full or the stream ends; the bytes read."""
        total = 0
        with memoryview(buffer) as whole:
            while start + total < len(buffer) and not self._eof:
                try:
                    n = self._stream.readinto(whole[start + total:])
                except self._errors as err:
                    if self._compression is None:
                        raise InputFormatError(f"cannot read: {err.strerror}",
                                               self.path) from None
                    raise InputFormatError(f"corrupt or truncated {self._compression} data "
                                           f"({err})", self.path) from None
                if not n:
                    self._eof = True
                total += n or 0
        return total

    def _open(self, path):
        if os.path.isdir(path):
            raise InputFormatError("is a directory", path)
        if not os.path.exists(path):
            raise InputFormatError("file not found", path)
        try:
            self._file = open(path, "rb")
        except OSError as err:
            raise InputFormatError(f"cannot read: {err.strerror}", path) from None
        return self._file

    def close(self) -> None:
        """Release the bytes held, the mapping and the files (not standard input)."""
        if self._view is not None:
            self._view.release()
            self._view = None
        if self._mapped is not None:
            try:
                self._mapped.close()
            except BufferError:  # a view still referenced (by a traceback): closed when freed
                pass
            self._mapped = None
        for stream in (self._stream, self._file):
            if stream is not None and stream is not sys.stdin.buffer:
                stream.close()
        self._stream = self._file = None

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _advise(mapped, advice, start, stop):
    """madvise the mapping's bytes [start, stop) (``start`` a multiple of the page size); a
    kernel without that advice ignores it (the pages are then faulted in or kept as
    usual; so does a system without madvise)."""
    if stop > start and advice is not None and hasattr(mapped, "madvise"):
        try:
            mapped.madvise(advice, start, stop - start)
        except OSError:
            pass


def whole_lines(data: bytes | bytearray | mmap.mmap, n: int, start: int = 0) -> int:
    """The end of the last line end in data[start:n] (n > start) that more bytes after n
    cannot change (a '\\r' as the last byte may be half of "\\r\\n"); ``start`` if none."""
    if n <= start:
        return start
    newline = data.rfind(b"\n", start, n)
    # a '\r' counts only after the last '\n' (searched there alone: the search is a scan)
    return max(newline, data.rfind(b"\r", max(newline, start), n - 1), start - 1) + 1


def line_blocks(data: bytes | bytearray | memoryview, size: int
                ) -> Generator[memoryview, None, None]:
    """Bytes in memory (bytes-like) in memoryviews cut as :meth:`Source.blocks` cuts a
    stream: at least ``size`` bytes each (but the last), ending at a line end."""
    data = bytes(data)
    start = 0
    while start < len(data):
        stop = start + size
        cut = len(data) if stop >= len(data) else whole_lines(data, stop, start)
        if cut == start:  # a line longer than size: the block grows as Source's buffer does
            size *= 2
            continue
        yield memoryview(data)[start:cut]
        start = cut


def _read_up_to(stream, n):
    """Up to ``n`` bytes of a binary stream (fewer only at its end: a pipe may give less at
    a time)."""
    data = b""
    while len(data) < n:
        more = stream.read(n - len(data))
        if not more:
            break
        data += more
    return data


class _Prefixed(io.RawIOBase):
    """The bytes ``prefix`` followed by the rest of ``stream`` (the magic bytes already read
    from a pipe, handed back to the decompressor)."""

    def __init__(self, prefix, stream):
        self._prefix = memoryview(prefix)
        self._stream = stream

    def readable(self):
        return True

    def readinto(self, buffer):
        if len(self._prefix):
            n = min(len(buffer), len(self._prefix))
            buffer[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        return self._stream.readinto(buffer)


def read_text(path: PathLike) -> str:
    """Return the decoded contents of an index or group file."""
    with Source(path) as source:
        return decode(source.view, source.path)


def decode(data: bytes | bytearray | memoryview, path: PathLike, lines_before: int = 0) -> str:
    """UTF-8 text of ``data`` (bytes-like), or the error naming the line of the first byte
    that is not UTF-8 (``lines_before``: the lines of the file before ``data``)."""
    try:
        return str(data, "utf-8")
    except UnicodeDecodeError as err:
        line = lines_before + len(split_lines(str(data[:err.start], "utf-8")))
        raise InputFormatError(
            f"not valid UTF-8 (byte 0x{data[err.start]:02x})", path, line
        ) from None


def find_first_line(data: Source | bytes, step: int = FIRST_LINE_BYTES) -> FirstLine | None:
    """(line number, tokens) of the first line of ``data`` (a Source, or bytes) that is not
    blank or a comment, or None; decodes and splits a head of the data that doubles until it
    holds that line whole (from ``step`` bytes: a data line is short, and splitting a long
    head into lines costs more than the rest of opening a small file)."""
    size = step
    while True:
        if isinstance(data, Source):
            head, whole = data.head(size)
        else:
            head, whole = data[:size], size >= len(data)
        text = str(head, "utf-8", "replace")
        n_lines = len(split_lines(text))
        for lineno, tokens, _ in data_lines(text):
            if whole or lineno < n_lines:  # the head's last line may be cut
                return lineno, tokens
            break
        if whole:
            return None
        size *= 2


def data_lines(text: str) -> Iterator[tuple[int, list[str], str]]:
    """Yield (line number, tokens, comment) for every line that is not blank or a comment."""
    for lineno, line in enumerate(split_lines(text), 1):
        body, _, comment = line.partition("#")
        tokens = body.split()
        if tokens:
            yield lineno, tokens, comment.strip()


def open_sources(given: PathLike, stack: ExitStack) -> list[Source] | list[Path]:
    """The data files named by ``given``: itself (an open Source, registered on ``stack``), or
    the paths an index file lists (relative to the index file's directory; for standard
    input, the working directory)."""
    source = stack.enter_context(Source(given))
    first = source.first_line
    path = source.path
    base = Path(".") if str(given) == STDIN else path.parent
    table = None if first is None else table_format(first[1], base)
    if first is not None and table is not None:
        raise InputFormatError(
            f"this looks like {table}, not SVMlight/LETOR data: expected lines '<label> "
            "qid:<q> <index>:<value> ...' (svmmap.dump_svmlight writes them from arrays)",
            path, first[0])
    if first is None or not is_index_line(first[1]):
        return [source]
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


def index_entries(base: Path, text: str) -> Iterator[tuple[int, str, Path]]:
    """(line number, entry, path) of every file an index file lists, relative to ``base``."""
    for lineno, line in enumerate(split_lines(text), 1):
        entry = line.partition("#")[0].strip()
        if entry:
            yield lineno, entry, base / entry


def input_files(path_or_paths: PathLike | Iterable[PathLike]) -> list[Path]:
    """Every file :func:`load_svmlight` may read for ``path_or_paths`` (outputs are checked
    against all of them, see svmmap.data.atomic.check_output): each path given, the group file
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
    errors = (OSError,)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as handle:
            magic = handle.read(8)
            handle.seek(0)
            name = next((name for prefix, name in COMPRESSION if magic.startswith(prefix)),
                        None)
            if name is None:
                head = handle.read(INDEX_HEAD_BYTES)
            else:
                opener, errors = decompressor(name)
                with opener(handle) as stream:
                    head = stream.read(INDEX_HEAD_BYTES)
    except (*errors, ValueError, EOFError):
        return None
    return head.decode("utf-8", errors="replace").removeprefix("\ufeff")


def table_format(tokens: Sequence[str], base: Path) -> str | None:
    """What a table's first line ``tokens`` looks like ("a CSV file (comma-separated
    columns)", "... semicolon-separated ...", "a table of blank- or tab-separated columns
    (TSV)"), or None for a line of SVMlight data or of an index file: one token with commas
    or semicolons that is no file under ``base``, or several tokens none of which holds a
    ':' (an SVMlight line has ``qid:`` or ``index:value`` after its label)."""
    if len(tokens) == 1:
        for separator, name in ((",", "comma"), (";", "semicolon")):
            if separator in tokens[0] and ":" not in tokens[0] and \
                    not os.path.exists(base / tokens[0]):
                return f"a CSV file ({name}-separated columns)"
        return None
    if len(tokens) > 2 and not any(":" in token for token in tokens):
        return "a table of blank- or tab-separated columns (TSV)"
    return None


def is_index_line(tokens: Sequence[str]) -> bool:
    """Whether a file's first data line ``tokens`` is an index file's: a single token that
    is not a number and holds no ``:``."""
    if len(tokens) != 1 or ":" in tokens[0]:
        return False
    try:
        float(tokens[0])
    except ValueError:
        return True
    return False


def has_qid(first: FirstLine | None) -> bool:
    """Whether a file's first data line ((line number, tokens) or None) carries ``qid:``."""
    return first is not None and len(first[1]) > 1 and first[1][1].startswith("qid:")
