"""Statistics of paired comparisons of two rankers: paired t-test, Wilcoxon signed-rank
test, multiple-comparison corrections and percentile intervals.

Everything here uses NumPy and the standard ``math`` module only. SciPy is a large
import and is not a run-time dependency of fastndcg, so the few special functions
needed are written out: Student's t tail through the regularized incomplete beta
function (the continued fraction of DiDonato & Morris, with a cancellation-free log
Beta for large df), the normal tail through ``math.erfc``, and the Wilcoxon null
distribution by counting subsets. The results equal ``scipy.stats.ttest_rel`` and
``scipy.stats.wilcoxon`` (SciPy 1.17, default arguments) to about 1e-13 relative,
including SciPy's choice of exact, permutation or normal method; tests/test_stats.py
checks that against SciPy.

The functions take already validated float64 arrays of per-query differences and never
raise on degenerate input: they return NaN where SciPy returns NaN.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

__all__ = ["CORRECTIONS", "EXACT_MAX", "adjust", "quantiles", "t_sf", "ttest_paired",
           "wilcoxon"]

CORRECTIONS = ("holm", "bonferroni", "bh", "none")
EXACT_MAX = 20  # exact randomization tests enumerate at most 2**20 sign patterns

_LOG_SQRT_PI = 0.5 * math.log(math.pi)  # log Gamma(1/2)
_SQRT1_2 = 0.7071067811865476  # 1/sqrt(2), as SciPy's ndtr scales its argument
_EPS = 1e-15  # continued-fraction stopping tolerance (relative change of one step)
_MAX_ITER = 10_000  # a guard; the t distribution needs at most ~150 steps

# SciPy's method="auto" thresholds (scipy/stats/_wilcoxon.py)
_WILCOXON_EXACT_MAX_N = 50  # n (zeros included) above this -> normal approximation
_WILCOXON_PERMUTATION_MAX_N = 13  # with ties or zeros: 2**n sign patterns enumerated


# --------------------------------------------------------------------------------------
# Student's t tail


def _log_gamma_ratio_half(a: float) -> float:
    """log(Gamma(a + 1/2) / Gamma(a)) for a > 0, accurate to ~1e-16 absolute.

    For large a the two lgamma values are huge and nearly equal (a = 5e7: ~8e8), so
    their difference would lose ~9 digits; the asymptotic series
    0.5 log a + sum_n [B_n(1/2) - B_n(0)] / (n (n-1) a^(n-1)) has no cancellation.
    Its first omitted term is below 2e-17 for a >= 20.
    """
    if a >= 20.0:
        r = 1.0 / a
        r2 = r * r
        # coefficients of a^-1, a^-3, ..., a^-9 (Bernoulli polynomials at 1/2 and 0)
        series = r * (-1.0 / 8 + r2 * (1.0 / 192 + r2 * (-1.0 / 640 + r2 * (
            17.0 / 14336 + r2 * (-31.0 / 18432)))))
        return 0.5 * math.log(a) + series
    # small a: lgamma <= lgamma(20.5) ~ 40, so the difference keeps ~14-15 digits
    return math.lgamma(a + 0.5) - math.lgamma(a)


def _log_beta(a: float, b: float) -> float:
    """log B(a, b); exact-cancellation-free when one argument is 1/2 (the t case)."""
    if b == 0.5:
        return _LOG_SQRT_PI - _log_gamma_ratio_half(a)
    if a == 0.5:
        return _LOG_SQRT_PI - _log_gamma_ratio_half(b)
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _bfrac(a: float, b: float, x: float, y: float, lam: float) -> float:
    """Continued fraction for I_x(a, b) / (x^a y^b / B(a, b)), for lam >= 0.

    The form of DiDonato & Morris (1992, ACM TOMS 708, BFRAC): every partial
    denominator is built from lam = a - (a + b) x, which the caller computes from y when
    x is near 1, so no step subtracts nearly equal numbers. (The textbook Lentz form
    starts with 1 - (a + b) x / (a + 1); for df = 1e8 and x = 1 - 4e-8 that alone
    costs 9 digits.) It converges in at most ~150 steps for the t distribution, any df.
    """
    c = lam + 1.0
    c0 = b / a
    c1 = 1.0 / a + 1.0
    yp1 = y + 1.0
    n = 0.0
    p = 1.0
    s = a + 1.0
    an = 0.0
    bn = 1.0
    anp1 = 1.0
    bnp1 = c / c1
    r = c1 / c
    for _ in range(_MAX_ITER):
        n += 1.0
        t = n / a
        w = n * (b - n) * x
        e = a / s
        alpha = p * (p + c0) * e * e * (w * x)
        e = (t + 1.0) / (c1 + t + t)
        beta = n + w / s + e * (c + n * yp1)
        p = t + 1.0
        s += 2.0
        # three-term recurrence for numerator and denominator, rescaled every step
        t = alpha * an + beta * anp1
        an = anp1
        anp1 = t
        t = alpha * bn + beta * bnp1
        bn = bnp1
        bnp1 = t
        r0 = r
        r = anp1 / bnp1
        if abs(r - r0) <= _EPS * r:
            break
        an /= bnp1
        bn /= bnp1
        anp1 = r
        bnp1 = 1.0
    return r


def _betainc(a: float, b: float, x: float, y: float, log_x: float, log_y: float) -> float:
    """Regularized incomplete beta I_x(a, b) with y = 1 - x.

    x, y and their logarithms are passed separately so that callers can supply them
    without rounding (for the t distribution x is often within 1e-8 of 1, and x itself
    may underflow while log x is finite).
    """
    if log_x == -math.inf:
        return 0.0
    if log_y == -math.inf:
        return 1.0
    # x^a y^b / B(a, b), in logs: x^a alone may underflow where the product does not
    front = math.exp(a * log_x + b * log_y - _log_beta(a, b))
    lam = (a + b) * y - b if a > b else a - (a + b) * x  # the form without cancellation
    if lam >= 0.0:
        return front * _bfrac(a, b, x, y, lam)
    # the fraction is well conditioned on the other side: I_x(a,b) = 1 - I_y(b,a)
    return 1.0 - front * _bfrac(b, a, y, x, -lam)


def _t_two_sided(t: float, df: float) -> float:
    """P(|T| > |t|) = I_x(df/2, 1/2) with x = df / (df + t^2); t, df finite, df > 0."""
    if t == 0.0:
        return 1.0
    at = abs(t)
    u2 = (at * at) / df  # t^2 / df
    if u2 == 0.0:  # |t| below ~1e-154 sqrt(df): the tail is 1 to the last bit
        return 1.0
    if math.isfinite(u2):
        # x = 1/(1+u2) and y = u2/(1+u2), with logs via log1p (x is ~1 for large df)
        x = 1.0 / (1.0 + u2)
        log_x = -math.log1p(u2)
        if u2 < 1.0:
            y = u2 / (1.0 + u2)
            log_y = math.log(u2) - math.log1p(u2)
        else:
            y = 1.0 / (1.0 + 1.0 / u2)
            log_y = -math.log1p(1.0 / u2)
    else:  # t^2/df overflows: work with log(t^2/df) instead
        log_u2 = 2.0 * math.log(at) - math.log(df)
        log_x = -log_u2  # - log1p(1/u2), far below one ulp of log_u2
        x = math.exp(log_x)
        y = 1.0
        log_y = -x
    return _betainc(0.5 * df, 0.5, x, y, log_x, log_y)


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with df > 0 degrees of freedom (t may be +-inf).

    Relative accuracy ~1e-13 over the whole range (df from below 1 to 1e8 and beyond,
    tails down to the float64 underflow at ~1e-308), measured against 50-digit
    arithmetic. NaN for NaN input or df <= 0; df = inf is the normal distribution.
    (SciPy's own df = 1 tail is off by up to ~5e-9 relative for 1e-11 < |t| < 1e-6;
    this one follows the closed form 1/2 - atan(t)/pi there.)

    >>> t_sf(0.0, 5.0)
    0.5
    >>> abs(t_sf(2.0, 1.0) - (0.5 - math.atan(2.0) / math.pi)) < 1e-15  # Cauchy
    True
    >>> t_sf(-math.inf, 3.0), t_sf(math.inf, 3.0)
    (1.0, 0.0)
    """
    t = float(t)
    df = float(df)
    if math.isnan(t) or math.isnan(df) or df <= 0.0:
        return math.nan
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    if math.isinf(df):
        return 0.5 * math.erfc(t * _SQRT1_2)
    half = 0.5 * _t_two_sided(t, df)
    return half if t >= 0.0 else 1.0 - half


# --------------------------------------------------------------------------------------
# paired t-test


def ttest_paired(d: np.ndarray) -> tuple[float, float]:
    """(t statistic, two-sided p) of the paired t-test on differences d = x - y.

    Equals ``scipy.stats.ttest_rel(x, y)``, including its NaN results: n < 2 or all
    differences zero give (nan, nan); exactly constant nonzero differences give
    (+-inf, 0.0). The mean and variance are computed with the same NumPy operations as
    SciPy, so nearly constant differences (0.1 three times has a variance of ~1e-34
    after rounding) give SciPy's huge finite t, not inf.

    >>> t, p = ttest_paired(np.array([0.5, 1.5, 1.0, 2.0]))
    >>> round(t, 10), round(p, 10)
    (3.8729833462, 0.0304662917)
    >>> ttest_paired(np.zeros(3))
    (nan, nan)
    """
    d = np.asarray(d, dtype=np.float64).ravel()
    n = d.shape[0]
    if n == 0:
        return math.nan, math.nan
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # same operation sequence as scipy.stats.ttest_1samp(d, 0.0)
        mean = np.mean(d)
        var = np.mean((d - mean) ** 2)
        nf = np.float64(n)
        var = var * (nf / (nf - 1.0))
        denom = np.sqrt(var / nf)
        t = float(np.divide(mean, denom))
    if math.isnan(t) or n < 2:
        return math.nan, math.nan
    if math.isinf(t):
        return t, 0.0
    return t, _t_two_sided(t, float(n - 1))


# --------------------------------------------------------------------------------------
# Wilcoxon signed-rank test


@lru_cache(maxsize=64)
def _wilcoxon_counts(n: int) -> np.ndarray:
    """Number of subsets of {1..n} with each rank sum 0..n(n+1)/2 (exact integers;
    at most 2**50 for n <= 50, so int64 holds them)."""
    counts = np.zeros(n * (n + 1) // 2 + 1, dtype=np.int64)
    counts[0] = 1
    top = 0
    for k in range(1, n + 1):
        # adding rank k: every subset either leaves it out or shifts its sum by k
        counts[k:top + k + 1] += counts[:top + 1].copy()
        top += k
    counts.setflags(write=False)
    return counts


def _wilcoxon_exact_p(r_plus: float, n: int) -> float:
    """Two-sided exact p for n distinct nonzero differences, as SciPy forms it:
    2 * min(sf(floor r), cdf(ceil r)) clipped to 1. The counts are multiples of
    2**-n with n <= 50, so SciPy's float64 sums are exact and so is this."""
    counts = _wilcoxon_counts(n)
    lo = int(math.ceil(r_plus))
    hi = int(math.floor(r_plus))
    cdf = int(counts[:lo + 1].sum())
    sf = int(counts[hi:].sum())
    return min(1.0, 2 * min(cdf, sf) / 2.0 ** n)


def _wilcoxon_permutation_p(ranks: np.ndarray, r_plus: float) -> float:
    """SciPy's method="auto" for n <= 13 with ties or zeros: an exact permutation test
    over all sign patterns of the nonzero differences (zeros never move the statistic,
    so their 2**n_zero copies of each pattern cancel out of the ratio)."""
    m = ranks.shape[0]
    if m == 0:
        # every pattern has r_plus = 0 = observed: both tails are 1, p = min(1, 2)
        return 1.0
    signs = (np.arange(2 ** m)[:, None] >> np.arange(m)[None, :]) & 1
    null = signs @ ranks  # half-integer sums: exact in float64
    # SciPy compares with a relative tolerance of 100 eps; the null values are
    # multiples of 1/2, so exact comparisons are the same thing
    less = np.count_nonzero(null <= r_plus)
    greater = np.count_nonzero(null >= r_plus)
    return min(1.0, 2 * min(less, greater) / 2.0 ** m)


def wilcoxon(d: np.ndarray) -> tuple[float, float]:
    """(statistic, two-sided p) of the Wilcoxon signed-rank test on differences d.

    Equals ``scipy.stats.wilcoxon(d)`` with its defaults (zero_method="wilcox": zeros
    dropped from the ranking; correction=False; method="auto"; two-sided). The statistic
    is min(R+, R-) over average ranks of |d|. SciPy's "auto" choice, with n counting the
    zeros: n > 50 -> normal approximation with tie-corrected variance; no ties and no
    zeros -> exact null distribution; n <= 13 -> exact permutation test over all sign
    patterns; otherwise the normal approximation.

    Degenerate input follows SciPy: all differences zero give p = 1.0 for n <= 13 (the
    permutation test) and p = nan above (zero variance); an empty array or any NaN gives
    (nan, nan). SciPy raises for the single difference 0.0; this returns (0.0, 1.0),
    the permutation test's answer.

    >>> wilcoxon(np.array([1.0, 2.0, -3.0, 4.0, 5.0]))  # exact
    (3.0, 0.3125)
    >>> wilcoxon(np.array([0.0, 1.0, 1.0, -2.0]))  # zero and ties: permutation test
    (3.0, 1.0)
    """
    d = np.asarray(d, dtype=np.float64).ravel()
    n = d.shape[0]
    if n == 0 or np.isnan(d).any():
        return math.nan, math.nan
    nonzero = d[d != 0.0]
    m = nonzero.shape[0]
    n_zero = n - m

    # average ranks of |d| over the nonzero differences (scipy's rankdata 'average')
    a = np.abs(nonzero)
    # any sort order will do (tied values get their group's average rank), and the
    # default introsort is SIMD-accelerated: ~5x faster than a stable sort at 1e6
    order = np.argsort(a)
    a_sorted = a[order]
    starts = np.flatnonzero(np.r_[True, a_sorted[1:] != a_sorted[:-1]]) if m else \
        np.zeros(0, dtype=np.intp)
    counts = np.diff(np.r_[starts, m])
    group_rank = starts + 1.0 + (counts - 1.0) / 2.0
    ranks_sorted = np.repeat(group_rank, counts)
    positive_sorted = nonzero[order] > 0.0
    # half-integer sums below 2**52: exact whatever the summation order
    r_plus = float(ranks_sorted[positive_sorted].sum())
    r_minus = m * (m + 1) / 2.0 - r_plus
    statistic = min(r_plus, r_minus)
    has_ties = counts.shape[0] < m

    if n <= _WILCOXON_EXACT_MAX_N and not has_ties and n_zero == 0:
        return statistic, _wilcoxon_exact_p(r_plus, m)
    if n <= _WILCOXON_PERMUTATION_MAX_N:
        # ranks in the original order do not matter for the sign-flip null: use sorted
        return statistic, _wilcoxon_permutation_p(ranks_sorted, r_plus)

    # normal approximation, same float operations as SciPy
    count = float(m)
    mn = count * (count + 1.0) * 0.25
    se = count * (count + 1.0) * (2.0 * count + 1.0)
    cf = counts.astype(np.float64)
    tie_correct = float(np.sum(cf ** 3 - cf))
    se = math.sqrt((se - tie_correct / 2.0) / 24.0)
    if se == 0.0:  # no nonzero difference left: SciPy's 0/0
        return statistic, math.nan
    z = (r_plus - mn) / se
    # 2 * ndtr(-|z|) = erfc(|z| / sqrt(2)), the tail without cancellation
    return statistic, math.erfc(abs(z) * _SQRT1_2)


# --------------------------------------------------------------------------------------
# multiple comparisons


def adjust(p: np.ndarray, method: str) -> np.ndarray:
    """p-values corrected for multiple comparisons across the whole array.

    method: "holm" (step-down, Holm 1979), "bonferroni", "bh" (Benjamini-Hochberg
    step-up FDR, as statsmodels' "fdr_bh") or "none" (a copy). Results are clipped to
    1 and keep the input's shape; NaN entries stay NaN and do not count in the family
    size.

    >>> adjust(np.array([0.01, 0.04, 0.03, np.nan]), "holm")
    array([0.03, 0.06, 0.06,  nan])
    >>> adjust(np.array([0.01, 0.04, 0.03]), "bh")
    array([0.03, 0.04, 0.04])
    """
    if method not in CORRECTIONS:
        raise ValueError(
            f"correction must be one of {', '.join(map(repr, CORRECTIONS))}; "
            f"got {method!r}")
    p = np.array(p, dtype=np.float64)  # a copy: the input is never modified
    shape = p.shape
    flat = p.ravel()
    out = flat.copy()
    if method == "none":
        return out.reshape(shape)
    valid = np.flatnonzero(~np.isnan(flat))
    m = valid.shape[0]
    if m == 0:
        return out.reshape(shape)
    pv = flat[valid]
    if method == "bonferroni":
        out[valid] = np.minimum(pv * m, 1.0)
        return out.reshape(shape)
    order = np.argsort(pv, kind="stable")
    ps = pv[order]
    rank = np.arange(1, m + 1, dtype=np.float64)
    if method == "holm":
        # (m - i + 1) p_(i), made non-decreasing from the smallest p upwards
        adj = np.maximum.accumulate((m - rank + 1.0) * ps)
    else:  # "bh"
        # m p_(i) / i, made non-decreasing by taking the minimum from the largest p down;
        # written p / (i / m) as statsmodels does, so the largest p stays exactly p
        adj = np.minimum.accumulate((ps / (rank / m))[::-1])[::-1]
    adj = np.minimum(adj, 1.0)
    result = np.empty(m)
    result[order] = adj
    out[valid] = result
    return out.reshape(shape)


# --------------------------------------------------------------------------------------
# Percentile intervals


def quantiles(x: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval along the last axis (linear interpolation, as
    scipy.stats.bootstrap's percentile method).

    >>> lo, hi = quantiles(np.arange(5.0), 0.5)
    >>> float(lo), float(hi)
    (1.0, 3.0)
    """
    a = (1 - confidence) / 2
    lo, hi = np.quantile(x, [a, 1 - a], axis=-1)
    return lo, hi
