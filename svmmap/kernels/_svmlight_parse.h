// SVMlight / LETOR text parser behind svmmap._svmlight_reader (format: svmmap/io.py).
//
// It accepts exactly the lines the rules of svmmap.io accept, for text whose whitespace is
// ASCII (the caller sends text with other Unicode whitespace to the Python parser): lines end
// in "\n", "\r\n" or "\r", '#' starts a comment, tokens are separated by " \t\r\v\f\x1c\x1d\x1e\x1f" (the ASCII
// characters str.split() splits on), a byte >= 0x80 is part of a token.  Numbers follow
//     [+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?
// and are converted with std::from_chars (correctly rounded: the value Python's float() gives;
// strtod, also correctly rounded in glibc, where from_chars reports a range error).  It stops
// at the first line it rejects and reports its number and byte range: the Python layer
// explains the reason, so every message is defined once (svmmap/io.py).
//
// Several threads (OpenMP; serial without it, with the same results): the text is cut into
// chunks after a '\n' (a line end in every convention, so no line and no "\r\n" is split),
// each chunk counted and parsed into its own slice of the caller's arrays (sized by the
// chunks' counts), and the slices merged in order: the same arrays, line numbers and byte
// ranges as one pass over the whole text.
//
// A file is parsed block by block (svmmap._svmlight_reader.CSRBuilder): each block ends at a
// line end, and its rows are appended to arrays that grow with realloc, so that the text is
// never held whole.
#pragma once

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <system_error>
#include <new>
#include <vector>

namespace svmlight {

// tracemalloc's PyTraceMalloc_Track / _Untrack, looked up in the running interpreter (Python
// 3.11's header declares them without C linkage for C++): the reader's arrays are malloc'd,
// and reported to tracemalloc as numpy reports its own.  Without the interpreter's symbols,
// nothing is reported.
inline void trace_track(unsigned domain, uintptr_t ptr, size_t size) {
    using Track = int (*)(unsigned, uintptr_t, size_t);
    static Track track = reinterpret_cast<Track>(dlsym(RTLD_DEFAULT, "PyTraceMalloc_Track"));
    if (track) track(domain, ptr, size);
}

// Ask for transparent huge pages on a large block of memory, as numpy does for its arrays of
// 4 MiB or more (fewer page faults while the block is first written).
inline void advise_huge_pages(void* data, size_t bytes) {
#ifdef MADV_HUGEPAGE
    if (bytes < (size_t(1) << 22)) return;
    uintptr_t start = (reinterpret_cast<uintptr_t>(data) + 4095) & ~uintptr_t(4095);
    uintptr_t end = reinterpret_cast<uintptr_t>(data) + bytes;
    if (end > start) madvise(reinterpret_cast<void*>(start), end - start, MADV_HUGEPAGE);
#endif
}

// The memory of the reader's growing arrays: small blocks from malloc, from kMapBytes on a
// mapping of their own, grown and shrunk with mremap (pages move, nothing is copied), so that
// growing never holds the old and the new block at once, whatever state malloc is in (glibc's
// realloc copies blocks below its dynamic mmap threshold, up to 32 MiB; below 4 MiB, malloc
// reuses memory a process has already touched, which costs fewer page faults).
constexpr size_t kMapBytes = size_t(1) << 22;

inline size_t page_rounded(size_t bytes) {
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    return (bytes + page - 1) / page * page;
}

// `data` (`old_bytes` long as allocated here; nullptr and 0 for none) resized to `bytes`
// (> 0), its first min(old_bytes, bytes) bytes kept: the new address, or nullptr (then `data`
// is untouched).
inline void* resize_memory(void* data, size_t old_bytes, size_t bytes) {
#ifndef MREMAP_MAYMOVE  // no mremap (not Linux): realloc
    (void)old_bytes;
    return std::realloc(data, bytes);
#else
    const bool was_mapped = old_bytes >= kMapBytes, mapped = bytes >= kMapBytes;
    if (!was_mapped && !mapped) return std::realloc(data, bytes);
    if (was_mapped && mapped) {
        void* moved = mremap(data, page_rounded(old_bytes), page_rounded(bytes), MREMAP_MAYMOVE);
        return moved == MAP_FAILED ? nullptr : moved;
    }
    void* fresh;
    if (mapped) {
        fresh = mmap(nullptr, page_rounded(bytes), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (fresh == MAP_FAILED) return nullptr;
    } else if ((fresh = std::malloc(bytes)) == nullptr) {
        return nullptr;
    }
    if (data != nullptr) {
        std::memcpy(fresh, data, old_bytes < bytes ? old_bytes : bytes);
        if (was_mapped) munmap(data, page_rounded(old_bytes)); else std::free(data);
    }
    return fresh;
#endif
}

inline void free_memory(void* data, size_t bytes) {
    if (data == nullptr) return;
#ifdef MREMAP_MAYMOVE
    if (bytes >= kMapBytes) {
        munmap(data, page_rounded(bytes));
        return;
    }
#endif
    (void)bytes;
    std::free(data);
}

inline void trace_untrack(unsigned domain, uintptr_t ptr) {
    using Untrack = int (*)(unsigned, uintptr_t);
    static Untrack untrack =
        reinterpret_cast<Untrack>(dlsym(RTLD_DEFAULT, "PyTraceMalloc_Untrack"));
    if (untrack) untrack(domain, ptr);
}

inline bool is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' ||
           (c >= 0x1c && c <= 0x1f);
}

inline bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

// Does [s, e) match the number grammar above?
inline bool is_number(const char* s, const char* e) {
    if (s < e && (*s == '+' || *s == '-')) ++s;
    const char* digits = s;
    while (s < e && is_digit(*s)) ++s;
    bool mantissa = s > digits;
    if (s < e && *s == '.') {
        ++s;
        const char* fraction = s;
        while (s < e && is_digit(*s)) ++s;
        mantissa = mantissa || s > fraction;
    }
    if (!mantissa) return false;
    if (s < e && (*s == 'e' || *s == 'E')) {
        ++s;
        if (s < e && (*s == '+' || *s == '-')) ++s;
        const char* exponent = s;
        while (s < e && is_digit(*s)) ++s;
        if (s == exponent) return false;
    }
    return s == e;
}

// The float64 nearest to the number [s, e) (grammar already checked); false if it is not finite.
inline bool to_double(const char* s, const char* e, double* out) {
    const char* t = (*s == '+') ? s + 1 : s;
    auto [ptr, ec] = std::from_chars(t, e, *out, std::chars_format::general);
    if (ec == std::errc::result_out_of_range) {  // overflow or underflow: let strtod say which
        std::string copy(s, e);
        *out = std::strtod(copy.c_str(), nullptr);
    } else if (ec != std::errc() || ptr != e) {
        return false;
    }
    return std::isfinite(*out);
}

// qid text as an int64 when it is [+-]?[0-9]+ and fits (as Python's int() would read it);
// *canonical: the text is what str() of that integer gives (no '+', leading zero or "-0").
inline bool to_int64(const char* s, const char* e, int64_t* out, bool* canonical) {
    bool negative = false;
    *canonical = !(s < e && *s == '+');
    if (s < e && (*s == '+' || *s == '-')) negative = (*s++ == '-');
    if (s == e) return false;
    if (*s == '0' && (e - s > 1 || negative)) *canonical = false;
    uint64_t value = 0;
    const uint64_t limit = negative ? uint64_t(INT64_MAX) + 1 : uint64_t(INT64_MAX);
    for (; s < e; ++s) {
        if (!is_digit(*s)) return false;
        unsigned d = unsigned(*s - '0');
        if (value > (limit - d) / 10) return false;
        value = value * 10 + d;
    }
    *out = negative ? int64_t(0 - value) : int64_t(value);
    return true;
}

struct Counts {
    int64_t newlines = 0;
    int64_t colons = 0;
    bool ascii = true;
};

// One scan: upper bounds on the lines (every '\n' and '\r') and on the feature tokens (every
// token holds a ':').
inline Counts count(const char* s, int64_t n) {
    Counts c;
    unsigned char high = 0;
    for (int64_t i = 0; i < n; ++i) {
        unsigned char b = (unsigned char)s[i];
        c.newlines += (b == '\n') + (b == '\r');
        c.colons += (b == ':');
        high |= b;
    }
    c.ascii = !(high & 0x80);
    return c;
}

// Per-line results; the feature arrays are the caller's (sized by count()).
struct Lines {
    std::vector<double> labels;
    std::vector<int64_t> qid_int;
    std::vector<int64_t> qid_start, qid_length;      // bytes of the qid text
    std::vector<int64_t> comment_start, comment_length;
    bool qids_are_int = true;
    bool qids_canonical = true;
    // the first rejected line (0: none), its byte range
    int64_t error_line = 0, error_start = 0, error_end = 0;
    // dense mode: the first line that breaks the pattern (0: none) and the pattern's width
    // (the features 1..width every line lists; -1 while no data line has been read), and
    // the first data line's number (0: none)
    int64_t break_line = 0, width = -1, first_data_line = 0;
    // set when an index does not fit the caller's index type: parse again with int64
    bool index_overflow = false;
    int64_t nnz = 0;
    uint64_t max_index = 0;
    // lines (data, blank and comment) read to the end of the text; set when none is rejected
    int64_t lines_read = 0;
};

// Parse text[0:n].  indptr has room for count().newlines + 2 entries, indices / values for
// count().colons; limit is the largest feature index accepted, max_abs the largest magnitude of
// a feature value.  Zero values are not stored; values are stored as Value (double, or float:
// the double rounded to float, as numpy's astype rounds it).
// with_qid false: lines are "<label> <index>:<value> ..." (queries come from a group file).
//
// dense true (indptr and indices unused, may be null): every line must list the features
// 1..width in order (out->width; -1: the first data line sets it), zeros included, and each
// value is stored (the values are the row-major dense matrix).  The first data line that does
// not is reported in out->break_line (the text is then to be parsed again without dense): a
// feature token that is malformed, out of order, beyond the width or refused (limit,
// max_abs) breaks the pattern too, and the parse without dense says what is wrong with it.
template <typename Index, typename Value>
void parse(const char* text, int64_t n, uint64_t limit, double max_abs, bool with_qid,
           Index* indptr, Index* indices, Value* values, Lines* out, bool dense = false) {
    const char* p = text;
    const char* end = text + n;
    const uint64_t index_max = uint64_t(std::numeric_limits<Index>::max());
    int64_t lineno = 0, nnz = 0;
    uint64_t max_index = 0;
    int64_t width = out->width;
    if (!dense) indptr[0] = 0;
    while (p < end) {
        const char* newline = static_cast<const char*>(std::memchr(p, '\n', size_t(end - p)));
        if (newline == nullptr) newline = end;
        // a line ends at the first '\r' or '\n'; "\r\n" is one line end
        const char* line_end = static_cast<const char*>(std::memchr(p, '\r', size_t(newline - p)));
        if (line_end == nullptr) line_end = newline;
        ++lineno;
        const char* line = p;
        p = line_end + 1;
        if (line_end < end && *line_end == '\r' && p < end && *p == '\n') ++p;
        const char* hash = static_cast<const char*>(std::memchr(line, '#', size_t(line_end - line)));
        const char* body_end = hash ? hash : line_end;
        const char* s = line;
        while (s < body_end && is_space(*s)) ++s;
        if (s == body_end) continue;  // blank or comment only
        auto reject = [&]() {
            out->error_line = lineno;
            out->error_start = line - text;
            out->error_end = line_end - text;
        };
        auto break_pattern = [&]() { out->break_line = lineno; };
        if (out->first_data_line == 0) out->first_data_line = lineno;
        // label
        const char* t = s;
        while (t < body_end && !is_space(*t)) ++t;
        double label;
        if (!is_number(s, t) || !to_double(s, t, &label)) return reject();
        // qid:<id>
        int64_t qid = 0;
        if (with_qid) {
            s = t;
            while (s < body_end && is_space(*s)) ++s;
            t = s;
            while (t < body_end && !is_space(*t)) ++t;
            if (t - s < 5 || std::memcmp(s, "qid:", 4) != 0 ||
                std::memchr(s + 4, ':', size_t(t - s - 4)) != nullptr)
                return reject();
            bool canonical = true;
            if (out->qids_are_int && !to_int64(s + 4, t, &qid, &canonical))
                out->qids_are_int = false;
            if (!canonical) out->qids_canonical = false;
            out->qid_start.push_back(s + 4 - text);
            out->qid_length.push_back(t - s - 4);
        }
        // index:value tokens, indices 0*[1-9][0-9]{0,15} strictly increasing and <= limit
        uint64_t previous = 0;
        for (;;) {
            s = t;
            while (s < body_end && is_space(*s)) ++s;
            if (s == body_end) break;
            t = s;
            while (t < body_end && !is_space(*t)) ++t;
            const char* d = s;
            while (d < t && *d == '0') ++d;
            const char* digits = d;
            uint64_t index = 0;
            while (d < t && is_digit(*d)) index = index * 10 + unsigned(*d++ - '0');
            if (d == digits || d - digits > 16 || d == t || *d != ':')
                return dense ? break_pattern() : reject();
            if (dense && (index != previous + 1 || (width >= 0 && index > uint64_t(width))))
                return break_pattern();
            if (index > limit || index <= previous) return dense ? break_pattern() : reject();
            double value;
            if (!is_number(d + 1, t) || !to_double(d + 1, t, &value) ||
                std::fabs(value) > max_abs)
                return dense ? break_pattern() : reject();
            previous = index;
            if (index > max_index) max_index = index;
            if (dense) {
                values[nnz++] = Value(value);
            } else if (Value(value) != Value(0)) {  // not stored: a zero, or one in Value
                if (index - 1 > index_max) {
                    out->index_overflow = true;
                    return;
                }
                indices[nnz] = Index(index - 1);
                values[nnz] = Value(value);
                ++nnz;
            }
        }
        if (dense) {
            if (width < 0) width = out->width = int64_t(previous);
            if (int64_t(previous) != width) return break_pattern();
        }
        out->labels.push_back(label);
        if (with_qid) out->qid_int.push_back(qid);
        if (!dense) indptr[out->labels.size()] = Index(nnz);
        // the comment, stripped of surrounding whitespace
        const char* c = hash ? hash + 1 : line_end;
        const char* ce = line_end;
        while (c < ce && is_space(*c)) ++c;
        while (ce > c && is_space(ce[-1])) --ce;
        out->comment_start.push_back(c - text);
        out->comment_length.push_back(ce - c);
    }
    out->nnz = nnz;
    out->max_index = max_index;
    out->lines_read = lineno;
}

// Chunk boundaries 0 = b_0 < b_1 < ... < b_k = n for at most `parts` chunks, every inner
// boundary just after a '\n' at least `min_bytes` past the previous one (the last chunk
// may be shorter).
inline std::vector<int64_t> chunk_bounds(const char* text, int64_t n, int64_t parts,
                                         int64_t min_bytes) {
    std::vector<int64_t> bounds{0};
    if (min_bytes < 1) min_bytes = 1;
    if (parts > n / min_bytes) parts = n / min_bytes;
    for (int64_t i = 1; i < parts; ++i) {
        int64_t target = n / parts * i;
        if (target < bounds.back() + min_bytes) continue;
        const char* nl = static_cast<const char*>(std::memchr(text + target, '\n',
                                                              size_t(n - target)));
        if (nl == nullptr) break;
        int64_t b = nl - text + 1;
        if (b >= n) break;
        bounds.push_back(b);
    }
    bounds.push_back(n);
    return bounds;
}

// count() of every chunk, in parallel.
inline std::vector<Counts> count_chunks(const char* text, const std::vector<int64_t>& bounds,
                                        int n_threads) {
    const int64_t k = int64_t(bounds.size()) - 1;
    std::vector<Counts> counts(size_t(k > 0 ? k : 0));
#pragma omp parallel for schedule(static, 1) num_threads(n_threads)
    for (int64_t c = 0; c < k; ++c) counts[c] = count(text + bounds[c], bounds[c + 1] - bounds[c]);
    return counts;
}

// Parse every chunk in parallel and merge (one chunk: a plain parse()).  Chunk c writes its row pointer from
// indptr[row_off[c]] (row_off: running sums of the chunks' newlines + 2) and its features
// from col_off[c] (running sums of their colons); the merge moves them down to close the
// gaps (every destination at or before its source) and fills `out` as parse() would have:
// global line numbers and byte ranges, the first rejected line, an index overflow anywhere.
template <typename Index, typename Value>
void parse_chunks(const char* text, const std::vector<int64_t>& bounds, uint64_t limit,
                  double max_abs, bool with_qid, Index* indptr, Index* indices, Value* values,
                  const std::vector<int64_t>& row_off, const std::vector<int64_t>& col_off,
                  int n_threads, Lines* out, bool dense = false) {
    const int64_t k = int64_t(bounds.size()) - 1;
    if (k == 1) {  // one chunk: straight into the output, nothing to merge
        parse<Index, Value>(text, bounds[1], limit, max_abs, with_qid, indptr, indices, values,
                            out, dense);
        return;
    }
    // dense: every chunk starts from the width known so far; one that learns another width
    // from its first data line breaks the pattern there (the chunks before it all match)
    std::vector<Lines> parts(static_cast<size_t>(k));
    for (Lines& part : parts) part.width = out->width;
    // std::bad_alloc must not leave an OpenMP region (that terminates the process): each
    // chunk catches it, and it is thrown again here, for the caller (except +MemoryError)
    bool out_of_memory = false;
#pragma omp parallel for schedule(static, 1) num_threads(n_threads)
    for (int64_t c = 0; c < k; ++c) {
        try {
            parse<Index, Value>(text + bounds[c], bounds[c + 1] - bounds[c], limit, max_abs,
                                with_qid, dense ? indptr : indptr + row_off[c],
                                dense ? indices : indices + col_off[c], values + col_off[c],
                                &parts[c], dense);
        } catch (const std::bad_alloc&) {
#pragma omp atomic write
            out_of_memory = true;
        }
    }
    if (out_of_memory) throw std::bad_alloc();
    int64_t rows = 0, nnz = 0, lineno = 0;
    if (!dense) indptr[0] = 0;
    for (int64_t c = 0; c < k; ++c) {
        Lines& part = parts[c];
        if (part.index_overflow) {
            out->index_overflow = true;
            return;
        }
        // the width this chunk's first data line set, when it was read (else the width the
        // chunk was given): another width than the chunks' before breaks the pattern there
        if (dense && part.width >= 0 && out->width >= 0 && part.width != out->width) {
            out->break_line = lineno + part.first_data_line;
            return;
        }
        if (part.break_line) {
            out->break_line = lineno + part.break_line;
            return;
        }
        if (part.error_line) {
            out->error_line = lineno + part.error_line;
            out->error_start = bounds[c] + part.error_start;
            out->error_end = bounds[c] + part.error_end;
            return;
        }
        const int64_t r = int64_t(part.labels.size());
        if (!dense)
            for (int64_t i = 1; i <= r; ++i)
                indptr[rows + i] = Index(nnz + int64_t(indptr[row_off[c] + i]));
        if (dense && out->width < 0) out->width = part.width;
        if (part.nnz) {
            if (!dense)
                std::memmove(indices + nnz, indices + col_off[c],
                             size_t(part.nnz) * sizeof(Index));
            std::memmove(values + nnz, values + col_off[c], size_t(part.nnz) * sizeof(Value));
        }
        out->labels.insert(out->labels.end(), part.labels.begin(), part.labels.end());
        out->qid_int.insert(out->qid_int.end(), part.qid_int.begin(), part.qid_int.end());
        for (int64_t v : part.qid_start) out->qid_start.push_back(bounds[c] + v);
        out->qid_length.insert(out->qid_length.end(), part.qid_length.begin(),
                               part.qid_length.end());
        for (int64_t v : part.comment_start) out->comment_start.push_back(bounds[c] + v);
        out->comment_length.insert(out->comment_length.end(), part.comment_length.begin(),
                                   part.comment_length.end());
        out->qids_are_int = out->qids_are_int && part.qids_are_int;
        out->qids_canonical = out->qids_canonical && part.qids_canonical;
        if (part.max_index > out->max_index) out->max_index = part.max_index;
        rows += r;
        nnz += part.nnz;
        lineno += part.lines_read;
        part = Lines();  // release the chunk's per-line vectors as soon as they are merged
    }
    out->nnz = nnz;
    out->lines_read = lineno;
}

// The CSR arrays of the row-major dense rows x width matrix `values` (the dense parse's
// layout), built in place: its non-zero values moved to its front in row order (each moves
// down or stays), their 0-based columns written to `indices` and the row pointer to `indptr`
// (rows + 1 entries; `indices` has room for the non-zeros).  Returns the number of non-zeros.
template <typename Index, typename Value>
int64_t dense_to_csr(Value* values, int64_t rows, int64_t width, Index* indptr,
                     Index* indices) {
    int64_t nnz = 0;
    indptr[0] = 0;
    for (int64_t r = 0; r < rows; ++r) {
        const Value* row = values + r * width;
        for (int64_t c = 0; c < width; ++c) {
            const Value v = row[c];
            if (v != Value(0)) {
                values[nnz] = v;
                indices[nnz] = Index(c);
                ++nnz;
            }
        }
        indptr[r + 1] = Index(nnz);
    }
    return nnz;
}

// The row-major rows x width matrix at the front of `values` (room for rows x columns items,
// columns >= width) made rows x columns in place: each row moved to its new place, last row
// first (no row overwrites one not yet moved), and its columns width..columns-1 set to zero.
template <typename Value>
void pad_rows(Value* values, int64_t rows, int64_t width, int64_t columns) {
    for (int64_t r = rows - 1; r >= 0; --r) {
        if (width) std::memmove(values + r * columns, values + r * width,
                                size_t(width) * sizeof(Value));
        std::fill(values + r * columns + width, values + (r + 1) * columns, Value(0));
    }
}

}  // namespace svmlight
