"""The validation pass: one parallel scan of scores and labels."""

from __future__ import annotations

import math

import numpy as np
from numba import prange


from .codes import SCAN_BAD_LABEL, SCAN_FRACTION, SCAN_N, SCAN_NAN_SCORE, SCAN_NEGATIVE
from ._jit import kernel


@kernel(parallel=True)
def scan_values(scores, labels, n_chunks):
    """One parallel pass over scores and labels (either may be empty, then skipped).

    Returns (first, lmin, lmax): ``first[c, SCAN_*]`` is the first row of chunk c with
    that defect (-1 if none); lmin/lmax are per-chunk extremes of the finite labels.
    """
    n = max(len(scores), len(labels))
    first = np.full((n_chunks, SCAN_N), -1, np.int64)
    lmin = np.full(n_chunks, np.inf)
    lmax = np.full(n_chunks, -np.inf)
    for c in prange(n_chunks):
        start = n * c // n_chunks
        stop = n * (c + 1) // n_chunks
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
    return first, lmin, lmax
