"""The model-selection grid a user runs, end to end from the command line: one
``svmmap_learn -c 0.1,1,10,100,1000 --vali vali.txt train.txt model.json`` (files read once,
warm-started C path) against the same grid as 5 separate ``svmmap_learn -c C`` calls, each
followed by ``svmmap_classify`` on the validation file (what the issue's svmmap figures
measured, before one-command selection existed), on OHSUMED and MQ2008 Fold1.

Recorded per dataset and stopping setting (``--epsilons``: values of -e, or ``default`` for the
package's defaults, svmmap.core.options): wall seconds of the whole grid (start-up, reading,
training, scoring), the CPU seconds of the child processes (the machine may be shared), the C
each way selects by validation MAP (LETOR convention; the separate calls' MAP computed here from
their predictions and chosen by the rule the one command applies, svmmap.core.selection.choose with
the default select_tol), and the issue's recorded figures for comparison (svm_rank is not
installed here):
svm_rank's 5-call grid took 3.35 s (OHSUMED) and 2.35 s (MQ2008); svmmap's 5 calls 8.56 s and
10.66 s.

With ``--previous DIR`` (a checkout of an earlier revision with its extensions built in place,
``python setup.py build_ext --inplace``) the one command is also timed on that revision, in the
same run, by the same ``python -c`` launcher for both trees (the ratio is this tree's wall over
the previous one's).

    python benchmarks/grid.py [--epsilons default,0.001] [--previous DIR] [--repeats N]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import record, require_data

from svmmap import load_svmlight, metrics
from svmmap.core.options import DEFAULT_EPSILON, DEFAULT_REL_GAP, DEFAULT_SELECT_TOL
from svmmap.core.selection import choose

BIN = Path(sys.executable).parent
CS = (0.1, 1, 10, 100, 1000)
ISSUE = {"OHSUMED": {"svm_rank": 3.35, "svmmap_before": 8.56},
         "MQ2008": {"svm_rank": 2.35, "svmmap_before": 10.66}}


def _shown(value):
    return "off" if value is None else f"{value:g}"


def timed(commands, env=None, cwd=None):
    """(wall seconds, children's CPU seconds) of running the commands one after another
    (with bytecode caching on, as a user has it: take the best of repeats)."""
    env = {k: v for k, v in (env or os.environ).items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    for command in commands:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env, cwd=cwd)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", default="default")
    parser.add_argument("--datasets", default="OHSUMED,MQ2008")
    parser.add_argument("--previous", default=None, metavar="DIR")
    parser.add_argument("--repeats", type=int, default=1,
                        help="time each one-command grid this many times, keep the fastest")
    args = parser.parse_args()
    launcher = [sys.executable, "-c",
                "import sys; from svmmap.commands.learn import learn_main; sys.exit(learn_main())"]
    learn, classify = str(BIN / "svmmap_learn"), str(BIN / "svmmap_classify")
    c_list = ",".join(f"{c:g}" for c in CS)
    rows = []
    for dataset in args.datasets.split(","):
        train = require_data(dataset, "Fold1", "train.txt")
        vali = require_data(dataset, "Fold1", "vali.txt")
        _, y_vali, qid_vali = load_svmlight(vali)
        for epsilon in args.epsilons.split(","):
            stopping = [] if epsilon == "default" else ["-e", epsilon, "--rel-gap", "off"]
            with tempfile.TemporaryDirectory() as tmp:
                tmp = Path(tmp)
                one = [learn, "-v", "0", *stopping, "-c", c_list, "--vali", str(vali),
                       str(train), str(tmp / "path.json")]
                one_wall, one_cpu = min(timed([one]) for _ in range(args.repeats))
                trees = {"this": str(Path(__file__).resolve().parents[1])}
                if args.previous:
                    trees["previous"] = str(Path(args.previous).resolve())
                # run in tmp: ``python -c`` puts the working directory first on the path,
                # before PYTHONPATH, and the repository's root holds this tree's svmmap
                launched = {name: min(timed([[*launcher, *one[1:]]], cwd=tmp,
                                            env={**os.environ, "PYTHONPATH": tree})[0]
                                      for _ in range(args.repeats))
                            for name, tree in trees.items()}
                chosen_path = float(json.loads(
                    (tmp / "path.json").read_text())["training"]["selection"]["C"])
                separate = []
                for c in CS:
                    model, predictions = tmp / f"m{c:g}.json", tmp / f"p{c:g}.txt"
                    separate += [[learn, "-v", "0", *stopping, "-c", f"{c:g}", str(train),
                                  str(model)],
                                 [classify, "-v", "0", str(vali), str(model), str(predictions)]]
                sep_wall, sep_cpu = timed(separate)
                vali_map = [metrics.mean_average_precision(
                    np.loadtxt(tmp / f"p{c:g}.txt"), y_vali, qid_vali) for c in CS]
                chosen_separate = CS[choose(vali_map, DEFAULT_SELECT_TOL)]
            setting = (f"defaults (-e {_shown(DEFAULT_EPSILON)}, --rel-gap "
                       f"{_shown(DEFAULT_REL_GAP)})"
                       if epsilon == "default" else f"-e {epsilon}, --rel-gap off")
            rows.append({"dataset": dataset, "stopping": setting,
                         "one_command_seconds": one_wall, "one_command_cpu": one_cpu,
                         "separate_seconds": sep_wall, "separate_cpu": sep_cpu,
                         "chosen_one_command": chosen_path,
                         "chosen_separate": float(chosen_separate),
                         "separate_vali_map": vali_map, **ISSUE[dataset],
                         "launched_this_seconds": launched["this"],
                         "launched_previous_seconds": launched.get("previous")})
    lines = ["| Fold1 | stopping | one command s (CPU s) | 5 learn + 5 classify calls s (CPU s) | "
             "C chosen: one command / separate | issue: svm_rank grid s | issue: svmmap "
             "5 calls s |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['dataset']} | {r['stopping']} | {r['one_command_seconds']:.2f} "
                     f"({r['one_command_cpu']:.2f}) | {r['separate_seconds']:.2f} "
                     f"({r['separate_cpu']:.2f}) | {r['chosen_one_command']:g} / "
                     f"{r['chosen_separate']:g} | {r['svm_rank']:.2f} | "
                     f"{r['svmmap_before']:.2f} |")
    if args.previous:
        revision = subprocess.run(["git", "-C", args.previous, "rev-parse", "--short", "HEAD"],
                                  capture_output=True, text=True).stdout.strip() or "?"
        lines += ["", f"One command launched as `python -c ...` with PYTHONPATH on each tree "
                      f"(previous: {args.previous}, revision {revision}):", "",
                  "| Fold1 | stopping | this tree s | previous s | this / previous |",
                  "|---|---|---|---|---|"]
        lines += [f"| {r['dataset']} | {r['stopping']} | {r['launched_this_seconds']:.2f} | "
                  f"{r['launched_previous_seconds']:.2f} | "
                  f"{r['launched_this_seconds'] / r['launched_previous_seconds']:.2f} |"
                  for r in rows]
    command = (f"python benchmarks/grid.py --epsilons {args.epsilons} --datasets "
               f"{args.datasets} --repeats {args.repeats}"
               + (f" --previous {args.previous}" if args.previous else ""))
    record("grid", command, rows, "\n".join(lines))


if __name__ == "__main__":
    main()
