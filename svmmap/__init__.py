"""svmmap: structural SVMs that directly optimise Mean Average Precision
(Yue, Finley, Radlinski & Joachims, SIGIR 2007)."""

import os

# Before the OpenMP runtime loads with the kernels: idle OpenMP threads otherwise spin for
# milliseconds after every parallel loop and steal the cores the BLAS calls between two
# oracle passes need.  A value the user has set is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


from .errors import InputFormatError, ModelFileError, SVMMapError
from .estimator import SVMMap
from .io import dump_svmlight, load_svmlight

__version__ = "0.1.0"

__all__ = ["SVMMap", "load_svmlight", "dump_svmlight", "SVMMapError", "InputFormatError",
           "ModelFileError", "__version__"]
