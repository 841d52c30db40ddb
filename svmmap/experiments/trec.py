"""TREC input and output: a ranking data set from TREC run files and qrels, and predictions
written as a TREC run.

Run file (one per base retrieval function / submission): lines ``qid Q0 docno rank score
tag`` (6 whitespace-separated fields; the rank field is not used).  Qrels: lines
``qid iteration docno rel``.  Blank lines are skipped; any other malformed line raises
:class:`~svmmap.errors.InputFormatError` naming the file and line.

:func:`build` makes, for every query judged in the qrels and retrieved by some run:

* documents: the union over runs of each run's top ``depth`` (default 1000) documents, the
  order of a run being trec_eval's (score descending, ties by docno descending);
* features: one per run (feature i = the i-th run given), its score for the document; a
  document the run did not return in its top ``depth`` for the query gets the run's
  **minimum score for that query minus 1** -- below every score the run gave, so below every
  threshold a binned feature map fits on observed scores (a run with no document for the
  query gives 0 to all of them);
* label: the qrels relevance, 0 for unjudged documents.

``drop`` leaves runs out by tag or file name (the paper's Tables 8 and 11, "without the best
submission").  The data set is written as SVMlight with ``# docno`` comments, or with
``--format arrays`` as an array folder (:mod:`.datasets`).  Runs are read one at a time,
gzip, bzip2 or xz compressed or plain (:class:`RunSet`): the memory is one index and one float
per retrieved document plus the data set itself (TREC-9's 92 automatic runs: 0.99 GB peak).

    python -m svmmap.experiments.trec build --runs r1 r2 ... --qrels QRELS --out data.txt \\
        [--drop-run NAME] [--depth 1000] [--format svmlight|arrays]
    python -m svmmap.experiments.trec run --data data.txt --model MODEL --out run.txt \\
        [--tag svmmap]
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..commands.common import ArgumentParser, positive_int
from ..core import interrupts
from ..core.options import MAX_ABS_VALUE
from ..data.atomic import OutputKind, check_output, first_tokens
from ..data.io import dump_svmlight, input_files, load_svmlight
from ..data.trec_run import RUN_FILE, write_run
from ..errors import InputFormatError, SVMMapError, error_line

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Sequence

    from ..core._typing import PathLike

    #: relevance judgments or a run's scores: {qid: {docno: value}}
    Judged = dict[str, dict[str, float]]
    #: what build and RunSet.data_set return: (X, y, qid, docnos, tags)
    DataSet = tuple[np.ndarray, np.ndarray, np.ndarray, list[str], list[str]]


def _text(path):
    """The text of a run or qrels file, decompressed when it starts with the magic bytes of
    gzip, bzip2 or xz (:data:`svmmap.data.sources.COMPRESSION`): one file at a time, whole (a
    TREC run is a few MB)."""
    from ..data.sources import COMPRESSION, decompressor

    try:
        with open(path, "rb") as handle:
            data = handle.read()
        for magic, name in COMPRESSION:
            if data.startswith(magic):
                opener, errors = decompressor(name)
                import io

                try:
                    with opener(io.BytesIO(data)) as stream:
                        data = stream.read()
                except errors as err:
                    raise InputFormatError(f"cannot decompress ({name}): {err}", path) from None
                break
        return data.decode("utf-8")
    except FileNotFoundError:
        raise InputFormatError("file not found", path) from None
    except IsADirectoryError:
        raise InputFormatError("is a directory, not a file", path) from None
    except UnicodeDecodeError as err:
        line = data[:err.start].count(b"\n") + 1
        raise InputFormatError(f"not UTF-8 text (byte {err.start})", path, line) from None
    except OSError as err:
        raise InputFormatError(f"cannot read: {err.strerror or err}", path) from None


def _lines(path):
    """(line number, fields) of the non-blank lines of a text file (gzip, bzip2 or xz
    compressed files are read decompressed)."""
    for lineno, line in enumerate(_text(path).splitlines(), 1):
        fields = line.split()
        if fields:
            yield lineno, fields


def _check_topic(topic, path, lineno):
    """Refuse a topic that cannot be the ``qid:`` of the data set's lines (':' or '#'),
    naming the run or qrels file and line it came from."""
    if ":" in topic or "#" in topic:
        raise InputFormatError(f"topic {topic!r} cannot be a query id of the data set (it "
                               "holds ':' or '#')", path, lineno)


def read_run(path: PathLike) -> tuple[str, Judged]:
    """``(tag, {qid: {docno: score}})`` of a TREC run file.

    The tag is the last field of the first line.  Errors: a line without 6 fields, a
    non-numeric score, a docno repeated within a query.
    """
    run: defaultdict[str, dict[str, float]] = defaultdict(dict)
    tag: str | None = None
    for lineno, fields in _lines(path):
        if len(fields) != 6:
            raise InputFormatError(f"expected 6 fields 'qid Q0 docno rank score tag', got "
                                   f"{len(fields)}", path, lineno)
        qid, _, docno, _, score, line_tag = fields
        _check_topic(qid, path, lineno)
        try:
            value = float(score)
        except ValueError:
            value = float("nan")
        if not np.isfinite(value):
            raise InputFormatError(f"score {score!r} is not a finite number", path, lineno)
        if docno in run[qid]:
            raise InputFormatError(f"document {docno!r} listed twice for query {qid}",
                                   path, lineno)
        run[qid][docno] = value
        tag = tag or line_tag
    if tag is None:
        raise InputFormatError("empty run file", path)
    return tag, dict(run)


def run_tag(path: PathLike) -> str:
    """The tag of a run file: the last field of its first non-blank line."""
    for lineno, fields in _lines(path):
        if len(fields) != 6:
            raise InputFormatError(f"expected 6 fields 'qid Q0 docno rank score tag', got "
                                   f"{len(fields)}", path, lineno)
        return fields[5]
    raise InputFormatError("empty run file", path)


def read_qrels(path: PathLike) -> Judged:
    """``{qid: {docno: relevance}}`` of a TREC qrels file (``qid iteration docno rel``)."""
    qrels: defaultdict[str, dict[str, float]] = defaultdict(dict)
    for lineno, fields in _lines(path):
        if len(fields) != 4:
            raise InputFormatError(f"expected 4 fields 'qid iteration docno rel', got "
                                   f"{len(fields)}", path, lineno)
        try:
            rel = float(fields[3])
        except ValueError:
            rel = float("nan")
        if not np.isfinite(rel):
            raise InputFormatError(f"relevance {fields[3]!r} is not a finite number",
                                   path, lineno)
        _check_topic(fields[0], path, lineno)
        qrels[fields[0]][fields[2]] = rel
    if not qrels:
        raise InputFormatError("empty qrels file", path)
    return dict(qrels)


def _top(ranking, depth):
    """The ``depth`` best documents of one run for one query, trec_eval's order."""
    ordered = sorted(ranking.items(), key=lambda item: (item[1], item[0]), reverse=True)
    return dict(ordered[:depth])


def unretrieved_score(scores: np.ndarray) -> float:
    """The score a base function gives a document it did not return for a query: **the
    lowest score it gave that query minus 1** (0 when it returned nothing for the query) --
    below every score it gave, hence below every threshold that a binned feature map fits on
    its scores, so every indicator 1[f(d|x) > k] of such a document is 0.  The one place this
    rule lives (README: "Documents a run did not retrieve")."""
    return float(np.min(scores)) - 1.0 if len(scores) else 0.0


class RunSet:
    """TREC runs read one at a time into compact arrays, from which the data set of any
    subset of them is assembled (module docstring) without reading a run again.

    Per run and judged query the set keeps the top ``depth`` documents as int32 indices into
    the query's pool (the union of every run's documents) and their float64 scores: one index
    and one float per (run, retrieved document), never the run's text.  ``tags``, ``paths``
    and ``maps`` (each run's MAP, trec_eval's ``map`` over the top ``depth``) are per run, in
    the order read.
    """

    def __init__(self, run_paths: Iterable[PathLike], qrels_path: PathLike,
                 depth: int = 1000) -> None:
        if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
            raise SVMMapError(f"depth must be a positive integer, got {depth!r}")
        from .classic import run_map

        self.qrels = read_qrels(qrels_path)
        self.qrels_path = qrels_path
        self.queries = list(self.qrels)
        position = {q: i for i, q in enumerate(self.queries)}
        self.pools: list[dict[str, int]] = [{} for _ in self.queries]  # docno -> index
        self.tags: list[str] = []
        self.paths: list[Path] = []
        self.maps: list[float] = []
        #: per run: {judged query's position: (pool indices, scores)}
        self._entries: list[dict[int, tuple[np.ndarray, np.ndarray]]] = []
        for path in run_paths:
            tag, run = read_run(path)
            ranked, entries = {}, {}
            for q, ranking in run.items():
                top = _top(ranking, depth)
                scores = np.fromiter(top.values(), dtype=np.float64, count=len(top))
                ranked[q] = (list(top), scores)
                i = position.get(q)
                if i is not None:
                    pool = self.pools[i]
                    index = np.fromiter((pool.setdefault(d, len(pool)) for d in top),
                                        dtype=np.int32, count=len(top))
                    entries[i] = (index, scores)
            self.maps.append(run_map(ranked, self.qrels)[0])
            self.tags.append(tag)
            self.paths.append(Path(path))
            self._entries.append(entries)

    def data_set(self, runs: Iterable[int] | None = None) -> DataSet:
        """``(X, y, qid, docnos, tags)`` of the runs numbered ``runs`` (default: all), as
        :func:`build` describes: documents of a query in order of first retrieval over these
        runs, queries in qrels order (those no run retrieved left out), X dense float64
        (documents x runs), one column per run in the order given."""
        runs = list(range(len(self.tags))) if runs is None else list(runs)
        if not runs:
            raise SVMMapError("no runs left to build features from")
        order = []                                   # per query: pool index -> row, -1 absent
        for i, pool in enumerate(self.pools):
            row = np.full(len(pool), -1, dtype=np.int64)
            count = 0
            for r in runs:
                entry = self._entries[r].get(i)
                if entry is None:
                    continue
                new = entry[0][row[entry[0]] < 0]
                row[new] = np.arange(count, count + len(new))
                count += len(new)
            order.append((row, count))
        sizes = np.array([count for _, count in order], dtype=np.int64)
        if not sizes.sum():
            raise InputFormatError("no topic of the qrels was retrieved by any run (are the "
                                   "qrels those of the runs' topics?)", self.qrels_path)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        X = np.empty((int(offsets[-1]), len(runs)))
        y = np.zeros(int(offsets[-1]))
        qid, docnos = [], []
        for i, (row, count) in enumerate(order):
            if not count:
                continue
            block = X[offsets[i]:offsets[i + 1]]
            for c, r in enumerate(runs):
                index, scores = self._entries[r].get(i, (np.zeros(0, np.int32), np.zeros(0)))
                block[:, c] = unretrieved_score(scores)
                block[row[index], c] = scores
            names = np.empty(count, dtype=object)
            present = row >= 0
            names[row[present]] = np.array(list(self.pools[i]), dtype=object)[present]
            judged = self.qrels[self.queries[i]]
            y[offsets[i]:offsets[i + 1]] = [judged.get(d, 0.0) for d in names]
            qid += [self.queries[i]] * count
            docnos += names.tolist()
        return X, y, np.array(qid), docnos, [self.tags[r] for r in runs]


def build(run_paths: Iterable[PathLike], qrels_path: PathLike, depth: int = 1000,
          drop: Collection[str] = ()) -> DataSet:
    """The data set of the module docstring: ``(X, y, qid, docnos, tags)``.

    ``X`` is dense (documents x runs), rows grouped by query (queries in qrels file order,
    documents by first retrieval over the runs in the order given); ``tags`` names the
    features.  ``depth`` is a positive integer; ``drop`` leaves runs out by tag or file name.
    Runs are read one at a time (:class:`RunSet`).
    """
    runs = RunSet(run_paths, qrels_path, depth)
    keep = [r for r, (tag, path) in enumerate(zip(runs.tags, runs.paths))
            if tag not in drop and path.name not in drop]
    return runs.data_set(keep)


def _is_svmlight(path):
    """SVMlight data with qid: (what build writes): its first line '<label> qid:<q> ...'."""
    first = first_tokens(path)
    if not first or len(first[0]) < 2 or not first[0][1].startswith("qid:"):
        return False
    try:
        float(first[0][0])
    except ValueError:
        return False
    return True


#: what build and run write: an existing --out of another kind is refused unless --force
DATA_OUT = OutputKind("an SVMlight data file (first line '<label> qid:<q> ...')", _is_svmlight)


def _build_command(args):
    from .datasets import is_array_folder, save_arrays

    if args.format == "arrays":
        out = Path(args.out)
        if out.exists() and not is_array_folder(out) and not args.force:
            raise SVMMapError(f"{out}: exists and is not an array folder (X.npy ...); "
                              "choose another --out or pass --force")
        if out.exists() and not out.is_dir():
            raise SVMMapError(f"{out}: exists and is not a folder")
    else:
        check_output(args.out, [*args.runs, args.qrels], DATA_OUT, args.force)
    X, y, qid, docnos, tags = build(args.runs, args.qrels, args.depth, set(args.drop_run))
    if args.format == "arrays":
        save_arrays(args.out, X, y, qid, docnos, tags)
    else:
        dump_svmlight(args.out, X, y, qid, comments=docnos)
    print(f"{args.out}: {len(np.unique(qid))} queries, {len(y)} documents, "
          f"{int((y > 0).sum())} relevant; features: "
          + ", ".join(f"{i}={t}" for i, t in enumerate(tags, 1)))


def _run_command(args):
    from ..data.model_file import load_model

    check_output(args.out, [*input_files(args.data), args.model], RUN_FILE, args.force)
    X, _, qid, docnos = load_svmlight(args.data, return_comments=True,
                                      max_abs_value=MAX_ABS_VALUE)
    model = load_model(args.model)
    n = getattr(model, "n_features_in_", X.shape[1])
    if X.shape[1] < n:  # trailing all-zero features are not written in SVMlight files
        X, _, qid, docnos = load_svmlight(args.data, n_features=n, return_comments=True,
                                          max_abs_value=MAX_ABS_VALUE)
    if not all(docnos):
        raise SVMMapError(f"{args.data}: every line needs a '# docno' comment")
    write_run(args.out, qid, [d.split()[0] for d in docnos], model.decision_function(X),
              args.tag)
    print(f"{args.out}: {len(np.unique(qid))} queries")


def main(argv: Sequence[str] | None = None) -> None:
    """The command (module docstring): ``build`` or ``run``.  Ctrl-C / SIGTERM: one line on
    stderr and SystemExit(130 / 143)."""
    parser = ArgumentParser(prog="python -m svmmap.experiments.trec",
                                     description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    b = commands.add_parser("build", help="data set from run files and qrels")
    b.add_argument("--runs", nargs="+", required=True, help="TREC run files (one per feature)")
    b.add_argument("--qrels", required=True)
    b.add_argument("--out", required=True,
                   help="SVMlight file to write (or folder, with --format arrays)")
    b.add_argument("--format", choices=("svmlight", "arrays"), default="svmlight",
                   help="svmlight: text with '# docno' comments (default); arrays: a folder "
                        "of .npy files that the experiment drivers map into memory "
                        "(svmmap.experiments.datasets)")
    b.add_argument("--drop-run", action="append", default=[],
                   help="leave out the run with this tag or file name (repeatable)")
    b.add_argument("--depth", type=positive_int, default=1000,
                   help="documents per run and query (default 1000)")
    r = commands.add_parser("run", help="write a model's scores as a TREC run file")
    r.add_argument("--data", required=True, help="SVMlight file with '# docno' comments")
    r.add_argument("--model", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--tag", default="svmmap")
    for sub in (b, r):
        sub.add_argument("--force", action="store_true",
                         help="replace an existing --out that is not of the kind written "
                              "(an input file is never replaced)")
    args = parser.parse_args(argv)
    try:
        with interrupts.handled():  # SIGTERM stops it as Ctrl-C does
            (_build_command if args.command == "build" else _run_command)(args)
    except (SVMMapError, OSError, MemoryError) as err:
        parser.exit(1, f"{parser.prog}: error: {error_line(err)}\n")
    except KeyboardInterrupt:
        parser.exit(interrupts.exit_status(), interrupts.message(parser.prog) + "\n")


if __name__ == "__main__":
    main()
