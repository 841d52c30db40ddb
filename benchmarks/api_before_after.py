"""Issue 13 (estimator API, model files, vocabulary): the same training before and after, in
one run, on OHSUMED Fold1.

``--before DIR`` is a checkout of the code before the change with its extensions built (e.g.
``git archive <commit> | tar -x -C DIR`` and the ``.so`` files copied in); the code after is
this repository.  Each side runs in its own interpreter (``PYTHONPATH``), alternating, so both
see the same machine state:

* ``svmmap_learn -c 100 train.txt model`` end to end (reading, validation, training, writing
  the model file), median wall seconds of ``--repeats`` runs, and its ratio after/before;
* the import of what the command imports to train (``import svmmap.estimator``; after the
  change it pulls in scikit-learn), median wall seconds, and the end-to-end time less it;
* the test MAP of the model it writes (scored by svmmap_classify), and of AdaRank.MAP,
  AdaRank.NDCG, RankBoost and PRank fitted through the Python API with default parameters
  (the API's names differ between the sides only where issue 13 renamed them), which must be
  identical.

    python benchmarks/api_before_after.py --before /tmp/old [--repeats 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, record, require_data

IMPORT = "import svmmap.estimator"

LEARN = """
import sys
try:
    from svmmap.commands.learn import learn_main
except ImportError:  # a revision before issue 24 (svmmap.cli)
    from svmmap.cli import learn_main
sys.exit(learn_main(['-v', '0', '-c', '100', sys.argv[1], sys.argv[2]]))
"""

SCORE = """
import json, sys, warnings
import numpy as np
from svmmap import load_svmlight, metrics
from svmmap.baselines import AdaRank, PRank, RankBoost
import svmmap
train, test, model_file = sys.argv[1:4]
X, y, qid = load_svmlight(train)
Xt, yt, qt = load_svmlight(test, n_features=X.shape[1])
load = getattr(svmmap, "load_model", None) or __import__(
    "svmmap.baselines", fromlist=["load_model"]).load_model
out = {"SVM-MAP (svmmap_learn -c 100)": metrics.mean_average_precision(
    load(model_file).decision_function(Xt, qt), yt, qt)}
new = "loss" in AdaRank().get_params()
fits = {"AdaRank.MAP": AdaRank(**({"loss": "map"} if new else {"measure": "map"})),
        "AdaRank.NDCG": AdaRank(**({"loss": "ndcg"} if new else {"measure": "ndcg"})),
        "RankBoost": RankBoost(), "PRank": PRank()}
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for name, model in fits.items():
        model.fit(X, y, qid)
        out[name] = metrics.mean_average_precision(model.decision_function(Xt), yt, qt)
print(json.dumps(out))
"""


def run(code, pythonpath, *args):
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{pythonpath}: {proc.stderr}")
    return time.perf_counter() - start, proc.stdout


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    base = require_data("OHSUMED", "Fold1")
    sides = {"before": args.before.resolve(), "after": ROOT}
    seconds = {side: [] for side in sides}
    imports = {side: [] for side in sides}
    with tempfile.TemporaryDirectory() as tmp:
        models = {side: Path(tmp) / f"{side}.json" for side in sides}
        for _ in range(args.repeats):
            for side, path in sides.items():
                seconds[side].append(run(LEARN, path, base / "train.txt", models[side])[0])
                imports[side].append(run(IMPORT, path)[0])
        maps = {side: json.loads(run(SCORE, path, base / "train.txt", base / "test.txt",
                                     models[side])[1]) for side, path in sides.items()}
    median = {side: statistics.median(values) for side, values in seconds.items()}
    load = {side: statistics.median(values) for side, values in imports.items()}
    rest = {side: median[side] - load[side] for side in sides}
    rows = [{"what": "svmmap_learn -c 100, median seconds", **median,
             "ratio": median["after"] / median["before"]},
            {"what": "import svmmap.estimator, median seconds", **load,
             "ratio": load["after"] / load["before"]},
            {"what": "svmmap_learn -c 100 less the import, seconds", **rest,
             "ratio": rest["after"] / rest["before"]}]
    rows += [{"what": f"test MAP, {name}", "before": maps["before"][name],
              "after": maps["after"][name],
              "identical_to_4_decimals": round(maps["before"][name], 4)
              == round(maps["after"][name], 4)} for name in maps["after"]]
    lines = ["| | before | after | after / before or identical |", "|---|---|---|---|"]
    for row in rows[:3]:
        lines.append(f"| {row['what']} (OHSUMED Fold1, {args.repeats} runs) | "
                     f"{row['before']:.2f} | {row['after']:.2f} | {row['ratio']:.3f} |")
    for row in rows[3:]:
        lines.append(f"| {row['what']} | {row['before']:.4f} | {row['after']:.4f} | "
                     f"{'yes' if row['identical_to_4_decimals'] else 'NO'} |")
    command = "python benchmarks/api_before_after.py " + " ".join(argv or sys.argv[1:])
    record("api_before_after", command, rows, "\n".join(lines))


if __name__ == "__main__":
    main()
