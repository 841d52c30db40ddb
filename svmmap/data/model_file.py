"""The model file: one format and one loader for every kind of model svmmap trains.

Layout (version 2)::

    {"format": "svmmap-model", "version": 2,
     "kind": "svmmap" | "adarank" | "rankboost" | "prank",
     "params": {...the estimator's model parameters...},
     "n_features_in": d,                   (columns of the X the model was trained on)
     "feature_names_in": [...],            (only when fit saw a DataFrame)
     "model": {...the fitted state, kind-specific...},
     "training": {...the training record: deterministic facts about the run...}}

Every key is the name of the estimator's parameter or attribute (``n_features_in`` is
``n_features_in_``; the glossary in README.md), and every fact is stored once: nothing in
``model`` or ``training`` repeats a parameter or another entry (the feature map's settings,
hence its base columns, are in ``params``, its fitted thresholds in ``model``; AdaRank's
``coef_`` is rebuilt from its weak rankers).  Run-time settings -- threads, verbosity, time
limits (each estimator's ``_runtime_params``) -- change how a model is trained, not what it
is, and are not written; a loaded model has their defaults.  Timings are left out too, so the
same data and options give a byte-identical file.  Floats are written with Python's
shortest round-tripping repr, so a loaded model scores exactly as the saved one did.

``MODEL_KINDS`` is the registry of kinds: each names, by module path, its estimator, the
function that upgrades its version-1 content and, optionally, a scorer lighter than the
estimator.  This module knows the format, not the kinds: it imports their code only when a
file of that kind is read.  ``load_model`` reads a file of any kind, and each estimator's
``load`` reads its own.  Version-1 files (kind absent means "svmmap"; fitted state at the top
level; run-time settings among the parameters) are converted on reading by ``_upgrade_v1``
and the kind's own upgrade, and load as before.
"""

from __future__ import annotations

import importlib
import json
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ..errors import ModelFileError
from .atomic import OutputKind, write_text_atomically

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Iterator, Mapping

    from ..core._typing import FloatArray, Matrix, PathLike, Vector
    from ..kernels._kernel_inputs import CSRArrays

    #: a model file's JSON object (its values are JSON's: Any)
    Document = dict[str, Any]
    #: a model's scoring function, scores(X, qid)
    Scores = Callable[..., FloatArray]

    class SavedModel(Protocol):
        """A fitted estimator of a model kind (svmmap.core.base.BaseRanker: not imported
        here, it imports this module)."""

        n_features_in_: int

        @classmethod
        def _from_document(cls, document: Document, path: PathLike) -> SavedModel: ...

        def decision_function(self, X: Matrix, qid: Vector | None = None) -> FloatArray:
            """One score per row of ``X``."""

FORMAT = "svmmap-model"
VERSION = 2
#: every version this code reads
READABLE_VERSIONS = (1, 2)
#: what building a model from a hostile document can raise besides ModelFileError; the
#: loaders turn each into one ModelFileError line
DAMAGED_MODEL_ERRORS = (TypeError, ValueError, KeyError, AttributeError, IndexError,
                        OverflowError, RecursionError)


class ModelKind(NamedTuple):
    """Where the code of a model kind is, as ``"module:name"`` paths (imported only when a file
    of that kind is read).

    ``estimator``: its estimator class (``_from_document`` restores a checked document).
    ``upgrade_v1``: ``f(document, v2)``, which fills in the kind's part of a version-1
    document's version-2 layout: sets ``v2["model"]`` from the document and adjusts
    ``v2["params"]``, ``v2["training"]`` and ``v2["n_features_in"]`` (the common part
    already done); raises one of DAMAGED_MODEL_ERRORS for damaged content.
    ``scorer``: ``f(document, path) -> (n_features_in, scores(X, qid))``, a scorer of a
    checked document that is lighter than the estimator, or None to score with the
    estimator's decision_function.
    """

    estimator: str
    upgrade_v1: str
    scorer: str | None = None


#: kind -> its ModelKind
MODEL_KINDS = {
    "svmmap": ModelKind("svmmap.estimator:SVMMap", "svmmap.core.training:upgrade_v1",
                        scorer="svmmap.core.training:file_scorer"),
    "adarank": ModelKind("svmmap.baselines.adarank:AdaRank",
                         "svmmap.baselines.adarank:upgrade_v1"),
    "rankboost": ModelKind("svmmap.baselines.rankboost:RankBoost",
                           "svmmap.baselines.rankboost:upgrade_v1"),
    "prank": ModelKind("svmmap.baselines.prank:PRank", "svmmap.baselines.prank:upgrade_v1"),
}


def model_content(kind: str, params: Mapping[str, Any], n_features_in: int, model: Document,
                  training: Document | None,
                  feature_names_in: Iterable[object] | None = None) -> Document:
    """The content of a model file (the layout above, without format/version): ``params``
    the model parameters, JSON-ready; ``feature_names_in`` only when fit saw names."""
    content: Document = {"kind": kind, "params": params, "n_features_in": int(n_features_in)}
    if feature_names_in is not None:
        content["feature_names_in"] = [str(name) for name in feature_names_in]
    content["model"] = model
    content["training"] = training
    return content


def model_params(params: Mapping[str, Any], runtime: Collection[str] = ()) -> Document:
    """The parameters a model file records: the constructor arguments ``params`` without the
    run-time settings ``runtime``, in name order, a nested estimator (a feature map) as its
    JSON parameters."""
    return {name: value.json_params() if hasattr(value, "json_params") else value
            for name, value in sorted(params.items()) if name not in runtime}


def write_model(path: PathLike, content: Mapping[str, Any]) -> None:
    """Write ``content`` (a dict of the layout above, without format/version) to ``path``
    atomically: a temporary file in the same directory is renamed over the target."""
    document = {"format": FORMAT, "version": VERSION, **content}
    text = json.dumps(document, indent=1, sort_keys=False, allow_nan=False) + "\n"
    write_text_atomically(Path(path), text)


def _imported(path: str) -> Any:
    """The object a ``"module:name"`` path names, its module imported."""
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def model_output(kinds: Collection[str], name: str) -> OutputKind:
    """The OutputKind (svmmap.data.atomic) of a command that writes a model of one of ``kinds``
    (``name``: how messages call it): an existing file is one when it is a JSON object with
    svmmap's format tag whose kind (absent: "svmmap", as in version 1) is one of ``kinds``
    -- of any version, damaged or not; nothing but the head of a file that does not start
    like JSON is read."""
    def recognises(path: str) -> bool:
        try:
            with open(path, "rb") as handle:
                if not handle.read(256).lstrip().startswith(b"{"):
                    return False
                handle.seek(0)
                document = json.load(handle)
        except (OSError, ValueError, RecursionError):
            return False
        return isinstance(document, dict) and document.get("format") == FORMAT and \
            document.get("kind", "svmmap") in kinds

    return OutputKind(name, recognises)


def model_class(kind: str) -> type[SavedModel]:
    """The estimator class of a model kind."""
    return _imported(MODEL_KINDS[kind].estimator)


def load_model(path: PathLike) -> SavedModel:
    """Load a model file written by any svmmap estimator, whatever its kind."""
    document = read_model(path)
    return model_class(document["kind"])._from_document(document, path)


def load_scorer(path: PathLike) -> tuple[int, Scores]:
    """(n_features_in, scores) of the model in a file of any kind: its number of feature
    columns and its scoring function scores(X, qid) for data of that many columns: the
    kind's scorer if it has one (an svmmap model is restored and scored by svmmap.core.training,
    without its estimator: no scikit-learn import unless it bins features), else its
    estimator's decision_function."""
    document = read_model(path)
    kind = MODEL_KINDS[document["kind"]]
    if kind.scorer is not None:
        return _imported(kind.scorer)(document, path)
    model = model_class(document["kind"])._from_document(document, path)

    # an estimator takes scipy's matrix, not the reader's arrays
    def scores(X: Matrix | CSRArrays, qid: Vector | None = None) -> FloatArray:
        import numpy as np

        from ..kernels._csr import as_scipy

        if isinstance(X, np.ndarray):  # the reader's dense layout: the CSR matrix the
            import scipy.sparse as sp  # estimator was always given (its scores, bit for bit)

            X = sp.csr_matrix(X)
        return model.decision_function(as_scipy(X), qid)

    return model.n_features_in_, scores


@contextmanager
def damage_reported(path: PathLike, template: str) -> Iterator[None]:
    """Turn what building a model from a hostile document raises (DAMAGED_MODEL_ERRORS) into
    one ModelFileError line, ``template.format(error)``."""
    try:
        yield
    except ModelFileError:
        raise
    except DAMAGED_MODEL_ERRORS as exc:
        raise ModelFileError(template.format(exc), path) from None


def read_model(path: PathLike, kind: str | None = None) -> Document:
    """Read and check a model file; return its dict in the version-2 layout.  Raises
    ModelFileError for a missing, unreadable, truncated, foreign or newer-version file, an
    unknown kind, and a model of another kind than ``kind`` (when given).  The kind-specific
    content is checked by the estimator that restores it."""
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
    if version not in READABLE_VERSIONS:
        raise ModelFileError(
            f"model file version {version!r} is not supported (this svmmap reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))})", path)
    if version == 1:
        document = _upgrade_v1(document, path)
    found = document.get("kind")
    if not isinstance(found, str):
        raise ModelFileError(f"damaged model file: kind {found!r} is not a name", path)
    if found not in MODEL_KINDS:
        raise ModelFileError(f"unknown model kind {found!r}", path)
    if kind is not None and found != kind:
        raise ModelFileError(f"this is a {found!r} model file, not a {kind!r} one "
                             "(svmmap.data.model_file.load_model reads any kind)", path)
    n_features = document.get("n_features_in")
    if isinstance(n_features, bool) or not isinstance(n_features, int) or n_features < 0:
        raise ModelFileError("damaged model file: n_features_in is not a whole number >= 0",
                             path)
    for key in ("params", "model"):
        if not isinstance(document.get(key), dict):
            raise ModelFileError(f"damaged model file: {key} missing", path)
    if not isinstance(document.get("training"), (dict, type(None))):
        raise ModelFileError("damaged model file: training is not a record", path)
    return document


def _upgrade_v1(document, path):
    """The version-2 layout of a version-1 document (same facts, each stored once): the run-time
    settings dropped from the parameters here, the rest by the kind's own upgrade."""
    kind = document.get("kind", "svmmap")
    params = document.get("params")
    training = document.get("training")
    if not isinstance(params, dict) or not isinstance(training, (dict, type(None))):
        raise ModelFileError("damaged model file: params missing", path)
    if not isinstance(kind, str) or kind not in MODEL_KINDS:  # read_model refuses it
        return {"kind": kind}
    v2 = {"kind": kind, "n_features_in": document.get("n_features"),
          "params": {k: v for k, v in params.items() if k not in V1_RUNTIME_PARAMS},
          "model": None, "training": dict(training or {}) or None}
    try:
        _imported(MODEL_KINDS[kind].upgrade_v1)(document, v2)
    except DAMAGED_MODEL_ERRORS as exc:
        raise ModelFileError(f"damaged version-1 {kind} model file ({type(exc).__name__}: "
                             f"{exc})", path) from None
    return v2


def renamed(params: Mapping[str, Any], names: Mapping[str, str]) -> Document:
    """``params`` with the keys of ``names`` (old -> new) renamed (the kinds' upgrades)."""
    return {names.get(key, key): value for key, value in params.items()}


#: the run-time settings version 1 wrote among the parameters
V1_RUNTIME_PARAMS = ("n_threads", "verbose", "max_time")
