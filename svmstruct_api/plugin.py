"""The plugin interface of the SVMstruct API: what a structured-output problem must provide.

A plugin describes n training examples (x_i, y_i) through the hooks SVMstruct users know:

- ``psi(i, y)``: the joint feature map psi(x_i, y), a vector of length ``n_features``;
- ``loss(i, y)``: Delta(y_i, y) >= 0, zero for y = y_i;
- ``find_most_violated_constraint(i, w)``: argmax_y Delta(y_i, y) + w.psi(x_i, y) (margin
  rescaling);
- ``classify_example(i, w)``: argmax_y w.psi(x_i, y).

and, for speed, one batch hook that the learners actually call once per iteration:

- ``most_violated_constraints(w)``: for every example at once, the loss Delta_i of its most
  violated output y_hat_i and the difference vector dpsi_i = psi(x_i, y_i) - psi(x_i, y_hat_i).

The constraint of example i for output y reads  w.dpsi_i >= Delta_i - xi_i.  The default batch
hook loops over the per-example hooks; a fast plugin overrides it with one vectorised call.
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np


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
    dpsi: np.ndarray

    def violations(self, w):
        """H_i(w) = Delta_i - w.dpsi_i: the slack example i needs for its most violated output."""
        return self.loss - self.dpsi @ w


class StructuredModel(ABC):
    """Base class of a structured-output problem for the cutting-plane learners."""

    #: number of training examples n
    n_examples: int
    #: length of psi, i.e. of the weight vector w
    n_features: int

    @property
    def regularized(self):
        """Boolean mask over the components of w that enter 1/2 |w|^2 (all by default);
        an unregularised component is, e.g., a classifier's bias."""
        return np.ones(self.n_features, dtype=bool)

    @abstractmethod
    def psi(self, i, y):
        """psi(x_i, y)."""

    @abstractmethod
    def loss(self, i, y):
        """Delta(y_i, y)."""

    @abstractmethod
    def find_most_violated_constraint(self, i, w):
        """argmax_y Delta(y_i, y) + w.psi(x_i, y)."""

    @abstractmethod
    def classify_example(self, i, w):
        """argmax_y w.psi(x_i, y)."""

    @abstractmethod
    def true_output(self, i):
        """y_i, the correct output of example i."""

    def most_violated_constraints(self, w):
        """ConstraintBatch for all examples; override with a vectorised version."""
        losses = np.empty(self.n_examples)
        dpsi = np.empty((self.n_examples, self.n_features))
        for i in range(self.n_examples):
            y_hat = self.find_most_violated_constraint(i, w)
            losses[i] = self.loss(i, y_hat)
            dpsi[i] = self.psi(i, self.true_output(i)) - self.psi(i, y_hat)
        return ConstraintBatch(loss=losses, dpsi=dpsi)
