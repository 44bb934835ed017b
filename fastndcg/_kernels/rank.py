"""Numba kernels: ranking one query into tie groups (the first of a query's two steps).

Nothing here validates input: :mod:`fastndcg.api` and the evaluation modules
check everything at the public boundary and hand over clean CSR arrays. Every
array and setting is an argument (the integer codes are compile-time constants,
never state). Kernels compile lazily on first call and are cached on disk.

:func:`rank_one` ranks the rows lo:lo+n of a query down to rank m = min(kmax, n)
and leaves a *ranked summary* that every measure reads (:mod:`.measures`):
arrays indexed by rank, where the tie group starting at rank r is described at
index r (the entries between two group starts are not read):

* ``gsize[r]``: the members of the group, all of them (the group straddling the
  cut counts its members beyond m too, so tie-aware measures take its mean);
* ``ggain[r]``: the sum of their gains, added up in input order;
* ``gcnt[r, b]``: how many members have flag bit b set (relevant at threshold b,
  judged, ...; none when no measure needs flags);
* ``rgain[p]``: with optimistic/pessimistic ties, the gain at each rank p < m of
  the order those rules make (the groups are then the groups of equal scores).

Groups are the groups of equal scores for "average", "optimistic" and
"pessimistic", and single ranks for "stable" (the caller puts rows in document
id order for trec_eval's rule, so "trec" is "stable" here).

How the top m are found, per query:

1. *Short lists* (n <= PAIR_MAX, average or stable ties, scores of at most 32
   bits): an item's rank is the number of items above it; no sort, no branch on
   the data (:func:`_groups_pairs`).
2. *Small cuts* (m <= SMALL_M, average or stable ties). The top m keys are kept
   by a branch-free max/min chain (:func:`top_values`): packed
   ``score key << 32 | ~position`` for scores of at most 32 bits, so survivors
   carry their positions; plain values otherwise, and one more pass over the
   query puts items into their tie groups (:func:`_groups_from_values`). Long
   lists only send rows beating the m-th key down the chain, within a budget
   that falls back to step 3, so the cost stays O(n) whatever the input order.
3. *General path* (other tie modes, large cuts): candidates better than a
   running threshold fill a buffer of 2m slots; when it fills, a quickselect
   keeps its best m and the m-th becomes the new threshold: O(n) expected for
   any input order, then the m survivors are sorted, O(m log m) (introsort,
   heapsort past a depth limit). No full sort of a long list.
4. *Ranking order* is score descending, then a strict tie-break (input
   position; gain for optimistic/pessimistic), so results are deterministic
   and independent of thread count and batch split.

Numba-level inlining is used for the per-query hot path only: it removes call
overhead of ~20 array arguments per query, at the price of compile time.
Integer constants passed to the (non-inlined) sort helpers are wrapped as
``np.int64(...)``: Numba types a bare constant as a literal and compiles a
separate specialisation per combination of literals.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from .codes import AVERAGE, BY_GAIN, BY_KEY, BY_SCORE, EXP2, LINEAR, OPTIMISTIC, PESSIMISTIC, STABLE, TABLE
from ._jit import kernel

_SMALL = 16  # ranges this short are insertion-sorted
STACK_SIZE = 256  # introsort stack: 2 ints per level, larger half deferred -> depth <= 64


@kernel(inline="always")
def gain_value(r, gmode, table):
    """Gain of label ``r``: 2**r - 1, r, or table[r]. For exp2, ``table`` holds
    2**i - 1 for i = 0, 1, ...: integer labels are looked up (exact), others use pow."""
    if gmode == EXP2:
        if 0 <= r < len(table):
            ri = int(r)
            if ri == r:
                return table[ri]
        return 2.0 ** float(r) - 1.0
    if gmode == LINEAR:
        return float(r)
    return table[int(r)]


@kernel
def _gain_key(r, gmode, table):
    """A value ordered like the gain: the label itself for the monotone gains."""
    if gmode == TABLE:
        return table[int(r)]
    return float(r)


@kernel
def _before(a, b, lo, by, scores, labels, tmode, gmode, table):
    """True when local item ``a`` ranks strictly before local item ``b``."""
    if by == BY_KEY:
        return a > b
    if by == BY_GAIN:
        ga = _gain_key(labels[lo + a], gmode, table)
        gb = _gain_key(labels[lo + b], gmode, table)
        if ga != gb:
            return ga > gb
        return a < b
    sa = scores[lo + a]
    sb = scores[lo + b]
    if sa != sb:
        return sa > sb
    if tmode == OPTIMISTIC or tmode == PESSIMISTIC:
        ga = _gain_key(labels[lo + a], gmode, table)
        gb = _gain_key(labels[lo + b], gmode, table)
        if ga != gb:
            return (ga > gb) == (tmode == OPTIMISTIC)
    return a < b


@kernel
def _insertion_sort(buf, first, last, lo, by, scores, labels, tmode, gmode, table):
    for i in range(first + 1, last):
        x = buf[i]
        j = i - 1
        while j >= first and _before(x, buf[j], lo, by, scores, labels, tmode, gmode, table):
            buf[j + 1] = buf[j]
            j -= 1
        buf[j + 1] = x


@kernel
def _sift_down(buf, first, root, size, lo, by, scores, labels, tmode, gmode, table):
    # max-heap on rank order: the parent ranks after (is worse than) its children
    while True:
        child = 2 * root + 1
        if child >= size:
            return
        if child + 1 < size and _before(buf[first + child], buf[first + child + 1], lo, by,
                                        scores, labels, tmode, gmode, table):
            child += 1
        if not _before(buf[first + root], buf[first + child], lo, by,
                       scores, labels, tmode, gmode, table):
            return
        buf[first + root], buf[first + child] = buf[first + child], buf[first + root]
        root = child


@kernel
def _heap_sort(buf, first, last, lo, by, scores, labels, tmode, gmode, table):
    size = last - first
    for root in range(size // 2 - 1, -1, -1):
        _sift_down(buf, first, root, size, lo, by, scores, labels, tmode, gmode, table)
    for end in range(size - 1, 0, -1):
        buf[first], buf[first + end] = buf[first + end], buf[first]
        _sift_down(buf, first, np.int64(0), end, lo, by, scores, labels, tmode, gmode, table)


@kernel
def _partition(buf, first, last, lo, by, scores, labels, tmode, gmode, table):
    """Median-of-three Lomuto partition of buf[first:last]; returns the pivot's slot."""
    mid = (first + last) // 2
    hi = last - 1
    if _before(buf[mid], buf[first], lo, by, scores, labels, tmode, gmode, table):
        buf[mid], buf[first] = buf[first], buf[mid]
    if _before(buf[hi], buf[first], lo, by, scores, labels, tmode, gmode, table):
        buf[hi], buf[first] = buf[first], buf[hi]
    if _before(buf[mid], buf[hi], lo, by, scores, labels, tmode, gmode, table):
        buf[mid], buf[hi] = buf[hi], buf[mid]
    pivot = buf[hi]  # the median of the three
    store = first
    for i in range(first, hi):
        if _before(buf[i], pivot, lo, by, scores, labels, tmode, gmode, table):
            buf[i], buf[store] = buf[store], buf[i]
            store += 1
    buf[store], buf[hi] = buf[hi], buf[store]
    return store


@kernel
def _depth_limit(n):
    limit = 2
    while n > 1:
        n >>= 1
        limit += 2
    return limit


@kernel
def _sort(buf, n, stack, lo, by, scores, labels, tmode, gmode, table):
    """Introsort of buf[0:n] into rank order (quicksort, heapsort past a depth limit)."""
    if n <= _SMALL:
        _insertion_sort(buf, np.int64(0), n, lo, by, scores, labels, tmode, gmode, table)
        return
    top = 0
    stack[0] = 0
    stack[1] = n
    stack[2] = _depth_limit(n)
    top = 3
    while top > 0:
        top -= 3
        first = stack[top]
        last = stack[top + 1]
        depth = stack[top + 2]
        while last - first > _SMALL:
            if depth == 0:
                _heap_sort(buf, first, last, lo, by, scores, labels, tmode, gmode, table)
                first = last
                break
            depth -= 1
            p = _partition(buf, first, last, lo, by, scores, labels, tmode, gmode, table)
            # defer the larger side, continue with the smaller: stack depth <= log2(n)
            if p - first > last - p - 1:
                stack[top] = first
                stack[top + 1] = p
                stack[top + 2] = depth
                top += 3
                first = p + 1
            else:
                stack[top] = p + 1
                stack[top + 1] = last
                stack[top + 2] = depth
                top += 3
                last = p
        _insertion_sort(buf, first, last, lo, by, scores, labels, tmode, gmode, table)


@kernel
def _select(buf, n, kth, lo, by, scores, labels, tmode, gmode, table):
    """Quickselect: afterwards buf[kth] holds the item of rank kth (0-based) among
    buf[0:n] and every item of buf[0:kth] ranks before it."""
    first = np.int64(0)
    last = n
    depth = _depth_limit(n)
    while last - first > _SMALL:
        if depth == 0:
            _heap_sort(buf, first, last, lo, by, scores, labels, tmode, gmode, table)
            return
        depth -= 1
        p = _partition(buf, first, last, lo, by, scores, labels, tmode, gmode, table)
        if p == kth:
            return
        if p < kth:
            first = p + 1
        else:
            last = p
    _insertion_sort(buf, first, last, lo, by, scores, labels, tmode, gmode, table)


@kernel
def top_k(buf, stack, lo, n, k, by, scores, labels, tmode, gmode, table):
    """Local indices (0..n-1) of the first min(k, n) items in rank order, sorted,
    in buf[0:min(k, n)]. ``buf`` needs min(n, 2k) slots (n when k >= n)."""
    if k >= n:
        for i in range(n):
            buf[i] = i
        _sort(buf, n, stack, lo, by, scores, labels, tmode, gmode, table)
        return n
    cap = min(len(buf), n)
    count = np.int64(0)
    threshold = np.int64(-1)
    fast = by == BY_SCORE and (tmode == AVERAGE or tmode == STABLE)
    # scores are read only when ranking by them: by gain they may be a dummy array
    threshold_score = np.float64(scores[lo]) if fast else np.float64(0.0)
    for i in range(n):
        if threshold >= 0:
            if fast:
                # later input position loses a score tie: only a higher score enters
                if not scores[lo + i] > threshold_score:
                    continue
            elif not _before(i, threshold, lo, by, scores, labels, tmode, gmode, table):
                continue
        buf[count] = i
        count += 1
        if count == cap:
            _select(buf, count, k - 1, lo, by, scores, labels, tmode, gmode, table)
            count = k
            threshold = buf[k - 1]
            if fast:
                threshold_score = np.float64(scores[lo + threshold])
    if count > k:
        _select(buf, count, k - 1, lo, by, scores, labels, tmode, gmode, table)
    _sort(buf, k, stack, lo, by, scores, labels, tmode, gmode, table)
    return k


@intrinsic
def _f32_bits(typingctx, x):
    """The IEEE-754 bit pattern of a float32, as uint32."""
    if x != types.float32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))

    return types.uint32(types.float32), codegen


def _rank_key32(x):
    """A uint32 ordered like ``x`` (a float32 or an integer of at most 32 bits)."""


@overload(_rank_key32, inline="always")
def _rank_key32_impl(x):
    if x == types.float32:
        def key(x):
            b = _f32_bits(x + np.float32(0.0))  # -0.0 + 0.0 == +0.0: signed zeros tie
            if b >> np.uint32(31):
                return b ^ np.uint32(0xFFFFFFFF)
            return b | np.uint32(0x80000000)
        return key
    if isinstance(x, types.Integer) and x.bitwidth <= 32:
        if x.signed:
            return lambda x: np.uint32(np.int64(x) + 2147483648)
        return lambda x: np.uint32(x)
    return None


def _packs(score_type) -> bool:
    """Whether scores of this Numba type fit the packed (key << 32 | ~position) form."""
    return score_type == types.float32 or (isinstance(score_type, types.Integer)
                                           and score_type.bitwidth <= 32)


def _row_key(vals, lo, i, top):
    """What :func:`top_values` ranks row lo+i by: the value itself, or, when ``top``
    holds uint64 and the values have at most 32 bits, the packed key
    (rank key << 32 | ~i): ordered by value descending then position ascending, and
    carrying the position."""


@overload(_row_key, inline="always")
def _row_key_impl(vals, lo, i, top):
    if top.dtype == types.uint64 and _packs(vals.dtype):
        def packed(vals, lo, i, top):
            return ((np.uint64(_rank_key32(vals[lo + i])) << np.uint64(32))
                    | (np.uint64(0xFFFFFFFF) - np.uint64(i)))
        return packed
    return lambda vals, lo, i, top: vals[lo + i]


@kernel
def top_values(vals, lo, n, k, top):
    """The min(k, n) largest row keys (:func:`_row_key`) of vals[lo:lo+n], with
    multiplicity, sorted descending into top; returns that count, or -1 (caller
    falls back to :func:`top_k`) when an adversarial order would make this slower
    than O(n).

    With plain values (no positions) the average and stable modes still know their
    tie groups, and :func:`_dcg_from_values` finds the items in one pass; packed
    keys carry the positions.
    The whole list (k >= n, short lists only) is insertion-sorted; otherwise the
    first k are, and each later value runs down a branch-free max/min chain
    (every row for short lists, only rows beating the k-th value for long ones,
    within a budget of 4k + n/8 such rows).
    """
    m = min(k, n)
    for i in range(m):
        v = _row_key(vals, lo, i, top)
        j = i
        while j > 0 and top[j - 1] < v:
            top[j] = top[j - 1]
            j -= 1
        top[j] = v
    if m == n:
        return m
    gated = n > 8 * m
    budget = 4 * m + n // 8
    for i in range(m, n):
        x = _row_key(vals, lo, i, top)
        if gated:
            if not x > top[m - 1]:
                continue
            budget -= 1
            if budget < 0:
                return -1
        for j in range(m):
            t = top[j]
            top[j] = max(t, x)
            x = min(t, x)
    return m



@kernel(inline="always")
def _add_flags(gcnt, r, flags, row, nb):
    """Count the flag bits of ``row`` into the group described at rank r."""
    f = flags[row] if nb > 0 else np.uint8(0)
    for b in range(nb):
        gcnt[r, b] += (f >> b) & 1


@kernel(inline="always")
def _set_flags(gcnt, r, flags, row, nb):
    """The group at rank r is the single row ``row``: its flags."""
    f = flags[row] if nb > 0 else np.uint8(0)
    for b in range(nb):
        gcnt[r, b] = (f >> b) & 1


@kernel
def _groups_from_values(lo, n, m, scores, labels, flags, nb, tmode, gmode, table, top,
                        gstart, gcount, gsize, ggain, gcnt):
    """The ranked summary (average or stable ties) from the sorted top-m score
    values: one pass over the query puts the items at or above the m-th value
    into their tie groups (gains added in input order)."""
    n_groups = 0
    for p in range(m):
        if p == 0 or top[p] != top[p - 1]:
            top[n_groups] = top[p]  # compact: top[g] is now group g's value
            gstart[n_groups] = p
            gcount[n_groups] = 0
            if tmode == AVERAGE:
                ggain[p] = 0.0
                gsize[p] = 0
                for b in range(nb):
                    gcnt[p, b] = 0
            n_groups += 1
    gstart[n_groups] = m
    cut = top[n_groups - 1]
    for i in range(n):
        v = scores[lo + i]
        if v >= cut:
            # its group: top[0:n_groups] is strictly decreasing and holds v
            g = 0
            if n_groups <= 8:
                while top[g] != v and g < n_groups - 1:
                    g += 1
            else:
                hi = n_groups - 1
                while g < hi:
                    mid = (g + hi) >> 1
                    if top[mid] > v:
                        g = mid + 1
                    else:
                        hi = mid
            gain = gain_value(labels[lo + i], gmode, table)
            if tmode == AVERAGE:
                r = gstart[g]
                ggain[r] += gain
                gsize[r] += 1
                _add_flags(gcnt, r, flags, lo + i, nb)
            else:  # stable: the c-th member of a group (input order) takes its c-th rank
                p = gstart[g] + gcount[g]
                if p < gstart[g + 1]:
                    ggain[p] = gain
                    gsize[p] = 1
                    _set_flags(gcnt, p, flags, lo + i, nb)
                gcount[g] += 1


@kernel(inline="always")
def _groups_from_buf(lo, n, m, scores, labels, flags, nb, tmode, gmode, table, buf,
                     gsize, ggain, gcnt, rgain):
    """The ranked summary from buf[0:m], the first m items (local indices) in rank order."""
    if tmode == STABLE:
        for p in range(m):
            ggain[p] = gain_value(labels[lo + buf[p]], gmode, table)
            gsize[p] = 1
            _set_flags(gcnt, p, flags, lo + buf[p], nb)
        return
    r = np.int64(0)
    while r < m:
        s = scores[lo + buf[r]]
        g0 = gain_value(labels[lo + buf[r]], gmode, table)
        gsum = g0
        if tmode != AVERAGE:
            rgain[r] = g0
        for b in range(nb):
            gcnt[r, b] = 0
        _add_flags(gcnt, r, flags, lo + buf[r], nb)
        e = r + 1
        while e < m and scores[lo + buf[e]] == s:
            g = gain_value(labels[lo + buf[e]], gmode, table)
            gsum += g
            if tmode != AVERAGE:
                rgain[e] = g
            _add_flags(gcnt, r, flags, lo + buf[e], nb)
            e += 1
        size = e - r
        if e == m and m < n:
            # the group at the cut may reach past it: take all its members
            gsum = 0.0
            size = 0
            for b in range(nb):
                gcnt[r, b] = 0
            for i in range(n):
                if scores[lo + i] == s:
                    gsum += gain_value(labels[lo + i], gmode, table)
                    size += 1
                    _add_flags(gcnt, r, flags, lo + i, nb)
        ggain[r] = gsum
        gsize[r] = size
        r = e


DONE = -2  # _top_small wrote the ranked summary itself


def _top_small(lo, n, m, scores, labels, flags, nb, tmode, gmode, table, buf, keys, top,
               gstart, gcount, gsize, ggain, gcnt):
    """Fast path for a query whose cut m = min(k, n) is small (average/stable ties).
    Returns m with buf[0:m] the first m items in rank order, DONE when it wrote
    the ranked summary itself, or -1 when the caller must select with :func:`top_k`."""


@overload(_top_small, inline="always")
def _top_small_impl(lo, n, m, scores, labels, flags, nb, tmode, gmode, table, buf, keys, top,
                    gstart, gcount, gsize, ggain, gcnt):
    if _packs(scores.dtype):
        def packed(lo, n, m, scores, labels, flags, nb, tmode, gmode, table, buf, keys, top,
                   gstart, gcount, gsize, ggain, gcnt):
            m = top_values(scores, lo, n, m, keys)
            low = np.uint64(0xFFFFFFFF)
            for p in range(m):  # the positions ride in the low 32 bits
                buf[p] = np.int64(low - (keys[p] & low))
            return m
        return packed

    def by_value(lo, n, m, scores, labels, flags, nb, tmode, gmode, table, buf, keys, top,
                 gstart, gcount, gsize, ggain, gcnt):
        if m >= n:
            # the whole (short) list: insertion-sort values and positions together
            # (strict < keeps input order among ties)
            for i in range(n):
                v = scores[lo + i]
                j = i
                while j > 0 and top[j - 1] < v:
                    top[j] = top[j - 1]
                    buf[j] = buf[j - 1]
                    j -= 1
                top[j] = v
                buf[j] = i
            return n
        m = top_values(scores, lo, n, m, top)
        if m < 0:
            return -1
        _groups_from_values(lo, n, m, scores, labels, flags, nb, tmode, gmode, table, top,
                            gstart, gcount, gsize, ggain, gcnt)
        return DONE
    return by_value


def _top_packed(buf, stack, lo, n, k, scores, labels, tmode, gmode, table, top):
    """Large cuts (m > SMALL_M) and whole long lists, scores of at most 32 bits,
    average/stable ties: buf[0:m] <- the first m = min(k, n) items in rank order,
    returns m; -1 when the scores do not pack (the caller takes :func:`top_k`)."""


@overload(_top_packed, inline="always")
def _top_packed_impl(buf, stack, lo, n, k, scores, labels, tmode, gmode, table, top):
    if not _packs(scores.dtype):
        return lambda buf, stack, lo, n, k, scores, labels, tmode, gmode, table, top: -1

    def packed(buf, stack, lo, n, k, scores, labels, tmode, gmode, table, top):
        # :func:`top_k` on packed keys (score key << 32 | ~position, sign bit
        # flipped to order as int64) instead of positions: the comparisons are plain
        # integer ones, with no gathers from the scores, and the position rides along.
        # BY_KEY is passed as a literal on purpose: the sort helpers get one
        # specialisation where the comparison folds to ``a > b`` (2x faster); every
        # other call passes int64 codes, so each helper compiles once, not per
        # combination of constants
        sign = np.uint64(0x8000000000000000)
        m = min(k, n)
        cap = n if m == n else min(len(buf), n)
        count = np.int64(0)
        bar = np.int64(-0x8000000000000000)  # below every key (its position part is > 0)
        for i in range(n):
            x = np.int64(_row_key(scores, lo, i, top) ^ sign)
            if x > bar:
                buf[count] = x
                count += 1
                if count == cap and count > m:
                    _select(buf, count, m - 1, lo, BY_KEY, scores, labels, tmode, gmode, table)
                    count = m
                    bar = buf[m - 1]
        if count > m:
            _select(buf, count, m - 1, lo, BY_KEY, scores, labels, tmode, gmode, table)
        _sort(buf, m, stack, lo, BY_KEY, scores, labels, tmode, gmode, table)
        low = np.int64(0xFFFFFFFF)
        for p in range(m):
            buf[p] = low - (buf[p] & low)
        return m
    return packed


PAIR_MAX = 32  # lists this short are ranked by counting, not by selecting


def _groups_pairs(lo, n, m, scores, labels, flags, nb, tmode, gmode, table, keys, gsize,
                  ggain, gcnt):
    """The ranked summary of a short list (n <= PAIR_MAX; average or stable ties,
    scores of at most 32 bits) by counting: an item's rank is the number of items
    above it (plus, for stable ties, its equals earlier in the input), so there is
    no sort and no branch on the data in the counting loop, which vectorises over
    a zero-padded row of keys. Gains are summed per tie group in input order, as
    the selecting paths do, so the results are bit-identical to theirs. Returns
    False (nothing done) when the scores do not pack."""


@overload(_groups_pairs, inline="always")
def _groups_pairs_impl(lo, n, m, scores, labels, flags, nb, tmode, gmode, table, keys, gsize,
                       ggain, gcnt):
    if not _packs(scores.dtype):
        return (lambda lo, n, m, scores, labels, flags, nb, tmode, gmode, table, keys, gsize,
                ggain, gcnt: False)

    def counted(lo, n, m, scores, labels, flags, nb, tmode, gmode, table, keys, gsize,
                ggain, gcnt):
        width = (n + 15) & ~15
        for i in range(n):
            keys[i] = _rank_key32(scores[lo + i])
        for i in range(n, width):
            keys[i] = np.uint32(0)  # padding: above nothing, equal to key 0 only
        for r in range(m):
            ggain[r] = 0.0
            for b in range(nb):
                gcnt[r, b] = 0
        for i in range(n):
            x = keys[i]
            above = np.int64(0)
            same = np.int64(0)
            for t in range(width):
                above += keys[t] > x
                same += keys[t] == x
            if x == np.uint32(0):
                same -= width - n
            if above < m:
                g = gain_value(labels[lo + i], gmode, table)
                if tmode == AVERAGE:
                    ggain[above] += g  # the tie group's gain sum, in input order
                    gsize[above] = same
                    _add_flags(gcnt, above, flags, lo + i, nb)
                else:  # stable: behind its equals earlier in the input
                    r = above
                    for t in range(i):
                        r += keys[t] == x
                    if r < m:
                        ggain[r] = g
                        gsize[r] = 1
                        _set_flags(gcnt, r, flags, lo + i, nb)
        return True
    return counted


SMALL_M = 64  # lists cut to at most this many ranks take the value fast path


@kernel(inline="always")
def rank_one(lo, n, kmax, scores, labels, flags, nb, tmode, gmode, table, buf, stack,
             top, packed, gstart, gcount, keys32, gsize, ggain, gcnt, rgain):
    """Rank the query at rows lo:lo+n into the ranked summary (module docstring)
    down to rank m = min(kmax, n); returns m."""
    m = min(kmax, n)
    if n == 0:
        return m
    if n <= PAIR_MAX and (tmode == AVERAGE or tmode == STABLE):
        if _groups_pairs(lo, n, m, scores, labels, flags, nb, tmode, gmode, table, keys32,
                         gsize, ggain, gcnt):
            return m
    got = -1
    # (positions ride in 32 bits of a packed key: lists of 2**32 rows take the general path)
    if n <= 0xFFFFFFFF and (tmode == AVERAGE or tmode == STABLE):
        if m <= len(top):
            got = _top_small(lo, n, m, scores, labels, flags, nb, tmode, gmode, table, buf,
                             packed, top, gstart, gcount, gsize, ggain, gcnt)
            if got == DONE:
                return m
        else:
            got = _top_packed(buf, stack, lo, n, kmax, scores, labels, tmode, gmode, table,
                              packed)
    if got < 0:
        top_k(buf, stack, lo, n, kmax, np.int64(BY_SCORE), scores, labels, tmode, gmode, table)
    _groups_from_buf(lo, n, m, scores, labels, flags, nb, tmode, gmode, table, buf, gsize,
                     ggain, gcnt, rgain)
    return m
