"""svmmap in PyTerrier (Java-free core, the [test] extra): SVMMap in
``pt.ltr.apply_learned_model(..., form="ltr")``, the qid-aware ``SVMMapRanker`` stage for every
loss and with SVMMapCV's C path on the validation topics, ``pt.GridSearch`` over C, and
``pt.Experiment`` with the stage beside a BM25-only stage and LightGBM's LGBMRanker, with a
paired t-test against the BM25 baseline -- on a small synthetic results frame."""

import numpy as np
import pytest

pt = pytest.importorskip("pyterrier")

from scipy import stats  # noqa: E402

from svmmap import InputFormatError, SVMMap, metrics  # noqa: E402
from svmmap.model_selection import SVMMapCV  # noqa: E402
from svmmap.pyterrier import SVMMapRanker  # noqa: E402

N_FEATURES = 5


def _frames(seed, n_topics, docs=16, prefix="q"):
    """(topics, results with ``features``, qrels) of ``n_topics`` synthetic queries: feature 0
    is a noisy "BM25" score, the labels 0/1/2 depend on all features."""
    rng = np.random.default_rng(seed)
    truth = np.array([1.0, 0.8, -0.6, 0.5, 0.0])
    rows, qrels = [], []
    for t in range(n_topics):
        qid = f"{prefix}{t}"
        X = rng.normal(size=(docs, N_FEATURES))
        signal = X @ truth + rng.normal(scale=0.8, size=docs)
        labels = np.digitize(signal, np.quantile(signal, [0.7, 0.9]))
        for d in range(docs):
            docno = f"{qid}-d{d:02d}"
            rows.append({"qid": qid, "query": f"topic {t}", "docno": docno,
                         "score": X[d, 0], "features": X[d].copy()})
            qrels.append({"qid": qid, "docno": docno, "label": int(labels[d])})
    import pandas as pd

    results = pt.model.add_ranks(pd.DataFrame(rows))
    topics = results[["qid", "query"]].drop_duplicates().reset_index(drop=True)
    return topics, results, pd.DataFrame(qrels)


TRAIN = _frames(1, 24, prefix="tr")
VALID = _frames(2, 12, prefix="va")
TEST = _frames(3, 24, prefix="te")
QRELS = pt.model.coerce_dataframe_types(
    __import__("pandas").concat([TRAIN[2], VALID[2], TEST[2]], ignore_index=True))
RESULTS = __import__("pandas").concat([TRAIN[1], VALID[1], TEST[1]], ignore_index=True)
CANDIDATES = pt.Transformer.from_df(RESULTS)


def _arrays(frames):
    topics, results, qrels = frames
    y = results.merge(qrels, on=["qid", "docno"])["label"].to_numpy(dtype=float)
    return np.stack(results["features"].to_numpy()), y, results["qid"].to_numpy()


def _fit(stage):
    pipeline = CANDIDATES >> stage
    pipeline.fit(TRAIN[0], QRELS, VALID[0], QRELS)
    return pipeline


def test_svmmap_in_apply_learned_model_form_ltr():
    """PyTerrier passes group= sizes (rows sorted by qid), eval_set and eval_group."""
    model = SVMMap(C=10.0)
    pipeline = _fit(pt.ltr.apply_learned_model(model, form="ltr"))
    X, y, qid = _arrays(TRAIN)
    direct = SVMMap(C=10.0).fit(X, y, qid)
    # the same problem (PyTerrier's rows sorted by qid): the same optimum, each w within its
    # certified gap of it (1-strong convexity: |w - w*|^2 / 2 <= the duality gap)
    assert model.training_result_.primal_objective == pytest.approx(
        direct.training_result_.primal_objective, rel=2 * SVMMap().rel_gap)
    assert np.linalg.norm(model.coef_ - direct.coef_) <= \
        np.sqrt(2 * max(model.training_result_.duality_gap, 0)) + \
        np.sqrt(2 * max(direct.training_result_.duality_gap, 0)) + \
        1e-12 * np.linalg.norm(direct.coef_)  # rounding: a gap may be -1e-16 or exactly 0
    Xv, yv, qv = _arrays(VALID)
    assert model.best_score_["valid_0"]["map"] == pytest.approx(
        metrics.mean_average_precision(model.decision_function(Xv), yv, qv), abs=1e-12)
    scored = pipeline.transform(TEST[0])
    np.testing.assert_allclose(scored["score"],
                               model.decision_function(np.stack(scored["features"])))


LOSSES = ["map", "roc", "acc", "ndcg", "ndcg@5", "mrr", "p@5", "rprec"]


@pytest.mark.parametrize("loss", LOSSES)
def test_ranker_stage_trains_every_loss_by_query(loss):
    stage = SVMMapRanker(C=1.0, loss=loss)
    pipeline = _fit(stage)
    X, y, qid = _arrays(TRAIN)
    direct = SVMMap(C=1.0, loss=loss).fit(X, y, qid)
    np.testing.assert_array_equal(stage.model_.coef_, direct.coef_)
    scored = pipeline.transform(TEST[0])
    Xt, _, qt = _arrays(TEST)
    assert list(scored["qid"]) == list(qt)
    np.testing.assert_array_equal(scored["score"], direct.decision_function(Xt))
    assert scored.groupby("qid")["rank"].min().eq(0).all()


def test_ranker_stage_chooses_c_on_the_validation_topics():
    Cs = [0.01, 0.1, 1, 10, 100]
    stage = SVMMapRanker(Cs=Cs, select_metric="ndcg@5")
    _fit(stage)
    X, y, qid = _arrays(TRAIN)
    Xv, yv, qv = _arrays(VALID)
    direct = SVMMapCV(Cs=Cs, select_metric="ndcg@5").fit(X, y, qid, eval_set=(Xv, yv, qv))
    assert stage.model_.selection_["validation"] == "eval_set"
    assert stage.model_.C_ == direct.C_
    assert [r["vali"] for r in stage.model_.path_] == [r["vali"] for r in direct.path_]
    # without validation topics: held-out training queries
    held = SVMMapRanker(Cs=Cs).fit(TRAIN[1], QRELS)
    assert held.model_.selection_["validation"].startswith("holdout")


def test_parameters_for_grid_search():
    stage = SVMMapRanker(C=1.0)
    assert stage.get_parameter("C") == 1.0 and stage.get_parameter("loss") == "map"
    with pytest.raises(ValueError, match="no parameter 'c_value'"):
        stage.get_parameter("c_value")
    with pytest.raises(ValueError, match="C"):
        stage.set_parameter("C", -1.0)
    assert stage.get_parameter("C") == 1.0  # a refused value leaves the old one
    with pytest.raises(ValueError, match="give Cs too"):
        SVMMapRanker(select_metric="map")
    pipeline = _fit(stage)
    Cs = [0.001, 1.0, 1000.0]
    best_C, setting = pt.GridSearch(pipeline, {stage: {"C": Cs}}, VALID[0], QRELS, "map",
                                    return_type="best_setting")
    # what GridSearch measured is what each C's model gives: refit and evaluate separately
    measured = {}
    for C in Cs:
        single = _fit(SVMMapRanker(C=C))
        measured[C] = pt.Evaluate(single.transform(VALID[0]), QRELS, ["map"])["map"]
    assert setting == [(stage, "C", max(Cs, key=lambda C: (measured[C], -C)))]
    assert best_C == pytest.approx(max(measured.values()))
    assert len(stage._models) == len(Cs)  # one training per setting, the first one kept


def test_experiment_beside_bm25_and_lightgbm_with_a_significance_test():
    lightgbm = pytest.importorskip("lightgbm")
    bm25 = CANDIDATES >> pt.apply.doc_score(lambda row: row["features"][0])
    svm = _fit(SVMMapRanker(Cs=[0.1, 1, 10, 100]))
    lgbm = _fit(pt.ltr.apply_learned_model(
        lightgbm.LGBMRanker(n_estimators=30, min_child_samples=5, verbose=-1,
                            random_state=0), form="ltr"))
    systems, names = [bm25, svm, lgbm], ["BM25", "SVM-MAP", "LGBMRanker"]
    table = pt.Experiment(systems, TEST[0], QRELS, ["map", "ndcg_cut_10"], names=names,
                          baseline=0).set_index("name")
    per_query = pt.Experiment(systems, TEST[0], QRELS, ["map"], names=names, perquery=True)
    aps = per_query[per_query["measure"] == "map"].pivot(index="qid", columns="name",
                                                         values="value")
    for name in ("SVM-MAP", "LGBMRanker"):
        expected = stats.ttest_rel(aps[name], aps["BM25"]).pvalue
        assert table.loc[name, "map p-value"] == pytest.approx(expected, rel=1e-9)
    # svmmap's trec_eval convention gives the figure pt.Experiment reports
    scored = svm.transform(TEST[0])
    labels = scored.merge(QRELS, on=["qid", "docno"])["label"].to_numpy(dtype=float)
    assert table.loc["SVM-MAP", "map"] == pytest.approx(metrics.mean_average_precision(
        scored["score"].to_numpy(), labels, scored["qid"].to_numpy(), convention="trec_eval",
        docnos=scored["docno"].to_numpy()), abs=1e-12)
    assert table.loc["SVM-MAP", "map"] > table.loc["BM25", "map"]
    assert table.loc["SVM-MAP", "map p-value"] < 0.05


def test_letor_frames(tmp_path):
    from svmmap.pyterrier import letor_frames

    path = tmp_path / "letor.txt"
    path.write_text("2 qid:7 1:0.5 3:1 #docid = GX-1 inc = 1\n"
                    "-1 qid:7 2:0.25 #docid = GX-2 inc = 0\n"
                    "0 qid:9 1:1 #docid = GX-3\n")
    topics, results, qrels = letor_frames(path)
    assert topics.to_dict("list") == {"qid": ["7", "9"], "query": ["7", "9"]}
    assert list(results["docno"]) == ["GX-1", "GX-2", "GX-3"]
    np.testing.assert_array_equal(np.stack(results["features"]),
                                  [[0.5, 0, 1], [0, 0.25, 0], [1, 0, 0]])
    assert list(qrels["label"]) == [2, 0, 0] and list(qrels["qid"]) == ["7", "7", "9"]


def test_qrels_judging_a_document_twice_are_refused():
    import pandas as pd

    with pytest.raises(ValueError, match="more than once"):
        SVMMapRanker().fit(TRAIN[1], pd.concat([QRELS, QRELS]))


@pytest.mark.parametrize("bad", [float("nan"), None, "two", float("inf")])
@pytest.mark.parametrize("which", ["train_qrels", "valid_qrels"])
def test_a_label_that_is_no_number_in_the_qrels_is_named(bad, which):
    """A NaN (or missing, or text) label in a qrels frame was read as 0 (unjudged) silently:
    refused naming the frame, its row, qid and docno (issue 32, item 8)."""
    qrels = QRELS.copy()
    qrels["label"] = qrels["label"].astype(object)
    row = int(np.flatnonzero(qrels["qid"].str.startswith(which[:2]))[3])
    qrels.loc[row, "label"] = bad
    frames = {"train_qrels": QRELS, "valid_qrels": QRELS, which: qrels}
    pipeline = CANDIDATES >> SVMMapRanker(Cs=[1, 10])
    with pytest.raises(InputFormatError) as info:
        pipeline.fit(TRAIN[0], frames["train_qrels"], VALID[0], frames["valid_qrels"])
    message = str(info.value)
    assert message.startswith(f"{which}: row {row} (qid {qrels.loc[row, 'qid']}, docno "
                              f"{qrels.loc[row, 'docno']}) has label ") and "\n" not in message
