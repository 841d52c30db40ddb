# cython: language_level=3
# distutils: language = c++
"""The SVMlight / LETOR parser of svmmap.data.io in C++ (_svmlight_parse.h), without the GIL.

A file is parsed block by block (:class:`MatrixBuilder`): each block (text ending at a line
end) is counted and parsed, with ``n_threads`` > 1 in chunks in parallel merged into the same
arrays, and its rows appended to arrays that grow with ``realloc`` (no copy of large arrays on
Linux, where realloc moves pages, and no page touched before it is written), so that reading
holds the output arrays and one block, never the whole text.

The arrays are a dense matrix while every line lists the same features 1..d in order (LETOR
files do, zeros written out): the values alone, row-major, 8 (or 4) bytes a value.  At the
first line that breaks that pattern, the rows read so far become CSR in place and the rest is
read as CSR (row pointer, column indices, non-zero values).

CSR indices and the row pointer are int32 unless the data needs int64 (then the arrays built
so far are widened and the block parsed again); values are float64 or float32."""

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
        int64_t break_line
        int64_t width
        int64_t first_data_line
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
                                    Lines* out, cbool dense) except +MemoryError
    int64_t dense_to_csr[Index, Value](Value* values, int64_t rows, int64_t width,
                                       Index* indptr, Index* indices)
    void pad_rows[Value](Value* values, int64_t rows, int64_t width, int64_t columns)

INT32_MAX = 2**31 - 1
#: the smallest chunk worth a thread of its own (smaller text is parsed in one pass)
MIN_CHUNK_BYTES = 1 << 20


cdef object _copied(const void *data, size_t n, dtype):
    """A new numpy array of ``n`` items of ``dtype`` copied from ``data``."""
    cdef cnp.ndarray result = np.empty(n, dtype=dtype)
    if n:
        memcpy(cnp.PyArray_DATA(result), data, n * result.itemsize)
    return result


cdef inline object _array(vector[int64_t]& v):
    return _copied(v.data(), v.size(), np.int64)


cdef inline object _doubles(vector[double]& v):
    return _copied(v.data(), v.size(), np.float64)


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

    cdef void fit(self) noexcept:
        """Shrink the capacity to the ``size`` items (at least one), when the memory allows:
        the pages beyond them are given back."""
        cdef int64_t capacity = max(self.size, 1)
        if self.data == NULL or capacity >= self.capacity:
            return
        cdef char* shrunk = <char*>resize_memory(self.data, self.capacity * self.itemsize,
                                                 capacity * self.itemsize)
        if shrunk != NULL:
            PyTraceMalloc_Untrack(TRACE_DOMAIN, <uintptr_t>self.data)
            self.data = shrunk
            self.capacity = capacity
            self.resize(self.size)

    cdef object release(self):
        """The ``size`` items as an ndarray that owns (and will free) the memory, shrunk to
        them; the _Growable is empty afterwards."""
        if self.data == NULL:
            self.reserve(1)
        self.fit()
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


cdef class MatrixBuilder:
    """The rows of the blocks parsed so far: :meth:`parse_block` appends a block's rows,
    :meth:`append` rows parsed elsewhere (svmmap.data.io's Python parser), :meth:`finish` hands the
    arrays over.

    ``dense`` (asked for at construction): the rows are held as the row-major dense matrix of
    their values while every line lists the features 1..``width`` in order (the first data
    line sets ``width``; zeros are stored, no index is), and :meth:`to_csr` makes them CSR
    (row pointer, 0-based column indices, non-zero values) in place at the first line that
    does not (:meth:`parse_block` does it and parses that block again; :meth:`append` too).
    CSR index arrays are int32 until a count or an index needs int64 (``wide``: int64 from
    the start); values are ``value_type`` (float64 or float32)."""
    cdef _Growable indptr, indices, values
    cdef readonly bint wide, dense
    #: rows, stored values (dense: rows x width) and the largest index seen
    cdef readonly int64_t rows, nnz
    cdef readonly uint64_t max_index
    #: dense: the features 1..width every line lists (-1 before the first data line)
    cdef readonly int64_t width
    cdef bint single
    #: bytes of text parsed by parse_block so far
    cdef int64_t text_bytes

    def __init__(self, value_type=np.float64, bint wide=False, bint dense=False):
        self.single = np.dtype(value_type) == np.float32
        if not self.single and np.dtype(value_type) != np.float64:
            raise ValueError("values are float64 or float32")
        self.wide = wide
        self.dense = dense
        self.width = -1
        self.indptr = _Growable(np.int64 if wide else np.int32)
        self.indices = _Growable(np.int64 if wide else np.int32)
        self.values = _Growable(np.float32 if self.single else np.float64)
        if not dense:
            self._start_indptr()
        self.rows = self.nnz = 0
        self.max_index = 0
        self.text_bytes = 0

    cdef void _start_indptr(self) except *:
        self.indptr.reserve(1)
        self.indptr.view(0, 1)[0] = 0
        self.indptr.resize(1)

    cdef void _widen(self) except *:
        self.indptr = self.indptr.widened()
        self.indices = self.indices.widened()
        self.wide = True

    def to_csr(self):
        """Make dense rows CSR, in place: the non-zero values moved to the front of the
        values (zeros are not stored), their columns and the row pointer written to new
        arrays, the values' memory beyond them given back.  Nothing happens to CSR rows."""
        if not self.dense:
            return
        cdef int64_t rows = self.rows, width = max(self.width, 0)
        cdef int64_t nnz = np.count_nonzero(self.values.view(0, rows * width)) \
            if rows * width else 0
        if nnz > INT32_MAX or rows + 1 > INT32_MAX or width > INT32_MAX:
            self.wide = True
        dtype = np.int64 if self.wide else np.int32
        self.indptr, self.indices = _Growable(dtype), _Growable(dtype)
        self.indptr.reserve(rows + 1)
        self.indices.reserve(max(nnz, 1))
        cdef void* values = self.values.data
        cdef void* indptr = self.indptr.data
        cdef void* indices = self.indices.data
        with nogil:
            if self.wide and self.single:
                dense_to_csr[int64_t, float](<float*>values, rows, width, <int64_t*>indptr,
                                             <int64_t*>indices)
            elif self.wide:
                dense_to_csr[int64_t, double](<double*>values, rows, width, <int64_t*>indptr,
                                              <int64_t*>indices)
            elif self.single:
                dense_to_csr[int32_t, float](<float*>values, rows, width, <int32_t*>indptr,
                                             <int32_t*>indices)
            else:
                dense_to_csr[int32_t, double](<double*>values, rows, width, <int32_t*>indptr,
                                              <int32_t*>indices)
        self.indptr.resize(rows + 1)
        self.indices.resize(nnz)
        self.values.resize(nnz)
        self.values.fit()
        self.nnz = nnz
        self.dense = False

    def parse_block(self, const unsigned char[::1] text, uint64_t limit, double max_abs,
                    bint with_qid=True, int n_threads=1,
                    int64_t min_chunk_bytes=MIN_CHUNK_BYTES, int64_t total_bytes=0):
        """Parse ``text`` (bytes-like ending at a line end or at the end of the file;
        whitespace ASCII, see _svmlight_parse.h) and append its rows, unless a line is
        rejected (then nothing is appended).  Dense rows whose block holds a line that breaks
        their pattern are made CSR (:meth:`to_csr`) and the block is parsed again as CSR.

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
        self.text_bytes += n
        # the whole file at this block's density (with this block's upper bounds)
        cdef double scale = max(<double>total_bytes / max(self.text_bytes, 1), 1.0)
        cdef Lines dense, lines, again
        if self.dense:
            self.values.reserve(self.nnz + colons, <int64_t>((self.nnz + colons) * scale))
            dense.width = self.width
            self._parse(data, bounds, limit, max_abs, with_qid, row_off, col_off, n_threads,
                        &dense, True)
            if not dense.break_line:
                if not dense.error_line:
                    self.width = dense.width
                    self._commit(dense.labels.size(), dense.nnz)
                    self.max_index = max(self.max_index, dense.max_index)
                return _block_result(dense)
            self.to_csr()
        if not self.wide and (self.nnz + colons > INT32_MAX or self.rows + rows > INT32_MAX):
            self._widen()
        self.indptr.reserve(self.rows + rows, <int64_t>((self.rows + rows) * scale))
        self.indices.reserve(self.nnz + colons, <int64_t>((self.nnz + colons) * scale))
        self.values.reserve(self.nnz + colons, <int64_t>((self.nnz + colons) * scale))
        self._parse(data, bounds, limit, max_abs, with_qid, row_off, col_off, n_threads,
                    &lines, False)
        if lines.index_overflow:
            self._widen()
            self._parse(data, bounds, limit, max_abs, with_qid, row_off, col_off, n_threads,
                        &again, False)
            lines = again
        if lines.error_line:  # the block's row pointer started over the last committed entry
            self.indptr.view(self.rows, self.rows + 1)[0] = self.nnz
        else:
            self._commit(lines.labels.size(), lines.nnz)
            self.max_index = max(self.max_index, lines.max_index)
        return _block_result(lines)

    cdef void _parse(self, const char* data, vector[int64_t]& bounds, uint64_t limit,
                     double max_abs, bint with_qid, vector[int64_t]& row_off,
                     vector[int64_t]& col_off, int n_threads, Lines* lines,
                     bint dense) except *:
        """parse_chunks into the arrays after the rows committed so far (``dense``: the
        values only; else the block's row pointer starts from 0: _commit moves it on)."""
        cdef void* indptr = self.indptr.data + self.rows * self.indptr.itemsize
        cdef void* indices = self.indices.data + self.nnz * self.indices.itemsize
        cdef void* values = self.values.data + self.nnz * self.values.itemsize
        if dense:
            indptr = indices = NULL
        with nogil:
            if self.wide and self.single:
                parse_chunks[int64_t, float](data, bounds, limit, max_abs, with_qid,
                                             <int64_t*>indptr, <int64_t*>indices,
                                             <float*>values, row_off, col_off, n_threads,
                                             lines, dense)
            elif self.wide:
                parse_chunks[int64_t, double](data, bounds, limit, max_abs, with_qid,
                                              <int64_t*>indptr, <int64_t*>indices,
                                              <double*>values, row_off, col_off, n_threads,
                                              lines, dense)
            elif self.single:
                parse_chunks[int32_t, float](data, bounds, limit, max_abs, with_qid,
                                             <int32_t*>indptr, <int32_t*>indices,
                                             <float*>values, row_off, col_off, n_threads,
                                             lines, dense)
            else:
                parse_chunks[int32_t, double](data, bounds, limit, max_abs, with_qid,
                                              <int32_t*>indptr, <int32_t*>indices,
                                              <double*>values, row_off, col_off, n_threads,
                                              lines, dense)

    cdef void _commit(self, int64_t rows, int64_t nnz) except *:
        """Take the ``rows`` rows (``nnz`` entries) written after the committed ones: their
        row pointer (CSR), counted from 0, is moved on by the entries before them."""
        if not self.dense:
            pointer = self.indptr.view(self.rows, self.rows + rows + 1)
            pointer += self.nnz
        self.rows += rows
        self.nnz += nnz
        if not self.dense:
            self.indptr.resize(self.rows + 1)
            self.indices.resize(self.nnz)
        self.values.resize(self.nnz)

    def append(self, indptr, indices, values, max_index):
        """Append rows given as CSR arrays (``indptr`` from 0; ``indices`` 0-based, none above
        ``max_index`` - 1); dense rows are made CSR first."""
        self.to_csr()
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

    def finish(self, int64_t columns=-1):
        """(indptr, indices, values) of every row appended, as arrays that own their memory
        (the builder is empty afterwards).  Dense rows: (None, None, the rows x columns
        C-contiguous matrix), ``columns`` (default: ``width``; more: made wider in place,
        the added columns zero) at least ``width``."""
        if not self.dense:
            return self.indptr.release(), self.indices.release(), self.values.release()
        cdef int64_t rows = self.rows, width = max(self.width, 0)
        columns = width if columns < 0 else columns
        if columns < width:
            raise ValueError(f"{columns} columns for rows of {width} features")
        if columns > width and rows:
            self.values.reserve(rows * columns)
            with nogil:
                if self.single:
                    pad_rows[float](<float*>self.values.data, rows, width, columns)
                else:
                    pad_rows[double](<double*>self.values.data, rows, width, columns)
            self.values.resize(rows * columns)
        matrix = self.values.release().reshape(rows, columns)
        self.rows = self.nnz = 0
        return None, None, matrix


cdef dict _block_result(Lines& lines):
    """MatrixBuilder.parse_block's dict of a block's Lines."""
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


def parse_svmlight(const unsigned char[::1] text, uint64_t limit, double max_abs,
                   bint with_qid=True, bint wide=False, int n_threads=1,
                   int64_t min_chunk_bytes=MIN_CHUNK_BYTES):
    """Parse SVMlight text in one block (:meth:`MatrixBuilder.parse_block`, CSR): its dict with the
    CSR arrays ``indptr``, ``indices`` (0-based column), ``values`` (float64 non-zero values)
    of the rows (none when a line is rejected); ``wide``: int64 index arrays from the
    start."""
    builder = MatrixBuilder(np.float64, wide)
    result = builder.parse_block(text, limit, max_abs, with_qid, n_threads, min_chunk_bytes)
    result["indptr"], result["indices"], result["values"] = builder.finish()
    return result
