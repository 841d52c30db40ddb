/* The dense loops of the working set's QP (svmstruct_api/_active_set.pyx: sums of scaled
 * rows and rank-one updates; svmstruct_api/_products.pyx: the Gram matrix's new rows), compiled
 * twice where the compiler can choose at load time (GCC on x86-64 Linux: function
 * multi-versioning, as glibc and numpy choose theirs): for AVX2 (four doubles an
 * instruction) and for the baseline x86-64 (SSE2: two).
 *
 * Both versions give the same bits.  The row operations are elementwise: every output
 * element is one product and one sum per row, in row order.  The dot products keep eight
 * interleaved partial sums (element j in sum j mod 8) added in one fixed order, which is
 * elementwise in the partial sums too.  No sum is reordered by the compiler, and AVX2
 * brings no fused multiply-add (that is the separate FMA extension, which the clones do not
 * ask for).  A wider register only does more elements at once. */
#ifndef SVMSTRUCT_VECTOR_OPS_H
#define SVMSTRUCT_VECTOR_OPS_H

#include <stddef.h>

/* (each including module uses some of these functions: an unused one is no warning) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define SVMSTRUCT_CLONES __attribute__((target_clones("avx2", "default"), unused))
#elif defined(__GNUC__)
#define SVMSTRUCT_CLONES __attribute__((unused))
#else
#define SVMSTRUCT_CLONES
#endif

/* out[0:n] += sign coef[c] rows[c * stride : c * stride + n] for c = 0 .. n_rows - 1 in
 * turn, skipping coef[c] == 0; ``sign`` 1 or -1 (x + (-a) y is x - a y to the bit). */
SVMSTRUCT_CLONES static void svmstruct_add_rows(ptrdiff_t n_rows, const double *coef,
                                                const double *rows, ptrdiff_t stride,
                                                ptrdiff_t n, double *out, double sign) {
    for (ptrdiff_t c = 0; c < n_rows; c++) {
        const double a = sign * coef[c];
        if (a != 0.0) {
            const double *row = rows + c * stride;
            for (ptrdiff_t r = 0; r < n; r++) {
                out[r] += a * row[r];
            }
        }
    }
}

/* The rank-one update a[r, 0:n] += sign u[r * u_step] v[0:n] for every r < n_rows with
 * u[r * u_step] != 0 (row stride ``stride``; ``sign`` as in svmstruct_add_rows).  ``v`` may
 * be a row of ``a`` that is not updated. */
SVMSTRUCT_CLONES static void svmstruct_add_rank_one(ptrdiff_t n_rows, const double *u,
                                                    ptrdiff_t u_step, const double *v,
                                                    double *a, ptrdiff_t stride,
                                                    ptrdiff_t n, double sign) {
    for (ptrdiff_t r = 0; r < n_rows; r++) {
        const double ur = sign * u[r * u_step];
        if (ur != 0.0) {
            double *row = a + r * stride;
            for (ptrdiff_t c = 0; c < n; c++) {
                row[c] += ur * v[c];
            }
        }
    }
}

/* out[k * out_stride + l] = a_k . b_l over n components, for k < n_a and l < n_b (rows of
 * a and b at strides a_stride and b_stride): each dot product as eight interleaved partial
 * sums, ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7)), then the last n mod 8 products
 * in turn.  Row l of b is read once for all rows of a. */
SVMSTRUCT_CLONES static void svmstruct_row_products(ptrdiff_t n_a, const double *a,
                                                    ptrdiff_t a_stride, ptrdiff_t n_b,
                                                    const double *b, ptrdiff_t b_stride,
                                                    ptrdiff_t n, double *out,
                                                    ptrdiff_t out_stride) {
    const ptrdiff_t whole = n - n % 8;
    for (ptrdiff_t l = 0; l < n_b; l++) {
        const double *bl = b + l * b_stride;
        for (ptrdiff_t k = 0; k < n_a; k++) {
            const double *ak = a + k * a_stride;
            double s[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
            for (ptrdiff_t j = 0; j < whole; j += 8) {
                for (int i = 0; i < 8; i++) {
                    s[i] += ak[j + i] * bl[j + i];
                }
            }
            double t = ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
            for (ptrdiff_t j = whole; j < n; j++) {
                t += ak[j] * bl[j];
            }
            out[k * out_stride + l] = t;
        }
    }
}

#endif
