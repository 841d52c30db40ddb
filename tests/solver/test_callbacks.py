"""Progress leaves the cutting-plane loop through callbacks (svmstruct_api.callbacks): what
they are told, in which order, and that the text log is one of them."""

import math

import numpy as np
import pytest

from svmmap.core.collection import QueryCollection
from svmmap.core.plugins import MapPlugin
from svmstruct_api.callbacks import Callback, LogCallback, Progress, progress_line
from svmstruct_api.learner import LEARNERS, NSlackSSVM, OneSlackSSVM, TrainingResult, make_learner
from svmstruct_api.options import FORMULATIONS

from conftest import random_collection


@pytest.fixture(scope="module")
def plugin():
    X, y, qid = random_collection(seed=11, n_queries=15, docs=(5, 20))
    collection, _, _ = QueryCollection.from_arrays(X, y, qid).trainable()
    return MapPlugin(collection)


def test_make_learner_picks_the_class_of_each_formulation():
    assert isinstance(make_learner("n-slack", C=3), NSlackSSVM)
    learner = make_learner("1-slack", C=3, cache_size=4)
    assert isinstance(learner, OneSlackSSVM) and learner.cache_size == 4
    assert tuple(LEARNERS) == FORMULATIONS
    assert all(cls.formulation == name for name, cls in LEARNERS.items())
    with pytest.raises(ValueError, match="1-slack"):
        make_learner("n-slack", cache_size=2)


@pytest.mark.parametrize("formulation", ["n-slack", "1-slack"])
def test_a_plain_callable_sees_every_iteration_then_the_result(plugin, formulation):
    events = []
    C, epsilon = 10.0, 1e-3
    result = make_learner(formulation, C=C, epsilon=epsilon,
                          callbacks=events.append).fit(plugin)
    progress, last = events[:-1], events[-1]
    assert last is result and isinstance(result, TrainingResult) and result.converged
    assert all(isinstance(p, Progress) for p in progress)
    assert [p.record for p in progress] == result.history
    assert [p.iteration for p in progress] == list(range(1, result.iterations + 1))
    best = math.inf
    for p in progress:
        assert p.formulation == formulation and p.C == C and p.epsilon == epsilon
        best = min(best, p.primal_objective)
        assert p.best_primal_objective == best
        assert p.duality_gap == best - p.dual_objective
        assert p.working_set_size == p.record.working_set_size
        assert p.seconds <= result.seconds
    final = progress[-1]
    # converged: no constraint violated by more than epsilon, and the gap is within target
    assert final.max_violation <= epsilon
    assert final.duality_gap <= final.gap_target == pytest.approx(1.01 * C * epsilon)
    # the w returned is the last pass's, at the QP's solution, where the rule held (the
    # stabilised oracle points may have measured a smaller P(w) before it)
    assert result.primal_objective == final.primal_objective
    assert final.record.oracle_step == 1.0
    assert final.best_primal_objective <= result.primal_objective


def test_callback_objects_are_told_start_iterations_and_end_in_order(plugin):
    class Recorder(Callback):
        def __init__(self):
            self.calls = []

        def on_start(self, learner, model):
            self.calls.append(("start", learner, model))

        def on_iteration(self, progress):
            self.calls.append(("iteration", progress.iteration))

        def on_end(self, result):
            self.calls.append(("end", result.status))

    first, second = Recorder(), Recorder()
    learner = make_learner("1-slack", C=5, max_iter=4, callbacks=[first, second])
    result = learner.fit(plugin)
    expected = [("start", learner, plugin), *[("iteration", i) for i in range(1, 5)],
                ("end", "max_iter")]
    assert result.iterations == 4 and first.calls == expected and second.calls == expected


def test_interrupt_from_a_callback_still_reaches_on_end(plugin):
    ended = []

    class StopAtThree(Callback):
        def on_iteration(self, progress):
            if progress.iteration == 3:
                raise KeyboardInterrupt

        def on_end(self, result):
            ended.append(result)

    result = make_learner("n-slack", C=10, callbacks=StopAtThree()).fit(plugin)
    assert result.status == "interrupted" and result.iterations == 3
    assert ended == [result]


def test_log_callback_writes_one_line_per_iteration_and_the_report(plugin):
    lines = []
    result = make_learner("1-slack", C=10, callbacks=LogCallback(lines.append)).fit(plugin)
    assert lines == [progress_line(r) for r in result.history] + [result.report()]
    assert lines[0].startswith("iter    1  primal ")


def test_callbacks_do_not_change_the_run(plugin):
    plain = make_learner("1-slack", C=100).fit(plugin)
    observed = make_learner("1-slack", C=100, callbacks=[lambda event: None]).fit(plugin)
    assert np.array_equal(plain.w, observed.w)
    assert plain.primal_objective == observed.primal_objective


def test_anything_else_is_not_a_callback(plugin):
    with pytest.raises(TypeError, match="callback"):
        make_learner("1-slack", callbacks=[42]).fit(plugin)
