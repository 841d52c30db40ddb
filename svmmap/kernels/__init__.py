"""The compiled kernels and their Python fronts: the fused constraint pass over all queries
(scores, per-query sort, the loss's oracle, psi; ``_query_core.pxd``), the oracles of MAP
(``_map_kernels``), ROC area (``_roc_kernels``) and the other measures (``_loss_kernels``), the
row products of CSR and binned features (``_csr_rows``, ``_binned_rows``), PRank's update
(``_prank_kernel``) and the SVMlight parser (``_svmlight_reader``); ``_kernel_inputs`` and
``_csr`` check and shape what they are given.  Nothing here is public API."""
