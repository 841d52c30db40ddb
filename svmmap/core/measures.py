"""The measure registry: one record per ranking measure, and every list of measure names in
svmmap derived from it.

A :class:`Measure` says how the measure is written (its name and whether it takes a cutoff
``@k``), how it is printed, which per-query kernel of :mod:`svmmap.metrics` computes it, and,
when the structural SVMs can optimise ``Delta = 1 - measure``, which plugin of
:mod:`svmmap.core.plugins` does so (and, for :class:`~svmmap.core.plugins.MeasurePlugin`, under
which
kind :mod:`svmmap.kernels._loss_kernels` runs its exact oracle).  From :data:`MEASURES` follow:

* the losses (``SVMMap(loss=...)``, ``svmmap_learn -l``, the parameter rule of
  :mod:`svmmap.core.params`, the plugin :mod:`svmmap.core.training` builds, the experiments' SVMs);
* the reported measures (``svmmap_classify --metrics``, :func:`svmmap.metrics.evaluate`);
* the validation measures of model selection (``--select-metric``, ``SVMMapCV``'s
  ``select_metric``, the experiments' grids);
* the help texts and error messages that list them.

Adding a measure is one record here plus its per-query kernel (a method of
:class:`svmmap.core.rankings.Ranking`, named in :mod:`svmmap.metrics`' ``_KERNELS``) and, to
train for it, one record of the loss table of :mod:`svmmap.kernels._loss_kernels` with its
oracle (docs: the mathematics, "Adding a loss").  This module imports nothing beyond the
standard library: the commands parse and check their arguments with it before numpy loads.
"""

from __future__ import annotations

from typing import NamedTuple

#: cutoff rules: the name takes no ``@k``; may take one (without it: the whole ranking); must
NO_CUTOFF, OPTIONAL_CUTOFF, REQUIRED_CUTOFF = "none", "optional", "required"
#: what a measure name is used for: optimised (a loss), reported, or choosing a model
USES = ("loss", "report", "select")


class Measure(NamedTuple):
    """One ranking measure (module docstring); a named tuple (dataclasses would import
    ``inspect``, a tenth of the commands' start-up).

    ``name``: lower-case, as users write it (``"ndcg"``; ``"ndcg@10"`` with a cutoff).
    ``label``: how results print it (``"NDCG"``, ``"NDCG@10"``).
    ``cutoff``: NO_CUTOFF, OPTIONAL_CUTOFF or REQUIRED_CUTOFF, for reporting and selection.
    ``metric``: the name of its per-query kernel in :mod:`svmmap.metrics` (``_KERNELS``).
    ``help``: what it is, in one phrase.
    ``plugin``: the :mod:`svmmap.core.plugins` class that optimises 1 - measure, or None when the
    SVMs cannot train for
    it.
    ``oracle``: for ``plugin="MeasurePlugin"``, the kind :mod:`svmmap.kernels._loss_kernels`
    knows it by.
    ``loss_cutoff``: the cutoff rule of the loss name, when it differs from ``cutoff`` (MAP@k
    is reported, but the MAP plugin optimises the whole ranking's AP).
    ``select``: whether model selection may choose by it.
    ``graded``: whether it weighs relevance grades (a query whose documents all share one
    grade then scores the same under every ranking); otherwise only label > 0 counts.
    """

    name: str
    label: str
    cutoff: str
    metric: str
    help: str
    plugin: str | None = None
    oracle: str | None = None
    loss_cutoff: str | None = None
    select: bool = True
    graded: bool = False

    def cutoff_rule(self, use: str) -> str:
        """The cutoff rule of this measure's name for ``use`` (one of USES)."""
        if use == "loss" and self.loss_cutoff is not None:
            return self.loss_cutoff
        return self.cutoff

    def usable_for(self, use: str) -> bool:
        """Whether the measure's name may be given for ``use`` (one of USES): as a loss when
        a plugin trains for it, for model selection when ``select``, always for reports."""
        if use == "loss":
            return self.plugin is not None
        if use == "select":
            return self.select
        return True


#: name -> Measure, in the order help texts list them
MEASURES = {m.name: m for m in (
    Measure("map", "MAP", OPTIONAL_CUTOFF, "ap",
            "average precision (@k: the sum cut at rank k, still divided by the number of "
            "relevant documents: trec_eval's map_cut_k)",
            plugin="MapPlugin", loss_cutoff=NO_CUTOFF),
    Measure("ndcg", "NDCG", OPTIONAL_CUTOFF, "ndcg",
            "normalised discounted cumulative gain (no cutoff: the whole ranking)",
            plugin="MeasurePlugin", oracle="ndcg", graded=True),
    Measure("mrr", "MRR", NO_CUTOFF, "rr", "reciprocal rank of the first relevant document",
            plugin="MeasurePlugin", oracle="mrr"),
    Measure("p", "P", REQUIRED_CUTOFF, "p", "precision of the top k",
            plugin="MeasurePlugin", oracle="p@k"),
    Measure("rprec", "Rprec", NO_CUTOFF, "rprec",
            "R-precision: precision of the top R, R the query's number of relevant documents",
            plugin="MeasurePlugin", oracle="rprec"),
    Measure("roc", "ROC", NO_CUTOFF, "roc",
            "ROC-area: the fraction of (relevant, non-relevant) pairs ordered correctly",
            plugin="RocPlugin"),
    Measure("acc", "ACC", NO_CUTOFF, "accuracy",
            "accuracy of the best score threshold (as a loss: a classification SVM with bias)",
            plugin="AccuracyPlugin", select=False),
    Measure("err", "ERR", REQUIRED_CUTOFF, "err",
            "expected reciprocal rank of the cascade model (Chapelle et al., CIKM 2009)",
            graded=True),
)}


def usable(use: str) -> list[Measure]:
    """The measures usable for ``use`` (one of USES), in registry order."""
    if use not in USES:
        raise ValueError(f"use must be one of {', '.join(USES)}, got {use!r}")
    return [m for m in MEASURES.values() if m.usable_for(use)]


def name_forms(use: str) -> list[str]:
    """How the names of ``use`` are written: ``["map", "ndcg", "ndcg@k", "p@k", ...]``."""
    forms = []
    for m in usable(use):
        rule = m.cutoff_rule(use)
        if rule != REQUIRED_CUTOFF:
            forms.append(m.name)
        if rule != NO_CUTOFF:
            forms.append(f"{m.name}@k")
    return forms


#: the example closing each use's help text
_EXAMPLES = {"loss": " (k a positive integer, e.g. ndcg@10)",
             "report": " (e.g. map,ndcg@10,p@5,mrr)", "select": " (e.g. ndcg@10)"}


def help_text(use: str) -> str:
    """The accepted names of ``use`` as a phrase: ``"map, ndcg, ndcg@k, ... or acc (...)"``."""
    forms = name_forms(use)
    listed = forms[0] if len(forms) == 1 else ", ".join(forms[:-1]) + " or " + forms[-1]
    return listed + _EXAMPLES[use]


def parse(text: object, use: str) -> tuple[str, int | None]:
    """``(measure name, k or None)`` of a name for ``use``: ``"ndcg@10"`` -> ``("ndcg", 10)``,
    ``"map"`` -> ``("map", None)``.  Case-sensitive (callers lower-case what users type);
    a cutoff is a positive integer.  Raises ValueError for anything else."""
    if isinstance(text, str):
        base, at, cutoff = text.partition("@")
        measure = MEASURES.get(base)
        if measure is not None and measure.usable_for(use):
            rule = measure.cutoff_rule(use)
            if not at and rule != REQUIRED_CUTOFF:
                return base, None
            if at and rule != NO_CUTOFF and cutoff.isascii() and cutoff.isdigit() \
                    and int(cutoff) >= 1:
                return base, int(cutoff)
    raise ValueError(f"expected {help_text(use)}, got {text!r}")


def parse_loss(name: object) -> tuple[str, int | None]:
    """(base, k) of a loss name: ("map", None), ("ndcg", 10) for "ndcg@10", ("ndcg", None) for
    "ndcg" (k = the query's size), ("p", 10) for "p@10".  Raises ValueError for anything else
    (a measure without plugin, a missing or superfluous cutoff)."""
    try:
        return parse(name, "loss")
    except ValueError:
        raise ValueError(f"loss must be {help_text('loss')}, got {name!r}") from None


def parse_metrics(text: str) -> tuple[tuple[str, int | None], ...]:
    """``"map,ndcg@10,p@5,mrr"`` -> ``(("map", None), ("ndcg", 10), ("p", 5), ("mrr", None))``
    (case-insensitive, in the given order, duplicates dropped).  Raises ValueError naming the
    accepted names for anything else."""
    parsed: list[tuple[str, int | None]] = []
    for item in text.split(","):
        try:
            measure = parse(item.strip().lower(), "report")
        except ValueError:
            raise ValueError(f"unknown metric {item.strip()!r}: expected "
                             f"{help_text('report')}") from None
        if measure not in parsed:
            parsed.append(measure)
    return tuple(parsed)


def parse_select_metric(name: object) -> str:
    """The lower-case name of a validation measure (case-insensitive): ``"NDCG@10"`` ->
    ``"ndcg@10"``.  Raises ValueError for a name model selection cannot choose by."""
    if isinstance(name, str):
        try:
            parse(name.lower(), "select")
            return name.lower()
        except ValueError:
            pass
    raise ValueError(f"select_metric must be {help_text('select')}, got {name!r}")


def label(name: str, k: int | None = None) -> str:
    """How results print a measure: ``label("ndcg", 10)`` -> ``"NDCG@10"``."""
    return MEASURES[name].label + ("" if k is None else f"@{k}")
