"""The paper's experimental pipeline as commands (Yue et al., SIGIR 2007, Section 5).

Modules, one job each:

``registry``   the methods an experiment can run: name -> factory(hyper-parameter) -> estimator
               (``fit(X, y, qid)`` / ``decision_function(X)``) and its hyper-parameter grid.
               SVM-MAP always; SVM-ROC / SVM-ACC (+ variants) and the ``svmmap.baselines``
               rankers whenever they are importable; the best single feature.
``datasets``   LETOR fold discovery and loading, query subsets.
``stats``      W/L counts and the two-tailed Wilcoxon signed-rank test over per-query values.
``tables``     Markdown and CSV output.
``letor``      the LETOR 5-fold protocol (``python -m svmmap.experiments.letor``).
``trials``     the paper's protocol: T trials of 10 train / 5 validation / 35 test queries,
               balanced design, Tables 6-11 layout (``python -m svmmap.experiments.trials``).
``trec``       build a data set from TREC run files and qrels; write predictions as a run.
``plots``      per-query AP scatter and 11-point interpolated precision-recall curves.
``journal``    every finished trial / fold-method run kept on disk; ``--resume``.
``meter``      progress in finished units with an estimate of the time left.
``units``      the independent units of a run (trials, fold-method runs) in this process, on
               local worker processes (``--jobs N``) or on a Dask cluster (``--scheduler``),
               to the same results.
``smart``      classic test collections in the SMART format (Cranfield, CISI, CACM).
``text``       stop list and Snowball stemmer.
``retrieval``  retrieval functions (BM25, SMART TF-IDF, query likelihood, DFR, axiomatic) on
               one sparse document-term matrix.
``classic``    TREC runs of those functions over a classic collection
               (``python -m svmmap.experiments.classic``).
``trec_tables`` a directory of TREC runs and a qrels file -> Tables 6-11, one command
               (``python -m svmmap.experiments.trec_tables``).

A method is trained over its grid and its hyper-parameter picked by validation MAP by
:func:`svmmap.core.selection.select` (the measure and tie rule of every model selection in svmmap).

Every number is computed by :mod:`svmmap.metrics` under the LETOR convention (queries without
a relevant document have AP 0 and stay in the mean), unless a table says otherwise.
"""
