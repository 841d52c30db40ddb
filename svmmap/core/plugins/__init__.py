"""The structured-output plugins of svmmap: one per loss the learners can optimise.

Each is imported on first use (PEP 562): a run imports the one its loss needs, not the
others' extensions (svmmap.core.training.plugin_class)."""

from .._lazy import lazy_names

#: public name -> the module that defines it
_LAZY = {"AccuracyPlugin": ".accuracy", "MapPlugin": ".map", "MeasurePlugin": ".measure",
         "RocPlugin": ".roc"}

__all__ = ["AccuracyPlugin", "MapPlugin", "MeasurePlugin", "RocPlugin"]

__getattr__, __dir__ = lazy_names(__name__, globals(), _LAZY)
