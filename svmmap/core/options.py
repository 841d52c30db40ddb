"""The option values shared by the command line, the estimator and the metrics, defined
without importing numpy or the extension: ``svmmap_learn --help`` and argument errors need
only these (and the measure names of svmmap.core.measures)."""

from __future__ import annotations

import os

#: the stopping defaults of training (SVMMap, SVMMapCV, DaskSVMMap and svmmap_learn take
#: them from here): epsilon, the tolerance on constraint violation, and rel_gap, the relative
#: duality gap (P(w) - D) / P(w); None is off, and training stops when the first rule that is
#: on holds.  rel_gap 1e-6 alone, chosen by benchmarks/defaults.py (results/defaults.md):
#: the first setting under which CSR vs dense input and 1 vs 2 threads give the same
#: validation MAP to 3 decimals on every LETOR fold and C of the grid
DEFAULT_EPSILON = None
DEFAULT_REL_GAP = 1e-6
#: model selection: validation measures within this of the best are ties, won by the smallest
#: C (svmmap.core.selection.choose; values equal to 3 decimals)
DEFAULT_SELECT_TOL = 5e-4
#: the largest relevance grade an NDCG loss trains on: its gain 2^label - 1 (about 1e154)
#: leaves every query's sum of gains, and their products with the discounts, far inside the
#: float64 range; a larger grade is refused with its file and line (svmmap_learn) or row
#: (the API), never capped.  The other losses only ask whether label > 0: any grade works.
MAX_NDCG_LABEL = 512


def ndcg_label_error(label: float) -> str:
    """Why a relevance grade ``label`` cannot be trained with an NDCG loss."""
    return (f"label {label:g} is too large for an NDCG loss: its gain 2^label - 1 overflows "
            f"(grades at most {MAX_NDCG_LABEL})")


def thread_count(n_threads: int) -> int:
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
#: the storages of X's values the commands offer (``--dtype``: load_svmlight's ``dtype``)
DTYPES = ("float64", "float32")
