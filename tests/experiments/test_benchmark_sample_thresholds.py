"""benchmarks/sample_thresholds.py tells per-query quantile thresholds from thresholds on a
scale common to all queries, on indicator matrices built here from known scores."""

import sys

import numpy as np

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

from sample_thresholds import threshold_counts  # noqa: E402


def _indicators(scores, thresholds):
    return np.hstack([(s[:, None] > k[None, :]).astype(float)
                      for s, k in zip(scores.T, thresholds)])


def test_per_query_quantiles_fall_evenly_and_global_thresholds_do_not():
    rng = np.random.default_rng(0)
    scores = rng.gamma(2.0, size=(500, 2))
    quantiles = [np.quantile(s, np.arange(50) / 50) for s in scores.T]
    even = threshold_counts(_indicators(scores, quantiles))
    assert all(r["nested"] and r["above_max"] == 0 for r in even)
    assert all(r["max_gap_to_even"] <= 0.01 and abs(r["mean_fraction"] - 0.51) < 0.01
               for r in even)
    # evenly spaced over a range wider than this query's scores: empty top thresholds,
    # many thresholds in the sparse upper tail
    spaced = [np.linspace(0, 2 * s.max(), 50, endpoint=False) for s in scores.T]
    wide = threshold_counts(_indicators(scores, spaced))
    assert all(r["nested"] and r["above_max"] >= 20 and r["max_gap_to_even"] > 0.3
               for r in wide)


def test_the_sample_files_thresholds_are_not_per_query_quantiles(tmp_path, monkeypatch):
    import _common
    import sample_thresholds

    monkeypatch.setattr(_common, "RESULTS", tmp_path)
    rows = sample_thresholds.main([])
    assert len(rows) == 15 and all(r["nested"] for r in rows)
    # per-query quantiles: about 2 of 50 thresholds passed by < 5% of the documents, none
    # passed by no document; the sample: at least 17 per function, and 11 of 15 functions
    # have thresholds above every score of the query
    assert min(r["under_5pct"] for r in rows) >= 17
    assert sum(r["above_max"] > 0 for r in rows) == 11
