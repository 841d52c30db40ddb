/* The active set's O(|F|^2) and O(K |F|) loops (svmstruct_api/_active_set.pyx), all of
 * them sums of scaled rows, compiled twice where the compiler can choose at load time (GCC
 * on x86-64 Linux: function multi-versioning, as glibc and numpy choose theirs): for AVX2
 * (four doubles an instruction) and for the baseline x86-64 (SSE2: two).
 *
 * Every output element is one product and one sum per row, in row order, in both versions:
 * no reduction is reordered and AVX2 brings no fused multiply-add (that is the separate FMA
 * extension, which the clones do not ask for), so both versions give the same bits.  The
 * loops are elementwise; a wider register only does more elements at once. */
#ifndef SVMSTRUCT_VECTOR_OPS_H
#define SVMSTRUCT_VECTOR_OPS_H

#include <stddef.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define SVMSTRUCT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SVMSTRUCT_CLONES
#endif

/* out[0:n] += coef[c] rows[c * stride : c * stride + n] for c = 0 .. n_rows - 1 in turn,
 * skipping coef[c] == 0. */
SVMSTRUCT_CLONES static void svmstruct_add_rows(ptrdiff_t n_rows, const double *coef,
                                                const double *rows, ptrdiff_t stride,
                                                ptrdiff_t n, double *out) {
    for (ptrdiff_t c = 0; c < n_rows; c++) {
        const double a = coef[c];
        if (a != 0.0) {
            const double *row = rows + c * stride;
            for (ptrdiff_t r = 0; r < n; r++) {
                out[r] += a * row[r];
            }
        }
    }
}

/* out[0:n] -= coef[c] rows[c * stride : c * stride + n], as svmstruct_add_rows. */
SVMSTRUCT_CLONES static void svmstruct_subtract_rows(ptrdiff_t n_rows, const double *coef,
                                                     const double *rows, ptrdiff_t stride,
                                                     ptrdiff_t n, double *out) {
    for (ptrdiff_t c = 0; c < n_rows; c++) {
        const double a = coef[c];
        if (a != 0.0) {
            const double *row = rows + c * stride;
            for (ptrdiff_t r = 0; r < n; r++) {
                out[r] -= a * row[r];
            }
        }
    }
}

/* The rank-one update a[r, 0:n] += u[r * u_step] v[0:n] for every r < n_rows with
 * u[r * u_step] != 0 (row stride ``stride``).  ``v`` may be a row of ``a`` that is not
 * updated. */
SVMSTRUCT_CLONES static void svmstruct_add_rank_one(ptrdiff_t n_rows, const double *u,
                                                    ptrdiff_t u_step, const double *v,
                                                    double *a, ptrdiff_t stride,
                                                    ptrdiff_t n) {
    for (ptrdiff_t r = 0; r < n_rows; r++) {
        const double ur = u[r * u_step];
        if (ur != 0.0) {
            double *row = a + r * stride;
            for (ptrdiff_t c = 0; c < n; c++) {
                row[c] += ur * v[c];
            }
        }
    }
}

/* a[r, 0:n] -= u[r * u_step] v[0:n], as svmstruct_add_rank_one. */
SVMSTRUCT_CLONES static void svmstruct_subtract_rank_one(ptrdiff_t n_rows, const double *u,
                                                         ptrdiff_t u_step, const double *v,
                                                         double *a, ptrdiff_t stride,
                                                         ptrdiff_t n) {
    for (ptrdiff_t r = 0; r < n_rows; r++) {
        const double ur = u[r * u_step];
        if (ur != 0.0) {
            double *row = a + r * stride;
            for (ptrdiff_t c = 0; c < n; c++) {
                row[c] -= ur * v[c];
            }
        }
    }
}

#endif
