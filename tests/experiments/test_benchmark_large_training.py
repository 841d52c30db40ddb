"""benchmarks/large_training.py on a small LETOR-shaped file, this tree against itself as
the reference: one row per version with every round's wall time and peak RSS, and the ratio
of the medians beside the median of the rounds' own ratios.  No timing is asserted."""

import json
import shutil
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import large_training  # noqa: E402


@pytest.mark.skipif(shutil.which("time", path="/usr/bin") is None,
                    reason="/usr/bin/time is not installed: the script reads peak RSS from it")
def test_rounds_alternate_and_both_ratios_are_recorded(tmp_path, monkeypatch):
    import _common

    monkeypatch.setattr(_common, "RESULTS", tmp_path)
    large_training.main(["--reference", str(ROOT), "--docs", "300", "--rounds", "2",
                         "--workdir", str(tmp_path), "--name", "large_small"])
    recorded = json.loads((tmp_path / "large_small.json").read_text())
    assert "--docs 300 --rounds 2" in recorded["command"] and "--name large_small" in \
        recorded["command"]
    for name in ("this tree", "reference"):
        runs = recorded["rows"][name]
        assert len(runs) == 2 and all(seconds > 0 and rss > 0 for seconds, rss in runs)
    markdown = (tmp_path / "large_small.md").read_text()
    assert "File: 300 documents x 136 features" in markdown
    assert "median of the rounds' ratios" in markdown
    assert (tmp_path / "large.json").exists()  # the model both versions wrote
