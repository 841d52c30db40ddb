"""The relative-gap stop (``rel_gap``): training ends when, and only when, the oracle pass at w
shows (P(w) - D) / P(w) <= rel_gap or (if on) the epsilon rule holds; the value reaches the
learner from the estimator, the command line and the model file under the one name
``rel_gap``."""

import json
import math

import numpy as np
import pytest

from svmmap import SVMMap, dump_svmlight, load_svmlight
from svmmap.commands.learn import learn_main
from svmmap.core.collection import QueryCollection
from svmmap.core.plugins import MapPlugin
from svmstruct_api.learner import make_learner

from conftest import random_collection

#: so loose that the epsilon rule holds from the first pass on
LOOSE_EPSILON = 1.0


@pytest.fixture(scope="module")
def plugin():
    X, y, qid = random_collection(seed=7, n_queries=15, docs=(4, 12), n_features=6, rate=0.4)
    collection, _, _ = QueryCollection.from_arrays(X, y, qid).trainable()
    return MapPlugin(collection)


def _gaps_at_oracle_passes(result):
    """(P_best - D) / P_best at every oracle pass, P_best the smallest P(w) measured up to
    it and D the dual objective of the last QP before it (the learner's stabilised oracle
    points need not be the QP's solution; the w returned is the best one)."""
    gaps, dual, best = [], 0.0, math.inf  # w = 0 before the first QP: D = 0
    for record in result.history:
        if math.isfinite(record.primal_objective):
            best = min(best, record.primal_objective)
            gaps.append((best - dual) / best)
        dual = record.dual_objective
    return gaps


def _stopped_at_the_first_pass_that_held(held, passes):
    """Training stops at the first oracle pass where a rule holds, or, when that pass was at
    a stabilised point (oracle_step < 1), at the pass right after it, which is at the QP's
    solution (svmstruct_api.learner's module docstring)."""
    first = held.index(True) if True in held else None
    if first is None or first < len(held) - 2:
        return False
    return held[-1] and (first == len(held) - 1 or passes[first].oracle_step < 1.0)


@pytest.mark.parametrize("formulation", ["1-slack", "n-slack"])
@pytest.mark.parametrize("C", [1.0, 100.0])
@pytest.mark.parametrize("rel_gap", [1e-2, 1e-4])
def test_stops_when_and_only_when_the_relative_gap_is_reached(plugin, formulation, C, rel_gap):
    result = make_learner(formulation, C=C, epsilon=None, rel_gap=rel_gap).fit(plugin)
    gaps = _gaps_at_oracle_passes(result)
    assert result.status == "converged"
    passes = [r for r in result.history if math.isfinite(r.primal_objective)]
    # stopped with the gap reached, and not at an earlier pass that had it
    assert _stopped_at_the_first_pass_that_held([g <= rel_gap for g in gaps], passes)
    assert result.relative_gap <= rel_gap and result.rel_gap == rel_gap
    # the gap bounds the distance to the optimum: a tight fit is not below P - gap
    tight = make_learner(formulation, C=C, epsilon=1e-8).fit(plugin)
    assert tight.primal_objective >= result.dual_objective - 1e-9 * C
    assert result.primal_objective - tight.primal_objective <= rel_gap * result.primal_objective


def test_a_loose_epsilon_alone_stops_with_a_larger_gap(plugin):
    # the gap rule is what makes the fits above tight: a loose epsilon stops far from the optimum
    loose = make_learner("1-slack", C=100.0, epsilon=LOOSE_EPSILON).fit(plugin)
    assert loose.relative_gap > 1e-2


@pytest.mark.parametrize("epsilon, rel_gap", [(1e-6, 0.05), (0.05, 1e-6)])
def test_with_both_rules_the_first_that_holds_stops(plugin, epsilon, rel_gap):
    result = make_learner("1-slack", C=10.0, epsilon=epsilon, rel_gap=rel_gap).fit(plugin)
    gaps = _gaps_at_oracle_passes(result)
    passes = [r for r in result.history if math.isfinite(r.primal_objective)]
    # the epsilon rule is decided at the QP's solution only (oracle_step 1)
    held = [g <= rel_gap or (r.max_violation <= epsilon and r.oracle_step == 1.0)
            for g, r in zip(gaps, passes)]
    assert _stopped_at_the_first_pass_that_held(held, passes)
    tight = make_learner("1-slack", C=10.0, epsilon=1e-8).fit(plugin)
    assert result.primal_objective > tight.primal_objective + 1e-6  # the loose rule stopped it


@pytest.mark.parametrize("bad", [0, -1e-3, math.inf, math.nan, "1e-3"])
def test_learner_refuses_bad_values(bad):
    with pytest.raises(ValueError, match="rel_gap"):
        make_learner("1-slack", rel_gap=bad)
    with pytest.raises(ValueError, match="stopping rule"):
        make_learner("1-slack", epsilon=None, rel_gap=None)
    with pytest.raises(ValueError, match="stopping rule"):
        SVMMap(epsilon=None, rel_gap=None).check_params()


@pytest.mark.filterwarnings("ignore:.*carry no constraint")
def test_model_file_and_report_carry_rel_gap(tmp_path):
    X, y, qid = random_collection(seed=3, n_queries=10, docs=(4, 10))
    model = SVMMap(C=10, epsilon=None, rel_gap=1e-3).fit(X, y, qid)
    result = model.training_result_
    assert result.relative_gap <= 1e-3
    assert result.report().splitlines()[0].endswith("epsilon = off, rel_gap = 0.001")
    path = tmp_path / "m.json"
    model.save(path)
    document = json.loads(path.read_text())
    assert document["params"]["rel_gap"] == 1e-3 and document["params"]["epsilon"] is None
    assert document["training"]["relative_gap"] == pytest.approx(result.relative_gap)
    loaded = SVMMap.load(path)
    assert loaded.rel_gap == 1e-3 and loaded.training_result_.rel_gap == 1e-3
    # a file written before rel_gap existed was trained by epsilon alone
    del document["params"]["rel_gap"]
    document["params"]["epsilon"] = 1e-3
    path.write_text(json.dumps(document))
    old = SVMMap.load(path)
    assert old.rel_gap is None and old.epsilon == 1e-3


def test_cli_rel_gap(tmp_path, capsys):
    X, y, qid = random_collection(seed=5, n_queries=12, docs=(5, 20))
    train, model = tmp_path / "train.txt", tmp_path / "m.json"
    dump_svmlight(train, X, y, qid)
    assert learn_main(["-c", "10", "-e", "off", "--rel-gap", "1e-4", str(train),
                       str(model)]) == 0
    assert "rel_gap = 0.0001" in capsys.readouterr().out
    document = json.loads(model.read_text())
    assert document["params"]["rel_gap"] == 1e-4
    assert document["training"]["relative_gap"] <= 1e-4
    api = SVMMap(C=10, epsilon=None, rel_gap=1e-4).fit(*load_svmlight(train))
    np.testing.assert_array_equal(SVMMap.load(model).coef_, api.coef_)
    assert learn_main(["-v", "0", "-e", "0.001", "--rel-gap", "off", str(train),
                       str(model)]) == 0
    params = json.loads(model.read_text())["params"]
    assert params["rel_gap"] is None and params["epsilon"] == 0.001


@pytest.mark.parametrize("value, message", [
    ("0", "argument --rel-gap: The 'rel_gap' parameter of SVMMap must be a float in the range"),
    ("1.5", "argument --rel-gap: The 'rel_gap' parameter of SVMMap must be a float in the range"),
    ("nan", "argument --rel-gap: The 'rel_gap' parameter of SVMMap must be a float in the range"),
    ("tight", "argument --rel-gap: not a number or 'off': 'tight'"),
    ("off -e off", "-e off and --rel-gap off leave training without a stopping rule"),
])
def test_cli_refuses_bad_rel_gap(tmp_path, capsys, value, message):
    with pytest.raises(SystemExit) as stopped:
        learn_main(["--rel-gap", *value.split(), str(tmp_path / "train.txt"),
                    str(tmp_path / "m.json")])
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()


def _recording_tolerances(monkeypatch):
    """The gap_tolerance of every WorkingSet.solve call, in order."""
    from svmstruct_api.qp import WorkingSet

    tolerances, solve = [], WorkingSet.solve

    def recording(self, gap_tolerance=None, deadline=None):
        tolerances.append(gap_tolerance)
        return solve(self, gap_tolerance, deadline=deadline)

    monkeypatch.setattr(WorkingSet, "solve", recording)
    return tolerances


@pytest.mark.parametrize("fraction", [0.1, 0.9])
@pytest.mark.parametrize("C", [10.0, 1000.0])
def test_loose_qps_far_from_the_optimum_leave_the_certified_stop_unchanged(
        plugin, monkeypatch, fraction, C):
    # the QPs are solved to a fraction of the last gap while that is larger than the strict
    # 1% of rel_gap P_best; the stop is still certified and at the optimum of a tight fit
    from svmstruct_api import stopping

    rel_gap = 1e-6
    monkeypatch.setattr(stopping, "_QP_GAP_FRACTION", fraction)
    tolerances = _recording_tolerances(monkeypatch)
    result = make_learner("1-slack", C=C, epsilon=None, rel_gap=rel_gap).fit(plugin)
    assert result.status == "converged" and result.relative_gap <= rel_gap
    strict = 0.01 * rel_gap * result.primal_objective
    assert max(tolerances) > 100 * strict  # loose QPs were solved
    tight = make_learner("1-slack", C=C, epsilon=1e-9 * 100 / C).fit(plugin)
    assert abs(result.primal_objective - tight.primal_objective) <= \
        2 * rel_gap * tight.primal_objective



def test_nothing_added_after_a_loose_qp_does_not_stop_training(plugin, monkeypatch):
    # a loose QP may return any feasible multipliers: here every loose solve returns the
    # midpoint of the last and the optimal multipliers (feasible, not optimal).  An oracle
    # pass at such a solution that adds nothing certifies nothing; training goes on (the
    # same working set solved strictly) and stops certified at the tight fit's optimum
    from svmstruct_api import learner, stopping
    from svmstruct_api.qp import WorkingSet

    state = {"strict": True}
    tolerance, solve = learner.BaseSSVM._qp_tolerance, WorkingSet.solve

    def recording_tolerance(self, run, *args, **kwargs):
        value = tolerance(self, run, *args, **kwargs)
        state["strict"] = run.strict
        return value

    def sloppy_solve(self, gap_tolerance=None, deadline=None):
        previous = self.alpha.copy()
        solution = solve(self, gap_tolerance, deadline=deadline)
        if state["strict"] or len(previous) != len(self):
            return solution
        alpha = 0.5 * (previous + solution.alpha)
        self._alpha_buffer[:len(self)] = alpha
        return self._dual_solution(alpha, "sloppy")

    monkeypatch.setattr(learner.BaseSSVM, "_qp_tolerance", recording_tolerance)
    monkeypatch.setattr(WorkingSet, "solve", sloppy_solve)
    monkeypatch.setattr(stopping, "_QP_GAP_FRACTION", 0.9)
    result = make_learner("1-slack", C=100.0, epsilon=None, rel_gap=1e-6).fit(plugin)
    assert result.status == "converged" and result.relative_gap <= 1e-6
    tight = make_learner("1-slack", C=100.0, epsilon=1e-9).fit(plugin)
    assert abs(result.primal_objective - tight.primal_objective) <= \
        2e-6 * tight.primal_objective
