"""Wall time and peak RSS of ``svmmap_learn -c 1`` on a large LETOR-shaped file (10^6 x 136 by
default, 1.67 GB of text): this tree against a reference checkout (its extensions built), the
two run alternately, each in a process of its own with svmmap's modules from the bytecode
cache, as an installed package runs.

    python benchmarks/large_training.py --reference CHECKOUT [--docs 1000000] [--rounds 2]
        [--workdir DIR] [--dtype float64] [--name NAME]

The issue-23 "no regression" check of the 10^6-document time: the ratio of the two median
wall times and the median of the rounds' own ratios (each round runs this tree, then the
reference: a drift of the machine's speed between rounds cancels in a round's ratio; below
1 = this tree faster), and each version's peak RSS (/usr/bin/time -f %M).  Results go to
results/large_training_DOCS[_DTYPE].md, or NAME.md with ``--name``.
"""

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _common import ROOT, record
from memory import letor_like_file

_LEARN = ("import sys\nfrom svmmap.commands.console import learn_main\n"
          "sys.argv = ['svmmap_learn', *sys.argv[1:]]\nsys.exit(learn_main())")


def run(tree, argv, env, workdir):
    """(seconds, peak RSS bytes) of one svmmap_learn run from ``tree`` (started in
    ``workdir``: ``python -c`` puts its working directory first on the path)."""
    done = subprocess.run(["/usr/bin/time", "-f", "%e %M", sys.executable, "-c", _LEARN, *argv],
                          env=dict(env, PYTHONPATH=str(tree)), cwd=workdir,
                          capture_output=True, text=True, check=True)
    seconds, kb = done.stderr.strip().splitlines()[-1].split()
    return float(seconds), int(kb) * 1024


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reference", required=True, help="checkout with built extensions")
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workdir", default="/tmp")
    parser.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    parser.add_argument("--name", default=None,
                        help="results/<name>.md and .json (default large_training_DOCS, "
                             "with _DTYPE for float32)")
    args = parser.parse_args(argv)
    path = Path(args.workdir) / f"letor_like_{args.docs}.txt"
    if not path.exists():
        letor_like_file(path, args.docs)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    trees = {"this tree": ROOT, "reference": Path(args.reference)}
    results = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            argv = ["-c", "1", "-v", "0", str(path), str(Path(args.workdir) / "large.json")]
            if args.dtype != "float64":  # the reference must have the option too
                argv[:0] = ["--dtype", args.dtype]
            results[name].append(run(tree, argv, env, args.workdir))
            print(name, results[name][-1], flush=True)
    lines = [f"File: {args.docs} documents x 136 features, {path.stat().st_size / 1e9:.2f} GB "
             f"of text; `svmmap_learn -c 1` ({args.dtype}), {args.rounds} alternating rounds.",
             "", "| version | wall s (runs) | peak RSS GB (largest) |", "|---|---|---|"]
    for name, runs in results.items():
        if runs:
            lines.append(f"| {name} | {', '.join(f'{s:.1f}' for s, _ in runs)} | "
                         f"{max(p for _, p in runs) / 1e9:.2f} |")
    if results["reference"]:
        ratio = statistics.median(s for s, _ in results["this tree"]) / \
            statistics.median(s for s, _ in results["reference"])
        per_round = statistics.median(
            ours / theirs for (ours, _), (theirs, _) in zip(results["this tree"],
                                                            results["reference"]))
        lines += ["", f"this tree / reference, median wall time: {ratio:.2f}; median of the "
                      f"rounds' ratios: {per_round:.2f}"]
    name = args.name or f"large_training_{args.docs}" + (
        "" if args.dtype == "float64" else f"_{args.dtype}")
    record(name,
           f"python benchmarks/large_training.py --reference CHECKOUT --docs {args.docs} "
           f"--rounds {args.rounds} --dtype {args.dtype}"
           + (f" --name {args.name}" if args.name else ""),
           {k: [list(r) for r in v] for k, v in results.items()}, "\n".join(lines))


if __name__ == "__main__":
    main()
