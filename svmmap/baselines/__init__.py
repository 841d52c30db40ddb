"""The learning-to-rank methods svmmap's users compare SVM-MAP against, with SVMMap's data
representation (QueryCollection), metrics (svmmap.metrics) and estimator manners:

* :class:`AdaRank` -- Xu & Li, SIGIR 2007 (AdaRank.MAP, AdaRank.NDCG);
* :class:`RankBoost` -- Freund et al., JMLR 2003 (bipartite, threshold weak rankers), and
  the semi-supervised variant of Amini, Truong & Goutte, SIGIR 2008 (``fit(unlabeled=)``);
* :class:`PRank` -- Crammer & Singer, NIPS 14.

:func:`load_model` reads a model file of any kind (these and SVMMap).
"""

from ..errors import ModelFileError
from ..estimator import SVMMap
from ..model_file import model_kind, read_model
from .adarank import AdaRank
from .prank import PRank
from .rankboost import RankBoost

MODEL_KINDS = {"svmmap": SVMMap, "adarank": AdaRank, "rankboost": RankBoost, "prank": PRank}


def load_model(path):
    """Load a model file written by any svmmap estimator, dispatching on its ``kind``."""
    kind = model_kind(read_model(path))
    if kind not in MODEL_KINDS:
        raise ModelFileError(f"unknown model kind {kind!r}", path)
    return MODEL_KINDS[kind].load(path)


__all__ = ["AdaRank", "RankBoost", "PRank", "load_model", "MODEL_KINDS"]
