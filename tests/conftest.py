"""Shared test fixtures: where the real benchmark data lives, and small random collections."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


#: hypothesis settings of the generated hostile-input tests: 40 examples, no deadline (a
#: command's start-up varies with the machine's load), function-scoped fixtures allowed
FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


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


def query_lines(q, n=8, relevant=3, label=1, qid=True, seed=0):
    """SVMlight lines of query ``q``: ``n`` documents, the first ``relevant`` of grade
    ``label``, four random features (seeded by ``seed`` and ``q``); ``qid=False`` leaves out
    ``qid:`` (for a group file)."""
    rng = np.random.default_rng(seed * 1000 + q)
    head = f" qid:{q}" if qid else ""
    return "".join(f"{label if i < relevant else 0}{head} " + " ".join(
        f"{j}:{rng.random():.3f}" for j in range(1, 5)) + "\n" for i in range(n))


@pytest.fixture
def good(tmp_path):
    """A small valid training file: six queries of eight documents, three relevant each."""
    path = tmp_path / "good.dat"
    path.write_text("".join(query_lines(q) for q in range(1, 7)))
    return path
