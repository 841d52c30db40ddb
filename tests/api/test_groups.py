"""LightGBM's conventions in every svmmap ranker (svmmap.core.groups): ``group=`` query sizes train
the same model as the equivalent qid; ``eval_set`` as (X, y, qid), as [(X, y)] with
``eval_group`` sizes or with ``eval_qid`` ids choose the same C (SVMMapCV) / rounds (the
boosters) and record the same ``best_score_``, which is the measure of the fitted model on
the set; malformed sizes are refused with one-line errors."""

import numpy as np
import pytest

from svmmap import SVMMap, metrics
from svmmap.baselines import AdaRank, PRank, RankBoost
from svmmap.core.groups import eval_sets, qid_from_group
from svmmap.errors import InputFormatError
from svmmap.model_selection import SVMMapCV

from conftest import random_collection

TRAIN = random_collection(21, n_queries=14, docs=(6, 14))
VALID = random_collection(22, n_queries=8, docs=(6, 14))

RANKERS = {
    "svmmap": lambda: SVMMap(C=10.0),
    "svmmapcv": lambda: SVMMapCV(Cs=[0.1, 1, 10, 100]),
    "adarank": lambda: AdaRank(max_rounds=8),
    "rankboost": lambda: RankBoost(max_rounds=10),
    "prank": lambda: PRank(n_epochs=3),
}


def _sizes(qid):
    """Query sizes of contiguous qids, in order."""
    return np.diff(np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True]))


@pytest.mark.parametrize("kind", RANKERS)
def test_group_and_eval_forms_give_the_same_model(kind):
    X, y, qid = TRAIN
    Xv, yv, qv = VALID
    by_qid = RANKERS[kind]().fit(X, y, qid, eval_set=(Xv, yv, qv))
    by_group = RANKERS[kind]().fit(X, y, group=_sizes(qid), eval_set=[(Xv, yv)],
                                   eval_group=[_sizes(qv)])
    # ids of another type, the validation queries in reverse order (ties keep row order
    # within a query, so that order is kept)
    order = np.argsort(-qv, kind="stable")
    by_eval_qid = RANKERS[kind]().fit(X, y, qid, eval_set=[(Xv[order], yv[order])],
                                      eval_qid=[np.char.add("q", qv[order].astype(str))])
    for other in (by_group, by_eval_qid):
        np.testing.assert_array_equal(other.decision_function(X), by_qid.decision_function(X))
        assert other.best_score_.keys() == {"valid_0"}
        np.testing.assert_allclose(other.best_score_["valid_0"]["map"],
                                   by_qid.best_score_["valid_0"]["map"], rtol=0, atol=1e-12)
    expected = metrics.mean_average_precision(by_qid.decision_function(Xv), yv, qv)
    assert by_qid.best_score_ == {"valid_0": {"map": pytest.approx(expected, abs=1e-12)}}
    if kind == "svmmapcv":
        assert by_group.C_ == by_eval_qid.C_ == by_qid.C_
        assert [r["vali"] for r in by_group.path_] == [r["vali"] for r in by_qid.path_]


def test_svmmapcv_chooses_c_on_the_eval_set_not_a_holdout():
    X, y, qid = TRAIN
    Xv, yv, qv = VALID
    model = SVMMapCV(Cs=[0.01, 1, 100]).fit(X, y, group=_sizes(qid), eval_set=[(Xv, yv)],
                                           eval_group=[_sizes(qv)])
    assert model.selection_["validation"] == "eval_set"
    vali = [metrics.mean_average_precision(
        SVMMap(C=C).fit(X, y, qid).decision_function(Xv), yv, qv) for C in (0.01, 1, 100)]
    np.testing.assert_allclose([r["vali"] for r in model.path_], vali, atol=2e-3)
    assert model.n_queries_used_ == len(np.unique(qid))  # trained on every training query


def test_several_eval_sets_are_each_measured():
    X, y, qid = TRAIN
    Xv, yv, qv = VALID
    half = qv < 4
    model = SVMMap(C=1.0).fit(X, y, group=_sizes(qid),
                              eval_set=[(Xv[half], yv[half]), (Xv[~half], yv[~half])],
                              eval_qid=[qv[half], qv[~half]], eval_metric="ndcg@5")
    for i, mask in enumerate((half, ~half)):
        assert model.best_score_[f"valid_{i}"]["ndcg@5"] == pytest.approx(metrics.ndcg_at_k(
            model.decision_function(Xv[mask]), yv[mask], qv[mask], k=5), abs=1e-12)
    assert not hasattr(model.fit(X, y, qid), "best_score_")  # a refit without eval_set


def test_qid_from_group_and_errors():
    np.testing.assert_array_equal(qid_from_group([2, 0, 3], 5), [0, 0, 2, 2, 2])
    X, y, qid = TRAIN
    for bad, words in (([3, 3], "add up to 6 rows"), ([-1, len(y) + 1], "negative"),
                       ([1.5, len(y) - 1.5], "whole numbers"), ([["a"]], "query sizes")):
        with pytest.raises(InputFormatError, match=words):
            SVMMap().fit(X, y, group=bad)
    with pytest.raises(InputFormatError, match="qid or group, not both"):
        SVMMap().fit(X, y, qid, group=_sizes(qid))
    with pytest.raises(InputFormatError, match="1 eval_set entries but 2 in eval_group"):
        eval_sets([(X, y)], eval_group=[[len(y)], [1]])
    with pytest.raises(InputFormatError, match="give eval_set too"):
        eval_sets(None, eval_qid=[qid])
    with pytest.raises(InputFormatError, match="has its qid already"):
        eval_sets([(X, y, qid)], eval_qid=[qid])
    with pytest.raises(InputFormatError, match="eval_group or eval_qid"):
        eval_sets([(X, y)], eval_group=[[len(y)]], eval_qid=[qid])
