"""The driver that scores a batch of queries with the kernels (plain Python).

Three steps, each a kernel over a chunk of queries (:mod:`.measures`): DCG
ranks each query once down to its deepest cutoff (:mod:`.rank`) and walks the
ranked summary for every cutoff; the binary measures read each query's flagged
tie groups; IDCG comes from the ideal labels (the list's own in list mode,
every judged document of the query in qrels mode). DCG and IDCG have a kernel
for the usual case beside the general one (a cut of at most 64 ranks under
average/stable ties; small integer labels, counted), chosen per call, so a job
compiles only the paths its options can reach. Queries are scored in parallel over ``chunks`` (query
boundaries balanced by rows) on several threads (:mod:`.threads`), each with
scratch arrays made once per call (:func:`scratch`), so there is no allocation
per query. The kernels allocate nothing at all: they are compiled without
Numba's reference counting (``_nrt=False``), which would otherwise add atomic
increments and decrements for every array handed to a helper, on every query.
"""

from __future__ import annotations

import functools

import numpy as np

from .codes import AVERAGE, BASIC_LAST, GRADED_FIRST, STABLE
from .measures import (dcg_chunk, dcg_packed_chunk, dcg_short_chunk, graded_chunk, idcg_chunk,
                       idcg_hist_chunk, measures_chunk, measures_chunk_all)
from .rank import SHORT_MAX
from .threads import run_chunks


def scratch(longest, ilongest, scores, ks, tmode, hist_order, want_dcg, n_measures, nb):
    """The arrays one thread's kernel calls work in, for queries of at
    most ``longest`` rows (``ilongest`` ideal rows): (top, ints, uval, floats, ecnt,
    hgain, rsize)."""
    kdeep = int(ks[-1])
    m_max = max(1, min(kdeep, longest)) if want_dcg else 1
    f_max = longest + 1 if n_measures else 1
    n_hist = int(hist_order.max()) + 1 if len(hist_order) else 1
    width = max(m_max + 1, f_max, n_hist)
    deep = longest if want_dcg and tmode not in (AVERAGE, STABLE) else 1
    fwidth = max(m_max, deep, ilongest)
    return (np.empty(m_max, scores.dtype), np.zeros((11, width), np.int64),
            np.empty(f_max, scores.dtype), np.zeros((4, fwidth), np.float64),
            np.zeros((f_max, max(nb, 1)), np.int64), np.zeros(max(1, len(hist_order))),
            np.zeros(max(fwidth, n_hist), np.int64))


def prefix_sums(values):
    """The prefix sums of ``values`` as two rows, read-only: row 0 [0, v0, v0 + v1,
    ...] each correctly rounded, row 1 what each misses of the exact sum (rounded),
    so that (hi[e] - hi[a]) + (lo[e] - lo[a]) is the sum of values[a:e] to about
    one rounding: a single value comes back exactly. Exact arithmetic costs ~0.5 ms
    for 64 values, so the result is kept for the discounts seen last (every batch
    of a log asks for the same ones)."""
    return _prefix_sums(np.ascontiguousarray(values, np.float64).tobytes())


@functools.lru_cache(maxsize=32)
def _prefix_sums(raw: bytes):
    from fractions import Fraction

    hi = [0.0]
    lo = [0.0]
    exact = Fraction(0)
    for v in np.frombuffer(raw, np.float64):
        exact += Fraction(float(v))
        hi.append(float(exact))
        lo.append(float(exact - Fraction(hi[-1])))
    out = np.array([hi, lo])
    out.flags.writeable = False
    return out


def score_batch(offsets, scores, labels, flags, ioffsets, ilabels, ks, disc, gmode, table,
                tmode, hist_order, chunks, want_dcg, want_idcg, mcode, mk, mbit, mparam,
                nb, n_rel, out_dcg, out_idcg, out_m):
    """Every requested value of every query, chunks of queries on several threads
    (:func:`.threads.run_chunks`), each thread with its own scratch: per chunk,
    each step that is asked for runs over the chunk's queries (DCG, the binary
    measures, IDCG); a step not asked for is not even compiled.

    ``ks``: the DCG/IDCG cutoffs (sorted, unique; out_dcg/out_idcg are
    (n_q, len(ks))); DCG ranks each query down to the deepest of them;
    ``flags``: ``nb`` flag bits per row, uint8 (empty when nb is 0);
    measure j (out_m[:, j]) has code ``mcode[j]``, cutoff ``mk[j]`` (-1: none) and
    flag bits ``mbit[j, 0..2]`` and number parameters ``mparam[j]``;
    ``n_rel[q, b]``: R of query q at flag bit b."""
    longest = max(1, int(np.diff(offsets).max(initial=0)))
    # a cut of at most SHORT_MAX ranks under average/stable ties: the one-pass path
    short = min(int(ks[-1]), longest) <= SHORT_MAX and tmode in (AVERAGE, STABLE)
    ilongest = max(1, int(np.diff(ioffsets).max(initial=0)))
    cdisc = prefix_sums(disc[:SHORT_MAX])
    # deeper cuts of float32 scores under average/stable ties select packed keys
    packed = (want_dcg and not short and tmode in (AVERAGE, STABLE)
              and scores.dtype == np.float32)
    sbits = scores.view(np.uint32) if packed else None

    graded = bool(len(mcode)) and bool((mcode >= GRADED_FIRST).any())
    # the usual binary measures compile without the others
    other = bool(len(mcode)) and bool(((mcode > BASIC_LAST) & (mcode < GRADED_FIRST)).any())
    basic = not other and bool(len(mcode)) and bool((mcode <= BASIC_LAST).any())
    # the gain measures rank each query whole: DCG's general path reads that ranking
    shared = graded and want_dcg and not short and not packed

    def make():
        arrays = scratch(longest, ilongest, scores, ks, tmode, hist_order, want_dcg,
                         len(mcode), nb)
        if packed:  # keys of a query's rows, and the top m of them
            arrays += (np.empty(longest, np.uint64),
                       np.empty(max(1, min(int(ks[-1]), longest)), np.uint64))
        if graded:  # a whole ranking, its gains and the ideal gains (graded_chunk)
            arrays += (np.empty(longest, scores.dtype), np.zeros((3, longest + 1), np.int64),
                       np.zeros(longest), np.zeros(longest), np.zeros(longest),
                       np.zeros(ilongest), np.zeros(ilongest))
        return arrays

    def work(c, s):
        top, ints, uval, floats, ecnt, hgain, rsize = s[:7]
        q0, q1 = chunks[c], chunks[c + 1]
        if packed:
            dcg_packed_chunk(q0, q1, offsets, sbits, labels, ks, disc, cdisc, gmode, table,
                             tmode, s[7], s[8], ints[2], floats[0], out_dcg)
        elif want_dcg and short:
            dcg_short_chunk(q0, q1, offsets, scores, labels, ks, disc, cdisc, gmode, table,
                            tmode, ints[1], ints[2], floats[0], out_dcg)
        elif want_dcg and not shared:
            dcg_chunk(q0, q1, offsets, scores, labels, ks, disc, cdisc, gmode, table, tmode,
                      top, ints[0], ints[1], ints[2], floats[0], floats[1], out_dcg)
        if other:
            measures_chunk_all(q0, q1, offsets, scores, flags, nb, tmode, mcode, mk, mbit, mparam,
                               n_rel, uval, ints, ecnt, out_m)
        elif basic:
            measures_chunk(q0, q1, offsets, scores, flags, nb, tmode, mcode, mk, mbit, n_rel,
                           uval, ints, ecnt, out_m)
        if graded:
            g = s[len(s) - 7:]
            graded_chunk(q0, q1, offsets, scores, labels, ioffsets, ilabels, gmode, table, tmode,
                         mcode, mk, mbit, mparam, nb, n_rel, g[0], g[1], g[2], g[3], g[4], g[5],
                         g[6], out_m, shared, ks, disc, cdisc, out_dcg)
        if want_idcg and len(hist_order):
            idcg_hist_chunk(q0, q1, ioffsets, ilabels, ks, disc, cdisc, gmode, table,
                            hist_order, ints[3], hgain, floats[2], rsize, out_idcg)
        elif want_idcg:
            idcg_chunk(q0, q1, ioffsets, ilabels, ks, disc, cdisc, gmode, table, floats[2],
                       floats[3], rsize, out_idcg)

    run_chunks(len(chunks) - 1, work, make)
