"""Tests of svmmap.metrics: pytrec_eval agreement, hand-computed LETOR values, brute force."""

import itertools
import math

import numpy as np
import pytest

from svmmap import metrics as M
from svmmap.core.collection import QueryCollection
from svmmap.errors import InputFormatError

from conftest import DATA

OHSUMED_TEST = DATA / "OHSUMED" / "Fold1" / "test.txt"

CUTS = (1, 2, 3, 5, 10, 20)


# ----------------------------------------------------------------------------- helpers


def random_collection(rng, n_queries=25, max_docs=30, n_labels=4, allow_negative=False):
    """Rows of several queries, shuffled (queries not contiguous), with many tied scores,
    graded labels and some queries without any relevant document."""
    qid, scores, labels = [], [], []
    for q in range(n_queries):
        n = int(rng.integers(1, max_docs + 1))
        qid += [f"q{q}"] * n
        # few distinct values -> many ties
        scores += list(rng.integers(0, 6, n) / 4.0 - 0.5)
        if q % 5 == 0:
            lab = np.zeros(n, dtype=int)  # no relevant document
        else:
            lab = rng.integers(0, n_labels, n)
            if allow_negative:
                lab = np.where(rng.random(n) < 0.1, -1, lab)
        labels += list(lab)
    perm = rng.permutation(len(qid))
    return (
        np.asarray(scores)[perm],
        np.asarray(labels)[perm],
        np.asarray(qid)[perm],
    )


def trec_eval_per_query(scores, labels, qid, docnos, measures):
    """pytrec_eval's per-query values: {qid: {measure: value}}."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = {}, {}
    for s, y, q, d in zip(scores, labels, qid, docnos):
        qrels.setdefault(str(q), {})[str(d)] = int(y)
        run.setdefault(str(q), {})[str(d)] = float(s)
    return pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)


def letor_reference(scores, labels, k_list=(1, 3, 5, 10)):
    """Plain-loop transcription of the LETOR Eval-Score logic for one query (independent of
    the vectorised module): stable sort by score descending, relevant = label >= 1,
    gain 2^l - 1, discount 1 at ranks 1-2 and 1/log2(r) after, ranks past the end count as
    non-relevant."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])  # stable: file order
    rates = [labels[i] for i in order]
    n_rel, ap = 0, 0.0
    for i, r in enumerate(rates):
        if r >= 1:
            n_rel += 1
            ap += n_rel / (i + 1)
    ap = ap / n_rel if n_rel else 0.0

    def dcg(rs, k):
        total = 0.0
        for i in range(min(k, len(rs))):
            g = 2.0 ** rs[i] - 1.0
            total += g if i < 2 else g * math.log(2.0) / math.log(i + 1.0)
        return total

    best = sorted(rates, reverse=True)
    out = {"ap": ap}
    for k in k_list:
        out[("p", k)] = sum(1 for r in rates[:k] if r >= 1) / k
        ideal = dcg(best, k)
        out[("ndcg", k)] = dcg(rates, k) / ideal if ideal > 0 else 0.0
    return out


def load_letor(path):
    """Minimal LETOR reader: labels, qids, docids (from '#docid = ...'), dense features."""
    labels, qids, docids, rows = [], [], [], []
    with open(path) as fh:
        for line in fh:
            body, _, comment = line.partition("#")
            tokens = body.split()
            labels.append(float(tokens[0]))
            qids.append(tokens[1].split(":", 1)[1])
            docids.append(comment.split("docid =")[1].split()[0])
            rows.append({int(i): float(v) for i, v in (t.split(":") for t in tokens[2:])})
    n_features = max(max(r) for r in rows)
    X = np.zeros((len(rows), n_features + 1))
    for j, r in enumerate(rows):
        for i, v in r.items():
            X[j, i] = v
    return X, np.asarray(labels), np.asarray(qids), np.asarray(docids)


@pytest.fixture(scope="module")
def ohsumed():
    if not OHSUMED_TEST.exists():
        pytest.skip(f"OHSUMED data not found at {OHSUMED_TEST} (shared data directory absent)")
    return load_letor(OHSUMED_TEST)


# ------------------------------------------------------------- trec_eval / pytrec_eval


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("given_docnos", [True, False])
def test_trec_eval_convention_matches_pytrec_eval(seed, given_docnos):
    rng = np.random.default_rng(seed)
    scores, labels, qid = random_collection(rng, allow_negative=True)
    m = len(scores)
    if given_docnos:
        # docnos whose string order is unrelated to row order ("d10" < "d9")
        docnos = np.array([f"d{v}" for v in rng.permutation(m) * 7 + 3])
        docnos_for_metrics = docnos
    else:
        # the documented default: row index zero-padded to a common width
        width = len(str(m - 1))
        docnos = np.array([f"{i:0{width}d}" for i in range(m)])
        docnos_for_metrics = None
    measures = ["map", "recip_rank", "ndcg"]
    measures += [f"{name}.{k}" for name in ("P", "ndcg_cut", "map_cut") for k in CUTS]
    ref = trec_eval_per_query(scores, labels, qid, docnos, measures)

    def check(kind, key, k=None):
        ids, vals = M.per_query(
            kind, scores, labels, qid, convention="trec_eval", docnos=docnos_for_metrics, k=k
        )
        # every query is listed, those without a relevant document too (trec_eval counts a
        # topic whose judgments are all non-relevant) ...
        assert list(ids) == list(dict.fromkeys(qid)) == sorted(ref, key=list(qid).index)
        # ... and each value equals pytrec_eval's
        for q, v in zip(ids, vals):
            assert v == pytest.approx(ref[q][key], abs=1e-9), (kind, key, q)
        return float(np.mean([ref[q][key] for q in ids]))

    mean = check("ap", "map")
    assert M.mean_average_precision(
        scores, labels, qid, "trec_eval", docnos=docnos_for_metrics
    ) == pytest.approx(mean, abs=1e-9)
    mean = check("rr", "recip_rank")
    assert M.mean_reciprocal_rank(
        scores, labels, qid, "trec_eval", docnos=docnos_for_metrics
    ) == pytest.approx(mean, abs=1e-9)
    mean = check("ndcg", "ndcg")
    assert M.ndcg_at_k(
        scores, labels, qid, None, "trec_eval", docnos=docnos_for_metrics
    ) == pytest.approx(mean, abs=1e-9)
    for k in CUTS:
        mean = check("p", f"P_{k}", k)
        assert M.precision_at_k(
            scores, labels, qid, k, "trec_eval", docnos=docnos_for_metrics
        ) == pytest.approx(mean, abs=1e-9)
        mean = check("ndcg", f"ndcg_cut_{k}", k)
        assert M.ndcg_at_k(
            scores, labels, qid, k, "trec_eval", docnos=docnos_for_metrics
        ) == pytest.approx(mean, abs=1e-9)
        mean = check("ap", f"map_cut_{k}", k)
        assert M.mean_average_precision(
            scores, labels, qid, "trec_eval", k=k, docnos=docnos_for_metrics
        ) == pytest.approx(mean, abs=1e-9)


def test_topic_judged_all_non_relevant_counts_with_ap_zero_in_both_conventions():
    """trec_eval / pytrec_eval average over every topic of the qrels, one whose judgments are
    all non-relevant included (AP 0); the mean over pytrec_eval's topics is svmmap's MAP."""
    scores = np.array([0.3, 0.2, 0.1, 0.9, 0.8, 0.7, 0.5, 0.4])
    labels = np.array([0, 0, 0, 0, 2, 1, 0, 1])  # q1: judged, none relevant
    qid = np.array(["q1"] * 3 + ["q2"] * 3 + ["q3"] * 2)
    docnos = [f"d{i}" for i in range(8)]
    measures = ["map", "ndcg", "recip_rank", "P_5"]
    ref = trec_eval_per_query(scores, labels, qid, docnos, measures)
    assert sorted(ref) == ["q1", "q2", "q3"] and ref["q1"]["map"] == 0.0
    for name, function in [("map", M.mean_average_precision), ("recip_rank",
                           M.mean_reciprocal_rank)]:
        expected = np.mean([ref[q][name] for q in ref])
        for convention in M.CONVENTIONS:
            assert function(scores, labels, qid, convention) == pytest.approx(expected)
    assert M.ndcg_at_k(scores, labels, qid, None, "trec_eval") == pytest.approx(
        np.mean([ref[q]["ndcg"] for q in ref]))
    assert M.precision_at_k(scores, labels, qid, 5, "trec_eval") == pytest.approx(
        np.mean([ref[q]["P_5"] for q in ref]))
    assert M.evaluate(scores, labels, qid, "trec_eval")["queries"] == 3
    # a collection whose only query has no relevant document: MAP 0, not undefined
    assert M.mean_average_precision(scores[:3], labels[:3], None, "trec_eval") == 0.0
    # dropping such queries is still available, explicitly
    ids, _ = M.per_query("ap", scores, labels, qid, convention="trec_eval", skip_empty=True)
    assert list(ids) == ["q2", "q3"]


def test_trec_eval_ties_break_by_docno_descending():
    # rows 0 and 1 tie; trec_eval ranks the larger docno first
    scores, labels = [1.0, 1.0, 0.0], [1, 0, 0]
    assert M.reciprocal_rank(scores, labels, convention="trec_eval", docnos=["b", "a", "c"]) == 1
    assert M.reciprocal_rank(scores, labels, convention="trec_eval", docnos=["a", "b", "c"]) == 0.5
    # string, not numeric, order: "9" > "10"
    assert M.reciprocal_rank(scores, labels, convention="trec_eval", docnos=[9, 10, 11]) == 1.0
    # default docnos = row index -> the later row first
    assert M.reciprocal_rank(scores, labels, convention="trec_eval") == 0.5
    # letor keeps input order
    assert M.reciprocal_rank(scores, labels) == 1.0
    ref = trec_eval_per_query(scores, labels, ["q"] * 3, ["a", "b", "c"], ["recip_rank"])
    assert ref["q"]["recip_rank"] == 0.5


def test_trec_eval_docnos_make_result_independent_of_row_order():
    rng = np.random.default_rng(7)
    scores, labels, qid = random_collection(rng)
    docnos = np.array([f"doc{i}" for i in range(len(scores))])
    before = M.evaluate(scores, labels, qid, "trec_eval", docnos=docnos)
    perm = rng.permutation(len(scores))
    after = M.evaluate(scores[perm], labels[perm], qid[perm], "trec_eval", docnos=docnos[perm])
    assert after == pytest.approx(before, abs=1e-12)


# -------------------------------------------------------------- LETOR, hand computed


def test_letor_hand_computed_single_query():
    # ranked as given: labels 2 0 1 0 1
    scores = [0.9, 0.8, 0.7, 0.6, 0.5]
    labels = [2, 0, 1, 0, 1]
    # AP = (1/1 + 2/3 + 3/5) / 3 = (34/15) / 3 = 34/45 = 0.755556
    assert M.average_precision(scores, labels) == pytest.approx(34 / 45, abs=1e-12)
    # P@1 = 1, P@3 = 2/3, P@5 = 3/5, P@10 = 3/10 (ranks 6-10 missing: non-relevant)
    assert M.precision_at_k(scores, labels, k=1) == 1.0
    assert M.precision_at_k(scores, labels, k=3) == pytest.approx(2 / 3)
    assert M.precision_at_k(scores, labels, k=5) == pytest.approx(3 / 5)
    assert M.precision_at_k(scores, labels, k=10) == pytest.approx(3 / 10)
    # gains 2^l - 1: 3 0 1 0 1; discounts 1, 1, 1/log2(3) = 0.630930, 1/2, 1/log2(5) = 0.430677
    # ideal gains 3 1 1 0 0
    # NDCG@1 = 3/3 = 1
    # NDCG@2 = (3 + 0) / (3 + 1) = 0.75
    # NDCG@3 = (3 + 0.630930) / (3 + 1 + 0.630930) = 3.630930 / 4.630930 = 0.784061
    # NDCG@5 = (3 + 0.630930 + 0.430677) / 4.630930 = 4.061607 / 4.630930 = 0.877061
    assert M.ndcg_at_k(scores, labels, k=1) == pytest.approx(1.0)
    assert M.ndcg_at_k(scores, labels, k=2) == pytest.approx(0.75)
    assert M.ndcg_at_k(scores, labels, k=3) == pytest.approx(0.784061, abs=1e-6)
    assert M.ndcg_at_k(scores, labels, k=5) == pytest.approx(0.877061, abs=1e-6)
    # 10 > 5 documents: NDCG@10 = NDCG@5 (missing ranks are non-relevant in both DCGs)
    assert M.ndcg_at_k(scores, labels, k=10) == pytest.approx(0.877061, abs=1e-6)
    assert M.ndcg_at_k(scores, labels, k=None) == pytest.approx(0.877061, abs=1e-6)
    assert M.reciprocal_rank(scores, labels) == 1.0
    # trec_eval's NDCG on the same ranking: gains 2 0 1 0 1, discounts 1/log2(r+1):
    # DCG@3 = 2 + 0 + 1/2 = 2.5; ideal 2 + 1/log2(3) + 1/2 = 3.130930 -> 0.798485
    assert M.ndcg_at_k(scores, labels, k=3, convention="trec_eval") == pytest.approx(
        0.798485, abs=1e-6
    )


def test_letor_ties_keep_input_order():
    # rows 0 and 1 tie: letor ranks row 0 (non-relevant) first
    scores, labels = [1.0, 1.0, 0.0], [0, 1, 0]
    # AP = (1/2) / 1 = 0.5 ; RR = 0.5
    assert M.average_precision(scores, labels) == 0.5
    assert M.reciprocal_rank(scores, labels) == 0.5
    # trec_eval with default docnos "0","1","2": docno descending puts row 1 first: AP = 1
    assert M.average_precision(scores, labels, convention="trec_eval") == 1.0
    # NDCG@1 letor: gain at rank 1 = 0 -> 0 ; ideal 1 -> 0.0
    assert M.ndcg_at_k(scores, labels, k=1) == 0.0


def test_query_without_relevant_document_counts_as_zero():
    scores = [0.9, 0.8, 0.7, 0.6, 0.5, 3.0, 2.0, 1.0]
    labels = [2, 0, 1, 0, 1, 0, 0, 0]
    qid = ["a"] * 5 + ["b"] * 3
    # MAP = (34/45 + 0) / 2 = 17/45 = 0.377778 in both conventions (no ties here)
    for convention in M.CONVENTIONS:
        assert M.mean_average_precision(scores, labels, qid, convention) == pytest.approx(17 / 45)
    # NDCG of query b (all labels 0): ideal DCG 0 -> NDCG 0, and it stays in the letor mean:
    # mean NDCG@3 = (0.784061 + 0) / 2 = 0.392030
    assert M.ndcg_at_k(scores, labels, qid, 3) == pytest.approx(0.392030, abs=1e-6)
    for convention in M.CONVENTIONS:
        ids, vals = M.per_query("ndcg", scores, labels, qid, k=3, convention=convention)
        assert list(ids) == ["a", "b"] and vals[1] == 0.0
    ids, _ = M.per_query("ap", scores, labels, qid, convention="trec_eval", skip_empty=True)
    assert list(ids) == ["a"]
    # MRR letor = (1 + 0) / 2
    assert M.mean_reciprocal_rank(scores, labels, qid) == 0.5
    summary = M.evaluate(scores, labels, qid)
    assert summary["queries"] == 2 and summary["MAP"] == pytest.approx(17 / 45)
    assert M.evaluate(scores, labels, qid, "trec_eval")["queries"] == 2


def test_short_query_precision_and_ndcg():
    # 3 documents, labels 1 0 0 in rank order
    scores, labels = [3.0, 2.0, 1.0], [1, 0, 0]
    # P@5 = 1/5 = 0.2 ; NDCG@5 = DCG 1 / ideal 1 = 1
    for convention in M.CONVENTIONS:
        assert M.precision_at_k(scores, labels, k=5, convention=convention) == 0.2
        assert M.ndcg_at_k(scores, labels, k=5, convention=convention) == 1.0


def test_map_at_k_divides_by_all_relevant():
    # labels in rank order 1 0 1 1: AP@2 = (1/1) / 3 = 1/3 ; AP = (1 + 2/3 + 3/4) / 3
    scores, labels = [4, 3, 2, 1], [1, 0, 1, 1]
    assert M.average_precision(scores, labels, k=2) == pytest.approx(1 / 3)
    assert M.average_precision(scores, labels) == pytest.approx((1 + 2 / 3 + 3 / 4) / 3)


@pytest.mark.parametrize("seed", [3, 4])
def test_letor_convention_matches_loop_reference(seed):
    rng = np.random.default_rng(seed)
    scores, labels, qid = random_collection(rng, n_labels=3)
    for kind, key in [("ap", "ap")] + [(n, (n, k)) for n in ("p", "ndcg") for k in (1, 3, 5, 10)]:
        k = key[1] if isinstance(key, tuple) else None
        ids, vals = M.per_query(kind, scores, labels, qid, k=k)
        for q, v in zip(ids, vals):
            rows = qid == q
            assert v == pytest.approx(letor_reference(scores[rows], labels[rows])[key], abs=1e-12)


@pytest.mark.parametrize("seed", [5, 6])
def test_grouped_rows_by_ptr_or_collection_give_the_qid_values(seed):
    rng = np.random.default_rng(seed)
    scores, labels, qid = random_collection(rng, n_labels=3)
    collection = QueryCollection.from_arrays(scores[:, None], labels, qid)
    grouped_scores, grouped_labels = scores[collection.rows], labels[collection.rows]
    for convention in M.CONVENTIONS:
        expected = M.evaluate(scores, labels, qid, convention)
        assert M.evaluate(grouped_scores, grouped_labels, ptr=collection.ptr,
                          convention=convention) == expected
        assert M.evaluate(grouped_scores, grouped_labels, collection,
                          convention=convention) == expected
    by_qid = M.per_query("ap", scores, labels, qid)
    by_collection = M.per_query("ap", grouped_scores, grouped_labels, collection)
    np.testing.assert_array_equal(by_qid.ids, by_collection.ids)
    np.testing.assert_array_equal(by_qid.values, by_collection.values)
    by_ptr = M.per_query("ap", grouped_scores, grouped_labels, ptr=collection.ptr)
    np.testing.assert_array_equal(by_ptr.ids, np.arange(collection.n_queries))
    np.testing.assert_array_equal(by_ptr.values, by_qid.values)
    with pytest.raises(InputFormatError, match="ptr"):
        M.mean_average_precision(grouped_scores, grouped_labels, ptr=[0, 3])


# ------------------------------------------------------------ ROC area and accuracy


def brute_roc(scores, labels):
    pos = [s for s, y in zip(scores, labels) if y > 0]
    neg = [s for s, y in zip(scores, labels) if y <= 0]
    if not pos or not neg:
        return float("nan")
    won = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg))
    return won / (len(pos) * len(neg))


def brute_accuracy(scores, labels):
    labels = np.asarray(labels) > 0
    scores = np.asarray(scores, dtype=float)
    best = 0.0
    for t in list(scores) + [np.inf]:
        best = max(best, float(np.mean((scores >= t) == labels)))
    return best


def test_roc_and_accuracy_hand_computed():
    scores, labels = [3, 2, 2, 1], [1, 0, 1, 0]
    # pairs (rel, nonrel): (3,2) 1, (3,1) 1, (2,2) tie 1/2, (2,1) 1 -> 3.5 / 4 = 0.875
    assert M.roc_area(scores, labels) == 0.875
    # thresholds: none positive 2/4; {3} 3/4; {3,2,2} 3/4; all 2/4 -> 0.75
    assert M.best_threshold_accuracy(scores, labels) == 0.75
    # all non-relevant: the all-negative threshold is always available -> 1.0
    assert M.best_threshold_accuracy([1, 2, 3], [0, 0, 0]) == 1.0
    assert math.isnan(M.roc_area([1, 2, 3], [0, 0, 0]))


@pytest.mark.parametrize("seed", range(5))
def test_roc_and_accuracy_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    scores, labels, qid = random_collection(rng, n_queries=12, max_docs=15)
    roc_ids, roc_vals = M.per_query(M.roc_area, scores, labels, qid)
    acc_ids, acc_vals = M.per_query(M.best_threshold_accuracy, scores, labels, qid)
    expected_roc, expected_acc = {}, {}
    for q in dict.fromkeys(qid):
        rows = qid == q
        expected_roc[q] = brute_roc(scores[rows], labels[rows])
        expected_acc[q] = brute_accuracy(scores[rows], labels[rows])
    assert list(roc_ids) == [q for q, v in expected_roc.items() if not math.isnan(v)]
    assert list(acc_ids) == list(expected_acc)
    for q, v in zip(roc_ids, roc_vals):
        assert v == pytest.approx(expected_roc[q], abs=1e-12)
    for q, v in zip(acc_ids, acc_vals):
        assert v == pytest.approx(expected_acc[q], abs=1e-12)
    assert M.roc_area(scores, labels, qid) == pytest.approx(np.mean(roc_vals))
    assert M.best_threshold_accuracy(scores, labels, qid) == pytest.approx(np.mean(acc_vals))
    # pooled: one ranking / one threshold over all rows
    assert M.roc_area(scores, labels) == pytest.approx(brute_roc(scores, labels), abs=1e-12)
    assert M.best_threshold_accuracy(scores, labels) == pytest.approx(
        brute_accuracy(scores, labels), abs=1e-12
    )


# --------------------------------------------------------------------- API behaviour


def test_per_query_with_callable_and_public_function():
    rng = np.random.default_rng(11)
    scores, labels, qid = random_collection(rng)
    ids, vals = M.per_query(M.mean_average_precision, scores, labels, qid)
    ids2, vals2 = M.per_query(M.average_precision, scores, labels, qid)
    ids3, vals3 = M.per_query(lambda s, y: M.average_precision(s, y), scores, labels, qid)
    assert list(ids) == list(ids2) == list(ids3) == list(dict.fromkeys(qid))
    np.testing.assert_allclose(vals, vals2)
    np.testing.assert_allclose(vals, vals3)
    assert M.mean_average_precision(scores, labels, qid) == pytest.approx(vals.mean())


def test_evaluate_matches_individual_functions():
    rng = np.random.default_rng(5)
    scores, labels, qid = random_collection(rng)
    for convention in M.CONVENTIONS:
        out = M.evaluate(scores, labels, qid, convention, at=(1, 5))
        assert set(out) == {
            "MAP",
            "NDCG@1",
            "NDCG@5",
            "P@1",
            "P@5",
            "MRR",
            "NDCG",
            "ROC",
            "queries",
        }
        assert out["MAP"] == M.mean_average_precision(scores, labels, qid, convention)
        assert out["NDCG@5"] == M.ndcg_at_k(scores, labels, qid, 5, convention)
        assert out["P@1"] == M.precision_at_k(scores, labels, qid, 1, convention)
        assert out["MRR"] == M.mean_reciprocal_rank(scores, labels, qid, convention)
        assert out["NDCG"] == M.ndcg_at_k(scores, labels, qid, None, convention)
        assert out["ROC"] == M.roc_area(scores, labels, qid, convention)


@pytest.mark.parametrize(
    "call",
    [
        lambda: M.mean_average_precision([1, 2], [0, 1], [0, 0], convention="trec"),
        lambda: M.mean_average_precision([1, np.nan], [0, 1], [0, 0]),
        lambda: M.mean_average_precision([1, 2, 3], [0, 1], [0, 0, 0]),
        lambda: M.mean_average_precision([1, 2], [0, 1], [0, 0, 0]),
        lambda: M.mean_average_precision([], [], []),
        lambda: M.precision_at_k([1, 2], [0, 1], k=0),
        lambda: M.precision_at_k([1, 2], [0, 1], k=None),
        lambda: M.average_precision([1, 2], [0, 1], convention="trec_eval", docnos=["a", "a"]),
        lambda: M.average_precision([1, 2], [0, 1], convention="trec_eval", docnos=["a"]),
        lambda: M.per_query("nope", [1, 2], [0, 1], None),
    ],
)
def test_bad_input_raises_input_format_error(call):
    with pytest.raises(InputFormatError):
        call()


def test_same_docno_in_different_queries_is_fine():
    value = M.mean_average_precision(
        [1, 2, 1, 2], [0, 1, 1, 0], ["a", "a", "b", "b"], "trec_eval", docnos=["x", "y"] * 2
    )
    assert value == pytest.approx((1 + 0.5) / 2)


# ----------------------------------------------------------------- real data: OHSUMED


@pytest.mark.parametrize("feature", [1, 5, 25, 40])
def test_ohsumed_single_feature_matches_pytrec_eval(ohsumed, feature):
    X, labels, qid, docids = ohsumed
    scores = X[:, feature]
    assert len(scores) - len(np.unique(np.c_[qid.astype(float), scores], axis=0)) > 0  # ties
    ref = trec_eval_per_query(
        scores, labels, qid, docids, ["map", "P.5", "P.10", "ndcg_cut.10", "recip_rank"]
    )
    for kind, key, k in [
        ("ap", "map", None),
        ("p", "P_5", 5),
        ("p", "P_10", 10),
        ("ndcg", "ndcg_cut_10", 10),
        ("rr", "recip_rank", None),
    ]:
        ids, vals = M.per_query(
            kind, scores, labels, qid, convention="trec_eval", docnos=docids, k=k
        )
        # OHSUMED Fold1 test: every query listed has a relevant document
        assert len(ids) == sum(1 for q in ref if any(labels[qid == q] > 0))
        for q, v in zip(ids, vals):
            assert v == pytest.approx(ref[q][key], abs=1e-9), (key, q)


def test_ohsumed_letor_matches_loop_reference(ohsumed):
    X, labels, qid, docids = ohsumed
    scores = X[:, 5]  # many ties (feature is often 0): tie order matters
    ids, aps = M.per_query("ap", scores, labels, qid)
    _, nd10 = M.per_query("ndcg", scores, labels, qid, k=10)
    _, p10 = M.per_query("p", scores, labels, qid, k=10)
    assert len(ids) == len(set(qid))
    for q, ap, n, p in zip(ids, aps, nd10, p10):
        ref = letor_reference(scores[qid == q], labels[qid == q])
        assert ap == pytest.approx(ref["ap"], abs=1e-12)
        assert n == pytest.approx(ref[("ndcg", 10)], abs=1e-12)
        assert p == pytest.approx(ref[("p", 10)], abs=1e-12)
    # letor and trec_eval orders differ on ties, so MAP differs on this feature
    letor = M.mean_average_precision(scores, labels, qid)
    trec = M.mean_average_precision(scores, labels, qid, "trec_eval", docnos=docids)
    assert letor != trec
