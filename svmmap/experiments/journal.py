"""Every finished unit of a long experiment kept on disk, so that ``--resume`` continues it.

A journal is a JSON-lines file in the output folder (``trials.jsonl``, ``letor.jsonl``):

* line 1: ``{"config": {...}}`` -- everything that decides the results (data, methods,
  grids, design, seeds, feature and SVM settings);
* then one line per finished unit (a trial; a fold and method): ``{"unit": key, "record":
  {...}}``, written, flushed and fsynced as soon as the unit is done.

Floats survive JSON exactly (shortest repr), so a resumed experiment aggregates the same
numbers, in the same order, as one that was never interrupted.  A last line cut short (the
process killed while writing it) is ignored; any other unreadable line is an error naming the
file and line.

Opening a journal: without ``resume`` an existing journal with finished units is refused
(``--resume`` continues it; another ``--out`` starts afresh), so a finished hour is never
overwritten by accident; with ``resume`` the stored config must equal this run's (else an
error naming the settings that differ), and its units are :attr:`Journal.done`.
"""

import json
import os
from pathlib import Path

from ..errors import InputFormatError, SVMMapError


def _normal(config):
    """``config`` as it reads back from JSON (tuples become lists, keys strings)."""
    return json.loads(json.dumps(config))


class Journal:
    """The journal at ``path`` for an experiment with ``config`` (module docstring)."""

    def __init__(self, path, config, resume=False):
        self.path = Path(path)
        self.config = _normal(config)
        self.done = {}
        if self.path.exists():
            stored, done = self._read()
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
                self.done = done
        if not self.done:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "w", encoding="utf-8") as handle:
                handle.write(json.dumps({"config": self.config}) + "\n")

    def _read(self):
        lines = self.path.read_text(encoding="utf-8").split("\n")
        config, done = None, {}
        for lineno, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                if lineno == len(lines):  # the last line, cut short: that unit is redone
                    break
                raise InputFormatError("not a journal line", self.path, lineno) from None
            if lineno == 1:
                config = entry.get("config")
            else:
                done[entry["unit"]] = entry["record"]
        return config, done

    def add(self, unit, record):
        """Append a finished unit (a string key and a JSON-able record), durably."""
        self.done[unit] = _normal(record)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"unit": unit, "record": record}) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
