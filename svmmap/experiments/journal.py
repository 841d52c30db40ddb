"""Every finished unit of a long experiment kept on disk, so that ``--resume`` continues it.

A journal is a JSON Lines file in the output folder (``trials.jsonl``, ``letor.jsonl``), one
record per line, each line ending in a newline:

* line 1: ``{"config": {...}}`` -- everything that decides the results (data, methods,
  grids, design, seeds, feature and SVM settings);
* then one line per finished unit (a trial; a fold and method): ``{"unit": key, "record":
  {...}}``, written whole (one write of the encoded line, Ctrl-C and SIGTERM held back
  meanwhile: svmmap.core.interrupts.held) and fsynced as soon as the unit is done.  The order of
  the lines is the order in which units finished (parallel trials finish in any order); the
  tables are made in the units' own order.

Floats survive JSON exactly (shortest repr), so a resumed experiment aggregates the same
numbers, in the same order, as one that was never interrupted.  Users can read their
experiment with any JSON Lines tool (``jq``, ``pandas.read_json(lines=True)``).

Reading validates every record and names the file and line of the first bad one: not UTF-8,
not JSON, not of the two shapes above, a unit given twice, a path that is a directory.  A
last line without its newline -- a process killed while writing it -- is a torn tail: its
unit is redone, and the tail is cut off the file (truncated to the last whole record and
synced) before anything is written, so a new record never lands on a torn line.

Opening a journal: without ``resume`` an existing journal with finished units is refused
(``--resume`` continues it; another ``--out`` starts afresh), so a finished hour is never
overwritten by accident; with ``resume`` the stored config must equal this run's (else an
error naming the settings that differ), and its units are :attr:`Journal.done`.  One process
at a time writes a journal: it holds an exclusive lock on the file (``flock``) while open, and
a second run on the same folder is refused with one line.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import interrupts
from ..errors import InputFormatError, SVMMapError

if TYPE_CHECKING:
    from ..core._typing import PathLike

#: a unit's record, or an experiment's config: JSON values
Record = dict[str, Any]


def _normal(config: Record) -> Record:
    """``config`` as it reads back from JSON (tuples become lists, keys strings)."""
    return json.loads(json.dumps(config))


def _write(fd: int, data: bytes) -> None:
    """Write all of ``data`` to the descriptor ``fd`` (os.write may write less)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _encode(entry: Record) -> bytes:
    return (json.dumps(entry, allow_nan=True) + "\n").encode("utf-8")


def read(path: PathLike) -> tuple[Record | None, dict[str, Record], int]:
    """``(config, done, whole)`` of the journal at ``path``: the stored config (None for a
    file without a whole first line), ``{unit: record}`` and the length in bytes of its whole
    lines (what follows is a torn tail).  InputFormatError names the file and line of a bad
    record."""
    path = Path(path)
    if path.is_dir():
        raise InputFormatError("is a directory, not a journal: remove it or choose another "
                               "--out", path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputFormatError(f"cannot read the journal: {exc.strerror}", path) from None
    whole = data.rfind(b"\n") + 1
    config: Record | None = None
    done: dict[str, Record] = {}
    for lineno, line in enumerate(data[:whole].split(b"\n")[:-1], 1):
        try:
            entry = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError:
            raise InputFormatError("not a journal line (not UTF-8 text)", path,
                                   lineno) from None
        except ValueError:
            raise InputFormatError(
                "not a journal line (not JSON; a record an older svmmap appended to a torn "
                "line? delete it and the lines after it, --resume redoes their units)",
                path, lineno) from None
        if lineno == 1:
            if not (isinstance(entry, dict) and list(entry) == ["config"]
                    and isinstance(entry["config"], dict)):
                raise InputFormatError('not a journal: line 1 is not {"config": {...}}',
                                       path, lineno)
            config = entry["config"]
            continue
        if not (isinstance(entry, dict) and sorted(entry) == ["record", "unit"]
                and isinstance(entry["unit"], str) and isinstance(entry["record"], dict)):
            raise InputFormatError('not a journal line: expected {"unit": "...", '
                                   '"record": {...}}', path, lineno)
        if entry["unit"] in done:
            raise InputFormatError(f"unit {entry['unit']!r} recorded twice", path, lineno)
        done[entry["unit"]] = entry["record"]
    return config, done, whole


class Journal:
    """The journal at ``path`` for an experiment with ``config`` (module docstring); a
    context manager (closing releases the lock)."""

    def __init__(self, path: PathLike, config: Record, resume: bool = False) -> None:
        self.path = Path(path)
        self.config = _normal(config)
        self.done: dict[str, Record] = {}
        self._fd: int | None = None
        stored: Record | None = None
        done: dict[str, Record] = {}
        whole = 0
        if self.path.exists() or self.path.is_symlink():
            stored, done, whole = read(self.path)
            if done and not resume:
                raise SVMMapError(f"{self.path}: {len(done)} finished unit(s) of an earlier "
                                  "run are kept here; pass --resume to continue it, or choose "
                                  "another --out")
            if resume and stored is not None:
                differ = sorted(k for k in set(stored) | set(self.config)
                                if stored.get(k) != self.config.get(k))
                if differ:
                    raise SVMMapError(f"{self.path}: cannot resume: the stored run differs "
                                      f"in {', '.join(differ)}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0),
                               0o666)
        except OSError as exc:
            raise InputFormatError(f"cannot open the journal: {exc.strerror}",
                                   self.path) from None
        try:
            self._lock()
            if resume and stored is not None:
                # read again under the lock: the file read above may have changed since
                stored, done, whole = read(self.path)
                self.done = done
                with interrupts.held():
                    os.ftruncate(self._fd, whole)  # the torn tail, if any, is cut off
                    os.fsync(self._fd)
            else:
                with interrupts.held():
                    os.ftruncate(self._fd, 0)
                    self._append({"config": self.config})
        except BaseException:
            self.close()
            raise

    def _lock(self) -> None:
        if sys.platform == "win32":  # no advisory lock
            return
        import fcntl

        try:
            fcntl.flock(self._descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise SVMMapError(f"{self.path}: another run is writing this journal (it is "
                              "locked); wait for it to end, or choose another --out") from None

    @property
    def _descriptor(self) -> int:
        """The journal file's descriptor, open until :meth:`close`."""
        if self._fd is None:
            raise SVMMapError(f"{self.path}: the journal is closed")
        return self._fd

    def _append(self, entry: Record) -> None:
        fd = self._descriptor
        os.lseek(fd, 0, os.SEEK_END)
        _write(fd, _encode(entry))
        os.fsync(fd)

    def add(self, unit: str, record: Record) -> None:
        """Append a finished unit (a string key and a JSON-able record), whole and durably;
        a stopping signal that arrives meanwhile acts after the write."""
        with interrupts.held():
            self._append({"unit": unit, "record": record})
            self.done[unit] = _normal(record)

    def close(self) -> None:
        """Release the lock and the file (the records are on disk already)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
