"""Peak memory of a command and all its child processes together, as a user's machine feels
it: the sum over the process tree of each process's proportional set size (PSS: a page
shared by k processes -- a memory-mapped data set read by every trial worker -- counts 1/k in
each), sampled every ``--interval`` seconds; beside it the largest single RSS.
``/usr/bin/time -v`` reports only the largest single process's RSS, which misses workers
running at once.

    python benchmarks/tree_memory.py [--interval 1] [--out FILE] -- COMMAND ...

Prints (and with ``--out`` writes as JSON) the command, its exit status, wall time and the
peak tree PSS and RSS in GB.  Needs psutil (installed with dask.distributed).
"""

import argparse
import json
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone

import psutil


def tree_memory(root):
    """(sum of PSS, sum of RSS, largest RSS) in bytes over ``root`` and its descendants."""
    pss = rss = largest = 0
    try:
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0, 0, 0
    for process in processes:
        try:
            info = process.memory_full_info()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        pss += getattr(info, "pss", info.rss)
        rss += info.rss
        largest = max(largest, info.rss)
    return pss, rss, largest


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--out", help="JSON file to write the figures to")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    start = time.monotonic()
    child = subprocess.Popen(command)
    root = psutil.Process(child.pid)
    peak = [0, 0, 0]
    while child.poll() is None:
        peak = [max(a, b) for a, b in zip(peak, tree_memory(root))]
        time.sleep(args.interval)
    result = {"command": command, "exit_status": child.returncode,
              "seconds": round(time.monotonic() - start, 1),
              "peak_tree_pss_gb": round(peak[0] / 1e9, 3),
              "peak_tree_rss_gb": round(peak[1] / 1e9, 3),
              "peak_single_rss_gb": round(peak[2] / 1e9, 3),
              "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "machine": f"{platform.node()} {platform.machine()} "
                         f"{psutil.cpu_count()} cores "
                         f"{psutil.virtual_memory().total / 2**30:.0f} GiB"}
    print(json.dumps(result, indent=1), file=sys.stderr)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=1)
            handle.write("\n")
    sys.exit(child.returncode)


if __name__ == "__main__":
    main()
