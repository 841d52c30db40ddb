"""Shared test fixtures: where the real benchmark data lives, and small random collections."""

from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def data_file(*parts):
    """Path of a file under ../shared/data, or skip the test with a clear message."""
    path = DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"benchmark data not found: {path} (see ../shared/data/README.md)")
    return path


def random_collection(seed, n_queries=12, docs=(5, 25), n_features=6, rate=0.3):
    """Dense features, binary labels that depend on the features, contiguous qids."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(docs[0], docs[1] + 1, n_queries)
    qid = np.repeat(np.arange(n_queries), sizes)
    X = rng.normal(size=(len(qid), n_features))
    signal = X @ rng.normal(size=n_features) + rng.normal(scale=1.5, size=len(qid))
    y = (signal > np.quantile(signal, 1 - rate)).astype(float)
    return X, y, qid
