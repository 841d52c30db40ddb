"""TREC runs and qrels (svmmap.data.trec_run, ``svmmap_classify --run / --run-tag / --qrels``):
svmmap's trec_eval-convention figures equal ir_measures' (pytrec_eval backend) on the written
files for AP, nDCG@k, nDCG, P@k, RR and R-prec -- generated collections full of tied scores,
graded and negative labels, docnos or document numbers -- and the command writes LETOR's
docids, or line numbers, with the tag asked for."""

import gzip
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svmmap import SVMMap, load_svmlight, metrics
from svmmap.data import trec_run
from svmmap.errors import InputFormatError

from conftest import ROOT

ir_measures = pytest.importorskip("ir_measures")
from ir_measures import AP, RR, P, Rprec, nDCG  # noqa: E402

MEASURES = {  # svmmap's function of (scores, labels, qid, docnos) -> ir_measures' measure
    "map": (lambda *a: metrics.mean_average_precision(*a[:3], convention="trec_eval",
                                                      docnos=a[3]), AP),
    "ndcg": (lambda *a: metrics.evaluate(*a[:3], convention="trec_eval", docnos=a[3],
                                         measures="ndcg")["NDCG"], nDCG),
    "rr": (lambda *a: metrics.mean_reciprocal_rank(*a[:3], convention="trec_eval",
                                                   docnos=a[3]), RR),
    "rprec": (lambda *a: metrics.r_precision(*a[:3], convention="trec_eval", docnos=a[3]),
              Rprec),
    **{f"ndcg@{k}": (lambda *a, k=k: metrics.ndcg_at_k(*a[:3], k=k, convention="trec_eval",
                                                       docnos=a[3]), nDCG @ k)
       for k in (1, 3, 10)},
    **{f"p@{k}": (lambda *a, k=k: metrics.precision_at_k(*a[:3], k=k, convention="trec_eval",
                                                         docnos=a[3]), P @ k)
       for k in (1, 5, 10)},
}


def _ir_measures(tmp_path, qid, docnos, scores, labels):
    """ir_measures' figures (pytrec_eval backend) on the run and qrels svmmap writes."""
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    trec_run.write_run(run, qid, docnos, scores, "t")
    trec_run.write_qrels(qrels, qid, docnos, labels)
    provider = ir_measures.pytrec_eval
    wanted = [measure for _, measure in MEASURES.values()]
    return provider.calc_aggregate(wanted, list(ir_measures.read_trec_qrels(str(qrels))),
                                   list(ir_measures.read_trec_run(str(run))))


@st.composite
def collections(draw):
    n_queries = draw(st.integers(1, 5))
    sizes = draw(st.lists(st.integers(1, 14), min_size=n_queries, max_size=n_queries))
    m = sum(sizes)
    qid = np.repeat([f"q{i}" for i in range(n_queries)], sizes)
    scores = np.array(draw(st.lists(st.integers(0, 3), min_size=m, max_size=m)), float)
    labels = np.array(draw(st.lists(st.integers(-1, 3), min_size=m, max_size=m)), float)
    named = draw(st.booleans())
    docnos = None
    if named:  # distinct within a query, in an order unrelated to the rows
        pool = draw(st.permutations([f"D{j}-{c}" for j in range(max(sizes)) for c in "ab"]))
        docnos = np.concatenate([pool[:s] for s in sizes])
    order = draw(st.permutations(range(m)))  # a query's documents need not be contiguous
    return (qid[order], scores[order], labels[order],
            None if docnos is None else docnos[order])


@settings(max_examples=60, deadline=None)
@given(collections())
def test_figures_equal_ir_measures_pytrec_eval_with_ties(tmp_path_factory, data):
    qid, scores, labels, docnos = data
    if docnos is None:  # what the command writes without docids: document numbers
        written = trec_run.document_numbers(len(scores))
    else:
        written = docnos
    expected = _ir_measures(tmp_path_factory.mktemp("trec"), qid, written, scores, labels)
    for name, (ours, measure) in MEASURES.items():
        value = ours(scores, labels, qid, docnos)
        assert value == pytest.approx(expected[measure], abs=1e-9), name


def test_run_order_and_qrels_lines(tmp_path):
    qid = ["b", "a", "b", "b", "a"]
    lines = trec_run.run_lines(qid, ["x1", "y1", "x3", "x2", "y2"],
                               [1.0, 0.5, 2.0, 1.0, 0.5], tag="mine")
    assert lines == ["b Q0 x3 1 2.0 mine\n", "b Q0 x2 2 1.0 mine\n", "b Q0 x1 3 1.0 mine\n",
                     "a Q0 y2 1 0.5 mine\n", "a Q0 y1 2 0.5 mine\n"]
    assert trec_run.qrels_lines(["a", "a"], ["d1", "d2"], [-1, 2]) == ["a 0 d1 0\n",
                                                                        "a 0 d2 2\n"]
    with pytest.raises(InputFormatError, match="'d1' appears twice in query a"):
        trec_run.run_lines(["a", "a"], ["d1", "d1"], [1, 2])
    with pytest.raises(InputFormatError, match="one word"):
        trec_run.run_lines(["a"], ["d1"], [1], tag="two words")
    with pytest.raises(InputFormatError, match="integer labels"):
        trec_run.qrels_lines(["a"], ["d1"], [0.5])
    assert trec_run.docnos_from_comments(["docid = GX1 inc = 1", "X2"]) == ["GX1", "X2"]
    assert trec_run.docnos_from_comments(["docid = GX1", ""]) == ["1", "2"]
    assert trec_run.document_numbers(10)[:2] == ["01", "02"]


def _classify(tmp_path, data, *options):
    X, y, qid = load_svmlight(data)
    model = tmp_path / "model.json"
    SVMMap(C=1.0).fit(X, y, qid).save(model)
    proc = subprocess.run(
        [shutil.which("svmmap_classify"), str(data), str(model),
         str(tmp_path / "pred.txt"), "--convention", "trec_eval",
         "--metrics", "map,ndcg@10,p@5,mrr", "--run", str(tmp_path / "run.txt"),
         "--qrels", str(tmp_path / "qrels.txt"), *options],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    shown = dict(line.split(": ") for line in proc.stdout.splitlines()[1:])
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "qrels.txt")))
    run = list(ir_measures.read_trec_run(str(tmp_path / "run.txt")))
    expected = ir_measures.pytrec_eval.calc_aggregate([AP, nDCG @ 10, P @ 5, RR], qrels, run)
    for name, measure in (("MAP", AP), ("NDCG@10", nDCG @ 10), ("P@5", P @ 5),
                          ("MRR", RR)):
        assert float(shown[name]) == pytest.approx(expected[measure], abs=5e-5), name
    return (tmp_path / "run.txt").read_text().splitlines()


def test_classify_writes_letor_docids(tmp_path):
    data = tmp_path / "test.txt"
    with gzip.open(ROOT / "data" / "MQ2008" / "Fold1" / "test.txt.gz", "rt") as handle:
        lines = handle.readlines()[:400]
    data.write_text("".join(lines))
    run = _classify(tmp_path, data, "--run-tag", "svm_map")
    first = lines[0].split("#docid = ")[1].split()[0]
    assert any(line.split()[2] == first for line in run)
    assert all(line.split()[5] == "svm_map" for line in run) and len(run) == 400


def test_classify_writes_line_numbers_without_docids(tmp_path):
    data = tmp_path / "plain.txt"
    data.write_text("".join(f"{int(i % 3 == 0)} qid:{i // 7} 1:{i % 4} 2:{(i * 5) % 3}\n"
                            for i in range(40)))
    run = _classify(tmp_path, data)
    assert sorted(line.split()[2] for line in run) == [f"{i:02d}" for i in range(1, 41)]


def test_outputs_must_differ(tmp_path):
    proc = subprocess.run([shutil.which("svmmap_classify"), "t", "m", "same.txt", "--run",
                           "same.txt"], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2 and "must be different files" in proc.stderr


@pytest.mark.parametrize("option", ["--run", "--qrels"])
def test_an_existing_file_of_another_kind_is_not_replaced_by_a_run_or_qrels(tmp_path, option):
    """--run and --qrels replace a run / qrels file (what they write, e.g. an earlier run),
    but refuse any other existing file -- data given in the wrong place -- unless --force."""
    data = tmp_path / "plain.txt"
    data.write_text("".join(f"{int(i % 3 == 0)} qid:{i // 7} 1:{i % 4} 2:{(i * 5) % 3}\n"
                            for i in range(40)))
    _classify(tmp_path, data)  # writes run.txt, qrels.txt and the model
    written = tmp_path / ("run.txt" if option == "--run" else "qrels.txt")
    other = tmp_path / "other.txt"
    other.write_bytes(data.read_bytes())

    def classify(output, *extra):
        return subprocess.run([shutil.which("svmmap_classify"), str(data),
                               str(tmp_path / "model.json"), str(tmp_path / "pred.txt"),
                               option, str(output), *extra], capture_output=True, text=True)

    assert classify(written).returncode == 0  # a file of its own kind is replaced
    refused = classify(other)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert f"{other}: exists and is not a TREC" in refused.stderr
    assert other.read_bytes() == data.read_bytes()
    assert classify(other, "--force").returncode == 0
    assert other.read_bytes() != data.read_bytes()
