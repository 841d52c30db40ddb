"""Export a trained linear model to search engines: the OpenSearch / Elasticsearch
Learning-to-Rank plugin, Solr LTR, Vespa, and RankLib's linear model file.

A model scores z = the normalised features (svmmap.core.normalize; z = x without ``normalize``) by
``w . z`` (+ an intercept for loss="acc", which shifts every score equally and which the LTR
plugin and Solr, having none, leave out). Each format below gives the engine that function,
its normaliser included, so the engine's score equals ``decision_function`` up to the engine's
arithmetic (float32 for the LTR plugin and Solr: tests/ecosystem/test_engine_export.py re-scores
by the parsers' rules).

* **LTR plugin** (o19s Elasticsearch LTR, the OpenSearch LTR plugin): the body of
  ``POST _ltr/_featureset/<feature set>/_createmodel``::

      {"model": {"name": NAME,
                 "model": {"type": "model/linear",
                           "feature_normalizers": {"<name>": {"standard": {"mean": m,
                                                   "standard_deviation": s}}, ...},
                           "definition": {"<feature name>": weight, ...}}}}

  ``feature_normalizers`` only with a normaliser: ``standard`` (mean, standard_deviation > 0)
  or ``min_max`` (minimum, maximum; the plugin takes 0 <= minimum < maximum, so a feature
  with negative training values is refused: train with ``normalize="standard"``). The
  ``model/linear`` parser refuses a name that is not in the feature set, reads each weight as
  a float32, gives the set's other features weight 0, and sums ``weight_i * z_i`` in float32.
* **Solr LTR** (``PUT /solr/<collection>/schema/model-store``): a ``LinearModel``::

      {"store": STORE, "class": "org.apache.solr.ltr.model.LinearModel", "name": NAME,
       "features": [{"name": "<feature>", "norm": {"class": "...StandardNormalizer",
                     "params": {"avg": "m", "std": "s"}}}, ...],
       "params": {"weights": {"<feature>": weight, ...}}}

  Solr refuses a model that lacks a weight for one of its features, so every feature is
  listed and weighted; norms are ``StandardNormalizer`` (avg, std > 0), ``MinMaxNormalizer``
  (min, max, max - min != 0) or ``IdentityNormalizer``.
* **Vespa**: a rank profile whose first phase is the model as a ranking expression over
  rank features, ``w_1 * ((bm25(title) - m_1) / s_1) + ...`` (+ the intercept); which rank
  feature computes each model feature is the user's map (a file of ``name rank-feature``
  lines, every model feature mapped). Vespa evaluates ranking expressions in double.
* **RankLib** (``-load`` of a linear regression model, ``LinearRegRank``; also the LTR
  plugin's ``model/ranklib``)::

      ## Linear Regression
      ## exported by svmmap: <model description>
      ## feature 1 = <name>   (one line per feature, when the features have names)
      0:<constant> 1:<w_1> 2:<w_2> ...

  RankLib parses each id with ``Integer.parseInt``: feature ids are the ordinals 1..d (the
  data files' indices; the LTR plugin maps id i to the feature set's i-th feature), names
  are comments. RankLib has no normalisers: a normaliser is folded into the weights,
  w_j / scale_j, and the constant, intercept - sum_j w_j shift_j / scale_j.

Feature names: ``feature_names`` (a file of one name per line, in the order of the data's
feature indices 1, 2, ...), else the DataFrame columns seen by ``fit`` (``feature_names_in_``),
else the indices ``"1"``, ``"2"``, ...

A model trained on data normalised within each query (LETOR's QueryLevelNorm, recorded as
``per_query_normalized`` by training) weighs features that an engine cannot compute from one
document: every export warns (binary features can look the same, so it is not refused).

Command line::

    python -m svmmap.export --format ltr|solr|vespa|ranklib [--feature-names FILE]
                            [--name NAME] [--store STORE] [--rank-features FILE]
                            model_file output_file

The formats are the records of ``EXPORT_FORMATS`` (``ExportFormat``: name, what it is, its
help, the kind of file it writes, its writer): the command's ``--format`` choices, help and
description and ``export()`` read them.  Adding a format is one record there, its writer and
tests.

Ctrl-C or SIGTERM ends it with one line (``...: interrupted`` / ``terminated``) and status 130
/ 143, leaving no output and no temporary file (svmmap.core.interrupts, svmmap.data.atomic).
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from typing import TYPE_CHECKING, NamedTuple, cast

import numpy as np

from .commands.common import ArgumentParser
from .core import interrupts
from .data.atomic import OutputKind, check_output, write_text_atomically
from .data.model_file import load_model
from .errors import InputFormatError, ModelFileError, SVMMapError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from .baselines._base import BaselineRanker
    from .core._typing import FloatArray, PathLike
    from .estimator import SVMMap

__all__ = ["FORMATS", "EXPORT_FORMATS", "ExportFormat", "ExportOptions", "linear_weights",
           "to_ltr_linear", "to_solr_linear", "to_vespa_profile", "to_ranklib_linear",
           "read_rank_features", "export"]

RANKLIB_NAME = "Linear Regression"
SOLR_LINEAR = "org.apache.solr.ltr.model.LinearModel"
SOLR_NORMS = {"standard": "org.apache.solr.ltr.norm.StandardNormalizer",
              "minmax": "org.apache.solr.ltr.norm.MinMaxNormalizer",
              None: "org.apache.solr.ltr.norm.IdentityNormalizer"}


def _loaded(model: SVMMap | BaselineRanker | PathLike) -> SVMMap | BaselineRanker:
    """A fitted model as it is, a model file's path loaded."""
    if isinstance(model, (str, os.PathLike)):
        # every kind a model file holds (model_file.KINDS) is SVMMap or a baseline
        return cast("SVMMap | BaselineRanker", load_model(model))
    return model


def _head(path, size=4096):
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def _json_object(path):
    """The JSON object ``path`` holds, or None (only the head of a file that does not start
    like JSON is read)."""
    if not _head(path).lstrip().startswith(b"{"):
        return None
    try:
        with open(path, "rb") as handle:
            document = json.load(handle)
    except (OSError, ValueError, RecursionError):
        return None
    return document if isinstance(document, dict) else None


def _is_ltr_export(path):
    """An LTR plugin request body: a JSON object {"model": {..., "model": {...}}} (what
    to_ltr_linear writes)."""
    inner = (_json_object(path) or {}).get("model")
    return isinstance(inner, dict) and isinstance(inner.get("model"), dict)


def _is_solr_export(path):
    """A Solr LTR model: a JSON object with "class", "name" and "features" (what
    to_solr_linear writes)."""
    document = _json_object(path) or {}
    return all(key in document for key in ("class", "name", "features"))


class NotExportable(InputFormatError):
    """What a format cannot hold of the model (its normaliser's ranges, float32 limits):
    the command names the model file."""


class RankFeatureMapError(InputFormatError):
    """A Vespa rank-feature map that does not name every model feature, or names others:
    the command names the map's file."""


def linear_weights(model: SVMMap | BaselineRanker | PathLike) -> tuple[FloatArray, float, str]:
    """``(coef, intercept, description)`` of a fitted linear ranker or a model file's path
    (any kind: svmmap.data.model_file.load_model): the weights over the normalised features.

    Refuses models that are not linear in the data's features: RankBoost's thresholds and
    SVMs trained on binned features (``--n-thresholds``), whose weights are over
    indicators."""
    path = model if isinstance(model, (str, os.PathLike)) else None
    model = _loaded(model)
    kind = getattr(model, "KIND", None) or type(model).__name__.lower()
    if not hasattr(model, "coef_"):
        raise ModelFileError(f"a {kind} model is not a linear function of the features: "
                             "only linear models can be exported", path)
    if getattr(model, "feature_map_", None) is not None:
        raise ModelFileError("the model was trained on binned features (--n-thresholds): it "
                             "is linear in the indicator features, not in the data's "
                             "features, so no format can hold it", path)
    coef = np.asarray(model.coef_, dtype=np.float64)
    intercept = float(getattr(model, "intercept_", 0.0) or 0.0)
    loss = getattr(model, "loss", None)
    description = kind + (f", loss {loss}" if loss else "")
    normalizer = getattr(model, "normalizer_", None)
    if normalizer is not None:
        description += f", {normalizer.kind} normaliser"
    return coef, intercept, description


def _checked(model):
    """The loaded model, with the per-query normalisation warning (module docstring)."""
    model = _loaded(model)
    if getattr(model, "per_query_normalized_", None):
        warnings.warn(
            "the training data looks normalised within each query (every query's feature "
            "minimum 0 and maximum 1, as LETOR's QueryLevelNorm): the model weighs "
            "per-query normalised features, which the engine computes per document without "
            "that normalisation, so its scores will not be the model's", stacklevel=3)
    return model


def _names(coef, feature_names):
    if feature_names is None:
        return [str(j + 1) for j in range(len(coef))]
    names = [str(n) for n in feature_names]
    if len(names) != len(coef):
        raise InputFormatError(f"{len(names)} feature names for a model of {len(coef)} "
                               "features")
    if len(set(names)) != len(names) or any(not n.strip() for n in names):
        raise InputFormatError("feature names must be unique and non-empty")
    return names


def _feature_names_of(model, feature_names):
    if feature_names is None and hasattr(model, "feature_names_in_"):
        return list(model.feature_names_in_)
    return feature_names


def _prepared(model, feature_names):
    """(model, coef, intercept, description, names, normalizer)."""
    model = _checked(model)
    coef, intercept, description = linear_weights(model)
    names = _names(coef, _feature_names_of(model, feature_names))
    return model, coef, intercept, description, names, getattr(model, "normalizer_", None)


def _float32_positive(value, what):
    if not np.float32(value) > 0:
        raise NotExportable(f"{what} is {value!r}, which a float32 engine reads as not "
                            "positive")


def to_ltr_linear(model: SVMMap | BaselineRanker | PathLike,
                  feature_names: Sequence[str] | None = None,
                  name: str = "svmmap") -> dict[str, Any]:
    """The LTR plugin's ``_createmodel`` body (a dict) for ``model`` (module docstring)."""
    model, coef, _, _, names, normalizer = _prepared(model, feature_names)
    spec: dict[str, Any] = {"type": "model/linear"}
    if normalizer is not None:
        norms = {}
        for n, shift, scale in zip(names, normalizer.shift.tolist(), normalizer.scale.tolist()):
            if normalizer.kind == "standard":
                _float32_positive(scale, f"feature {n!r}: the standard deviation")
                norms[n] = {"standard": {"mean": shift, "standard_deviation": scale}}
            else:
                top = shift + scale
                if shift < 0 or not np.float32(shift) < np.float32(top):
                    raise NotExportable(
                        f"feature {n!r}: the LTR plugin's min_max normaliser needs 0 <= "
                        f"minimum < maximum, and the training range is [{shift:g}, {top:g}]; "
                        "train with normalize='standard'")
                norms[n] = {"min_max": {"minimum": shift, "maximum": top}}
        spec["feature_normalizers"] = norms
    spec["definition"] = {n: float(w) for n, w in zip(names, coef.tolist())}
    return {"model": {"name": name, "model": spec}}


def to_solr_linear(model: SVMMap | BaselineRanker | PathLike,
                   feature_names: Sequence[str] | None = None, name: str = "svmmap",
                   store: str = "_DEFAULT_") -> dict[str, Any]:
    """Solr LTR's ``LinearModel`` (a dict) for ``model`` in feature store ``store`` (module
    docstring); every feature weighted."""
    model, coef, _, _, names, normalizer = _prepared(model, feature_names)
    features = []
    for j, n in enumerate(names):
        norm: dict[str, Any]
        if normalizer is None:
            norm = {"class": SOLR_NORMS[None]}
        elif normalizer.kind == "standard":
            shift, scale = float(normalizer.shift[j]), float(normalizer.scale[j])
            _float32_positive(scale, f"feature {n!r}: the standard deviation")
            norm = {"class": SOLR_NORMS["standard"],
                    "params": {"avg": repr(shift), "std": repr(scale)}}
        else:
            low = float(normalizer.shift[j])
            high = low + float(normalizer.scale[j])
            if np.float32(high) - np.float32(low) == 0:
                raise NotExportable(f"feature {n!r}: the range [{low:g}, {high:g}] is "
                                    "empty in float32, which Solr's MinMaxNormalizer refuses")
            norm = {"class": SOLR_NORMS["minmax"],
                    "params": {"min": repr(low), "max": repr(high)}}
        features.append({"name": n, "norm": norm})
    return {"store": store, "class": SOLR_LINEAR, "name": name, "features": features,
            "params": {"weights": {n: float(w) for n, w in zip(names, coef.tolist())}}}


def read_rank_features(path: PathLike) -> dict[str, str]:
    """``{feature name: Vespa rank feature}`` from a file of ``name rank-feature`` lines
    (blank lines and ``#`` comments skipped)."""
    mapping = {}
    for number, line in enumerate(_utf8_lines(path, "the rank features"), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        parts = text.split(None, 1)
        if len(parts) != 2:
            raise InputFormatError("expected 'feature-name rank-feature'", path, number)
        if parts[0] in mapping:
            raise InputFormatError(f"feature {parts[0]!r} is mapped twice", path, number)
        mapping[parts[0]] = parts[1].strip()
    return mapping


def _utf8_lines(path, what):
    """The lines of the UTF-8 text file ``path`` (a byte-order mark dropped); InputFormatError
    naming the file (and the line of the first byte that is not UTF-8) when it cannot be read
    or decoded; ``what`` says what the file holds."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise InputFormatError(f"cannot read {what}: {exc.strerror}", path) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[:err.start].count(b"\n") + 1
        raise InputFormatError(f"not valid UTF-8 (byte 0x{data[err.start]:02x}): save "
                               f"{what} as UTF-8", path, line) from None
    return text.removeprefix("\ufeff").splitlines()


def to_vespa_profile(model: SVMMap | BaselineRanker | PathLike, rank_features: dict[str, str],
                     feature_names: Sequence[str] | None = None, name: str = "svmmap") -> str:
    """A Vespa rank profile (text) scoring by ``model``: ``rank_features`` maps every model
    feature name to the rank feature that computes it (module docstring)."""
    model, coef, intercept, description, names, normalizer = _prepared(model, feature_names)
    missing = [n for n in names if n not in rank_features]
    unknown = sorted(set(rank_features) - set(names))
    if missing or unknown:
        raise RankFeatureMapError(
            "the rank-feature map must name every model feature and no other: "
            + (f"missing {missing[:5]}" if missing else "")
            + ("; " if missing and unknown else "")
            + (f"not model features {unknown[:5]}" if unknown else ""))
    terms = []  # (sign, magnitude text): no "+ -" nor "- -" for the expression parser
    for j, n in enumerate(names):
        value = rank_features[n]
        if normalizer is not None:
            shift = float(normalizer.shift[j])
            value = (f"(({value} {'-' if shift >= 0 else '+'} {abs(shift)!r}) / "
                     f"{float(normalizer.scale[j])!r})")
        terms.append((coef[j] < 0, f"{abs(float(coef[j]))!r} * {value}"))
    if intercept:
        terms.append((intercept < 0, repr(abs(intercept))))
    expression = "".join(
        (("-" if negative else "") if i == 0 else (" - " if negative else " + ")) + text
        for i, (negative, text) in enumerate(terms)) or "0"
    return (f"# exported by svmmap: {description}\n"
            f"rank-profile {name} {{\n"
            f"    first-phase {{\n"
            f"        expression: {expression}\n"
            f"    }}\n"
            f"}}\n")


def to_ranklib_linear(model: SVMMap | BaselineRanker | PathLike,
                      feature_names: Sequence[str] | None = None) -> str:
    """RankLib's linear model file (text) for ``model``: feature ids 1..d, names (from
    ``feature_names`` or the DataFrame columns of ``fit``) as comments, a normaliser folded
    into the weights (module docstring)."""
    model, coef, intercept, description, names, normalizer = _prepared(model, feature_names)
    if normalizer is not None:
        coef, constant = normalizer.fold(coef)
        intercept += constant
    comments = [f"## feature {j} = {n}\n" for j, n in enumerate(names, 1) if n != str(j)]
    pairs = [f"0:{intercept!r}"] + [f"{j}:{w!r}" for j, w in enumerate(coef.tolist(), 1)]
    return (f"## {RANKLIB_NAME}\n## exported by svmmap: {description}\n" + "".join(comments)
            + " ".join(pairs) + "\n")


class ExportOptions(NamedTuple):
    """What a format's writer may read besides the model (``export``'s arguments)."""

    feature_names: Sequence[str] | None = None
    name: str = "svmmap"
    store: str = "_DEFAULT_"
    rank_features: dict[str, str] | PathLike | None = None


class ExportFormat(NamedTuple):
    """One export format: everything ``export`` and ``python -m svmmap.export`` ask of it."""

    #: as ``--format`` and ``export(format=...)`` take it
    name: str
    #: what it is, in the command's description
    title: str
    #: its phrase in ``--format``'s help
    help: str
    #: the kind of file it writes (an existing output of another kind is refused unless
    #: ``--force``: svmmap.data.atomic.check_output)
    output: OutputKind
    #: the text of the output file for a model
    write: Callable[[SVMMap | BaselineRanker | PathLike, ExportOptions], str]


def _json_text(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=1) + "\n"


def _ltr_text(model: SVMMap | BaselineRanker | PathLike, options: ExportOptions) -> str:
    return _json_text(to_ltr_linear(model, options.feature_names, options.name))


def _solr_text(model: SVMMap | BaselineRanker | PathLike, options: ExportOptions) -> str:
    return _json_text(to_solr_linear(model, options.feature_names, options.name,
                                     options.store))


def _vespa_text(model: SVMMap | BaselineRanker | PathLike, options: ExportOptions) -> str:
    rank_features = options.rank_features
    if rank_features is None:
        raise InputFormatError("the vespa format needs the rank-feature map "
                               "(--rank-features FILE: 'feature-name rank-feature' lines)")
    if not isinstance(rank_features, dict):
        rank_features = read_rank_features(rank_features)
    return to_vespa_profile(model, rank_features, options.feature_names, options.name)


def _ranklib_text(model: SVMMap | BaselineRanker | PathLike, options: ExportOptions) -> str:
    return to_ranklib_linear(model, options.feature_names)


#: the export formats by name, in the order the command lists them (module docstring)
EXPORT_FORMATS = {f.name: f for f in (
    ExportFormat("ltr", "the OpenSearch / Elasticsearch LTR plugin's model/linear (a "
                 "_createmodel request body)", "LTR plugin JSON",
                 OutputKind("an LTR plugin model (a _createmodel body)", _is_ltr_export),
                 _ltr_text),
    ExportFormat("solr", "Solr LTR's LinearModel", "Solr LTR LinearModel JSON",
                 OutputKind("a Solr LTR model (a JSON object with class, name and features)",
                            _is_solr_export),
                 _solr_text),
    ExportFormat("vespa", "a Vespa rank profile", "a rank profile",
                 OutputKind("a Vespa rank profile (first line '# exported by svmmap')",
                            lambda path: _head(path, 64).startswith(b"# exported by svmmap")),
                 _vespa_text),
    ExportFormat("ranklib", "RankLib's linear model", "RankLib linear model",
                 OutputKind("a RankLib model (first line '## <model name>')",
                            lambda path: _head(path, 64).startswith(b"## ")),
                 _ranklib_text),
)}
#: the names of the export formats
FORMATS = tuple(EXPORT_FORMATS)
#: the format of ``export`` and the command without ``--format``
DEFAULT_FORMAT = "ltr"


def export(model: SVMMap | BaselineRanker | PathLike, path: PathLike,
           format: str = DEFAULT_FORMAT, feature_names: Sequence[str] | None = None,
           name: str = "svmmap", store: str = "_DEFAULT_",
           rank_features: dict[str, str] | PathLike | None = None) -> None:
    """Write ``model`` to ``path`` in ``format`` (a name of EXPORT_FORMATS), atomically;
    ``rank_features`` (a dict or a file's path): Vespa's map of model features to rank
    features."""
    if format not in EXPORT_FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
    options = ExportOptions(feature_names, name, store, rank_features)
    write_text_atomically(path, EXPORT_FORMATS[format].write(model, options))


def read_feature_names(path: PathLike) -> list[str]:
    """One feature name per line (UTF-8), line k naming feature k, in the order of the
    feature indices.  A blank line is refused with its line number (skipping it would give
    every later feature its neighbour's name), and so is a name given twice; blank lines
    at the end of the file are ignored."""
    names = [line.strip() for line in _utf8_lines(path, "the feature names")]
    while names and not names[-1]:
        names.pop()
    first: dict[str, int] = {}
    for lineno, name in enumerate(names, 1):
        if not name:
            raise InputFormatError(f"blank line: line k names feature k, so a blank line "
                                   f"would shift every later name (name feature {lineno})",
                                   path, lineno)
        if name in first:
            raise InputFormatError(f"feature name {name!r} repeated (first on line "
                                   f"{first[name]})", path, lineno)
        first[name] = lineno
    return names


def _listed(items: list[str]) -> str:
    """"a, b or c"."""
    return ", ".join(items[:-1]) + " or " + items[-1] if len(items) > 1 else items[0]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m svmmap.export`` (module docstring); returns the exit status."""
    parser = ArgumentParser(
        prog="python -m svmmap.export",
        description="Write a trained linear svmmap model (SVM-MAP, SVM-ROC, AdaRank, PRank, "
                    "...), its normaliser included, for a search engine: "
                    + _listed([f.title for f in EXPORT_FORMATS.values()]) + ".")
    parser.add_argument("model_file", help="model written by svmmap_learn or "
                                           "svmmap_baseline_learn")
    parser.add_argument("output_file", help="where to write the exported model")
    parser.add_argument("--format", choices=FORMATS, default=DEFAULT_FORMAT,
                        help="; ".join(f"{f.name}: {f.help}"
                                       + (" (default)" if f.name == DEFAULT_FORMAT else "")
                                       for f in EXPORT_FORMATS.values()))
    parser.add_argument("--feature-names", metavar="FILE", default=None,
                        help="one name per line, for feature 1, 2, ... (default: the "
                             "feature indices)")
    parser.add_argument("--name", default="svmmap",
                        help="model name (LTR plugin, Solr) or rank-profile name (Vespa)")
    parser.add_argument("--store", default="_DEFAULT_",
                        help="solr: the feature store of the model (default _DEFAULT_)")
    parser.add_argument("--rank-features", metavar="FILE", default=None,
                        help="vespa: 'feature-name rank-feature' per line, e.g. "
                             "'bm25_title bm25(title)', every model feature mapped")
    parser.add_argument("--force", action="store_true",
                        help="replace an existing output file that is not a model of the "
                             "format written (an input file is never replaced)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    args = parser.parse_args(argv)
    try:
        with interrupts.handled():
            check_output(args.output_file,
                         [args.model_file, args.feature_names, args.rank_features],
                         EXPORT_FORMATS[args.format].output, args.force)
            names = None if args.feature_names is None else read_feature_names(args.feature_names)
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    export(args.model_file, args.output_file, args.format, names, args.name,
                           args.store, args.rank_features)
            except InputFormatError as exc:  # name the file at fault
                at_fault = args.model_file if isinstance(exc, NotExportable) else \
                    args.rank_features if isinstance(exc, RankFeatureMapError) else \
                    args.feature_names  # the names do not fit the model
                if exc.path is not None or at_fault is None:
                    raise
                raise InputFormatError(exc.reason, at_fault) from None
            except ModelFileError as exc:  # what the model cannot be exported as: name its file
                if exc.path is not None:
                    raise
                raise ModelFileError(exc.reason, args.model_file) from None
            for warning in caught:
                print(f"{parser.prog}: warning: {warning.message}", file=sys.stderr)
    except (SVMMapError, OSError) as exc:
        if args.debug:
            raise
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # Ctrl-C or SIGTERM: the output is written atomically, so none is half-written and
        # no temporary file stays (svmmap.data.atomic)
        return interrupts.stopped(parser.prog)
    return 0


if __name__ == "__main__":
    sys.exit(main())
