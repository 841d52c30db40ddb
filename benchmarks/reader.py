"""The SVMlight reader: the extension's parser against the previous (Python + numpy) reader
and scikit-learn's ``load_svmlight_file``, in one run, on LETOR train files.

For each file and reader: the best wall and CPU time over ``--repeats`` reads, MB/s of the
file's size by wall and by CPU time (the machine may be shared: CPU time is the rate of one
core), whether X, y and qid are identical to ours (non-zero values bit for bit), and
the peak memory traced by tracemalloc during one read as a multiple of the output arrays
(X.data + X.indices + X.indptr + y + qid).  The file itself is memory-mapped by the new
reader (page cache, not traced) and held as bytes/str by the others.  The extension is also
run with ``n_threads=2`` (the text cut into chunks parsed in parallel: MB/s of CPU is then
the rate per core-second, not of one core).

    python benchmarks/reader.py [--repeats 7] [--previous REV]

The previous reader is svmmap/data/io.py as of git revision REV (default: the commit before the
extension's reader), loaded from git into this process.

Against a reference build of the package (a directory holding another revision with its
extensions built), alternating, each read in a child process of its own:

    python benchmarks/reader.py --reference DIR [--rounds 5] [--threads 1] [FILE ...]

Each child reads as the commands do (``read_svmlight``).  For the LETOR train files and every
FILE given (plain or compressed): the median over
``--rounds`` of each package's best of ``--repeats`` reads, the ratio this / reference (below
1: this tree is faster), the ratio of their median user CPU times (the parsing itself: the
system time, mostly the kernel zeroing the arrays' fresh pages, varies several-fold with
the machine's memory state and is shown apart), and each package's peak RSS growth while
reading (VmHWM, the real high-water mark, pages of a memory-mapped file included) over the
arrays returned.
"""

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
from _common import ROOT, record, require_data
from sklearn.datasets import load_svmlight_file

from svmmap.data.io import load_svmlight

FILES = [("MQ2008", "Fold1", "train.txt"), ("OHSUMED", "Fold1", "train.txt")]


def previous_reader(revision):
    source = subprocess.run(["git", "show", f"{revision}:svmmap/data/io.py"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    spec = importlib.util.spec_from_loader("svmmap._previous_io", loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "svmmap"
    exec(compile(source, f"{revision}:svmmap/data/io.py", "exec"), module.__dict__)
    return module.load_svmlight


def sklearn_reader(path):
    X, y, qid = load_svmlight_file(str(path), query_id=True)
    return X, y, qid


def output_bytes(result):
    """Bytes of the arrays read: X's (a dense ndarray, or its data, indices and indptr), y
    and qid."""
    X, y, qid = result
    if isinstance(X, np.ndarray):
        return X.nbytes + y.nbytes + qid.nbytes
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes + y.nbytes + qid.nbytes


def identical(result, reference):
    """Same shape, y and qid, and the same non-zero entries bit for bit (scikit-learn's
    reader keeps explicit zeros: they are dropped before comparing)."""
    X, y, qid = result
    X_ref, y_ref, qid_ref = reference
    X, X_ref = X.copy(), X_ref.copy()
    for M in (X, X_ref):
        M.eliminate_zeros()
        M.sort_indices()
    return bool(X.shape == X_ref.shape and np.array_equal(X.indptr, X_ref.indptr)
                and np.array_equal(X.indices, X_ref.indices)
                and X.data.tobytes() == X_ref.data.tobytes()
                and np.array_equal(y, y_ref) and np.array_equal(qid, qid_ref))


def measure(read, path, repeats):
    wall = cpu = np.inf
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = read(path)
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    tracemalloc.start()
    result = read(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result, wall, cpu, peak


def _status(key):
    """This process's VmRSS / VmHWM in bytes (ru_maxrss would start from the forking
    parent's high-water mark)."""
    lines = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
    return int(lines[key].split()[0]) * 1024


def child(path, repeats, threads):
    """One package's reads of ``path`` in this process, as the commands read it
    (``read_svmlight``: the dense layout for LETOR files where the package has it): best wall
    time, RSS growth / arrays."""
    from svmmap.data.io import read_svmlight

    before = _status("VmRSS")
    best = user = system = np.inf
    for _ in range(repeats):
        start, usage = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        X, y, qid = read_svmlight(path, n_threads=threads)
        best = min(best, time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_SELF)
        user = min(user, after.ru_utime - usage.ru_utime)
        system = min(system, after.ru_stime - usage.ru_stime)
        arrays = output_bytes((X, y, qid))
        del X, y, qid
    growth = _status("VmHWM") - before
    print(json.dumps({"seconds": best, "user": user, "system": system,
                      "rss_over_arrays": growth / arrays, "arrays": arrays}))


def against_reference(args):
    """Alternate this tree and ``args.reference`` on each file (module docstring)."""
    files = [require_data(*parts) for parts in FILES] + [Path(f) for f in args.files]
    trees = {"this tree": ROOT, "reference": Path(args.reference).resolve()}
    runs = {(str(f), tree): [] for f in files for tree in trees}
    for _ in range(args.rounds):
        for path in files:
            for tree, where in trees.items():
                env = dict(os.environ, PYTHONPATH=str(where))
                out = subprocess.run([sys.executable, __file__, "--child", str(path),
                                      "--repeats", str(args.repeats), "--threads",
                                      str(args.threads)], env=env, check=True,
                                     capture_output=True, text=True).stdout
                runs[str(path), tree].append(json.loads(out))
    rows, lines = [], [
        "| file | MB | this tree s | reference s | ratio | user CPU ratio | system s: this | "
        "reference | RSS growth / arrays: this | reference |",
        "|---|---|---|---|---|---|---|---|---|---|"]
    for path in files:
        this, ref = runs[str(path), "this tree"], runs[str(path), "reference"]
        median = {name: float(np.median([r["seconds"] for r in rs]))
                  for name, rs in (("this", this), ("ref", ref))}
        user = {name: float(np.median([r["user"] for r in rs]))
                for name, rs in (("this", this), ("ref", ref))}
        system = {name: float(np.median([r["system"] for r in rs]))
                  for name, rs in (("this", this), ("ref", ref))}
        rss = {name: max(r["rss_over_arrays"] for r in rs) for name, rs in
               (("this", this), ("ref", ref))}
        row = {"file": str(path), "megabytes": path.stat().st_size / 1e6,
               "seconds": median["this"], "reference_seconds": median["ref"],
               "ratio": median["this"] / median["ref"],
               "user_ratio": user["this"] / user["ref"], "system_seconds": system["this"],
               "reference_system_seconds": system["ref"], "rss_over_arrays": rss["this"],
               "reference_rss_over_arrays": rss["ref"], "runs": [this, ref]}
        rows.append(row)
        lines.append(f"| {'/'.join(path.parts[-3:])} | {row['megabytes']:.1f} | "
                     f"{row['seconds']:.3f} | "
                     f"{row['reference_seconds']:.3f} | {row['ratio']:.2f} | "
                     f"{row['user_ratio']:.2f} | {row['system_seconds']:.3f} | "
                     f"{row['reference_system_seconds']:.3f} | "
                     f"{row['rss_over_arrays']:.2f} | {row['reference_rss_over_arrays']:.2f} |")
    record(args.name, f"python benchmarks/reader.py --reference {args.reference} --rounds "
           f"{args.rounds} --repeats {args.repeats} --threads {args.threads} --name "
           f"{args.name} " + " ".join(args.files), rows, "\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--previous", default="125dbc6")
    parser.add_argument("--reference", default=None, metavar="DIR")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--name", default="reader_vs_reference",
                        help="results/<name>.md of the --reference run")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.repeats, args.threads)
    if args.reference:
        return against_reference(args)
    readers = {"svmmap (extension)": load_svmlight,
               "svmmap (extension, n_threads=2)": lambda path: load_svmlight(path, n_threads=2),
               f"svmmap previous ({args.previous})": previous_reader(args.previous),
               "scikit-learn load_svmlight_file": sklearn_reader}
    rows = []
    for parts in FILES:
        path = require_data(*parts)
        size = path.stat().st_size
        ours = None
        for name, read in readers.items():
            result, wall, cpu, peak = measure(read, path, args.repeats)
            ours = ours or result
            rows.append({"file": "/".join(parts), "reader": name, "megabytes": size / 1e6,
                         "seconds": wall, "cpu_seconds": cpu, "mb_per_s": size / wall / 1e6,
                         "mb_per_cpu_s": size / cpu / 1e6,
                         "identical_to_ours": identical(result, ours),
                         "peak_over_output": peak / output_bytes(ours)})
    lines = ["| file | reader | MB | best s | MB/s (wall) | MB/s (CPU) | identical X, y, qid | "
             "peak / output arrays (tracemalloc) |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['file']} | {r['reader']} | {r['megabytes']:.1f} | "
                     f"{r['seconds']:.3f} | {r['mb_per_s']:.0f} | {r['mb_per_cpu_s']:.0f} | "
                     f"{'yes' if r['identical_to_ours'] else 'NO'} | "
                     f"{r['peak_over_output']:.2f} |")
    record("reader", f"python benchmarks/reader.py --repeats {args.repeats} "
                     f"--previous {args.previous}", rows, "\n".join(lines))
    if not all(r["identical_to_ours"] for r in rows):
        sys.exit("a reader disagrees")


if __name__ == "__main__":
    main()
