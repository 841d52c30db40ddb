"""TREC runs of many retrieval functions over a classic test collection.

Reads a SMART-format collection (:mod:`.smart`: Cranfield, CISI or CACM), analyses documents
and queries (:mod:`.text`: stop list, Snowball stemmer), scores every query against every
document with each retrieval function of :data:`.retrieval.MODELS` (BM25 variants, SMART
TF-IDF, query likelihood with Dirichlet and Jelinek-Mercer smoothing, PL2, DPH, F2EXP) and
writes, into ``--out``:

* ``runs/<name>.run``: one TREC run per function (``qid Q0 docno rank score name``; per query
  the ``--depth`` best documents among those containing a query term, score descending, ties
  by docno descending -- trec_eval's order);
* ``qrels.txt``: the judgments in TREC form (``qid 0 docno relevance``; Cranfield's grades as
  :mod:`.smart` explains);
* ``runs.md`` / ``runs.json``: each run's MAP under the trec_eval convention (AP = sum over
  the relevant documents retrieved of the precision at their rank, divided by the query's
  number of relevant documents, retrieved or not; mean over every judged query with a
  relevant document; trec_eval's ``map`` with ``-c``).

    python -m svmmap.experiments.classic --collection cranfield \\
        --data ../shared/data/classic/cranfield --out runs/cranfield [--depth 1000] \\
        [--models bm25-k1.2-b0.75,dfr-dph]

Ctrl-C or SIGTERM ends it with one line and status 130 / 143; every file written is whole
(svmmap.data.atomic).

The runs feed ``python -m svmmap.experiments.trec build`` (binned features of whole retrieval
systems, the paper's regime).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .. import metrics
from ..commands.common import ArgumentParser, positive_int
from ..core import interrupts
from ..data.atomic import write_text_atomically
from ..errors import SVMMapError, error_line
from . import smart, tables
from .retrieval import MODELS, Index
from .text import Analyzer

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

    from .retrieval import Model

    #: one query's ranking: (docnos, scores), best first
    Ranking = tuple[list[str], np.ndarray]
    #: a run: {qid: ranking}
    Run = dict[str, Ranking]


def _order(scores, matches, docno_rank, depth):
    """Column indices of one query's ``depth`` best matching documents, trec_eval's order:
    score descending, then docno (as a string) descending; ``docno_rank`` is each document's
    position in ascending string order of the docnos."""
    candidates = np.flatnonzero(matches)
    order = np.lexsort((-docno_rank[candidates], -scores[candidates]))
    return candidates[order[:depth]]


def make_runs(collection: smart.Collection, models: Iterable[Model] = MODELS,
              depth: int = 1000) -> dict[str, Run]:
    """``{model name: {qid: (docnos, scores)}}``: each model's ranking of every query of
    ``collection`` (a :class:`.smart.Collection`), best first."""
    analyzer = Analyzer()
    docnos = np.array(list(collection.documents), dtype=object)
    index = Index([analyzer.analyze(t) for t in collection.documents.values()])
    qids = list(collection.queries)
    queries = [analyzer.analyze(t) for t in collection.queries.values()]
    Q = index.queries(queries)
    matches = index.matches(Q)
    docno_rank = np.empty(len(docnos), dtype=np.int64)
    docno_rank[np.argsort(docnos.astype(str))] = np.arange(len(docnos))
    runs: dict[str, Run] = {}
    for model in models:
        scores = model.scores(index, queries, Q)
        if not np.all(np.isfinite(scores[matches])):
            raise SVMMapError(f"{model.name}: a score is not finite")
        runs[model.name] = {}
        for i, q in enumerate(qids):
            top = _order(scores[i], matches[i], docno_rank, depth)
            runs[model.name][q] = (docnos[top].tolist(), scores[i, top])
    return runs


def run_lines(run: Run, tag: str) -> Iterator[str]:
    """The lines of a TREC run file of ``run`` (``{qid: (docnos, scores)}``, ranked)."""
    for q, (docnos, scores) in run.items():
        for r, (d, s) in enumerate(zip(docnos, scores), 1):
            yield f"{q} Q0 {d} {r} {float(s)!r} {tag}\n"


def qrels_lines(qrels: smart.Qrels) -> Iterator[str]:
    """The lines of a TREC qrels file of ``qrels`` (``{qid: {docno: relevance}}``)."""
    for q, judged in qrels.items():
        for d, rel in judged.items():
            yield f"{q} 0 {d} {rel}\n"


def run_map(run: Mapping[str, Ranking],
            qrels: Mapping[str, Mapping[str, float]]) -> tuple[float, int]:
    """MAP of a ranked run under the trec_eval convention (module docstring), and the number
    of queries averaged: the judged queries with a relevant document."""
    values = []
    for q, judged in qrels.items():
        n_relevant = sum(rel > 0 for rel in judged.values())
        if n_relevant == 0:
            continue
        docnos, scores = run.get(q, ([], np.zeros(0)))
        labels = np.array([judged.get(d, 0) for d in docnos], dtype=np.float64)
        retrieved = int((labels > 0).sum())
        if retrieved == 0:
            values.append(0.0)
            continue
        ap = metrics.average_precision(np.asarray(scores, dtype=np.float64), labels,
                                       convention="trec_eval", docnos=docnos)
        values.append(ap * retrieved / n_relevant)  # metrics divides by the retrieved ones
    return float(np.mean(values)), len(values)


def _select(names):
    if names is None:
        return MODELS
    known = {m.name: m for m in MODELS}
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    if not wanted:
        raise SVMMapError(f"--models lists no model; known: {', '.join(known)}")
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise SVMMapError(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return tuple(known[n] for n in wanted)


def main(argv: Sequence[str] | None = None) -> None:
    """The command (module docstring).  Ctrl-C / SIGTERM: one line on stderr and
    SystemExit(130 / 143)."""
    parser = ArgumentParser(prog="python -m svmmap.experiments.classic",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--collection", required=True, choices=sorted(smart.COLLECTIONS))
    parser.add_argument("--data", required=True, help="the collection's folder")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--depth", type=positive_int, default=1000,
                        help="documents per query and run (default 1000)")
    parser.add_argument("--models", default=None,
                        help="comma-separated run names (default: all of "
                             "svmmap.experiments.retrieval.MODELS)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    try:
        with interrupts.handled():
            md = _write_runs(args, out)
    except (SVMMapError, OSError) as err:
        parser.exit(1, f"{parser.prog}: error: {error_line(err)}\n")
    except KeyboardInterrupt:
        parser.exit(interrupts.stopped(
            parser.prog, f"the files written so far in {out} are whole (each is written "
                         "atomically); rerun the command to write them all"))
    print(md, end="")


def _write_runs(args, out):
    """Make and write every run, the qrels and the MAP table (module docstring); return the
    table's markdown."""
    models = _select(args.models)
    collection = smart.load(args.collection, args.data)
    runs = make_runs(collection, models, args.depth)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    write_text_atomically(out / "qrels.txt", qrels_lines(collection.qrels))
    rows, report = [], {}
    for model in models:
        run = runs[model.name]
        write_text_atomically(out / "runs" / f"{model.name}.run", run_lines(run, model.name))
        value, n_queries = run_map(run, collection.qrels)
        rows.append([model.name, model.family, value])
        report[model.name] = {"family": model.family, "params": dict(model.params),
                              "map": value}
    n_relevant = sum(r > 0 for j in collection.qrels.values() for r in j.values())
    md = "\n\n".join([
        f"Collection: {args.collection} ({len(collection.documents)} documents, "
        f"{len(collection.queries)} queries, {n_queries} judged with a relevant document, "
        f"{n_relevant} relevant pairs); depth {args.depth}",
        tables.markdown(["run", "family", "MAP"], rows),
        "MAP: trec_eval convention (`map`, queries without retrieved relevant documents "
        "count as 0).",
    ]) + "\n"
    write_text_atomically(out / "runs.md", md)
    write_text_atomically(out / "runs.json", json.dumps(
        {"collection": args.collection, "depth": args.depth, "queries": n_queries,
         "runs": report}, indent=1) + "\n")
    return md


if __name__ == "__main__":
    main()
