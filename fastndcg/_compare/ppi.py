"""Prediction-powered differences: ``compare(..., qrels=llm, human_qrels=human)``.

For each system against the baseline (per measure, and per segment), the
per-query difference d = system - baseline is taken under the LLM's judgments on
every query and under the human judgments on the queries they judge (the
labelled sample, assumed a uniform random sample of the queries); the
prediction-powered estimate of the mean difference, its interval and standard
error are those :mod:`fastndcg.ppi` gives for a mean, on these differences
(``ppi_py.ppi_mean_ci`` on the same values). The p-value is two-sided, by the
normal approximation (z = estimate / standard error), and is corrected across
every pair reported with the comparison's ``correction``.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from .. import io
from ..parts import Rows
from ..ppi import ASSUMPTION, PPI
from .arguments import Settings
from .comparison import Comparison
from .paired import PairSums, Plan
from .stats import adjust
from .values import Values, judged_values

__all__ = ["with_ppi", "with_sums", "PPI_COLUMNS", "normal_p"]

# the columns added to Comparison.tests (p_ppi_adj: corrected across the pairs)
PPI_COLUMNS = ("ppi_diff", "ppi_low", "ppi_high", "ppi_se", "ppi_lambda", "ppi_n", "ppi_N",
               "p_ppi", "p_ppi_adj")


def normal_p(estimate: float, se: float) -> float:
    """The two-sided p-value of ``estimate`` against 0 by the normal approximation.

    >>> round(normal_p(1.96, 1.0), 4), normal_p(0.0, 0.0), normal_p(0.5, 0.0)
    (0.05, 1.0, 0.0)
    """
    if se == 0:
        return 1.0 if estimate == 0 else 0.0
    return math.erfc(abs(estimate / se) / math.sqrt(2))


def with_ppi(c: Comparison, source, v: Values, st: Settings, progress: bool) -> Comparison:
    """``c`` with the prediction-powered columns (:data:`PPI_COLUMNS`) added to its
    tests table and ``c.ppi`` set, from per-query values held in memory: every
    system (a run, or a score column of the log ``source``) is evaluated against
    ``st.human_qrels`` and its per-query values lined up with ``v`` (the LLM's) in
    the sums :func:`with_sums` reads."""
    # the human sample is evaluated as judgments: its messages name it as the user did
    human_ids, human = judged_values(source, io.Given(st.human_qrels, "human_qrels"), st,
                                     v.measures, progress)
    S, M, n = v.values.shape
    plan = Plan(list(st.names), st.base, list(v.measures), st.n_buckets, st.seed, 0,
                human=True)
    sums = PairSums(plan)
    segments = None
    if v.segments is not None:
        segments = v.segments.take(pa.array(np.repeat(np.arange(len(v.segments)),
                                                      np.diff(v.offsets))))
    sums.add(v.ids, v.values.reshape(S * M, n).T, segments,
             Rows(human_ids, np.zeros(len(human_ids), np.int64),
                  human.reshape(S * M, len(human_ids)).T, np.zeros(len(human_ids), bool)))
    return with_sums(c, sums, st)


def with_sums(c: Comparison, sums: PairSums, st: Settings) -> Comparison:
    """``c`` with the prediction-powered columns (:data:`PPI_COLUMNS`) added to its
    tests table and ``c.ppi`` set, from the merged sums of every pair's differences
    (whatever added them: values held in memory, or the partitions of a log); each
    row's p-value corrected across the rows with ``st.correction``."""
    if sums.n_shared < 2:
        example = "" if sums.example is None else f" (e.g. {sums.example!r})"
        raise ValueError(f"human_qrels judge {sums.n_shared} of the {sums.n_queries:,} queries "
                         f"compared{example}, and prediction-powered differences need a human "
                         f"sample of at least 2 of them; do the query ids of the systems' "
                         f"scores and of both qrels match (same spelling, same column)?")
    found = {}
    for seg, group in sums.groups.items():
        estimates = group.estimate(st.confidence, st.ppi).measures.values()
        for (measure, system), e in zip(sums.keys, estimates):
            found[(seg, measure, system)] = e
    rows = c.tests.to_pylist()
    est = [found[(r["segment"], r["measure"], r["system"])] for r in rows]
    p = [normal_p(e.estimate, e.se) for e in est]
    cols = {"ppi_diff": [e.estimate for e in est], "ppi_low": [e.low for e in est],
            "ppi_high": [e.high for e in est], "ppi_se": [e.se for e in est],
            "ppi_lambda": [e.lam for e in est], "ppi_n": [e.n for e in est],
            "ppi_N": [e.N for e in est], "p_ppi": p,
            "p_ppi_adj": [float(x) for x in adjust(np.array(p, np.float64), st.correction)]}
    tests = c.tests
    for name in PPI_COLUMNS:
        kind = pa.int64() if name in ("ppi_n", "ppi_N") else pa.float64()
        tests = tests.append_column(name, pa.array(cols[name], kind))
    c.tests = tests
    method = PPI({}, st.confidence, st.ppi).method
    c.ppi = {"confidence": st.confidence, "ppi": st.ppi, "method": method,
             "assumption": ASSUMPTION, "n_human_only": sums.n_human_only}
    return c
