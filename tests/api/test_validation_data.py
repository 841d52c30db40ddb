"""Issue 32, item 8 (the Python API): validation data and query sizes are checked before any
training, and a message says which argument is at fault -- ``eval_set[i] (validation data)``
for every estimator, a ``group`` size beyond the rows without an int64 wrap-round."""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from svmmap import InputFormatError, SVMMap
from svmmap.baselines import AdaRank, PRank, RankBoost
from svmmap.model_selection import SVMMapCV

from conftest import FAST

ESTIMATORS = {"SVMMap": SVMMap, "AdaRank": AdaRank, "RankBoost": RankBoost, "PRank": PRank,
              "SVMMapCV": lambda: SVMMapCV(Cs=[1, 10])}


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((24, 3)), np.tile([1.0, 0.0, 0.0], 8), np.repeat(np.arange(4), 6)


def _bad_set(change, X, y, qid):
    """(eval_set, eval_qid, what the message must say) of a bad validation set."""
    Xv, yv, qv = X[:12].copy(), y[:12].copy(), qid[:12].copy()
    if change == "short eval_qid":
        return [(Xv, yv)], [qv[:5]], "X has 12 rows but eval_qid[0] has 5 entries"
    if change == "short qid":
        return (Xv, yv, qv[:-1]), None, "X has 12 rows but qid has 11 entries"
    if change == "narrower":
        return (Xv[:, :2], yv, qv), None, "X has 2 features"
    if change == "nan":
        Xv[3, 1] = np.nan
        return (Xv, yv, qv), None, "NaN"
    if change == "short y":
        return (Xv, yv[:7], qv), None, "inconsistent numbers of samples"
    raise AssertionError(change)


class Trained(Exception):
    """Raised by a callback / patched trainer: training started."""


@FAST
@given(name=st.sampled_from(sorted(ESTIMATORS)),
       change=st.sampled_from(["short eval_qid", "short qid", "narrower", "nan", "short y"]))
@example(name="SVMMap", change="short eval_qid")  # 'X has 24 rows but qid has 5 entries'
@example(name="SVMMap", change="narrower")  # refused after 12 iterations, model fitted
def test_a_bad_validation_set_is_refused_before_training_naming_it(monkeypatch, name,
                                                                   change):
    X, y, qid = _data()
    eval_set, eval_qid, says = _bad_set(change, X, y, qid)
    model = ESTIMATORS[name]()
    from svmmap.core import training

    def no_training(*args, **kwargs):
        raise Trained

    monkeypatch.setattr(training, "fit", no_training)  # SVMMap's training
    kwargs = {"eval_set": eval_set} if eval_qid is None else \
        {"eval_set": eval_set, "eval_qid": eval_qid}
    with pytest.raises(InputFormatError) as info:
        model.fit(X, y, qid, **kwargs)
    message = str(info.value)
    assert message.startswith("eval_set[0] (validation data): ") and says in message
    assert "\n" not in message
    assert not hasattr(model, "n_iter_") and not hasattr(model, "coef_")


@FAST
@given(size=st.one_of(st.floats(25, 1e300), st.integers(25, 2**63 - 1)),
       others=st.integers(0, 3))
@example(size=1e20, others=1)  # 'group sizes add up to -9223372036854775808'
def test_a_group_size_beyond_the_rows_is_named(size, others):
    X, y, _ = _data()
    group = [size] + [6] * others
    with pytest.raises(InputFormatError, match=r"^group holds a query size of .* rows, X has "
                                               r"24$"):
        SVMMap().fit(X, y, group=group)
