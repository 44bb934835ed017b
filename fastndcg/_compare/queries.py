"""The query-level methods (``method="queries"``): resampling every query's values.

Percentile bootstrap intervals of each system's mean and of each paired
difference, the sign-flip randomization test (exact over every sign pattern when
there are few), the paired t-test and the Wilcoxon signed-rank test, all on the
:class:`~fastndcg._compare.values.Values` held in memory.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
import pyarrow as pa

from .. import _kernels as K
from .arguments import Settings, check_memory
from .comparison import Comparison, TableRows, build
from .stats import EXACT_MAX, quantiles, ttest_paired, wilcoxon
from .values import Values

__all__ = ["compare_queries", "query_tests"]

def compare_queries(v: Values, st: Settings, started: float, inputs: tuple,
                    progress: bool) -> Comparison:
    """The Comparison of per-query values held in memory, with its per-query table."""
    if progress:  # the evaluations drew their bars; resampling has none, so say what runs
        n_groups = len(v.offsets) - 1
        print(f"resampling {len(v.ids):,} queries"
              + (f" in {n_groups:,} segments" if v.segments is not None else "")
              + f": {st.n_resamples:,} bootstrap"
              + (" and randomization" if "randomization" in st.tests else "")
              + " resamples ...", file=sys.stderr, flush=True)
        resampling = time.perf_counter()
    systems_t, tests_t = query_tests(v, st)
    if progress:
        print(f"resampling done in {time.perf_counter() - resampling:.1f} s", file=sys.stderr,
              flush=True)
    query = st.options.get("query", "query_id")
    cols = {query: v.ids}
    if v.segments is not None:
        code = np.repeat(np.arange(len(v.segments)), np.diff(v.offsets))
        cols["segment"] = v.segments.take(pa.array(code))
    for s, name in enumerate(st.names):
        for m, measure in enumerate(v.measures):
            cols[f"{measure} {name}"] = pa.array(v.values[s, m])
    return build(st, systems_t, tests_t, pa.table(cols), v.reports, v.n_left_out, v.measures,
                 v.segments is not None, started, inputs, "queries")


def query_tests(v: Values, st: Settings) -> tuple[pa.Table, pa.Table]:
    """The systems and tests tables of per-query values: bootstrap intervals over the
    queries, the sign-flip test, the t and Wilcoxon tests."""
    S, M, n = v.values.shape
    G = len(v.offsets) - 1
    check_memory(G, st.n_resamples, S, M)
    flat = v.values.reshape(S * M, n)
    boot = K.bootstrap_means(flat, v.offsets, st.n_resamples, np.uint64(st.seed))  # (G, R, S*M)
    boot = boot.reshape(G, st.n_resamples, S, M)
    others = [s for s in range(S) if s != st.base]
    diffs = np.ascontiguousarray(
        (v.values[others] - v.values[st.base][None]).reshape(len(others) * M, n))
    p_rand = (_randomization(diffs, v.offsets, st.n_resamples, st.seed)
              if "randomization" in st.tests else None)

    seg_type = v.segments.type if v.segments is not None else pa.string()
    rows = TableRows()
    for g in range(G):
        lo, hi = int(v.offsets[g]), int(v.offsets[g + 1])
        seg = None if v.segments is None else v.segments[g].as_py()
        for m, measure in enumerate(v.measures):
            for s in range(S):
                ci_lo, ci_hi = quantiles(boot[g, :, s, m], st.confidence)
                rows.add_system(system=st.names[s], segment=seg, measure=measure,
                                n_queries=hi - lo, mean=float(np.mean(v.values[s, m, lo:hi])),
                                ci_low=float(ci_lo), ci_high=float(ci_hi))
            for j, s in enumerate(others):
                d = diffs[j * M + m, lo:hi]
                row = _pair(d, boot[g, :, s, m] - boot[g, :, st.base, m], st)
                row.update(system=st.names[s], baseline=st.names[st.base], segment=seg,
                           measure=measure, n_queries=hi - lo,
                           p_randomization=None if p_rand is None else float(p_rand[g, j * M + m]))
                rows.add_test(row)
    return rows.tables(st.tests, st.correction, seg_type, v.segments is not None)


def _randomization(diffs: np.ndarray, offsets: np.ndarray, n_resamples: int, seed: int
                   ) -> np.ndarray:
    """Two-sided p-values (G, P) of the sign-flip test of each pair's mean difference."""
    n_groups, n_pairs = len(offsets) - 1, diffs.shape[0]
    sizes = np.diff(offsets)
    p = np.empty((n_groups, n_pairs))
    mc = {g for g in range(n_groups)
          if not (sizes[g] <= EXACT_MAX and 2 ** int(sizes[g]) <= n_resamples)}
    null = None
    if mc:
        null = K.signflip_means(diffs, offsets, n_resamples, np.uint64(seed), K.sign_table())
    for g in range(n_groups):
        lo, hi = offsets[g], offsets[g + 1]
        for q in range(n_pairs):
            d = diffs[q, lo:hi]
            obs = abs(float(np.mean(d)))
            # sums in another order round differently: equal statistics must count
            tol = 1e-9 * float(np.mean(np.abs(d)))
            if g in mc:
                hits = int(np.count_nonzero(np.abs(null[g, :, q]) >= obs - tol))
                p[g, q] = (hits + 1) / (n_resamples + 1)
            else:
                every = K.signflip_exact(np.ascontiguousarray(d))
                p[g, q] = np.count_nonzero(np.abs(every) >= obs - tol) / len(every)
    return p


def _pair(d: np.ndarray, boot_diff: np.ndarray, st: Settings) -> dict:
    """The paired statistics of one system against the baseline on one group."""
    mean = float(np.mean(d))
    sd = float(np.std(d, ddof=1))
    zero = not np.any(d)
    if sd > 0:
        effect = mean / sd
    else:
        effect = 0.0 if mean == 0 else math.copysign(math.inf, mean)
    lo, hi = quantiles(boot_diff, st.confidence)
    out = dict(mean_diff=mean, ci_low=float(lo), ci_high=float(hi), effect_size=effect,
               wins=int(np.count_nonzero(d > 0)), ties=int(np.count_nonzero(d == 0)),
               losses=int(np.count_nonzero(d < 0)))
    out["p_t"] = (1.0 if zero else float(ttest_paired(d)[1])) if "t" in st.tests else None
    out["p_wilcoxon"] = ((1.0 if zero else float(wilcoxon(d)[1]))
                         if "wilcoxon" in st.tests else None)
    return out
