"""Stable 64-bit hashes of query ids (the same in every process)."""

from __future__ import annotations

import numpy as np
from ._jit import kernel



# --------------------------------------------------------------------------- id hashing
# Spreading query ids over on-disk buckets (scattered-query detection, Dask
# shuffles) needs a hash that is the same in every process and Python version,
# which Python's hash() of str is not.

_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@kernel(_nrt=False, inner=True)
def mix64(x):
    """SplitMix64's output function: every input bit affects every output bit."""
    x = (x ^ (x >> np.uint64(30))) * _MIX1
    x = (x ^ (x >> np.uint64(27))) * _MIX2
    return x ^ (x >> np.uint64(31))


@kernel
def hash_int64(ids, out):
    for i in range(len(ids)):
        out[i] = mix64(np.uint64(ids[i]))


@kernel
def hash_strings(data, offsets, out):
    # FNV-1a over the bytes, then mixed
    for i in range(len(offsets) - 1):
        h = np.uint64(0xCBF29CE484222325)
        for j in range(offsets[i], offsets[i + 1]):
            h = (h ^ np.uint64(data[j])) * np.uint64(0x100000001B3)
        out[i] = mix64(h)
