"""Parameter rules: what values a parameter takes, checked without scikit-learn.

An estimator declares ``_parameter_rules``: parameter -> list of rules, a value being valid
when one rule of its list accepts it (``None`` in a list accepts None).  The command-line
tools check their options with the same rules (``check``) before importing numpy or
scikit-learn, and the estimators check theirs in ``check_params``, so the API and the CLI
accept and reject exactly the same values with the same message.  Each rule also names its
scikit-learn counterpart (``sklearn_constraint``), from which svmmap.core.base derives the
``_parameter_constraints`` scikit-learn's own tools read (its estimator checks generate
invalid values from them).  SVMMap's parameters and their rules are declared once, in the
parameter table of svmmap.core.params.

Two rules of the Python language's number tower are kept apart on purpose: ``True`` and
``False`` are integers to Python, never numbers to these rules (``C=True`` is refused).
"""

from __future__ import annotations

import math
from numbers import Integral, Number, Real
from typing import TYPE_CHECKING, Any, cast

from . import measures

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping
    from collections.abc import Sequence as Seq

    #: parameter -> its rules (None in a list: None is accepted)
    Rules = Mapping[str, Seq["Rule | None"]]
    #: parameter -> (other parameter, its values under which it applies, its neutral value)
    Scopes = Mapping[str, tuple[str, Collection[Any], Any]]


class ParameterError(ValueError, TypeError):
    """A parameter value outside its rules (the estimators raise scikit-learn's
    InvalidParameterError, a ValueError and TypeError too, with the same message)."""


class Rule:
    """One kind of valid value; subclasses define ``accepts`` and either the class attributes
    ``phrase`` (what follows "must be") and ``constraint`` (scikit-learn's constraint of the
    same values, sklearn.utils._param_validation), or, for a rule with settings, ``__str__``
    and ``sklearn_constraint``."""

    phrase: str = ""
    constraint: Any = None

    def accepts(self, value: object) -> bool:
        """Whether ``value`` is of this kind."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.phrase

    def sklearn_constraint(self) -> Any:
        """scikit-learn's constraint of the same values (sklearn.utils._param_validation)."""
        return self.constraint


class Interval(Rule):
    """A real (``integer=False``) or integral number in an interval; ``closed`` is "left",
    "right", "both" or "neither", as in scikit-learn's Interval; None bounds are unbounded."""

    def __init__(self, low: float | None = None, high: float | None = None,
                 closed: str = "both", integer: bool = False) -> None:
        self.low, self.high, self.closed, self.integer = low, high, closed, integer

    def accepts(self, value: object) -> bool:
        """Whether ``value`` is of this kind."""
        kind = Integral if self.integer else Real
        if isinstance(value, bool) or not isinstance(value, kind):
            return False
        number = cast("float", value)  # a Real: ordered like a float
        if not isinstance(value, Integral) and math.isnan(number):  # (an int may overflow)
            return False
        if self.low is not None and (number < self.low or (
                number == self.low and self.closed in ("right", "neither"))):
            return False
        return self.high is None or not (number > self.high or (
            number == self.high and self.closed in ("left", "neither")))

    def __str__(self) -> str:
        kind = "an int" if self.integer else "a float"
        low = "-inf" if self.low is None else f"{self.low:g}"
        high = "inf" if self.high is None else f"{self.high:g}"
        left = "[" if self.closed in ("left", "both") and self.low is not None else "("
        right = "]" if self.closed in ("right", "both") and self.high is not None else ")"
        return f"{kind} in the range {left}{low}, {high}{right}"

    def sklearn_constraint(self) -> Any:
        """scikit-learn's constraint of the same values."""
        from sklearn.utils import _param_validation

        return _param_validation.Interval(Integral if self.integer else Real, self.low,
                                          self.high, closed=self.closed)


class OneOf(Rule):
    """One of a fixed set of strings."""

    def __init__(self, *options: str) -> None:
        self.options = frozenset(options)

    def accepts(self, value: object) -> bool:
        """Whether ``value`` is of this kind."""
        return isinstance(value, str) and value in self.options

    def __str__(self) -> str:
        return "a str among " + ", ".join(repr(o) for o in sorted(self.options))

    def sklearn_constraint(self) -> Any:
        """scikit-learn's constraint of the same values."""
        from sklearn.utils._param_validation import StrOptions

        return StrOptions(set(self.options))


class LossName(Rule):
    """A loss name of the measure registry (svmmap.core.measures.parse_loss): the name of a
    measure with a plugin, with its cutoff where the measure takes one (ndcg@10, p@5)."""

    def accepts(self, value: object) -> bool:
        """Whether ``value`` is of this kind."""
        try:
            measures.parse_loss(value)
        except ValueError:
            return False
        return True

    def __str__(self) -> str:
        return measures.help_text("loss")

    def sklearn_constraint(self) -> Any:
        """scikit-learn's constraint of the same values."""
        from sklearn.utils._param_validation import StrOptions

        rule = self

        class _Loss(StrOptions):  # scikit-learn's checks generate invalid strings from this
            def is_satisfied_by(self, val: object) -> bool:
                return rule.accepts(val)

            def __str__(self) -> str:
                return str(rule)

        return _Loss({form for form in measures.name_forms("loss") if "@" not in form})


def _is_numpy_scalar(value):
    """A numpy scalar (np.generic: np.float64(1), np.True_), without importing numpy."""
    return any(c.__module__ == "numpy" and c.__name__ == "generic" for c in type(value).__mro__)


def _is_bool(value):
    """Python's bool or numpy's (np.True_, what a parameter grid over an array yields)."""
    return isinstance(value, bool) or (type(value).__module__ == "numpy"
                                       and type(value).__name__ in ("bool", "bool_"))


class Boolean(Rule):
    """A bool, Python's or numpy's."""

    phrase = "a bool"
    constraint = "boolean"

    def accepts(self, value: object) -> bool:
        """Whether ``value`` is of this kind."""
        return _is_bool(value)


class Verbosity(Rule):
    """A verbosity level: an int >= 0 or a bool (scikit-learn's "verbose")."""

    phrase = "an int in the range [0, inf) or a bool"
    constraint = "verbose"

    def accepts(self, value: object) -> bool:
        """Whether ``value`` is of this kind."""
        return _is_bool(value) or (isinstance(value, Integral) and int(value) >= 0)


class Sequence(Rule):
    """Anything with a length, a shape or an array interface that is not a scalar (a list, a
    tuple, an array: scikit-learn's "array-like")."""

    phrase = "an array-like"
    constraint = "array-like"

    def accepts(self, value: object) -> bool:
        """Whether ``value`` is of this kind."""
        if isinstance(value, (str, bytes, Number)) or _is_numpy_scalar(value):
            return False
        return any(hasattr(value, a) for a in ("__len__", "shape", "__array__"))


class Text(Rule):
    """A str."""

    phrase = "a str"
    constraint = str

    def accepts(self, value: object) -> bool:
        """Whether ``value`` is of this kind."""
        return isinstance(value, str)


class InstanceOf(Rule):
    """An instance of the class ``module:name``, imported only to build scikit-learn's
    constraint: a value can only be such an instance once its module is loaded."""

    def __init__(self, path: str) -> None:
        self.path = path

    def _cls(self):
        import importlib

        module, name = self.path.split(":")
        return getattr(importlib.import_module(module), name)

    def accepts(self, value: object) -> bool:
        """Whether ``value`` is of this kind."""
        module, name = self.path.split(":")
        return any(c.__module__ == module and c.__qualname__ == name
                   for c in type(value).__mro__)

    def __str__(self) -> str:
        return f"an instance of {self.path.replace(':', '.')}"

    def sklearn_constraint(self) -> Any:
        """scikit-learn's constraint of the same values."""
        return self._cls()


class Anything(Rule):
    """Any object."""

    phrase = "an object"
    constraint = object

    def accepts(self, value: object) -> bool:
        """Whether ``value`` is of this kind."""
        return True


def check(owner: str, params: Mapping[str, Any], rules: Rules,
          scopes: Scopes | None = None) -> None:
    """Raise ParameterError for the first parameter of ``params`` (name -> value) no rule of
    its list in ``rules`` accepts, naming it and ``owner`` (the estimator's class name); then
    for a parameter outside its scope: ``scopes`` maps parameter -> (other parameter, the
    values of it under which the parameter applies, the parameter's neutral value), and a
    value other than the neutral one needs the other parameter among those values."""
    for name, allowed in rules.items():
        if name not in params:
            continue
        value = params[name]
        if any(value is None if rule is None else rule.accepts(value) for rule in allowed):
            continue
        phrases = ["None" if rule is None else str(rule) for rule in allowed]
        must = phrases[0] if len(phrases) == 1 else \
            ", ".join(phrases[:-1]) + " or " + phrases[-1]
        raise ParameterError(f"The {name!r} parameter of {owner} must be {must}. "
                             f"Got {value!r} instead.")
    for name, (other, values, neutral) in (scopes or {}).items():
        if name in params and _differs(params[name], neutral) and params.get(other) not in values:
            among = " or ".join(repr(v) for v in sorted(values))
            raise ParameterError(
                f"The {name!r} parameter of {owner} applies to {other}={among} only; got "
                f"{name}={params[name]!r} with {other}={params.get(other)!r}.")


def sklearn_constraints(rules: Rules) -> dict[str, list[Any]]:
    """scikit-learn's ``_parameter_constraints`` of ``rules``."""
    return {name: [None if rule is None else rule.sklearn_constraint() for rule in allowed]
            for name, allowed in rules.items()}


def _differs(value, neutral):
    try:
        return bool(value != neutral)
    except (TypeError, ValueError):
        return value is not neutral


def check_c_path(Cs: Any) -> list[float]:
    """The C values of a path (SVMMapCV's ``Cs``, ``svmmap_learn -c C1,C2,...``) as floats in
    increasing order; ParameterError unless a non-empty list of positive finite numbers, none
    listed twice (it would be trained twice).  One rule for the API and the command line."""
    values = None
    if not isinstance(Cs, (str, bytes)):
        try:
            values = [float(c) for c in Cs]
        except (TypeError, ValueError):
            pass
    if not values or not all(math.isfinite(c) and c > 0 for c in values):
        raise ParameterError(f"Cs must be a non-empty list of positive finite numbers, got "
                             f"{Cs!r}")
    twice = next((c for k, c in enumerate(values) if c in values[:k]), None)
    if twice is not None:
        raise ParameterError(f"C = {twice:g} is listed twice in the C values "
                             f"{', '.join(f'{c:g}' for c in values)}: each C of a path is "
                             "trained once")
    return sorted(values)
