"""The journal of a long experiment (issue 32 item 1): records written whole, a torn tail cut
off before the next record, every record validated on read with file and line, one writer at
a time.

A kill is simulated at every byte boundary of a record: the journal's one write of the
encoded line (journal._write) writes only the first b bytes, then the "process" dies
(a BaseException that nothing in the journal catches); the next run resumes from what is on
disk.  Each case is killed twice and resumed three times, and must end with the records of
an uninterrupted run."""

import json
import subprocess
import sys

import pytest

from svmmap.data.io import dump_svmlight
from svmmap.errors import InputFormatError, SVMMapError
from svmmap.experiments import journal as journal_module
from svmmap.experiments import trials
from svmmap.experiments.journal import Journal

from conftest import ROOT, random_collection

CONFIG = {"protocol": "test", "seed": 1, "grid": [0.1, 1.0]}
#: records of varied shapes: nested, floats that need their shortest repr, non-ASCII text
RECORDS = {
    "0": {"map": 0.1 + 0.2, "ap": {"7": 1 / 3, "9": 0.0}, "chosen": 1e-05},
    "1": {"map": 2 / 3, "label": "Méthode ✓", "pr11": [1.0, 0.5, 0.25]},
    "2": {"map": float("nan"), "end": None, "low_end_stable": True},
    "3": {"map": 1.0, "grid": list(range(5))},
}


class Killed(BaseException):
    """The writer's process dies here."""


def _killed_after(monkeypatch, unit, b):
    """Make the write of ``unit``'s record put only its first ``b`` bytes on disk, then
    die."""
    real = journal_module._write

    def write(fd, data):
        if f'"unit": "{unit}"'.encode() in data:
            real(fd, data[:b])
            raise Killed
        real(fd, data)

    monkeypatch.setattr(journal_module, "_write", write)


def _line(unit):
    return journal_module._encode({"unit": unit, "record": RECORDS[unit]})


def _run(path, monkeypatch, kill=None):
    """One run of the experiment: resume what is there, add every missing unit in order;
    ``kill``: (unit, b) where the process dies.  Returns the units the run found done."""
    monkeypatch.undo()
    if kill is not None:
        _killed_after(monkeypatch, *kill)
    with Journal(path, CONFIG, resume=True) as journal:
        found = set(journal.done)
        try:
            for unit, record in RECORDS.items():
                if unit not in journal.done:
                    journal.add(unit, record)
        except Killed:
            pass
    return found


def _assert_whole(path):
    """The journal on disk is the uninterrupted one's, record for record."""
    with Journal(path, CONFIG, resume=True) as journal:
        done = journal.done
    assert json.dumps(done, sort_keys=True) == json.dumps(RECORDS, sort_keys=True)
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == len(RECORDS) + 2


@pytest.mark.parametrize("unit", ["0", "2", "3"])
def test_killed_at_every_byte_of_a_record_then_resumed_three_times(tmp_path, monkeypatch,
                                                                    unit):
    length = len(_line(unit))
    later = str(min(int(unit) + 1, len(RECORDS) - 1))
    for b in range(length + 1):
        path = tmp_path / f"{b}.jsonl"
        assert _run(path, monkeypatch, kill=(unit, b)) == set()
        kept = {u for u in RECORDS if int(u) < int(unit)} | ({unit} if b == length else set())
        # second run: the torn tail is cut, the unit redone; killed again in a later record
        second_kill = (later, (b * 7) % len(_line(later)))
        assert _run(path, monkeypatch, kill=second_kill) == kept
        _run(path, monkeypatch)
        assert _run(path, monkeypatch) == set(RECORDS)
        _assert_whole(path)


def test_a_torn_tail_is_cut_before_the_next_record(tmp_path):
    path = tmp_path / "j.jsonl"
    with Journal(path, CONFIG) as journal:
        journal.add("0", RECORDS["0"])
    whole = path.read_bytes()
    path.write_bytes(whole + _line("1")[:10])
    with Journal(path, CONFIG, resume=True) as journal:
        assert set(journal.done) == {"0"}
        assert path.read_bytes() == whole        # cut before anything is appended
        journal.add("1", RECORDS["1"])
    assert path.read_bytes() == whole + _line("1")


@pytest.mark.parametrize("content, line, reason", [
    (b'[1, 2]\n', 1, 'line 1 is not {"config": {...}}'),
    (b'{"config": [1]}\n', 1, 'line 1 is not {"config": {...}}'),
    (b'{"config": {}, "extra": 1}\n', 1, 'line 1 is not {"config": {...}}'),
    (b'{"config": {}}\n{"unit": 0, "record": {}}\n', 2, 'expected {"unit"'),
    (b'{"config": {}}\n{"unit": "0"}\n', 2, 'expected {"unit"'),
    (b'{"config": {}}\n{"unit": "0", "record": []}\n', 2, 'expected {"unit"'),
    (b'{"config": {}}\n"text"\n', 2, 'expected {"unit"'),
    (b'{"config": {}}\n{"unit": "0", "record": {}}\n{"unit": "0", "record": {}}\n', 3,
     "unit '0' recorded twice"),
    (b'{"config": {}}\n{"unit": "0", "record": {"a": "\xff"}}\n', 2, "not UTF-8"),
    (b'{"config": {}}\nnot json\n{"unit": "0", "record": {}}\n', 2, "not JSON"),
    # what the old journal did after a torn line: the next record appended onto it
    (b'{"config": {}}\n{"unit": "0", "record": {"m{"unit": "0", "record": {}}\n', 2,
     "not JSON"),
])
def test_a_bad_journal_is_one_error_naming_file_and_line(tmp_path, content, line, reason):
    path = tmp_path / "j.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputFormatError) as err:
        Journal(path, {}, resume=True)
    assert str(err.value).startswith(f"{path}:{line}: ")
    assert reason in str(err.value)
    assert path.read_bytes() == content           # never changed


def test_a_directory_in_the_journals_place(tmp_path):
    path = tmp_path / "j.jsonl"
    path.mkdir()
    with pytest.raises(InputFormatError, match="is a directory, not a journal"):
        Journal(path, {}, resume=True)


def test_one_writer_at_a_time(tmp_path):
    path = tmp_path / "j.jsonl"
    with Journal(path, CONFIG) as first:
        first.add("0", RECORDS["0"])
        with pytest.raises(SVMMapError, match="another run is writing this journal"):
            Journal(path, CONFIG, resume=True)
    with Journal(path, CONFIG, resume=True) as again:
        assert set(again.done) == {"0"}


def test_a_journal_of_the_previous_release_resumes(tmp_path):
    """The format is unchanged: a journal written by the previous release (its bytes,
    json.dumps of each entry and a newline) is read back, a torn last line included."""
    path = tmp_path / "j.jsonl"
    old = [json.dumps({"config": CONFIG}), json.dumps({"unit": "0", "record": RECORDS["0"]})]
    path.write_text("\n".join(old) + "\n" + '{"unit": "1", "rec')
    with Journal(path, CONFIG, resume=True) as journal:
        assert json.dumps(journal.done) == json.dumps({"0": RECORDS["0"]})


# -- the command ------------------------------------------------------------------------

TRIAL_ARGS = ["--trials", "3", "--sizes", "3,2,5", "--bin", "0", "--methods",
              "svm-map,best-feature", "--grid", "0.1,1", "--seed", "3", "-q"]


@pytest.fixture(scope="module")
def pool_file(tmp_path_factory):
    X, y, qid = random_collection(7, n_queries=20, docs=(5, 8), rate=0.3)
    path = tmp_path_factory.mktemp("data") / "pool.txt"
    dump_svmlight(path, X, y, qid)
    return path


def _tables(out):
    """trials.json without the session's wall times and command; trials.csv without the
    seconds column."""
    results = json.loads((out / "trials.json").read_text())
    for key in ("seconds", "command"):
        results.pop(key)
    for entry in results["methods"].values():
        entry.pop("seconds")
    csv = [line.rsplit(",", 1)[0] for line in (out / "trials.csv").read_text().splitlines()]
    return results, csv


def test_trials_killed_in_records_then_resumed_three_times(pool_file, tmp_path, monkeypatch):
    """The command killed at a few byte boundaries of trial 1's record (the first byte, the
    middle, the byte before the newline, after the newline) and then of trial 2's, resumed
    to the uninterrupted tables."""
    args = ["--data", str(pool_file), *TRIAL_ARGS]
    whole = tmp_path / "whole"
    trials.main([*args, "--out", str(whole)])
    expected = _tables(whole)
    length = len((whole / "trials.jsonl").read_bytes().split(b"\n")[1]) + 1
    for b in (0, length // 2, length - 1, length):
        out = tmp_path / f"cut{b}"
        for unit in ("1", "2"):
            _killed_after(monkeypatch, unit, b)
            with pytest.raises(Killed):
                trials.main([*args, "--out", str(out), "--resume"])
            monkeypatch.undo()
        trials.main([*args, "--out", str(out), "--resume"])
        assert _tables(out) == expected
        lines = (out / "trials.jsonl").read_bytes().split(b"\n")
        assert lines[-1] == b"" and sorted(json.loads(x)["unit"] for x in lines[1:-1]) == \
            ["0", "1", "2"]


def test_a_bad_journal_is_one_line_from_the_command(pool_file, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "trials.jsonl").write_bytes(b'{"config": {}}\n\xff\xfe\n')
    result = subprocess.run([sys.executable, "-m", "svmmap.experiments.trials", "--data",
                             str(pool_file), "--out", str(out), "--resume", *TRIAL_ARGS],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 1
    assert result.stderr == f"error: {out / 'trials.jsonl'}:2: not a journal line (not " \
                            "UTF-8 text)\n"
