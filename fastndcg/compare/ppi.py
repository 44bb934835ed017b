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
import pyarrow.compute as pc

from ..ppi import ASSUMPTION, PPI, Sums
from .arguments import Settings
from .comparison import Comparison
from .stats import adjust
from .values import Values, judged_values

__all__ = ["with_ppi", "PPI_COLUMNS", "normal_p"]

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


def with_ppi(c: Comparison, v: Values, st: Settings, progress: bool) -> Comparison:
    """``c`` with the prediction-powered columns (:data:`PPI_COLUMNS`) added to its
    tests table and ``c.ppi`` set: every run is evaluated against
    ``st.human_qrels`` and its per-query values lined up with ``v`` (the LLM's)."""
    try:
        human_ids, human = judged_values(st.human_qrels, st, v.measures, progress)
    except ValueError as err:  # say which judgments the message is about
        raise ValueError(f"human_qrels: {err}") from err
    ids, hids = v.ids, human_ids
    if ids.type != hids.type:
        ids, hids = ids.cast(pa.large_string()), hids.cast(pa.large_string())
    where = pc.index_in(ids, value_set=hids)
    labelled = where.is_valid().to_numpy(zero_copy_only=False)
    shared = int(labelled.sum())
    if shared < 2:
        example = "" if not len(human_ids) else f" (e.g. {human_ids[0].as_py()!r})"
        raise ValueError(f"human_qrels judge {shared} of the {len(v.ids):,} queries compared"
                         f"{example}, and prediction-powered differences need a human sample "
                         f"of at least 2 of them; do the query ids of the runs and of both "
                         f"qrels match (same spelling, same column)?")
    pos = where.fill_null(0).to_numpy(zero_copy_only=False)
    S, M, _ = v.values.shape
    others = [s for s in range(S) if s != st.base]
    found = {}
    for g in range(len(v.offsets) - 1):
        lo, hi = int(v.offsets[g]), int(v.offsets[g + 1])
        seg = None if v.segments is None else v.segments[g].as_py()
        keys, llm, hum = [], [], []
        for m, measure in enumerate(v.measures):
            for s in others:
                keys.append((seg, measure, st.names[s]))
                llm.append(v.values[s, m, lo:hi] - v.values[st.base, m, lo:hi])
                hum.append(human[s, m, pos[lo:hi]] - human[st.base, m, pos[lo:hi]])
        names = [f"{measure} {system} - {st.names[st.base]}"
                 + ("" if seg is None else f" (segment {seg!r})") for seg, measure, system in keys]
        sums = Sums.empty(names)
        sums.add(np.stack(llm, axis=1), np.stack(hum, axis=1), labelled[lo:hi])
        for key, e in zip(keys, sums.estimate(st.confidence, st.ppi).measures.values()):
            found[key] = e
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
             "assumption": ASSUMPTION, "n_human_only": len(human_ids) - shared}
    return c
