"""The learning-to-rank methods svmmap's users compare SVM-MAP against, with SVMMap's data
representation (QueryCollection), metrics (svmmap.metrics) and estimator API (svmmap.core.base):

* :class:`AdaRank` -- Xu & Li, SIGIR 2007 (AdaRank.MAP, AdaRank.NDCG);
* :class:`RankBoost` -- Freund et al., JMLR 2003 (bipartite, threshold weak rankers), and
  the semi-supervised variant of Amini, Truong & Goutte, SIGIR 2008 (``fit(unlabeled=)``);
* :class:`PRank` -- Crammer & Singer, NIPS 14.

Their model files are read by ``svmmap.load_model`` and ``svmmap_classify`` like SVMMap's.
The classes are imported on first use (PEP 562), so that ``svmmap_baseline_learn --help``
(svmmap.commands.baseline_learn) loads neither numpy nor scipy.
"""

from ..core._lazy import lazy_names

#: public name -> the module that defines it, imported when the name is first used
_LAZY = {"AdaRank": ".adarank", "RankBoost": ".rankboost", "PRank": ".prank"}

__all__ = ["AdaRank", "RankBoost", "PRank"]

__getattr__, __dir__ = lazy_names(__name__, globals(), _LAZY)
