# cython: language_level=3
# distutils: language = c++
"""The SVMlight / LETOR parser of svmmap.io in C++ (_svmlight_parse.h), one pass over the
bytes after a counting scan, without the GIL; with ``n_threads`` > 1, chunks of the text are
counted and parsed in parallel and merged into the same arrays.

Memory: the feature arrays are allocated once at the counting scan's upper bound (one entry
per ':' in the text) and shrunk in place to the stored entries; indices and the row pointer
are int32 unless the data needs int64 (then the text is parsed again with int64 arrays)."""

import numpy as np

cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.string cimport memcpy
from libcpp cimport bool as cbool
from libcpp.vector cimport vector

cnp.import_array()

cdef extern from "_svmlight_parse.h" namespace "svmlight" nogil:
    cdef cppclass Counts:
        int64_t newlines
        int64_t colons
        cbool ascii

    cdef cppclass Lines:
        vector[double] labels
        vector[int64_t] qid_int
        vector[int64_t] qid_start
        vector[int64_t] qid_length
        vector[int64_t] comment_start
        vector[int64_t] comment_length
        cbool qids_are_int
        cbool qids_canonical
        int64_t error_line
        int64_t error_start
        int64_t error_end
        cbool index_overflow
        int64_t nnz
        uint64_t max_index

    # what allocates may throw std::bad_alloc: raised here as MemoryError (the commands'
    # out-of-memory line), never left to abort the process
    Counts count(const char* text, int64_t n)
    vector[int64_t] chunk_bounds(const char* text, int64_t n, int64_t parts,
                                 int64_t min_bytes) except +MemoryError
    vector[Counts] count_chunks(const char* text, const vector[int64_t]& bounds,
                                int n_threads) except +MemoryError
    void parse_chunks[Index](const char* text, const vector[int64_t]& bounds, uint64_t limit,
                             double max_abs, cbool with_qid, Index* indptr, Index* indices,
                             double* values, const vector[int64_t]& row_off,
                             const vector[int64_t]& col_off, int n_threads,
                             Lines* out) except +MemoryError

INT32_MAX = 2**31 - 1
#: the smallest chunk worth a thread of its own (smaller text is parsed in one pass)
MIN_CHUNK_BYTES = 1 << 20


cdef object _array(vector[int64_t]& v):
    result = np.empty(v.size(), dtype=np.int64)
    cdef int64_t[::1] view = result
    if v.size():
        memcpy(&view[0], v.data(), v.size() * sizeof(int64_t))
    return result


cdef object _doubles(vector[double]& v):
    result = np.empty(v.size(), dtype=np.float64)
    cdef double[::1] view = result
    if v.size():
        memcpy(&view[0], v.data(), v.size() * sizeof(double))
    return result


def is_ascii(const unsigned char[::1] text):
    """Whether every byte of ``text`` is below 0x80."""
    cdef int64_t n = text.shape[0]
    if n == 0:
        return True
    cdef Counts counts
    with nogil:
        counts = count(<const char*>&text[0], n)
    return bool(counts.ascii)


def parse_svmlight(const unsigned char[::1] text, uint64_t limit, double max_abs,
                   bint with_qid=True, bint wide=False, int n_threads=1,
                   int64_t min_chunk_bytes=MIN_CHUNK_BYTES):
    """Parse SVMlight text (bytes-like; whitespace ASCII, see _svmlight_parse.h).

    ``n_threads`` > 1: in up to that many chunks (each but the last at least
    ``min_chunk_bytes`` long), in parallel; the result is the same.

    ``limit`` is the largest feature index accepted, ``max_abs`` the largest magnitude of a
    feature value (``inf``: any finite value); ``with_qid`` false: the lines carry no
    ``qid:`` token (the qid arrays are then empty).  Returns a dict: ``labels`` (float64),
    ``qid_int`` (int64, meaningful when ``qids_are_int``; ``qids_canonical``: and
    each qid text is ``str()`` of its integer), ``qid_start`` / ``qid_length`` and
    ``comment_start`` / ``comment_length`` (byte ranges in ``text``, one per data line),
    ``indptr``, ``indices`` (0-based column), ``values`` (non-zero values) of the CSR rows,
    ``max_index`` (largest index seen, zero values included), and ``error_line`` (0 when every
    line was accepted, else the 1-based number of the first rejected line) with its byte
    range ``error_start`` / ``error_end``.
    """
    cdef int64_t n = text.shape[0]
    cdef const char* data = <const char*>&text[0] if n else <const char*>NULL
    # one chunk (the whole text) unless more threads are asked for and the text is long enough
    cdef vector[int64_t] bounds = chunk_bounds(data, n, max(n_threads, 1), min_chunk_bytes)
    cdef vector[Counts] counts
    with nogil:
        counts = count_chunks(data, bounds, n_threads)
    cdef vector[int64_t] row_off, col_off
    cdef int64_t rows = 0, colons = 0, lines_total = 0
    cdef size_t c
    for c in range(counts.size()):
        row_off.push_back(rows)
        col_off.push_back(colons)
        rows += counts[c].newlines + 2
        colons += counts[c].colons
        lines_total += counts[c].newlines + 1
    wide = wide or colons > INT32_MAX or lines_total + 1 > INT32_MAX
    indptr = np.empty(rows, dtype=np.int64 if wide else np.int32)
    indices = np.empty(colons, dtype=np.int64 if wide else np.int32)
    values = np.empty(colons, dtype=np.float64)
    cdef Lines lines
    if wide:
        _chunks64(data, bounds, limit, max_abs, with_qid, indptr, indices, values, row_off,
                  col_off, n_threads, &lines)
    else:
        _chunks32(data, bounds, limit, max_abs, with_qid, indptr, indices, values, row_off,
                  col_off, n_threads, &lines)
        if lines.index_overflow:
            return parse_svmlight(text, limit, max_abs, with_qid, True, n_threads,
                                  min_chunk_bytes)
    return _result(lines, indptr, indices, values)


cdef void _chunks64(const char* data, vector[int64_t]& bounds, uint64_t limit, double max_abs,
                    bint with_qid, int64_t[::1] indptr, int64_t[::1] indices,
                    double[::1] values, vector[int64_t]& row_off, vector[int64_t]& col_off,
                    int n_threads, Lines* lines) except *:
    with nogil:
        parse_chunks[int64_t](data, bounds, limit, max_abs, with_qid, &indptr[0],
                              &indices[0] if indices.shape[0] else <int64_t*>NULL,
                              &values[0] if values.shape[0] else <double*>NULL,
                              row_off, col_off, n_threads, lines)


cdef void _chunks32(const char* data, vector[int64_t]& bounds, uint64_t limit, double max_abs,
                    bint with_qid, int32_t[::1] indptr, int32_t[::1] indices,
                    double[::1] values, vector[int64_t]& row_off, vector[int64_t]& col_off,
                    int n_threads, Lines* lines) except *:
    with nogil:
        parse_chunks[int32_t](data, bounds, limit, max_abs, with_qid, &indptr[0],
                              &indices[0] if indices.shape[0] else <int32_t*>NULL,
                              &values[0] if values.shape[0] else <double*>NULL,
                              row_off, col_off, n_threads, lines)


cdef object _result(Lines& lines, indptr, indices, values):
    """parse_svmlight's dict, the arrays shrunk in place to what was stored."""
    rows = lines.labels.size()
    indptr.resize(rows + 1, refcheck=False)
    indices.resize(lines.nnz, refcheck=False)
    values.resize(lines.nnz, refcheck=False)
    return {
        "labels": _doubles(lines.labels),
        "qid_int": _array(lines.qid_int),
        "qids_are_int": bool(lines.qids_are_int),
        "qids_canonical": bool(lines.qids_canonical),
        "qid_start": _array(lines.qid_start),
        "qid_length": _array(lines.qid_length),
        "comment_start": _array(lines.comment_start),
        "comment_length": _array(lines.comment_length),
        "indptr": indptr,
        "indices": indices,
        "values": values,
        "max_index": int(lines.max_index),
        "error_line": int(lines.error_line),
        "error_start": int(lines.error_start),
        "error_end": int(lines.error_end),
    }
