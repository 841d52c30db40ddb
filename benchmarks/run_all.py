"""Reproduce every committed benchmark result under benchmarks/results/.

    python benchmarks/run_all.py

Each script prints its tables and writes results/<name>.md and .json; see the script's own
docstring for what it measures.  The experiment tables (letor_*, trials_*) come from the
commands recorded at the top of each of their .md files.
"""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = [
    ["oracle_pass.py"],
    ["scaling.py"],
    ["ohsumed_svmmap.py"],
    ["ohsumed_baselines.py", "OHSUMED", "MQ2008"],
    ["baselines_fold1.py"],
    ["c_sweep.py", "--folds", "1,2,3,4,5", "--algorithms", "1-slack,1-slack+cvxopt,n-slack"],
    ["c_sweep.py", "--datasets", "OHSUMED", "--binned", "--algorithms",
     "1-slack,1-slack+cvxopt", "--max-time", "120"],
    ["side_by_side.py"],
    ["losses.py", "--datasets", "MQ2008,OHSUMED"],
    ["defaults.py"],
    # --previous DIR (a checkout of an earlier revision, extensions built) adds the ratios
    ["grid.py", "--epsilons", "default,0.001", "--repeats", "3"],
    # needs --reference DIR (a checkout before the change) for the ratios; alone: this code
    ["qp_share.py"],
    ["reader.py", "--repeats", "15"],
    ["startup.py", "--label", "after", "--repeats", "7"],
    ["memory.py", "--queries", "3000"],
]


def main():
    failed = []
    for script, *args in SCRIPTS:
        if not (HERE / script).exists():
            continue
        print(f"== {script} {' '.join(args)}", flush=True)
        if subprocess.run([sys.executable, str(HERE / script), *args], cwd=HERE).returncode:
            failed.append(script)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
