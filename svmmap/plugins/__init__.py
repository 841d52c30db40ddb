"""The structured-output plugins of svmmap: one per loss the learners can optimise."""

from .accuracy import AccuracyPlugin
from .map import MapPlugin
from .measure import MeasurePlugin
from .roc import RocPlugin

__all__ = ["AccuracyPlugin", "MapPlugin", "MeasurePlugin", "RocPlugin"]
