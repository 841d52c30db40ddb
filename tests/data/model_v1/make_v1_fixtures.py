"""Writes the version-1 model files of this directory with the code of commit accc7eb (the
last one writing version 1): ``git archive accc7eb | tar -x -C old``, copy the built
extensions in, then ``PYTHONPATH=old python make_v1_fixtures.py``.  The scores each model
gave then are kept in ``scores.json``; tests/input_output/test_model_files.py loads every
file with today's code and checks it gives the same scores."""

import json
import warnings
from pathlib import Path

import numpy as np

from svmmap import SVMMap, load_svmlight
from svmmap.baselines import AdaRank, PRank, RankBoost
from svmmap.features import BinnedFeatureMap

HERE = Path(__file__).parent
rng = np.random.default_rng(13)
lines = []
for q in range(1, 7):
    for _ in range(8):
        x = rng.normal(size=4)
        grade = int(x[0] + 0.5 * x[1] + rng.normal(scale=0.5) > 0.3) * int(rng.integers(1, 3))
        lines.append(f"{grade} qid:{q} " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(x)))
(HERE / "train.txt").write_text("\n".join(lines) + "\n")
X, y, qid = load_svmlight(HERE / "train.txt")

models = {
    "svmmap": SVMMap(C=10, algorithm="n-slack"),
    "svmmap_binned": SVMMap(C=1, loss="acc", cost_ratio="balanced",
                            features=BinnedFeatureMap(5, columns=[0, 2], per_query="minmax")),
    "adarank": AdaRank(measure="ndcg", k=5, max_rounds=6),
    "rankboost": RankBoost(n_rounds=8, n_thresholds=4),
    "prank": PRank(n_epochs=3),
}
scores = {}
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for name, model in models.items():
        model.fit(X, y, qid)
        model.save(HERE / f"{name}.json")
        scores[name] = [float(s) for s in (model.decision_function(X, qid) if name.startswith(
            "svmmap") else model.decision_function(X))]
(HERE / "scores.json").write_text(json.dumps(scores, indent=1) + "\n")
