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

The previous reader is svmmap/io.py as of git revision REV (default: the commit before the
extension's reader), loaded from git into this process.
"""

import argparse
import importlib.util
import subprocess
import sys
import time
import tracemalloc

import numpy as np
from _common import ROOT, record, require_data
from sklearn.datasets import load_svmlight_file

from svmmap.io import load_svmlight

FILES = [("MQ2008", "Fold1", "train.txt"), ("OHSUMED", "Fold1", "train.txt")]


def previous_reader(revision):
    source = subprocess.run(["git", "show", f"{revision}:svmmap/io.py"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    spec = importlib.util.spec_from_loader("svmmap._previous_io", loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "svmmap"
    exec(compile(source, f"{revision}:svmmap/io.py", "exec"), module.__dict__)
    return module.load_svmlight


def sklearn_reader(path):
    X, y, qid = load_svmlight_file(str(path), query_id=True)
    return X, y, qid


def output_bytes(result):
    X, y, qid = result
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--previous", default="125dbc6")
    args = parser.parse_args()
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
