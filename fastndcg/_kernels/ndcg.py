"""Numba kernels of the NDCG family: DCG and IDCG at every cutoff of a chunk of
queries, and NDCG as their ratio.

DCG reads the ranked summary of the first m ranks (:func:`.rank.rank_query`:
the group starting at rank r has ``gsize[r]`` members, also those past the cut,
and gain sum ``ggain[r]``; with optimistic/pessimistic ties ``rgain[p]`` is the
gain at rank p). IDCG reads the same summary of the ideal ranking (gains
descending, as runs of equal gain). :func:`walk` turns a summary into the sums
at every cutoff; each ``*_chunk`` kernel ranks or sorts a chunk of queries one
way and walks each. Arrays travel in the named bundles of :mod:`.bundles` (which
a kernel called from Python takes as plain tuples and names on its first line).
"""

from __future__ import annotations

import numpy as np

from .bundles import (Cuts, GainScratch, HistScratch, Ideal, IdealScratch, Lists, PackedScratch,
                      RankScratch, Rules, ShortScratch)
from .codes import OPTIMISTIC, PESSIMISTIC
from .rank import (PAIR_MAX, SHORT_MAX, gain_groups, gain_value, rank_packed, rank_pairs,
                   rank_query, rank_short, select_top)
from ._jit import kernel


@kernel(_nrt=False, inner=True)
def _add_run(acc, g, a, e, disc, ks, j, out, q):
    """Add gain ``g`` at ranks a..e-1 (0-based) to the running sum ``acc``, rank
    by rank (so the sum does not depend on how ranks are split into runs), storing
    it at every cutoff from index j on that falls in a+1..e; returns (acc, the next
    cutoff index). The walk for cuts deeper than ``rank.SHORT_MAX`` ranks; the
    cutoffs are looked at once per run, not once per rank."""
    p = a
    while j < len(ks) and ks[j] <= e:  # a cutoff inside the run, or at its end
        while p < ks[j]:
            acc += g * disc[p]
            p += 1
        out[q, j] = acc
        j += 1
    while p < e:
        acc += g * disc[p]
        p += 1
    return acc, j


@kernel(_nrt=False, inner=True)
def _record_rest(acc, ks, j, out, q):
    """Store ``acc`` for the cutoffs from index j on (past the list's end)."""
    while j < len(ks):
        out[q, j] = acc
        j += 1


@kernel(_nrt=False, inner=True)
def _span(cdisc, a, e):
    """The sum of the discounts of ranks a..e-1 from their prefix sums ``cdisc``
    (row 0 correctly rounded, row 1 what each misses): about one rounding off the
    exact sum, and a single rank's discount exactly."""
    return (cdisc[0, e] - cdisc[0, a]) + (cdisc[1, e] - cdisc[1, a])


@kernel(_nrt=False, inner=True)
def walk(q, m, n, cuts, gsize, ggain, out):
    """DCG (or IDCG) at every cutoff in ``cuts.ks`` (sorted, unique) into out[q] of
    a query of n rows from its ranked summary of m ranks: the run of ranks starting
    at rank r has gsize[r] members (also those past m) and gain sum ggain[r], and
    each of its ranks carries the mean (a tie group; for IDCG, ranks of equal
    gain). Which sum a cutoff k gets depends only on d = min(k, n), so a value
    has the same bits in any batch and beside any other cutoffs:

    * d <= ``rank.SHORT_MAX``: the runs above k add their mean gain times the sum
      of their discounts, read off the prefix sums ``cuts.cdisc`` (:func:`_span`: a
      run of one rank gets its discount exactly, so "stable" ties give the bits
      of a rank-by-rank sum), in one walk over the runs with the sum of the
      whole runs in a register: a cutoff inside a run gets that sum plus its
      part of the run (the additions a walk to that cutoff alone would make, in
      the same order), stored once;
    * deeper: rank by rank (:func:`_add_run`)."""
    ks = cuts.ks
    cdisc = cuts.cdisc
    nk = len(ks)
    j = np.int64(0)
    acc = 0.0
    r = np.int64(0)
    while j < nk and min(ks[j], n) <= SHORT_MAX:
        if r >= m:  # past the list's end: every run counted
            out[q, j] = acc
            j += 1
            continue
        e = min(r + gsize[r], m)
        mean = ggain[r] / gsize[r]
        while j < nk and ks[j] <= e and ks[j] <= SHORT_MAX:  # cutoffs inside this run
            out[q, j] = acc + mean * _span(cdisc, r, ks[j])
            j += 1
        if e > SHORT_MAX:  # any cutoff left is deeper (the prefix sums end here)
            break
        acc += mean * _span(cdisc, r, e)
        r = e
    if j < nk:
        acc = 0.0
        r = np.int64(0)
        while r < m:
            e = min(r + gsize[r], m)
            acc, j = _add_run(acc, ggain[r] / gsize[r], r, e, cuts.disc, ks, j, out, q)
            r = e
        _record_rest(acc, ks, j, out, q)


@kernel(_nrt=False, inner=True)
def sparse_walk(q, m, n, cuts, ne, estart, esize, egain, out):
    """:func:`walk` of a ranked summary reduced to its ``ne`` runs of non-zero gain
    (:func:`.rank.gain_groups`: run e starts at rank estart[e], has esize[e]
    members and gain sum egain[e]), down to rank m of a query of n rows. The runs
    left out add +0.0 in :func:`walk`, which changes no sum, so every cutoff gets
    the same additions in the same order: the same bits."""
    ks = cuts.ks
    cdisc = cuts.cdisc
    nk = len(ks)
    j = np.int64(0)
    acc = 0.0
    e = np.int64(0)
    while j < nk and min(ks[j], n) <= SHORT_MAX:
        k = ks[j]
        # the runs wholly above the cutoff
        while e < ne and estart[e] < m and min(estart[e] + esize[e], m) <= k:
            r = estart[e]
            acc += egain[e] / esize[e] * _span(cdisc, r, min(r + esize[e], m))
            e += 1
        r = estart[e] if e < ne else m
        if r < min(k, m):  # the cutoff inside a run
            out[q, j] = acc + egain[e] / esize[e] * _span(cdisc, r, k)
        else:
            out[q, j] = acc
        j += 1
    if j < nk:
        acc = 0.0
        for e in range(ne):
            r = estart[e]
            if r >= m:
                break
            acc, j = _add_run(acc, egain[e] / esize[e], r, min(r + esize[e], m), cuts.disc, ks,
                              j, out, q)
        _record_rest(acc, ks, j, out, q)


@kernel(_nrt=False, inner=True)
def dcg_walk(q, m, n, cuts, tmode, gsize, ggain, rgain, out):
    """DCG at every cutoff in ``cuts.ks`` (sorted, unique) from the ranked summary
    of m ranks of a query of n rows, into out[q]: each rank of a tie group carries
    the group's mean gain ("average"; single ranks for "stable": :func:`walk`, as
    on the short path), or the gain of the rank ("optimistic"/"pessimistic", rank
    by rank)."""
    if tmode != OPTIMISTIC and tmode != PESSIMISTIC:
        walk(q, m, n, cuts, gsize, ggain, out)
        return
    j = np.int64(0)
    acc = 0.0
    for p in range(m):
        acc, j = _add_run(acc, rgain[p], p, p + 1, cuts.disc, cuts.ks, j, out, q)
    _record_rest(acc, cuts.ks, j, out, q)


@kernel(_nrt=False)
def dcg_short_chunk(q0, q1, lists, cuts, rules, s, out):
    """DCG of queries q0:q1 of ``lists`` for "average" and "stable" ties when the
    deepest cutoff is at most ``rank.SHORT_MAX``: :func:`.rank.rank_pairs` (lists of
    at most ``rank.PAIR_MAX`` rows) or :func:`.rank.rank_short` (``s``: their
    :class:`.bundles.ShortScratch`), then :func:`walk`."""
    lists, cuts, rules, s = Lists(*lists), Cuts(*cuts), Rules(*rules), ShortScratch(*s)
    offsets = lists.offsets
    kdeep = cuts.ks[len(cuts.ks) - 1]
    for q in range(q0, q1):
        lo = offsets[q]
        n = offsets[q + 1] - lo
        m = min(kdeep, n)
        if n <= PAIR_MAX:
            rank_pairs(lo, n, m, lists.scores, lists.labels, rules.ties, rules.gain,
                       rules.table, s.gsize, s.ggain)
        else:
            rank_short(lo, n, m, lists.scores, lists.labels, rules.ties, rules.gain,
                       rules.table, s)
        walk(q, m, n, cuts, s.gsize, s.ggain, out)


@kernel(_nrt=False)
def dcg_chunk(q0, q1, lists, cuts, rules, s, out):
    """DCG of queries q0:q1 of ``lists``, any tie rule and cutoff:
    :func:`.rank.rank_query` (``s``: its :class:`.bundles.RankScratch`), then
    :func:`dcg_walk`."""
    lists, cuts, rules, s = Lists(*lists), Cuts(*cuts), Rules(*rules), RankScratch(*s)
    offsets = lists.offsets
    kdeep = cuts.ks[len(cuts.ks) - 1]
    for q in range(q0, q1):
        lo = offsets[q]
        n = offsets[q + 1] - lo
        m = min(kdeep, n)
        if m > 0:
            rank_query(lo, n, m, lists.scores, lists.labels, rules.ties, rules.gain,
                       rules.table, s)
        dcg_walk(q, m, n, cuts, rules.ties, s.gsize, s.ggain, s.rgain, out)


@kernel(_nrt=False)
def dcg_sparse_chunk(q0, q1, lists, cuts, rules, g, s, out):
    """DCG of queries q0:q1 of ``lists`` for "average" and "stable" ties and cuts
    deeper than ``rank.SHORT_MAX``, whole lists among them: from the tie groups of
    the items of non-zero gain alone (:func:`.rank.gain_groups`, ``g``: its
    :class:`.bundles.GainScratch`), then :func:`sparse_walk`; a query where more
    than one row in ``rank.SPARSE_SHARE`` has a gain is ranked as
    :func:`dcg_chunk` ranks it (``s``: its :class:`.bundles.RankScratch`). The
    same bits either way."""
    lists, cuts, rules = Lists(*lists), Cuts(*cuts), Rules(*rules)
    g, s = GainScratch(*g), RankScratch(*s)
    offsets = lists.offsets
    kdeep = cuts.ks[len(cuts.ks) - 1]
    for q in range(q0, q1):
        lo = offsets[q]
        n = offsets[q + 1] - lo
        m = min(kdeep, n)
        ne = gain_groups(lo, n, lists.scores, lists.labels, rules.ties, rules.gain,
                         rules.table, g) if m > 0 else 0
        if ne >= 0:
            sparse_walk(q, m, n, cuts, ne, g.estart, g.esize, g.egain, out)
            continue
        rank_query(lo, n, m, lists.scores, lists.labels, rules.ties, rules.gain, rules.table, s)
        walk(q, m, n, cuts, s.gsize, s.ggain, out)


@kernel(_nrt=False)
def dcg_packed_chunk(q0, q1, lists, cuts, rules, s, out):
    """DCG of queries q0:q1 for float32 scores (``lists.scores``: their bits as
    uint32) under "average" or "stable" ties: :func:`.rank.rank_packed` (``s``: its
    :class:`.bundles.PackedScratch`), then :func:`walk`."""
    lists, cuts, rules, s = Lists(*lists), Cuts(*cuts), Rules(*rules), PackedScratch(*s)
    offsets = lists.offsets
    kdeep = cuts.ks[len(cuts.ks) - 1]
    for q in range(q0, q1):
        lo = offsets[q]
        n = offsets[q + 1] - lo
        m = min(kdeep, n)
        if m > 0:
            rank_packed(lo, n, m, lists.scores, lists.labels, rules.gain, rules.table,
                        rules.ties, s)
        walk(q, m, n, cuts, s.gsize, s.ggain, out)


@kernel(_nrt=False)
def idcg_hist_chunk(q0, q1, ideal, cuts, rules, hist_order, s, out):
    """IDCG at every cutoff of queries q0:q1 of ``ideal`` whose labels are integers
    0..L-1 (``hist_order`` lists the label values by gain, highest first): a
    query's labels are counted, then the counts, in gain order, are the ideal
    ranking (gains descending, so ties in gain do not matter) as runs of equal
    gain (labels of equal gain are one run), summarised by rank in
    ``s.rsize``/``s.rgain`` (gain sum = gain x size, as :func:`idcg_chunk` makes
    it, so both kernels hand :func:`walk` the same summary). ``s``: a
    :class:`.bundles.HistScratch`."""
    ideal, cuts, rules, s = Ideal(*ideal), Cuts(*cuts), Rules(*rules), HistScratch(*s)
    offsets = ideal.offsets
    labels = ideal.labels
    counts = s.counts
    hgain = s.hgain
    rgain = s.rgain
    rsize = s.rsize
    kdeep = cuts.ks[len(cuts.ks) - 1]
    for h in range(len(hist_order)):
        hgain[h] = gain_value(hist_order[h], rules.gain, rules.table)
    for q in range(q0, q1):
        lo = offsets[q]
        n = offsets[q + 1] - lo
        m = min(kdeep, n)
        for label in hist_order:
            counts[label] = 0
        for i in range(lo, lo + n):
            counts[int(labels[i])] += 1
        start = np.int64(-1)  # the rank where the run being filled starts
        run_h = np.int64(0)  # the first label of that run
        p = np.int64(0)
        for h in range(len(hist_order)):
            if p >= m:
                break
            c = counts[hist_order[h]]
            if c == 0:
                continue
            g = hgain[h]
            if start < 0 or g != hgain[run_h]:
                start = p
                run_h = h
                rsize[start] = 0
            rsize[start] = min(rsize[start] + c, m - start)  # cut at m, as idcg_chunk's
            rgain[start] = g * rsize[start]
            p += c
        walk(q, m, n, cuts, rsize, rgain, out)


@kernel(_nrt=False)
def idcg_chunk(q0, q1, ideal, cuts, rules, s, out):
    """IDCG at every cutoff of queries q0:q1 of ``ideal``, any labels: a query's top
    gains are selected (:func:`.rank.select_top`), then summarised by rank as runs
    of equal gain (in ``s.rsize`` and ``s.gains``) for :func:`walk`. ``s``: an
    :class:`.bundles.IdealScratch`."""
    ideal, cuts, rules, s = Ideal(*ideal), Cuts(*cuts), Rules(*rules), IdealScratch(*s)
    offsets = ideal.offsets
    labels = ideal.labels
    top = s.top
    gains = s.gains
    rsize = s.rsize
    kdeep = cuts.ks[len(cuts.ks) - 1]
    for q in range(q0, q1):
        lo = offsets[q]
        n = offsets[q + 1] - lo
        m = min(kdeep, n)
        if m > 0:
            for i in range(n):
                gains[i] = gain_value(labels[lo + i], rules.gain, rules.table)
            select_top(gains, np.int64(0), n, m, top)
            start = np.int64(0)
            for p in range(1, m + 1):
                if p == m or top[p] != top[start]:
                    rsize[start] = p - start
                    gains[start] = top[start] * (p - start)
                    start = p
        walk(q, m, n, cuts, rsize, gains, out)


@kernel(_nrt=False)
def ndcg_ratio(dcg, idcg, fill, out, first):
    """out = dcg / idcg (2-D, one row a query), ``fill`` where idcg is 0, in one
    pass that also finds, as flat indices (-1: none), the first entry where idcg
    is not finite (first[0]), where dcg is not finite (first[1]) and where idcg is
    0 (first[2])."""
    nk = dcg.shape[1]
    for q in range(dcg.shape[0]):
        for j in range(nk):
            d = dcg[q, j]
            i = idcg[q, j]
            if i - i != 0.0 and first[0] < 0:  # inf or NaN
                first[0] = q * nk + j
            if d - d != 0.0 and first[1] < 0:
                first[1] = q * nk + j
            if i == 0.0:
                out[q, j] = fill
                if first[2] < 0:
                    first[2] = q * nk + j
            else:
                out[q, j] = d / i
