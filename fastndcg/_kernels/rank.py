"""Numba kernels: ranking one query into tie groups (the first of a query's two steps).

Nothing here validates input: :mod:`fastndcg.api` and the evaluation modules
check everything at the public boundary and hand over clean CSR arrays (no NaN
score reaches a kernel). Every array and setting is an argument; kernels compile
lazily on first call and are cached on disk.

:func:`rank_query` ranks the rows lo:lo+n of a query down to rank m = min(k, n),
k the deepest DCG cutoff, and leaves a *ranked summary* that DCG reads (:mod:`.ndcg`):
arrays indexed by rank, where the tie group starting at rank r is described at
index r (the entries between two group starts are not read):

* ``gsize[r]``: the members of the group, all of them (the group straddling the
  cut counts its members beyond m too, so tie-aware measures take its mean);
* ``ggain[r]``: the sum of their gains, added up in input order;
* ``rgain[p]``: with optimistic/pessimistic ties, the gain at each rank p < m of
  the order those rules make (each group's gains, highest or lowest first).

Groups are the groups of equal scores for "average", "optimistic" and
"pessimistic", and single ranks for "stable" (ties broken by input order; the
caller puts rows in document id order for trec_eval's rule, so "trec" is
"stable" here).

How, per query. The usual case, a cut of at most SHORT_MAX ranks under
"average" or "stable" ties, takes one pass: :func:`rank_pairs` for lists of at
most PAIR_MAX rows (a row's group starts at the number of rows above it), else
:func:`rank_short` (the first m positions kept in rank order by insertion; the
rows tied with the m-th outside the buffer counted as they pass). The general
path, :func:`rank_query`, takes two plain steps:

1. :func:`select_top` finds the m largest score *values*, with multiplicity,
   sorted: by insertion into a small sorted buffer when m <= INSERT_MAX (a row
   that does not beat the m-th costs one comparison), else in a min-heap of m
   values, sorted at the end. Values only: positions are not needed to know the
   groups.
2. The distinct values among them are the tie groups above the cut, and one
   pass over the query in input order puts each row scoring at least the m-th
   value into its group: its gain is added there ("average"), it
   takes the next rank of its group ("stable"), and its gain is kept for the
   group's sort ("optimistic"/"pessimistic"). Input order therefore decides
   nothing under "average" (sums are in input order whatever the thread count or
   batch split), and ties keep input order under "stable".

The binary measures (P, R, AP, RR, ...) need only where the flagged items (relevant
at a threshold, judged) fall: :func:`flagged_groups` finds the tie groups that
hold one, with their start ranks, from the flagged items' sorted scores and one
counting pass, so measures reading the whole ranking (AP, RR, R@1000) sort only
the flagged items, never the whole list.

Scratch arrays come in named bundles (:mod:`.bundles`), allocated once per thread
by the caller (:mod:`.score`), so nothing is allocated per query.
"""

from __future__ import annotations

import numpy as np

from .codes import AVERAGE, EXP2, LINEAR, OPTIMISTIC, PESSIMISTIC, STABLE
from ._jit import kernel
from .threads import run_chunks

INSERT_MAX = 32  # cuts this shallow keep their top values by insertion; deeper ones sort
PAIR_MAX = 16  # lists this short are ranked by counting (:func:`rank_pairs`)
SHORT_MAX = 64  # cuts this shallow (average/stable ties) take the one-pass :func:`rank_short`
FIND_LINEAR = 128  # up to this many groups a row's group is found by a branchless count
SORT_INSERT = 64  # up to this many values are sorted by insertion, more by a heap


@kernel(_nrt=False, inner=True)
def gain_value(r, gmode, table):
    """Gain of label ``r`` (an int32 or float64, as the labels are given to the
    kernels; an integer is looked up without a round trip through float64, which
    measured 1.3x on ranking ~5-row lists): 2**r - 1, r, or table[r]. For exp2,
    ``table`` holds 2**i - 1 for i = 0, 1, ...: integer labels are looked up
    (exact), others use pow."""
    if gmode == EXP2:
        if 0 <= r < len(table):
            ri = int(r)
            if ri == r:
                return table[ri]
        return 2.0 ** float(r) - 1.0
    if gmode == LINEAR:
        return float(r)
    return table[int(r)]


@kernel(_nrt=False, inner=True)
def sift_min(h, size, root):
    """Restore the min-heap h[0:size] below ``root``. The smaller child is picked
    by adding the comparison, not by a branch: random data mispredicts that
    branch half the time (1.3x on selecting the top 100 of 1,000 values)."""
    x = h[root]
    while True:
        child = 2 * root + 1
        if child >= size:
            break
        if child + 1 < size:
            child += h[child + 1] < h[child]
        if not h[child] < x:
            break
        h[root] = h[child]
        root = child
    h[root] = x


@kernel(_nrt=False, inner=True)
def heap_desc(h, size):
    """Sort h[0:size], a min-heap, descending (each smallest goes to the end)."""
    for end in range(size - 1, 0, -1):
        h[0], h[end] = h[end], h[0]
        sift_min(h, end, np.int64(0))


@kernel(_nrt=False, inner=True)
def insert_desc(h, j, x):
    """Put x in h[0:j + 1], where h[0:j] is sorted descending: the values below x
    move down one place (h[j] is overwritten)."""
    while j > 0 and h[j - 1] < x:
        h[j] = h[j - 1]
        j -= 1
    h[j] = x


@kernel(_nrt=False, inner=True)
def sort_desc(h):
    """Sort h descending: by insertion up to SORT_INSERT values (2x faster than the
    heap there, scripts/groups_prototype.py), else a heapsort (O(n log n) whatever
    the input, no recursion)."""
    size = len(h)
    if size <= SORT_INSERT:
        for i in range(1, size):
            insert_desc(h, i, h[i])
        return
    for root in range(size // 2 - 1, -1, -1):
        sift_min(h, size, root)
    heap_desc(h, size)


@kernel(_nrt=False, inner=True)
def select_top(vals, lo, n, m, top):
    """The m (<= n) largest values of vals[lo:lo+n], with multiplicity, sorted
    descending into top[0:m]: by insertion into the sorted buffer when m <=
    INSERT_MAX (a row that does not beat the m-th costs one comparison), else in a
    min-heap of m (a row that does not beat its root costs one comparison), sorted
    at the end."""
    if m <= INSERT_MAX:
        for i in range(m):
            insert_desc(top, i, vals[lo + i])
        last = m - 1
        for i in range(m, n):
            x = vals[lo + i]
            if x > top[last]:
                insert_desc(top, last, x)
        return
    for i in range(m):
        top[i] = vals[lo + i]
    for root in range(m // 2 - 1, -1, -1):
        sift_min(top, m, root)
    for i in range(m, n):
        x = vals[lo + i]
        if x > top[0]:
            top[0] = x
            sift_min(top, m, np.int64(0))
    heap_desc(top, m)


@kernel(_nrt=False, inner=True)
def count_above(top, n_groups, v):
    """How many of top[0:n_groups] (strictly decreasing) are greater than v: the
    index of v's group when v is among them."""
    g = 0
    if n_groups <= FIND_LINEAR:
        # every comparison added, none branched on: the values run down in order,
        # so the count is the index, and the loop's exit does not depend on v
        for i in range(n_groups):
            g += top[i] > v
        return g
    hi = n_groups
    while g < hi:
        mid = (g + hi) >> 1
        if top[mid] > v:
            g = mid + 1
        else:
            hi = mid
    return g


@kernel(_nrt=False, inner=True)
def rank_pairs(lo, n, m, scores, labels, tmode, gmode, table, gsize, ggain):
    """:func:`rank_short` for lists of at most PAIR_MAX rows, by counting: a row's
    group starts at the number of rows above it ("stable": plus its equals earlier
    in the input), so there is no sort and no branch on the data, only short loops
    of comparisons (1.6x faster than insertion at ~5 rows a query, 1.2x at ~10).
    Gains are summed per group in input order, as :func:`rank_short` does, into
    the ranked summary ``gsize``/``ggain``."""
    for r in range(m):
        ggain[r] = 0.0
    for i in range(lo, lo + n):
        x = scores[i]
        above = 0
        same = 0
        for t in range(lo, lo + n):
            above += scores[t] > x
            same += scores[t] == x
        if tmode == STABLE:
            for t in range(lo, i):
                above += scores[t] == x
            same = 1
        if above < m:
            ggain[above] += gain_value(labels[i], gmode, table)
            gsize[above] = same


@kernel(_nrt=False, inner=True)
def rank_short(lo, n, m, scores, labels, tmode, gmode, table, s):
    """:func:`rank_query` for "average" and "stable" ties and m <= SHORT_MAX, in one
    pass (2x faster than the heap for whole lists of 50-100 rows, but 1.2x slower
    for a cut of 32 in 1,000 rows, where the heap's O(n log m) pays): the first m positions in rank order (score descending, then input
    position) are kept in ``pos`` by insertion; a later row that does not beat the
    m-th costs one comparison. Rows tied with the m-th but outside the buffer are
    counted with their gains as they go by, so the group straddling the cut is
    known whole without a second pass. ``s``: a :class:`.bundles.ShortScratch`."""
    pos = s.pos
    gsize = s.gsize
    ggain = s.ggain
    for i in range(m):
        x = scores[lo + i]
        j = i
        while j > 0 and scores[lo + pos[j - 1]] < x:
            pos[j] = pos[j - 1]
            j -= 1
        pos[j] = i
    cut = scores[lo + pos[m - 1]]
    extra = 0  # rows outside the buffer that tie with its last
    xgain = 0.0
    for i in range(m, n):
        x = scores[lo + i]
        if x > cut:
            out = pos[m - 1]
            j = m - 1
            while j > 0 and scores[lo + pos[j - 1]] < x:
                pos[j] = pos[j - 1]
                j -= 1
            pos[j] = i
            new = scores[lo + pos[m - 1]]
            if new == cut:  # the row pushed out ties with the new last
                extra += 1
                xgain += gain_value(labels[lo + out], gmode, table)
            else:
                extra = 0
                xgain = 0.0
            cut = new
        elif x == cut:
            extra += 1
            xgain += gain_value(labels[lo + i], gmode, table)
    if tmode == STABLE:
        for p in range(m):
            gsize[p] = 1
            ggain[p] = gain_value(labels[lo + pos[p]], gmode, table)
        return
    r = 0
    while r < m:
        x = scores[lo + pos[r]]
        total = gain_value(labels[lo + pos[r]], gmode, table)
        e = r + 1
        while e < m and scores[lo + pos[e]] == x:
            total += gain_value(labels[lo + pos[e]], gmode, table)
            e += 1
        size = e - r
        if e == m:  # the group at the cut: its members past it too
            size += extra
            total += xgain
        gsize[r] = size
        ggain[r] = total
        r = e


@kernel(_nrt=False, inner=True)
def rank_query(lo, n, m, scores, labels, tmode, gmode, table, s):
    """Rank the query at rows lo:lo+n into its ranked summary (module docstring)
    down to rank m (given, 0 < m <= n), in ``s``, a :class:`.bundles.RankScratch`
    (``top``: m slots; ``gstart``/``gfill``: m + 1; ``rgain``: n slots, read for
    optimistic/pessimistic ties)."""
    top = s.top
    gstart = s.gstart
    gfill = s.gfill
    gsize = s.gsize
    ggain = s.ggain
    rgain = s.rgain
    select_top(scores, lo, n, m, top)
    n_groups = np.int64(0)
    for p in range(m):
        if p == 0 or top[p] != top[p - 1]:
            top[n_groups] = top[p]  # compact: top[g] is now group g's value
            gstart[n_groups] = p
            gfill[n_groups] = p
            if tmode != STABLE:
                gsize[p] = 0
                ggain[p] = 0.0
            n_groups += 1
    gstart[n_groups] = m
    cut = top[n_groups - 1]
    for i in range(n):
        v = scores[lo + i]
        if v >= cut:
            g = count_above(top, n_groups, v)
            gain = gain_value(labels[lo + i], gmode, table)
            if tmode == STABLE:  # the c-th member of a group (input order) takes its c-th rank
                p = gfill[g]
                if p < gstart[g + 1]:
                    gsize[p] = 1
                    ggain[p] = gain
                gfill[g] = p + 1
            else:
                r = gstart[g]
                gsize[r] += 1
                ggain[r] += gain
                if tmode != AVERAGE:
                    rgain[gfill[g]] = gain
                    gfill[g] += 1
    if tmode == OPTIMISTIC or tmode == PESSIMISTIC:
        for g in range(n_groups):
            order_gains(rgain, gstart[g], gfill[g], tmode == OPTIMISTIC)


LOW32 = np.uint64(0xFFFFFFFF)
SIGN32 = np.uint64(0x80000000)
HIGH = np.uint64(32)


@kernel(_nrt=False, inner=True)
def rank_packed(lo, n, m, sbits, labels, gmode, table, tmode, s):
    """:func:`rank_query` for float32 scores under "average" or "stable" ties
    (``sbits``: the scores' bits as uint32), selecting packed keys instead of
    values: a row's key is its score mapped to an unsigned integer in the same
    order (-0.0 as 0.0), shifted up 32 bits, below it ~position, so the m largest
    keys (:func:`select_top`; ``keys`` n slots, ``top`` m slots, uint64) are the
    first m rows in rank order (score descending, then input position) with
    their positions. The groups are read straight off them, and one pass over
    the rows after the last kept one counts the members of the group at the cut
    beyond it: no second pass putting every row into its group (which cost a
    quarter of the time at k=100 on 1,000-row lists). Gains are summed in input
    order, as :func:`rank_query` sums them. ``s``: a :class:`.bundles.PackedScratch`."""
    keys = s.keys
    top = s.top
    gsize = s.gsize
    ggain = s.ggain
    for i in range(n):
        b = np.uint64(sbits[lo + i])
        if b == SIGN32:  # -0.0 ties with 0.0
            b = np.uint64(0)
        if b & SIGN32:
            b = ~b & LOW32
        else:
            b = b | SIGN32
        keys[i] = (b << HIGH) | (LOW32 - np.uint64(i))
    select_top(keys, np.int64(0), n, m, top)
    start = np.int64(0)
    for p in range(m):
        if tmode == STABLE or p == 0 or (top[p] >> HIGH) != (top[start] >> HIGH):
            start = p
            gsize[p] = 0
            ggain[p] = 0.0
        pos = np.int64(LOW32 - (top[p] & LOW32))
        gsize[start] += 1
        ggain[start] += gain_value(labels[lo + pos], gmode, table)
    if tmode == STABLE:
        return
    cut = top[m - 1] >> HIGH
    for i in range(np.int64(LOW32 - (top[m - 1] & LOW32)) + 1, n):
        if (keys[i] >> HIGH) == cut:
            gsize[start] += 1
            ggain[start] += gain_value(labels[lo + i], gmode, table)


@kernel(_nrt=False, inner=True)
def order_gains(rgain, a, e, descending):
    """Sort rgain[a:e] descending, or ascending."""
    if e - a < 2:
        return
    sort_desc(rgain[a:e])
    if not descending:
        for i in range((e - a) // 2):
            rgain[a + i], rgain[e - 1 - i] = rgain[e - 1 - i], rgain[a + i]


@kernel(_nrt=False, inner=True)
def distinct_values(uval, f, mult):
    """Sort uval[:f] descending and keep its distinct values at the front, with how
    many times each came in ``mult``; returns how many there are."""
    sort_desc(uval[:f])
    n_groups = np.int64(0)
    for p in range(f):
        if p == 0 or uval[p] != uval[n_groups - 1]:
            uval[n_groups] = uval[p]
            mult[n_groups] = 1
            n_groups += 1
        else:
            mult[n_groups - 1] += 1
    return n_groups


@kernel(_nrt=False, inner=True)
def entry_starts(n_groups, stable, btw, gsz, mult, eord, estart, esize):
    """The entries' start ranks and sizes from the counts of a pass over a query
    (:func:`flagged_groups`, :func:`gain_groups`): group g has btw[g] items
    between it and the group above and gsz[g] members; "stable" gives each of its
    mult[g] marked items an entry of its own, at its place eord[e] in the group."""
    above = 0
    e = 0
    for g in range(n_groups):
        above += btw[g]
        if stable:
            for _ in range(mult[g]):
                estart[e] = above + eord[e]
                esize[e] = 1
                e += 1
        else:
            estart[g] = above
            esize[g] = gsz[g]
        above += gsz[g]


SPARSE_SHARE = 4  # DCG from the gain groups when at most 1 row in this many has a gain


@kernel(_nrt=False, inner=True)
def gain_groups(lo, n, scores, labels, tmode, gmode, table, s):
    """The ranked summary of a query (rows lo:lo+n) reduced to the tie groups that
    hold an item of non-zero gain, without ranking the others: as
    :func:`flagged_groups` with "flagged" meaning a non-zero gain. Entry e (in rank
    order) starts at rank estart[e], has esize[e] members and the gain sum egain[e]
    (added in input order, as :func:`rank_query` adds a group's gains, so the
    sums have the same bits); for "stable" ties each such item is an entry of its
    own. Returns the number of entries, or -1 when more than one row in
    ``SPARSE_SHARE`` has a gain (ranking the whole list then costs less). ``s``: a
    :class:`.bundles.GainScratch`, n + 1 slots each."""
    uval = s.uval
    mult = s.mult
    gsz = s.gsz
    btw = s.btw
    fill = s.fill
    eord = s.eord
    estart = s.estart
    esize = s.esize
    egain = s.egain
    limit = n // SPARSE_SHARE
    f = 0
    for i in range(n):
        if gain_value(labels[lo + i], gmode, table) != 0.0:
            if f == limit:
                return -1
            uval[f] = scores[lo + i]
            f += 1
    if f == 0:
        return 0
    n_groups = distinct_values(uval, f, mult)
    stable = tmode == STABLE
    slot = 0
    for g in range(n_groups):
        gsz[g] = 0
        btw[g] = 0
        fill[g] = slot
        slot += mult[g] if stable else 1
        if not stable:
            egain[g] = 0.0
    low = uval[n_groups - 1]
    for i in range(n):
        v = scores[lo + i]
        if v < low:
            continue
        g = count_above(uval, n_groups, v)
        if g < n_groups and uval[g] == v:
            x = gain_value(labels[lo + i], gmode, table)
            if not stable:
                egain[g] += x
            elif x != 0.0:
                e = fill[g]
                fill[g] = e + 1
                eord[e] = gsz[g]
                egain[e] = x
            gsz[g] += 1
        else:
            btw[g] += 1
    entry_starts(n_groups, stable, btw, gsz, mult, eord, estart, esize)
    return f if stable else n_groups


@kernel(_nrt=False, inner=True)
def flagged_groups(lo, n, scores, flags, nb, tmode, s):
    """The tie groups of the query at rows lo:lo+n that hold a flagged item (any
    of the ``nb`` flag bits set), in rank order, without ranking the other items:
    the flagged items' distinct scores are sorted, then one pass over the query
    counts, for each, its group's members and the items above it. Returns the
    number of entries; entry e starts at rank estart[e] (0-based), has esize[e]
    members and ecnt[e, b] flagged at bit b. For "stable" ties every flagged item
    is an entry of its own (its rank: the items above its group plus its equals
    earlier in the input); otherwise a group is one entry. ``s``: a
    :class:`.bundles.GroupScratch`, n + 1 slots each (the entries too)."""
    uval = s.uval
    mult = s.mult
    gsz = s.gsz
    btw = s.btw
    fill = s.fill
    eord = s.eord
    estart = s.estart
    esize = s.esize
    ecnt = s.ecnt
    f = 0
    for i in range(n):
        if flags[lo + i] != 0:
            uval[f] = scores[lo + i]
            f += 1
    if f == 0:
        return 0
    n_groups = distinct_values(uval, f, mult)
    stable = tmode == STABLE
    slot = 0
    for g in range(n_groups):
        gsz[g] = 0
        btw[g] = 0
        fill[g] = slot  # stable: group g's flagged items take entries slot.. in input order
        slot += mult[g] if stable else 1
        if not stable:
            for b in range(nb):
                ecnt[g, b] = 0
    low = uval[n_groups - 1]
    for i in range(n):
        v = scores[lo + i]
        if v < low:
            continue
        g = count_above(uval, n_groups, v)
        if g < n_groups and uval[g] == v:
            fl = flags[lo + i]
            if not stable:
                for b in range(nb):
                    ecnt[g, b] += (fl >> b) & 1
            elif fl != 0:
                e = fill[g]
                fill[g] = e + 1
                eord[e] = gsz[g]
                for b in range(nb):
                    ecnt[e, b] = (fl >> b) & 1
            gsz[g] += 1
        else:
            btw[g] += 1  # above group g (and below group g - 1)
    entry_starts(n_groups, stable, btw, gsz, mult, eord, estart, esize)
    return f if stable else n_groups


def argsort_order(offsets, scores, tied, chunks, out):
    """ties="ranx": out <- the rows of each query (CSR ``offsets``, float64
    ``scores``) in the order Numba's ``np.argsort`` of the negated scores puts them:
    its quicksort, which is not stable, so the order of tied rows depends on their
    input order. ranx ranks each query of a ``Run`` so. Only the queries ``tied``
    flags (a uint8 a query: two equal scores or a NaN) are sorted; the rows of any
    other query keep their input order, which ranks them the same (their scores
    are distinct). A permutation of the rows 0:offsets[-1]; chunks of queries
    (``chunks``) run on several threads (:func:`.threads.run_chunks`)."""
    run_chunks(len(chunks) - 1,
               lambda c: _argsort_chunk(chunks[c], chunks[c + 1], offsets, scores, tied, out))


@kernel
def _argsort_chunk(q0, q1, offsets, scores, tied, out):
    longest = 0
    for q in range(q0, q1):
        if tied[q]:
            longest = max(longest, offsets[q + 1] - offsets[q])
    neg = np.empty(longest, np.float64)
    for q in range(q0, q1):
        lo = offsets[q]
        m = offsets[q + 1] - lo
        if not tied[q]:
            for i in range(m):
                out[lo + i] = lo + i
            continue
        for i in range(m):
            neg[i] = -scores[lo + i]
        idx = np.argsort(neg[:m])
        for i in range(m):
            out[lo + i] = lo + idx[i]


@kernel
def at_or_above_kth(offsets, groups, scores, k, keep, unsure):
    """For each group g of ``groups`` (CSR ``offsets``, each longer than ``k``):
    keep[row] <- whether the row's score is at or above the group's k-th largest
    (ties with it kept). A group with a NaN score is left to the caller
    (``unsure[j]``), which orders NaN as NumPy does."""
    top = np.empty(k, np.float64)
    for j in range(len(groups)):
        g = groups[j]
        lo = offsets[g]
        n = offsets[g + 1] - lo
        for i in range(lo, lo + n):
            if scores[i] != scores[i]:
                unsure[j] = True
                break
        if unsure[j]:
            continue
        select_top(scores, lo, n, k, top)
        kth = top[k - 1]
        for i in range(lo, lo + n):
            keep[i] = scores[i] >= kth
