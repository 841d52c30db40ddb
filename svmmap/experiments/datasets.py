"""Data for the experiments: LETOR fold folders and query subsets of a loaded collection.

A LETOR data folder holds ``Fold1 .. Fold5``, each with ``train.txt``, ``vali.txt`` and
``test.txt`` (SVMlight / LETOR text, see :mod:`svmmap.io`).  Every split of a fold is read
with the training file's number of features.
"""

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..collection import QueryCollection, check_features
from ..errors import InputFormatError
from ..io import load_svmlight

SPLITS = ("train", "vali", "test")


@dataclass(frozen=True)
class Split:
    """Documents of a set of queries: features ``X`` (CSR), labels ``y``, query ids ``qid``."""

    X: object
    y: np.ndarray
    qid: np.ndarray

    @property
    def arrays(self):
        return self.X, self.y, self.qid

    def queries(self, ids):
        """The documents of the queries ``ids`` (kept in this split's row order)."""
        return Split(*_rows(self, np.isin(self.qid, np.asarray(ids))))


def _rows(split, mask):
    return split.X[mask], split.y[mask], split.qid[mask]


def find_folds(folder, folds=None):
    """``{fold number: Path}`` of the ``FoldN`` sub-folders of ``folder`` (all, or ``folds``)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputFormatError("not a folder with Fold1..Fold5 sub-folders", folder)
    found = {}
    for sub in folder.iterdir():
        match = re.fullmatch(r"Fold(\d+)", sub.name)
        if match and sub.is_dir():
            found[int(match.group(1))] = sub
    if not found:
        raise InputFormatError("no FoldN sub-folders", folder)
    if folds is not None:
        missing = [f for f in folds if f not in found]
        if missing:
            raise InputFormatError(f"no Fold{missing[0]} sub-folder", folder)
        found = {f: found[f] for f in folds}
    return dict(sorted(found.items()))


def load_fold(path):
    """``{"train": Split, "vali": Split, "test": Split}`` of one LETOR fold folder."""
    path = Path(path)
    X, y, qid = load_svmlight(path / "train.txt")
    fold = {"train": Split(X, y, qid)}
    for name in SPLITS[1:]:
        fold[name] = Split(*load_svmlight(path / f"{name}.txt", n_features=X.shape[1]))
    return fold


def load_pool(paths):
    """One Split of every document in ``paths`` (files, or LETOR folders: all splits of their
    first fold -- the same queries as every other fold), and the ids of its queries that have
    at least one relevant document (label > 0), in order of first appearance."""
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            first = next(iter(find_folds(path).values()))
            files += [first / f"{name}.txt" for name in SPLITS]
        else:
            files.append(path)
    X, y, qid = load_svmlight(files)
    groups = QueryCollection.from_qid(qid)
    relevant = np.add.reduceat((y[groups.rows] > 0).astype(np.int64), groups.ptr[:-1])
    return Split(check_features(X), y, qid), groups.query_ids[relevant > 0]
