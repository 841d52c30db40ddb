"""Wall time of building the package's wheel (`pip install .` without the dependencies: the
Cython translation and the C/C++ compilation of every extension), for this checkout and a
reference checkout, alternating the two so that both see the same machine state.

    python benchmarks/build_time.py --reference <checkout of the previous version> [--rounds 2]

Each build runs `pip wheel --no-deps --no-build-isolation` on a fresh copy of the checkout's
tracked files (no build/ directory, no generated .cpp, no built extensions), so nothing is
reused between builds.  Results: results/build_time.{md,json}.
"""

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, record


def fresh_copy(checkout, into):
    """The tracked files of ``checkout`` (git archive of its HEAD plus its uncommitted
    changes' files as they are) copied to ``into``."""
    files = subprocess.run(["git", "-C", str(checkout), "ls-files"], capture_output=True,
                           text=True, check=True).stdout.split()
    for name in files:
        source = Path(checkout) / name
        if source.is_file():
            target = Path(into) / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def build_seconds(checkout):
    with tempfile.TemporaryDirectory() as tmp:
        tree, wheels = Path(tmp) / "src", Path(tmp) / "wheels"
        fresh_copy(checkout, tree)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                        "--no-build-isolation", "-q", "-w", str(wheels), str(tree)],
                       check=True, capture_output=True)
        return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", required=True, help="checkout of the previous version")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--note", default="")
    args = parser.parse_args(argv)
    times = {"this": [], "reference": []}
    for _ in range(args.rounds):
        times["reference"].append(build_seconds(args.reference))
        times["this"].append(build_seconds(ROOT))
    rows = [{"version": version, "seconds": values, "median": statistics.median(values)}
            for version, values in times.items()]
    ratio = rows[0]["median"] / rows[1]["median"]
    markdown = "\n".join([
        "| version | builds (s) | median s |", "|---|---|---|",
        *(f"| {row['version']} | {', '.join(f'{s:.1f}' for s in row['seconds'])} | "
          f"{row['median']:.1f} |" for row in rows),
        "", f"this / reference: {ratio:.2f}", "", args.note])
    command = "python benchmarks/build_time.py " + " ".join(argv or sys.argv[1:])
    record("build_time", command, rows, markdown)


if __name__ == "__main__":
    main()
