"""One command from a directory of TREC runs and a qrels file to the paper's Tables 6-11
layout (svmmap.experiments.trec_tables), tested on runs made by svmmap.experiments.classic
over a generated collection and written in TREC's run format."""

import json

import numpy as np
import pytest

from svmmap.experiments import classic, retrieval, trec, trec_tables
from svmmap.experiments.smart import Collection

WORDS = [f"w{i}" for i in range(40)]
MODELS = [m for m in retrieval.MODELS
          if m.name in ("bm25-k1.2-b0.75", "tfidf-bnn.btn", "ql-dirichlet-mu500", "dfr-dph")]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """60 queries over 150 documents; a document is relevant to a query when it holds at
    least two of the query's three words (one relevant document is always planted)."""
    rng = np.random.default_rng(5)
    documents = {str(d): " ".join(rng.choice(WORDS, 12)) for d in range(1, 151)}
    queries, qrels = {}, {}
    for q in range(1, 61):
        words = rng.choice(WORDS, 3, replace=False)
        queries[str(q)] = " ".join(words)
        planted = str(rng.integers(1, 151))
        documents[planted] += " " + " ".join(words)
        qrels[str(q)] = {d: int(sum(w in text.split() for w in words) >= 2)
                         for d, text in documents.items()}
    collection = Collection("generated", documents, queries, qrels)
    folder = tmp_path_factory.mktemp("runs")
    (folder / "runs").mkdir()
    made = classic.make_runs(collection, MODELS)
    for name, run in made.items():
        (folder / "runs" / f"{name}.txt").write_text("".join(classic.run_lines(run, name)))
    (folder / "qrels").write_text("".join(classic.qrels_lines(qrels)))
    return folder, {name: classic.run_map(run, qrels)[0] for name, run in made.items()}


def test_runs_directory_to_tables(runs, tmp_path, capsys):
    folder, maps = runs
    out = tmp_path / "out"
    trec_tables.main(["--runs", str(folder / "runs"), "--qrels", str(folder / "qrels"),
                      "--out", str(out), "--trials", "2", "--sizes", "2,1,50", "--methods",
                      "svm-map,svm-roc,best-feature", "--grid", "0.1,1", "-q"])
    best = max(maps, key=maps.get)
    assert f"best run {best}" in capsys.readouterr().out
    md = (out / "tables.md").read_text()
    # the runs' MAP table, best first, as trec_eval computes it
    for name, value in maps.items():
        assert f"| {name} | {name}.txt | {value:.4f} |" in md
    assert md.index(f"| {best} |") < min(md.index(f"| {n} |") for n in maps if n != best)
    # one table per data set, each in the paper's layout
    assert "## All runs (4 base functions)" in md
    assert "## Without the best run (3 base functions)" in md
    for section in md.split("\n## ")[1:]:
        for row in ("| SVM-MAP | ", "| SVM-ROC | ", "| Best base function (feature ",
                    "| 2nd best base function", "| 3rd best base function"):
            assert row in section
    features = json.loads((out / "without_best" / "data" / "features.json").read_text())
    assert best not in features.values() and len(features) == 3
    assert set(json.loads((out / "all" / "data" / "features.json").read_text()).values()) \
        == set(maps)
    X, _, _, _, tags = trec.build(sorted((folder / "runs").iterdir()), folder / "qrels")
    assert X.shape[1] == 4 and set(tags) == set(maps)


def test_too_few_runs_is_one_line_error(tmp_path, capsys):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a").write_text("1 Q0 d 1 1.0 a\n")
    with pytest.raises(SystemExit) as exit_:
        trec_tables.main(["--runs", str(tmp_path / "runs"), "--qrels", str(tmp_path / "q"),
                          "--out", str(tmp_path / "o")])
    assert exit_.value.code == 1
    assert "need at least two run files, found 1" in capsys.readouterr().err


def test_without_best_drops_the_best_file_not_every_run_with_its_tag(runs, tmp_path):
    """Another run file carrying the best run's tag stays in the second data set (the paper's
    Tables 8 and 11 leave out one run, the best)."""
    folder, maps = runs
    best = max(maps, key=maps.get)
    worst = min(maps, key=maps.get)
    copied = tmp_path / "runs"
    copied.mkdir()
    for path in (folder / "runs").iterdir():
        text = path.read_text()
        if path.stem == worst:  # the worst run, renamed with the best run's tag
            text = text.replace(f" {worst}\n", f" {best}\n")
        (copied / path.name).write_text(text)
    out = tmp_path / "out"
    trec_tables.main(["--runs", str(copied), "--qrels", str(folder / "qrels"), "--out",
                      str(out), "--trials", "1", "--sizes", "2,1,50", "--methods",
                      "best-feature", "-q"])
    names = json.loads((out / "without_best" / "data" / "features.json").read_text())
    assert len(names) == 3
    assert f"{best} ({worst}.txt)" in names.values()
    assert f"{best} ({best}.txt)" not in names.values()


def test_selection_by_run_list_and_title_only_tags(tmp_path):
    assert [t for t in ("apl9t", "apl9td", "apl9tdn", "apl9lt", "iswt", "iswtdn", "Mer9Wt0",
                        "Mer9WtdMr", "Flab9atN", "Flab9atdN", "PuShortBase", "PuLongBase",
                        "jscbt9wls1", "jscbt9wll2", "xvsmtitle", "xvsmtdn", "CWI0000")
            if trec_tables.is_title_only(t)] == \
        ["apl9t", "apl9lt", "iswt", "Mer9Wt0", "Flab9atN", "PuShortBase", "jscbt9wls1",
         "xvsmtitle"]
    runs = tmp_path / "runs"
    runs.mkdir()
    for tag in ("apl9t", "apl9td", "man1", "CWI0000"):
        (runs / f"input.{tag}").write_text(f"1 Q0 d1 1 1.0 {tag}\n")
    listing = tmp_path / "runs.tsv"
    listing.write_text("run\ttype\ttask\tofficial_map\n" + "".join(
        f"{t}\t{'manual' if t == 'man1' else 'automatic'}\tcontent-only\t0.1\n"
        for t in ("apl9t", "apl9td", "man1", "CWI0000")))
    files = trec_tables.run_files(runs)
    kept, tags, said = trec_tables.select_runs(
        files, ["automatic", "not-title-only"], trec_tables.read_run_list(listing), listing)
    assert tags == ["CWI0000", "apl9td"] and said.endswith("2 of 4 runs")
    with pytest.raises(trec_tables.SVMMapError, match="needs --run-list"):
        trec_tables.select_runs(files, ["automatic"])
    listing.write_text("run\ttype\ttask\napl9t\tautomatic\tcontent-only\n")
    with pytest.raises(trec_tables.InputFormatError,
                       match=r"runs.tsv: run 'CWI0000' \(input.CWI0000\) is not in"):
        trec_tables.select_runs(files, ["automatic"], trec_tables.read_run_list(listing),
                                listing)
    listing.write_text("name,kind\n")
    with pytest.raises(trec_tables.InputFormatError, match="runs.tsv:1: a run list is a TSV"):
        trec_tables.read_run_list(listing)


def test_bad_experiment_arguments_are_one_line_naming_what_is_wrong(runs, tmp_path, capsys):
    """Issue 32's experiment cases: a zero in --sizes, an empty --models list, qrels of other
    topics (the qrels file named), each one line, before any output exists."""
    from svmmap.experiments import trials

    folder, _ = runs
    with pytest.raises(SystemExit) as exit_:
        trials.main(["--data", str(folder / "qrels"), "--out", str(tmp_path / "t"),
                     "--sizes", "2,0,1"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "bad --sizes '2,0,1'" in err
    assert not (tmp_path / "t").exists()
    with pytest.raises(SystemExit) as exit_:
        classic.main(["--collection", "cacm", "--data", str(tmp_path), "--out",
                      str(tmp_path / "c"), "--models", ","])
    err = capsys.readouterr().err.strip()
    assert exit_.value.code == 1 and "--models lists no model" in err
    other = tmp_path / "other_qrels"
    other.write_text("999 0 d1 1\n")
    with pytest.raises(SystemExit) as exit_:
        trec_tables.main(["--runs", str(folder / "runs"), "--qrels", str(other), "--out",
                          str(tmp_path / "o"), "-q"])
    err = capsys.readouterr().err.strip()
    assert exit_.value.code == 1 and len(err.splitlines()) == 1
    assert f"{other}: no topic of the qrels was retrieved by any run" in err
    assert not (tmp_path / "o").exists()
