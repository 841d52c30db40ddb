/* Sorting of (score, position) pairs for the per-query kernels: score descending, ties by
 * position ascending -- a total order, so results never depend on the sort algorithm. */
#ifndef SVMMAP_SORT_H
#define SVMMAP_SORT_H

#include <algorithm>
#include <cstddef>

struct ScoredDoc {
    double score;
    std::ptrdiff_t index;
};

static inline void sort_by_score_descending(ScoredDoc *first, std::ptrdiff_t n) {
    std::sort(first, first + n, [](const ScoredDoc &a, const ScoredDoc &b) {
        return a.score > b.score || (a.score == b.score && a.index < b.index);
    });
}

#endif
