"""Numba kernels of the graded measures: they read a query's gains in rank order
and its ideal gains (trec_eval's G, ndcg_rel, Rndcg and rbp; ERR@k), and the
kernel that scores a chunk of queries with them, :func:`graded_chunk`.

They read a query's gains in rank order, ``rg[0:n]`` (for "average" each rank of
a tie group carries the group's mean gain), and its ideal gains sorted
descending, ``itop[0:ni]`` (ranks past ni: 0). The trec_eval measures follow its
loops (m_G.c, m_ndcg_rel.c, m_Rndcg.c, m_rbp.c) step for step.
"""

from __future__ import annotations

import math

import numpy as np

from .codes import (AVERAGE, EXP2, F_GRADED, LINEAR, M_ERR, M_G, M_NDCG_REL, M_RBP, M_RNDCG,
                    OPTIMISTIC, PESSIMISTIC, TABLE)
from .bundles import Cuts, GradedScratch, Ideal, Lists, Measures, RankScratch, Rules
from .ndcg import dcg_walk
from .rank import gain_value, rank_query, select_top
from ._jit import kernel


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
def graded_chunk(q0, q1, lists, ideal, rules, plan, s, out, dcg_too, cuts, out_dcg):
    """The graded measures (family ``F_GRADED``) of ``plan`` (a
    :class:`.bundles.Measures`) for queries q0:q1: each query of ``lists`` ranked
    whole (:func:`.rank.rank_query`), its gains in rank order into ``s.rg``, its
    ideal gains (``ideal``) sorted descending into ``s.itop``, then measure j into
    out[q, j]; with ``dcg_too``, DCG at the cutoffs ``cuts`` into out_dcg from the
    same ranking (:func:`.ndcg.dcg_walk`: what :func:`.ndcg.dcg_chunk` gives,
    which ranks only down to the deepest cutoff), so a query is ranked once.
    ``s``: a :class:`.bundles.GradedScratch`."""
    lists, ideal, rules, plan = Lists(*lists), Ideal(*ideal), Rules(*rules), Measures(*plan)
    s, cuts = GradedScratch(*s), Cuts(*cuts)
    ranking = RankScratch(*s.rank)
    offsets = lists.offsets
    ioffsets = ideal.offsets
    ilabels = ideal.labels
    gmode = rules.gain
    table = rules.table
    tmode = rules.ties
    gsize = ranking.gsize
    ggain = ranking.ggain
    rgain = ranking.rgain
    rg = s.rg
    igains = s.igains
    itop = s.itop
    mcode = plan.codes
    mk = plan.cutoffs
    mparam = plan.params
    rmode = tmode  # ndcg_rel's expectation reads each group's gains (ranked as "optimistic")
    if tmode == AVERAGE:
        for j in range(len(mcode)):
            if mcode[j] == M_NDCG_REL:
                rmode = OPTIMISTIC
    for q in range(q0, q1):
        lo = offsets[q]
        n = offsets[q + 1] - lo
        if n > 0:
            rank_query(lo, n, n, lists.scores, lists.labels, rmode, gmode, table, ranking)
        if dcg_too:
            dcg_walk(q, n, n, cuts, tmode, gsize, ggain, rgain, out_dcg)
        if n > 0:
            if tmode == OPTIMISTIC or tmode == PESSIMISTIC:
                for p in range(n):
                    rg[p] = rgain[p]
            else:
                r = np.int64(0)
                while r < n:
                    size = gsize[r]
                    mean = ggain[r] / size
                    for p in range(r, r + size):
                        rg[p] = mean
                    r += size
        ilo = ioffsets[q]
        ni = ioffsets[q + 1] - ilo
        for i in range(ni):
            igains[i] = gain_value(ilabels[ilo + i], gmode, table)
        if ni > 0:
            select_top(igains, np.int64(0), ni, ni, itop)
        for j in range(len(mcode)):
            if plan.families[j] != F_GRADED:
                continue
            code = mcode[j]
            if code == M_RBP:
                largest = _ideal(itop, ni, 0)
                if mparam.shape[1] > 2 and mparam[j, 1] == 1.0:  # trec_eval's listed gains
                    largest = rbp_listed_scale(mparam[j, 2], ilabels, ilo, ni, gmode, table)
                out[q, j] = trec_rbp(n, rg, mparam[j, 0], largest)
            elif code == M_G:
                out[q, j] = trec_g(n, rg, ni, itop)
            elif code == M_NDCG_REL:
                if tmode == AVERAGE:
                    out[q, j] = ndcg_rel_expected(n, rg, rgain, gsize, ni, itop)
                else:
                    out[q, j] = trec_ndcg_rel(n, rg, ni, itop)
            elif code == M_ERR:  # grades scaled by 2^max(4, the query's largest grade)
                t = n if mk[j] < 0 else min(mk[j], n)
                top_grade = _grade(_ideal(itop, ni, 0), gmode)
                out[q, j] = err(t, rg, gmode, top_grade if top_grade > 4.0 else 4.0)
            elif code == M_RNDCG:  # 0 without a relevant judged document (at its threshold)
                has = plan.n_rel[q, plan.bits[j, 0]] > 0 if plan.n_bits > 0 else False
                out[q, j] = trec_rndcg(n, rg, ni, itop) if has else 0.0
