"""Export to search engines (svmmap.export), checked by re-scoring with what was written:
an independent reader of each format scores the test documents and must rank exactly as the
model does."""

import json
import subprocess
import sys

import numpy as np
import pytest

from svmmap import SVMMap
from svmmap.baselines import PRank, RankBoost
from svmmap.errors import ModelFileError
from svmmap.export import EXPORT_FORMATS, export, to_ltr_linear, to_ranklib_linear
from svmmap.features import BinnedFeatureMap

from conftest import random_collection


def feature_order_sums(X, w):
    """sum_j w_j x_j added in feature order in float64, as the LTR plugin's and RankLib's
    loops add (and svmmap scores: svmmap.kernels._csr.scores)."""
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    total = np.zeros(X.shape[0])
    for j in range(X.shape[1]):
        total += X[:, j] * w[j]
    return total


def ltr_scores(body, X, names):
    """The LTR plugin's model/linear: sum over the feature set of weight[name] * value."""
    model = body["model"]["model"]
    assert model["type"] == "model/linear"
    definition = model["definition"]
    if isinstance(definition, str):
        definition = json.loads(definition)
    assert set(definition) <= set(names)
    w = np.array([definition.get(name, 0.0) for name in names])
    return feature_order_sums(X, w)


def ranklib_scores(text, X):
    """RankLib's LinearRegRank.loadFromString + eval: skip '##' lines, the first other line is
    'id:weight ...' with integer ids (Integer.parseInt), id 0 the constant term."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    assert lines[0] == "## Linear Regression"
    weights = next(line for line in lines if not line.startswith("##"))
    w, constant = np.zeros(X.shape[1]), 0.0
    for pair in weights.split():
        key, value = pair.rsplit(":", 1)
        if int(key) == 0:
            constant = float(value)
        else:
            w[int(key) - 1] = float(value)
    return feature_order_sums(X, w) + constant


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("export")
    X, y, qid = random_collection(seed=6, n_queries=15)
    model = SVMMap(C=10).fit(X, y, qid)
    model.save(tmp / "m.json")
    return tmp, X, y, qid, model


def test_ltr_json_rescored_equals_the_model(trained):
    tmp, X, _, _, model = trained
    names = [f"f{j}" for j in range(X.shape[1])]
    body = json.loads(json.dumps(to_ltr_linear(tmp / "m.json", names, name="mq")))
    assert body["model"]["name"] == "mq"
    np.testing.assert_array_equal(ltr_scores(body, X, names), model.decision_function(X))


def test_ranklib_rescored_equals_the_model(trained):
    tmp, X, _, _, model = trained
    np.testing.assert_array_equal(ranklib_scores(to_ranklib_linear(model), X),
                                  model.decision_function(X))


def test_dataframe_columns_name_the_features():
    pd = pytest.importorskip("pandas")
    X, y, qid = random_collection(seed=7, n_queries=10, n_features=4)
    frame = pd.DataFrame(X, columns=["bm25", "tf_title", "pagerank", "age"])
    model = SVMMap(C=1).fit(frame, y, qid)
    body = to_ltr_linear(model)
    assert list(body["model"]["model"]["definition"]) == list(frame.columns)
    np.testing.assert_array_equal(ltr_scores(body, X, list(frame.columns)),
                                  model.decision_function(X))
    text = to_ranklib_linear(model)  # RankLib reads integer ids: the names are comments
    assert "## feature 1 = bm25\n" in text and "bm25:" not in text
    np.testing.assert_array_equal(ranklib_scores(text, X), model.decision_function(X))


def test_command_writes_both_formats_from_a_names_file(trained, tmp_path):
    tmp, X, _, _, model = trained
    names = [f"feature_{j}" for j in range(X.shape[1])]
    (tmp_path / "names.txt").write_text("\n".join(names) + "\n")
    for fmt, out in (("ltr", "m_ltr.json"), ("ranklib", "m_ranklib.txt")):
        proc = subprocess.run([sys.executable, "-m", "svmmap.export", "--format", fmt,
                               "--feature-names", str(tmp_path / "names.txt"),
                               str(tmp / "m.json"), str(tmp_path / out)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    body = json.loads((tmp_path / "m_ltr.json").read_text())
    np.testing.assert_array_equal(ltr_scores(body, X, names), model.decision_function(X))
    np.testing.assert_array_equal(
        ranklib_scores((tmp_path / "m_ranklib.txt").read_text(), X),
        model.decision_function(X))


def test_baseline_linear_models_export_and_non_linear_ones_are_refused(tmp_path):
    X, y, qid = random_collection(seed=9, n_queries=10)
    prank = PRank(n_epochs=3).fit(X, y, qid)
    np.testing.assert_array_equal(ranklib_scores(to_ranklib_linear(prank), X),
                                  prank.decision_function(X))
    RankBoost(max_rounds=5).fit(X, y, qid).save(tmp_path / "rb.json")
    with pytest.raises(ModelFileError, match="not a linear function"):
        to_ltr_linear(tmp_path / "rb.json")
    binned = SVMMap(C=1, feature_map=BinnedFeatureMap(5)).fit(X, y, qid)
    with pytest.raises(ModelFileError, match="binned features"):
        to_ranklib_linear(binned)


def test_wrong_number_of_names_is_one_line_error(trained, tmp_path):
    tmp, *_ = trained
    (tmp_path / "names.txt").write_text("a\nb\n")
    proc = subprocess.run([sys.executable, "-m", "svmmap.export", "--feature-names",
                           str(tmp_path / "names.txt"), str(tmp / "m.json"),
                           str(tmp_path / "out.json")], capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert "2 feature names for a model of 6 features" in proc.stderr
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("fmt", sorted(EXPORT_FORMATS))
def test_every_format_record_writes_what_its_output_kind_recognises(trained, tmp_path, fmt):
    """Each record of EXPORT_FORMATS, through export() and the command: the file written is
    of the record's output kind, and the command offers and describes the format."""
    tmp, X, _, _, model = trained
    record = EXPORT_FORMATS[fmt]
    rank_features = {str(j + 1): f"attribute(f{j + 1})" for j in range(X.shape[1])}
    export(model, tmp_path / "out", fmt, rank_features=rank_features)
    assert record.output.recognises(tmp_path / "out")
    others = [f for f in EXPORT_FORMATS.values() if f.name != fmt]
    assert not any(f.output.recognises(tmp_path / "out") for f in others)
    helptext = subprocess.run([sys.executable, "-m", "svmmap.export", "--help"],
                              capture_output=True, text=True, check=True).stdout
    flat = " ".join(helptext.split())
    assert f"{fmt}: {record.help}" in flat and record.title in flat
    with pytest.raises(ValueError, match="format must be one of"):
        export(model, tmp_path / "other", "no-such-format")
