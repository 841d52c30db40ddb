"""Classic test collections in the SMART format: documents, queries and relevance judgments.

A SMART file is a sequence of records; a record starts with a line ``.I <id>`` and holds
fields, each introduced by a line of a dot and one letter (``.T`` title, ``.W`` text, ``.A``
authors, ``.B`` bibliography, ``.N``, ``.X``, ``.K`` ...) and running to the next such line.
:func:`read_smart` returns ``[(id, {field: text})]`` in file order.

The three collections of ``../shared/data/classic`` (:data:`COLLECTIONS`) differ in their
files and in three quirks, each handled by its :class:`Spec`:

* **Cranfield's query numbers.** ``cran.qry`` numbers its 225 queries 001, 002, 004, ...
  (with gaps), but ``cranqrel`` numbers them 1..225 in file order; the queries are therefore
  renumbered 1..n in file order (``renumber_queries``).
* **Cranfield's extra records.** This copy of ``cran.all.1400`` has 1,405 records; records
  1401-1405 are five short Indonesian test sentences a redistributor appended, not Cranfield
  documents, and are left out (``max_document``); so is its query 226 (``.I 366``, also
  Indonesian; ``max_query``).  Records 471 and 995 are empty in every
  distribution and are kept (they match no query).
* **Empty records.** CACM's ``query.text`` ends with an empty record ``.I 0``; a query
  record without text is left out (so are those without a field that is indexed).
* **Cranfield's grades.** ``cranqrel`` lines are ``query doc code``, Cleverdon's codes
  1 (complete answer) .. 4 (minimum interest), and -1 for 225 pairs (about one per query).
  Code -1 is Cleverdon's code 5, "references of no interest" (the reading ir_datasets gives
  the same file): a judged non-relevant pair.  Relevance is written as ``5 - code`` for
  codes 1..4 (4 = complete answer .. 1 = minimum interest, so that larger is better and every
  judged-relevant pair has relevance >= 1) and 0 for -1.  CISI and CACM judgments are binary
  (relevance 1).

Qrels lines (whitespace-separated): Cranfield ``q d code``; CISI ``q d`` (tab-separated, lines
starting with a tab); CACM ``q d 0 0`` (query numbers zero-padded).  Ids are normalised to
decimal integers without leading zeros (``"01"`` -> ``"1"``).  A line that does not parse
raises :class:`~svmmap.errors.InputFormatError` naming the file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputFormatError

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ..core._typing import PathLike

    #: a record of a SMART file: (id, {field letter: text})
    Record = tuple[str, dict[str, str]]
    #: relevance judgments: {query: {document: relevance}}
    Qrels = dict[str, dict[str, int]]

_FIELD = re.compile(r"^\.([A-Z])\s*$")
_RECORD = re.compile(r"^\.I\s+(\S+)\s*$")


def _read_text(path):
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise InputFormatError("file not found", path) from None
    except OSError as err:
        raise InputFormatError(f"cannot read: {err.strerror}", path) from None


def _number(text, path, lineno, what):
    try:
        return str(int(text))
    except ValueError:
        raise InputFormatError(f"{what} {text!r} is not an integer", path, lineno) from None


def read_smart(path: PathLike) -> list[Record]:
    """``[(id, {field letter: text})]`` of a SMART file, in file order.

    Ids are normalised (``"001"`` -> ``"1"``); a field's lines are joined with newlines.
    Errors: text before the first ``.I`` line, a non-integer id, an id given twice.
    """
    records: list[tuple[str, dict[str, list[str]]]] = []
    seen: set[str] = set()
    fields: dict[str, list[str]] | None = None
    current: str | None = None
    for lineno, line in enumerate(_read_text(path).splitlines(), 1):
        record = _RECORD.match(line)
        if record:
            ident = _number(record.group(1), path, lineno, "record id")
            if ident in seen:
                raise InputFormatError(f"record .I {ident} given twice", path, lineno)
            seen.add(ident)
            fields, current = {}, None
            records.append((ident, fields))
            continue
        field = _FIELD.match(line)
        if field and fields is not None:
            current = field.group(1)
            fields.setdefault(current, [])
            continue
        if fields is None:
            if line.strip():
                raise InputFormatError("text before the first '.I' line", path, lineno)
            continue
        if current is not None:
            fields[current].append(line)
    return [(ident, {k: "\n".join(v) for k, v in f.items()}) for ident, f in records]


def read_qrels(path: PathLike, grades: str = "binary") -> Qrels:
    """``{query: {doc: relevance}}`` of a SMART-era relevance file (module docstring).

    ``grades``: ``"binary"`` (every listed pair has relevance 1; extra columns ignored) or
    ``"cranfield"`` (third column Cleverdon's code: 1..4 -> 5 - code, -1 -> 0).
    """
    qrels: Qrels = {}
    for lineno, line in enumerate(_read_text(path).splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        need = 3 if grades == "cranfield" else 2
        if len(fields) < need:
            raise InputFormatError(f"expected at least {need} fields, got {len(fields)}",
                                   path, lineno)
        query = _number(fields[0], path, lineno, "query id")
        doc = _number(fields[1], path, lineno, "document id")
        relevance = 1
        if grades == "cranfield":
            code = _number(fields[2], path, lineno, "relevance code")
            if code not in ("-1", "1", "2", "3", "4"):
                raise InputFormatError(f"relevance code {code} is not one of -1, 1, 2, 3, 4",
                                       path, lineno)
            relevance = 0 if code == "-1" else 5 - int(code)
        qrels.setdefault(query, {})[doc] = relevance
    if not qrels:
        raise InputFormatError("no relevance judgments", path)
    return qrels


@dataclass(frozen=True)
class Spec:
    """Where a collection's files are (relative to its folder) and how to read them.

    ``document_fields`` / ``query_fields``: the SMART fields indexed (in this order);
    ``renumber_queries``: number queries 1..n in file order (Cranfield); ``max_document``:
    keep only documents with an id up to this number (None: all); ``max_query``: the same
    for queries, after renumbering; ``grades``: the qrels
    reading of :func:`read_qrels`.
    """

    name: str
    documents: str
    queries: str
    qrels: str
    document_fields: tuple[str, ...] = ("T", "W")
    query_fields: tuple[str, ...] = ("W",)
    renumber_queries: bool = False
    max_document: int | None = None
    max_query: int | None = None
    grades: str = "binary"


COLLECTIONS = {
    "cranfield": Spec("cranfield", "cran.all.1400", "cran.qry", "cranqrel",
                      renumber_queries=True, max_document=1400, max_query=225,
                      grades="cranfield"),
    "cisi": Spec("cisi", "CISI_simplified.ALL", "CISI_simplified.QRY", "CISI_simplified.REL"),
    "cacm": Spec("cacm", "cacm.all", "query.text", "qrels.text",
                 document_fields=("T", "W", "A"), query_fields=("W", "A")),
}


@dataclass(frozen=True)
class Collection:
    """A test collection read: ``documents`` and ``queries`` as ``{id: text}`` (file order),
    ``qrels`` as ``{query: {doc: relevance}}``."""

    name: str
    documents: dict[str, str]
    queries: dict[str, str]
    qrels: Qrels


def _texts(records: Iterable[Record], fields: Sequence[str]) -> dict[str, str]:
    return {ident: "\n".join(f[k] for k in fields if k in f) for ident, f in records}


def load(spec: Spec | str, folder: PathLike) -> Collection:
    """The :class:`Collection` of ``spec`` (a :class:`Spec` or a name of
    :data:`COLLECTIONS`) from ``folder``.

    Errors: a judged query missing from the queries file, a judged document missing from the
    documents.
    """
    spec = COLLECTIONS[spec] if isinstance(spec, str) else spec
    folder = Path(folder)
    records = read_smart(folder / spec.documents)
    if spec.max_document is not None:
        records = [(i, f) for i, f in records if int(i) <= spec.max_document]
    query_records = read_smart(folder / spec.queries)
    if spec.renumber_queries:
        query_records = [(str(n), f) for n, (_, f) in enumerate(query_records, 1)]
    if spec.max_query is not None:
        query_records = [(i, f) for i, f in query_records if int(i) <= spec.max_query]
    documents = _texts(records, spec.document_fields)
    queries = {q: text for q, text in _texts(query_records, spec.query_fields).items()
               if text.strip()}
    qrels = read_qrels(folder / spec.qrels, spec.grades)
    for query, judged in qrels.items():
        if query not in queries:
            raise InputFormatError(f"query {query} is judged but not in {spec.queries}",
                                   folder / spec.qrels)
        missing = [d for d in judged if d not in documents]
        if missing:
            raise InputFormatError(f"query {query}: judged document {missing[0]} is not in "
                                   f"{spec.documents}", folder / spec.qrels)
    return Collection(spec.name, documents, queries, qrels)
