"""Numba kernels: the parallel driver that scores a batch of queries.

Each query is ranked once (:func:`.rank.rank_query`) into its ranked summary,
then every requested measure reads that summary (:mod:`.measures`): DCG at all
its cutoffs in one walk, and each binary measure by its accumulator. IDCG comes
from the ideal labels (the list's own in list mode, every judged document of
the query in qrels mode). Queries are scored in parallel over ``chunks`` (query
boundaries balanced by rows) on several threads (:mod:`.threads`):
:func:`score_chunk` allocates the chunk's scratch once and scores its queries
one after the other, so there is no allocation per query.
"""

from __future__ import annotations

import numpy as np

from .codes import AVERAGE, STABLE
from .measures import dcg_walk, idcg_query, measure_value
from .rank import flagged_groups, rank_query
from ._jit import kernel
from .threads import run_chunks


@kernel
def score_chunk(q0, q1, offsets, scores, labels, flags, ioffsets, ilabels, ks, disc, gmode,
                table, tmode, hist_order, want_dcg, want_idcg, mcode, mk, mbit, nb, n_rel,
                out_dcg, out_idcg, out_m):
    """Score queries q0:q1 (the arguments as :func:`score_batch`'s)."""
    longest = 1
    ilongest = 1
    for q in range(q0, q1):
        longest = max(longest, offsets[q + 1] - offsets[q])
        ilongest = max(ilongest, ioffsets[q + 1] - ioffsets[q])
    kdeep = ks[len(ks) - 1]
    # DCG's ranking scratch, reused by every query of the chunk
    m_max = min(kdeep, longest) if want_dcg else 1
    top = np.empty(m_max, scores.dtype)
    gstart = np.empty(m_max + 1, np.int64)
    gfill = np.empty(m_max + 1, np.int64)
    gsize = np.empty(m_max, np.int64)
    ggain = np.empty(m_max, np.float64)
    rgain = np.empty(longest if want_dcg and tmode != AVERAGE and tmode != STABLE else 1,
                     np.float64)
    # the binary measures' scratch
    n_m = len(mcode)
    f_max = longest + 1 if n_m > 0 else 1
    uval = np.empty(f_max, scores.dtype)
    ints = np.empty((7, f_max), np.int64)
    ecnt = np.empty((f_max, max(nb, 1)), np.int64)
    # IDCG's scratch
    n_hist = 1
    for label in hist_order:
        n_hist = max(n_hist, label + 1)
    counts = np.zeros(n_hist, np.int64)
    use_hist = len(hist_order) > 0
    itop = np.empty(1 if use_hist else min(kdeep, ilongest), np.float64)
    igains = np.empty(1 if use_hist else ilongest, np.float64)
    for q in range(q0, q1):
        lo = offsets[q]
        n = offsets[q + 1] - lo
        if want_dcg:
            m = min(kdeep, n)
            if m > 0:
                rank_query(lo, n, m, scores, labels, tmode, gmode, table, top, gstart, gfill,
                           gsize, ggain, rgain)
            dcg_walk(q, m, ks, disc, tmode, gsize, ggain, rgain, out_dcg)
        if n_m > 0:
            n_e = flagged_groups(lo, n, scores, flags, nb, tmode, uval, ints[0], ints[1],
                                 ints[2], ints[3], ints[4], ints[5], ints[6], ecnt)
            for j in range(n_m):
                b = mbit[j]
                out_m[q, j] = measure_value(mcode[j], mk[j], b, tmode, n,
                                            n_rel[q, b] if nb > 0 else 0, n_e, ints[5],
                                            ints[6], ecnt)
        if want_idcg:
            lo = ioffsets[q]
            idcg_query(q, lo, ioffsets[q + 1] - lo, ks, disc, ilabels, gmode, table,
                       hist_order, counts, itop, igains, out_idcg)


def score_batch(offsets, scores, labels, flags, ioffsets, ilabels, ks, disc, gmode, table,
                tmode, hist_order, chunks, want_dcg, want_idcg, mcode, mk, mbit,
                nb, n_rel, out_dcg, out_idcg, out_m):
    """Every requested value of every query, chunks of queries on several threads
    (:func:`.threads.run_chunks`).

    ``ks``: the DCG/IDCG cutoffs (sorted, unique; out_dcg/out_idcg are
    (n_q, len(ks))); DCG ranks each query down to the deepest of them;
    ``flags``: ``nb`` flag bits per row, uint8 (empty when nb is 0);
    measure j (out_m[:, j]) has code ``mcode[j]``, cutoff ``mk[j]`` (-1: none) and
    flag bit ``mbit[j]``; ``n_rel[q, b]``: R of query q at flag bit b."""
    def work(c):
        score_chunk(chunks[c], chunks[c + 1], offsets, scores, labels, flags, ioffsets,
                    ilabels, ks, disc, gmode, table, tmode, hist_order, want_dcg, want_idcg,
                    mcode, mk, mbit, nb, n_rel, out_dcg, out_idcg, out_m)

    run_chunks(len(chunks) - 1, work)
