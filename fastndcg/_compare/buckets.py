"""The bucket methods (``method="buckets"``): resampling hashed buckets of queries.

Above the size up to which per-query values are held, a comparison keeps, per
segment and hashed bucket of queries, exact sums (:mod:`fastndcg._compare.paired`).
The bootstrap resamples buckets, the randomization test flips the signs of whole
buckets' differences, and the t-test and effect size come from the exact sums of
the differences and of their squares (see :mod:`fastndcg.compare`).
"""

from __future__ import annotations

import dataclasses
import math
import sys
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import _kernels as K
from .._arrow import as_numpy, from_numpy
from ..parts import Rows
from . import arguments  # (SCALE_QUERIES read when used: tests lower it)
from .. import _validate as V
from .arguments import WILCOXON_AT_SCALE, Settings
from .comparison import Comparison, TableRows, build
from .paired import Plan, Stats, bucket_key
from .stats import EXACT_MAX, quantiles, t_sf
from .values import Values, check_sizes

__all__ = ["compare_buckets", "bucket_tests", "stats_of_values"]


def compare_buckets(st: Settings, stats: Stats, reports: dict, measures: list, started: float,
                    inputs: tuple, progress: bool) -> Comparison:
    """The Comparison of merged statistics that kept no per-query values: the bucket
    methods (the Wilcoxon test, which needs every value, is not run)."""
    if "wilcoxon" in st.tests:
        if st.tests_named:
            raise V.refuse(ValueError, "tests", st.tests, WILCOXON_AT_SCALE.format(
                why=f"this comparison has {stats.n_queries:,} queries, above the "
                    f"{arguments.SCALE_QUERIES:,} up to which they are held in memory",
                queries=V.spelled("method", repr("queries"), "queries")))
        st = dataclasses.replace(st, tests=tuple(t for t in st.tests if t != "wilcoxon"))
    if progress:
        print(f"resampling {stats.n_buckets:,} buckets of {stats.n_queries:,} queries: "
              f"{st.n_resamples:,} resamples ...", file=sys.stderr, flush=True)
    systems_t, tests_t = bucket_tests(stats, st, measures)
    return build(st, systems_t, tests_t, None, reports, stats.n_left_out, measures,
                 stats.segments != [None], started, inputs, "buckets")


def stats_of_values(v: Values, st: Settings) -> Stats:
    """Bucket statistics of per-query values held in memory (runs against qrels, or a
    log whose queries are scattered, above the query-level size)."""
    S, M, n = v.values.shape
    plan = Plan(list(st.names), st.base, list(v.measures), st.n_buckets, st.seed, 0)
    stats = Stats.empty(plan)
    seg = None
    if v.segments is not None:
        seg = v.segments.take(from_numpy(np.repeat(np.arange(len(v.segments), dtype=np.int64),
                                                   np.diff(v.offsets))))
    rows = Rows(v.ids, np.zeros(n, np.int64), v.values.reshape(S * M, n).T, np.zeros(n, bool),
                None, None if seg is None else {"segment": seg})
    stats.add(rows, bucket_key(st.seed), st.base)
    stats.normalize()
    stats.n_left_out = v.n_left_out
    return stats


def bucket_tests(stats: Stats, st: Settings, measures: list) -> tuple[pa.Table, pa.Table]:
    """The systems and tests tables from bucket statistics: bucket bootstrap
    intervals, the sign-flip test over bucket sums, the t-test on exact sums."""
    S, M = stats.n_sys, stats.n_meas
    C = S * M
    segmented = stats.segments != [None]
    if segmented:
        arr = pa.array(stats.segments, stats.seg_type)
        order = as_numpy(pc.sort_indices(arr)).astype(np.int64)
        segments = arr.take(from_numpy(order))
    else:
        order, segments = np.zeros(1, np.int64), None
    counts = stats.counts[order]
    sizes = counts.sum(axis=1)
    check_sizes(int(sizes.sum()), sizes, segments, None)
    limbs = stats.limbs[order]
    squares = stats.squares[order]
    wtl = stats.wtl[order]
    L = K.FIX_LIMBS
    total = np.ascontiguousarray(limbs.sum(axis=1))  # (G, Q, L): canonical limbs < 2**32
    K.fix_normalize(total.reshape(-1, L))
    scale = Fraction(1, 1 << K.FIX_SHIFT)
    sums = K.fix_to_float(limbs)  # (G, B, Q)
    R = st.n_resamples
    boot = K.bucket_bootstrap(sums, counts.astype(np.float64), R, np.uint64(st.seed))
    dsums = np.ascontiguousarray(sums[:, :, C:])
    null = (K.bucket_signflip(dsums, R, np.uint64(st.seed)) if "randomization" in st.tests
            else None)
    seg_type = segments.type if segments is not None else pa.string()
    rows = TableRows()
    others = [s for s in range(S) if s != st.base]
    for g in range(len(order)):
        n = int(sizes[g])
        seg = None if segments is None else segments[g].as_py()
        for m, measure in enumerate(measures):
            for s in range(S):
                mean = float(K.fix_to_int(total[g, s * M + m]) * scale / n)
                lo, hi = quantiles(boot[g, :, s * M + m], st.confidence)
                rows.add_system(system=st.names[s], segment=seg, measure=measure, n_queries=n,
                                mean=mean, ci_low=float(lo), ci_high=float(hi))
            for j, s in enumerate(others):
                q = j * M + m
                sd_sum = K.fix_to_int(total[g, C + q]) * scale
                sq_sum = K.fix_to_int(squares[g, q]) * scale
                wins, ties, losses = (int(x) for x in wtl[g, q])
                row = _pair_of_sums(n, sd_sum, sq_sum, ties == n, st)
                lo, hi = quantiles(boot[g, :, C + q], st.confidence)
                row.update(system=st.names[s], baseline=st.names[st.base], segment=seg,
                           measure=measure, n_queries=n, ci_low=float(lo), ci_high=float(hi),
                           wins=wins, ties=ties, losses=losses, p_wilcoxon=None,
                           p_randomization=(None if null is None else _bucket_randomization(
                               dsums[g, :, q], counts[g], null[g, :, q], R)))
                rows.add_test(row)
    return rows.tables(st.tests, st.correction, seg_type, segmented)


def _pair_of_sums(n: int, d_sum: Fraction, sq_sum: Fraction, zero: bool, st: Settings) -> dict:
    """Mean difference, effect size and t-test of one pair from exact sums of the
    differences and of their squares (the variance formed exactly, rounded once)."""
    mean = d_sum / n
    var = (sq_sum - d_sum * d_sum / n) / (n - 1)
    var = max(var, Fraction(0))  # squares are rounded per query: never below 0
    sd = math.sqrt(float(var))
    m = float(mean)
    if sd > 0:
        effect = m / sd
        t = m / math.sqrt(float(var / n))
        p_t = min(1.0, 2.0 * t_sf(abs(t), float(n - 1)))
    else:
        effect = 0.0 if m == 0 else math.copysign(math.inf, m)
        p_t = 1.0 if m == 0 else 0.0
    if zero:
        p_t = 1.0
    return dict(mean_diff=m, effect_size=effect, p_t=p_t if "t" in st.tests else None)


def _bucket_randomization(d: np.ndarray, counts: np.ndarray, null: np.ndarray, R: int) -> float:
    """Two-sided p of the sign-flip test over bucket sums of differences: exact over
    all sign patterns of the non-empty buckets when there are at most 2**R of them."""
    d = d[counts > 0]
    obs = abs(float(np.sum(d)))
    tol = 1e-9 * float(np.sum(np.abs(d)))
    if len(d) <= EXACT_MAX and 2 ** len(d) <= R:
        every = K.signflip_exact(np.ascontiguousarray(d)) * len(d)
        return np.count_nonzero(np.abs(every) >= obs - tol) / len(every)
    return (int(np.count_nonzero(np.abs(null) >= obs - tol)) + 1) / (R + 1)
