"""The stopping defaults give the optimum's model (issue 15, point 4): on a real LETOR fold
the validation MAP does not depend on how X is stored or on the oracle's threads (same to 3
decimals: |difference| < 0.0005), and the one command's warm-started C path selects the C
that separate cold fits select.  benchmarks/defaults.py measures this on every fold and C of
the grid, with its cost; these tests keep one small case of each."""

import warnings

from svmmap import SVMMap, load_svmlight
from svmmap.core.options import DEFAULT_SELECT_TOL
from svmmap.model_selection import SVMMapCV, choose

from conftest import data_file

#: "the same to 3 decimals" (benchmarks/defaults.py)
SAME = 5e-4


def _fold(dataset):
    train = load_svmlight(data_file(dataset, "Fold1", "train.txt"))
    vali = load_svmlight(data_file(dataset, "Fold1", "vali.txt"), n_features=train[0].shape[1])
    return train, vali


def _vali_map(X, y, qid, vali, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SVMMap(**params).fit(X, y, qid).score(*vali[:2], qid=vali[2])


def test_dense_and_csr_input_and_threads_give_the_same_vali_map():
    # the case: OHSUMED Fold1, C = 100
    (X, y, qid), vali = _fold("OHSUMED")
    dense = X.toarray()
    maps = [_vali_map(X, y, qid, vali, C=100), _vali_map(dense, y, qid, vali, C=100),
            _vali_map(X, y, qid, vali, C=100, n_threads=2),
            _vali_map(dense, y, qid, vali, C=100, n_threads=2)]
    assert max(maps) - min(maps) < SAME, maps
    # a fit stopped short of the optimum gives another vali MAP, so the comparison can fail
    # (the issue measured 0.4639 for CSR against 0.4510 for dense input with the old default,
    # epsilon 1e-3 alone; with today's learner that stop lands within 0.0004 on this fold,
    # so the control is a fit stopped after 5 oracle passes: 0.0086 away)
    short = _vali_map(X, y, qid, vali, C=100, max_iter=5)
    assert abs(short - maps[0]) > SAME


def test_the_warm_path_selects_the_c_of_separate_cold_fits():
    # MQ2008 Fold1, where the path and the separate fits chose different C at epsilon 1e-3
    (X, y, qid), vali = _fold("MQ2008")
    Cs = (1, 10, 100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = SVMMapCV(Cs=Cs).fit(X, y, qid, eval_set=vali)
    cold = [_vali_map(X, y, qid, vali, C=C) for C in Cs]
    assert path.C_ == Cs[choose(cold, DEFAULT_SELECT_TOL)]
    assert max(abs(row["vali"] - m) for row, m in zip(path.path_, cold)) < SAME

