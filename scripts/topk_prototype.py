#!/usr/bin/env python
"""A measured prototype of the top-k selection of the short path, per shape.

The kernel's :func:`fastndcg._kernels.rank.rank_short` (the top m positions kept by
insertion, compared through ``scores[pos]``, the m-th value in a register) against
a variant that keeps the selected values in the buffer beside their positions.
Both leave the same ranked summary (checked), on lists of n rows (17 and more: shorter
lists take the counting path), cuts k, float32 and float64 scores, with and without
ties. One thread, medians of 5, ns a row:

    python scripts/topk_prototype.py

docs/performance.md gives the figures of 2026-12-01 and what was decided.
"""
import statistics
import time

import numpy as np
from numba import njit

from fastndcg._kernels import rank as R
from fastndcg._kernels.bundles import ShortScratch
from fastndcg._kernels.codes import AVERAGE, LINEAR

@njit(nogil=True, cache=False)
def cur(offsets, scores, labels, m0, table, pos, gsize, ggain, out):
    for q in range(len(offsets) - 1):
        lo = offsets[q]; n = offsets[q + 1] - lo; m = min(m0, n)
        R.rank_short(lo, n, m, scores, labels, AVERAGE, LINEAR, table, ShortScratch(pos, gsize, ggain))
        out[q] = ggain[0] + gsize[0]

@njit(nogil=True, cache=False)
def vbuf(offsets, scores, labels, m0, table, pos, top, gsize, ggain, out):
    for q in range(len(offsets) - 1):
        lo = offsets[q]; n = offsets[q + 1] - lo; m = min(m0, n)
        for i in range(m):
            x = scores[lo + i]
            j = i
            while j > 0 and top[j - 1] < x:
                top[j] = top[j - 1]; pos[j] = pos[j - 1]; j -= 1
            top[j] = x; pos[j] = i
        cut = top[m - 1]
        extra = 0; xgain = 0.0
        for i in range(m, n):
            x = scores[lo + i]
            if x > cut:
                outp = pos[m - 1]
                j = m - 1
                while j > 0 and top[j - 1] < x:
                    top[j] = top[j - 1]; pos[j] = pos[j - 1]; j -= 1
                top[j] = x; pos[j] = i
                new = top[m - 1]
                if new == cut:
                    extra += 1; xgain += float(labels[lo + outp])
                else:
                    extra = 0; xgain = 0.0
                cut = new
            elif x == cut:
                extra += 1; xgain += float(labels[lo + i])
        r = 0
        while r < m:
            x = top[r]
            total = float(labels[lo + pos[r]])
            e = r + 1
            while e < m and top[e] == x:
                total += float(labels[lo + pos[e]]); e += 1
            size = e - r
            if e == m:
                size += extra; total += xgain
            gsize[r] = size; ggain[r] = total
            r = e
        out[q] = ggain[0] + gsize[0]

def run(n, m, dt, ties, rows=4_000_000):
    rng = np.random.default_rng(1)
    nq = max(1, rows // n)
    s = rng.uniform(0, 1, nq * n)
    if ties: s = np.round(s * 8) / 8
    s = s.astype(dt); l = rng.integers(0, 3, nq * n).astype(np.int32)
    off = np.arange(0, nq * n + 1, n, dtype=np.int64)
    table = np.zeros(1)
    pos = np.zeros(m + 1, np.int64); top = np.zeros(m + 1, dt); gs = np.zeros(m + 1, np.int64); gg = np.zeros(m + 1)
    o1 = np.zeros(nq); o2 = np.zeros(nq)
    def med(f):
        f(); ts = []
        for _ in range(5):
            t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
        return statistics.median(ts) / (nq * n) * 1e9
    a = med(lambda: cur(off, s, l, m, table, pos, gs, gg, o1))
    b = med(lambda: vbuf(off, s, l, m, table, pos, top, gs, gg, o2))
    assert np.array_equal(o1, o2)
    print(f"n={n:5d} k={m:3d} {np.dtype(dt).name} ties={ties!s:5}: current {a:5.2f} ns/row, value buffer {b:5.2f} ns/row, {a/b:4.2f}x", flush=True)

if __name__ == "__main__":
    for n in (50, 100, 1000):  # ~5 and ~10 rows take the counting path (rank_pairs)
        for m in (1, 3, 5, 10, 64):
            for dt in (np.float32, np.float64):
                for ties in (False, True):
                    run(n, min(m, n), dt, ties)
