"""What every svmmap ranker shares (SVMMap and the baselines): scikit-learn's estimator API.

* Parameters are the constructor's keyword arguments (``sklearn.base.BaseEstimator``: get_params,
  set_params, clone, repr) and are validated in one place, declaratively: the class attribute
  ``_parameter_rules`` (svmmap.core.params, checked without scikit-learn) plus
  ``_parameter_scopes`` for options that apply only under another option's value.
  ``check_params`` runs both and raises scikit-learn's InvalidParameterError; the command-line
  tools check their options by the same rules (for SVMMap, svmmap.core.params.check_svmmap), so
  the API and the CLI accept and reject exactly the same values.  ``_parameter_constraints``, which
  scikit-learn's tools read, is derived from the rules.
* ``qid`` (the query of each row) is metadata: ``fit``, ``decision_function`` / ``predict``
  and ``score`` take it by keyword, so scikit-learn's metadata routing passes it through
  ``GridSearchCV`` and ``cross_val_score`` (``est.set_fit_request(qid=True)
  .set_score_request(qid=True)``).  ``qid=None`` means that all rows form one query.
* ``score(X, y, qid=None)`` is the Mean Average Precision of the ranking by
  ``decision_function`` (svmmap.metrics; relevant means y > 0).
* One persistence path (svmmap.data.model_file): ``save`` writes the kind, the model parameters
  (without the run-time settings listed in ``_runtime_params``), the input's feature count
  and names, the fitted state (``_fitted_state``) and the training record
  (``_model_content``); ``load`` /
  ``svmmap.data.model_file.load_model`` restore all of it (``_restore``), so a loaded model holds
  the same facts as a fitted one, less the timings and the per-iteration history.
* Input goes through ``sklearn.utils.validation.validate_data``: ``n_features_in_`` and, for a
  pandas DataFrame, ``feature_names_in_`` are set by ``fit`` and checked by every method that
  takes X; ``NotFittedError`` before ``fit``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import metrics
from ..data.model_file import damage_reported, model_content, model_params, read_model, write_model
from ..errors import InputFormatError
from .collection import QueryCollection
from .rules import ParameterError, check, sklearn_constraints

if TYPE_CHECKING:
    from typing import Self

    from ._typing import Matrix, PathLike, Vector
    from .rules import Rules, Scopes

#: the value types X is taken in (validate_data's ``dtype``: kept when it is one of them, else
#: converted to the first): float32 X is read in place by the kernels, never copied to float64
VALUE_TYPES = [np.float64, np.float32]


class InvalidParameter(InvalidParameterError, ParameterError):
    """A parameter outside its rules, raised by ``check_params``: scikit-learn's
    InvalidParameterError and svmmap.core.rules.ParameterError at once (the command-line tools
    catch the latter without importing scikit-learn)."""


class RuleChecked:
    """Parameters checked by svmmap.core.params rules: a subclass declares ``_parameter_rules``
    (and optionally ``_parameter_scopes``); scikit-learn's ``_parameter_constraints`` follow
    from them."""

    #: parameter -> list of svmmap.core.params rules (None: None is accepted)
    _parameter_rules: Rules = {}
    #: parameter -> (other parameter, its values under which the parameter applies, the
    #: parameter's value that means "not used")
    _parameter_scopes: Scopes = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_parameter_rules" in cls.__dict__:
            cls._parameter_constraints = sklearn_constraints(cls._parameter_rules)

    def check_params(self) -> None:
        """Validate every parameter (types, ranges, and the scopes of options that apply only
        under another option's value); raise ``InvalidParameterError`` (a ValueError) naming
        the parameter."""
        try:
            # a mixin of BaseEstimator, which defines get_params
            self._check_param_rules(self.get_params(deep=False))  # type: ignore[attr-defined]
        except ParameterError as exc:
            raise InvalidParameter(str(exc)) from None

    def _check_param_rules(self, params):
        check(type(self).__name__, params, self._parameter_rules, self._parameter_scopes)


class BaseRanker(RuleChecked, BaseEstimator):
    """Base class of the svmmap rankers (module docstring).  Subclasses define
    ``_parameter_rules``, optionally ``_parameter_scopes``, ``fit`` and
    ``decision_function``."""

    #: the model-file kind (svmmap.data.model_file.MODEL_KINDS)
    KIND: str | None = None
    #: parameters that say how to train, not what the model is: not written to model files
    _runtime_params: tuple[str, ...] = ("verbose",)
    #: the fewest feature columns fit and predict accept
    _min_features = 1

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # A ranker is neither a classifier nor a regressor: scikit-learn has no estimator type
        # for it, so estimator_type stays None; it needs y, takes sparse X, must be fitted.
        tags.target_tags.required = True
        tags.target_tags.single_output = True
        tags.input_tags.sparse = True
        tags.requires_fit = True
        return tags

    # -- input checks ------------------------------------------------------------------------

    def _validate_training_data(self, X, y, qid):
        """(X, y, qid): X float64 (or float32, kept: the kernels read it in place) CSR or
        C-contiguous dense, y numbers, qid one entry per row (None: every row in one query).
        Sets n_features_in_ and, for a DataFrame, feature_names_in_.  X's finiteness is left
        to QueryCollection.from_validated, which every fit calls next
        (``_training_collection``: one scan of the values)."""
        try:
            X, y = validate_data(self, X, y, accept_sparse="csr", dtype=VALUE_TYPES,
                                 order="C", y_numeric=True, ensure_all_finite=False,
                                 ensure_min_features=self._min_features)
        except InputFormatError:
            raise
        except ValueError as exc:
            raise InputFormatError(str(exc)) from None
        return X, y, check_qid(qid, X.shape[0])

    def _training_collection(self, X, y, qid):
        """The training documents validated (``_validate_training_data``) and checked once
        into a QueryCollection, the trusted object training takes (svmmap.core.collection)."""
        return QueryCollection.from_validated(*self._validate_training_data(X, y, qid))

    def _validate_eval_sets(self, sets, eval_qid=False):
        """The validation sets (svmmap.core.groups.eval_sets: a list of (X, y, qid)) checked as the
        training data is, before any training (``n_features_in_`` is the training data's,
        set by ``_validate_training_data``): its columns (and names), finite values, numeric
        labels, one query id per row.  An error names the set: ``eval_set[i] (validation
        data): reason``; ``eval_qid``: the query ids came from eval_qid (named so)."""
        checked = []
        for i, (X, y, qid) in enumerate(sets):
            try:
                X, y = validate_data(self, X, y, reset=False, accept_sparse="csr",
                                     dtype=VALUE_TYPES, order="C", y_numeric=True,
                                     ensure_min_features=self._min_features)
                checked.append((X, y, check_qid(qid, X.shape[0],
                                                f"eval_qid[{i}]" if eval_qid else "qid")))
            except ValueError as exc:
                reason = exc.reason if isinstance(exc, InputFormatError) else \
                    str(exc).splitlines()[0]  # scikit-learn's NaN advice runs on for lines
                raise InputFormatError(f"eval_set[{i}] (validation data): {reason}") from None
        return checked

    def _validate_X(self, X, qid=None):
        """X checked against the fitted model (NotFittedError before fit, then the number and
        names of the features); qid checked when given."""
        check_is_fitted(self)
        try:
            X = validate_data(self, X, accept_sparse="csr", dtype=VALUE_TYPES, order="C",
                              reset=False, ensure_min_features=self._min_features)
        except ValueError as exc:
            raise InputFormatError(str(exc)) from None
        return X, None if qid is None else check_qid(qid, X.shape[0])

    # -- evaluation --------------------------------------------------------------------------

    def score(self, X: Matrix, y: Vector, qid: Vector | None = None,
              convention: str = "letor") -> float:
        """Mean Average Precision of the ranking of every query's documents by
        ``decision_function`` (svmmap.metrics; relevant: y > 0; LETOR convention -- a query
        without a relevant document counts AP 0 -- unless ``convention="trec_eval"``).
        ``qid=None``: all rows are one query."""
        scores = self.decision_function(X, qid=qid)
        qid = check_qid(qid, len(scores))
        return metrics.mean_average_precision(scores, y, qid, convention=convention)


    # -- persistence (svmmap.data.model_file) ------------------------------------------------------

    def save(self, path: PathLike) -> None:
        """Write the fitted model to ``path`` (svmmap.data.model_file: versioned JSON, written
        atomically)."""
        check_is_fitted(self)
        write_model(path, self._model_content())

    def _model_content(self):
        """The model file's content (svmmap.data.model_file.model_content) of this fitted model."""
        return model_content(self.KIND, model_params(self.get_params(deep=False),
                                                     self._runtime_params),
                             self.n_features_in_, *self._fitted_state(),
                             getattr(self, "feature_names_in_", None))

    @classmethod
    def load(cls, path: PathLike) -> Self:
        """Read a model written by ``save`` (any version); a file of another kind is refused
        (svmmap.data.model_file.load_model reads every kind)."""
        return cls._from_document(read_model(path, kind=cls.KIND), path)

    @classmethod
    def _from_document(cls, document, path):
        """The fitted estimator a checked version-2 document (read_model) describes."""
        with damage_reported(path, "damaged model file: bad params ({})"):
            model = cls(**cls._params_from_file(document["params"]))
            model.check_params()
        model.n_features_in_ = document["n_features_in"]
        if "feature_names_in" in document:
            model.feature_names_in_ = np.asarray(document["feature_names_in"], dtype=object)
        with damage_reported(path, f"damaged model file ({cls.KIND}: {{}})"):
            model._restore(document["model"], document["training"])
        return model

    @classmethod
    def _params_from_file(cls, params):
        """Constructor arguments from the file's params (a subclass turns nested
        estimators back into objects)."""
        return params


def check_qid(qid: Vector | None, n_rows: int, name: str = "qid") -> np.ndarray:
    """The query id of every row; None means one query holding every row.

    Query ids are integers, strings or finite floats, all of one kind: an object array
    mixing numbers and strings (``[1, "a"]``) is refused rather than guessed at (is 1 the
    query "1"?), and so are missing ids (None, NaN)."""
    if qid is None:
        return np.zeros(n_rows, dtype=np.int64)
    ids = np.asarray(qid)
    if ids.ndim != 1:
        raise InputFormatError(f"qid must be one-dimensional, got shape {ids.shape}")
    if len(ids) != n_rows:
        raise InputFormatError(f"X has {n_rows} rows but {name} has {len(ids)} entries")
    if ids.dtype == object:
        ids = _uniform_qid(ids)
    if ids.dtype.kind not in "iubfUS":
        raise InputFormatError(f"qid must hold integers or strings, got dtype {ids.dtype}")
    if ids.dtype.kind == "f" and not np.all(np.isfinite(ids)):
        raise InputFormatError("qid holds NaN or infinity: every row needs a query id")
    return ids


def _uniform_qid(qid):
    """An object array of query ids as an array of one kind (str or numbers), or the error
    naming two ids of different kinds."""
    strings = np.array([isinstance(q, str) for q in qid.tolist()], dtype=bool)
    if strings.all():
        return qid.astype(str)
    if strings.any():
        text, other = qid[np.argmax(strings)], qid[np.argmin(strings)]
        raise InputFormatError(f"qid mixes strings and other values ({text!r} and {other!r}): "
                               "give every query id as a string, or every one as a number")
    values = np.asarray(qid.tolist())
    if values.dtype.kind not in "iubf":
        kinds = sorted({type(q).__name__ for q in qid.tolist()})
        raise InputFormatError(f"qid must hold integers or strings, found {', '.join(kinds)}")
    return values
