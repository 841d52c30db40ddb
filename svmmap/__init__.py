"""svmmap: structural SVMs that directly optimise Mean Average Precision
(Yue, Finley, Radlinski & Joachims, SIGIR 2007).

The public names below are imported on first use (PEP 562), so that ``import
svmmap.commands.learn`` for ``svmmap_learn --help`` loads neither numpy nor scipy nor the extension.
"""

import os

# Before the OpenMP runtime loads with the kernels: idle OpenMP threads otherwise spin for
# milliseconds after every parallel loop and steal the cores the BLAS calls between two
# oracle passes need.  A value the user has set is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from .core._lazy import lazy_names  # noqa: E402
from .errors import InputFormatError, ModelFileError, SVMMapError  # noqa: E402

__version__ = "0.1.0"

#: public name -> the module that defines it, imported when the name is first used
_LAZY = {"SVMMap": ".estimator", "load_svmlight": ".data.io", "dump_svmlight": ".data.writer",
         "load_model": ".data.model_file"}

__all__ = ["SVMMap", "load_svmlight", "dump_svmlight", "load_model", "SVMMapError",
           "InputFormatError", "ModelFileError", "__version__"]

__getattr__, __dir__ = lazy_names(__name__, globals(), _LAZY)
