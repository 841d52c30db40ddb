"""README.md shows what the commands print: every fenced block with ``$ command`` lines is run
(in a scratch directory that sees the repository's data/), and each command's standard output
must match the lines shown under it.  In the expected text, ``...`` inside a line matches any
characters, and a line that is only ``...`` matches any number of lines.  Progress goes to
standard error and is not part of what README shows."""

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT

FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)


def sessions(text):
    """[(command, expected output lines)] of the fenced blocks that hold ``$ `` lines."""
    found = []
    for block in FENCE.findall(text):
        lines = block.splitlines()
        if not any(line.startswith("$ ") for line in lines):
            continue
        for line in lines:
            if line.startswith("$ "):
                found.append((line[2:], []))
            elif found:
                found[-1][1].append(line)
    return found


def line_pattern(expected):
    return re.compile(".*".join(map(re.escape, expected.split("..."))) + r"\Z")


def matches(expected, actual):
    """Do the ``actual`` lines match the ``expected`` ones (``...`` wildcards)?"""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "...":
        return any(matches(rest, actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and bool(line_pattern(head).match(actual[0])) and \
        matches(rest, actual[1:])


def test_matcher():
    assert matches(["MAP: ...", "...", "end"], ["MAP: 0.45", "a", "b", "end"])
    assert not matches(["MAP: 0.4503"], ["MAP: 0.4502"])
    assert not matches(["a"], ["a", "b"])
    assert sessions("```\n$ x\n1\n$ y\n```\n```\nno\n```\n") == [("x", ["1"]), ("y", [])]


def test_readme_commands_print_what_readme_shows(tmp_path):
    found = sessions((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(found) >= 4, "README's quick start has no $ commands"
    (tmp_path / "data").symlink_to(ROOT / "data")
    if shutil.which("svmmap_learn") is None:
        pytest.fail("svmmap_learn is not installed: run the install command of README.md")
    env = dict(os.environ, COLUMNS="80")
    for command, expected in found:
        proc = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True,
                              text=True, env=env, executable="/bin/bash")
        assert proc.returncode == 0, f"$ {command}\n{proc.stderr}"
        actual = proc.stdout.splitlines()
        assert matches(expected, actual), (
            f"$ {command}\nREADME shows:\n" + "\n".join(expected)
            + "\nthe command prints:\n" + proc.stdout)


def test_readme_python_runs(tmp_path, monkeypatch, capsys):
    """The Python section runs as written and prints the MAP its comment states."""
    blocks = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(), re.S | re.M)
    assert blocks
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    shown = re.search(r"MAP \(LETOR convention\): ([0-9.]+)", blocks[0]).group(1)
    assert capsys.readouterr().out.splitlines()[0] == shown


def _python_blocks():
    return re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(), re.S | re.M)


def test_readme_dask_script_runs_as_a_script(tmp_path):
    """The Dask section's Python is a script (worker processes import it: the work sits under
    ``if __name__ == "__main__":``); run as ``python script.py`` it trains and scores."""
    pytest.importorskip("dask.distributed")
    scripts = [block for block in _python_blocks() if "svmmap.dask" in block]
    assert len(scripts) == 1 and 'if __name__ == "__main__":' in scripts[0]
    (tmp_path / "dask_example.py").write_text(scripts[0])
    proc = subprocess.run([sys.executable, "dask_example.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert re.fullmatch(r"9630 documents scored, MAP 0\.\d{4}\n46 weights\n", proc.stdout)
    assert (tmp_path / "model.json").is_file()


def _table_after(text, heading):
    """{first cell: [other cells]} of the body rows of the first Markdown table after
    ``heading``."""
    table = text.split(heading, 1)[1].split("\n\n|", 1)[1].split("\n\n", 1)[0]
    rows = {}
    for line in table.splitlines()[2:]:  # below the header and its rule
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def test_readme_letor_table_is_letor_json():
    """Every svmmap figure of README's LETOR table is the mean test MAP over the folds that the
    file it cites records, and README quotes the command that file records."""
    readme = (ROOT / "README.md").read_text()
    results = json.loads((ROOT / "benchmarks/results/letor_ohsumed/letor.json").read_text())
    assert f"`{results['command']}`" in readme.replace("\n", " ")
    means = {m["label"]: float(np.mean([fold["MAP"] for fold in m["folds"].values()]))
             for m in results["methods"].values()}
    rows = _table_after(readme, "OHSUMED (LETOR 3.0, QueryLevelNorm), 5-fold test MAP")
    shown = {label: cells[0] for label, cells in rows.items() if cells[0] != "-"}
    assert len(shown) == 8
    for label, figure in shown.items():
        assert f"{means[label]:.4f}" == figure, label


def test_readme_trials_table_and_commands_are_the_recorded_ones():
    """The SVM figures of README's trials table are the mean trial MAPs of the trials.json
    each row cites, and README shows the command each file records."""
    readme = (ROOT / "README.md").read_text()
    rows = _table_after(readme, "**What we find**")
    pools = {"OHSUMED": "trials_ohsumed", "MQ2008 Fold1 test": "trials_mq2008",
             "MQ2008 all five folds": "trials_mq2008_all"}
    columns = {"svm-map": 0, "svm-roc": 1, "svm-acc2": 2}
    assert len(rows) == 3
    for pool, cells in rows.items():
        folder = next(f for name, f in pools.items() if pool.startswith(name + ","))
        results = json.loads((ROOT / "benchmarks/results" / folder / "trials.json").read_text())
        assert results["command"] in readme
        assert pool.endswith(f"({results['trials']})")
        for method, column in columns.items():
            if method in results["methods"]:
                mean = np.mean(results["methods"][method]["trial_map"])
                assert cells[column].split()[0] == f"{mean:.4f}", (pool, method)
            else:
                assert cells[column] == "not run", (pool, method)
