"""A PyTerrier stage that trains and applies an svmmap ranker (needs the ``[pyterrier]`` extra:
PyTerrier's Java-free core, ``pip install svmmap[pyterrier]``; nothing else in svmmap imports
this module).

    import pyterrier as pt
    from svmmap.pyterrier import SVMMapRanker

    pipeline = candidates >> features >> SVMMapRanker(loss="map", Cs=[0.1, 1, 10, 100])
    pipeline.fit(train_topics, train_qrels, valid_topics, valid_qrels)
    pt.Experiment([pipeline], test_topics, test_qrels, ["map", "ndcg_cut_10"])

``SVMMapRanker`` is a ``pt.Estimator``: ``fit`` reads a results frame (``qid``, ``docno``,
``features``: one vector per row) and the qrels (``qid``, ``docno``, ``label``; documents
without a judgment are non-relevant, as PyTerrier's own LTR stages take them), groups the rows
by ``qid`` (any row order) and trains an :class:`svmmap.SVMMap` -- or, with ``Cs``, an
:class:`svmmap.model_selection.SVMMapCV` whose C path is scored on the validation topics
(``valid_topics`` / ``valid_qrels``; without them, on held-out training queries).
``transform`` adds ``score`` (the model's decision_function) and ``rank``.

Every SVMMap parameter (``C``, ``loss``, ``epsilon``, ``normalize``, ...) and SVMMapCV's
(``Cs``, ``select_metric``, ...) is a PyTerrier parameter: ``get_parameter`` /
``set_parameter``.  Setting one after ``fit`` retrains on the stored training (and validation)
topics at the next ``transform``, so ``pt.GridSearch(pipeline, {ranker: {"C": [...]}}, ...)``
tunes C as it tunes any stage's parameter (models already trained for a setting are kept,
not retrained).

PyTerrier's generic ``pt.ltr.apply_learned_model(SVMMap(), form="ltr")`` works too (it passes
LightGBM's ``group=`` / ``eval_set=`` / ``eval_group=``: svmmap.core.groups); ``form="regression"``
passes no queries, so it would train all rows as one query: use this stage instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np
import pyterrier as pt

from .core.params import PARAMETERS, SVMMAP, SVMMAP_CV
from .errors import InputFormatError
from .estimator import SVMMap
from .model_selection import SVMMapCV

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Self

    import pandas as pd
    import scipy.sparse as sp

    from .core._typing import PathLike

__all__ = ["SVMMapRanker", "letor_frames"]

#: SVMMapCV's parameters that SVMMap does not have (the parameter table's); ``Cs`` set means
#: SVMMapCV
_CV_ONLY = tuple(p.name for p in PARAMETERS if SVMMAP_CV in p.places and SVMMAP not in p.places)


def letor_frames(path: PathLike, n_features: int | None = None
                 ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(topics, results, qrels) of an SVMlight / LETOR file for PyTerrier: topics ``qid`` and
    ``query`` (the qid: LETOR files hold no query text), results ``qid``, ``docno`` (LETOR's
    ``#docid =`` comments, else line numbers: svmmap.data.trec_run) and ``features`` (a dense
    vector per row), qrels ``qid``, ``docno`` and ``label`` (negative labels as 0)."""
    import pandas as pd

    from .data.io import load_svmlight
    from .data.trec_run import docnos_from_comments

    # return_comments=True: the 4-tuple of load_svmlight's union of returns
    X, y, qid, comments = cast("tuple[sp.csr_matrix, np.ndarray, np.ndarray, list[str]]",
                               load_svmlight(path, n_features=n_features, return_comments=True))
    qid = qid.astype(str)
    docnos = docnos_from_comments(comments)
    dense = X.toarray()
    results = pd.DataFrame({"qid": qid, "docno": docnos, "features": list(dense)})
    topics = pd.DataFrame({"qid": pd.unique(qid)}).assign(query=lambda t: t["qid"])
    qrels = pd.DataFrame({"qid": qid, "docno": docnos,
                          "label": np.maximum(y, 0).astype(np.int64)})
    return topics, results, qrels


def _defaults():
    """Every parameter of the stage and its default (``Cs``: None, SVMMap)."""
    return {**SVMMapCV().get_params(), **SVMMap().get_params(), "Cs": None}


def _labelled(results, qrels, name):
    """(X, y, qid) of a results frame with the qrels' labels (unjudged: 0); ``name``: the
    qrels' argument (``train_qrels``, ``valid_qrels``), named by an error."""
    import pandas as pd  # PyTerrier's frames: loaded already

    pt.validate.result_frame(results, extra_columns=["features"])
    if len(results) == 0:
        raise ValueError("no results to train on")
    labels = pd.to_numeric(qrels["label"], errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(labels))
    if len(bad):  # read as 0 (unjudged) before
        row = qrels.iloc[bad[0]]
        raise InputFormatError(
            f"{name}: row {bad[0]} (qid {row['qid']}, docno {row['docno']}) has label "
            f"{row['label']!r}, not a finite number: every judged document needs a label "
            "(an unjudged one is left out of the qrels)")
    judged = results[["qid", "docno"]].merge(qrels[["qid", "docno", "label"]],
                                             on=["qid", "docno"], how="left")
    if len(judged) != len(results):
        raise ValueError("the qrels judge a (qid, docno) more than once")
    y = judged["label"].fillna(0).to_numpy(dtype=np.float64)
    return np.stack(results["features"].to_numpy()), y, results["qid"].to_numpy()


class SVMMapRanker(pt.Estimator):
    """Learning-to-rank stage of an svmmap ranker (module docstring).

    Parameters: ``Cs`` (None: train SVMMap at ``C``; a list: SVMMapCV along that C path,
    chosen on the validation topics) and every keyword argument of SVMMap / SVMMapCV.

    Attributes after fit: ``model_`` (the fitted SVMMap or SVMMapCV: ``coef_``, ``C_``,
    ``path_``, ``best_score_`` on the validation topics, ``save``).
    """

    def __init__(self, Cs: Sequence[float] | None = None, **params: Any) -> None:
        self.params = {"Cs": Cs, **params}
        self._estimator()  # unknown parameters fail here, not at fit
        self._data: tuple[Any, Any] | None = None
        self._models: dict[str, SVMMap | SVMMapCV] = {}
        self.model_: SVMMap | SVMMapCV | None = None

    def _estimator(self):
        params = dict(self.params)
        if params["Cs"] is None:
            for name in _CV_ONLY:
                if params.pop(name, None) is not None:
                    raise ValueError(f"{name} applies to the C path: give Cs too")
            return SVMMap(**params)
        params.pop("C", None)
        return SVMMapCV(**params)

    def _key(self):
        return repr(sorted(self.params.items()))

    def fit(self, train_topics: pd.DataFrame, train_qrels: pd.DataFrame,
            valid_topics: pd.DataFrame | None = None,
            valid_qrels: pd.DataFrame | None = None) -> Self:
        """Train on the results frame ``train_topics`` (with ``features``) judged by
        ``train_qrels``; the validation topics choose C along ``Cs`` (SVMMapCV) and are
        measured in ``model_.best_score_``.  Returns self."""
        train = _labelled(train_topics, train_qrels, "train_qrels")
        valid = None
        if valid_topics is not None and len(valid_topics):
            if valid_qrels is None:
                raise ValueError("valid_topics need valid_qrels")
            valid = _labelled(valid_topics, valid_qrels, "valid_qrels")
        self._data, self._models = (train, valid), {}
        self._train()
        return self

    def _train(self):
        (X, y, qid), valid = self._data
        model = self._estimator()
        if valid is None:
            model.fit(X, y, qid)
        else:
            model.fit(X, y, qid, eval_set=[valid[:2]], eval_qid=[valid[2]])
        self._models[self._key()] = self.model_ = model

    def transform(self, results: pd.DataFrame) -> pd.DataFrame:
        """``results`` with ``score`` (the model's scores of ``features``) and ``rank``."""
        pt.validate.result_frame(results, extra_columns=["features"])
        if self._data is None:
            raise ValueError("fit() must be called first")
        if self._key() not in self._models:  # a parameter changed since fit: retrain
            self._train()
        self.model_ = self._models[self._key()]
        results = results.copy()
        if len(results):
            results["score"] = self.model_.decision_function(
                np.stack(results["features"].to_numpy()), qid=results["qid"].to_numpy())
        else:
            results["score"] = np.zeros(0)
        return pt.model.add_ranks(results)

    def transform_outputs(self, columns: list[str]) -> list[str]:
        """The columns ``transform`` returns for input ``columns``: score and rank added."""
        return [*columns, *(c for c in ("score", "rank") if c not in columns)]

    def get_parameter(self, name: str) -> Any:
        """The value of an SVMMap / SVMMapCV parameter (``C``, ``Cs``, ``loss``, ...)."""
        defaults = _defaults()
        if name not in defaults:
            raise ValueError(f"SVMMapRanker has no parameter {name!r}")
        return self.params.get(name, defaults[name])

    def set_parameter(self, name: str, value: Any) -> None:
        """Set an SVMMap / SVMMapCV parameter (checked by its rules); a fitted stage
        retrains at the next transform (module docstring)."""
        old = self.get_parameter(name)
        self.params[name] = value
        try:
            self._estimator().check_params()
        except ValueError:
            self.params[name] = old
            raise

    def __repr__(self):
        shown = ", ".join(f"{k}={v!r}" for k, v in self.params.items()
                          if k == "Cs" and v is not None or k != "Cs")
        return f"SVMMapRanker({shown})"
