"""Input checks shared by the per-query kernels (kept in Python: they run once per call)."""

import numpy as np


def checked_query_arrays(scores, relevant, ptr):
    """Contiguous float64 / uint8 / intp copies of the inputs, with consistent lengths."""
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    relevant = np.ascontiguousarray(relevant, dtype=np.uint8)
    ptr = np.ascontiguousarray(ptr, dtype=np.intp)
    if scores.shape[0] != relevant.shape[0]:
        raise ValueError("scores and relevant differ in length")
    if ptr.ndim != 1 or len(ptr) < 1 or ptr[0] != 0 or ptr[-1] != len(relevant):
        raise ValueError("ptr must run from 0 to the number of documents")
    if np.any(np.diff(ptr) < 0):
        raise ValueError("ptr must be non-decreasing")
    return scores, relevant, ptr
