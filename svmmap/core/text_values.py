"""Parameter values from their text form: the argparse ``type`` of every option of the
parameter table (svmmap.core.params.PARAMETERS).

Each function takes an option's text and returns its value, or raises argparse's
ArgumentTypeError with the reason, which argparse prints as ``argument --option: reason``.
A value's range is checked by the parameter's rules (svmmap.core.rules), not here, unless
the option has no estimator parameter behind it.  argparse is imported only to raise that
error: the commands have it loaded already, and importing svmmap does not load it.
"""

from __future__ import annotations

import math

from .measures import help_text, parse_loss, parse_select_metric
from .rules import ParameterError, check_c_path


def type_error(message: str) -> Exception:
    """argparse's ArgumentTypeError with ``message`` (what an option's type raises)."""
    import argparse

    return argparse.ArgumentTypeError(message)


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise type_error(f"not a number: {text!r}") from None


def loss(text: str) -> str:
    """-l / --loss: a loss name of the measure registry (svmmap.core.measures.parse_loss)."""
    try:
        parse_loss(text)
    except ValueError as err:
        raise type_error(str(err)) from None
    return text


def c_values(text: str) -> list[float]:
    """'0.1,1,10' -> [0.1, 1.0, 10.0]: one or more numbers (a path's values are checked by
    SVMMapCV's rule, svmmap.core.rules.check_c_path; a single C by SVMMap's)."""
    values = [_number(part.strip()) for part in text.split(",")]
    if len(values) > 1:
        try:
            check_c_path(values)
        except ParameterError as exc:
            raise type_error(str(exc)) from None
    return values


def fraction(text: str) -> float:
    """--holdout: a number strictly between 0 and 1."""
    value = _number(text)
    if not 0 < value < 1:
        raise type_error(f"must be a fraction between 0 and 1, got {text!r}")
    return value


def number_or_off(text: str) -> float | None:
    """-e, --rel-gap: a number (its range is the estimator's check) or "off" (None)."""
    if text.strip().lower() == "off":
        return None
    try:
        return float(text)
    except ValueError:
        raise type_error(f"not a number or 'off': {text!r}") from None


def shown(default: float | None) -> str:
    """A default of ``number_or_off`` as its help shows it ("off" for None)."""
    return "off" if default is None else f"{default:g}"


def select_tol(text: str) -> float:
    """--select-tol: a finite number >= 0."""
    value = _number(text)
    if not value >= 0 or value == math.inf:
        raise type_error(f"must be a number >= 0, got {text!r}")
    return value


def select_metric(text: str) -> str:
    """--select-metric: a measure model selection may choose by, as its canonical name."""
    try:
        return parse_select_metric(text)
    except ValueError:
        raise type_error(f"must be {help_text('select')}, got {text!r}") from None


def column_list(text: str) -> list[int]:
    """'1,3,5-9' -> 0-based columns [0, 2, 4, 5, 6, 7, 8] (the file's 1-based indices)."""
    columns: list[int] = []
    for part in text.split(","):
        first, sep, last = part.strip().partition("-")
        try:
            lo, hi = int(first), int(last if sep else first)
        except ValueError:
            raise type_error(f"not a list of feature indices and ranges like 1,3,5-9: "
                             f"{text!r}") from None
        if lo < 1 or hi < lo:
            raise type_error(f"bad feature index or range {part.strip()!r} (indices start "
                             "at 1)")
        columns.extend(range(lo - 1, hi))
    if len(set(columns)) != len(columns):
        raise type_error(f"a feature index is listed twice in {text!r}")
    return columns


def positive_int(text: str) -> int:
    """An integer >= 1, for an option that is no estimator parameter (estimator parameters
    are validated by the estimator's rules: ``check_params``)."""
    try:
        value = int(text)
    except ValueError:
        raise type_error(f"not an integer: {text!r}") from None
    if value < 1:
        raise type_error(f"must be at least 1, got {text!r}")
    return value
