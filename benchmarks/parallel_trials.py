"""The trials command in one process against ``--jobs 2``, alternately, and how honest its
estimate of the time left is.

Each round runs ``python -m svmmap.experiments.trials`` twice on the same data and settings,
``--jobs 1`` then ``--jobs 2`` (the order alternates between rounds), each into a fresh
folder, and records its wall time (the parent's, from start to exit: the workers' start-up
included).  Checked, not timed: both runs' ``trials.json`` are equal but for wall times.  The
estimate: the first progress line's elapsed time plus its "~left" against the run's total.

Run:  python benchmarks/parallel_trials.py [--data ../shared/data/OHSUMED] [--trials 4]
          [--methods svm-map,best-feature] [--rounds 2] [--quick]
``--quick``: a generated pool of 30 queries, 3 trials (the test's size).
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, record, require_data  # noqa: E402

_UNITS = {"s": 1, "m": 60, "h": 3600}


def _seconds(text):
    """Seconds of svmmap.core.progress._duration's text (``42s``, ``1m05s``, ``2h03m``)."""
    return sum(int(n) * _UNITS[u] for n, u in re.findall(r"(\d+)([hms])", text))


def _stable(path):
    results = json.loads(Path(path).read_text())
    results.pop("seconds")
    results.pop("command")
    for entry in results["methods"].values():
        entry.pop("seconds")
    return results


def run_once(data, args, jobs, out):
    """(wall seconds, estimated total after the first trial) of one run."""
    command = [sys.executable, "-m", "svmmap.experiments.trials", "--data", *data, "--out",
               str(out), "--jobs", str(jobs), *args]
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"{shlex.join(command)} failed: {result.stderr}")
    first = next(line for line in result.stdout.splitlines() if line.startswith("trial "))
    elapsed, left = re.search(r", (\S+) elapsed, ~(\S+) left\]$", first).groups()
    return wall, _seconds(elapsed) + _seconds(left)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="+", default=None)
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--methods", default="svm-map,best-feature")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="parallel_trials_"))
    if args.quick:
        sys.path.insert(0, str(ROOT / "tests"))
        from svmmap.data.io import dump_svmlight

        from conftest import random_collection

        X, y, qid = random_collection(7, n_queries=30, docs=(5, 8), rate=0.3)
        dump_svmlight(scratch / "pool.txt", X, y, qid)
        data, trials = [str(scratch / "pool.txt")], 3
        extra = ["--sizes", "3,2,5", "--bin", "0", "--grid", "0.1,1"]
    else:
        data, trials = [str(Path(d)) for d in args.data or [require_data("OHSUMED")]], \
            args.trials
        extra = []
    common = ["--trials", str(trials), "--methods", args.methods, *extra]
    rows = []
    for r in range(args.rounds):
        order = (1, 2) if r % 2 == 0 else (2, 1)
        walls = {}
        for jobs in order:
            out = scratch / f"round{r}_jobs{jobs}"
            wall, estimate = run_once(data, common, jobs, out)
            walls[jobs] = wall
            rows.append({"round": r + 1, "jobs": jobs, "wall_s": wall,
                         "estimate_after_first_s": estimate,
                         "load_average_1min_after": os.getloadavg()[0]})
        same = _stable(scratch / f"round{r}_jobs1" / "trials.json") == \
            _stable(scratch / f"round{r}_jobs2" / "trials.json")
        if not same:
            sys.exit(f"round {r + 1}: --jobs 2 gave other results than one process")
        rows.append({"round": r + 1, "ratio_jobs2_over_jobs1": walls[2] / walls[1],
                     "same_results": same})
    lines = ["| round | jobs | wall s | estimated total after trial 1 (s) | load average |",
             "|---|---|---|---|---|"]
    lines += [f"| {x['round']} | {x['jobs']} | {x['wall_s']:.1f} | "
              f"{x['estimate_after_first_s']:.0f} | {x['load_average_1min_after']:.1f} |"
              for x in rows if "jobs" in x]
    lines += ["", "| round | wall time --jobs 2 / --jobs 1 | same trials.json |", "|---|---|---|"]
    lines += [f"| {x['round']} | {x['ratio_jobs2_over_jobs1']:.2f} | {x['same_results']} |"
              for x in rows if "ratio_jobs2_over_jobs1" in x]
    command = "python benchmarks/parallel_trials.py " + shlex.join(
        sys.argv[1:] if argv is None else argv)
    name = "parallel_trials_quick" if args.quick else "parallel_trials"
    record(name, f"{command}  (runs: python -m svmmap.experiments.trials --data "
                 f"{' '.join(data)} {shlex.join(common)} --jobs 1|2)", rows, "\n".join(lines))
    return rows


if __name__ == "__main__":
    main()
