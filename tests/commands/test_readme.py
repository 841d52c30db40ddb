"""README.md (the front door) and the manual (docs/pages)
show what the commands print: every fenced block with ``$ command`` lines is run (in a scratch
directory that sees the repository's data/; the manual's pages in the order of its nav, one
directory for all of them, so a page may use what an earlier one wrote), and each command's
standard output must match the lines shown under it.  In the expected text, ``...`` inside a
line matches any characters, and a line that is only ``...`` matches any number of lines.
Progress goes to standard error and is not part of what the documents show.  Their Python
blocks run too (the manual's blocks that include an example script, ``--8<--``, are run by
the docs build: tests/commands/test_docs.py)."""

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
PYTHON_FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
MKDOCS_CONFIG = ROOT / "docs" / "mkdocs.yml"


def manual_pages():
    """The manual's Markdown pages in the order of mkdocs.yml's nav."""
    if not MKDOCS_CONFIG.is_file():
        return []
    config = MKDOCS_CONFIG.read_text(encoding="utf-8")
    pages = MKDOCS_CONFIG.parent / re.search(r"^docs_dir: (\S+)$", config, re.M).group(1)
    entries = re.findall(r'^\s+- (?:"[^"]*"|[^:"]+): (\S+\.md)$', config, re.M)
    return [pages / name for name in entries]


#: name -> the files that are checked together, in order
DOCUMENTS = {name: files for name, files in {
    "README.md": [ROOT / "README.md"],
    "docs/pages": manual_pages(),
}.items() if files and all(f.is_file() for f in files)}


def document_text(name):
    return "\n".join(f.read_text(encoding="utf-8") for f in DOCUMENTS[name])


def python_blocks(text):
    """The ```python blocks of ``text`` that hold code (not a snippet include)."""
    return [block for block in PYTHON_FENCE.findall(text)
            if not block.lstrip().startswith("--8<--")]


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


def test_the_manual_is_checked():
    """The manual's pages are found (a renamed config or nav would silently check nothing)."""
    assert "docs/pages" in DOCUMENTS, "docs/mkdocs.yml or a page of its nav is missing"
    assert len(DOCUMENTS["docs/pages"]) >= 10
    assert any(sessions(f.read_text()) for f in DOCUMENTS["docs/pages"])


@pytest.mark.parametrize("document", sorted(DOCUMENTS))
def test_readme_commands_print_what_readme_shows(document, tmp_path):
    found = sessions(document_text(document))
    assert len(found) >= 4, f"{document}'s quick start has no $ commands"
    (tmp_path / "data").symlink_to(ROOT / "data")
    if shutil.which("svmmap_learn") is None:
        pytest.fail("svmmap_learn is not installed: run the install command of README.md")
    env = dict(os.environ, COLUMNS="80")
    for command, expected in found:
        proc = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True,
                              text=True, env=env, executable="/bin/bash")
        assert proc.returncode == 0, f"{document}: $ {command}\n{proc.stderr}"
        actual = proc.stdout.splitlines()
        assert matches(expected, actual), (
            f"{document}: $ {command}\nit shows:\n" + "\n".join(expected)
            + "\nthe command prints:\n" + proc.stdout)


@pytest.mark.parametrize("document", sorted(DOCUMENTS))
def test_readme_python_runs(document, tmp_path, monkeypatch, capsys):
    """The Python blocks run as written, in order, and the first line printed is the MAP the
    quick start's comment states."""
    blocks = python_blocks(document_text(document))
    assert blocks
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, document, "exec"), {})
    shown = next(re.search(r"MAP \(LETOR convention\): ([0-9.]+)", block).group(1)
                 for block in blocks if "MAP (LETOR convention)" in block)
    assert capsys.readouterr().out.splitlines()[0] == shown


DASK_DOCUMENTS = [name for name in sorted(DOCUMENTS)
                  if any("svmmap.dask" in block for block in python_blocks(document_text(name)))]


def test_the_dask_script_is_shown():
    assert "docs/pages" in DASK_DOCUMENTS


@pytest.mark.parametrize("document", DASK_DOCUMENTS)
def test_readme_dask_script_runs_as_a_script(document, tmp_path):
    """The Dask section's Python is a script (worker processes import it: the work sits under
    ``if __name__ == "__main__":``); run as ``python script.py`` it trains and scores."""
    pytest.importorskip("dask.distributed")
    scripts = [block for block in python_blocks(document_text(document))
               if "svmmap.dask" in block]
    assert len(scripts) == 1 and 'if __name__ == "__main__":' in scripts[0]
    (tmp_path / "dask_example.py").write_text(scripts[0])
    proc = subprocess.run([sys.executable, "dask_example.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert re.fullmatch(r"9630 documents scored, MAP 0\.\d{4}\n46 weights\n", proc.stdout)
    assert (tmp_path / "model.json").is_file()


def documents_with(heading):
    """The texts of the documents that hold ``heading`` (README now, the manual's page after
    README becomes the front door); at least one must."""
    texts = [document_text(name) for name in sorted(DOCUMENTS) if heading in document_text(name)]
    assert texts, f"no document holds {heading!r}"
    return texts


def _table_after(text, heading):
    """{first cell: [other cells]} of the body rows of the first Markdown table after
    ``heading``."""
    table = text.split(heading, 1)[1].split("\n\n|", 1)[1].split("\n\n", 1)[0]
    rows = {}
    for line in table.splitlines()[2:]:  # below the header and its rule
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


LETOR_HEADING = "OHSUMED (LETOR 3.0, QueryLevelNorm), 5-fold test MAP"


@pytest.mark.parametrize("readme", documents_with(LETOR_HEADING))
def test_readme_letor_table_is_letor_json(readme):
    """Every svmmap figure of the LETOR table (README's, the manual's) is the mean test MAP
    over the folds that the file it cites records, and the text quotes the command that file
    records."""
    results = json.loads((ROOT / "benchmarks/results/letor_ohsumed/letor.json").read_text())
    assert f"`{results['command']}`" in readme.replace("\n", " ")
    means = {m["label"]: float(np.mean([fold["MAP"] for fold in m["folds"].values()]))
             for m in results["methods"].values()}
    rows = _table_after(readme, LETOR_HEADING)
    shown = {label: cells[0] for label, cells in rows.items() if cells[0] != "-"}
    assert len(shown) == 8
    for label, figure in shown.items():
        assert f"{means[label]:.4f}" == figure, label


@pytest.mark.parametrize("readme", documents_with("**What we find**"))
def test_readme_trials_table_and_commands_are_the_recorded_ones(readme):
    """The SVM figures of the trials table (README's, the manual's) are the mean trial MAPs of
    the trials.json each row cites, and the text shows the command each file records."""
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
