"""README.md shows what the commands print: every fenced block with ``$ command`` lines is run
(in a scratch directory that sees the repository's data/), and each command's standard output
must match the lines shown under it.  In the expected text, ``...`` inside a line matches any
characters, and a line that is only ``...`` matches any number of lines.  Progress goes to
standard error and is not part of what README shows."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
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
