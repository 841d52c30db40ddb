"""Shared test fixtures: where the real benchmark data lives, and small random collections."""

import shutil
import subprocess
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, settings

#: the repository's root (tests/ is one level below it): README.md, benchmarks/, svmmap/
ROOT = Path(__file__).resolve().parents[1]
#: the shared benchmark data, beside the repository (../shared/data)
DATA = ROOT.parent / "shared" / "data"


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


def run_command(*args, check=True, **kwargs):
    """Run the installed console script ``args[0]`` (svmmap_learn, ...) with ``args[1:]`` as a
    user runs it; return the finished process, its output captured as text. ``check`` fails the
    test, showing stderr, when the command exits non-zero; ``kwargs`` go to subprocess.run
    (``umask``, ``input``, ``timeout``, ...)."""
    exe = shutil.which(args[0])
    if exe is None:
        pytest.fail(f"{args[0]} is not installed: run the install command of README.md")
    proc = subprocess.run([exe, *map(str, args[1:])], capture_output=True, text=True, **kwargs)
    if check and proc.returncode != 0:
        pytest.fail(f"{args[0]} failed ({proc.returncode}): {proc.stderr}")
    return proc


def assert_certified_optimum(result, formulation, violations, C, epsilon, gap_factor=1.0):
    """What a converged cutting-plane fit guarantees at its ``w``, with ``violations`` the
    brute-force largest violation of every query's constraints there: each one (n-slack) or
    their mean (1-slack) within its slack plus epsilon; the reported primal objective
    1/2 |w|^2 + C mean(max(violation, 0)) exact; the duality gap non-negative up to rounding
    and at most ``gap_factor`` C epsilon."""
    assert result.converged
    if formulation == "n-slack":
        assert np.all(violations <= result.slack + epsilon + 1e-9)
    else:
        assert violations.mean() <= result.slack[0] + epsilon + 1e-9
    primal = 0.5 * result.w @ result.w + C * np.maximum(violations, 0).mean()
    assert result.primal_objective == pytest.approx(primal, rel=1e-9, abs=1e-12)
    # weak duality up to rounding: an exactly solved last QP gives a gap of 0 +- 1e-16
    assert -1e-12 * primal <= result.duality_gap <= gap_factor * C * epsilon + 1e-6


def one_error_line(capsys):
    """The one error line a command printed (notes aside; no traceback, no other line)."""
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if "note:" not in line]
    assert len(lines) == 1, err
    return lines[0]


def traced_peak(call):
    """(call(), the peak of the memory Python's allocators and numpy traced while it ran)."""
    tracemalloc.start()
    try:
        result = call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def random_collection(seed, n_queries=12, docs=(5, 25), n_features=6, rate=0.3):
    """Dense features, binary labels that depend on the features, contiguous qids."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(docs[0], docs[1] + 1, n_queries)
    qid = np.repeat(np.arange(n_queries), sizes)
    X = rng.normal(size=(len(qid), n_features))
    signal = X @ rng.normal(size=n_features) + rng.normal(scale=1.5, size=len(qid))
    y = (signal > np.quantile(signal, 1 - rate)).astype(float)
    return X, y, qid


def wide_arrays(seed, n_queries=12, docs=(4, 12), n_features=300, per_doc=6):
    """Sparse documents (CSR, ``per_doc`` non-zeros) with more features than documents, as
    text data has; binary labels that depend on the features, every query with a relevant
    and a non-relevant document."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(docs[0], docs[1] + 1, n_queries)
    qid = np.repeat(np.arange(n_queries), sizes)
    m = len(qid)
    rows = np.repeat(np.arange(m), per_doc)
    cols = rng.integers(0, n_features, m * per_doc)
    X = sp.csr_matrix((rng.uniform(0.1, 1.0, m * per_doc), (rows, cols)),
                      shape=(m, n_features))
    X.sum_duplicates()
    signal = X @ rng.normal(size=n_features) + rng.normal(scale=0.3, size=m)
    y = (signal > np.quantile(signal, 0.7)).astype(float)
    for q in range(n_queries):
        lo, hi = np.searchsorted(qid, [q, q + 1])
        y[lo], y[hi - 1] = 1.0, 0.0
    return X, y, qid


@pytest.fixture
def started_runs(monkeypatch):
    """The state (svmstruct_api.learner._Run) every 1-slack fit of the test starts from, in
    order: its example groups and working set (its row basis) as the learner chose them."""
    from svmstruct_api.learner import OneSlackSSVM

    runs = []
    original = OneSlackSSVM._start

    def recording(self, model, previous=None):
        runs.append(original(self, model, previous))
        return runs[-1]

    monkeypatch.setattr(OneSlackSSVM, "_start", recording)
    return runs


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


#: a child's script: ``python -c PAUSE_IN_IMPORT MODULE COMMAND ARGS...`` runs
#: svmmap.commands.console's COMMAND with ARGS, printing ``importing MODULE`` and waiting for a
#: line on
#: stdin when it first imports MODULE -- the test's signal lands inside that import by
#: construction (tests/commands/test_hostile.py, test_signals.py)
PAUSE_IN_IMPORT = """\
import importlib.abc, sys
import svmmap.commands.console as c

phase = sys.argv[1]

class PauseInImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == phase:
            sys.meta_path.remove(self)
            print('importing', name, flush=True)
            sys.stdin.readline()  # returns once the test has sent SIGINT
        return None

sys.meta_path.insert(0, PauseInImport())
command = getattr(c, sys.argv[2])
sys.argv[:3] = ['svmmap']
sys.exit(command())
"""
