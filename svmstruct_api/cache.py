"""The constraint cache of 1-slack training (the idea of SVMstruct's ``-w 4``).

Every example keeps its last ``size`` most violated outputs, as their (Delta_i(y), dpsi_i(y)).
Before calling the separation oracle, the 1-slack learner forms the cached constraint

    w.(1/n sum_i dpsi_i(y~_i)) >= 1/n sum_i Delta_i(y~_i) - xi,
    y~_i = argmax over example i's cached outputs and y_i itself of Delta_i(y) - w.dpsi_i(y),

(y_i, with Delta = 0 and dpsi = 0, keeps every term at least 0) and adds it instead of
calling the oracle when it is violated by more than epsilon.  That costs n * size inner
products of length dim(w) instead of a pass over all documents; the oracle runs whenever the
cache has nothing violated enough, so termination is decided by the exact oracle as before
(Joachims, Finley & Yu 2009, Section 4.3).
"""

from __future__ import annotations

import numpy as np

from .plugin import ConstraintBatch


class ConstraintCache:
    """Ring buffers of the last ``size`` most violated constraints of each example."""

    def __init__(self, n_examples: int, n_features: int, size: int) -> None:
        if not (isinstance(size, (int, np.integer)) and size > 0):
            raise ValueError(f"the cache size must be a positive integer, got {size!r}")
        # empty slots hold the correct output itself: Delta = 0, dpsi = 0
        self._loss = np.zeros((n_examples, size))
        self._dpsi = np.zeros((n_examples, size, n_features))
        self._inserted = 0

    def __len__(self) -> int:
        """How many oracle batches the cache has seen (at most ``size`` are kept)."""
        return self._inserted

    def add(self, batch: ConstraintBatch) -> None:
        """Remember every example's constraint of one oracle pass, evicting the oldest."""
        slot = self._inserted % self._loss.shape[1]
        self._loss[:, slot] = batch.loss
        self._dpsi[:, slot] = batch.dpsi
        self._inserted += 1

    def most_violated(self, w: np.ndarray) -> ConstraintBatch:
        """Each example's most violated cached constraint at w, as a ConstraintBatch."""
        values = self._loss - self._dpsi @ w
        chosen = np.argmax(values, axis=1)
        rows = np.arange(len(chosen))
        violated = values[rows, chosen] > 0  # otherwise y_i itself: Delta = 0, dpsi = 0
        return ConstraintBatch(loss=np.where(violated, self._loss[rows, chosen], 0.0),
                               dpsi=np.where(violated[:, None], self._dpsi[rows, chosen], 0.0))
