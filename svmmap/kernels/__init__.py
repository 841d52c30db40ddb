"""The Cython extensions (the per-query kernels of the losses, the readers and row operations)
and their Python fronts (``_csr``: X w and row gathers without scipy; ``_kernel_inputs``: the
kernels' inputs checked once).  Everything here is private to svmmap: the public names live in
svmmap.estimator, svmmap.metrics, svmmap.data and svmmap.features."""
