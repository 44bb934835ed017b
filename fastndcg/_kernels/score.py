"""Numba kernels: the parallel driver that scores a batch of queries.

Each query is ranked once (:func:`.rank.rank_one`) into its ranked summary, then
every requested measure reads that summary (:mod:`.measures`): DCG at all its
cutoffs in one walk, and each binary measure by its accumulator. IDCG ranks the
ideal labels (the list's own in list mode, every judged document of the query in
qrels mode). Queries are scored in parallel over ``chunks`` (query boundaries
balanced by rows); per-chunk scratch is reused by every query of the chunk, so
there is no allocation per query.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .measures import dcg_walk, idcg_one, measure_value
from .rank import PAIR_MAX, SMALL_M, STACK_SIZE, rank_one
from ._jit import kernel


@kernel
def _chunk_longest(offsets, ioffsets, q0, q1):
    longest = 1
    for q in range(q0, q1):
        longest = max(longest, offsets[q + 1] - offsets[q], ioffsets[q + 1] - ioffsets[q])
    return longest


@kernel(parallel=True)
def score_batch(offsets, scores, labels, flags, ioffsets, ilabels, ks, disc, gmode, table,
                tmode, hist_order, chunks, want_dcg, want_idcg, kmax, mcode, mk, mbit,
                nb, n_rel, out_dcg, out_idcg, out_m):
    """Every requested value of every query, in parallel over ``chunks``.

    ``ks``: the DCG/IDCG cutoffs (sorted, unique; out_dcg/out_idcg are
    (n_q, len(ks))); ``kmax``: how deep to rank (>= every cutoff in use);
    ``flags``: ``nb`` flag bits per row, uint8 (empty when nb is 0);
    measure j (out_m[:, j]) has code ``mcode[j]``, cutoff ``mk[j]`` (-1: none) and
    flag bit ``mbit[j]``; ``n_rel[q, b]``: R of query q at flag bit b.

    The ranking and the DCG walk are inlined into the parallel loop's body:
    calling a separate per-chunk function instead compiles a little faster but
    made short queries 2x slower (105 vs 205 ns a 5-row query on one core)."""
    want_rank = want_dcg or len(mcode) > 0
    kidcg = ks[len(ks) - 1]
    n_hist = 1
    for label in hist_order:
        n_hist = max(n_hist, label + 1)
    for c in prange(len(chunks) - 1):
        q0 = chunks[c]
        q1 = chunks[c + 1]
        # per-chunk scratch, reused by every query of the chunk
        longest = _chunk_longest(offsets, ioffsets, q0, q1)
        deep = max(kmax, kidcg)
        cap = max(PAIR_MAX, min(deep, longest))
        buf = np.empty(longest if deep >= longest else min(longest, 4 * deep), np.int64)
        n_small = min(kmax, SMALL_M)
        stack = np.empty(STACK_SIZE, np.int64)
        counts = np.zeros(n_hist, np.int64)
        top_s = np.empty(n_small, scores.dtype)
        top_l = np.empty(min(kidcg, SMALL_M), ilabels.dtype)
        gstart = np.empty(n_small + 1, np.int64)
        gcount = np.empty(n_small, np.int64)
        packed = np.empty(n_small, np.uint64)
        keys32 = np.empty(PAIR_MAX + 16, np.uint32)
        gsize = np.empty(cap, np.int64)
        ggain = np.empty(cap, np.float64)
        rgain = np.empty(cap, np.float64)
        gcnt = np.zeros((cap, max(nb, 1)), np.int64)
        for q in range(q0, q1):
            if want_rank:
                lo = offsets[q]
                n = offsets[q + 1] - lo
                m = rank_one(lo, n, kmax, scores, labels, flags, nb, tmode, gmode, table,
                             buf, stack, top_s, packed, gstart, gcount, keys32, gsize, ggain,
                             gcnt, rgain)
                if want_dcg:
                    dcg_walk(q, m, ks, disc, tmode, gsize, ggain, rgain, out_dcg)
                for j in range(len(mcode)):
                    b = mbit[j]
                    out_m[q, j] = measure_value(mcode[j], mk[j], b, tmode, m, n,
                                                n_rel[q, b] if nb > 0 else 0, gsize, gcnt)
            if want_idcg:
                lo = ioffsets[q]
                idcg_one(q, lo, ioffsets[q + 1] - lo, ks, disc, scores, ilabels,
                         gmode, table, hist_order, counts, buf, stack, top_l, rgain,
                         out_idcg)
