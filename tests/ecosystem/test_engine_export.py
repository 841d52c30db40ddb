"""Exported models scored as the engines score them (svmmap.export, svmmap.core.normalize).

Each ``*_engine`` below is this project's own rewrite of a parser's rules, read from the
engines' code (nothing of theirs is copied):

* LTR plugin (o19s elasticsearch-learning-to-rank, OpenSearch's fork): ``LinearRankerParser``
  -- every name of ``definition`` must be a feature of the set ("Feature [x] is unknown"),
  each value a number read as a float32, features without a weight weigh 0; ``LinearRanker``
  sums weight * value in float32 in the set's order; ``feature_normalizers`` name features of
  the set, one normaliser each: ``standard`` (mean, standard_deviation > 0) gives
  (v - mean) / sd, ``min_max`` (0 <= minimum < maximum) gives (v - min) / (max - min), all in
  float32.
* Solr LTR: ``LinearModel`` -- every feature of the model needs a weight ("lacks weight(s)
  for"), weights read as float32, score summed in float32; ``StandardNormalizer`` (avg, std >
  0) and ``MinMaxNormalizer`` (min, max, max - min != 0), their params parsed with
  Float.parseFloat, normalise in float32.
* RankLib's ``LinearRegRank``: ids parsed with Integer.parseInt, id 0 the constant, double
  arithmetic over float32 feature values.
* Vespa: the ranking expression evaluated in double.

The engine's score must equal ``decision_function`` up to float32 (double for RankLib and
Vespa), for every normaliser, on dense and DataFrame input, and the exporter must refuse what
an engine would refuse.
"""

import ast
import json
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

from svmmap import SVMMap, load_svmlight
from svmmap.core.normalize import per_query_normalized
from svmmap.errors import InputFormatError
from svmmap.export import main as export_main
from svmmap.export import (
    to_ltr_linear,
    to_ranklib_linear,
    to_solr_linear,
    to_vespa_profile,
)

from conftest import random_collection

f32 = np.float32


class EngineRefused(Exception):
    """What the engine's parser would reject."""


def ltr_engine(body, feature_set, values):
    """Scores of the LTR plugin's model/linear over ``feature_set`` (names in set order) for
    the rows of ``values`` (the feature values, float32 as Lucene gives them)."""
    spec = body["model"]["model"]
    if spec["type"] != "model/linear":
        raise EngineRefused(spec["type"])
    definition = spec["definition"]
    if isinstance(definition, str):
        definition = json.loads(definition)
    ordinal = {name: j for j, name in enumerate(feature_set)}
    weights = np.zeros(len(feature_set), dtype=f32)
    for name, weight in definition.items():
        if name not in ordinal:
            raise EngineRefused(f"Feature [{name}] is unknown.")
        if isinstance(weight, bool) or not isinstance(weight, (int, float)):
            raise EngineRefused("Expected a float")
        weights[ordinal[name]] = f32(weight)
    z = values.astype(f32)
    for name, norm in spec.get("feature_normalizers", {}).items():
        if name not in ordinal:
            raise EngineRefused(f"Feature {name} not found in feature set")
        if len(norm) != 1:
            raise EngineRefused("Multiple feature normalizers detected")
        (kind, params), = norm.items()
        j = ordinal[name]
        if kind == "standard":
            mean, sd = f32(params["mean"]), f32(params["standard_deviation"])
            if not sd > 0:
                raise EngineRefused("Standard Deviation Must Be Positive")
            z[:, j] = (z[:, j] - mean) / sd
        elif kind == "min_max":
            low, high = f32(params["minimum"]), f32(params["maximum"])
            if low < 0 or high < 0 or not low < high:
                raise EngineRefused("min_max needs 0 <= minimum < maximum")
            z[:, j] = (z[:, j] - low) / (high - low)
        else:
            raise EngineRefused(kind)
    score = np.zeros(len(z), dtype=f32)
    for j in range(len(feature_set)):
        score = f32(score + weights[j] * z[:, j])
    return score


SOLR_NORM = "org.apache.solr.ltr.norm."


def solr_engine(model, store_features, values):
    """Scores of Solr LTR's LinearModel; ``store_features`` the feature store's names and
    ``values`` their float32 values (one column per store feature)."""
    if model["class"] != "org.apache.solr.ltr.model.LinearModel":
        raise EngineRefused(model["class"])
    column = {name: j for j, name in enumerate(store_features)}
    weights = model["params"]["weights"]
    missing = [f["name"] for f in model["features"] if f["name"] not in weights]
    if len(missing) == len(model["features"]):
        raise EngineRefused("doesn't contain any weights")
    if missing:
        raise EngineRefused(f"lacks weight(s) for {missing}")
    score = np.zeros(len(values), dtype=f32)
    for feature in model["features"]:
        if feature["name"] not in column:
            raise EngineRefused(f"feature {feature['name']} not in store")
        v = values[:, column[feature["name"]]].astype(f32)
        norm = feature.get("norm", {"class": SOLR_NORM + "IdentityNormalizer"})
        params = {k: f32(float(p)) for k, p in norm.get("params", {}).items()}
        if norm["class"] == SOLR_NORM + "StandardNormalizer":
            avg, std = params.get("avg", f32(0)), params.get("std", f32(1))
            if not std > 0:
                raise EngineRefused("standard deviation must be positive")
            v = (v - avg) / std
        elif norm["class"] == SOLR_NORM + "MinMaxNormalizer":
            delta = f32(params["max"] - params["min"])
            if delta == 0:
                raise EngineRefused("MinMax Normalizer delta must not be zero")
            v = (v - params["min"]) / delta
        elif norm["class"] != SOLR_NORM + "IdentityNormalizer":
            raise EngineRefused(norm["class"])
        score = f32(score + v * f32(weights[feature["name"]]))
    return score


def ranklib_engine(text, values):
    """RankLib's LinearRegRank: the first non-'##' line, ids by Integer.parseInt."""
    line = next(t.strip() for t in text.splitlines() if t.strip() and
                not t.strip().startswith("##"))
    constant, score = 0.0, np.zeros(len(values))
    for pair in line.split():
        key, value = pair.split(":", 1)
        if not re.fullmatch(r"[+-]?[0-9]+", key):
            raise EngineRefused(f"NumberFormatException: For input string: {key!r}")
        fid = int(key)
        if fid == 0:
            constant = float(value)
        else:
            score += float(value) * values[:, fid - 1].astype(f32).astype(np.float64)
    return constant + score


#: Vespa's ranking-expression tokens for numbers (its RankingExpressionParser.jj: FLOAT is
#: digits, an optional fraction, an optional exponent; a sign is a separate SUB token)
VESPA_NUMBER = re.compile(r"[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?")


def vespa_engine(profile, rank_features, values):
    """The first-phase expression, evaluated in double with each rank feature's value; its
    numbers must be Vespa's number tokens and no operator may be followed by a sign."""
    expression = re.search(r"expression: (.*)\n", profile).group(1)
    for name, feature in sorted(rank_features.items(), key=lambda kv: -len(kv[1])):
        expression = expression.replace(feature, f"v[{list(rank_features).index(name)}]")
    tokens = re.findall(r"v\[\d+\]|[0-9.eE+-]+|[()*/+-]", expression)
    assert "".join(tokens) == expression.replace(" ", ""), expression
    for token in re.findall(r"(?<![v\[])\b[0-9][0-9.eE+-]*", expression):
        if not VESPA_NUMBER.fullmatch(token):
            raise EngineRefused(f"not a Vespa number: {token!r}")
    if re.search(r"[-+*/]\s*[-+]", expression):
        raise EngineRefused("an operator followed by a sign")
    tree = ast.parse(expression, mode="eval")
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Add, ast.Sub, ast.Mult, ast.Div,
               ast.USub, ast.Constant, ast.Subscript, ast.Name, ast.Load, ast.Index)
    assert all(isinstance(node, allowed) for node in ast.walk(tree)), expression
    code = compile(tree, "vespa", "eval")
    return np.array([eval(code, {"v": row}) for row in values.astype(np.float64)])


def _data(seed=11, n_features=5, negative=True):
    X, y, qid = random_collection(seed, n_queries=16, n_features=n_features)
    X = X * np.array([1.0, 30.0, 0.01, 2.0, 5.0][:n_features]) + \
        np.array([0.5, 100.0, 0.0, 1.0, 7.0][:n_features])
    X[:, 3] = 2.0  # a constant feature
    if not negative:
        X = np.abs(X)
    return X, y, qid


def _close(engine, model, X, intercept=0.0):
    """Engine scores equal decision_function up to float32: the error bound is a few float32
    ulps of the sum of |weight * z| (and of the inputs' float32 rounding)."""
    expected = model.decision_function(X) - intercept
    z = model.normalizer_.transform(X) if model.normalizer_ is not None else X
    bound = 1e-5 * (np.abs(z * model.coef_).sum(axis=1) + np.abs(z).sum(axis=1)
                    * np.abs(model.coef_).max() + 1.0)
    assert np.all(np.abs(engine - expected) <= bound), np.abs(engine - expected).max()
    return True


NAMES = ["bm25_body", "tfidf_title", "pagerank", "const", "url_len"]


@pytest.mark.parametrize("normalize", [None, "standard", "minmax"])
@pytest.mark.parametrize("loss", ["map", "ndcg@5", "acc"])
def test_engines_score_as_the_model(normalize, loss):
    pd = pytest.importorskip("pandas")
    X, y, qid = _data(negative=normalize != "minmax")
    frame = pd.DataFrame(X, columns=NAMES)
    model = SVMMap(C=10.0, loss=loss, normalize=normalize).fit(frame, y, qid)
    Xt, _, _ = _data(seed=12, negative=normalize != "minmax")
    Xt = pd.DataFrame(Xt, columns=NAMES)
    values = Xt.to_numpy()
    feature_set = NAMES[::-1] + ["unused_feature"]  # another order, a feature not in the model
    in_set = np.column_stack([values[:, NAMES.index(n)] if n in NAMES else np.ones(len(values))
                              for n in feature_set])
    body = json.loads(json.dumps(to_ltr_linear(model, name="m")))
    assert ("feature_normalizers" in body["model"]["model"]) == (normalize is not None)
    intercept = model.intercept_  # engines without an intercept leave it out
    assert _close(ltr_engine(body, feature_set, in_set), model, Xt, intercept)
    solr = json.loads(json.dumps(to_solr_linear(model, name="m", store="ltr_store")))
    assert solr["store"] == "ltr_store" and [f["name"] for f in solr["features"]] == NAMES
    assert _close(solr_engine(solr, feature_set, in_set), model, Xt, intercept)
    ranklib = ranklib_engine(to_ranklib_linear(model), values)  # double over float32 values
    np.testing.assert_allclose(ranklib, model.decision_function(
        pd.DataFrame(values.astype(f32).astype(np.float64), columns=NAMES)),
        rtol=1e-9, atol=1e-9)
    rank_features = {n: f"attribute({n})" for n in NAMES}
    rank_features["bm25_body"] = "bm25(body)"
    vespa = vespa_engine(to_vespa_profile(model, rank_features), rank_features, values)
    np.testing.assert_allclose(vespa, model.decision_function(Xt), rtol=1e-12, atol=1e-12)


def test_the_engine_rules_refuse_what_the_parsers_refuse():
    """The rewritten rules are not vacuous: what the parsers reject, they reject."""
    values = np.ones((2, 2))
    with pytest.raises(EngineRefused, match="unknown"):
        ltr_engine({"model": {"model": {"type": "model/linear",
                                        "definition": {"x": 1.0}}}}, ["a", "b"], values)
    with pytest.raises(EngineRefused, match="Positive"):
        ltr_engine({"model": {"model": {"type": "model/linear", "definition": {"a": 1.0},
                                        "feature_normalizers": {"a": {"standard": {
                                            "mean": 0, "standard_deviation": 0}}}}}},
                   ["a", "b"], values)
    with pytest.raises(EngineRefused, match="lacks weight"):
        solr_engine({"class": "org.apache.solr.ltr.model.LinearModel",
                     "features": [{"name": "a"}, {"name": "b"}],
                     "params": {"weights": {"a": 1.0}}}, ["a", "b"], values)
    with pytest.raises(EngineRefused, match="NumberFormat"):  # the old export's names
        ranklib_engine("## Linear Regression\n0:0.0 bm25:1.0\n", values)
    # weights are float32 on the engine side
    body = {"model": {"model": {"type": "model/linear", "definition": {"a": 0.1}}}}
    assert ltr_engine(body, ["a"], np.ones((1, 1)))[0] == f32(0.1)


def test_export_refuses_what_an_engine_would_refuse(tmp_path):
    X, y, qid = _data(negative=True)
    model = SVMMap(C=1.0, normalize="minmax").fit(X, y, qid)
    with pytest.raises(InputFormatError, match="min_max normaliser needs 0 <= minimum"):
        to_ltr_linear(model)
    solr = to_solr_linear(model)  # Solr's MinMaxNormalizer takes any non-empty range
    assert _close(solr_engine(solr, [str(j) for j in range(1, 6)], X), model, X)
    with pytest.raises(InputFormatError, match="missing"):
        to_vespa_profile(model, {"1": "attribute(a)"})
    # a constant feature: scale 1, accepted by both normalisers of both engines
    assert model.normalizer_.scale[3] == 1.0


def test_per_query_normalized_training_data_warns(tmp_path):
    X, y, qid = random_collection(13, n_queries=10, n_features=4)
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    low = np.minimum.reduceat(X, starts)[np.searchsorted(starts, np.arange(len(X)), "right") - 1]
    high = np.maximum.reduceat(X, starts)[np.searchsorted(starts, np.arange(len(X)),
                                                          "right") - 1]
    Xq = (X - low) / (high - low)  # LETOR's QueryLevelNorm
    ptr = np.r_[starts, len(X)]
    assert per_query_normalized(Xq, ptr) and not per_query_normalized(X, ptr)
    model = SVMMap(C=1.0).fit(Xq, y, qid)
    assert model.per_query_normalized_
    model.save(tmp_path / "m.json")
    with pytest.warns(UserWarning, match="normalised within each query"):
        to_ltr_linear(tmp_path / "m.json")
    proc = subprocess.run([sys.executable, "-m", "svmmap.export", "--format", "solr",
                           str(tmp_path / "m.json"), str(tmp_path / "solr.json")],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "warning: the training data looks normalised" in proc.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        to_ltr_linear(SVMMap(C=1.0).fit(X, y, qid))  # global data: no warning


def test_command_exports_every_format_from_a_normalised_model(tmp_path):
    """svmmap_learn --normalize standard, then every format of python -m svmmap.export."""
    data = tmp_path / "train.txt"
    X, y, qid = _data(negative=True)
    data.write_text("".join(f"{int(label)} qid:{q} " + " ".join(
        f"{j + 1}:{float(v)!r}" for j, v in enumerate(row)) + "\n"
        for label, q, row in zip(y, qid, X)))
    model_path = tmp_path / "model.json"
    proc = subprocess.run(["svmmap_learn", "-v", "0", "--normalize", "standard", "-c", "5",
                           str(data), str(model_path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    model = SVMMap.load(model_path)
    assert model.normalize == "standard" and model.normalizer_ is not None
    Xr, _, _ = load_svmlight(data)
    np.testing.assert_allclose(model.normalizer_.shift, Xr.toarray().mean(axis=0))
    (tmp_path / "names.txt").write_text("\n".join(NAMES) + "\n")
    (tmp_path / "vespa.txt").write_text("".join(f"{n} attribute({n})\n" for n in NAMES))
    for fmt in ("ltr", "solr", "vespa", "ranklib"):
        options = ["--format", fmt, "--feature-names", str(tmp_path / "names.txt"),
                   "--rank-features", str(tmp_path / "vespa.txt"), str(model_path),
                   str(tmp_path / f"out.{fmt}")]
        if fmt == "ltr":  # the command once; the other formats through its main, in-process
            proc = subprocess.run([sys.executable, "-m", "svmmap.export", *options],
                                  capture_output=True, text=True)
            assert proc.returncode == 0, proc.stderr
        else:
            assert export_main(options) == 0
    assert _close(ltr_engine(json.loads((tmp_path / "out.ltr").read_text()), NAMES, X),
                  model, X)
    assert _close(solr_engine(json.loads((tmp_path / "out.solr").read_text()), NAMES, X),
                  model, X)
    np.testing.assert_allclose(ranklib_engine((tmp_path / "out.ranklib").read_text(), X),
                               model.decision_function(X.astype(f32).astype(np.float64)),
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(
        vespa_engine((tmp_path / "out.vespa").read_text(),
                     {n: f"attribute({n})" for n in NAMES}, X),
        model.decision_function(X), rtol=1e-12, atol=1e-12)
