"""svmmap: structural SVMs that directly optimise Mean Average Precision
(Yue, Finley, Radlinski & Joachims, SIGIR 2007)."""

from .errors import InputFormatError, ModelFileError, SVMMapError
from .estimator import SVMMap
from .io import dump_svmlight, load_svmlight

__version__ = "0.1.0"

__all__ = ["SVMMap", "load_svmlight", "dump_svmlight", "SVMMapError", "InputFormatError",
           "ModelFileError", "__version__"]
