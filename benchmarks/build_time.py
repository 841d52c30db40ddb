"""Wall time of building the package's wheel (`pip install .` without the dependencies: the
Cython translation and the C/C++ compilation of every extension), for this checkout and a
reference checkout, alternating the two so that both see the same machine state.

    python benchmarks/build_time.py --reference <checkout of the previous version> [--rounds 2]

Each build runs `pip wheel --no-deps --no-build-isolation` on a fresh copy of the checkout's
tracked files (no build/ directory, no generated .cpp, no built extensions), so nothing is
reused between builds.  Results: results/build_time.{md,json}.

    python benchmarks/build_time.py --per-step [--reference <checkout>]

instead builds each checkout's fresh copy once, one step at a time (``SVMMAP_BUILD_JOBS=1
python setup.py build_ext --force``), and times each step from its line of the build's
output to the next: the Cython translation of each .pyx, the C/C++ compilation of each
generated file and each link.  Results: results/build_steps.{md,json}.
"""

import argparse
import os
import re
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


#: a step's first line in the build's output: (kind, the file it works on)
_STEP_PATTERNS = [("cythonize", re.compile(r"^\[\d+/\d+\] Cythonizing (\S+)")),
                  ("link", re.compile(r"^\S*(?:gcc|g\+\+|cc|c\+\+)\s.*-shared.*-o (\S+)")),
                  ("compile", re.compile(r"^\S*(?:gcc|g\+\+|cc|c\+\+)\s.*-c (\S+)"))]


def step_seconds(checkout):
    """[(kind, file, seconds)] of building a fresh copy of ``checkout`` one step at a time:
    each step lasts from its line of the build's output to the next line that starts one
    (or the build's end)."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "src"
        fresh_copy(checkout, tree)
        env = dict(os.environ, SVMMAP_BUILD_JOBS="1", PYTHONUNBUFFERED="1")
        process = subprocess.Popen([sys.executable, "setup.py", "build_ext", "--force"],
                                   cwd=tree, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
        steps, current = [], None
        for line in process.stdout:
            now = time.perf_counter()
            for kind, pattern in _STEP_PATTERNS:
                found = pattern.search(line.strip())
                if found:
                    if current is not None:
                        steps.append((*current[:2], now - current[2]))
                    current = (kind, Path(found.group(1)).name, now)
                    break
        if process.wait() != 0:
            raise RuntimeError(f"the build of {checkout} failed")
        if current is not None:
            steps.append((*current[:2], time.perf_counter() - current[2]))
        return steps


def per_step(args, argv):
    checkouts = {"this": ROOT, **({"reference": args.reference} if args.reference else {})}
    rows = [{"version": version, "kind": kind, "file": name, "seconds": seconds}
            for version, checkout in checkouts.items()
            for kind, name, seconds in step_seconds(checkout)]
    lines = ["| version | step | file | seconds |", "|---|---|---|---|"]
    lines += [f"| {r['version']} | {r['kind']} | {r['file']} | {r['seconds']:.2f} |"
              for r in rows]
    lines += ["", "| version | cythonize s | compile s | link s | all s |", "|---|---|---|---|---|"]
    for version in checkouts:
        total = {kind: sum(r["seconds"] for r in rows
                           if r["version"] == version and r["kind"] == kind)
                 for kind in ("cythonize", "compile", "link")}
        lines.append(f"| {version} | {total['cythonize']:.1f} | {total['compile']:.1f} | "
                     f"{total['link']:.1f} | {sum(total.values()):.1f} |")
    command = "python benchmarks/build_time.py " + " ".join(argv or sys.argv[1:])
    record("build_steps", command, rows, "\n".join(lines + ["", args.note]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", help="checkout of the previous version")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--per-step", action="store_true",
                        help="time each step of a one-at-a-time build (module docstring)")
    parser.add_argument("--note", default="")
    args = parser.parse_args(argv)
    if args.per_step:
        return per_step(args, argv)
    if args.reference is None:
        parser.error("--reference is required (without --per-step)")
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
