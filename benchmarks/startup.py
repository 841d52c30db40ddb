"""Start-up cost of the command-line tools against a bare interpreter.

For ``svmmap_learn --help``, an argument error (``svmmap_learn -c x a b``), a parameter error
(``-c 0``), ``svmmap_classify --help``, ``svmmap_baseline_learn --help``, and the two commands
doing their work on a file small enough that start-up is all there is to it (training on 20
queries x 10 documents x 5 features, scoring them): the median wall time of
``--repeats`` runs, interleaved with ``python -c pass`` and ``python -c "import numpy"``
runs so that all see the same machine state, their difference and ratio, and the
difference to ``import numpy`` (the yardstick of issue 23: a training call on a
200-document file at most 0.15 s more); and from ``python -X importtime -c "import
svmmap.commands.learn"`` (``svmmap.cli`` in a revision before issue 24) the cumulative import
time and which heavy packages (numpy, scipy, cvxopt, sklearn, matplotlib, pandas, dask) the
import pulls in.

    python benchmarks/startup.py [--label after] [--repeats 15]
    python benchmarks/startup.py --label after --reference <checkout> --reference-label before

Rows are kept per label in results/startup.json, so that a run before a change (``--label
before``) and one after it sit side by side in results/startup.md.  An earlier revision is
measured by putting its checkout (extensions built in place) first on the path:
``PYTHONPATH=<checkout> python benchmarks/startup.py --label before``; or, better on a
shared machine, with ``--reference <checkout>``: every command then also runs from that
checkout, alternating with the revision on the path in the same round, and both rows are
recorded (the reference's under ``--reference-label``).

Each revision runs as a user's ``pip install .`` has it (``--environment installed``, the
default; _common.installed): from a temporary virtual environment with the checkout on its
path as a plain directory, pip's console-script launchers and the bytecode cache, without
the editable install's import finder (which every interpreter of a ``pip install -e .``
environment imports at start-up: 9 ms of pathlib, urllib.parse and ipaddress) and without
the sandbox's PYTHONDONTWRITEBYTECODE and PYTHONUNBUFFERED; ``python -c pass`` and ``python
-c "import numpy"`` run from the same environment.  ``--environment current`` runs this
interpreter's console scripts with the checkout first on PYTHONPATH, as before.

With ``--environment current``, ``--compiled`` runs the children with Python's bytecode
cache (PYTHONDONTWRITEBYTECODE removed from their environment, each command run once before
the timed rounds), as an installed package runs: pip compiles its modules at install time,
whereas an environment that sets PYTHONDONTWRITEBYTECODE (this project's shared sandbox does)
makes every run compile svmmap's and svmstruct_api's sources again (numpy's installed
bytecode is used either way); the installed environment always does so.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import RESULTS, ROOT, installed, record

HEAVY = ("numpy", "scipy", "cvxopt", "sklearn", "matplotlib", "pandas", "dask")


class Revision:
    """Where one revision's commands run: its interpreter, the directory of its console
    scripts and the children's environment (None: this process's)."""

    def __init__(self, python, bin_dir, env=None):
        self.python, self.bin_dir, self.env = str(python), Path(bin_dir), env

    @classmethod
    def of(cls, checkout, environment, directory):
        """``checkout`` (None: the one on this process's path) as ``environment`` has it:
        "installed" (_common.installed, made in ``directory``) or "current"."""
        if environment == "installed":
            bin_dir, env = installed(checkout or ROOT, directory)
            return cls(bin_dir / "python", bin_dir, env)
        return cls(sys.executable, Path(sys.executable).parent, on_path(checkout))

    def bare(self):
        return [self.python, "-c", "pass"]

    def numpy(self):
        """The issue's yardstick for a small training run: at most 0.15 s more than this."""
        return [self.python, "-c", "import numpy"]


def commands(tmp, bin_dir):
    """name -> command line of the console scripts in ``bin_dir``; the training and scoring
    commands work on files in ``tmp``."""
    learn, classify = str(bin_dir / "svmmap_learn"), str(bin_dir / "svmmap_classify")
    data, model = tmp / "small.txt", tmp / "model.json"
    data.write_text("".join(
        f"{int((q + d) % 3 == 0)} qid:{q} " + " ".join(f"{f}:{((q * 7 + d * 3 + f) % 11) / 10}"
                                                      for f in range(1, 6)) + "\n"
        for q in range(20) for d in range(10)))
    return {
        "svmmap_learn --help": [learn, "--help"],
        "svmmap_learn -c x a b (argument error)": [learn, "-c", "x", "a", "b"],
        "svmmap_learn -c 0 a b (parameter error)": [learn, "-c", "0", "a", "b"],
        "svmmap_classify --help": [classify, "--help"],
        "svmmap_baseline_learn --help": [str(bin_dir / "svmmap_baseline_learn"), "--help"],
        "svmmap_learn -v 0 small.txt model.json (training, 200 documents)":
            [learn, "-v", "0", str(data), str(model)],
        "svmmap_classify -v 0 small.txt model.json pred.txt (scoring)":
            [classify, "-v", "0", str(data), str(model), str(tmp / "pred.txt")],
    }


def wall(command, env=None):
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                   env=env)
    return time.perf_counter() - start


def on_path(checkout):
    """The environment of a child that imports svmmap from ``checkout`` (None: this one's)."""
    return None if checkout is None else {**os.environ, "PYTHONPATH": str(checkout)}


#: run a console script (argv[1:]) and print, at exit, the heavy packages it imported
_RUN_AND_LIST = (
    "import atexit, runpy, sys\n"
    "heavy = set(sys.argv[1].split(','))\n"
    "atexit.register(lambda: print('heavy:', ','.join(sorted(\n"
    "    {m.split('.')[0] for m in sys.modules} & heavy)), file=sys.stderr))\n"
    "sys.argv = sys.argv[2:]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n")


def heavy_in_run(command, env=None, python=sys.executable):
    """The heavy packages (HEAVY) a console-script command line imports while it runs."""
    err = subprocess.run([python, "-c", _RUN_AND_LIST, ",".join(HEAVY), *command],
                         capture_output=True, text=True, check=False, env=env,
                         cwd=tempfile.gettempdir()).stderr
    found = [line for line in err.splitlines() if line.startswith("heavy:")]
    return found[-1].split(":", 1)[1].strip().split(",") if found and found[-1][6:].strip() \
        else []


def learn_module(env=None, python=sys.executable):
    """svmmap_learn's module in the revision on the path (svmmap.cli before issue 24)."""
    found = subprocess.run([python, "-c", "import importlib.util as u; "
                            "print(u.find_spec('svmmap.commands') is not None)"],
                           capture_output=True, text=True, check=True,
                           cwd=tempfile.gettempdir(), env=env).stdout.strip()
    return "svmmap.commands.learn" if found == "True" else "svmmap.cli"


def import_profile(module, env=None, python=sys.executable):
    """(cumulative microseconds of ``import module``, heavy top-level packages imported)."""
    # from a neutral directory: ``python -c`` puts the current one first on the path, and
    # the revision measured is the one PYTHONPATH names
    out = subprocess.run([python, "-X", "importtime", "-c", f"import {module}"],
                         capture_output=True, text=True, check=True,
                         cwd=tempfile.gettempdir(), env=env).stderr
    total, heavy = 0, set()
    for line in out.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        name = name.strip()
        if name == module:
            total = int(cumulative)
        top = name.split(".")[0]
        if top in HEAVY:
            heavy.add(top)
    return total, sorted(heavy)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="after")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--reference", type=Path, default=None, metavar="CHECKOUT",
                        help="also run every command from this checkout (extensions built "
                             "in place), alternating with the revision on the path")
    parser.add_argument("--reference-label", default="reference")
    parser.add_argument("--environment", choices=("installed", "current"),
                        default="installed",
                        help="installed (default): each revision as `pip install .` leaves "
                             "it (module docstring); current: this interpreter's scripts")
    parser.add_argument("--compiled", action="store_true",
                        help="with --environment current: children use the bytecode cache "
                             "(module docstring)")
    args = parser.parse_args()
    compiled = args.compiled or args.environment == "installed"
    if args.compiled:
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        #: label -> where its children run
        revisions = {args.label: Revision.of(None, args.environment, tmp)}
        if args.reference is not None:
            revisions[args.reference_label] = Revision.of(args.reference.resolve(),
                                                          args.environment, tmp)
        this = revisions[args.label]
        names = list(commands(Path(tmp), this.bin_dir))
        for name in names:
            command = {label: commands(Path(tmp), revision.bin_dir)[name]
                       for label, revision in revisions.items()}
            bare, numpy, tool = [], [], {label: [] for label in revisions}
            for label, revision in revisions.items() if compiled else ():  # writes the cache
                wall(command[label], revision.env)
            for _ in range(args.repeats):
                bare.append(wall(this.bare(), this.env))
                numpy.append(wall(this.numpy(), this.env))
                for label, revision in revisions.items():
                    tool[label].append(wall(command[label], revision.env))
            b, n = statistics.median(bare), statistics.median(numpy)
            for label, revision in revisions.items():
                t = statistics.median(tool[label])
                rows.append({"label": label, "command": name, "seconds": t,
                             "bare_seconds": b, "difference": t - b, "ratio": t / b,
                             "numpy_seconds": n, "difference_to_numpy": t - n,
                             "heavy_in_run": heavy_in_run(command[label], revision.env,
                                                          revision.python)})
        for label, revision in revisions.items():
            module = learn_module(revision.env, revision.python)
            import_us, heavy = import_profile(module, revision.env, revision.python)
            rows.append({"label": label,
                         "command": f"python -X importtime -c 'import {module}'",
                         "import_seconds": import_us / 1e6, "heavy_imports": heavy})

    path = RESULTS / "startup.json"
    kept = []
    if path.exists():
        kept = [r for r in json.loads(path.read_text())["rows"] if r["label"] not in revisions]
    rows = kept + rows
    lines = ["| version | command | median s | python -c pass s | difference s | ratio | "
             "python -c 'import numpy' s | difference to it s | heavy packages the run "
             "imports |",
             "|---|---|---|---|---|---|---|---|---|"]
    imports = ["", "| version | import svmmap_learn's module (importtime, cumulative) | "
               "heavy packages imported |", "|---|---|---|"]
    for r in rows:
        if "seconds" in r:
            numpy_columns = f"{r['numpy_seconds']:.3f} | {r['difference_to_numpy']:+.3f}" \
                if "numpy_seconds" in r else "- | -"  # rows recorded before the column
            lines.append(f"| {r['label']} | `{r['command']}` | {r['seconds']:.3f} | "
                         f"{r['bare_seconds']:.3f} | {r['difference']:+.3f} | "
                         f"{r['ratio']:.1f} | {numpy_columns} | "
                         f"{', '.join(r.get('heavy_in_run', ['-'])) or 'none'} |")
        else:
            module = r["command"].split("import ")[-1].rstrip("'")
            imports.append(f"| {r['label']} | {r['import_seconds']:.3f} s ({module}) | "
                           f"{', '.join(r['heavy_imports']) or 'none'} |")
    command = f"python benchmarks/startup.py --label {args.label} --repeats {args.repeats}"
    if args.reference is not None:
        command += f" --reference <checkout> --reference-label {args.reference_label}"
    if args.environment != "installed":
        command += f" --environment {args.environment}"
    if args.compiled:
        command += " --compiled"
    os.chdir(Path(__file__).parent)
    record("startup", command, rows, "\n".join(lines + imports))


if __name__ == "__main__":
    main()
