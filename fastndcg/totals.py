"""Exact, mergeable totals of per-query values: :class:`Totals`.

A :class:`Totals` holds, per measure column, the sum of the values and the number
of queries with a value (and, for weighted evaluations, the sums of weight x value
and of weight). Two totals merge by adding (chunks, parts, Dask partitions, Spark
tasks); the means divide the sums exactly and round once, and no finite input
overflows a sum (see :class:`Totals`).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pyarrow as pa

from .measures import GM_FLOOR, summary_of

__all__ = ["Totals"]


@dataclass
class Totals:
    """Mergeable aggregates of per-query NDCG: sums and counts per cutoff.

    ``merge`` adds two together (chunks, parts, Dask partitions); ``mean`` is the
    sum over the queries with a value (NaN, from ``zero_idcg="nan"``, left out),
    weighted by the query weights when the evaluation has them (``wsums`` /
    ``weights``: sums of weight x value and of weight, per cutoff).

    No finite input overflows a sum: each sum is kept as a float times a power of
    two, ``sums * 2**sums_exp`` (and ``wsums * 2**wsums_exp``, ``weights *
    2**weights_exp``), one exponent per cutoff. The exponents stay 0, and the sums
    are the plain float64 sums, while the terms lie within ``2**-64 .. 2**448``;
    beyond that a chunk's terms are divided by a power of two (exact) before they
    are added, and ``merge`` brings two sums to the larger exponent. ``mean``
    divides the two sums exactly and rounds once, so ordinary inputs give the
    very bits a plain ``sum / count`` gives, and weights anywhere from the
    smallest to the largest float still give the weighted mean.

    >>> a = Totals.of(["ndcg@3"], np.array([[0.5], [1.0]]), np.array([False, True]), 7)
    >>> b = Totals.of(["ndcg@3"], np.array([[0.0]]), np.array([False]), 2)
    >>> a.merge(b).mean
    {'ndcg@3': 0.5}
    >>> w = Totals.of(["ndcg@3"], np.array([[0.5], [1.0]]), np.array([False, False]), 2,
    ...               weight=np.array([3.0, 1.0]))
    >>> w.mean
    {'ndcg@3': 0.625}
    >>> huge = Totals.of(["ndcg@3"], np.array([[0.5], [1.0]]), np.array([False, False]), 2,
    ...                  weight=np.array([1e308, 1e308]))
    >>> huge.mean, huge.weights_exp
    ({'ndcg@3': 0.75}, array([1024]))
    """
    names: list[str]
    sums: np.ndarray
    counts: np.ndarray
    n_queries: int = 0
    n_rows: int = 0
    n_zero_idcg: int = 0
    wsums: np.ndarray | None = None
    weights: np.ndarray | None = None
    # the power of two each sum is scaled by, per cutoff (None: 0)
    sums_exp: np.ndarray | None = None
    wsums_exp: np.ndarray | None = None
    weights_exp: np.ndarray | None = None

    @classmethod
    def empty(cls, names: list[str], weighted: bool = False) -> "Totals":
        n = len(names)
        return cls(list(names), np.zeros(n), np.zeros(n, np.int64),
                   wsums=np.zeros(n) if weighted else None,
                   weights=np.zeros(n) if weighted else None)

    @classmethod
    def of(cls, names: list[str], values: np.ndarray, zero: np.ndarray, n_rows: int,
           weight: np.ndarray | None = None, ids: pa.Array | None = None) -> "Totals":
        values = np.asarray(values, np.float64)
        geo = [i for i, s in enumerate(_summaries(names)) if s == "gm"]
        if geo:  # a geometric mean sums logs (trec_eval's floor first); NaN stays NaN
            values = values.copy()
            values[:, geo] = np.log(np.maximum(values[:, geo], GM_FLOOR))
        if weight is None and values.ndim == 2 and values.shape[1] >= 2 \
                and values.flags.c_contiguous:
            # one compiled pass instead of six NumPy passes over the columns (each
            # ~10 ns a value); the sums have NumPy's bits (see column_totals)
            from ._kernels import column_totals

            n_c = values.shape[1]
            clean = np.empty(values.shape)
            sums, counts, big = np.empty(n_c), np.empty(n_c, np.int64), np.empty(n_c)
            if column_totals(values, clean, sums, counts, big) >= 0:
                _check_finite(names, clean, ids)
            e = _exponents(big)
            if e.any():
                sums = np.ldexp(clean, -e).sum(axis=0)
            return cls(list(names), sums, counts, len(values), int(n_rows),
                       int(np.count_nonzero(zero)), None, None, e)
        ok = ~np.isnan(values)
        clean = np.where(ok, values, 0.0)
        _check_finite(names, clean, ids)
        v, sums_exp = _scaled(clean)
        wsums = weights = wsums_exp = weights_exp = None
        if weight is not None:
            w, weights_exp = _scaled(np.where(ok, np.asarray(weight, np.float64)[:, None], 0.0))
            wsums, weights = (v * w).sum(axis=0), w.sum(axis=0)
            wsums_exp = sums_exp + weights_exp
        return cls(list(names), v.sum(axis=0), ok.sum(axis=0), len(values), int(n_rows),
                   int(np.count_nonzero(zero)), wsums, weights, sums_exp, wsums_exp,
                   weights_exp)

    @classmethod
    def of_rows(cls, names: list[str], rows) -> "Totals":
        return cls.of(names, rows.values, rows.zero, 0, rows.weight, rows.ids)

    def _exp(self, which: str) -> np.ndarray:
        e = getattr(self, which + "_exp")
        return np.zeros(len(self.names), np.int64) if e is None else e

    def merge(self, other: "Totals") -> "Totals":
        if self.names != other.names:
            raise ValueError(f"cannot merge totals of {self.names} and {other.names}")
        return self._combine(other, 1.0)

    def subtract(self, other: "Totals") -> "Totals":
        """These totals without those of ``other`` (a subset of their queries)."""
        out = self._combine(other, -1.0)
        out.n_rows = self.n_rows
        return out

    def _combine(self, other: "Totals", sign: float) -> "Totals":
        sums, sums_exp = _plus(self.sums, self._exp("sums"), sign * other.sums,
                               other._exp("sums"))
        wsums = weights = wsums_exp = weights_exp = None
        if self.wsums is not None or (sign > 0 and other.wsums is not None):
            wsums, wsums_exp = _plus(self.wsums, self._exp("wsums"),
                                     None if other.wsums is None else sign * other.wsums,
                                     other._exp("wsums"))
            weights, weights_exp = _plus(self.weights, self._exp("weights"),
                                         None if other.weights is None else sign * other.weights,
                                         other._exp("weights"))
        s = int(sign)
        return Totals(self.names, sums, self.counts + s * other.counts,
                      self.n_queries + s * other.n_queries, self.n_rows + s * other.n_rows,
                      self.n_zero_idcg + s * other.n_zero_idcg, wsums, weights, sums_exp,
                      wsums_exp, weights_exp)

    @property
    def mean(self) -> dict[str, float]:
        """Each column averaged over its queries as its measure is (see
        :func:`fastndcg.measures.summary_of`): the (weighted) mean; for the counts
        (``num_ret``, ``num_rel``, ...) their sum, as trec_eval prints it (never
        weighted); for ``gm_map`` and ``gm_bpref`` trec_eval's geometric mean."""
        if self.wsums is not None:
            out = {n: _quotient(s, es, w, ew) for n, s, es, w, ew in
                   zip(self.names, self.wsums, self._exp("wsums"), self.weights,
                       self._exp("weights"))}
        else:
            out = {n: _quotient(s, es, c, 0)
                   for n, s, es, c in zip(self.names, self.sums, self._exp("sums"), self.counts)}
        for i, (n, how) in enumerate(zip(self.names, _summaries(self.names))):
            if how == "sum":
                out[n] = _quotient(self.sums[i], self._exp("sums")[i], 1, 0) \
                    if self.counts[i] else 0.0
            elif how == "gm":
                out[n] = math.exp(out[n])
        return out


def _summaries(names: list[str]) -> list[str]:
    return [summary_of(n) for n in names]


# A column's terms are summed as they are while its largest |term| lies within
# 2**-_LOW .. 2**_HIGH: a product of two such terms is below 2**896, and 2**63 of
# those below 2**959, so no sum overflows; and the largest weight is not so small
# that its products with values fall among the subnormal floats, which keep fewer
# bits. Beyond, the terms are scaled (see Totals).
_HIGH = 448
_LOW = 64


def _scaled(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x / 2**e, e) per column of x: e is 0 while the column's largest |x| lies
    within 2**-_LOW .. 2**_HIGH, else that one's binary exponent (the scaled terms
    then lie within [-1, 1]). Dividing by a power of two is exact."""
    e = _exponents(np.max(np.abs(x), axis=0, initial=0.0))
    return (np.ldexp(x, -e) if e.any() else x), e


def _exponents(big: np.ndarray) -> np.ndarray:
    """The scaling exponent of each column from its largest |x| (see :func:`_scaled`)."""
    e = np.frexp(big)[1].astype(np.int64)  # 2**(e-1) <= big < 2**e
    return np.where((big > 0) & ((e > _HIGH) | (e <= -_LOW)), e, 0)


def _plus(a, ea, b, eb):
    """The sum of a * 2**ea and b * 2**eb (per cutoff) as (sum, exponent); a None
    side adds nothing."""
    if a is None:
        return b, (None if b is None else eb)
    if b is None:
        return a, ea
    if np.array_equal(ea, eb):
        return a + b, ea
    # at the larger exponent of the two (a zero sum has no say): the smaller
    # one is divided by a power of two, so neither grows
    e = np.where(a == 0, eb, np.where(b == 0, ea, np.maximum(ea, eb)))
    return np.ldexp(a, ea - e) + np.ldexp(b, eb - e), e


def _quotient(num, num_exp, den, den_exp) -> float:
    """num * 2**num_exp / (den * 2**den_exp) rounded once to the nearest float64
    (for exponents 0 the very bits of ``num / den``); NaN when den is 0."""
    if not den:
        return math.nan
    if not num:  # 0 (or -0.0, as num / den gives it)
        return float(num) / float(den)
    q = Fraction(float(num)) / Fraction(den.item() if isinstance(den, np.generic) else den)
    shift = int(num_exp) - int(den_exp)
    q = q * (1 << shift) if shift >= 0 else q / (1 << -shift)
    try:
        return float(q)
    except OverflowError:  # a mean lies within its values: only rounding of the sums
        return math.copysign(sys.float_info.max, q)  # can carry it past the largest float


def _check_finite(names: list[str], values: np.ndarray, ids: pa.Array | None) -> None:
    """A per-query value that overflowed float64 (an NDCG whose DCG is far larger
    than its IDCG) has no mean: an error naming it, never an inf or NaN mean."""
    bad = ~np.isfinite(values)
    if not bad.any():
        return
    q, c = (int(i) for i in np.argwhere(bad)[0])
    who = f"query {ids[q].as_py()!r}" if ids is not None else f"the query at position {q}"
    n = int(bad[:, c].sum())
    more = f" ({n:,} queries are like this)" if n > 1 else ""
    raise ValueError(f"{names[c]} of {who} is {float(values[q, c])!r} in float64: its exact "
                     f"value lies beyond float64's range, so no mean of {names[c]} can be "
                     f"given{more}; bring the labels into a narrower range (rescale them, or "
                     f"pass negative_labels='zero')")
