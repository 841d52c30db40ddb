"""Classic test collections -> TREC runs of many retrieval functions (svmmap.experiments.smart,
.text, .retrieval, .classic): parsing and the Cranfield quirks on a tiny SMART collection
written here, every scoring family against its formula evaluated directly (term by term, in
plain Python) on generated toy corpora, the run files and their MAP against pytrec_eval, and
the real collections when ../shared/data is present."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svmmap.errors import InputFormatError
from svmmap.experiments import classic, retrieval, smart, trec
from svmmap.experiments.text import Analyzer

from conftest import data_file

DOCS = """\
.I 1
.T
lift of wings
.A
someone
.W
lift of wings .
  the lift increase of a wing in a slipstream was measured .
.I 2
.T
heat transfer
.W
heat transfer in laminar boundary layers of heated plates .
.I 3
.T
.A
.B
.W
.I 4
.W
boundary layer transition on a wing at high speed ; wing flutter .
.I 1401
.W
kampus ITERA wing wing wing
"""
# queries numbered with gaps (001, 002, 004) as in cran.qry; the qrels number them 1..3
QUERIES = """\
.I 001
.W
lift of a wing
.I 002
.W
heat transfer to plates
.I 004
.W
boundary layer transition
.I 366
.W
kampus negeri
"""
QRELS = """\
1 1 1
1 4 3
1 2 -1
2 2 2
3 4 4
3 1 -1
"""


@pytest.fixture
def tiny(tmp_path):
    """A Cranfield-named tiny collection (the Cranfield spec reads it)."""
    for name, text in (("cran.all.1400", DOCS), ("cran.qry", QUERIES), ("cranqrel", QRELS)):
        (tmp_path / name).write_text(text)
    return tmp_path


def tiny_spec(**changes):
    fields = dict(name="tiny", documents="cran.all.1400", queries="cran.qry", qrels="cranqrel",
                  renumber_queries=True, max_document=4, max_query=3, grades="cranfield")
    fields.update(changes)
    return smart.Spec(**fields)


def test_read_smart_fields_and_ids(tiny):
    records = smart.read_smart(tiny / "cran.qry")
    assert [i for i, _ in records] == ["1", "2", "4", "366"]      # "001" -> "1"
    docs = dict(smart.read_smart(tiny / "cran.all.1400"))
    assert docs["1"]["A"] == "someone"
    assert docs["1"]["W"].splitlines()[1].strip().startswith("the lift increase")
    assert docs["3"] == {"T": "", "A": "", "B": "", "W": ""}


def test_cranfield_quirks(tiny):
    c = smart.load(tiny_spec(), tiny)
    assert list(c.queries) == ["1", "2", "3"]          # renumbered in file order, 366 dropped
    assert c.queries["3"] == "boundary layer transition"  # was .I 004: the qrels' query 3
    assert list(c.documents) == ["1", "2", "3", "4"]   # 1401 (not Cranfield) left out
    assert c.documents["1"].startswith("lift of wings\nlift of wings")  # .T then .W, not .A
    # grades: code 1 (complete answer) -> 4 ... code 4 -> 1; -1 (no interest) -> 0
    assert c.qrels == {"1": {"1": 4, "4": 2, "2": 0}, "2": {"2": 3}, "3": {"4": 1, "1": 0}}
    # the real Cranfield spec on the same files drops nothing up to its limits
    real = smart.load("cranfield", tiny)
    assert list(real.queries) == ["1", "2", "3", "4"]
    assert "1401" not in real.documents


@pytest.mark.parametrize("text, line, message", [
    ("stray\n.I 1\n.W\nx\n", 1, "text before the first"),
    (".I 1\n.W\nx\n.I 01\n.W\ny\n", 4, "given twice"),
    (".I one\n.W\nx\n", 1, "not an integer"),
])
def test_read_smart_errors_name_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "bad.all"
    path.write_text(text)
    with pytest.raises(InputFormatError, match=message) as err:
        smart.read_smart(path)
    assert str(err.value).startswith(f"{path}:{line}:")


@pytest.mark.parametrize("text, grades, line, message", [
    ("1 2 1\n1 3 5\n", "cranfield", 2, "relevance code 5"),
    ("1 2\n1\n", "binary", 2, "at least 2 fields"),
    ("1 x\n", "binary", 1, "document id 'x'"),
])
def test_read_qrels_errors(tmp_path, text, grades, line, message):
    path = tmp_path / "qrels"
    path.write_text(text)
    with pytest.raises(InputFormatError, match=message) as err:
        smart.read_qrels(path, grades)
    assert str(err.value).startswith(f"{path}:{line}:")


def test_binary_qrels_of_cisi_and_cacm_forms(tmp_path):
    path = tmp_path / "rel"
    path.write_text("\t1\t28\n\t1\t35\n01 1410  0 0\n")
    assert smart.read_qrels(path) == {"1": {"28": 1, "35": 1, "1410": 1}}


def test_judged_document_missing_is_an_error(tiny):
    (tiny / "cranqrel").write_text("1 9 1\n")
    with pytest.raises(InputFormatError, match="judged document 9"):
        smart.load(tiny_spec(), tiny)


def test_analyzer_stops_splits_and_stems():
    assert Analyzer().analyze("The Lift-Drag ratios of /destalling/ wings, a 2 b") == \
        ["lift", "drag", "ratio", "destal", "wing"]


# -- scoring functions against their formulas ---------------------------------------------

WORDS = list("abcdefg")
corpora = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12),
                   min_size=3, max_size=8)
query_lists = st.lists(st.lists(st.sampled_from(WORDS + ["zz"]), min_size=1, max_size=4),
                       min_size=1, max_size=3)


def direct(family, params, docs, query):
    """The module docstring's formula of ``family`` for every document, term by term."""
    N = len(docs)
    tf = [{t: d.count(t) for t in set(d)} for d in docs]
    dl = [len(d) for d in docs]
    avgdl = sum(dl) / N
    df = {t: sum(t in x for x in tf) for t in WORDS}
    cf = {t: sum(x.get(t, 0) for x in tf) for t in WORDS}
    total = sum(cf.values())
    qtf = {t: query.count(t) for t in set(query) if cf.get(t, 0) > 0}
    out = []
    for d in range(N):
        s = 0.0
        if family == "bm25":
            k1, b, method = params["k1"], params["b"], params["method"]
            for t, q in qtf.items():
                f = tf[d].get(t, 0)
                norm = f / (f + k1 * (1 - b + b * dl[d] / avgdl))
                if method == "lucene":
                    s += q * math.log(1 + (N - df[t] + 0.5) / (df[t] + 0.5)) * norm
                elif method == "robertson":
                    s += q * max(0.0, math.log((N - df[t] + 0.5) / (df[t] + 0.5))) * norm
                else:
                    s += q * math.log(N / df[t]) * norm * (k1 + 1)
        elif family == "dirichlet":
            mu = params["mu"]
            s = sum(q * math.log((tf[d].get(t, 0) + mu * cf[t] / total) / (dl[d] + mu))
                    for t, q in qtf.items())
        elif family == "jelinek-mercer":
            lam = params["lam"]
            s = sum(q * math.log((1 - lam) * tf[d].get(t, 0) / dl[d] + lam * cf[t] / total)
                    for t, q in qtf.items())
        elif family == "pl2":
            for t, q in qtf.items():
                f = tf[d].get(t, 0)
                if f:
                    tfn = f * math.log2(1 + params["c"] * avgdl / dl[d])
                    lam = cf[t] / N
                    s += q / (tfn + 1) * (tfn * math.log2(tfn / lam) + (lam - tfn) * math.log2(
                        math.e) + 0.5 * math.log2(2 * math.pi * tfn))
        elif family == "dph":
            for t, q in qtf.items():
                f = tf[d].get(t, 0)
                if f and f < dl[d]:
                    r = f / dl[d]
                    s += q * (1 - r) ** 2 / (f + 1) * (
                        f * math.log2(f * avgdl / dl[d] * N / cf[t])
                        + 0.5 * math.log2(2 * math.pi * f * (1 - r)))
        elif family == "f2exp":
            s = sum(q * ((N + 1) / df[t]) ** params["k"] * tf[d].get(t, 0)
                    / (tf[d].get(t, 0) + params["s"] + params["s"] * dl[d] / avgdl)
                    for t, q in qtf.items())
        out.append(s)
    return out


def smart_direct(scheme, docs, query):
    """SMART ddd.qqq scores by their definitions, one text at a time."""
    N = len(docs)
    df = {t: sum(t in d for d in docs) for t in WORDS}
    pivot = sum(len(set(d)) for d in docs) / N

    def weights(text, letters, pivot_value):
        counts = {t: text.count(t) for t in set(text) if df.get(t, 0) > 0}
        mean_tf = sum(counts.values()) / max(len(counts), 1)
        w = {}
        for t, f in counts.items():
            x = {"n": f, "l": 1 + math.log(f), "b": 1.0,
                 "L": (1 + math.log(f)) / (1 + math.log(mean_tf) if counts else 1)}[letters[0]]
            x *= math.log(N / df[t]) if letters[1] == "t" else 1.0
            w[t] = x
        if letters[2] == "c":
            norm = math.sqrt(sum(v * v for v in w.values())) or 1.0
            w = {t: v / norm for t, v in w.items()}
        elif letters[2] == "u":
            p = len(counts) if pivot_value is None else pivot_value
            w = {t: v / (0.8 * p + 0.2 * len(counts)) for t, v in w.items()}
        return w

    d_letters, q_letters = scheme.split(".")
    wq = weights(query, q_letters, None)
    return [sum(v * weights(d, d_letters, pivot).get(t, 0.0) for t, v in wq.items())
            for d in docs]


@settings(max_examples=25, deadline=None)
@given(corpora, query_lists)
def test_every_model_matches_its_formula(docs, queries):
    index = retrieval.Index(docs)
    Q = index.queries(queries)
    for model in retrieval.MODELS:
        scores = model.scores(index, queries, Q)
        assert scores.shape == (len(queries), len(docs))
        params = dict(model.params)
        for i, query in enumerate(queries):
            if model.family == "smart":
                expected = smart_direct(params["scheme"], docs, query)
            else:
                expected = direct(model.family, params, docs, query)
            np.testing.assert_allclose(scores[i], expected, rtol=1e-6, atol=1e-9,
                                       err_msg=f"{model.name}, query {query}, docs {docs}")


def test_matches_are_documents_with_a_query_term():
    index = retrieval.Index([["a", "b"], ["c"], ["b", "b"]])
    Q = index.queries([["b", "zz"], ["zz"], ["c", "a"]])
    assert index.matches(Q).tolist() == [[True, False, True], [False, False, False],
                                         [True, True, False]]


# -- runs -------------------------------------------------------------------------------


def test_cli_writes_trec_runs_qrels_and_map(tiny, tmp_path, capsys):
    out = tmp_path / "out"
    classic.main(["--collection", "cranfield", "--data", str(tiny), "--out", str(out),
                  "--depth", "2"])
    printed = capsys.readouterr().out
    names = [m.name for m in retrieval.MODELS]
    assert len(names) >= 15 and sorted(p.stem for p in (out / "runs").iterdir()) == \
        sorted(names)
    qrels = trec.read_qrels(out / "qrels.txt")
    assert qrels["1"] == {"1": 4.0, "4": 2.0, "2": 0.0}
    for name in names:
        lines = (out / "runs" / f"{name}.run").read_text().splitlines()
        tag, run = trec.read_run(out / "runs" / f"{name}.run")
        assert tag == name and all(line.split()[-1] == name for line in lines)
        ranks = {}
        for line in lines:
            q, q0, d, r, s, _ = line.split()
            assert q0 == "Q0"
            ranks.setdefault(q, []).append((int(r), float(s), d))
        for rows in ranks.values():
            assert [r for r, _, _ in rows] == list(range(1, len(rows) + 1))
            assert len(rows) <= 2                                   # --depth
            # score descending, ties by docno descending (trec_eval's order)
            keys = [(s, d) for _, s, d in rows]
            assert keys == sorted(keys, reverse=True)
        # only documents that contain a query term: query 2 (heat transfer plates) -> doc 2
        assert list(run["2"]) == ["2"]
        assert "1401" not in {d for r in run.values() for d in r}
        assert f"| {name} |" in printed


def test_run_map_is_trec_eval_map(tiny, tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    collection = smart.load(tiny_spec(), tiny)
    runs = classic.make_runs(collection, depth=1)   # depth 1: relevant documents not retrieved
    qrels = {q: {d: int(r) for d, r in j.items()} for q, j in collection.qrels.items()}
    for name, run in runs.items():
        as_dict = {q: dict(zip(docnos, map(float, scores)))
                   for q, (docnos, scores) in run.items() if docnos}
        evaluated = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(as_dict)
        expected = sum(evaluated.get(q, {"map": 0.0})["map"] for q in qrels) / len(qrels)
        value, n = classic.run_map(run, collection.qrels)
        assert n == 3 and value == pytest.approx(expected, abs=1e-12), name


def test_unknown_model_is_one_line_error(tiny, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        classic.main(["--collection", "cranfield", "--data", str(tiny), "--out",
                      str(tmp_path / "o"), "--models", "bm99"])
    assert exit_.value.code == 1
    assert "unknown model(s) bm99" in capsys.readouterr().err


# -- the real collections ---------------------------------------------------------------

@pytest.mark.parametrize("name, documents, queries, judged", [
    ("cranfield", 1400, 225, 225), ("cisi", 1460, 76, 76), ("cacm", 3204, 64, 52)])
def test_real_collections_read(name, documents, queries, judged):
    c = smart.load(name, data_file("classic", name))
    assert (len(c.documents), len(c.queries), len(c.qrels)) == (documents, queries, judged)
    assert all(any(r > 0 for r in j.values()) for j in c.qrels.values())


def test_real_cacm_runs_match_pytrec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    collection = smart.load("cacm", data_file("classic", "cacm"))
    models = [m for m in retrieval.MODELS if m.name in ("bm25-k1.2-b0.75", "dfr-dph")]
    runs = classic.make_runs(collection, models)
    qrels = {q: {d: int(r) for d, r in j.items()} for q, j in collection.qrels.items()}
    for run in runs.values():
        as_dict = {q: dict(zip(docnos, map(float, scores)))
                   for q, (docnos, scores) in run.items() if docnos}
        evaluated = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(as_dict)
        expected = np.mean([evaluated[q]["map"] for q in qrels])
        value, _ = classic.run_map(run, collection.qrels)
        assert value == pytest.approx(expected, abs=1e-12)
        assert 0.3 < value < 0.45       # BM25 / DPH on CACM: see README's figures
