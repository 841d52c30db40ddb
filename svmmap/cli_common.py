"""The former home of svmmap.commands.common, kept only because svmmap.experiments.trec
imports ``positive_int`` from here; delete this module once that import names
svmmap.commands.common."""

from .commands.common import positive_int

__all__ = ["positive_int"]
