"""Memory and processes (issue 22, class 3): a huge line costs no more than its excerpt, a
failed allocation in the C++ reader is the out-of-memory line, a pipe is read once, and
--dask-workers has a limit.

The memory tests set the address-space limit (RLIMIT_AS) inside the child, after its
imports, relative to what it has mapped then: the outcome depends on how much the reader
allocates, not on the machine's memory or load."""

import gzip
import json
import os
import shutil
import subprocess
import threading

import pytest

from svmmap.commands.learn import learn_main
from svmmap.commands.learn_options import max_dask_workers

PYTHON = shutil.which("python") or "python"
TRAIN = b"1 qid:1 1:1 2:0.5\n0 qid:1 2:1\n1 qid:2 1:0.5 2:1\n0 qid:2 1:0.1\n"

#: argv: python -c _UNDER_LIMIT EXTRA_BYTES learn-arguments...: svmmap_learn with at most
#: EXTRA_BYTES of address space beyond what the process has mapped after its imports
_UNDER_LIMIT = """\
import resource, sys
import numpy, scipy.sparse
import svmmap.commands.learn, svmmap.data.io, svmmap.core.training

status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
mapped = int(status["VmSize"].split()[0]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (mapped + int(sys.argv[1]), resource.RLIM_INFINITY))
sys.exit(svmmap.commands.learn.learn_main(sys.argv[2:]))
"""

HOLE = 128 << 20


@pytest.mark.parametrize("head, reason", [
    (b"1 qid:1 1:1\n0 qid:1 1:0\n", "3: label '\\x00\\x00"),  # the file
    (b"1 qid:1 1:1\n0 qid:1 1:0 2:", "2: feature 2: value '\\x00\\x00"),
    (b"1 qid:1 1:1\n0 qid:1 1:0 2:1 ", "2: malformed feature '\\x00\\x00"),
])
def test_a_line_followed_by_a_sparse_hole_is_one_short_line(tmp_path, head, reason):
    """A data line, then a 128 MiB hole of NUL bytes (``truncate``): the error path made
    text of the whole "line" (13 GB resident for a 1 GiB hole).  With 128 MiB of address
    space beyond the mapped file it is the format error, quoting a short excerpt."""
    data = tmp_path / "hole.dat"
    data.write_bytes(head)
    os.truncate(data, HOLE)
    done = subprocess.run([PYTHON, "-c", _UNDER_LIMIT, str(HOLE + (128 << 20)), "-v", "0",
                           str(data), str(tmp_path / "m.json")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "out of memory" not in done.stderr
    line, = done.stderr.splitlines()
    assert line.startswith(f"svmmap_learn: error: {data}:{reason}"), line
    assert len(line) < 200 + len(str(data)), line


_SWEEP = """\
import resource, sys
import numpy, scipy.sparse
from svmmap.data.io import load_svmlight

path, step, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
outcomes = []
for k in range(steps):
    status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
    mapped = int(status["VmSize"].split()[0]) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mapped + k * step, resource.RLIM_INFINITY))
    try:
        X, y, qid = load_svmlight(path)
        outcomes.append(len(y))
    except MemoryError:
        outcomes.append("MemoryError")
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY,) * 2)
    X = y = qid = None
print(outcomes)
"""


def test_reading_under_any_address_limit_reads_or_raises_memory_error(tmp_path):
    """Under ``ulimit -v`` a little short of what the data needs, std::bad_alloc escaped the
    C++ reader (SIGABRT, exit 134).  Every limit from nothing to enough, in 1 MiB steps, now
    gives the data or MemoryError (the commands' out-of-memory line), never an abort."""
    path = tmp_path / "many.dat"
    lines = b"".join(b"%d qid:%d 1:%d.5 # d\n" % (i % 2, i // 50, i) for i in range(200_000))
    path.write_bytes(lines)
    done = subprocess.run([PYTHON, "-c", _SWEEP, str(path), str(1 << 20), "64"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    outcomes = eval(done.stdout)  # a list of ints and strings, printed by the child
    assert set(outcomes) <= {200_000, "MemoryError"}
    assert "MemoryError" in outcomes and outcomes[-1] == 200_000, outcomes


def _model_from_regular_file(tmp_path):
    regular = tmp_path / "train.dat"
    regular.write_bytes(TRAIN)
    assert learn_main(["-v", "0", str(regular), str(tmp_path / "regular.json")]) == 0
    return json.loads((tmp_path / "regular.json").read_text())


@pytest.mark.parametrize("compress", [False, True])
def test_a_fifo_as_training_file_is_read_once(tmp_path, compress):
    """The index-file sniff and the swapped-arguments check read the head of the training
    file before the reader did: a FIFO lost it ("empty file", or a hang)."""
    expected = _model_from_regular_file(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    content = gzip.compress(TRAIN) if compress else TRAIN

    def write():
        with open(fifo, "wb") as handle:
            handle.write(content)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    done = subprocess.run([shutil.which("svmmap_learn"), "-v", "0", str(fifo),
                           str(tmp_path / "m.json")], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "m.json").read_text()) == expected


@pytest.mark.parametrize("name", ["/dev/stdin", "-"])
def test_piped_standard_input_is_read_once(tmp_path, name):
    expected = _model_from_regular_file(tmp_path)
    done = subprocess.run([shutil.which("svmmap_learn"), "-v", "0", name,
                           str(tmp_path / "m.json")], input=TRAIN, capture_output=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "m.json").read_text()) == expected


def test_dask_workers_beyond_the_limit_are_refused_before_any_work(tmp_path, capsys):
    """--dask-workers 1000 started 87 processes and 3 GB within 45 s."""
    limit = max_dask_workers()
    assert limit >= min(4, os.cpu_count() or 1)
    with pytest.raises(SystemExit) as exit_:
        learn_main(["--dask-workers", str(limit + 1), str(tmp_path / "t"),
                    str(tmp_path / "m")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --dask-workers: at most {limit} worker processes" in err
    assert "Traceback" not in err
