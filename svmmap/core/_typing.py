"""Names for the public API's type annotations.  Every module that uses them has ``from
__future__ import annotations`` and imports them under ``typing.TYPE_CHECKING``: nothing here
is defined or imported when the package runs (start-up, benchmarks/startup.py), only when a
type checker reads it.

    Matrix      a document-feature matrix: anything numpy turns into a 2-D array, or a
                scipy.sparse matrix / array (CSR is read without a copy)
    Vector      a 1-D array-like: labels, query ids, scores, sample weights
    FloatArray  a numpy array of float64 (scores, weights)
    IntArray    a numpy array of integers (query ids, ranks)
    PathLike    a file's path
    EvalSets    validation sets: an (X, y) or (X, y, qid) tuple, or a sequence of them
    Callbacks   a training callback (svmstruct_api.callbacks.Callback or a function of the
                progress record), or a sequence of them
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any, Union

    import numpy as np
    import numpy.typing as npt
    import scipy.sparse

    from svmstruct_api.callbacks import Callback

    Matrix = Union[npt.ArrayLike, scipy.sparse.spmatrix, scipy.sparse.sparray]
    Vector = npt.ArrayLike
    FloatArray = npt.NDArray[np.float64]
    IntArray = npt.NDArray[np.int64]
    PathLike = Union[str, os.PathLike]
    EvalSet = Union[tuple[Matrix, Vector], tuple[Matrix, Vector, Vector]]
    EvalSets = Union[EvalSet, Sequence[EvalSet]]
    Callbacks = Union[Callback, Callable[..., Any], Sequence[Union[Callback, Callable[..., Any]]]]
    #: weights per query: one per row, or a mapping query id -> weight (--query-weights)
    QueryWeights = Union[Vector, Mapping[Any, float], None]
