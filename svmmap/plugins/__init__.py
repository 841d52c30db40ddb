"""The structured-output plugins of svmmap: one per loss the learners can optimise."""

from .map import MapPlugin

__all__ = ["MapPlugin"]
