"""The option values shared by the command line, the estimator and the metrics, defined
without importing numpy or the extension: ``svmmap_learn --help`` and argument errors need
only these."""

import os
import re

#: the losses SVMMap optimises: these names, and "ndcg@k" / "p@k" for any cutoff k >= 1
#: (``parse_loss``; svmmap.estimator picks the plugin of each)
LOSSES = ("acc", "map", "roc", "ndcg", "mrr", "rprec")
#: the ranking measures whose loss 1 - measure svmmap.plugins.MeasurePlugin optimises, by the
#: kind svmmap._loss_kernels calls them
MEASURE_KINDS = {"ndcg": "ndcg", "mrr": "mrr", "rprec": "rprec", "p": "p@k"}
#: the stopping defaults of training (SVMMap, SVMMapCV, DaskSVMMap and svmmap_learn take
#: them from here): epsilon, the tolerance on constraint violation, and rel_gap, the relative
#: duality gap (P(w) - D) / P(w); None is off, and training stops when the first rule that is
#: on holds.  rel_gap 1e-6 alone, chosen by benchmarks/defaults.py (results/defaults.md):
#: the first setting under which CSR vs dense input and 1 vs 2 threads give the same
#: validation MAP to 3 decimals on every LETOR fold and C of the grid
DEFAULT_EPSILON = None
DEFAULT_REL_GAP = 1e-6
#: model selection: validation measures within this of the best are ties, won by the smallest
#: C (svmmap.selection.choose; values equal to 3 decimals)
DEFAULT_SELECT_TOL = 5e-4
#: the largest relevance grade an NDCG loss trains on: its gain 2^label - 1 (about 1e154)
#: leaves every query's sum of gains, and their products with the discounts, far inside the
#: float64 range; a larger grade is refused with its file and line (svmmap_learn) or row
#: (the API), never capped.  The other losses only ask whether label > 0: any grade works.
MAX_NDCG_LABEL = 512


def ndcg_label_error(label):
    """Why a relevance grade ``label`` cannot be trained with an NDCG loss."""
    return (f"label {label:g} is too large for an NDCG loss: its gain 2^label - 1 overflows "
            f"(grades at most {MAX_NDCG_LABEL})")


LOSS_HELP = "map, roc, acc, ndcg@k, ndcg, mrr, p@k or rprec (k a positive integer, e.g. ndcg@10)"


def parse_loss(name):
    """(base, k) of a loss name: ("map", None), ("ndcg", 10) for "ndcg@10", ("ndcg", None) for
    "ndcg" (k = the query's size), ("p", 10) for "p@10", ("mrr", None), ("rprec", None).
    Raises ValueError for anything else (p needs its cutoff; mrr and rprec take none)."""
    if not isinstance(name, str):
        raise ValueError(f"loss must be {LOSS_HELP}, got {name!r}")
    base, at, cutoff = name.partition("@")
    if not at and base in LOSSES:
        return base, None
    if at and base in ("ndcg", "p") and cutoff.isdigit() and cutoff.isascii() \
            and int(cutoff) >= 1:
        return base, int(cutoff)
    raise ValueError(f"loss must be {LOSS_HELP}, got {name!r}")
#: the measures svmmap_classify --metrics and svmmap.metrics.evaluate(measures=...) report:
#: these names, and map@k / ndcg@k / p@k for a cutoff k >= 1
METRICS = ("map", "ndcg", "mrr", "roc", "acc")
METRICS_HELP = "map, map@k, ndcg, ndcg@k, p@k, mrr, roc or acc (e.g. map,ndcg@10,p@5,mrr)"


def parse_metrics(text):
    """``"map,ndcg@10,p@5,mrr"`` -> ``(("map", None), ("ndcg", 10), ("p", 5), ("mrr", None))``
    (case-insensitive, in the given order, duplicates dropped).  Raises ValueError naming the
    accepted names for anything else."""
    parsed = []
    for item in text.split(","):
        name = item.strip().lower()
        base, at, cutoff = name.partition("@")
        if not at and base in METRICS:
            measure = (base, None)
        elif at and base in ("map", "ndcg", "p") and cutoff.isascii() and cutoff.isdigit() \
                and int(cutoff) >= 1:
            measure = (base, int(cutoff))
        else:
            raise ValueError(f"unknown metric {item.strip()!r}: expected {METRICS_HELP}")
        if measure not in parsed:
            parsed.append(measure)
    return tuple(parsed)

def thread_count(n_threads):
    """The threads to start for a request of ``n_threads`` (>= 1): at most the machine's
    cores -- more never help, and OpenMP would try to start every one asked for."""
    return max(1, min(int(n_threads), os.cpu_count() or 1))


#: Algorithm 2 variants: exact divide and conquer over the monotone opt_j, or the plain scan
ORACLES = ("divide", "scan")
#: evaluation conventions of svmmap.metrics: "letor" (LETOR's scripts: ties in file order,
#: NDCG gain 2^label - 1) and "trec_eval" (ties by docno, NDCG gain = label); both count a
#: query without a relevant document with AP 0
CONVENTIONS = ("letor", "trec_eval")

#: largest |feature value| accepted.  The learners form sums of squares of feature values
#: (|w|^2, Gram matrices of up to 2^27 features) and products with C: above 1e100 these
#: overflow the float64 range (1.8e308) or lose every smaller feature to rounding, so such
#: values are refused with their place rather than scaled silently (scaling would change
#: the trade-off C means); 1e100 leaves 1e108 of headroom.
MAX_ABS_VALUE = 1e100

#: validation measures a C path can be selected by (svmmap.selection.validation_measure)
SELECT_METRIC_RE = re.compile(r"(map|mrr|roc|ndcg(@[1-9][0-9]*)?|p@[1-9][0-9]*)",
                              re.IGNORECASE | re.ASCII)
SELECT_METRIC_HELP = "map, ndcg, ndcg@k, p@k, mrr or roc"
