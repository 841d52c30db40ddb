"""The plugin interface of the SVMstruct API: what a structured-output problem must provide.

A plugin describes n training examples (x_i, y_i) through the hooks SVMstruct users know:

- ``psi(i, y)``: the joint feature map psi(x_i, y), a vector of length ``n_features``;
- ``loss(i, y)``: Delta(y_i, y) >= 0, zero for y = y_i;
- ``find_most_violated_constraint(i, w)``: argmax_y Delta(y_i, y) + w.psi(x_i, y) (margin
  rescaling);
- ``classify_example(i, w)``: argmax_y w.psi(x_i, y).

and, for speed, one batch hook that the learners actually call once per iteration:

- ``most_violated_constraints(w)``: for every example at once, the loss Delta_i of its most
  violated output y_hat_i and the difference vector dpsi_i = psi(x_i, y_i) - psi(x_i, y_hat_i)
  (a ConstraintBatch), or, for a model that only supports the 1-slack formulation, their sums
  over the examples (a SummedConstraint: a distributed model returns only those).

The constraint of example i for output y reads  w.dpsi_i >= Delta_i - xi_i.  The default batch
hook loops over the per-example hooks; a fast plugin overrides it with one vectorised call.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .bounds import ExampleBounds


@dataclass(frozen=True)
class ConstraintBatch:
    """The most violated constraint of every example.

    Attributes
    ----------
    loss : ndarray (n,)
        Delta(y_i, y_hat_i).
    dpsi : ndarray (n, n_features)
        psi(x_i, y_i) - psi(x_i, y_hat_i).
    """

    loss: np.ndarray
    dpsi: Any

    def violations(self, w: np.ndarray) -> np.ndarray:
        """H_i(w) = Delta_i - w.dpsi_i: the slack example i needs for its most violated output."""
        return self.loss - self.dpsi @ w

    def slack_cost(self, w: np.ndarray, bounds: ExampleBounds) -> float:
        """sum_i b_i max(0, H_i(w)): the slack term of the primal objective P(w), for the
        example bounds b_i (svmstruct_api.learner.ExampleBounds)."""
        return bounds.slack_cost(np.maximum(self.violations(w), 0.0))

    def group_sums(self, weights: np.ndarray, groups: np.ndarray,
                   n_groups: int) -> tuple[np.ndarray, np.ndarray]:
        """(sum_{i in g} weights_i Delta_i, sum_{i in g} weights_i dpsi_i) of every group g,
        (n_groups,) and (n_groups, n_features): one pass over the rows (``dpsi``'s own
        ``group_sums`` where it has one, as svmmap's QueryRows)."""
        losses = np.bincount(groups, weights * self.loss, n_groups)
        if hasattr(self.dpsi, "group_sums"):
            return losses, self.dpsi.group_sums(weights, groups, n_groups)
        dpsi = np.zeros((n_groups, self.dpsi.shape[1]))
        np.add.at(dpsi, groups, weights[:, None] * np.asarray(self.dpsi))
        return losses, dpsi

    def averaged(self, w: np.ndarray,
                 bounds: ExampleBounds) -> tuple[np.ndarray, float, float]:
        """The 1-slack constraint of this batch and its violation at w, weighted b_i / C:
        (sum_i b_i/C dpsi_i, sum_i b_i/C Delta_i, sum_i b_i/C max(0, H_i(w)))."""
        return (bounds.average(self.dpsi), bounds.average(self.loss),
                bounds.average(np.maximum(self.violations(w), 0.0)))


@dataclass(frozen=True)
class SummedConstraint:
    """The most violated constraints of all n examples, summed: all the 1-slack learner
    needs when every example has the same bound, and all a distributed batch hook sends
    back (svmmap.dask).  The n-slack learner and the constraint cache need a ConstraintBatch.

    Attributes
    ----------
    n : int, the number of examples summed.
    loss : float, sum_i Delta(y_i, y_hat_i).
    dpsi : ndarray (n_features,), sum_i psi(x_i, y_i) - psi(x_i, y_hat_i).

    Its violation at w is max(0, sum_i H_i(w)), equal to sum_i max(0, H_i(w)) because every
    H_i >= 0: an exact oracle's most violated output is at least as violated as y_i itself.
    """

    n: int
    loss: float
    dpsi: np.ndarray

    def _violation(self, w: np.ndarray) -> float:
        return max(float(self.loss - self.dpsi @ w), 0.0)

    def _check(self, bounds: ExampleBounds) -> None:
        if not bounds.uniform:
            raise ValueError("a SummedConstraint needs every example to have the same bound")

    def slack_cost(self, w: np.ndarray, bounds: ExampleBounds) -> float:
        """C/n max(0, sum_i H_i(w)) (every example has the bound C/n)."""
        self._check(bounds)
        return float(bounds.values[0]) * self._violation(w)

    def averaged(self, w: np.ndarray,
                 bounds: ExampleBounds) -> tuple[np.ndarray, float, float]:
        """The 1-slack constraint: (1/n sum_i dpsi_i, 1/n sum_i Delta_i, its violation)."""
        self._check(bounds)
        return self.dpsi / self.n, self.loss / self.n, self._violation(w) / self.n


@dataclass(frozen=True)
class GroupedSums:
    """The most violated constraints of all n examples summed per cut group of the 1-slack
    learner (svmstruct_api.cut_groups): what a distributed model returns once the learner
    has told it the groups (``StructuredModel.sum_by_groups``).  Every example has the same
    bound.

    Attributes
    ----------
    counts : ndarray (G,), the number of examples of each group.
    loss : ndarray (G,), sum_{i in g} Delta(y_i, y_hat_i).
    dpsi : ndarray (G, n_features), sum_{i in g} psi(x_i, y_i) - psi(x_i, y_hat_i).

    Group g's violation at w is max(0, sum_{i in g} H_i(w)) (= sum_{i in g} max(0, H_i(w)),
    every H_i >= 0 for an exact oracle, as for a SummedConstraint).
    """

    counts: np.ndarray
    loss: np.ndarray
    dpsi: np.ndarray

    def violations(self, w: np.ndarray) -> np.ndarray:
        """max(0, sum_{i in g} H_i(w)) of every group."""
        return np.maximum(self.loss - self.dpsi @ w, 0.0)

    def slack_cost(self, w: np.ndarray, bounds: ExampleBounds) -> float:
        """C/n sum_g max(0, sum_{i in g} H_i(w)) (every example has the bound C/n)."""
        if not bounds.uniform:
            raise ValueError("GroupedSums need every example to have the same bound")
        return float(bounds.values[0]) * float(self.violations(w).sum())


class StructuredModel(ABC):
    """Base class of a structured-output problem for the cutting-plane learners."""

    #: number of training examples n
    n_examples: int
    #: length of psi, i.e. of the weight vector w
    n_features: int
    #: None, or the weight v_i > 0 of every example: the slack term becomes
    #: C/V sum_i v_i xi_i, V = sum_i v_i (svmstruct_api.learner, example bounds)
    example_weights: Any = None
    #: whether most_violated_constraints returns a ConstraintBatch (each example's own
    #: constraint): what the 1-slack learner's cut groups need (svmstruct_api.cut_groups);
    #: False for a model that returns a SummedConstraint
    per_example_batches: bool = True

    def sum_by_groups(self, groups: np.ndarray) -> bool:
        """Told the cut group of every example by the 1-slack learner where its batches
        are not per example (svmstruct_api.cut_groups): return True to return GroupedSums
        of those groups from then on; False (the default) keeps SummedConstraints and the
        learner uses one group."""
        return False

    def group_sums_in_pass(self, weights: np.ndarray | None, groups: np.ndarray | None,
                           n_groups: int) -> None:
        """Told, when a 1-slack fit starts, the sums ``ConstraintBatch.group_sums(weights,
        groups, n_groups)`` it will ask of every batch (its cut groups' vectors,
        svmstruct_api.cut_groups), or None and 0 when it will ask none: a model whose oracle
        pass reads each example's data once may form them there, while the data are at
        hand, and have its batches' ``dpsi.group_sums`` return them.  Nothing by default
        (the batch forms them when asked)."""
        return None

    #: None, or a RowBasis B (p x n_features; svmstruct_api.qp.WorkingSet) in which every
    #: constraint of a batch is B^T u: then ``batch.dpsi.basis_coefficients(v)`` gives the
    #: u of v^T dpsi, and the 1-slack learner may keep its constraints as u (p numbers
    #: each) where p is the smaller (svmstruct_api.learner)
    row_basis: Any = None

    @property
    def regularized(self) -> np.ndarray:
        """Boolean mask over the components of w that enter 1/2 |w|^2 (all by default);
        an unregularised component is, e.g., a classifier's bias."""
        return np.ones(self.n_features, dtype=bool)

    @abstractmethod
    def psi(self, i: int, y: Any) -> np.ndarray:
        """psi(x_i, y)."""

    @abstractmethod
    def loss(self, i: int, y: Any) -> float:
        """Delta(y_i, y)."""

    @abstractmethod
    def find_most_violated_constraint(self, i: int, w: np.ndarray) -> Any:
        """argmax_y Delta(y_i, y) + w.psi(x_i, y)."""

    @abstractmethod
    def classify_example(self, i: int, w: np.ndarray) -> Any:
        """argmax_y w.psi(x_i, y)."""

    @abstractmethod
    def true_output(self, i: int) -> Any:
        """y_i, the correct output of example i."""

    def most_violated_constraints(self, w: np.ndarray
                                  ) -> ConstraintBatch | SummedConstraint | GroupedSums:
        """ConstraintBatch for all examples; override with a vectorised version."""
        losses = np.empty(self.n_examples)
        dpsi = np.empty((self.n_examples, self.n_features))
        for i in range(self.n_examples):
            y_hat = self.find_most_violated_constraint(i, w)
            losses[i] = self.loss(i, y_hat)
            dpsi[i] = self.psi(i, self.true_output(i)) - self.psi(i, y_hat)
        return ConstraintBatch(loss=losses, dpsi=dpsi)
