"""The learning-to-rank methods svmmap's users compare SVM-MAP against, with SVMMap's data
representation (QueryCollection), metrics (svmmap.metrics) and estimator API (svmmap.base):

* :class:`AdaRank` -- Xu & Li, SIGIR 2007 (AdaRank.MAP, AdaRank.NDCG);
* :class:`RankBoost` -- Freund et al., JMLR 2003 (bipartite, threshold weak rankers), and
  the semi-supervised variant of Amini, Truong & Goutte, SIGIR 2008 (``fit(unlabeled=)``);
* :class:`PRank` -- Crammer & Singer, NIPS 14.

Their model files are read by ``svmmap.load_model`` and ``svmmap_classify`` like SVMMap's.
"""

from .adarank import AdaRank
from .prank import PRank
from .rankboost import RankBoost

__all__ = ["AdaRank", "RankBoost", "PRank"]
