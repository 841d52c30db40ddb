"""What svmmap_learn shows while it trains (svmmap.core.progress), and -v 0 / 1 / 2."""

import io
import math
import re
import shutil
import subprocess
from types import SimpleNamespace

import pytest

from svmmap import SVMMap, dump_svmlight
from svmmap.core.progress import IterationLines, ProgressDisplay
from svmstruct_api.callbacks import Progress

from conftest import random_collection


def fake_progress(iteration, seconds, gap, **limits):
    record = SimpleNamespace(iteration=iteration, seconds=seconds, primal_objective=10 + gap,
                             dual_objective=10.0, max_violation=gap / 10,
                             working_set_size=iteration, constraints_added=1)
    return Progress(record=record, formulation="1-slack", C=1.0, epsilon=1e-3,
                    max_iter=limits.get("max_iter"), max_time=limits.get("max_time"),
                    best_primal_objective=10 + gap, gap_target=1e-3)


def test_time_left_extrapolates_the_gap():
    """The gap halves every second: from 2^-3 to the target 1e-3 takes log2(125) s."""
    display = ProgressDisplay(stream=io.StringIO(), interval=0.0)
    display.on_start(None, None)
    for t in range(4):
        progress = fake_progress(t + 1, float(t), 2.0 ** -t)
        display.on_iteration(progress)
    assert display.seconds_left(progress) == pytest.approx(math.log2(0.125 / 1e-3))
    capped = fake_progress(4, 3.0, 0.125, max_time=5.0)
    assert display.seconds_left(capped) == pytest.approx(2.0)
    display.on_end(None)
    lines = display.stream.getvalue().splitlines()
    assert len(lines) == 4 and lines[0].startswith("iter 1  gap 1/0.001  violation 0.1/0.001")
    assert "~?" in lines[0] and "~7s left" in lines[-1] and "4 constraints" in lines[-1]


def test_no_estimate_while_the_gap_does_not_fall():
    display = ProgressDisplay(stream=io.StringIO())
    display.on_start(None, None)
    for t in range(5):
        display.on_iteration(fake_progress(t + 1, float(t), 1.0))
    assert display.seconds_left(fake_progress(5, 4.0, 1.0)) is None


def train(callbacks, verbose=0):
    X, y, qid = random_collection(seed=2, n_queries=20)
    return SVMMap(C=10, epsilon=1e-4, verbose=verbose).fit(X, y, qid, callbacks=callbacks)


def test_not_a_terminal_first_and_last_iteration_are_shown_and_nothing_between():
    stream = io.StringIO()
    model = train(ProgressDisplay(stream=stream, interval=3600))
    lines = stream.getvalue().splitlines()
    n = model.training_result_.iterations
    assert n > 2 and [line.split()[1] for line in lines] == ["1", str(n)]


def test_terminal_gets_one_live_tqdm_line():
    pytest.importorskip("tqdm")
    stream = io.StringIO()
    model = train(ProgressDisplay(stream=stream, tty=True))
    shown = [int(n) for n in re.findall(r"\rtraining (\d+) iterations, gap ", stream.getvalue())]
    assert shown and shown == sorted(shown) and shown[-1] <= model.training_result_.iterations
    assert "\n" not in stream.getvalue()  # one line, rewritten in place


def test_callbacks_and_verbose_through_the_api(capsys):
    seen = []
    model = train([seen.append], verbose=2)
    iterations = [event for event in seen if isinstance(event, Progress)]
    assert len(iterations) == model.training_result_.iterations
    assert seen[-1] is model.training_result_
    out = capsys.readouterr().out
    assert out.count("Primal objective value") == 1
    assert sum(line.startswith("iter ") for line in out.splitlines()) == len(iterations)


def test_iteration_lines():
    stream = io.StringIO()
    IterationLines(stream).on_iteration(fake_progress(3, 1.0, 0.5))
    assert stream.getvalue().startswith("iter    3  primal 10.5  dual 10")


@pytest.fixture(scope="module")
def train_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("progress") / "train.txt"
    dump_svmlight(path, *random_collection(seed=4, n_queries=15))
    return path


@pytest.mark.parametrize("level", ["0", "1", "2"])
def test_learn_verbosity_levels(train_file, tmp_path, level):
    proc = subprocess.run([shutil.which("svmmap_learn"), "-v", level, "-c", "10", str(train_file),
                           str(tmp_path / "m.json")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    out, err = proc.stdout.splitlines(), proc.stderr
    if level == "0":
        assert out == [] and err == ""
        return
    assert out[0].startswith("Read ") and " queries, " in out[0] and out[0].endswith(" s")
    assert proc.stdout.count("Primal objective value") == 1  # the report, once
    iteration_lines = [line for line in out if line.startswith("iter ")]
    if level == "2":
        assert len(iteration_lines) > 1 and "violation" not in err
    else:  # stderr is a pipe here: the display's plain lines
        assert iteration_lines == [] and err.startswith("iter 1  gap ")
