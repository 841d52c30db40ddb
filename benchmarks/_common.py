"""Helpers shared by the benchmark scripts: where the data is, and how results are recorded."""

import datetime
import json
import platform
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results"


def require_data(*parts):
    path = DATA.joinpath(*parts)
    if not path.exists():
        sys.exit(f"benchmark data not found: {path} (see ../shared/data/README.md)")
    return path


def load_fold(dataset, fold):
    """(train, vali, test) of a LETOR fold of ../shared/data, each (X, y, qid), read by the
    package's loader (svmmap.experiments.datasets.load_fold: every split with the training
    file's number of features)."""
    from svmmap.experiments.datasets import SPLITS
    from svmmap.experiments.datasets import load_fold as load_letor_fold

    splits = load_letor_fold(require_data(dataset, f"Fold{fold}"))
    return tuple(splits[name].arrays for name in SPLITS)


def machine():
    import os

    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, " \
           f"numpy {np.__version__}"


def record(name, command, rows, markdown):
    """Write results/<name>.json (raw rows) and results/<name>.md (the table) and print it."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.date.today().isoformat()
    header = f"Command: `{command}`  \nDate: {stamp}; machine: {machine()}\n\n"
    (RESULTS / f"{name}.json").write_text(json.dumps(
        {"command": command, "date": stamp, "machine": machine(), "rows": rows}, indent=1) + "\n")
    (RESULTS / f"{name}.md").write_text(header + markdown + "\n")
    print(header + markdown)
