"""svmmap.core.params: the parameter rules the estimators and the command line share, against
scikit-learn's own constraints (derived from them, read by scikit-learn's tools)."""

import inspect
import math

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError, make_constraint

from svmmap import SVMMap
from svmmap.baselines import AdaRank, PRank, RankBoost
from svmmap.core.params import SVMMAP_DEFAULTS, SVMMAP_RULES, check_svmmap
from svmmap.core.rules import Interval, ParameterError, check
from svmmap.features import BinnedFeatureMap
from svmmap.model_selection import SVMMapCV

ESTIMATORS = [SVMMap, SVMMapCV, AdaRank, RankBoost, PRank, BinnedFeatureMap]

#: values of every kind a user might pass
VALUES = [-1, 0, 1, 2, 3, 10**12, -0.5, 0.0, 0.5, 1.0, 1.5, 1e300, math.inf, -math.inf,
          math.nan, np.int64(4), np.float32(0.25), np.float64(1.0), True, False, None, "",
          "map", "ndcg", "ndcg@10", "p@5", "p@0", "p", "mrr", "rprec", "roc", "acc", "x",
          "1-slack", "n-slack", "smo", "cvxopt", "divide", "scan", "balanced", "percentile",
          "minmax", [1, 2], (0,), [], np.array([3, 4]), {"a": 1}, object(), b"map",
          BinnedFeatureMap(3), np.True_, np.False_, 10**400, -(10**400)]


def _sklearn_accepts(constraints, value):
    return any(make_constraint(c).is_satisfied_by(value) for c in constraints)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_rules_accept_what_the_derived_sklearn_constraints_accept(estimator):
    """The same verdict on every value, except that the rules refuse True / False for
    numbers (scikit-learn's integer intervals take them: Python's bool is an int)."""
    assert set(estimator._parameter_rules) == set(estimator._parameter_constraints)
    compared = 0
    for name, rules in estimator._parameter_rules.items():
        constraints = estimator._parameter_constraints[name]
        for value in VALUES:
            ours = any(value is None if r is None else r.accepts(value) for r in rules)
            theirs = _sklearn_accepts(constraints, value)
            numeric = any(isinstance(r, Interval) for r in rules)
            if isinstance(value, (bool, np.bool_)) and numeric:
                assert not ours, (name, value)
            else:
                assert ours == theirs, (estimator.__name__, name, value, ours, theirs)
            compared += 1
    assert compared == len(VALUES) * len(estimator._parameter_rules)


@pytest.mark.parametrize("rule, inside, outside", [
    (Interval(0, math.inf, closed="neither"), [1e-300, 5, 1e300], [0, -1, math.inf, math.nan]),
    (Interval(0, 1, closed="neither"), [0.5, 1e-9], [0, 1, 2]),
    (Interval(1, None, closed="left", integer=True), [1, 2, 10**20], [0, 1.0, 2.5, True]),
    (Interval(0, math.inf, closed="left"), [0, 0.0, 3], [-1e-300, math.inf]),
])
def test_intervals_and_their_bounds(rule, inside, outside):
    assert all(rule.accepts(v) for v in inside) and not any(rule.accepts(v) for v in outside)


def test_messages_name_the_parameter_the_owner_and_the_value():
    with pytest.raises(ParameterError, match=r"^The 'C' parameter of SVMMap must be a float in "
                                             r"the range \(0, inf\)\. Got 0 instead\.$"):
        check_svmmap("SVMMap", {"C": 0})
    with pytest.raises(ParameterError, match=r"'epsilon' parameter .* must be a float in the "
                                             r"range \(0, inf\) or None\. Got 'x'"):
        check_svmmap("SVMMap", {"epsilon": "x"})
    with pytest.raises(ParameterError, match="applies to algorithm='1-slack' only"):
        check_svmmap("SVMMap", {"algorithm": "n-slack", "cache_size": 3, "epsilon": 0.1})
    with pytest.raises(ParameterError, match="both None"):
        check_svmmap("SVMMap", {"epsilon": None, "rel_gap": None})
    check_svmmap("SVMMap", {"algorithm": "n-slack", "cache_size": 0, "epsilon": 0.1})
    check("X", {"unknown": object()}, SVMMAP_RULES)  # parameters without rules are not checked


def test_estimators_raise_sklearns_error_with_the_rules_message():
    """check_params raises one error that is both scikit-learn's InvalidParameterError (the
    API's contract) and svmmap's ParameterError (what the command line catches)."""
    for model, name in [(SVMMap(C=-1), "C"), (SVMMapCV(holdout=1), "holdout"),
                        (AdaRank(loss="roc"), "loss"), (PRank(averaged=1), "averaged"),
                        (BinnedFeatureMap(n_thresholds=0), "n_thresholds"),
                        (SVMMap(max_iter=True), "max_iter")]:
        with pytest.raises(InvalidParameterError, match=f"The '{name}' parameter of "
                                                        f"{type(model).__name__} must be"):
            model.check_params()
        with pytest.raises(ParameterError):
            model.check_params()


def test_svmmap_defaults_are_the_constructors():
    """A model file leaves out the run-time settings: svmmap_classify restores the rest from
    SVMMAP_DEFAULTS, the estimator from its constructor; both must agree."""
    signature = inspect.signature(SVMMap.__init__).parameters
    assert SVMMAP_DEFAULTS == {name: p.default for name, p in signature.items()
                               if name != "self"}
    assert set(SVMMAP_DEFAULTS) == set(SVMMAP_RULES)
