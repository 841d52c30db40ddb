"""svmmap.datasets: the bundled data of data/, reachable from a clone and an installed package."""

import filecmp
import gzip
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from svmmap import datasets, load_svmlight, metrics

from conftest import ROOT, data_file


@pytest.mark.parametrize("column, published_map, published_roc", [(0, 0.59, 0.47),
                                                                   (1, 0.51, 0.53)])
def test_paper_toy_reproduces_tables_1_and_2(column, published_map, published_roc):
    X, y, qid = datasets.load_paper_toy()
    scores = X.toarray()[:, column]
    assert X.shape == (8, 2) and y.sum() == 3 and set(qid) == {1}
    assert round(metrics.mean_average_precision(scores, y, qid), 2) == published_map
    assert round(metrics.roc_area(scores, y, qid), 2) == published_roc


def test_svmmap_sample_is_the_original_file():
    assert filecmp.cmp(datasets.path("sample"), data_file("svmmap_sample", "sample.data"),
                       shallow=False)
    X, y, qid = datasets.load_svmmap_sample()
    assert X.shape == (917, 750) and (y > 0).sum() == 10 and set(qid) == {451}


def test_mq2008_fold1_decompresses_to_the_published_files():
    loaded = datasets.load_mq2008_fold1()
    assert list(loaded) == ["train", "vali", "test"]
    for split, (X, y, qid) in loaded.items():
        original = data_file("MQ2008", "Fold1", f"{split}.txt")
        with gzip.open(datasets.path("mq2008", split)) as packed:
            assert packed.read() == original.read_bytes()
        assert X.shape[1] == datasets.MQ2008_FEATURES and set(np.unique(y)) <= {0, 1, 2}
        assert len(qid) == X.shape[0] == len(original.read_text().splitlines())


def test_gzip_headers_are_reproducible():
    for split in ("train", "vali", "test"):
        header = datasets.path("mq2008", split).read_bytes()[:10]
        assert header[3] & 0x08 == 0 and header[4:8] == b"\0\0\0\0"  # no name, no time stamp


def test_path_command_prints_a_readable_file():
    out = subprocess.run([sys.executable, "-m", "svmmap.datasets", "path", "mq2008", "test"],
                         capture_output=True, text=True, check=True).stdout
    assert Path(out.strip()) == datasets.path("mq2008", "test")
    assert load_svmlight(out.strip())[0].shape[0] == 2874


def test_path_errors():
    with pytest.raises(ValueError, match="unknown data set 'letor'"):
        datasets.path("letor")
    with pytest.raises(ValueError, match="splits train, vali, test, not 'dev'"):
        datasets.path("mq2008", "dev")
    proc = subprocess.run([sys.executable, "-m", "svmmap.datasets", "path", "mq2008"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "splits train, vali, test" in proc.stderr


def test_build_puts_data_into_the_package(tmp_path):
    """What `pip install .` (non-editable) installs: build_py copies data/ into
    svmmap/datasets/data, where data_home() looks first (extension modules are not built here:
    that takes minutes, and the copy is build_py's job)."""
    subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(tmp_path)],
                   cwd=ROOT, check=True, capture_output=True)
    packaged = tmp_path / "svmmap" / "datasets" / "data"
    source = ROOT / "data"
    files = sorted(p.relative_to(source) for p in source.rglob("*") if p.is_file())
    assert files and sorted(p.relative_to(packaged) for p in packaged.rglob("*")
                            if p.is_file()) == files
    assert all(filecmp.cmp(source / f, packaged / f, shallow=False) for f in files)
    assert (tmp_path / "svmmap" / "datasets" / "__init__.py").is_file()
