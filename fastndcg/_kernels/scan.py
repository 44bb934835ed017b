"""The scans: the validation pass over scores and labels (chunks on several
threads), and the pass over per-query values that totals them."""

from __future__ import annotations

import math

import numpy as np

from .codes import SCAN_BAD_LABEL, SCAN_FRACTION, SCAN_N, SCAN_NAN_SCORE, SCAN_NEGATIVE
from ._jit import kernel
from .threads import run_ranges


@kernel
def scan_chunk(scores, labels, start, stop, c, first, lmin, lmax):
    """Rows start:stop of scores and labels (either may be empty, then skipped):
    ``first[c, SCAN_*]`` <- the first row with that defect (-1 if none), lmin[c] /
    lmax[c] <- the extremes of the finite labels."""
    if len(scores) > 0:
        for i in range(start, stop):
            s = scores[i]
            if s != s:
                first[c, SCAN_NAN_SCORE] = i
                break
    if len(labels) > 0:
        lo = np.inf
        hi = -np.inf
        for i in range(start, stop):
            r = float(labels[i])
            if r != r or r == np.inf or r == -np.inf:
                if first[c, SCAN_BAD_LABEL] < 0:
                    first[c, SCAN_BAD_LABEL] = i
                continue
            if r < 0 and first[c, SCAN_NEGATIVE] < 0:
                first[c, SCAN_NEGATIVE] = i
            if first[c, SCAN_FRACTION] < 0 and r != math.floor(r):
                first[c, SCAN_FRACTION] = i
            lo = min(lo, r)
            hi = max(hi, r)
        lmin[c] = lo
        lmax[c] = hi


def scan_values(scores, labels, n_chunks):
    """One pass over scores and labels (either may be empty, then skipped), in
    ``n_chunks`` chunks on several threads.

    Returns (first, lmin, lmax): ``first[c, SCAN_*]`` is the first row of chunk c with
    that defect (-1 if none); lmin/lmax are per-chunk extremes of the finite labels.
    """
    n = max(len(scores), len(labels))
    first = np.full((n_chunks, SCAN_N), -1, np.int64)
    lmin = np.full(n_chunks, np.inf)
    lmax = np.full(n_chunks, -np.inf)

    run_ranges(n, n_chunks, lambda c, a, b: scan_chunk(scores, labels, a, b, np.int64(c),
                                                       first, lmin, lmax))
    return first, lmin, lmax


@kernel(_nrt=False)
def column_totals(values, clean, sums, counts, big):
    """One pass over per-query values (n, c) for their totals: ``clean`` <- the
    values with NaN as 0; per column, ``sums`` <- the sum of ``clean`` added row
    by row from 0.0 (the order, and so the bits, of NumPy's ``sum(axis=0)`` of a
    C-ordered array of two or more columns), ``counts`` <- the values that are not
    NaN and ``big`` <- the largest magnitude. Returns the flat index of the first
    infinite value (-1: none). NumPy took ~10 ns a value for these over columns."""
    n, c = values.shape
    bad = -1
    for j in range(c):
        sums[j] = 0.0
        counts[j] = 0
        big[j] = 0.0
    for i in range(n):
        for j in range(c):
            x = values[i, j]
            if x != x:
                x = 0.0
            else:
                counts[j] += 1
                a = abs(x)
                if a > big[j]:
                    big[j] = a
                if a == np.inf and bad < 0:
                    bad = i * c + j
            clean[i, j] = x
            sums[j] += x
    return bad
