"""The parameter table: every training parameter declared once.

A :class:`Parameter` says, for one parameter: its name (the estimator parameter's, the long
option's and the model-file key's), its default, its rules (svmmap.core.rules), where it
applies (:data:`SVMMAP`, :data:`SVMMAP_CV`, :data:`DASK`, :data:`STAGE`, :data:`LEARN`), its
command-line flags with argparse's details and help, and, when it applies only under another
parameter's value, that scope.  Everything else derives from :data:`PARAMETERS` or is checked
against it by a test:

* the rules and defaults that validation uses (:func:`rules_for`, :data:`SVMMAP_RULES`,
  :data:`SVMMAP_DEFAULTS`, :data:`SVMMAP_SCOPES`; svmmap.core.base turns them into
  scikit-learn's ``_parameter_constraints``);
* the ``svmmap_learn`` parser (svmmap.commands.learn adds every option of the table) and the
  parameters it trains with (``learn_params``);
* the estimators' signatures (SVMMap, SVMMapCV, DaskSVMMap, svmmap.pyterrier's stage: explicit,
  as scikit-learn needs, and checked against :func:`defaults_for` by tests/api/test_table.py);
* the manual's glossary and command-line page (checked by the same tests).

Adding a training parameter: a row here, its implementation (svmmap.core.training), a test.
This module imports no numpy: ``svmmap_learn`` checks its options with it before any.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from svmstruct_api.options import FORMULATIONS, QP_SOLVERS

from . import text_values as text
from .measures import help_text
from .options import DEFAULT_EPSILON, DEFAULT_REL_GAP, DEFAULT_SELECT_TOL, DTYPES, ORACLES
from .rules import (
    Anything,
    Boolean,
    InstanceOf,
    Interval,
    LossName,
    OneOf,
    ParameterError,
    Rule,
    Sequence,
    Text,
    Verbosity,
    check,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from .rules import Rules, Scopes

__all__ = ["PARAMETERS", "Parameter", "check_svmmap", "defaults_for", "rules_for"]

#: where a parameter applies: the estimators, PyTerrier's stage and the command
SVMMAP, SVMMAP_CV, DASK, STAGE, LEARN = \
    "SVMMap", "SVMMapCV", "DaskSVMMap", "SVMMapRanker", "svmmap_learn"
#: every place an SVMMap parameter applies, and where SVMMapCV's own do
EVERYWHERE = frozenset({SVMMAP, SVMMAP_CV, DASK, STAGE, LEARN})
PATH = frozenset({SVMMAP_CV, STAGE, LEARN})

#: -w / --algorithm: SVMstruct's numbers and the estimator's names; 4 is 1-slack with the
#: constraint cache
ALGORITHMS = {"0": "n-slack", "n-slack": "n-slack", "3": "1-slack", "1-slack": "1-slack",
              "4": "1-slack"}
#: -w 4: 1-slack with the constraint cache, this many outputs per query unless --cache-size
DEFAULT_CACHE_SIZE = 5
#: --acc-variant: the paper's repairs of SVM-ACC: 2 weighs false negatives (cost ratio), 3
#: and 4 bin within-query percentiles / min-max normalised scores
ACC_VARIANTS = (2, 3, 4)
PER_QUERY = {3: "percentile", 4: "minmax"}
#: --acc-variant 3 and 4 bin at this many thresholds unless --n-thresholds
DEFAULT_THRESHOLDS = 50
_SAME = object()


@dataclass(frozen=True)
class Parameter:
    """One training parameter (module docstring).

    ``name``, ``default`` (the estimators'), ``rules`` (None: an option of the command alone,
    its value checked by its ``cli["type"]``), ``places`` (where it applies), ``flags`` (the
    command's option strings: SVMstruct's short flag, the long name ``--name``, aliases),
    ``cli`` (argparse's ``add_argument`` details besides flags, dest, default and help),
    ``help`` (the option's help, or a function giving it when the parser is made: the
    measures' names it lists may grow after import), ``defaults`` (place -> a default
    other than ``default``: the command's, the stage's), ``scope`` ((other parameter, its
    values under which this one applies): another value of this one than its default is
    refused outside them),
    ``via`` (the option that sets it on the command line when it has none of its own) and
    ``exclusive`` (options of one such name exclude each other)."""

    name: str
    default: Any
    rules: tuple[Rule | None, ...] | None
    places: frozenset[str]
    flags: tuple[str, ...] = ()
    help: str | Callable[[], str] = ""
    cli: Mapping[str, Any] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    scope: tuple[str, frozenset[Any]] | None = None
    via: str | None = None
    exclusive: str | None = None

    def default_in(self, place: str) -> Any:
        """The default where ``place`` (a place of ``places``) takes this parameter."""
        return self.defaults.get(place, self.default)

    def flag(self) -> str:
        """The option a command-line error names: its short flag and long name (``-c/--C``),
        or the option that sets it (``via``)."""
        if not self.flags:
            return next(p.flag() for p in PARAMETERS if p.name == self.via)
        short = [f for f in self.flags if not f.startswith("--")]
        return "/".join([*short, next(f for f in self.flags if f.startswith("--"))])

    def argparse(self) -> tuple[tuple[str, ...], dict[str, Any]]:
        """(flags, keywords) of argparse's ``add_argument`` for this parameter's option."""
        return self.flags, {"dest": self.name, "default": self.default_in(LEARN),
                            "help": self.help if isinstance(self.help, str) else self.help(),
                            **self.cli}


def _svm(name: str, default: Any, rules: Iterable[Rule | None], **details: Any) -> Parameter:
    """A parameter of SVMMap (and so of every estimator and of the command)."""
    return Parameter(name, default, tuple(rules), details.pop("places", EVERYWHERE), **details)


def _command(name: str, flags: tuple[str, ...], help: str, **cli: Any) -> Parameter:
    """An option of svmmap_learn alone (its value checked by its type)."""
    exclusive = cli.pop("exclusive", None)
    return Parameter(name, cli.pop("default", None), None, frozenset({LEARN}), flags, help,
                     cli, exclusive=exclusive)


_POSITIVE = Interval(0, math.inf, closed="neither")

#: the parameter table, in the order of svmmap_learn's help
PARAMETERS: tuple[Parameter, ...] = (
    _svm("C", 1.0, [_POSITIVE], places=EVERYWHERE - {SVMMAP_CV}, flags=("-c", "--C"),
         cli={"type": text.c_values, "metavar": "C[,C...]"}, defaults={LEARN: [1.0]},
         help="trade-off C between training error and margin (default 1); several values, "
              "e.g. 0.1,1,10,100,1000, with --eval-set or --holdout: trained along a "
              "warm-started path from small to large C, the one best on the validation "
              "queries kept"),
    Parameter("Cs", (0.1, 1, 10, 100, 1000), (Sequence(),), PATH, via="C",
              defaults={STAGE: None}),
    _command("eval_set", ("--eval-set", "--vali", "--valid"),
             "validation file that chooses C among the -c values (aliases --vali, --valid)",
             metavar="FILE"),
    Parameter("holdout", 0.2, (Interval(0, 1, closed="neither"),), PATH, ("--holdout",),
              "choose C on this fraction of the training queries, held out at random "
              "(RankLib's -tvs), instead of an --eval-set file",
              {"type": text.fraction, "metavar": "FRACTION"}, {LEARN: None}),
    Parameter("random_state", 0, (Interval(0, None, closed="left", integer=True), None),
              PATH - {LEARN}),
    Parameter("refit", True, (Boolean(),), PATH, ("--refit",),
              "with --holdout: train again on all the training queries at the chosen C (the "
              "default), or, with --no-refit, keep the model trained without the held-out "
              "queries (RankLib's -tvs)", {"action": "BooleanOptionalAction"}),
    Parameter("select_metric", "map", (Text(),), PATH, ("--select-metric",),
              lambda: f"validation measure that chooses C: {help_text('select')} (default "
                      "map; with --eval-set or --holdout only)",
              {"type": text.select_metric, "metavar": "NAME"}, {LEARN: None}),
    Parameter("select_tol", DEFAULT_SELECT_TOL, (Interval(0, math.inf, closed="left"),), PATH,
              ("--select-tol",),
              "validation measures within T of the best are ties, won by the smallest C "
              f"(default {DEFAULT_SELECT_TOL:g}: equal to 3 decimals; 0: the best; with "
              "--vali or --holdout only)",
              {"type": text.select_tol, "metavar": "T"}, {LEARN: None}),
    _svm("epsilon", DEFAULT_EPSILON, [_POSITIVE, None], flags=("-e", "--epsilon"),
         cli={"type": text.number_or_off},
         help="stop when no constraint is violated by more than EPSILON, or 'off' (default "
              f"{text.shown(DEFAULT_EPSILON)}); with --rel-gap too, the first rule that holds "
              "stops training"),
    _svm("rel_gap", DEFAULT_REL_GAP, [Interval(0, 1, closed="neither"), None],
         flags=("--rel-gap",), cli={"type": text.number_or_off, "metavar": "R"},
         help="stop when the relative duality gap (primal - dual) / primal is at most R, in "
              f"(0, 1), or 'off' (default {text.shown(DEFAULT_REL_GAP)})"),
    _svm("algorithm", "1-slack", [OneOf(*FORMULATIONS)], flags=("-w", "--algorithm"),
         cli={"choices": list(ALGORITHMS), "metavar": "{0,3,4,n-slack,1-slack}"},
         defaults={LEARN: "3"},
         help="0 or n-slack: the paper's Algorithm 1; 3 or 1-slack (default): Joachims et al. "
              "2009; 4: 1-slack with the constraint cache"),
    _svm("cache_size", 0, [Interval(0, None, closed="left", integer=True)],
         flags=("--cache-size",), cli={"type": text.positive_int, "metavar": "N"},
         defaults={LEARN: None}, scope=("algorithm", frozenset({"1-slack"})),
         help=f"-w 4: outputs remembered per query (default {DEFAULT_CACHE_SIZE})"),
    _svm("loss", "map", [LossName()], flags=("-l", "--loss"),
         cli={"type": text.loss, "metavar": "LOSS"},
         help=lambda: f"what is optimised: {help_text('loss')}.  map: 1 - AP (default); roc: "
                      "1 - ROC-area; acc: classification error (SVM with bias); the others: 1 - "
                      "that measure, with the joint feature map of map and an exact oracle "
                      "(ndcg: the whole ranking; gain 2^label - 1, discount 1/log2(1 + rank))"),
    _svm("verbose", 0, [Verbosity()], flags=("-v", "--verbose"), cli={"type": int},
         defaults={LEARN: 1},
         help="0 quiet; 1 (default) the data read, a live progress display on stderr while "
              "training (a line every few seconds when stderr is not a terminal) and the final "
              "report; 2 a line per iteration instead of the display"),
    _svm("max_iter", None, [Interval(1, None, closed="left", integer=True), None],
         flags=("--max-iter",), cli={"type": int},
         help="stop after this many iterations (model marked not converged)"),
    _svm("max_time", None, [_POSITIVE, None], flags=("--max-time",), cli={"type": float},
         help="stop after this many seconds (model marked not converged)"),
    _svm("n_threads", 1, [Interval(1, None, closed="left", integer=True)],
         flags=("--n-threads", "--threads"), cli={"type": int},
         help="threads for reading the data files and for the per-query oracle loop "
              "(default 1)"),
    _command("dtype", ("--dtype",),
             "storage of the feature values read (load_svmlight's dtype): float32 halves it, "
             "the model being the float64 one of the values rounded to float32 (default "
             "float64)", choices=DTYPES, default="float64"),
    _svm("qp_solver", "smo", [OneOf(*QP_SOLVERS)], flags=("--qp-solver",),
         cli={"choices": QP_SOLVERS},
         help="working-set QP: warm-started SMO with cvxopt behind it (default) or cvxopt "
              "alone"),
    _svm("oracle", "divide", [OneOf(*ORACLES)], flags=("--oracle",), cli={"choices": ORACLES},
         help="Algorithm 2 variant: exact divide and conquer (default) or the plain scan"),
    _svm("normalize", None, [OneOf("standard", "minmax"), None], flags=("--normalize",),
         cli={"choices": ("standard", "minmax")},
         help="fit a global normaliser on the training documents, z = (x - mean) / std or "
              "(x - min) / (max - min) per feature, stored in the model and applied when "
              "scoring (the search engines' LTR normalisers: python -m svmmap.export writes "
              "it as theirs)"),
    _svm("feature_map", None, [InstanceOf("svmmap.features:BinnedFeatureMap"), None],
         via="n_thresholds"),
    _command("n_thresholds", ("--n-thresholds", "--bin"),
             "replace each base feature f by the indicators 1[f > k] for N thresholds k "
             "(quantiles of its training values; Section 4.2)", type=int, metavar="N"),
    _command("base_columns", ("--base-columns",),
             "feature indices to bin, e.g. 1,3,5-9 (default all); the others are dropped",
             type=text.column_list, metavar="LIST"),
    _command("dask_workers", ("--dask-workers",),
             "train on a Dask LocalCluster of N worker processes on this machine "
             "(svmmap.dask; needs the [dask] extra)",
             type=text.positive_int, metavar="N", exclusive="cluster"),
    _command("scheduler", ("--scheduler",),
             "train on the Dask cluster whose scheduler is at ADDRESS, e.g. "
             "tcp://10.0.0.1:8786 (the shards are read on its workers)",
             metavar="ADDRESS", exclusive="cluster"),
    _command("acc_variant", ("--acc-variant",),
             "with -l acc, the paper's repairs: 2 false negatives cost #non-relevant/#relevant "
             "times more (or --cost-ratio), 3 bin within-query percentiles, 4 bin per-query "
             f"min-max normalised scores (3 and 4 bin at {DEFAULT_THRESHOLDS} evenly spaced "
             "thresholds in [0, 1) unless --n-thresholds N)", type=int, choices=ACC_VARIANTS),
    _svm("cost_ratio", 1.0, [_POSITIVE, OneOf("balanced")], flags=("--cost-ratio",),
         cli={"type": float, "metavar": "J"}, defaults={LEARN: None},
         scope=("loss", frozenset({"acc"})),
         help="with -l acc, cost of a false negative relative to a false positive "
              "(SVM-light's -j; default 1, or #non-relevant/#relevant with --acc-variant 2)"),
    Parameter("client", None, (None, Anything()), frozenset({DASK})),
)
_BY_NAME = {p.name: p for p in PARAMETERS}


def parameter(name: str) -> Parameter:
    """The table's row of parameter ``name`` (KeyError for another name)."""
    return _BY_NAME[name]


def rules_for(place: str) -> dict[str, list[Rule | None]]:
    """The rules of every parameter ``place`` takes (its estimator's ``_parameter_rules``)."""
    return {p.name: list(p.rules) for p in PARAMETERS
            if place in p.places and p.rules is not None}


def defaults_for(place: str) -> dict[str, Any]:
    """Every parameter ``place`` takes, and its default there (the constructor's, the
    command's)."""
    return {p.name: p.default_in(place) for p in PARAMETERS if place in p.places
            and (place != LEARN or p.flags)}


def scopes_for(place: str) -> Scopes:
    """The scopes of the parameters ``place`` takes (svmmap.core.rules.check's ``scopes``)."""
    return {p.name: (*p.scope, p.default) for p in PARAMETERS
            if place in p.places and p.scope is not None}


def learn_flags() -> dict[str, str]:
    """Parameter -> the svmmap_learn option an error about it names."""
    return {p.name: p.flag() for p in PARAMETERS
            if LEARN in p.places and (p.flags or p.via)}


#: SVMMap's parameters and their rules
SVMMAP_RULES: Rules = rules_for(SVMMAP)
#: SVMMap's constructor defaults (what a model file leaves out: the run-time settings, and
#: parameters newer than the file)
SVMMAP_DEFAULTS = defaults_for(SVMMAP)
#: SVMMap's options that apply only under another option's value
SVMMAP_SCOPES = scopes_for(SVMMAP)


def check_svmmap(owner: str, params: Mapping[str, Any], rules: Rules = SVMMAP_RULES) -> None:
    """Raise ParameterError for a parameter outside its ``rules`` (default SVMMap's; a
    subclass's may add some) or SVMMap's scopes, or when both stopping rules (epsilon,
    rel_gap) are off."""
    check(owner, params, rules, SVMMAP_SCOPES)
    if params.get("epsilon") is None and params.get("rel_gap") is None:
        raise ParameterError(f"The 'epsilon' and 'rel_gap' parameters of {owner} are both "
                             "None: training needs a stopping rule.")
    if params.get("normalize") is not None and params.get("feature_map") is not None:
        raise ParameterError(f"The 'normalize' parameter of {owner} applies to the data's "
                             "features, not to binned indicators: give normalize=None with a "
                             "feature_map.")
