"""The option values shared by the command line, the estimator and the metrics, defined
without importing numpy or the extension: ``svmmap_learn --help`` and argument errors need
only these."""

#: the losses SVMMap optimises (svmmap.estimator.PLUGINS has one plugin per name)
LOSSES = ("acc", "map", "roc")
#: Algorithm 2 variants: exact divide and conquer over the monotone opt_j, or the plain scan
ORACLES = ("divide", "scan")
#: evaluation conventions of svmmap.metrics: "letor" counts queries without a relevant
#: document as AP 0, "trec_eval" leaves them out
CONVENTIONS = ("letor", "trec_eval")
