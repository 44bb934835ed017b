"""fastndcg: NDCG@k for search logs at scale.

Tie-aware DCG/IDCG/NDCG@k over millions of ragged queries in one parallel call,
with the exact semantics of scikit-learn, trec_eval and LightGBM on request.

>>> import fastndcg
>>> fastndcg.ndcg([3.0, 2.0, 1.0, 0.5, 0.4], [0, 1, 2, 1, 1], [0, 3, 5], k=2, gain="linear")
array([0.23981247, 1.        ])
"""

from . import reference
from .api import dcg, dcg_score, idcg, ndcg, ndcg_score
from .evaluate import Report, evaluate

__version__ = "0.1.0"
__all__ = ["ndcg", "dcg", "idcg", "ndcg_score", "dcg_score", "evaluate", "Report", "reference",
           "__version__"]
