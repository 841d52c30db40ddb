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


#: the console scripts an installed svmmap has (setup.py's entry points)
CONSOLE_SCRIPTS = {"svmmap_learn": "learn_main", "svmmap_classify": "classify_main",
                   "svmmap_baseline_learn": "baseline_learn_main",
                   "svmmap_baseline_classify": "baseline_classify_main"}
#: the launcher pip writes for a console script (distlib's template)
_LAUNCHER = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from svmmap.commands.console import {function}
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit({function}())
"""


def installed(checkout, directory):
    """(bin directory, environment) of svmmap from ``checkout`` (extensions built in place)
    as a user's ``pip install .`` has it, for start-up measurements: a virtual environment
    made in ``directory`` whose site-packages puts the checkout on the path as a plain
    directory and then this interpreter's site-packages (numpy, scipy, ...; a directory a
    .pth file names is searched, its own .pth files are not run), with pip's console-script
    launchers, and the children's environment without PYTHONPATH, with bytecode caching (pip
    compiles the modules at install; the first run of each command writes the cache) and
    buffered standard output (no PYTHONUNBUFFERED, which this project's sandbox sets).

    What this leaves out is what an editable install (``pip install -e .``) adds to every
    interpreter's start-up: setuptools' import finder, run from a .pth file, which imports
    pathlib, urllib.parse and ipaddress (9 ms) before any command starts, and what a sandbox
    may set: PYTHONDONTWRITEBYTECODE (every run compiling svmmap again), PYTHONUNBUFFERED."""
    import hashlib
    import os
    import subprocess
    import sysconfig

    checkout = Path(checkout).resolve()
    venv = Path(directory) / \
        f"installed-{checkout.name}-{hashlib.sha1(str(checkout).encode()).hexdigest()[:8]}"
    if not venv.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        python = venv / "bin" / "python"
        purelib = Path(subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True).stdout.strip())
        # .pth files are read in name order: the checkout first
        (purelib / "a-svmmap.pth").write_text(f"{checkout}\n")
        (purelib / "b-dependencies.pth").write_text(f"{sysconfig.get_paths()['purelib']}\n")
        for script, function in CONSOLE_SCRIPTS.items():
            launcher = venv / "bin" / script
            launcher.write_text(_LAUNCHER.format(python=python, function=function))
            launcher.chmod(0o755)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED")}
    return venv / "bin", env
