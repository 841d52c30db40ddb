"""Data for the experiments: LETOR fold folders, array folders and query subsets of a loaded
collection.

A LETOR data folder holds ``Fold1 .. Fold5``, each with ``train.txt``, ``vali.txt`` and
``test.txt`` (SVMlight / LETOR text, see :mod:`svmmap.data.io`).  Every split of a fold is read
with the training file's number of features.

An *array folder* (what ``python -m svmmap.experiments.trec build --format arrays`` and
``trec_tables`` write) holds one data set as NumPy ``.npy`` files -- ``X.npy`` (documents x
features, float64, C order), ``y.npy`` (labels), ``qid.npy`` and ``docno.npy`` (strings) --
and ``features.json`` (the feature names).  Reading it maps ``X.npy`` into memory instead of
parsing text: every process of an experiment (:mod:`.trials` with ``--jobs``) shares the same
pages of the file, and a trial reads only the rows of its queries.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Union

import numpy as np

from ..core.collection import QueryCollection, check_features
from ..data.io import load_svmlight
from ..errors import InputFormatError

if TYPE_CHECKING:
    from collections.abc import Iterable

    import scipy.sparse as sp

    from ..core._typing import PathLike, Vector

    #: a split's features: CSR, or an array folder's memory-mapped ndarray
    Features = Union[sp.csr_matrix, np.ndarray]

SPLITS = ("train", "vali", "test")


@dataclass(frozen=True)
class Split:
    """Documents of a set of queries: features ``X`` (CSR), labels ``y``, query ids ``qid``."""

    X: Features
    y: np.ndarray
    qid: np.ndarray

    @property
    def arrays(self) -> tuple[Features, np.ndarray, np.ndarray]:
        """``(X, y, qid)``."""
        return self.X, self.y, self.qid

    def queries(self, ids: Vector) -> Split:
        """The documents of the queries ``ids`` (kept in this split's row order)."""
        return Split(*_rows(self, np.isin(self.qid, np.asarray(ids))))


def _rows(split: Split, mask: np.ndarray) -> tuple[Features, np.ndarray, np.ndarray]:
    return split.X[mask], split.y[mask], split.qid[mask]


#: the files of an array folder (module docstring)
ARRAY_FILES = ("X.npy", "y.npy", "qid.npy", "docno.npy", "features.json")


def is_array_folder(path: PathLike) -> bool:
    """Whether ``path`` is an array folder (it holds ``X.npy``)."""
    return (Path(path) / "X.npy").is_file()


def save_arrays(folder: PathLike, X: np.ndarray, y: Vector, qid: Vector, docnos: Vector,
                names: Iterable[str]) -> None:
    """Write an array folder (module docstring) whole: into a temporary sibling folder first,
    renamed into place, so that ``folder`` is either the old one or the complete new one."""
    folder = Path(folder)
    temporary = folder.with_name(f".{folder.name}.tmp{os.getpid()}")
    shutil.rmtree(temporary, ignore_errors=True)
    temporary.mkdir(parents=True)
    try:
        np.save(temporary / "X.npy", np.ascontiguousarray(X, dtype=np.float64))
        np.save(temporary / "y.npy", np.asarray(y, dtype=np.float64))
        np.save(temporary / "qid.npy", np.asarray(qid).astype(str))
        np.save(temporary / "docno.npy", np.asarray(docnos, dtype=object).astype(str))
        (temporary / "features.json").write_text(json.dumps(
            {str(i): name for i, name in enumerate(names, 1)}, indent=1) + "\n")
        if folder.exists():
            shutil.rmtree(folder)
        temporary.rename(folder)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise


def load_arrays(folder: PathLike) -> tuple[Split, list[str], list[str]]:
    """``(Split, docnos, names)`` of an array folder, ``X`` memory-mapped read-only."""
    folder = Path(folder)
    try:
        X = np.load(folder / "X.npy", mmap_mode="r", allow_pickle=False)
        y, qid, docnos = (np.load(folder / name, allow_pickle=False)
                          for name in ("y.npy", "qid.npy", "docno.npy"))
        names = json.loads((folder / "features.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError) as err:
        raise InputFormatError(f"not a readable array folder ({err})", folder) from None
    if X.ndim != 2 or X.dtype != np.float64 or not len(y) == len(qid) == len(docnos) \
            == X.shape[0] or not isinstance(names, dict) or len(names) != X.shape[1]:
        raise InputFormatError("array folder whose files do not fit together (X.npy rows, "
                               "y.npy, qid.npy, docno.npy, features.json)", folder)
    return Split(X, y, qid), docnos.tolist(), [names[str(i)] for i in range(1, X.shape[1] + 1)]


def find_folds(folder: PathLike, folds: Iterable[int] | None = None) -> dict[int, Path]:
    """``{fold number: Path}`` of the ``FoldN`` sub-folders of ``folder`` (all, or ``folds``)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputFormatError("not a folder with Fold1..Fold5 sub-folders", folder)
    found: dict[int, Path] = {}
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


def load_fold(path: PathLike) -> dict[str, Split]:
    """``{"train": Split, "vali": Split, "test": Split}`` of one LETOR fold folder."""
    path = Path(path)
    X, y, qid, *_ = load_svmlight(path / "train.txt")
    fold = {"train": Split(X, y, qid)}
    for name in SPLITS[1:]:
        X_split, y_split, qid_split, *_ = load_svmlight(path / f"{name}.txt",
                                                        n_features=X.shape[1])
        fold[name] = Split(X_split, y_split, qid_split)
    return fold


def load_pool(paths: Iterable[PathLike]) -> tuple[Split, np.ndarray]:
    """One Split of every document in ``paths`` (files, or LETOR folders: all splits of their
    first fold -- the same queries as every other fold; or one array folder, mapped), and the
    ids of its queries that have at least one relevant document (label > 0), in order of first
    appearance."""
    given = [Path(p) for p in paths]
    if len(given) == 1 and is_array_folder(given[0]):
        split = load_arrays(given[0])[0]
        return Split(check_features(split.X), split.y, split.qid), _with_relevant(split)
    files: list[Path] = []
    for path in given:
        if path.is_dir():
            first = next(iter(find_folds(path).values()))
            files += [first / f"{name}.txt" for name in SPLITS]
        else:
            files.append(path)
    X, y, qid, *_ = load_svmlight(files)
    split = Split(check_features(X), y, qid)
    return split, _with_relevant(split)


def _with_relevant(split):
    """The ids of the split's queries with a relevant document, in order of first appearance."""
    groups = QueryCollection.from_qid(split.qid)
    relevant = np.add.reduceat((split.y[groups.rows] > 0).astype(np.int64), groups.ptr[:-1])
    return groups.query_ids[relevant > 0]
