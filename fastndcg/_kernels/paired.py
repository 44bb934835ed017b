"""Mergeable paired statistics: fixed-point sums per hashed bucket of queries, and
resampling over buckets.

**Fixed-point sums.** Every term is turned into an integer multiple of
``2**-FIX_SHIFT`` (exact for any float64 of magnitude at least ``2**-171``; smaller
ones are rounded to the nearest multiple, the same way wherever they are added) and
added into ``FIX_LIMBS`` int64 limbs of 32 bits each. Integer addition is
associative, so the sums are the same bits whatever the order of the queries, the
partitioning, the batch size or the thread count; :func:`fix_normalize` puts them in
one canonical form (limbs ``0 .. FIX_LIMBS-2`` in ``[0, 2**32)``, the sign in the
last), and :func:`fix_to_float` reads them. Each limb takes at most ``2**32`` per
term, so ``2**31`` terms fit between normalisations.

**Buckets.** A query's bucket is ``mix(hash(query id) ^ key(seed)) mod n_buckets``:
the same on every path, and independent of the values, so bucket sums are
independent, identically distributed units for the bootstrap.
"""

from __future__ import annotations

import math

import numpy as np
from numba import uint64

from ._jit import kernel
from .hashing import mix64
from .resample import GOLDEN, _below, _key, _over_jobs

FIX_LIMBS = 11
FIX_SHIFT = 224   # bit 0 of limb 0 weighs 2**-224
FIX_MAX_EXP = 90  # terms must lie below 2**90 in magnitude
_LOW = np.int64(0xFFFFFFFF)

_STREAM_BUCKET_BOOT = np.uint64(0xB0C4E7)
_STREAM_BUCKET_FLIP = np.uint64(0xF11B0C)


@kernel(inner=True)
def _fix_add(acc, x):
    """acc (FIX_LIMBS,) int64 += x as a fixed-point integer; False when |x| is too
    large or not finite."""
    if x == 0.0:
        return True
    if not (abs(x) < 2.0 ** FIX_MAX_EXP):
        return False
    m, e = math.frexp(abs(x))
    mi = np.int64(math.ldexp(m, 53))  # |x| = mi * 2**(e - 53), mi < 2**53
    p = e - 53 + FIX_SHIFT            # bit position of mi's lowest bit
    if p < 0:
        r = -p
        if r > 60:
            return True
        mi = (mi + (np.int64(1) << (r - 1))) >> r
        p = 0
    s = np.int64(1) if x > 0 else np.int64(-1)
    limb = p >> 5
    sh = p & 31
    a = (mi & _LOW) << sh
    b = (mi >> 32) << sh
    acc[limb] += s * (a & _LOW)
    acc[limb + 1] += s * ((a >> 32) + (b & _LOW))
    acc[limb + 2] += s * (b >> 32)
    return True


@kernel
def bucket_sums(values, group, hashes, key, n_buckets, n_sys, base, limbs, counts, squares,
                wtl):
    """Add one chunk of queries into the statistics; returns -1, or the row of the
    first value too large for the sums.

    values : (n, S * M) float64, column s * M + m: system s, measure m (no NaN).
    group : (n,) int64 the group (segment) of each query; hashes : (n,) uint64 its id hash.
    key : uint64 seeded bucket key; n_sys : S; base : the baseline system.
    limbs : (G, B, Q, FIX_LIMBS) int64 with Q = S * M + P * M (P = S - 1 pairs):
        per bucket, the sum of each column, then of each pair's differences
        (pair j, measure m at S * M + j * M + m; pairs are the other systems in order).
    counts : (G, B) int64 queries per bucket.
    squares : (G, P * M, FIX_LIMBS) int64 sums of squared differences per group.
    wtl : (G, P * M, 3) int64 wins, ties and losses per group.
    """
    n, c = values.shape
    n_meas = c // n_sys
    nb = uint64(n_buckets)
    for i in range(n):
        g = group[i]
        b = np.int64(mix64(hashes[i] ^ key) % nb)
        counts[g, b] += 1
        for col in range(c):
            if not _fix_add(limbs[g, b, col], values[i, col]):
                return i
        j = 0
        for s in range(n_sys):
            if s == base:
                continue
            for m in range(n_meas):
                d = values[i, s * n_meas + m] - values[i, base * n_meas + m]
                q = j * n_meas + m
                if not _fix_add(limbs[g, b, c + q], d):
                    return i
                if not _fix_add(squares[g, q], d * d):
                    return i
                if d > 0:
                    wtl[g, q, 0] += 1
                elif d == 0:
                    wtl[g, q, 1] += 1
                else:
                    wtl[g, q, 2] += 1
            j += 1
    return -1


@kernel(inner=True)
def _two_product(a, b):
    """(p, e): p = a * b rounded, e = a * b - p exactly (Dekker's product, without
    a fused multiply-add; exact while nothing overflows)."""
    p = a * b
    c = 134217729.0 * a  # 2**27 + 1: splits a into two halves of 26 bits
    ah = c - (c - a)
    al = a - ah
    c = 134217729.0 * b
    bh = c - (c - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


@kernel
def fix_dot(a, b, limbs):
    """limbs[c] += the exact sum over rows i of a[i, c] * b[i, c], each product added
    as its rounded value and its rounding error (so sums of squares and of products
    are exact, as sums of single values are); returns -1, or the row of the first
    product too large for the sums (2**90 or more).

    a, b : (n, C) float64 (finite); limbs : (C, FIX_LIMBS) int64, normalised after
    by :func:`fix_normalize`. At most 2**30 rows between normalisations.
    """
    n, c = a.shape
    for i in range(n):
        for col in range(c):
            p, e = _two_product(a[i, col], b[i, col])
            if not _fix_add(limbs[col], p):
                return i
            _fix_add(limbs[col], e)
    return -1


@kernel
def fix_normalize(limbs):
    """Carry every row of (N, FIX_LIMBS) limbs into the canonical form, in place."""
    for r in range(limbs.shape[0]):
        carry = np.int64(0)
        for t in range(FIX_LIMBS - 1):
            v = limbs[r, t] + carry
            carry = v >> 32  # floor division by 2**32 (arithmetic shift)
            limbs[r, t] = v & _LOW
        limbs[r, FIX_LIMBS - 1] += carry


def fix_to_float(limbs: np.ndarray) -> np.ndarray:
    """The float64 nearest (to within an ulp) each canonical row of (..., FIX_LIMBS)
    limbs; a function of the limbs alone, so equal sums give equal bits."""
    out = np.zeros(limbs.shape[:-1])
    for t in range(FIX_LIMBS - 1, -1, -1):
        out = out + np.ldexp(limbs[..., t].astype(np.float64), 32 * t - FIX_SHIFT)
    return out


def fix_to_int(row: np.ndarray) -> int:
    """A row of limbs as the exact integer it holds (value * 2**FIX_SHIFT)."""
    return sum(int(x) << (32 * t) for t, x in enumerate(row))


def bucket_bootstrap(sums, counts, n_resamples, seed):
    """(G, R, Q): for resample r of group g, n_buckets buckets drawn with replacement
    (uniformly, from resample r's own counter-based stream), sum of column q over the
    drawn buckets / their queries. NaN when every drawn bucket is empty."""
    n_groups = sums.shape[0]
    out = np.empty((n_groups, n_resamples, sums.shape[2]))
    _over_jobs(n_groups * n_resamples, lambda j0, j1: _bucket_boot_jobs(
        j0, j1, sums, counts, n_resamples, uint64(seed), out))
    return out


@kernel
def _bucket_boot_jobs(j0, j1, sums, counts, n_resamples, s, out):
    nb = sums.shape[1]
    nq = sums.shape[2]
    acc = np.zeros(nq)
    for job in range(j0, j1):
        g = job // n_resamples
        r = job - g * n_resamples
        key = _key(s, _STREAM_BUCKET_BOOT, g, r)
        acc[:] = 0.0
        n = 0.0
        for t in range(nb):
            j = np.int64(_below(mix64(key + uint64(t) * GOLDEN), uint64(nb)))
            n += counts[g, j]
            for q in range(nq):
                acc[q] += sums[g, j, q]
        for q in range(nq):
            out[g, r, q] = acc[q] / n if n > 0 else np.nan


def bucket_signflip(dsums, n_resamples, seed):
    """(G, R, P): the sum over buckets of each bucket's difference sum times a random
    sign (bucket b's sign is bit b of resample r's stream), every pair sharing the signs."""
    n_groups = dsums.shape[0]
    out = np.empty((n_groups, n_resamples, dsums.shape[2]))
    _over_jobs(n_groups * n_resamples, lambda j0, j1: _bucket_flip_jobs(
        j0, j1, dsums, n_resamples, uint64(seed), out))
    return out


@kernel
def _bucket_flip_jobs(j0, j1, dsums, n_resamples, s, out):
    nb = dsums.shape[1]
    npairs = dsums.shape[2]
    for job in range(j0, j1):
        g = job // n_resamples
        r = job - g * n_resamples
        key = _key(s, _STREAM_BUCKET_FLIP, g, r)
        for p in range(npairs):
            out[g, r, p] = 0.0
        bits = uint64(0)
        for t in range(nb):
            if t % 64 == 0:
                bits = mix64(key + uint64(t // 64) * GOLDEN)
            positive = (bits >> uint64(t % 64)) & uint64(1)
            for p in range(npairs):
                if positive:
                    out[g, r, p] += dsums[g, t, p]
                else:
                    out[g, r, p] -= dsums[g, t, p]
