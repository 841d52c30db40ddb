"""Markdown and CSV output of the experiment tables."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import SVMMapError

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ..core._typing import PathLike


def check_out_folder(folder: PathLike, names: Sequence[str]) -> None:
    """Refuse, before an experiment runs, an output folder its results could not be written
    into: a path that exists and is not a folder, a result file name (``names``) that is a
    folder, or a folder that cannot be created or written (the nearest existing one is not
    writable)."""
    out = Path(folder)
    if out.exists() and not out.is_dir():
        raise SVMMapError(f"--out {out}: exists and is not a folder (results are written "
                          f"into a folder: {', '.join(names)})")
    for name in names:
        if (out / name).is_dir():
            raise SVMMapError(f"--out {out}: {name} is a folder, not a file")
    existing = next(p for p in [out, *out.absolute().parents] if p.exists())
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise SVMMapError(f"--out {out}: {existing} is not a writable folder")


def fmt(value: object, digits: int = 4) -> str:
    """A table cell: floats with ``digits`` decimals, everything else as text."""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return "" if value is None else str(value)


def markdown(header: Sequence[str], rows: Iterable[Sequence[object]], digits: int = 4) -> str:
    """A Markdown table (``rows``: sequences aligned with ``header``)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(v, digits) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """CSV text with full-precision numbers."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([["" if v is None else v for v in row] for row in rows])
    return out.getvalue()


def format_value(value: float, param: str) -> str:
    """A hyper-parameter value for a table: ``C=0.1``, ``rounds=100``, ``feature 7``
    (features 1-based, as in the data files)."""
    if param == "feature":
        return f"feature {value + 1}"
    return f"{param}={value:g}" if isinstance(value, float) else f"{param}={value}"
