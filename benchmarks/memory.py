"""Peak memory of the reader and of training, against a reference revision, in one run.

    python benchmarks/memory.py [--reference REV] [--queries 3000]

Every measurement runs in a child process of its own (``--child``), with the package of this
working tree or of REV (default 9dc56a3, main before training memory was made proportional
to the data: checked out with ``git worktree`` into a temporary directory and its extensions
built there) first on PYTHONPATH.  Two figures per case:

- traced: the peak of tracemalloc (every numpy array and Python object; the extensions' own
  per-thread workspaces are not traced) during the step, beyond the inputs;
- RSS: the growth of the child's ru_maxrss (its real high-water mark) over the step, i.e.
  what the step needed beyond everything the process had held before it.

For training, both are reported as (X + growth) / X: the memory training holds, with X
counted once (X: its data, indices and indptr, or the dense array; y and qid not counted).
For the reader, as peak traced / the output arrays.  Cases: MQ2008 Fold1 train (46 features;
132 of its 471 queries have no relevant document: "skipped queries"; "none skipped" is the
same data without them), dense and CSR, 1-slack and n-slack, C = 10; and a synthetic sparse
file with 10^5 features (``--queries`` queries of 15 documents, 4 nonzeros per document,
10% of the queries without a relevant document), CSR, 1-slack, 8 iterations (the memory of
a pass does not depend on how many follow).  Dense input is not run on the synthetic file:
its X alone would be 36 GB.

Large files (``--large``): a LETOR-like file (``--docs`` documents x 136 dense-valued
features with 6 decimals, 100 documents a query, labels 0-2; written by a fast generator
into ``--workdir`` unless it is there, and gzip-compressed beside it), then

- the reader: each child's peak RSS growth while reading (VmHWM over VmRSS before) / the
  arrays returned, plain and gzip, float64 and float32;
- training: the peak RSS (``/usr/bin/time -f %M``) of ``svmmap_learn -c 1`` (default, and
  ``--dtype float32``) and, with ``--svm-rank PATH``, of ``svm_rank_learn -c C/100``.

    python benchmarks/memory.py --large [--docs 1000000] [--workdir DIR] [--svm-rank PATH]
"""

import argparse
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, record, require_data  # noqa: E402

N_FEATURES = 100_000
DOCS_PER_QUERY = 15
NONZEROS = 4


def _maxrss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# -- the child: one measurement --------------------------------------------------------------

def _x_bytes(X):
    import scipy.sparse as sp

    if sp.issparse(X):
        return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    return X.nbytes


def _load_npz(path, layout):
    import scipy.sparse as sp

    arrays = np.load(path)
    X = sp.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]),
                      shape=tuple(arrays["shape"]))
    if layout == "dense":
        X = X.toarray()
    return X, arrays["y"], arrays["qid"]


def child(args):
    warnings.simplefilter("ignore")
    import svmmap
    from svmmap import SVMMap, load_svmlight

    if args.child == "reader":
        before = _maxrss()
        tracemalloc.start()
        X, y, qid = load_svmlight(args.path)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        output = _x_bytes(X) + y.nbytes + qid.nbytes
        result = {"output_bytes": output, "traced_peak": peak,
                  "traced_ratio": peak / output,
                  "rss_growth": _maxrss() - before}
    else:
        # a tiny fit first: the modules training imports are not counted as its memory
        rng = np.random.default_rng(0)
        SVMMap(algorithm=args.algorithm, max_iter=2).fit(
            rng.normal(size=(40, 3)), np.arange(40) % 3 == 0, np.arange(40) // 8)
        X, y, qid = _load_npz(args.path, args.layout)
        X_bytes = _x_bytes(X)
        params = dict(C=10.0, algorithm=args.algorithm)
        if args.max_iter:
            params["max_iter"] = args.max_iter
        before = _maxrss()
        tracemalloc.start()
        start = time.perf_counter()
        model = SVMMap(**params).fit(X, y, qid)
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        growth = _maxrss() - before
        result = {"X_bytes": X_bytes, "traced_peak": peak,
                  "traced_ratio": (X_bytes + peak) / X_bytes,
                  "rss_growth": growth, "rss_ratio": (X_bytes + growth) / X_bytes,
                  "seconds": seconds, "iterations": model.training_result_.iterations,
                  "primal": model.training_result_.primal_objective,
                  "queries_used": model.n_queries_used_}
    result["package"] = str(Path(svmmap.__file__).resolve().parents[1])
    print(json.dumps(result))


# -- the parent: data, trees, runs -------------------------------------------------------------

def _save_npz(path, X, y, qid):
    X = X.tocsr()
    np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=np.array(X.shape),
             y=y, qid=qid)


def _synthetic_file(path, n_queries, seed=0):
    """SVMlight text: n_queries queries of DOCS_PER_QUERY documents, NONZEROS features each
    (distinct, sorted, anywhere in 1..N_FEATURES), label 1 with probability 0.25; every 10th
    query has no relevant document."""
    rng = np.random.default_rng(seed)
    m = n_queries * DOCS_PER_QUERY
    qid = np.repeat(np.arange(1, n_queries + 1), DOCS_PER_QUERY)
    labels = (rng.random(m) < 0.25).astype(int)
    labels[(qid % 10) == 0] = 0
    block = N_FEATURES // NONZEROS
    columns = 1 + np.arange(NONZEROS) * block + rng.integers(0, block, (m, NONZEROS))
    values = np.round(rng.random((m, NONZEROS)), 4)
    with open(path, "w") as handle:
        for k in range(m):
            features = " ".join(f"{c}:{v:g}" for c, v in zip(columns[k], values[k]))
            handle.write(f"{labels[k]} qid:{qid[k]} {features}\n")


def _without_skipped(X, y, qid):
    from svmmap.core.collection import QueryCollection

    collection = QueryCollection.from_qid(qid)
    relevant = np.bincount(collection.query_of_doc, weights=(y[collection.rows] > 0),
                           minlength=collection.n_queries)
    usable_query = (relevant > 0) & (relevant < collection.sizes)
    keep = np.zeros(len(y), dtype=bool)
    keep[collection.rows] = usable_query[collection.query_of_doc]
    return X[keep], y[keep], qid[keep]


def _reference_tree(revision, workdir):
    tree = Path(workdir) / "reference"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(tree),
                    revision], check=True, capture_output=True)
    subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q"], cwd=tree,
                   check=True, capture_output=True)
    return tree


def _run(tree, *args):
    env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", *args],
                          env=env, capture_output=True, text=True)
    if proc.returncode:
        return {"error": proc.stderr.strip().splitlines()[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- large files: the streaming reader and training against svm_rank -------------------------

LARGE_FEATURES = 136


def letor_like_file(path, n_docs, n_features=LARGE_FEATURES, docs_per_query=100, seed=0):
    """A LETOR-shaped SVMlight file written at disk speed: every line the same template
    (``<label> qid:<6 digits> 1:0.dddddd ... 136:0.dddddd``) with random digits, labels
    0, 0, 0, 1, 2 equally likely."""
    rng = np.random.default_rng(seed)
    template = ("0 qid:100000" + "".join(f" {j}:0.######" for j in range(1, n_features + 1))
                + "\n").encode()
    digits = np.flatnonzero(np.frombuffer(template, dtype=np.uint8) == ord("#"))
    line = np.frombuffer(template.replace(b"#", b"0"), dtype=np.uint8)
    qid_digits = np.arange(len("0 qid:"), len("0 qid:100000"))
    with open(path, "wb") as out:
        for start in range(0, n_docs, 10_000):
            n = min(10_000, n_docs - start)
            rows = np.tile(line, (n, 1))
            rows[:, digits] = rng.integers(48, 58, (n, len(digits)), dtype=np.uint8)
            rows[:, 0] = 48 + rng.choice([0, 0, 0, 1, 2], size=n)
            qids = 100_000 + (start + np.arange(n)) // docs_per_query
            rows[:, qid_digits] = np.array([list(str(q).encode()) for q in qids],
                                           dtype=np.uint8)
            out.write(rows.tobytes())


_READ_PEAK = """\
import json, sys
import numpy as np
from svmmap.data.io import read_svmlight

def status(key):  # this process's own (ru_maxrss would start from the forking parent's)
    lines = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
    return int(lines[key].split()[0]) * 1024

before = status("VmRSS")
X, y, qid = read_svmlight(sys.argv[1], dtype=sys.argv[2])
dense = isinstance(X, np.ndarray)
arrays = (X.nbytes if dense else X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) + \
    y.nbytes + qid.nbytes
print(json.dumps({"arrays": arrays, "growth": status("VmHWM") - before,
                  "layout": "dense" if dense else "csr"}))
"""


def _peak_rss(command, env):
    """(peak RSS in bytes by /usr/bin/time -f %M, seconds) of a command."""
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *command], env=env,
                          capture_output=True, text=True, check=True)
    return int(done.stderr.strip().splitlines()[-1]) * 1024, time.perf_counter() - start


def large(args):
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / f"letor_like_{args.docs}.txt"
    if not path.exists():
        letor_like_file(path, args.docs)
    gz = Path(f"{path}.gz")
    if not gz.exists():
        subprocess.run(f"gzip -1 -c {path} > {gz}", shell=True, check=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    rows = []
    # the file, then the file with a last line that breaks its pattern (a gap: the rows read
    # dense are made CSR at that line), piped to standard input
    breaking = f"cat {shlex.quote(str(path))} - <<< '0 qid:999999 1:0.5 3:0.25' | "
    for source, shell in ((path, ""), (gz, ""), (Path("stdin: file + breaking line"),
                                                 breaking)):
        for dtype in ("float64", "float32"):
            if shell:
                out = subprocess.run(["bash", "-c", f"{shell}{sys.executable} -c "
                                      f"{shlex.quote(_READ_PEAK)} - {dtype}"], env=env,
                                     cwd=workdir,
                                     capture_output=True, text=True, check=True).stdout
            else:
                out = subprocess.run([sys.executable, "-c", _READ_PEAK, str(source), dtype],
                                     env=env, cwd=workdir, capture_output=True, text=True,
                                     check=True).stdout
            result = json.loads(out)
            rows.append({"kind": "reader", "file": source.name, "dtype": dtype, **result,
                         "ratio": result["growth"] / result["arrays"]})
            print(rows[-1], flush=True)
    learn = shutil.which("svmmap_learn")
    commands = [("svmmap_learn -c 1", [learn, "-c", "1", "-v", "0", str(path),
                                       str(workdir / "m64.json")]),
                ("svmmap_learn -c 1 --dtype float32",
                 [learn, "-c", "1", "-v", "0", "--dtype", "float32", str(path),
                  str(workdir / "m32.json")])]
    if args.svm_rank:
        commands.append(("svm_rank_learn -c 0.01", [args.svm_rank, "-c", "0.01", "-v", "0",
                                                     str(path), str(workdir / "rank.model")]))
    for name, command in commands:
        peak, seconds = _peak_rss(command, env)
        rows.append({"kind": "train", "command": name, "peak_rss": peak, "seconds": seconds})
        print(rows[-1], flush=True)
    size = path.stat().st_size
    lines = [f"File: {args.docs} documents x {LARGE_FEATURES} features, {size / 1e9:.2f} GB "
             f"of text ({gz.stat().st_size / 1e9:.2f} GB gzip -1).", "",
             "### Reader (read_svmlight, as the commands read): peak RSS growth / arrays "
             "returned", "",
             "| file | dtype | layout | arrays GB | peak growth GB | ratio |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        if r["kind"] == "reader":
            lines.append(f"| {r['file']} | {r['dtype']} | {r['layout']} | "
                         f"{r['arrays'] / 1e9:.3f} | {r['growth'] / 1e9:.3f} | "
                         f"{r['ratio']:.3f} |")
    lines += ["", "### Training: peak RSS (/usr/bin/time -f %M)", "",
              "| command | peak GB | wall s | / svm_rank |", "|---|---|---|---|"]
    peaks = {r["command"]: r["peak_rss"] for r in rows if r["kind"] == "train"}
    rank = peaks.get("svm_rank_learn -c 0.01")
    for r in rows:
        if r["kind"] == "train":
            ratio = f"{r['peak_rss'] / rank:.2f}" if rank else "-"
            lines.append(f"| `{r['command']}` | {r['peak_rss'] / 1e9:.3f} | "
                         f"{r['seconds']:.1f} | {ratio} |")
    command = f"python benchmarks/memory.py --large --docs {args.docs}" + \
        (" --svm-rank PATH" if args.svm_rank else "")
    record(f"memory_large_{args.docs}", command, rows, "\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reference", default="9dc56a3")
    parser.add_argument("--queries", type=int, default=3000)
    parser.add_argument("--child", choices=["reader", "train"])
    parser.add_argument("--path")
    parser.add_argument("--layout", choices=["dense", "csr"])
    parser.add_argument("--algorithm")
    parser.add_argument("--max-iter", type=int, default=0)
    parser.add_argument("--large", action="store_true")
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--workdir", default=tempfile.gettempdir())
    parser.add_argument("--svm-rank", default=None, metavar="PATH")
    args = parser.parse_args()
    if args.child:
        return child(args)
    if args.large:
        return large(args)

    from svmmap import load_svmlight

    mq2008 = require_data("MQ2008", "Fold1", "train.txt")
    with tempfile.TemporaryDirectory() as workdir:
        work = Path(workdir)
        synthetic = work / "synthetic.txt"
        _synthetic_file(synthetic, args.queries)
        for name, path in (("mq2008", mq2008), ("synthetic", synthetic)):
            X, y, qid = load_svmlight(path)
            _save_npz(work / f"{name}_skipped.npz", X, y, qid)
            _save_npz(work / f"{name}_none_skipped.npz", *_without_skipped(X, y, qid))
        trees = {"this tree": ROOT, f"reference {args.reference}":
                 _reference_tree(args.reference, workdir)}
        cases = [("reader", "MQ2008 Fold1 train.txt", ["reader", "--path", str(mq2008)]),
                 ("reader", f"synthetic ({synthetic.stat().st_size / 1e6:.0f} MB)",
                  ["reader", "--path", str(synthetic)])]
        for skipped in ("skipped", "none_skipped"):
            for layout in ("dense", "csr"):
                for algorithm in ("1-slack", "n-slack"):
                    cases.append(("train", f"MQ2008 {layout} {algorithm} {skipped}",
                                  ["train", "--path", str(work / f"mq2008_{skipped}.npz"),
                                   "--layout", layout, "--algorithm", algorithm]))
            cases.append(("train", f"synthetic 10^5 features csr 1-slack {skipped}",
                          ["train", "--path", str(work / f"synthetic_{skipped}.npz"),
                           "--layout", "csr", "--algorithm", "1-slack", "--max-iter", "8"]))
        rows = []
        for kind, label, child_args in cases:
            row = {"kind": kind, "case": label}
            for tree_name, tree in trees.items():
                row[tree_name] = _run(tree, *child_args)
                print(label, tree_name, row[tree_name], flush=True)
            rows.append(row)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                        str(work / "reference")], capture_output=True)
    _report(args, rows, list(trees))


def _report(args, rows, trees):
    this, reference = trees
    lines = ["### Reader: peak traced / output arrays (X, y, qid)", "",
             f"| file | {this} | {reference} |", "|---|---|---|"]
    for row in rows:
        if row["kind"] == "reader":
            lines.append(f"| {row['case']} | {row[this]['traced_ratio']:.2f} | "
                         f"{row[reference]['traced_ratio']:.2f} |")
    lines += ["", "### Training: (X + growth) / X, traced and RSS (ru_maxrss)", "",
              f"| case | X MB | {this}: traced | RSS | {reference}: traced | RSS | "
              f"traced growth ratio (reference / this) |", "|---|---|---|---|---|---|---|"]

    def cell(result, key):
        return f"{result[key]:.2f}" if key in result else result.get("error", "?")

    for row in rows:
        if row["kind"] != "train":
            continue
        new, old = row[this], row[reference]
        x_mb = new.get("X_bytes", 0) / 1e6
        ratio = "?"
        if "traced_peak" in new and "traced_peak" in old:
            ratio = f"{old['traced_peak'] / max(new['traced_peak'], 1):.1f}"
        lines.append(f"| {row['case']} | {x_mb:.1f} | {cell(new, 'traced_ratio')} | "
                     f"{cell(new, 'rss_ratio')} | {cell(old, 'traced_ratio')} | "
                     f"{cell(old, 'rss_ratio')} | {ratio} |")
    record("memory", f"python benchmarks/memory.py --reference {args.reference} "
           f"--queries {args.queries}", rows, "\n".join(lines))


if __name__ == "__main__":
    main()
