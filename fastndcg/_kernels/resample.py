"""Resampling for paired comparisons: bootstrap means and sign-flip statistics.

Every resample draws from its own counter-based stream: the i-th 64-bit number of
resample r of group g is ``mix(key(seed, g, r) + i * GOLDEN)``, SplitMix64's output
function applied to a Weyl sequence with a per-resample offset. No state is
shared between resamples, so threads may take them in any order
and the results are identical for a given seed whatever the thread count.

Groups are contiguous slices of the rows (``offsets``): the queries of one
segment. Parallel work items are (group, block of resamples) pairs, so many
small segments keep both cores busy as well as one large one.

The bootstrap draws with replacement (multinomial counts, as
``scipy.stats.bootstrap``), in two stages so that a million-query group does not
pay a cache miss per draw: each draw first picks a block of ``2**BLOCK_SHIFT``
rows (by a uniform row index, so blocks weigh by their size), then a row within
its block. A job does ``RESAMPLES_PER_JOB`` resamples together, block by block,
so a block of values is read from memory once for all of them while it is in L1,
and two systems at a time share each drawn row.
Row indices within a full block are exact (the block size is a power of two);
picking the block uses 32 random bits per draw, so a block's probability is
right to within 2**-32 (relative error below 1e-6 for any group under 4e9 rows).
"""

from __future__ import annotations

import numpy as np
from numba import uint64

from ._jit import kernel
from .hashing import mix64
from .threads import run_chunks, thread_count


def _over_jobs(n_jobs: int, run) -> None:
    """``run(j0, j1)`` over jobs 0..n_jobs in slices, on several threads."""
    n_slices = max(1, min(n_jobs, 8 * thread_count()))
    edges = [n_jobs * i // n_slices for i in range(n_slices + 1)]
    run_chunks(n_slices, lambda c: run(np.int64(edges[c]), np.int64(edges[c + 1])))


GOLDEN = np.uint64(0x9E3779B97F4A7C15)
# the block picks, the rows within blocks and the sign flips draw from unrelated streams
_STREAM_BLOCK = np.uint64(0xB10C)
_STREAM_BOOT = np.uint64(0x5B0075)
_STREAM_FLIP = np.uint64(0xF119)


@kernel(inner=True)
def _key(seed, stream, group, r):
    """The offset of the stream of resample r of group g (three rounds of mixing so
    that neighbouring (seed, group, r) give unrelated streams)."""
    k = mix64(seed ^ stream)
    k = mix64(k + uint64(group) * GOLDEN)
    return mix64(k + uint64(r) * GOLDEN)


@kernel(inner=True)
def _below(u, n):
    """floor(u * n / 2**64) for n < 2**32: a uniform integer in [0, n) whose bias is
    at most n / 2**64 (exact 128-bit high product from 32-bit halves)."""
    lo = (u & uint64(0xFFFFFFFF)) * n
    hi = (u >> uint64(32)) * n + (lo >> uint64(32))
    return hi >> uint64(32)


BLOCK_SHIFT = 11        # 2,048 rows (16 KB of one system's values) per block
RESAMPLES_PER_JOB = 16  # resamples sharing one pass over the blocks


@kernel(inner=True)
def _count_blocks(key, size, hist, q, buf):
    """Stage one of a resample: how many of its ``size`` draws fall in each block.

    Block numbers are computed a buffer at a time (a loop that vectorises), then
    counted: the same numbers as one draw at a time, 25% faster."""
    m = uint64(size)
    half = uint64(0xFFFFFFFF)
    sh = uint64(32)
    to_block = uint64(32 + BLOCK_SHIFT)  # row index = (32 bits * size) >> 32, then >> shift
    pairs = size // 2
    width = len(buf) // 2
    for c0 in range(0, pairs, width):
        c1 = min(pairs, c0 + width)
        for i in range(c0, c1):
            u = mix64(key + uint64(2 * i) * GOLDEN)
            buf[2 * (i - c0)] = np.int32(((u & half) * m) >> to_block)
            buf[2 * (i - c0) + 1] = np.int32(((u >> sh) * m) >> to_block)
        for t in range(2 * (c1 - c0)):
            hist[q, buf[t]] += 1
    if size % 2:
        hist[q, _below(mix64(key + uint64(size) * GOLDEN), m) >> uint64(BLOCK_SHIFT)] += 1


def bootstrap_means(values, offsets, n_resamples, seed):
    """Means of bootstrap resamples of every group, all systems at once (paired).

    values : (S, n) float64, C order: row s holds system s's per-query values.
    offsets : (G + 1,) int64, group g is columns offsets[g]:offsets[g + 1] (size >= 1).
    seed : np.uint64 (pass that type always: one compiled signature).
    Returns (G, R, S): the mean of system s over resample r of group g, where a
    resample draws size(g) queries with replacement; the same queries for every
    system (so differences of these means are the paired bootstrap).
    """
    n_groups = len(offsets) - 1
    n_blocks_of = (n_resamples + RESAMPLES_PER_JOB - 1) // RESAMPLES_PER_JOB
    out = np.empty((n_groups, n_resamples, values.shape[0]))
    _over_jobs(n_groups * n_blocks_of, lambda j0, j1: _bootstrap_jobs(
        j0, j1, values, offsets, n_resamples, uint64(seed), out))
    return out


@kernel
def _bootstrap_jobs(j0, j1, values, offsets, n_resamples, s, out):
    """Jobs j0:j1 of :func:`bootstrap_means` (job: a block of resamples of a group)."""
    n_sys = values.shape[0]
    per = RESAMPLES_PER_JOB
    n_blocks_of = (n_resamples + per - 1) // per
    block = 1 << BLOCK_SHIFT
    mask = uint64(block - 1)
    for job in range(j0, j1):
        g = job // n_blocks_of
        r0 = (job - g * n_blocks_of) * per
        rb = min(per, n_resamples - r0)
        start = offsets[g]
        size = offsets[g + 1] - start
        nb = (size + block - 1) >> BLOCK_SHIFT
        hist = np.zeros((rb, nb), np.int64)
        buf = np.empty(512, np.int32)
        keys = np.empty(rb, np.uint64)
        for q in range(rb):
            if nb == 1:
                hist[q, 0] = size
            else:
                _count_blocks(_key(s, _STREAM_BLOCK, g, r0 + q), size, hist, q, buf)
            keys[q] = _key(s, _STREAM_BOOT, g, r0 + q)
        for c0 in range(0, n_sys, 2):
            # two systems per pass share the row indices (and the random numbers)
            two = c0 + 1 < n_sys
            row0 = values[c0]
            row1 = values[c0 + 1] if two else values[c0]
            used = np.zeros(rb, np.uint64)  # counter of each resample's row stream
            acc0 = np.zeros(rb)
            acc1 = np.zeros(rb)
            for b in range(nb):
                base = start + (b << BLOCK_SHIFT)
                width = min(block, start + size - base)
                for q in range(rb):
                    n_draws = hist[q, b]
                    key = keys[q]
                    k = used[q]
                    # two accumulators per system: one add chain would be latency-bound
                    a0 = 0.0
                    a1 = 0.0
                    b0 = 0.0
                    b1 = 0.0
                    if width == block:  # 16 random bits per row index, 4 per number
                        quads = n_draws >> 2
                        for t in range(quads):
                            u = mix64(key + k * GOLDEN)
                            k += uint64(1)
                            j0 = base + np.int64(u & mask)
                            j1 = base + np.int64((u >> uint64(16)) & mask)
                            j2 = base + np.int64((u >> uint64(32)) & mask)
                            j3 = base + np.int64((u >> uint64(48)) & mask)
                            a0 += row0[j0] + row0[j1]
                            a1 += row0[j2] + row0[j3]
                            b0 += row1[j0] + row1[j1]
                            b1 += row1[j2] + row1[j3]
                        u = mix64(key + k * GOLDEN)
                        k += uint64(1)
                        for z in range(n_draws - 4 * quads):
                            j = base + np.int64((u >> uint64(16 * z)) & mask)
                            a0 += row0[j]
                            b0 += row1[j]
                    else:  # the group's last, partial block
                        w = uint64(width)
                        for t in range(n_draws):
                            u = mix64(key + k * GOLDEN)
                            k += uint64(1)
                            j = base + np.int64(_below(u, w))
                            a0 += row0[j]
                            b0 += row1[j]
                    used[q] = k
                    acc0[q] += a0 + a1
                    acc1[q] += b0 + b1
            for q in range(rb):
                out[g, r0 + q, c0] = acc0[q] / size
                if two:
                    out[g, r0 + q, c0 + 1] = acc1[q] / size
    return out


def sign_table():
    """(256, 8) float64: the signs (+1 for a set bit) of the 8 bits of every byte,
    so a sign-flip sum is 8-wide multiply-adds instead of a bit test per query."""
    bits = (np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1
    return bits * 2.0 - 1.0


def signflip_means(diffs, offsets, n_resamples, seed, signs):
    """Means of randomly sign-flipped paired differences (the null distribution of
    the two-sided paired randomization test), every pair at once.

    diffs : (P, n) float64, C order: row p holds the differences of pair p.
    offsets : (G + 1,) int64 group boundaries as in :func:`bootstrap_means`.
    signs : :func:`sign_table`.
    Returns (G, R, P). Query i of a group gets bit i of the resample's stream as
    its sign (+1 set, -1 clear); all pairs of a group share a resample's signs.
    """
    n_groups = len(offsets) - 1
    out = np.empty((n_groups, n_resamples, diffs.shape[0]))
    _over_jobs(n_groups * n_resamples, lambda j0, j1: _signflip_jobs(
        j0, j1, diffs, offsets, n_resamples, uint64(seed), signs, out))
    return out


@kernel
def _signflip_jobs(j0, j1, diffs, offsets, n_resamples, s, signs, out):
    """Jobs j0:j1 of :func:`signflip_means` (job: one resample of a group)."""
    n_pairs = diffs.shape[0]
    for job in range(j0, j1):
        g = job // n_resamples
        r = job - g * n_resamples
        start = offsets[g]
        size = offsets[g + 1] - start
        key = _key(s, _STREAM_FLIP, g, r)
        full = size >> 6
        for p in range(n_pairs):
            row = diffs[p]
            lanes = np.zeros(8)
            for b in range(full):
                bits = mix64(key + uint64(b) * GOLDEN)
                base = start + b * 64
                for q in range(8):
                    byte = (bits >> uint64(8 * q)) & uint64(255)
                    for t in range(8):
                        lanes[t] += signs[byte, t] * row[base + 8 * q + t]
            acc = 0.0
            for t in range(8):
                acc += lanes[t]
            if full * 64 < size:
                bits = mix64(key + uint64(full) * GOLDEN)
                base = start + full * 64
                for t in range(size - full * 64):
                    acc += signs[(bits >> uint64(t)) & uint64(1), 0] * row[base + t]
            out[g, r, p] = acc / size


@kernel
def signflip_exact(diffs):
    """The means of the flipped differences under every one of the 2**n sign
    patterns (n = len(diffs) <= 30); pattern m keeps the sign of query i when bit i
    of m is set, so the last pattern is the observed mean."""
    n = len(diffs)
    total = 1 << n
    out = np.empty(total)
    for m in range(total):
        acc = 0.0
        for i in range(n):
            if (m >> i) & 1:
                acc += diffs[i]
            else:
                acc -= diffs[i]
        out[m] = acc / n
    return out
