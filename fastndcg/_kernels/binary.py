"""Numba kernels of the binary measures: each an accumulator over a query's
flagged groups, and the kernels that score a chunk of queries with them.

The binary measures read the query's flagged groups (:func:`.rank.flagged_groups`:
only the tie groups holding a relevant or judged item, with their start rank,
size and flag counts), which need no ranking of the other items, however deep
the measure looks. Each measure is one small function here, dispatched on an
integer code at run time: a new set of measures compiles nothing new. The usual
ones (family ``F_BASIC``) have a kernel of their own, :func:`measures_chunk`, so
that a job of the usual measures does not compile the others
(:func:`measures_chunk_all`, family ``F_BINARY`` too).

Tie rules (a flag per item): "average" is the exact expected value over all
orderings of each tied group (McSherry & Najork, ECIR 2008);
"optimistic"/"pessimistic" put the flagged members of each tied group first/last
(the best/worst ordering for these measures); "stable" groups are single ranks,
for which every formula below is the plain one.

A query's flagged groups are entries in rank order: entry e starts at rank
estart[e] (0-based), has esize[e] members and ecnt[e, b] of them with flag bit b.
Groups without a flagged item add nothing to these measures, so they are not
listed. In the accumulators, t is the number of ranks looked at and b the flag bit.
"""

from __future__ import annotations

import numpy as np

from .codes import (F_BASIC, F_GRADED, M_11PT_AVG, M_11PT_AVG_TE9, M_AP, M_BING, M_BPREF,
                    M_BPREF_RANX, M_F1, M_HITS, M_INFAP, M_IPREC, M_IPREC_TE9, M_JUDGED,
                    M_NUM_NONREL_JUDGED_RET, M_NUM_Q, M_NUM_REL, M_NUM_REL_RET, M_NUM_RET, M_P,
                    M_R, M_RBP_BIN, M_RBP_RESID, M_RBP_RESIDUAL, M_REL_P, M_RPREC,
                    M_RPREC_MULT, M_RR, M_SET_F, M_SET_MAP, M_SET_P, M_SET_R, M_SET_REL_P,
                    M_SUCCESS, M_UNJ, M_UTILITY, OPTIMISTIC, PESSIMISTIC)
from .bundles import GroupScratch, Lists, Measures
from .rank import flagged_groups
from ._jit import kernel


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
    """One of the usual binary measures (family ``F_BASIC``: P, R, hits, Success, RR, AP,
    R-precision, Judged, the counts, bpref and the set measures) of one
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
    if code == M_JUDGED or code == M_P or code == M_R or code == M_HITS:
        depth = t
    elif code == M_RPREC:
        depth = min(n_rel, n)
    found = count_top(depth, b, tmode, n_e, estart, esize, ecnt)
    if code == M_NUM_REL_RET or code == M_HITS:
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
    """One of the other binary measures (family ``F_BINARY``) of one query, as
    :func:`measure_value_basic`, with the measure's number parameters
    ``mparam[j]`` and a third flag bit ``b3`` (the judged one for infAP)."""
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
def _groups(lo, n, scores, flags, nb, tmode, s):
    """The query's flagged groups (:func:`.rank.flagged_groups`, in ``s``, a
    :class:`.bundles.GroupScratch`), none without flag bits (num_ret alone, the
    graded measures: no flags to read)."""
    if nb == 0:
        return 0
    return flagged_groups(lo, n, scores, flags, nb, tmode, s)


@kernel(_nrt=False)
def measures_chunk(q0, q1, lists, tmode, plan, s, out):
    """The usual binary measures (family ``F_BASIC``) of ``plan`` (a
    :class:`.bundles.Measures`) for queries q0:q1 of ``lists``: each query's
    flagged groups (``s``: a :class:`.bundles.GroupScratch`), then measure j (code
    ``plan.codes[j]``, cutoff ``plan.cutoffs[j]``, flag bits ``plan.bits[j, 0..1]``)
    into out[q, j]. A kernel of its own so that a job of the usual measures does not
    compile the others (:func:`measures_chunk_all`)."""
    lists, plan, s = Lists(*lists), Measures(*plan), GroupScratch(*s)
    offsets = lists.offsets
    n_rel = plan.n_rel
    nb = plan.n_bits
    for q in range(q0, q1):
        lo = offsets[q]
        n = offsets[q + 1] - lo
        n_e = _groups(lo, n, lists.scores, plan.flags, nb, tmode, s)
        for j in range(len(plan.codes)):
            if plan.families[j] != F_BASIC:  # graded_chunk's
                continue
            b = plan.bits[j, 0]
            b2 = plan.bits[j, 1]
            out[q, j] = measure_value_basic(plan.codes[j], plan.cutoffs[j], b, b2, tmode, n,
                                            n_rel[q, b] if nb > 0 else 0,
                                            n_rel[q, b2] if nb > 0 else 0, n_e, s.estart,
                                            s.esize, s.ecnt)


@kernel(_nrt=False)
def measures_chunk_all(q0, q1, lists, tmode, plan, s, out):
    """Every binary measure of ``plan`` (families ``F_BASIC`` and ``F_BINARY``) for
    queries q0:q1, as :func:`measures_chunk`, with the number parameters
    ``plan.params[j]`` and a third flag bit ``plan.bits[j, 2]``."""
    lists, plan, s = Lists(*lists), Measures(*plan), GroupScratch(*s)
    offsets = lists.offsets
    n_rel = plan.n_rel
    nb = plan.n_bits
    for q in range(q0, q1):
        lo = offsets[q]
        n = offsets[q + 1] - lo
        n_e = _groups(lo, n, lists.scores, plan.flags, nb, tmode, s)
        for j in range(len(plan.codes)):
            family = plan.families[j]
            if family == F_GRADED:  # graded_chunk's
                continue
            code = plan.codes[j]
            b = plan.bits[j, 0]
            b2 = plan.bits[j, 1]
            r = n_rel[q, b] if nb > 0 else 0
            r2 = n_rel[q, b2] if nb > 0 else 0
            if family == F_BASIC:
                out[q, j] = measure_value_basic(code, plan.cutoffs[j], b, b2, tmode, n, r, r2,
                                                n_e, s.estart, s.esize, s.ecnt)
            else:
                out[q, j] = measure_value(code, plan.cutoffs[j], b, b2, plan.bits[j, 2], tmode,
                                          n, r, r2, n_e, s.estart, s.esize, s.ecnt,
                                          plan.params, j)
