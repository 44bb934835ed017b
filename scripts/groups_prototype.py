#!/usr/bin/env python
"""A measured prototype of the pass that finds the tie groups of flagged items.

:func:`fastndcg._kernels.rank.flagged_groups` (the binary measures: AP, RR, P@k,
recall, R-precision ... read only the groups holding a flagged item) against
variants of its two steps: gathering the flagged items' scores (a branch on each
row's flag, or a branchless append) and finding each row's group among the
sorted distinct flagged scores (a search over the groups, or a branchless count
of the groups above the row up to ``linear`` groups). Every variant returns the
same groups (checked). Lists of n rows, a share of them flagged, scores distinct
or drawn from 70 values (heavy ties, as TREC runs' rounded scores), "average"
and "stable" ties. One thread, medians of 5, ns a row:

    python scripts/groups_prototype.py

docs/performance.md gives the figures of 2026-12-02 and what was decided.
"""
import statistics
import sys
import time

import numpy as np
from numba import njit

from fastndcg._kernels import rank as R
from fastndcg._kernels.bundles import GroupScratch
from fastndcg._kernels.codes import AVERAGE, STABLE

NB = 3


@njit(nogil=True, cache=False)
def count_linear(top, n_groups, v):
    g = 0
    for i in range(n_groups):
        g += top[i] > v
    return g


@njit(nogil=True, cache=False)
def count_search(top, n_groups, v):
    g = 0
    hi = n_groups
    while g < hi:
        mid = (g + hi) >> 1
        if top[mid] > v:
            g = mid + 1
        else:
            hi = mid
    return g


@njit(nogil=True, cache=False)
def groups_variant(lo, n, scores, flags, nb, tmode, linear, branchless, s):
    """flagged_groups with the gather and the count chosen at run time."""
    uval, mult, gsz, btw, fill, eord = s.uval, s.mult, s.gsz, s.btw, s.fill, s.eord
    ecnt = s.ecnt
    f = 0
    if branchless:
        for i in range(n):
            uval[f] = scores[lo + i]
            f += flags[lo + i] != 0
    else:
        for i in range(n):
            if flags[lo + i] != 0:
                uval[f] = scores[lo + i]
                f += 1
    if f == 0:
        return 0
    n_groups = R.distinct_values(uval, f, mult)
    stable = tmode == STABLE
    slot = 0
    for g in range(n_groups):
        gsz[g] = 0
        btw[g] = 0
        fill[g] = slot
        slot += mult[g] if stable else 1
        if not stable:
            for b in range(nb):
                ecnt[g, b] = 0
    low = uval[n_groups - 1]
    for i in range(n):
        v = scores[lo + i]
        if v < low:
            continue
        if n_groups <= linear:
            g = count_linear(uval, n_groups, v)
        else:
            g = count_search(uval, n_groups, v)
        if g < n_groups and uval[g] == v:
            fl = flags[lo + i]
            if not stable:
                for b in range(nb):
                    ecnt[g, b] += (fl >> b) & 1
            elif fl != 0:
                e = fill[g]
                fill[g] = e + 1
                eord[e] = gsz[g]
                for b in range(nb):
                    ecnt[e, b] = (fl >> b) & 1
            gsz[g] += 1
        else:
            btw[g] += 1
    R.entry_starts(n_groups, stable, btw, gsz, mult, eord, s.estart, s.esize)
    return f if stable else n_groups


@njit(nogil=True, cache=False)
def run_kernel(offsets, scores, flags, tmode, s, out):
    for q in range(len(offsets) - 1):
        lo = offsets[q]
        n_e = R.flagged_groups(lo, offsets[q + 1] - lo, scores, flags, NB, tmode, s)
        out[q] = n_e + s.estart[max(n_e - 1, 0)] * 1000 + s.esize[0] * 7 + s.ecnt[0, 0]


@njit(nogil=True, cache=False)
def run_variant(offsets, scores, flags, tmode, linear, branchless, s, out):
    for q in range(len(offsets) - 1):
        lo = offsets[q]
        n_e = groups_variant(lo, offsets[q + 1] - lo, scores, flags, NB, tmode, linear,
                             branchless, s)
        out[q] = n_e + s.estart[max(n_e - 1, 0)] * 1000 + s.esize[0] * 7 + s.ecnt[0, 0]


def scratch(rows):
    i = lambda: np.zeros(rows, np.int64)  # noqa: E731
    return GroupScratch(uval=np.empty(rows), mult=i(), gsz=i(), btw=i(), fill=i(), eord=i(),
                        estart=i(), esize=i(), ecnt=np.zeros((rows, NB), np.int64))


def median_ns(fn, n_rows):
    fn()
    times = []
    for _ in range(5):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) / n_rows * 1e9


def main():
    rng = np.random.default_rng(0)
    variants = [("branch, search > 8", 8, False), ("branchless, search > 8", 8, True),
                ("branchless, linear <= 32", 32, True), ("branchless, linear <= 64", 64, True),
                ("branchless, linear <= 128", 128, True)]
    print(f"{'n':>5} {'flagged':>7} {'scores':>8} {'ties':>7} {'kernel':>7} "
          + " ".join(f"{v[0]:>26}" for v in variants))
    for n in (10, 100, 1000):
        n_rows = max(2_000_000, n * 2000)
        nq = n_rows // n
        offsets = np.arange(0, nq * n + 1, n, dtype=np.int64)
        for share in (0.05, 0.4):
            for kind in ("distinct", "70 values"):
                scores = (rng.random(nq * n) if kind == "distinct"
                          else rng.integers(0, 70, nq * n).astype(np.float64))
                flags = np.where(rng.random(nq * n) < share,
                                 rng.integers(1, 2 ** NB, nq * n), 0).astype(np.uint8)
                for tmode, tname in ((AVERAGE, "average"), (STABLE, "stable")):
                    s = scratch(n + 1)
                    want = np.zeros(nq, np.int64)
                    t0 = median_ns(lambda: run_kernel(offsets, scores, flags, tmode, s, want),
                                   nq * n)
                    row = []
                    for _, linear, branchless in variants:
                        got = np.zeros(nq, np.int64)
                        row.append(median_ns(lambda: run_variant(
                            offsets, scores, flags, tmode, linear, branchless, s, got), nq * n))
                        assert (got == want).all()
                    print(f"{n:>5} {share:>7.2f} {kind:>8} {tname:>7} {t0:>7.1f} "
                          + " ".join(f"{x:>26.1f}" for x in row), flush=True)


if __name__ == "__main__":
    sys.exit(main())
