"""Export a trained linear model to search engines: the OpenSearch / Elasticsearch
Learning-to-Rank plugin's linear model, and RankLib's linear model file.

Both score a document by ``w . x`` over the model's features, which is what svmmap ranks by
(the intercept, if any, shifts every score equally and does not change a ranking):

* **LTR plugin** (o19s Elasticsearch LTR and the OpenSearch LTR plugin): the body of
  ``POST _ltr/_featureset/<feature set>/_createmodel``::

      {"model": {"name": NAME,
                 "model": {"type": "model/linear",
                           "definition": {"<feature name>": weight, ...}}}}

  The plugin's ``model/linear`` parser reads ``definition`` as an object from feature names
  of the feature set to weights and scores ``sum_i weight_i * feature_i`` (no intercept).
  Feature names are those of the feature set: from ``feature_names`` (a file of one name per
  line, in the order of the data's feature indices 1, 2, ...) or the DataFrame columns seen
  by ``fit`` (``feature_names_in_``); without names, the indices ``"1"``, ``"2"``, ...
* **RankLib** (``-load`` of a linear regression model, ``LinearRegRank``)::

      ## Linear Regression
      ## exported by svmmap: <model description>
      0:<intercept> 1:<w_1> 2:<w_2> ...

  RankLib recognises the model by its first line; lines starting with ``##`` are comments;
  the weights line maps feature ids (1-based, as in the data files; or feature names for the
  LTR plugin's "ranklib" models) to weights, id 0 being the constant term.

Command line::

    python -m svmmap.export --format ltr|ranklib [--feature-names FILE] [--name NAME]
                            model_file output_file
"""

import argparse
import json
import sys

import numpy as np

from .atomic import OutputKind, check_output, write_text_atomically
from .errors import InputFormatError, ModelFileError, SVMMapError
from .model_file import load_model

__all__ = ["FORMATS", "linear_weights", "to_ltr_linear", "to_ranklib_linear", "export"]

FORMATS = ("ltr", "ranklib")
RANKLIB_NAME = "Linear Regression"


def _head(path, size=4096):
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def _is_ltr_export(path):
    """An LTR plugin request body: a JSON object {"model": {..., "model": {...}}} (what
    to_ltr_linear writes)."""
    if not _head(path).lstrip().startswith(b"{"):
        return False
    try:
        with open(path, "rb") as handle:
            document = json.load(handle)
    except (OSError, ValueError, RecursionError):
        return False
    inner = document.get("model") if isinstance(document, dict) else None
    return isinstance(inner, dict) and isinstance(inner.get("model"), dict)


#: what each format writes (svmmap.atomic.check_output): an existing output of another kind
#: is refused unless --force
OUTPUT_KINDS = {
    "ltr": OutputKind("an LTR plugin model (a _createmodel body)", _is_ltr_export),
    "ranklib": OutputKind("a RankLib model (first line '## <model name>')",
                          lambda path: _head(path, 64).startswith(b"## ")),
}


def linear_weights(model):
    """``(coef, intercept, description)`` of a fitted linear ranker or a model file's path
    (any kind: svmmap.model_file.load_model).

    Refuses models that are not linear in the data's features: RankBoost's thresholds and
    SVMs trained on binned features (``--n-thresholds``), whose weights are over
    indicators."""
    if not hasattr(model, "get_params"):
        model = load_model(model)
    kind = getattr(model, "KIND", None) or type(model).__name__.lower()
    if not hasattr(model, "coef_"):
        raise ModelFileError(f"a {kind} model is not a linear function of the features: "
                             "only linear models can be exported")
    if getattr(model, "feature_map_", None) is not None:
        raise ModelFileError("the model was trained on binned features (--n-thresholds): it "
                             "is linear in the indicator features, not in the data's "
                             "features, so neither format can hold it")
    coef = np.asarray(model.coef_, dtype=np.float64)
    intercept = float(getattr(model, "intercept_", 0.0) or 0.0)
    loss = getattr(model, "loss", None)
    description = kind + (f", loss {loss}" if loss else "")
    return coef, intercept, description


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


def to_ltr_linear(model, feature_names=None, name="svmmap"):
    """The LTR plugin's ``_createmodel`` body (a dict) for ``model`` (module docstring)."""
    coef, _, _ = linear_weights(model)
    names = _names(coef, _feature_names_of(model, feature_names))
    definition = {n: float(w) for n, w in zip(names, coef.tolist())}
    return {"model": {"name": name, "model": {"type": "model/linear",
                                              "definition": definition}}}


def to_ranklib_linear(model, feature_names=None):
    """RankLib's linear model file (text) for ``model``; feature ids 1..d unless
    ``feature_names`` (or the DataFrame columns of ``fit``) name them."""
    coef, intercept, description = linear_weights(model)
    names = _names(coef, _feature_names_of(model, feature_names))
    if any(":" in n or " " in n for n in names):
        raise InputFormatError("RankLib feature names cannot hold ':' or spaces")
    pairs = [f"0:{intercept!r}"] + [f"{n}:{w!r}" for n, w in zip(names, coef.tolist())]
    return f"## {RANKLIB_NAME}\n## exported by svmmap: {description}\n{' '.join(pairs)}\n"


def export(model, path, format="ltr", feature_names=None, name="svmmap"):
    """Write ``model`` to ``path`` in ``format`` ("ltr" or "ranklib"), atomically."""
    if format == "ltr":
        text = json.dumps(to_ltr_linear(model, feature_names, name), indent=1) + "\n"
    elif format == "ranklib":
        text = to_ranklib_linear(model, feature_names)
    else:
        raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
    write_text_atomically(path, text)


def read_feature_names(path):
    """One feature name per non-blank line, in the order of the feature indices."""
    try:
        with open(path, encoding="utf-8") as handle:
            return [line.strip() for line in handle if line.strip()]
    except OSError as exc:
        raise InputFormatError(f"cannot read feature names: {exc.strerror}", path) from None


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m svmmap.export",
        description="Write a trained linear svmmap model (SVM-MAP, SVM-ROC, AdaRank, PRank, "
                    "...) for a search engine: the OpenSearch / Elasticsearch LTR plugin's "
                    "model/linear (a _createmodel request body) or RankLib's linear model.")
    parser.add_argument("model_file", help="model written by svmmap_learn or "
                                           "svmmap_baseline_learn")
    parser.add_argument("output_file", help="where to write the exported model")
    parser.add_argument("--format", choices=FORMATS, default="ltr",
                        help="ltr: LTR plugin JSON (default); ranklib: RankLib linear model")
    parser.add_argument("--feature-names", metavar="FILE", default=None,
                        help="one name per line, for feature 1, 2, ... (default: the "
                             "feature indices)")
    parser.add_argument("--name", default="svmmap", help="model name in the LTR plugin")
    parser.add_argument("--force", action="store_true",
                        help="replace an existing output file that is not a model of the "
                             "format written (an input file is never replaced)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    args = parser.parse_args(argv)
    try:
        check_output(args.output_file, [args.model_file, args.feature_names],
                     OUTPUT_KINDS[args.format], args.force)
        names = None if args.feature_names is None else read_feature_names(args.feature_names)
        export(args.model_file, args.output_file, args.format, names, args.name)
    except (SVMMapError, OSError) as exc:
        if args.debug:
            raise
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
