"""The model file: versioned JSON, written atomically, read back exactly.

Layout (version 1)::

    {"format": "svmmap-model", "version": 1,
     "kind": "svmmap" | "adarank" | "rankboost" | "prank",   (absent means "svmmap")
     "params": {...the estimator's constructor parameters...},
     "n_features": d, "coef": [w_1, ..., w_d], "intercept": b,
     "training": {...deterministic facts about the run: status, objectives, iterations...}}

``coef`` / ``intercept`` are required for the linear kinds; a non-linear model (RankBoost's
sum of thresholds) leaves them out and stores its own fields, checked by its ``load``.

Floats are written with Python's shortest round-tripping repr, so a loaded model scores
exactly as the saved one did.  Timings are left out so that the same data and options give a
byte-identical file.
"""

import json
import math
from pathlib import Path

from .atomic import write_text_atomically
from .errors import ModelFileError

FORMAT = "svmmap-model"
VERSION = 1
#: what building a model from a hostile document can raise besides ModelFileError; the
#: loaders turn each into one ModelFileError line
DAMAGED_MODEL_ERRORS = (TypeError, ValueError, KeyError, AttributeError, IndexError,
                        OverflowError, RecursionError)


def write_model(path, content):
    """Write ``content`` (a dict of the layout above, without format/version) to ``path``
    atomically: a temporary file in the same directory is renamed over the target."""
    path = Path(path)
    document = {"format": FORMAT, "version": VERSION, **content}
    text = json.dumps(document, indent=1, sort_keys=False, allow_nan=False) + "\n"
    write_text_atomically(path, text)


def model_kind(document):
    """The kind of model a file holds ("svmmap" for files written before kinds existed)."""
    return document.get("kind", "svmmap")


def read_model(path, kind=None):
    """Read and check a model file; return its dict.  Raises ModelFileError for a missing,
    unreadable, truncated, foreign or newer-version file, and for a model of another kind
    than ``kind`` (when given)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ModelFileError("model file not found", path) from None
    except IsADirectoryError:
        raise ModelFileError("is a directory, not a model file", path) from None
    except UnicodeDecodeError:
        raise ModelFileError("not an svmmap model file (not UTF-8 text)", path) from None
    except OSError as exc:
        raise ModelFileError(f"cannot read model file: {exc.strerror}", path) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        reason = "truncated model file" if exc.pos >= len(text.rstrip()) else \
            "not an svmmap model file (not JSON)"
        raise ModelFileError(f"{reason} (line {exc.lineno})", path) from None
    except RecursionError:
        raise ModelFileError("not an svmmap model file (JSON nested too deeply)", path) from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise ModelFileError(f"not an svmmap model file ({exc})", path) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ModelFileError("not an svmmap model file", path)
    version = document.get("version")
    if version != VERSION:
        raise ModelFileError(
            f"model file version {version!r} is not supported (this svmmap reads version "
            f"{VERSION})", path)
    found = model_kind(document)
    if not isinstance(found, str):
        raise ModelFileError(f"damaged model file: kind {found!r} is not a name", path)
    if kind is not None and found != kind:
        raise ModelFileError(f"this is a {found!r} model file, not a {kind!r} one "
                             "(svmmap.baselines.load_model reads any kind)", path)
    n_features = document.get("n_features")
    if found != "svmmap" and "coef" not in document:
        if isinstance(n_features, bool) or not isinstance(n_features, int) or n_features < 0:
            raise ModelFileError("damaged model file: n_features missing", path)
        if not isinstance(document.get("params"), dict):
            raise ModelFileError("damaged model file: params missing", path)
        return document
    coef = document.get("coef")
    if not isinstance(coef, list) or not isinstance(n_features, int) or len(coef) != n_features:
        raise ModelFileError("damaged model file: coef does not match n_features", path)
    if not all(map(_finite_number, coef)):
        raise ModelFileError("damaged model file: coef holds a non-number", path)
    if not _finite_number(document.get("intercept")):
        raise ModelFileError("damaged model file: intercept is not a number", path)
    if not isinstance(document.get("params"), dict):
        raise ModelFileError("damaged model file: params missing", path)
    return document


def _finite_number(value):
    """True for an int or float (not a bool) that is a finite float64."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an integer beyond the float range
        return False
