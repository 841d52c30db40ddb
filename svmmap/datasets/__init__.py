"""Small real data sets that come with svmmap, scikit-learn style.

=========  ==========================================================  =======================
name       what                                                        splits
=========  ==========================================================  =======================
mq2008     LETOR 4.0 MQ2008, Fold1 (784 queries of the TREC 2008       train, vali, test
           Million Query track, 46 features, labels 0/1/2), gzip
sample     the sample file of the original SVM-MAP distribution: one    data
           TREC-9 topic, 917 documents, 750 binary features, +1/-1
toy        the worked example of Yue et al. (2007), Tables 1-2: 8       data
           documents, feature 1 scores like h1, feature 2 like h2
=========  ==========================================================  =======================

The files live once, in the repository's top-level ``data/`` directory (provenance and terms in
``data/README.md``); building the package copies them into ``svmmap/datasets/data`` so that an
installed package has them too. :func:`path` gives a file's location (for the command line:
``python -m svmmap.datasets path mq2008 train``), the ``load_*`` functions read them with
:func:`svmmap.load_svmlight` (compressed files are read as they are).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..data.io import load_svmlight

if TYPE_CHECKING:
    import numpy as np
    import scipy.sparse as sp

    #: a data set's (X, y, qid)
    Split = tuple[sp.csr_matrix, np.ndarray, np.ndarray]

__all__ = ["DATASETS", "data_home", "path", "load_mq2008_fold1", "load_svmmap_sample",
           "load_paper_toy"]

#: name -> split -> file under the data directory
DATASETS = {
    "mq2008": {split: f"MQ2008/Fold1/{split}.txt.gz" for split in ("train", "vali", "test")},
    "sample": {"data": "svmmap_sample/sample.data"},
    "toy": {"data": "paper_toy/toy.txt"},
}
#: features of MQ2008 (every split is read with this many columns)
MQ2008_FEATURES = 46


def data_home() -> Path:
    """The directory holding the data files: the installed package's copy, or the source
    tree's ``data/`` (an editable install or a clone)."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "data", here.parents[1] / "data"):
        if (candidate / DATASETS["toy"]["data"]).is_file():
            return candidate
    raise FileNotFoundError("svmmap's data directory is missing: reinstall svmmap "
                            "(pip install .) or run from a clone that has data/")


def path(name: str, split: str | None = None) -> Path:
    """Path of a bundled data file: ``path("mq2008", "train")``, ``path("sample")``."""
    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}; choose from {', '.join(DATASETS)}")
    splits = DATASETS[name]
    if split is None and len(splits) == 1:
        split = next(iter(splits))
    if split not in splits:
        raise ValueError(f"data set {name!r} has the splits {', '.join(splits)}, "
                         f"not {split!r}")
    return data_home() / splits[split]


def load_mq2008_fold1() -> dict[str, Split]:
    """LETOR 4.0 MQ2008 Fold1: ``{"train": (X, y, qid), "vali": ..., "test": ...}``, X CSR
    with 46 columns, y graded 0/1/2, qid int64 (documents in file order)."""
    return {split: _load(path("mq2008", split), MQ2008_FEATURES) for split in DATASETS["mq2008"]}


def load_svmmap_sample() -> Split:
    """The original SVM-MAP distribution's sample: ``(X, y, qid)``, one query (451), 917
    documents, 750 binary features, y = +1 / -1."""
    return _load(path("sample"))


def load_paper_toy() -> Split:
    """Yue et al. (2007), Tables 1-2: ``(X, y, qid)`` of 8 documents, 3 relevant;
    ``X[:, 0]`` ranks like h1 (MAP 0.59, ROC-area 0.47), ``X[:, 1]`` like h2 (0.51, 0.53)."""
    return _load(path("toy"))


def _load(file: Path, n_features: int | None = None) -> Split:
    """(X, y, qid) of a bundled file (load_svmlight without comments)."""
    X, y, qid, *_ = load_svmlight(file, n_features=n_features)
    return X, y, qid
