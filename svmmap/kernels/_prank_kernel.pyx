# cython: language_level=3
"""PRank's online pass (Crammer & Singer, "Pranking with Ranking", NIPS 14, Figure 2): a
perceptron is sequential over the documents, so the loop lives here rather than in Python."""

from libc.stdint cimport int64_t


def prank_pass(const double[:, ::1] X, const int64_t[::1] rank, const int64_t[::1] order,
               double[::1] w, double[::1] b, double[::1] w_sum, double[::1] b_sum):
    """Visit the rows ``order`` once, updating ``w`` and thresholds ``b`` (length k - 1) in
    place, and add w, b after every step to ``w_sum``, ``b_sum`` (for the averaged ranker).

    For x with rank y in {0..k-1}: predict yhat = min{r : w.x - b_r < 0} (k - 1 if none);
    on a mistake, with y_r = +1 if y > r else -1, tau_r = y_r where (w.x - b_r) y_r <= 0
    (else 0), and w += (sum_r tau_r) x, b_r -= tau_r.  Returns (updates, sum |yhat - y|).
    """
    cdef Py_ssize_t n_features = X.shape[1], n_thresholds = b.shape[0]
    cdef Py_ssize_t step, i, j, r
    cdef int64_t y, yhat, updates = 0, rank_loss = 0
    cdef double s, tau_sum, y_r
    for step in range(order.shape[0]):
        i = order[step]
        y = rank[i]
        s = 0.0
        for j in range(n_features):
            s += w[j] * X[i, j]
        yhat = n_thresholds
        for r in range(n_thresholds):
            if s - b[r] < 0:
                yhat = r
                break
        if yhat != y:
            updates += 1
            rank_loss += yhat - y if yhat > y else y - yhat
            tau_sum = 0.0
            for r in range(n_thresholds):
                y_r = 1.0 if y > r else -1.0
                if (s - b[r]) * y_r <= 0:
                    tau_sum += y_r
                    b[r] -= y_r
            for j in range(n_features):
                w[j] += tau_sum * X[i, j]
        for j in range(n_features):
            w_sum[j] += w[j]
        for r in range(n_thresholds):
            b_sum[r] += b[r]
    return updates, rank_loss
