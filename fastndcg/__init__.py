"""fastndcg: NDCG@k for search logs at scale.

Tie-aware DCG/IDCG/NDCG@k over millions of ragged queries in one parallel call,
with the exact semantics of scikit-learn, trec_eval and LightGBM on request.

>>> import fastndcg
>>> fastndcg.ndcg([3.0, 2.0, 1.0, 0.5, 0.4], [0, 1, 2, 1, 1], [0, 3, 5], k=2, gain="linear")
array([0.23981247, 1.        ])

Importing the package is cheap: each public name imports its module on first use
(the array functions need NumPy; ``evaluate`` also pyarrow; Numba and the cached
kernels load at the first computation), so command-line start-up, ``--help`` and
usage errors never pay for what they do not use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"
__all__ = ["ndcg", "dcg", "idcg", "measure", "ndcg_score", "dcg_score", "evaluate",
           "evaluate_runs", "Report", "RunidClash", "OptionError", "compare",
           "LabelSets", "Comparison", "warmup", "WarmupReport", "agreement", "Agreement",
           "grade_agreement", "kendall_tau_b", "tau_ap", "spearman_rho",
           "reference", "__version__"]

# public name -> the module that defines it
_WHERE = {"ndcg": "api", "dcg": "api", "idcg": "api", "measure": "api", "ndcg_score": "api", "dcg_score": "api",
          "evaluate": "_evaluate", "evaluate_runs": "_evaluate", "Report": "_evaluate",
          "RunidClash": "_evaluate", "LabelSets": "_evaluate", "OptionError": "_validate",
          "compare": "_compare", "Comparison": "_compare",
          "warmup": "_warmup", "WarmupReport": "_warmup",
          **dict.fromkeys(("agreement", "Agreement", "grade_agreement", "kendall_tau_b",
                           "tau_ap", "spearman_rho"), "_agreement")}

if TYPE_CHECKING:  # for type checkers and IDEs; at run time names load lazily
    from . import reference
    from ._agreement import (Agreement, agreement, grade_agreement, kendall_tau_b,
                             spearman_rho, tau_ap)
    from .api import dcg, dcg_score, idcg, measure, ndcg, ndcg_score
    from ._compare import Comparison, compare
    from ._evaluate import LabelSets, Report, RunidClash, evaluate, evaluate_runs
    from ._validate import OptionError
    from ._warmup import WarmupReport, warmup


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    elif name == "reference":
        value = importlib.import_module(f"{__name__}.reference")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():  # the public names only
    return sorted(__all__)
