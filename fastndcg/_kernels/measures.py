"""Numba kernels: the measures, each an accumulator over a query's ranked summary
(the second of a query's two steps; :mod:`.rank` makes the summary).

DCG reads the ranked summary of the first m ranks (:func:`.rank.rank_query`:
the group starting at rank r has ``gsize[r]`` members, also those past the cut,
and gain sum ``ggain[r]``; with optimistic/pessimistic ties ``rgain[p]`` is the
gain at rank p). The binary measures read the query's flagged groups
(:func:`.rank.flagged_groups`: only the tie groups holding a relevant or judged
item, with their start rank, size and flag counts), which need no ranking of the
other items, however deep the measure looks. Each measure is one small function
here, dispatched on an integer code at run time: a new set of measures compiles
nothing new.

Tie rules, for the binary measures (a flag per item): "average" is the exact
expected value over all orderings of each tied group (McSherry & Najork, ECIR
2008); "optimistic"/"pessimistic" put the flagged members of each tied group
first/last (the best/worst ordering for these measures); "stable" groups are
single ranks, for which every formula below is the plain one.
"""

from __future__ import annotations

import math

import numpy as np


from .codes import (BASIC_LAST, EXP2, GRADED_FIRST, LINEAR, TABLE, M_11PT_AVG, M_AP, M_BING, M_BPREF,
                    M_11PT_AVG_TE9, M_BPREF_RANX, M_ERR, M_F1, M_G, M_INFAP, M_IPREC_TE9,
                    M_IPREC, M_JUDGED, M_NDCG_REL, M_NUM_NONREL_JUDGED_RET, M_NUM_Q, M_NUM_REL,
                    M_NUM_REL_RET, M_NUM_RET, M_P, M_R, M_RBP, M_RBP_BIN, M_RBP_RESID,
                    M_RBP_RESIDUAL, M_REL_P, M_RNDCG, M_RPREC, M_RPREC_MULT, M_RR, M_SET_F,
                    M_SET_MAP, M_SET_P, M_SET_R, M_SET_REL_P, M_SUCCESS, M_UNJ, M_UTILITY,
                    AVERAGE, OPTIMISTIC, PESSIMISTIC)
from .rank import (PAIR_MAX, SHORT_MAX, flagged_groups, gain_value, rank_packed, rank_pairs,
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
def walk(q, m, n, ks, disc, cdisc, gsize, ggain, out):
    """DCG (or IDCG) at every cutoff in ``ks`` (sorted, unique) into out[q] of a
    query of n rows from its ranked summary of m ranks: the run of ranks starting
    at rank r has gsize[r] members (also those past m) and gain sum ggain[r], and
    each of its ranks carries the mean (a tie group; for IDCG, ranks of equal
    gain). Which sum a cutoff k gets depends only on d = min(k, n), so a value
    has the same bits in any batch and beside any other cutoffs:

    * d <= ``rank.SHORT_MAX``: the runs above k add their mean gain times the sum
      of their discounts, read off the prefix sums ``cdisc`` (:func:`_span`: a
      run of one rank gets its discount exactly, so "stable" ties give the bits
      of a rank-by-rank sum), in one walk over the runs with the sum of the
      whole runs in a register: a cutoff inside a run gets that sum plus its
      part of the run (the additions a walk to that cutoff alone would make, in
      the same order), stored once;
    * deeper: rank by rank (:func:`_add_run`)."""
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
            acc, j = _add_run(acc, ggain[r] / gsize[r], r, e, disc, ks, j, out, q)
            r = e
        _record_rest(acc, ks, j, out, q)


@kernel(_nrt=False, inner=True)
def dcg_walk(q, m, n, ks, disc, cdisc, tmode, gsize, ggain, rgain, out):
    """DCG at every cutoff in ``ks`` (sorted, unique) from the ranked summary of m
    ranks of a query of n rows, into out[q]: each rank of a tie group carries the
    group's mean gain ("average"; single ranks for "stable": :func:`walk`,
    as on the short path), or the gain of the rank ("optimistic"/"pessimistic",
    rank by rank)."""
    if tmode != OPTIMISTIC and tmode != PESSIMISTIC:
        walk(q, m, n, ks, disc, cdisc, gsize, ggain, out)
        return
    j = np.int64(0)
    acc = 0.0
    for p in range(m):
        acc, j = _add_run(acc, rgain[p], p, p + 1, disc, ks, j, out, q)
    _record_rest(acc, ks, j, out, q)


@kernel(_nrt=False)
def dcg_short_chunk(q0, q1, offsets, scores, labels, ks, disc, cdisc, gmode, table, tmode, pos,
                    gsize, ggain, out):
    """DCG of queries q0:q1 for "average" and "stable" ties when the deepest cutoff
    is at most ``rank.SHORT_MAX``: :func:`.rank.rank_pairs` (lists of at most
    ``rank.PAIR_MAX`` rows) or :func:`.rank.rank_short`, then :func:`walk`."""
    kdeep = ks[len(ks) - 1]
    for q in range(q0, q1):
        lo = offsets[q]
        n = offsets[q + 1] - lo
        m = min(kdeep, n)
        if n <= PAIR_MAX:
            rank_pairs(lo, n, m, scores, labels, tmode, gmode, table, gsize, ggain)
        else:
            rank_short(lo, n, m, scores, labels, tmode, gmode, table, pos, gsize, ggain)
        walk(q, m, n, ks, disc, cdisc, gsize, ggain, out)


@kernel(_nrt=False)
def dcg_chunk(q0, q1, offsets, scores, labels, ks, disc, cdisc, gmode, table, tmode, top, gstart,
              gfill, gsize, ggain, rgain, out):
    """DCG of queries q0:q1, any tie rule and cutoff: :func:`.rank.rank_query`,
    then :func:`dcg_walk`."""
    kdeep = ks[len(ks) - 1]
    for q in range(q0, q1):
        lo = offsets[q]
        n = offsets[q + 1] - lo
        m = min(kdeep, n)
        if m > 0:
            rank_query(lo, n, m, scores, labels, tmode, gmode, table, top, gstart, gfill,
                       gsize, ggain, rgain)
        dcg_walk(q, m, n, ks, disc, cdisc, tmode, gsize, ggain, rgain, out)


@kernel(_nrt=False)
def dcg_packed_chunk(q0, q1, offsets, sbits, labels, ks, disc, cdisc, gmode, table, tmode, keys,
                     top, gsize, ggain, out):
    """DCG of queries q0:q1 for float32 scores (``sbits``: their bits as uint32)
    under "average" or "stable" ties: :func:`.rank.rank_packed`, then
    :func:`walk`."""
    kdeep = ks[len(ks) - 1]
    for q in range(q0, q1):
        lo = offsets[q]
        n = offsets[q + 1] - lo
        m = min(kdeep, n)
        if m > 0:
            rank_packed(lo, n, m, sbits, labels, gmode, table, tmode, keys, top, gsize, ggain)
        walk(q, m, n, ks, disc, cdisc, gsize, ggain, out)


@kernel(_nrt=False)
def idcg_hist_chunk(q0, q1, offsets, labels, ks, disc, cdisc, gmode, table, hist_order, counts,
                    hgain, rgain, rsize, out):
    """IDCG at every cutoff in ``ks`` of queries q0:q1 whose labels are integers
    0..L-1 (``hist_order`` lists the label values by gain, highest first): a
    query's labels are counted, then the counts, in gain order, are the ideal
    ranking (gains descending, so ties in gain do not matter) as runs of equal
    gain (labels of equal gain are one run), summarised by rank in
    ``rsize``/``rgain`` (scratch; gain sum = gain x size, as :func:`idcg_chunk`
    makes it, so both kernels hand :func:`walk` the same summary). ``hgain``
    (scratch) gets the gains of ``hist_order``."""
    kdeep = ks[len(ks) - 1]
    for h in range(len(hist_order)):
        hgain[h] = gain_value(hist_order[h], gmode, table)
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
        walk(q, m, n, ks, disc, cdisc, rsize, rgain, out)


@kernel(_nrt=False)
def idcg_chunk(q0, q1, offsets, labels, ks, disc, cdisc, gmode, table, top, gains, rsize, out):
    """IDCG at every cutoff in ``ks`` of queries q0:q1, any labels: a query's top
    gains are selected (:func:`.rank.select_top`; ``top`` and ``gains`` are float64
    scratch), then summarised by rank as runs of equal gain (in ``rsize`` and
    ``gains``) for :func:`walk`."""
    kdeep = ks[len(ks) - 1]
    for q in range(q0, q1):
        lo = offsets[q]
        n = offsets[q + 1] - lo
        m = min(kdeep, n)
        if m > 0:
            for i in range(n):
                gains[i] = gain_value(labels[lo + i], gmode, table)
            select_top(gains, np.int64(0), n, m, top)
            start = np.int64(0)
            for p in range(1, m + 1):
                if p == m or top[p] != top[start]:
                    rsize[start] = p - start
                    gains[start] = top[start] * (p - start)
                    start = p
        walk(q, m, n, ks, disc, cdisc, rsize, gains, out)


# --------------------------------------------------------------------------- binary measures
# They read a query's *flagged groups* (:func:`.rank.flagged_groups`): the tie groups
# holding a flagged item, in rank order; entry e starts at rank estart[e] (0-based),
# has esize[e] members and ecnt[e, b] of them with flag bit b. Groups without a
# flagged item add nothing to these measures, so they are not listed.
# t: the ranks looked at; b: the flag bit.


@kernel(_nrt=False, inner=True)
def count_top(t, b, tmode, n_e, estart, esize, ecnt):
    """Flagged items in the top t ranks: expected ("average"), or exact."""
    total = 0.0
    for e in range(n_e):
        r = estart[e]
        if r >= t:
            break
        s = esize[e]
        c = ecnt[e, b]
        inside = min(r + s, t) - r
        if tmode == OPTIMISTIC:
            total += min(c, inside)
        elif tmode == PESSIMISTIC:
            total += max(0, inside - (s - c))
        else:
            total += c * inside / s
    return total


@kernel(_nrt=False, inner=True)
def _first_flagged(t, b, n_e, estart, ecnt):
    """The first entry starting before rank t with a member flagged at bit b, or -1."""
    for e in range(n_e):
        if estart[e] >= t:
            break
        if ecnt[e, b] > 0:
            return e
    return -1


@kernel(_nrt=False, inner=True)
def success(t, b, tmode, n_e, estart, esize, ecnt):
    """1 if a flagged item is in the top t (its probability, for "average")."""
    e = _first_flagged(t, b, n_e, estart, ecnt)
    if e < 0:
        return 0.0
    r = estart[e]
    s = esize[e]
    c = ecnt[e, b]
    if tmode == OPTIMISTIC:
        return 1.0
    if tmode == PESSIMISTIC:
        return 1.0 if r + s - c < t else 0.0
    # 1 - P(none of the group's first min(s, t - r) ranks is flagged)
    none = 1.0
    for i in range(min(s, t - r)):
        if s - c - i <= 0:
            return 1.0
        none *= (s - c - i) / (s - i)
    return 1.0 - none


@kernel(_nrt=False, inner=True)
def reciprocal_rank(t, b, tmode, n_e, estart, esize, ecnt):
    """1 / rank of the first flagged item when that rank is <= t, else 0 (for
    "average": its expectation; the first flagged member of a group of s with c
    flagged is at position j with probability C(s-j, c-1) / C(s, c))."""
    e = _first_flagged(t, b, n_e, estart, ecnt)
    if e < 0:
        return 0.0
    r = estart[e]
    s = esize[e]
    c = ecnt[e, b]
    if tmode == OPTIMISTIC:
        return 1.0 / (r + 1)
    if tmode == PESSIMISTIC:
        p = r + s - c
        return 1.0 / (p + 1) if p < t else 0.0
    total = 0.0
    prob = c / s
    for j in range(1, s - c + 2):
        if r + j > t:
            break
        total += prob / (r + j)
        if s - j > 0:
            prob *= (s - j - c + 1) / (s - j)
    return total


@kernel(_nrt=False, inner=True)
def precision_sum(t, b, tmode, n_e, estart, esize, ecnt):
    """The sum of the precisions at the ranks <= t of flagged items (AP's numerator).
    For "average", a group at ranks a+1..a+s with c flagged members after C
    flagged items adds, at each position j, E[flag_j (C + flags up to j)] / (a + j)
    = [(C + 1) c / s + (j - 1) c (c - 1) / (s (s - 1))] / (a + j)."""
    total = 0.0
    before = np.int64(0)
    for e in range(n_e):
        r = estart[e]
        if r >= t:
            break
        s = esize[e]
        c = ecnt[e, b]
        if c > 0:
            if tmode == OPTIMISTIC:
                for i in range(1, c + 1):
                    if r + i > t:
                        break
                    total += (before + i) / (r + i)
            elif tmode == PESSIMISTIC:
                for i in range(1, c + 1):
                    p = r + s - c + i
                    if p > t:
                        break
                    total += (before + i) / p
            else:
                first = (before + 1) * c / s
                pair = c * (c - 1) / (s * (s - 1)) if s > 1 else 0.0
                for j in range(1, s + 1):
                    if r + j > t:
                        break
                    total += (first + (j - 1) * pair) / (r + j)
        before += c
    return total


@kernel(_nrt=False, inner=True)
def _bpref_term(nonrel, n_rel, n_nonrel):
    """trec_eval's bpref term of a relevant item with ``nonrel`` judged non-relevant
    items above it: 1 - min(nonrel, R) / min(N, R) (1 when none is above)."""
    if nonrel == 0:
        return 1.0
    return 1.0 - min(nonrel, n_rel) / min(n_nonrel, n_rel)


@kernel(_nrt=False, inner=True)
def bpref_sum(b, b0, tmode, n_rel, n_nonrel, n_e, esize, ecnt):
    """The sum of :func:`_bpref_term` over the relevant items (flag bit b); the
    judged non-relevant items are those with bit b0 (judged, label >= 0) but not
    b. A relevant item of a tie group with c judged non-relevant members has
    0..c of them above it: each equally likely ("average": the position of one
    item among c others in a random order is uniform), none ("optimistic") or
    all ("pessimistic")."""
    total = 0.0
    above = np.int64(0)
    for e in range(n_e):
        r = ecnt[e, b]
        c = ecnt[e, b0] - r
        if r > 0:
            if tmode == OPTIMISTIC:
                total += r * _bpref_term(above, n_rel, n_nonrel)
            elif tmode == PESSIMISTIC:
                total += r * _bpref_term(above + c, n_rel, n_nonrel)
            else:
                part = 0.0
                for x in range(c + 1):
                    part += _bpref_term(above + x, n_rel, n_nonrel)
                total += r * part / (c + 1)
        above += c
    return total


@kernel(_nrt=False, inner=True)
def bing_sum(b, tmode, n_e, estart, esize, ecnt):
    """trec_eval's binG numerator: over the relevant items (flag bit b), 1 /
    log2(2 + the non-relevant items above it). A relevant member of a tie group
    with o other members has 0..o of them above it, each equally likely
    ("average"), none ("optimistic") or all ("pessimistic")."""
    total = 0.0
    before = np.int64(0)  # relevant items in earlier entries
    for e in range(n_e):
        c = ecnt[e, b]
        if c > 0:
            above = estart[e] - before  # non-relevant items above the entry
            other = esize[e] - c
            if tmode == OPTIMISTIC:
                total += c / np.log2(2.0 + above)
            elif tmode == PESSIMISTIC:
                total += c / np.log2(2.0 + above + other)
            else:
                part = 0.0
                for x in range(other + 1):
                    part += 1.0 / np.log2(2.0 + above + x)
                total += c * part / (other + 1)
        before += c
    return total


@kernel(_nrt=False, inner=True)
def flagged_mass(b, tmode, p, first, n_e, estart, esize, ecnt):
    """The sum of p^i over the ranks i (0-based) of the items with flag bit b:
    expected over the orderings of each tie group ("average": each rank of a group
    holds one with probability c / s), or with them first in their group (when
    ``first`` is true for this tie rule) or last."""
    total = 0.0
    for e in range(n_e):
        c = ecnt[e, b]
        if c == 0:
            continue
        s = esize[e]
        r = estart[e]
        if tmode == OPTIMISTIC or tmode == PESSIMISTIC:
            lo = r if first else r + s - c
            for i in range(lo, lo + c):
                total += p ** i
        else:
            for i in range(r, r + s):
                total += c / s * p ** i
    return total


@kernel(_nrt=False, inner=True)
def rbp_residual(b, tmode, n, p, quirk, n_e, estart, esize, ecnt):
    """How far RBP could rise if every item without flag bit b (trec_eval's
    rbp_resid: judged with a label >= 0; RBP's residual: judged) had gain 1: p^n
    (the ranks past the list) + (1 - p) x the sum of p^i over those items' ranks;
    the largest value ("optimistic") puts them first in their tie group.
    ``quirk``: trec_eval's rbp_resid, 0 when every item is judged."""
    count = np.int64(0)
    for e in range(n_e):
        count += ecnt[e, b]
    if quirk and count >= n:
        return 0.0
    judged = flagged_mass(b, tmode, p, tmode != OPTIMISTIC, n_e, estart, esize, ecnt)
    everything = 0.0
    cur = 1.0
    for i in range(n):  # p^i added rank by rank, p^n by repeated products, as trec_eval
        everything += cur
        cur *= p
    return cur + (1.0 - p) * (everything - judged)


INFAP_EPSILON = 0.00001  # trec_eval's


@kernel(_nrt=False, inner=True)
def infap_sum(b, b0, bj, n_e, estart, ecnt):
    """trec_eval's infAP numerator (Yilmaz & Aslam, CIKM 2006) for the strict tie
    rules (each entry a single rank): at the rank j (0-based) of each relevant item
    (bit b), with r relevant, m judged non-relevant (bit b0, not b) and u judged
    but unlabelled (bit bj, not b0: "in the pool, unjudged") items above it,
    1 / (j + 1) + j / (j + 1) x (r + m + u) / j x (r + eps) / (r + m + 2 eps), and 1 at
    rank 0. Items outside the pool (no bit) count in j only."""
    total = 0.0
    r = np.int64(0)
    m = np.int64(0)
    u = np.int64(0)
    for e in range(n_e):
        if ecnt[e, b] > 0:
            j = estart[e]
            if j == 0:
                total += 1.0
            else:
                fj = float(j)
                total += (1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((r + m + u) / fj)
                          * ((r + INFAP_EPSILON) / (r + m + 2 * INFAP_EPSILON)))
            r += 1
        elif ecnt[e, b0] > 0:
            m += 1
        elif ecnt[e, bj] > 0:
            u += 1
    return total


@kernel(_nrt=False, inner=True)
def _round_half_up(x):
    """C's lround of x >= 0: the nearest whole number, halves away from zero."""
    f = np.floor(x)
    return np.int64(f) + (1 if x - f >= 0.5 else 0)


@kernel(_nrt=False, inner=True)
def iprec(c, b, tmode, n_e, estart, esize, ecnt):
    """trec_eval's interpolated precision at the c-th relevant item (flag bit b):
    the highest precision at its rank or below, read at the ranks of relevant
    items (where precision peaks); 0 when fewer than c are retrieved (c = 0: as c =
    1). For the strict tie rules only (the relevant members of a tie group first
    under "optimistic", last otherwise, which is the plain order for single
    ranks)."""
    total = np.int64(0)
    for e in range(n_e):
        total += ecnt[e, b]
    if total == 0 or c > total:
        return 0.0
    best = 0.0
    seen = total  # relevant items down to and including the one looked at
    for e in range(n_e - 1, -1, -1):
        r = estart[e]
        cnt = ecnt[e, b]
        first = r if tmode == OPTIMISTIC else r + esize[e] - cnt  # ranks first+1..first+cnt
        for i in range(cnt, 0, -1):
            best = max(best, seen / (first + i))
            if seen <= c:
                return best
            seen -= 1
    return best


@kernel(_nrt=False, inner=True)
def measure_value_basic(code, k, b, b2, tmode, n, n_rel, n_rel2, n_e, estart, esize, ecnt):
    """One of the usual binary measures (codes up to ``BASIC_LAST``: P, R, Success,
    RR, AP, R-precision, Judged, the counts, bpref and the set measures) of one
    query of n items. ``k``: the cutoff (-1: the whole list); ``n_rel``: R, the
    relevant judged documents of the query at this threshold (flag bit b);
    ``n_rel2``: the same at bit b2 (bpref: judged documents with a label >= 0, so
    N, the judged non-relevant ones, is n_rel2 - n_rel). Denominators as trec_eval:
    P@k divides by k, Judged@k by min(k, n) (ir_measures), recall, AP and
    R-precision by R (0 when R is 0)."""
    t = n if k < 0 else min(k, n)
    if code == M_NUM_RET:
        return float(n)
    if code == M_NUM_REL:
        return float(n_rel)
    if code == M_SUCCESS:
        return success(t, b, tmode, n_e, estart, esize, ecnt)
    if code == M_RR:
        return reciprocal_rank(t, b, tmode, n_e, estart, esize, ecnt)
    if code == M_AP:
        return precision_sum(t, b, tmode, n_e, estart, esize, ecnt) / n_rel if n_rel > 0 else 0.0
    if code == M_BPREF:
        return (bpref_sum(b, b2, tmode, n_rel, n_rel2 - n_rel, n_e, esize, ecnt) / n_rel
                if n_rel > 0 else 0.0)
    # the rest count the flagged items of the top `depth` ranks (one count_top: each
    # call site is a copy of it in the compiled code)
    depth = n  # the whole list: the counts and the set measures (no order, no ties)
    if code == M_JUDGED or code == M_P or code == M_R:
        depth = t
    elif code == M_RPREC:
        depth = min(n_rel, n)
    found = count_top(depth, b, tmode, n_e, estart, esize, ecnt)
    if code == M_NUM_REL_RET:
        return found
    if code == M_NUM_NONREL_JUDGED_RET:  # judged with a label >= 0 (bit b2), not relevant
        return count_top(n, b2, tmode, n_e, estart, esize, ecnt) - found
    if code == M_JUDGED:  # of the ranks there are, as ir_measures
        return found / t if t > 0 else 0.0
    if code == M_P:
        d = n if k < 0 else k
        return found / d if d > 0 else 0.0
    if code == M_SET_P:
        return found / n if n > 0 else 0.0
    if n_rel <= 0:
        return 0.0
    if code == M_R or code == M_SET_R or code == M_RPREC:
        return found / n_rel
    if code == M_SET_REL_P:
        return found / min(n, n_rel) if n > 0 else 0.0
    if code == M_SET_MAP:
        return found * found / (n * n_rel) if n > 0 else 0.0
    return np.nan


@kernel(_nrt=False, inner=True)
def measure_value(code, k, b, b2, b3, tmode, n, n_rel, n_rel2, n_e, estart, esize, ecnt, mparam,
                  j):
    """Any binary measure of one query: the usual ones by
    :func:`measure_value_basic`, the others here (``mparam[j]``: the measure's
    number parameters; ``b3``: a third flag bit, the judged one for infAP)."""
    if code <= BASIC_LAST:
        return measure_value_basic(code, k, b, b2, tmode, n, n_rel, n_rel2, n_e, estart, esize,
                                   ecnt)
    t = n if k < 0 else min(k, n)
    if code == M_NUM_Q:  # 1 a query: summed, the number of queries
        return 1.0
    if code == M_RBP_RESID or code == M_RBP_RESIDUAL:  # bit b: judged (with a label >= 0
        # for trec_eval's rbp_resid, which is 0 when every item is)
        return rbp_residual(b, tmode, n, mparam[j, 0], code == M_RBP_RESID, n_e, estart,
                            esize, ecnt)
    if code == M_RBP_BIN:  # relevant items (bit b) first is the largest value
        p = mparam[j, 0]
        return (1.0 - p) * flagged_mass(b, tmode, p, tmode == OPTIMISTIC, n_e, estart, esize,
                                        ecnt)
    if code == M_BING:
        return bing_sum(b, tmode, n_e, estart, esize, ecnt) / n_rel if n_rel > 0 else 0.0
    if code == M_BPREF_RANX:  # b2: judged at all (a negative label too), so N = n_rel2 - R
        if n_rel <= 0:
            return 0.0
        if n_rel2 == n_rel:  # no judged non-relevant document: ranx's terms are 0 / 0
            return np.nan if count_top(n, b, tmode, n_e, estart, esize, ecnt) > 0 else 0.0
        return bpref_sum(b, b2, tmode, n_rel, n_rel2 - n_rel, n_e, esize, ecnt) / n_rel
    if code == M_INFAP:  # b2: judged with a label >= 0, b3: judged at all
        return infap_sum(b, b2, b3, n_e, estart, ecnt) / n_rel if n_rel > 0 else 0.0
    if code == M_IPREC or code == M_11PT_AVG or code == M_IPREC_TE9 or code == M_11PT_AVG_TE9:
        if n_rel <= 0:  # 11pt_avg: summed from recall 1.0 down, as trec_eval adds them
            return 0.0
        one = code == M_IPREC or code == M_IPREC_TE9
        levels = 1 if one else 11
        total = 0.0
        for i in range(levels):
            x = mparam[j, 0] if one else (10 - i) / 10.0
            if code == M_IPREC_TE9 or code == M_11PT_AVG_TE9:  # trec_eval 9: truncated
                c = np.int64(x * n_rel + 0.9)
            else:
                c = _round_half_up(x * n_rel)
            total += iprec(c, b, tmode, n_e, estart, esize, ecnt)
        return total if one else total / 11.0
    depth = n  # the whole list: utility, set_F
    mode = tmode
    cut = np.int64(0)
    if code == M_UNJ:  # bit b: judged with a label >= 0; the largest value of unj
        depth = t      # ("optimistic") puts the judged members of a tie group last
        mode = PESSIMISTIC if tmode == OPTIMISTIC else OPTIMISTIC if tmode == PESSIMISTIC \
            else tmode
    elif code == M_REL_P or code == M_F1:
        depth = t
    elif code == M_RPREC_MULT:  # trec_eval's rank: (long) (mult * R + 0.9)
        cut = np.int64(mparam[j, 0] * n_rel + 0.9)
        depth = min(max(cut, 0), n)
    found = count_top(depth, b, mode, n_e, estart, esize, ecnt)
    if code == M_UNJ:
        return (t - found) / k
    if code == M_UTILITY:  # trec_eval's contingency table, n: documents in the collection
        return (mparam[j, 0] * found + mparam[j, 1] * (n - found)
                + mparam[j, 2] * (n_rel - found)
                + mparam[j, 3] * (mparam[j, 4] + found - n - n_rel))
    if n_rel <= 0:
        return 0.0
    if code == M_REL_P:
        return found / min(k, n_rel)
    if code == M_RPREC_MULT:
        return found / cut if cut > 0 else 0.0
    if code == M_F1:  # ranx's f1: P@k (over k, or n for the whole list) and R@k, their
        d = n if k < 0 else k  # harmonic mean as ranx writes it
        if d == 0:
            return 0.0
        p = found / d
        r = found / n_rel
        if p + r == 0:
            return 0.0
        return 2 * ((p * r) / (p + r))
    if code == M_SET_F:
        if found == 0:
            return 0.0
        p = found / n
        r = found / n_rel
        x = mparam[j, 0]
        return (x + 1.0) * p * r / (x * p + r)
    return np.nan


@kernel(_nrt=False, inner=True)
def _groups(lo, n, scores, flags, nb, tmode, uval, ints, ecnt):
    """The query's flagged groups (:func:`.rank.flagged_groups`), none without flag
    bits (num_ret alone, the graded measures: no flags to read)."""
    if nb == 0:
        return 0
    return flagged_groups(lo, n, scores, flags, nb, tmode, uval, ints[4], ints[5], ints[6],
                          ints[7], ints[8], ints[9], ints[10], ecnt)


@kernel(_nrt=False)
def measures_chunk(q0, q1, offsets, scores, flags, nb, tmode, mcode, mk, mbit, n_rel, uval, ints,
                   ecnt, out):
    """The usual binary measures (codes up to ``BASIC_LAST``) of queries q0:q1: each
    query's flagged groups, then measure j (code ``mcode[j]``, cutoff ``mk[j]``,
    flag bits ``mbit[j, 0..1]``) into out[q, j]. A kernel of its own so that a job
    of the usual measures does not compile the others (:func:`measures_chunk_all`)."""
    for q in range(q0, q1):
        lo = offsets[q]
        n = offsets[q + 1] - lo
        n_e = _groups(lo, n, scores, flags, nb, tmode, uval, ints, ecnt)
        for j in range(len(mcode)):
            if mcode[j] > BASIC_LAST:  # graded_chunk's
                continue
            b = mbit[j, 0]
            b2 = mbit[j, 1]
            out[q, j] = measure_value_basic(mcode[j], mk[j], b, b2, tmode, n,
                                            n_rel[q, b] if nb > 0 else 0,
                                            n_rel[q, b2] if nb > 0 else 0, n_e, ints[9],
                                            ints[10], ecnt)


@kernel(_nrt=False)
def measures_chunk_all(q0, q1, offsets, scores, flags, nb, tmode, mcode, mk, mbit, mparam, n_rel,
                       uval, ints, ecnt, out):
    """Every binary measure of queries q0:q1, as :func:`measures_chunk`, with the
    number parameters ``mparam[j]`` and a third flag bit ``mbit[j, 2]``."""
    for q in range(q0, q1):
        lo = offsets[q]
        n = offsets[q + 1] - lo
        n_e = _groups(lo, n, scores, flags, nb, tmode, uval, ints, ecnt)
        for j in range(len(mcode)):
            if mcode[j] >= GRADED_FIRST:  # graded_chunk's
                continue
            b = mbit[j, 0]
            b2 = mbit[j, 1]
            out[q, j] = measure_value(mcode[j], mk[j], b, b2, mbit[j, 2], tmode, n,
                                      n_rel[q, b] if nb > 0 else 0,
                                      n_rel[q, b2] if nb > 0 else 0, n_e, ints[9], ints[10], ecnt,
                                      mparam, j)


# --------------------------------------------------------------------------- graded measures
# They read a query's gains in rank order, ``rg[0:n]`` (for "average" each rank of
# a tie group carries the group's mean gain), and its ideal gains sorted
# descending, ``itop[0:ni]`` (ranks past ni: 0). The trec_eval measures follow its
# loops (m_G.c, m_ndcg_rel.c, m_Rndcg.c, m_rbp.c) step for step.


@kernel(_nrt=False, inner=True)
def _ideal(itop, ni, i):
    return itop[i] if i < ni else 0.0


@kernel(_nrt=False, inner=True)
def trec_g(n, rg, ni, itop):
    """trec_eval's G: each gain g at rank i over log2(2 + (ideal gains to rank i,
    each at least 1) - (gains to rank i)), summed, over the ideal gains' sum."""
    results_g = 0.0
    sum_results = 0.0
    sum_ideal = 0.0
    sum_cost = 0.0
    ig = _ideal(itop, ni, 0)
    i = np.int64(0)
    while i < n and ig > 0.0:
        g = rg[i]
        sum_results += g
        ig = _ideal(itop, ni, i)
        if ig > 0.0:
            sum_ideal += ig
        sum_cost += ig if ig >= 1.0 else 1.0
        if g != 0.0:
            results_g += g / np.log2(2.0 + sum_cost - sum_results)
        i += 1
    while i < n:
        g = rg[i]
        sum_results += g
        sum_cost += 1.0
        if g != 0.0:
            results_g += g / np.log2(2.0 + sum_cost - sum_results)
        i += 1
    while ig > 0.0:
        ig = _ideal(itop, ni, i)
        if ig > 0.0:
            sum_ideal += ig
        i += 1
    return results_g / sum_ideal if sum_ideal > 0.0 else 0.0


@kernel(_nrt=False, inner=True)
def trec_ndcg_rel(n, rg, ni, itop):
    """trec_eval's ndcg_rel: NDCG (linear discount log2(rank + 1)) at the rank of
    each item with a gain above 0, averaged over the ideal list's positive gains
    (those not retrieved count at the end of the list)."""
    results_dcg = 0.0
    ideal_dcg = 0.0
    total = 0.0
    num_rel_ret = np.int64(0)
    num_rel = np.int64(0)
    ig = _ideal(itop, ni, 0)
    i = np.int64(0)
    while i < n and ig > 0.0:
        g = rg[i]
        if g != 0.0:
            results_dcg += g / np.log2(i + 2.0)
        ig = _ideal(itop, ni, i)
        if ig > 0.0:
            num_rel += 1
            ideal_dcg += ig / np.log2(i + 2.0)
        if g > 0.0:
            total += results_dcg / ideal_dcg
            num_rel_ret += 1
        i += 1
    while i < n:
        g = rg[i]
        if g != 0.0:
            results_dcg += g / np.log2(i + 2.0)
        if g > 0.0:
            total += results_dcg / ideal_dcg
            num_rel_ret += 1
        i += 1
    while ig > 0.0:
        ig = _ideal(itop, ni, i)
        if ig > 0.0:
            num_rel += 1
            ideal_dcg += ig / np.log2(i + 2.0)
        i += 1
    if ideal_dcg > 0.0:
        total += (num_rel - num_rel_ret) * results_dcg / ideal_dcg
    return total / num_rel if total > 0.0 else 0.0


@kernel(_nrt=False, inner=True)
def ndcg_rel_expected(n, rg, rgain, gsize, ni, itop):
    """:func:`trec_ndcg_rel`'s expected value over the orderings of tied items
    (``fastndcg.reference._ndcg_rel_expected`` derives it): a group of m ranks
    starting at r has mean gain ``rg[r]``, size ``gsize[r]`` and its gains in
    ``rgain[r:r + m]`` (any order); the term of rank i takes P/m x the expected
    DCG above the group, (P x S - S+) / (m (m - 1)) for each rank of the group
    above i and S+/m for rank i itself (P positive gains, sum S, positive sum S+)."""
    n_ideal = np.int64(0)
    while n_ideal < ni and itop[n_ideal] > 0.0:
        n_ideal += 1
    if n_ideal == 0:
        return 0.0
    total = 0.0
    before = 0.0
    ideal_dcg = 0.0
    found = np.int64(0)
    r = np.int64(0)
    while r < n:
        m = gsize[r]
        pos = np.int64(0)
        plus = 0.0
        for p in range(r, r + m):
            if rgain[p] > 0.0:
                pos += 1
                plus += rgain[p]
        s = rg[r] * m
        pair = (pos * s - plus) / (m * (m - 1.0)) if m > 1 else 0.0
        inside = 0.0
        for i in range(r, r + m):
            d = 1.0 / np.log2(i + 2.0)
            if i < n_ideal:
                ideal_dcg += itop[i] / np.log2(i + 2.0)
            if pos > 0:
                total += (pos / m * before + pair * inside + plus / m * d) / ideal_dcg
            inside += d
        before += rg[r] * inside
        found += pos
        r += m
    for i in range(n, n_ideal):
        ideal_dcg += itop[i] / np.log2(i + 2.0)
    total += (n_ideal - found) * before / ideal_dcg
    return total / n_ideal if total > 0.0 else 0.0


@kernel(_nrt=False, inner=True)
def trec_rndcg(n, rg, ni, itop):
    """trec_eval's Rndcg: NDCG at each rank where the ideal gain changes (and at
    the end of the list), averaged."""
    results_dcg = 0.0
    ideal_dcg = 0.0
    total = 0.0
    changes = np.int64(0)
    ig = _ideal(itop, ni, 0)
    old = ig
    i = np.int64(0)
    while i < n and ig > 0.0:
        g = rg[i]
        ig = _ideal(itop, ni, i)
        if old != ig:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                changes += 1
            old = ig
        if g != 0.0:
            results_dcg += g / np.log2(i + 2.0)
        if ig > 0.0:
            ideal_dcg += ig / np.log2(i + 2.0)
        i += 1
    if i < n:
        while i < n:
            g = rg[i]
            if g != 0.0:
                results_dcg += g / np.log2(i + 2.0)
            i += 1
        if ideal_dcg > 0.0:
            total += results_dcg / ideal_dcg
            changes += 1
    while ig > 0.0:
        ig = _ideal(itop, ni, i)
        if old != ig:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                changes += 1
            old = ig
        if ig > 0.0:
            ideal_dcg += ig / np.log2(i + 2.0)
        i += 1
    if changes == 0:  # no positive ideal gain: trec_eval divides 0 by 0 (C's -nan)
        return math.copysign(np.nan, -1.0)  # the sign bit set, as -np.nan does not keep
    return total / changes


@kernel(_nrt=False, inner=True)
def trec_rbp(n, rg, p, largest):
    """trec_eval's rbp: (1 - p) x the sum of gain x p^rank (0-based), gains divided
    by the query's largest ideal gain when it is above 1 (trec_eval's scaling into
    [0, 1], with the bounds its code reads as 0 and the largest grade)."""
    scale = largest if largest > 1.0 else 1.0
    total = 0.0
    cur = 1.0
    for i in range(n):
        g = rg[i] / scale
        if g != 0.0:
            total += g * cur
        cur = cur * p
    return (1.0 - p) * total


@kernel(_nrt=False, inner=True)
def rbp_listed_scale(listed_max, ilabels, ilo, ni, gmode, table):
    """trec_eval's rbp with grade=gain pairs scales by the largest of the gains it
    lists (``listed_max``) and those of the grades 0..the query's largest judged
    grade (each listed one or the grade itself)."""
    top = np.int64(-1)
    for i in range(ni):
        v = np.int64(ilabels[ilo + i])
        if v > top:
            top = v
    s = listed_max
    if gmode != TABLE:  # gains grow with the grade: the largest grade's
        if top >= 0:
            g = float(top) if gmode == LINEAR else 2.0 ** float(top) - 1.0
            if g > s:
                s = g
        return s
    for g in range(top + 1):
        if table[g] > s:
            s = table[g]
    return s


@kernel(_nrt=False, inner=True)
def _grade(gain, gmode):
    """The grade behind a gain: the label under linear gain, log2(gain + 1) under
    exp2 (exact for whole labels), never below 0."""
    g = np.log2(gain + 1.0) if gmode == EXP2 else gain
    return g if g > 0.0 else 0.0


@kernel(_nrt=False, inner=True)
def err(t, rg, gmode, top):
    """ERR@t (Chapelle et al., CIKM 2009, as gdeval computes it): the sum over
    ranks i < t of R_i / (i + 1) x the product of (1 - R_j) above, R = (2^grade -
    1) / 2^top, ``top`` the largest grade (gdeval: 4)."""
    total = 0.0
    decay = 1.0
    low = 2.0 ** -top  # R = 2^(grade - top) - 2^-top: no 2^grade to overflow (grade <= top)
    for i in range(t):
        r = 2.0 ** (_grade(rg[i], gmode) - top) - low
        total += r * decay / (i + 1)
        decay *= 1.0 - r
    return total


@kernel(_nrt=False)
def graded_chunk(q0, q1, offsets, scores, labels, ioffsets, ilabels, gmode, table, tmode,
                 mcode, mk, mbit, mparam, nb, n_rel, top, ints, rgain, ggain, rg, igains,
                 itop, out, dcg_too, ks, disc, cdisc, out_dcg):
    """The graded measures (codes from ``GRADED_FIRST`` on) of queries q0:q1: each
    query ranked whole (:func:`.rank.rank_query`), its gains in rank order into
    ``rg``, its ideal gains sorted descending into ``itop``, then measure j into
    out[q, j]; with ``dcg_too``, DCG at the cutoffs ``ks`` into out_dcg from the
    same ranking (:func:`dcg_walk`: what :func:`dcg_chunk` gives, which ranks
    only down to the deepest cutoff), so a query is ranked once. Scratch: ``top``
    (the scores' dtype), ``ints`` (rows 0-2: group starts, fill, sizes), ``rgain``,
    ``ggain``, ``rg``, ``igains``, ``itop``."""
    rmode = tmode  # ndcg_rel's expectation reads each group's gains (ranked as "optimistic")
    if tmode == AVERAGE:
        for j in range(len(mcode)):
            if mcode[j] == M_NDCG_REL:
                rmode = OPTIMISTIC
    for q in range(q0, q1):
        lo = offsets[q]
        n = offsets[q + 1] - lo
        if n > 0:
            rank_query(lo, n, n, scores, labels, rmode, gmode, table, top, ints[0], ints[1],
                       ints[2], ggain, rgain)
        if dcg_too:
            dcg_walk(q, n, n, ks, disc, cdisc, tmode, ints[2], ggain, rgain, out_dcg)
        if n > 0:
            if tmode == OPTIMISTIC or tmode == PESSIMISTIC:
                for p in range(n):
                    rg[p] = rgain[p]
            else:
                r = np.int64(0)
                while r < n:
                    s = ints[2, r]
                    mean = ggain[r] / s
                    for p in range(r, r + s):
                        rg[p] = mean
                    r += s
        ilo = ioffsets[q]
        ni = ioffsets[q + 1] - ilo
        for i in range(ni):
            igains[i] = gain_value(ilabels[ilo + i], gmode, table)
        if ni > 0:
            select_top(igains, np.int64(0), ni, ni, itop)
        for j in range(len(mcode)):
            code = mcode[j]
            if code < GRADED_FIRST:
                continue
            if code == M_RBP:
                largest = _ideal(itop, ni, 0)
                if mparam.shape[1] > 2 and mparam[j, 1] == 1.0:  # trec_eval's listed gains
                    largest = rbp_listed_scale(mparam[j, 2], ilabels, ilo, ni, gmode, table)
                out[q, j] = trec_rbp(n, rg, mparam[j, 0], largest)
            elif code == M_G:
                out[q, j] = trec_g(n, rg, ni, itop)
            elif code == M_NDCG_REL:
                if tmode == AVERAGE:
                    out[q, j] = ndcg_rel_expected(n, rg, rgain, ints[2], ni, itop)
                else:
                    out[q, j] = trec_ndcg_rel(n, rg, ni, itop)
            elif code == M_ERR:  # grades scaled by 2^max(4, the query's largest grade)
                t = n if mk[j] < 0 else min(mk[j], n)
                top_grade = _grade(_ideal(itop, ni, 0), gmode)
                out[q, j] = err(t, rg, gmode, top_grade if top_grade > 4.0 else 4.0)
            elif code == M_RNDCG:  # 0 without a relevant judged document (at its threshold)
                has = n_rel[q, mbit[j, 0]] > 0 if nb > 0 else False
                out[q, j] = trec_rndcg(n, rg, ni, itop) if has else 0.0


# --------------------------------------------------------------------------- NDCG


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
