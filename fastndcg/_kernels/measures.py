"""Numba kernels: the measures, each an accumulator over a query's ranked summary
(the second of a query's two steps; :mod:`.rank` makes the summary).

A ranked summary describes the first m ranks of a query in tie groups: the group
starting at rank r has ``gsize[r]`` members (all of them, also those past the
cut), gain sum ``ggain[r]`` and ``gcnt[r, b]`` members with flag bit b (relevant
at a threshold, or judged); with optimistic/pessimistic ties ``rgain[p]`` is the
gain at rank p. Every accumulator reads only that, so a measure is one small
function here, dispatched on an integer code at run time: a new set of measures
compiles nothing new.

Tie rules, for the binary measures (a flag per item): "average" is the exact
expected value over all orderings of each tied group (McSherry & Najork, ECIR
2008); "optimistic"/"pessimistic" put the flagged members of each tied group
first/last (the best/worst ordering for these measures); "stable" groups are
single ranks, for which every formula below is the plain one.
"""

from __future__ import annotations

import numpy as np


from .codes import (M_AP, M_JUDGED, M_NUM_REL, M_NUM_REL_RET, M_NUM_RET, M_P, M_R,
                    M_RPREC, M_RR, M_SUCCESS, OPTIMISTIC, PESSIMISTIC, STABLE, TABLE)
from .codes import BY_GAIN
from .rank import gain_value, top_k, top_values
from ._jit import kernel


@kernel(inline="always")
def _record(acc, rank, ks, j, out, q):
    """Store ``acc`` for every cutoff equal to ``rank``; returns the next cutoff index."""
    while j < len(ks) and ks[j] == rank:
        out[q, j] = acc
        j += 1
    return j


@kernel(inline="always")
def dcg_walk(q, m, ks, disc, tmode, gsize, ggain, rgain, out):
    """DCG at every cutoff in ``ks`` (sorted, unique) from the ranked summary: each
    rank of a tie group carries the group's mean gain ("average"; single ranks for
    "stable"), or the gain of the rank ("optimistic"/"pessimistic"). The next
    cutoff is kept in a register."""
    j = np.int64(0)
    nk = len(ks)
    nxt = ks[0]
    acc = 0.0
    if tmode == OPTIMISTIC or tmode == PESSIMISTIC:
        for p in range(m):
            acc += rgain[p] * disc[p]
            if p + 1 == nxt:
                out[q, j] = acc
                j += 1
                nxt = ks[j] if j < nk else -1
    else:
        r = np.int64(0)
        while r < m:
            size = gsize[r]
            mean = ggain[r] / size
            e = min(r + size, m)
            for p in range(r, e):
                acc += mean * disc[p]
                if p + 1 == nxt:
                    out[q, j] = acc
                    j += 1
                    nxt = ks[j] if j < nk else -1
            r = e
    while j < nk:
        out[q, j] = acc
        j += 1


@kernel(inline="always")
def _walk_ranks(q, m, ks, disc, rgain, out):
    """DCG at every cutoff from the gains by rank ``rgain[0:m]``."""
    j = np.int64(0)
    nk = len(ks)
    nxt = ks[0]
    acc = 0.0
    for p in range(m):
        acc += rgain[p] * disc[p]
        if p + 1 == nxt:
            out[q, j] = acc
            j += 1
            nxt = ks[j] if j < nk else -1
    while j < nk:
        out[q, j] = acc
        j += 1


@kernel(inline="always")
def idcg_one(q, lo, n, ks, disc, scores, labels, gmode, table, hist_order, counts,
             buf, stack, top_l, rgain, out):
    """IDCG at every cutoff in ``ks`` of the labels at rows lo:lo+n (the ideal
    ranking: gains descending, so ties in gain do not matter).

    With ``hist_order`` non-empty (labels are integers 0..L-1; hist_order lists the
    label values by gain, highest first) labels are counted instead of selected.
    """
    j = np.int64(0)
    acc = 0.0
    kmax = ks[len(ks) - 1]
    if len(hist_order) > 0 and n < 256 and len(hist_order) <= 8:
        # eight 8-bit counters in one register (no store-to-load chains), then
        # the gains by rank, then one walk
        word = np.uint64(0)
        for i in range(lo, lo + n):
            word += np.uint64(1) << np.uint64(8 * int(labels[i]))
        m = min(kmax, n)
        p = np.int64(0)
        for label in hist_order:
            c = np.int64((word >> np.uint64(8 * label)) & np.uint64(255))
            g = gain_value(label, gmode, table)
            e = min(p + c, m)
            for r in range(p, e):
                rgain[r] = g
            p = e
        _walk_ranks(q, m, ks, disc, rgain, out)
        return
    if len(hist_order) > 0:
        counts[:] = 0
        for i in range(lo, lo + n):
            counts[int(labels[i])] += 1
        p = np.int64(0)
        for label in hist_order:
            c = counts[label]
            if c == 0:
                continue
            g = gain_value(label, gmode, table)
            while c > 0 and p < kmax:
                acc += g * disc[p]
                p += 1
                c -= 1
                j = _record(acc, p, ks, j, out, q)
            if p >= kmax:
                break
    else:
        m = -1
        if gmode != TABLE and min(kmax, n) <= len(top_l):
            # monotone gains rank like the labels themselves: select label values
            m = top_values(labels, lo, n, kmax, top_l)
        by_value = m >= 0
        if not by_value:
            # BY_GAIN reads labels only: scores are passed so that this call
            # shares its compiled specialisation with the ranking's
            m = top_k(buf, stack, lo, n, kmax, np.int64(BY_GAIN), scores, labels,
                      np.int64(STABLE), gmode, table)
        for p in range(m):
            label = top_l[p] if by_value else labels[lo + buf[p]]
            acc += gain_value(label, gmode, table) * disc[p]
            j = _record(acc, p + 1, ks, j, out, q)
    while j < len(ks):
        out[q, j] = acc
        j += 1


# --------------------------------------------------------------------------- binary measures
# t: the ranks looked at (t <= m); b: the flag bit; groups are walked by their start rank.


@kernel
def count_top(t, b, tmode, gsize, gcnt):
    """Flagged items in the top t ranks: expected ("average"), or exact."""
    total = 0.0
    r = np.int64(0)
    while r < t:
        s = gsize[r]
        c = gcnt[r, b]
        inside = min(r + s, t) - r
        if tmode == OPTIMISTIC:
            total += min(c, inside)
        elif tmode == PESSIMISTIC:
            total += max(0, inside - (s - c))
        else:
            total += c * inside / s
        r += s
    return total


@kernel
def _first_flagged(t, b, gsize, gcnt):
    """Start rank of the first group before rank t with a flagged member, or -1."""
    r = np.int64(0)
    while r < t:
        if gcnt[r, b] > 0:
            return r
        r += gsize[r]
    return np.int64(-1)


@kernel
def success(t, b, tmode, gsize, gcnt):
    """1 if a flagged item is in the top t (its probability, for "average")."""
    r = _first_flagged(t, b, gsize, gcnt)
    if r < 0:
        return 0.0
    s = gsize[r]
    c = gcnt[r, b]
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


@kernel
def reciprocal_rank(t, b, tmode, gsize, gcnt):
    """1 / rank of the first flagged item when that rank is <= t, else 0 (for
    "average": its expectation; the first flagged member of a group of s with c
    flagged is at position j with probability C(s-j, c-1) / C(s, c))."""
    r = _first_flagged(t, b, gsize, gcnt)
    if r < 0:
        return 0.0
    s = gsize[r]
    c = gcnt[r, b]
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


@kernel
def precision_sum(t, b, tmode, gsize, gcnt):
    """The sum of the precisions at the ranks <= t of flagged items (AP's numerator).
    For "average", a group at ranks a+1..a+s with c flagged members after C
    flagged items adds, at each position j, E[flag_j (C + flags up to j)] / (a + j)
    = [(C + 1) c / s + (j - 1) c (c - 1) / (s (s - 1))] / (a + j)."""
    total = 0.0
    before = np.int64(0)
    r = np.int64(0)
    while r < t:
        s = gsize[r]
        c = gcnt[r, b]
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
        r += s
    return total


@kernel
def measure_value(code, k, b, tmode, m, n, n_rel, gsize, gcnt):
    """One binary measure of one query. ``k``: the cutoff (-1: the whole list);
    ``n_rel``: R, the relevant judged documents of the query at this threshold.
    Denominators as trec_eval: P@k divides by k, Judged@k by min(k, n) (ir_measures), recall, AP and
    R-precision by R (0 when R is 0)."""
    t = n if k < 0 else min(k, n)
    if code == M_NUM_RET:
        return float(n)
    if code == M_NUM_REL:
        return float(n_rel)
    if code == M_NUM_REL_RET:
        return count_top(n, b, tmode, gsize, gcnt)
    if code == M_JUDGED:  # of the ranks there are, as ir_measures
        return count_top(t, b, tmode, gsize, gcnt) / t if t > 0 else 0.0
    if code == M_P:
        d = n if k < 0 else k
        return count_top(t, b, tmode, gsize, gcnt) / d if d > 0 else 0.0
    if code == M_SUCCESS:
        return success(t, b, tmode, gsize, gcnt)
    if code == M_RR:
        return reciprocal_rank(t, b, tmode, gsize, gcnt)
    if n_rel <= 0:
        return 0.0
    if code == M_R:
        return count_top(t, b, tmode, gsize, gcnt) / n_rel
    if code == M_AP:
        return precision_sum(t, b, tmode, gsize, gcnt) / n_rel
    if code == M_RPREC:
        return count_top(min(n_rel, n), b, tmode, gsize, gcnt) / n_rel
    return np.nan
