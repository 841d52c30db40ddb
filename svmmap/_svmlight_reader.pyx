# cython: language_level=3
# distutils: language = c++
"""The SVMlight / LETOR parser of svmmap.io in C++ (_svmlight_parse.h), without the GIL.

A file is parsed block by block (:class:`CSRBuilder`): each block (text ending at a line end)
is counted and parsed, with ``n_threads`` > 1 in chunks in parallel merged into the same
arrays, and its rows appended to CSR arrays that grow with ``realloc`` (no copy of large
arrays on Linux, where realloc moves pages, and no page touched before it is written), so
that reading holds the output arrays and one block, never the whole text.

Indices and the row pointer are int32 unless the data needs int64 (then the arrays built so
far are widened and the block parsed again); values are float64 or float32."""

import numpy as np

cimport numpy as cnp
from cpython.pycapsule cimport (
    PyCapsule_GetContext,
    PyCapsule_GetPointer,
    PyCapsule_New,
    PyCapsule_SetContext,
)
from libc.stdint cimport int32_t, int64_t, uint64_t, uintptr_t
from libc.string cimport memcpy
from libcpp cimport bool as cbool
from libcpp.vector cimport vector

cnp.import_array()

cdef extern from "_svmlight_parse.h" namespace "svmlight" nogil:
    void PyTraceMalloc_Track "svmlight::trace_track"(unsigned int domain, uintptr_t ptr,
                                                     size_t size)
    void PyTraceMalloc_Untrack "svmlight::trace_untrack"(unsigned int domain, uintptr_t ptr)
    void advise_huge_pages(void* data, size_t bytes)
    void* resize_memory(void* data, size_t old_bytes, size_t bytes)
    void free_memory(void* data, size_t bytes)

#: the tracemalloc domain of the arrays' memory (numpy's, which tracemalloc counts as numpy's
#: own arrays): what is written, not the capacity reserved (whose untouched pages cost
#: nothing)
cdef unsigned int TRACE_DOMAIN = 389047

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
        int64_t lines_read

    # what allocates may throw std::bad_alloc: raised here as MemoryError (the commands'
    # out-of-memory line), never left to abort the process
    Counts count(const char* text, int64_t n)
    vector[int64_t] chunk_bounds(const char* text, int64_t n, int64_t parts,
                                 int64_t min_bytes) except +MemoryError
    vector[Counts] count_chunks(const char* text, const vector[int64_t]& bounds,
                                int n_threads) except +MemoryError
    void parse_chunks[Index, Value](const char* text, const vector[int64_t]& bounds,
                                    uint64_t limit, double max_abs, cbool with_qid,
                                    Index* indptr, Index* indices, Value* values,
                                    const vector[int64_t]& row_off,
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


cdef void _free_capsule(object capsule) noexcept:
    """Free a released _Growable's memory (the capsule's context: its size in bytes)."""
    cdef void* data = PyCapsule_GetPointer(capsule, NULL)
    PyTraceMalloc_Untrack(TRACE_DOMAIN, <uintptr_t>data)
    free_memory(data, <size_t><uintptr_t>PyCapsule_GetContext(capsule))


cdef class _Growable:
    """An array of ``itemsize``-byte items that grows geometrically (appending n items costs
    O(n)) without copying once large (_svmlight_parse.h's resize_memory: mremap); its pages
    are touched only when written."""
    cdef char* data
    cdef int64_t size, capacity, itemsize
    cdef object dtype

    def __cinit__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.itemsize = self.dtype.itemsize
        self.data = NULL
        self.size = self.capacity = 0

    def __dealloc__(self):
        if self.data != NULL:
            PyTraceMalloc_Untrack(TRACE_DOMAIN, <uintptr_t>self.data)
        free_memory(self.data, self.capacity * self.itemsize)

    cdef void reserve(self, int64_t n, int64_t expected=0) except *:
        """Room for at least n items; when it grows, room for ``expected`` items at least
        (the items a whole file is expected to hold: one mapping then, not a move per
        growth; pages reserved beyond those written are never touched)."""
        if n <= self.capacity:
            return
        cdef int64_t least = max(n, self.capacity + self.capacity // 2, 1024)
        cdef int64_t capacity = max(least, expected)
        cdef char* grown = <char*>resize_memory(self.data, self.capacity * self.itemsize,
                                                capacity * self.itemsize)
        if grown == NULL and capacity > least:  # the expected room refused: the least
            capacity = least
            grown = <char*>resize_memory(self.data, self.capacity * self.itemsize,
                                         capacity * self.itemsize)
        if grown == NULL:
            raise MemoryError()
        if self.data != NULL:
            PyTraceMalloc_Untrack(TRACE_DOMAIN, <uintptr_t>self.data)
        self.data = grown
        self.capacity = capacity
        advise_huge_pages(grown, capacity * self.itemsize)
        self.resize(self.size)

    cdef void resize(self, int64_t size) noexcept:
        """Hold ``size`` items (within the capacity)."""
        self.size = size
        PyTraceMalloc_Track(TRACE_DOMAIN, <uintptr_t>self.data, max(size, 1) * self.itemsize)

    cdef object view(self, int64_t start, int64_t stop):
        """items[start:stop] as an ndarray sharing the memory (valid until the next
        reserve)."""
        cdef cnp.npy_intp n = stop - start
        return cnp.PyArray_SimpleNewFromData(1, &n, self.dtype.num,
                                             self.data + start * self.itemsize)

    cdef object release(self):
        """The ``size`` items as an ndarray that owns (and will free) the memory, shrunk to
        them; the _Growable is empty afterwards."""
        if self.data == NULL:
            self.reserve(1)
        cdef int64_t capacity = max(self.size, 1)
        cdef char* shrunk = <char*>resize_memory(self.data, self.capacity * self.itemsize,
                                                 capacity * self.itemsize)
        if shrunk != NULL:
            PyTraceMalloc_Untrack(TRACE_DOMAIN, <uintptr_t>self.data)
            self.data = shrunk
            self.capacity = capacity
            self.resize(self.size)
        capsule = PyCapsule_New(self.data, NULL, <void (*)(object) noexcept>_free_capsule)
        PyCapsule_SetContext(capsule, <void*><uintptr_t>(self.capacity * self.itemsize))
        result = self.view(0, self.size)
        cnp.set_array_base(result, capsule)
        self.data = NULL
        self.size = self.capacity = 0
        return result

    cdef _Growable widened(self):
        """A copy with int64 items (the same values)."""
        cdef _Growable wide = _Growable(np.int64)
        wide.reserve(max(self.capacity, 1))
        wide.resize(self.size)
        wide.view(0, self.size)[:] = self.view(0, self.size)
        return wide


cdef class CSRBuilder:
    """The CSR arrays (row pointer, 0-based column indices, non-zero values) of the rows of
    the blocks parsed so far: :meth:`parse_block` appends a block's rows, :meth:`append`
    rows parsed elsewhere (svmmap.io's Python parser), :meth:`finish` hands the arrays over.
    Index arrays are int32 until a count or an index needs int64 (``wide``: int64 from the
    start); values are ``value_type`` (float64 or float32)."""
    cdef _Growable indptr, indices, values
    cdef readonly bint wide
    cdef readonly int64_t rows, nnz
    cdef readonly uint64_t max_index
    cdef bint single
    #: bytes of text parsed by parse_block so far
    cdef int64_t text_bytes

    def __init__(self, value_type=np.float64, bint wide=False):
        self.single = np.dtype(value_type) == np.float32
        if not self.single and np.dtype(value_type) != np.float64:
            raise ValueError("values are float64 or float32")
        self.wide = wide
        self.indptr = _Growable(np.int64 if wide else np.int32)
        self.indices = _Growable(np.int64 if wide else np.int32)
        self.values = _Growable(np.float32 if self.single else np.float64)
        self.indptr.reserve(1)
        self.indptr.view(0, 1)[0] = 0
        self.indptr.resize(1)
        self.rows = self.nnz = 0
        self.max_index = 0
        self.text_bytes = 0

    cdef void _widen(self) except *:
        self.indptr = self.indptr.widened()
        self.indices = self.indices.widened()
        self.wide = True

    def parse_block(self, const unsigned char[::1] text, uint64_t limit, double max_abs,
                    bint with_qid=True, int n_threads=1,
                    int64_t min_chunk_bytes=MIN_CHUNK_BYTES, int64_t total_bytes=0):
        """Parse ``text`` (bytes-like ending at a line end or at the end of the file;
        whitespace ASCII, see _svmlight_parse.h) and append its rows, unless a line is
        rejected (then nothing is appended).

        ``n_threads`` > 1: in up to that many chunks (each but the last at least
        ``min_chunk_bytes`` long), in parallel; the result is the same.  ``limit`` is the
        largest feature index accepted, ``max_abs`` the largest magnitude of a feature value
        (``inf``: any finite value); ``with_qid`` false: the lines carry no ``qid:`` token
        (the qid arrays are then empty).  ``total_bytes``: the text of the whole file, when
        known (a plain file's size): when the arrays grow, they are reserved for the rows and
        entries the file is expected to hold at the density of the text parsed so far (one
        mapping, no move per growth; more rows are still taken, fewer leave pages never
        touched, and :meth:`finish` shrinks the arrays).

        Returns a dict of the block: ``labels`` (float64), ``qid_int`` (int64, meaningful
        when ``qids_are_int``; ``qids_canonical``: and each qid text is ``str()`` of its
        integer), ``qid_start`` / ``qid_length`` and ``comment_start`` / ``comment_length``
        (byte ranges in ``text``, one per data line), ``max_index`` (largest index seen,
        zero values included), ``lines_read`` (lines of the block, blank and comment ones
        included), and ``error_line`` (0 when every line was accepted, else the 1-based
        number in the block of the first rejected line) with its byte range ``error_start``
        / ``error_end``."""
        cdef int64_t n = text.shape[0]
        cdef const char* data = <const char*>&text[0] if n else <const char*>NULL
        # one chunk (the whole block) unless more threads are asked for and it is long enough
        cdef vector[int64_t] bounds = chunk_bounds(data, n, max(n_threads, 1),
                                                   min_chunk_bytes)
        cdef vector[Counts] counts
        with nogil:
            counts = count_chunks(data, bounds, n_threads)
        cdef vector[int64_t] row_off, col_off
        cdef int64_t rows = 0, colons = 0
        cdef size_t c
        for c in range(counts.size()):
            row_off.push_back(rows)
            col_off.push_back(colons)
            rows += counts[c].newlines + 2
            colons += counts[c].colons
        if not self.wide and (self.nnz + colons > INT32_MAX or self.rows + rows > INT32_MAX):
            self._widen()
        self.text_bytes += n
        # the whole file at this block's density (with this block's upper bounds)
        cdef double scale = max(<double>total_bytes / max(self.text_bytes, 1), 1.0)
        self.indptr.reserve(self.rows + rows, <int64_t>((self.rows + rows) * scale))
        self.indices.reserve(self.nnz + colons, <int64_t>((self.nnz + colons) * scale))
        self.values.reserve(self.nnz + colons, <int64_t>((self.nnz + colons) * scale))
        cdef Lines lines, again
        self._parse(data, bounds, limit, max_abs, with_qid, row_off, col_off, n_threads,
                    &lines)
        if lines.index_overflow:
            self._widen()
            self._parse(data, bounds, limit, max_abs, with_qid, row_off, col_off, n_threads,
                        &again)
            lines = again
        if lines.error_line:  # the block's row pointer started over the last committed entry
            self.indptr.view(self.rows, self.rows + 1)[0] = self.nnz
        else:
            self._commit(lines.labels.size(), lines.nnz)
            self.max_index = max(self.max_index, lines.max_index)
        return {
            "labels": _doubles(lines.labels),
            "qid_int": _array(lines.qid_int),
            "qids_are_int": bool(lines.qids_are_int),
            "qids_canonical": bool(lines.qids_canonical),
            "qid_start": _array(lines.qid_start),
            "qid_length": _array(lines.qid_length),
            "comment_start": _array(lines.comment_start),
            "comment_length": _array(lines.comment_length),
            "max_index": int(lines.max_index),
            "lines_read": int(lines.lines_read),
            "error_line": int(lines.error_line),
            "error_start": int(lines.error_start),
            "error_end": int(lines.error_end),
        }

    cdef void _parse(self, const char* data, vector[int64_t]& bounds, uint64_t limit,
                     double max_abs, bint with_qid, vector[int64_t]& row_off,
                     vector[int64_t]& col_off, int n_threads, Lines* lines) except *:
        """parse_chunks into the arrays after the rows committed so far (the block's row
        pointer starts from 0: _commit moves it on)."""
        cdef void* indptr = self.indptr.data + self.rows * self.indptr.itemsize
        cdef void* indices = self.indices.data + self.nnz * self.indices.itemsize
        cdef void* values = self.values.data + self.nnz * self.values.itemsize
        with nogil:
            if self.wide and self.single:
                parse_chunks[int64_t, float](data, bounds, limit, max_abs, with_qid,
                                             <int64_t*>indptr, <int64_t*>indices,
                                             <float*>values, row_off, col_off, n_threads,
                                             lines)
            elif self.wide:
                parse_chunks[int64_t, double](data, bounds, limit, max_abs, with_qid,
                                              <int64_t*>indptr, <int64_t*>indices,
                                              <double*>values, row_off, col_off, n_threads,
                                              lines)
            elif self.single:
                parse_chunks[int32_t, float](data, bounds, limit, max_abs, with_qid,
                                             <int32_t*>indptr, <int32_t*>indices,
                                             <float*>values, row_off, col_off, n_threads,
                                             lines)
            else:
                parse_chunks[int32_t, double](data, bounds, limit, max_abs, with_qid,
                                              <int32_t*>indptr, <int32_t*>indices,
                                              <double*>values, row_off, col_off, n_threads,
                                              lines)

    cdef void _commit(self, int64_t rows, int64_t nnz) except *:
        """Take the ``rows`` rows (``nnz`` entries) written after the committed ones: their
        row pointer, counted from 0, is moved on by the entries before them."""
        pointer = self.indptr.view(self.rows, self.rows + rows + 1)
        pointer += self.nnz
        self.rows += rows
        self.nnz += nnz
        self.indptr.resize(self.rows + 1)
        self.indices.resize(self.nnz)
        self.values.resize(self.nnz)

    def append(self, indptr, indices, values, max_index):
        """Append rows given as CSR arrays (``indptr`` from 0; ``indices`` 0-based, none above
        ``max_index`` - 1)."""
        cdef int64_t rows = len(indptr) - 1, nnz = len(indices)
        if not self.wide and (self.nnz + nnz > INT32_MAX or self.rows + rows + 1 > INT32_MAX
                              or max_index > INT32_MAX):
            self._widen()
        self.indptr.reserve(self.rows + rows + 1)
        self.indices.reserve(self.nnz + nnz)
        self.values.reserve(self.nnz + nnz)
        self.indptr.view(self.rows, self.rows + rows + 1)[:] = indptr
        self.indices.view(self.nnz, self.nnz + nnz)[:] = indices
        self.values.view(self.nnz, self.nnz + nnz)[:] = values
        self._commit(rows, nnz)
        self.max_index = max(self.max_index, max_index)

    def finish(self):
        """(indptr, indices, values) of every row appended, as arrays that own their memory
        (the builder is empty afterwards)."""
        return self.indptr.release(), self.indices.release(), self.values.release()


def parse_svmlight(const unsigned char[::1] text, uint64_t limit, double max_abs,
                   bint with_qid=True, bint wide=False, int n_threads=1,
                   int64_t min_chunk_bytes=MIN_CHUNK_BYTES):
    """Parse SVMlight text in one block (:meth:`CSRBuilder.parse_block`): its dict with the
    CSR arrays ``indptr``, ``indices`` (0-based column), ``values`` (float64 non-zero values)
    of the rows (none when a line is rejected); ``wide``: int64 index arrays from the
    start."""
    builder = CSRBuilder(np.float64, wide)
    result = builder.parse_block(text, limit, max_abs, with_qid, n_threads, min_chunk_bytes)
    result["indptr"], result["indices"], result["values"] = builder.finish()
    return result
