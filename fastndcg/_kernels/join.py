"""Per-query document-id kernels: the qrels join, duplicate ids, two sets of
judgments lined up, trec_eval's tie order (and which queries' scores tie, the
only ones that need it), and an index of query ids.

Ids are either integers (int64: never turned into text) or strings (Arrow's
bytes and int64 offsets), passed as a pair ``(values, offsets)`` (``offsets``
empty for integers). The small functions ``_hash``, ``_same``, ``_sort_key``,
``_cmp`` and ``_skip`` are overloaded on the two, so every kernel here compiles
once per kind of id.

Groups are CSR ``goff`` (group g owns rows goff[g]:goff[g+1]) and are scored in
parallel over ``chunks`` (group boundaries of about equal work), as the NDCG
kernels are.

*trec_eval's order.* trec_eval breaks score ties by document id descending,
comparing ids as strings (strcmp). For an int64 id x the pair :func:`_int_key`
``(k1, k2)`` compares as ``str(x)`` does, without formatting it: ``-`` sorts
before the digits, so negative ids come first (``k1``'s top bit); the digits of
|x| are compared as a decimal fraction (|x| scaled by 10 until it has 19
digits: "9" > "10" > "1"), and ids whose digits agree that far ("1", "10",
"100") are ordered by |x| (shorter first). String ids skip the prefix all ids
of the query share and take the next 8 bytes as the key. Sorting uses one
64-bit key per row with the row's position in its low bits (a spread sort of
integers, linear for keys spread over their range); the rare rows whose keys
agree above those bits are then put in exact order by comparing the ids.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from .rank import sort_desc
from .strings import common_prefix, prefix_key, str_cmp, str_equal, str_hash, str_head
from ._jit import kernel
from .threads import run_chunks, run_ranges

_ONE = np.uint64(1)
_K = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio: Fibonacci hashing
_P1, _P2, _P3, _P4, _P8, _P11, _P15, _P16, _P17, _P18 = (
    np.uint64(10 ** e) for e in (1, 2, 3, 4, 8, 11, 15, 16, 17, 18))
_TOP = np.uint64(1 << 63)
_S56 = np.uint64(56)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@register_jitable
def _int_key(x):
    """(k1, k2), compared as pairs, in the byte order of ``str(x)`` (see the module
    docstring)."""
    if x < 0:
        m = np.uint64(0) - np.uint64(x)  # |x|, also for -2**63
        k1 = np.uint64(0)
    else:
        m = np.uint64(x)
        k1 = _TOP
    return k1 | (_scale19(m) >> _ONE), m


@register_jitable
def _scale19(m):
    """m times the power of 10 that gives it 19 digits (0 stays 0): the digits of m
    as a fixed-point fraction, so that "9" > "10" > "1" as integers."""
    p = m
    if p < _P3:
        p *= _P16
    if p < _P11:
        p *= _P8
    if p < _P15:
        p *= _P4
    if p < _P17:
        p *= _P2
    if p < _P18:
        p *= _P1
    return p


# --------------------------------------------------------------------------- overloads
# Stubs, implemented per kind of id below. An id column is a pair (v, off): the
# values with an empty ``off`` for integers, Arrow's bytes (uint8) and int64
# offsets for strings. Kernels unpack the pair once and pass its two arrays on
# (a tuple indexed inside a hot loop costs reference counting on every call).

def _hash(v, off, i):
    """A 64-bit hash of id i whose top bits are well mixed (tables index by them)."""


def _same(v, off, i, w, woff, j):
    """Whether id i of (v, off) equals id j of (w, woff)."""


def _sort_key(v, off, i, skip):
    """A 64-bit key of id i: ascending keys are ascending string order, except that
    equal keys need :func:`_cmp`."""


def _cmp(v, off, i, j, skip):
    """-1, 0, 1: id i before, equal to, after id j in string byte order."""


def _skip(v, off, lo, hi):
    """Bytes shared by all ids lo..hi-1 (0 for integers), skipped by the keys."""


def _is_text(v) -> bool:
    return v.dtype == types.uint8


@overload(_hash)
def _hash_impl(v, off, i):
    if _is_text(v):
        return lambda v, off, i: str_hash(v, off, i)
    return lambda v, off, i: np.uint64(v[i]) * _K


@overload(_same)
def _same_impl(v, off, i, w, woff, j):
    if _is_text(v):
        return lambda v, off, i, w, woff, j: str_equal(v, off, i, w, woff, j)
    return lambda v, off, i, w, woff, j: v[i] == w[j]


@overload(_sort_key)
def _sort_key_impl(v, off, i, skip):
    if _is_text(v):
        return lambda v, off, i, skip: prefix_key(v, off, i, skip)
    return lambda v, off, i, skip: _int_key(v[i])[0]


@overload(_cmp)
def _cmp_impl(v, off, i, j, skip):
    if _is_text(v):
        return lambda v, off, i, j, skip: str_cmp(v, off, i, v, off, j, skip)

    def impl(v, off, i, j, skip):
        a1, a2 = _int_key(v[i])
        b1, b2 = _int_key(v[j])
        if a1 != b1:
            return -1 if a1 < b1 else 1
        if a2 != b2:
            return -1 if a2 < b2 else 1
        return 0
    return impl


@overload(_skip)
def _skip_impl(v, off, lo, hi):
    if _is_text(v):
        return lambda v, off, lo, hi: common_prefix(v, off, lo, hi)
    return lambda v, off, lo, hi: 0


# --------------------------------------------------------------------------- kernels

@register_jitable
def _before(v, off, lo, x, y, low, skip):
    """Whether packed key x sorts before packed key y, exactly (positions break ties)."""
    d = _cmp(v, off, lo + np.int64(x & low), lo + np.int64(y & low), skip)
    return d < 0 or (d == 0 and (x & low) < (y & low))


@kernel(inner=True)
def _exact_sort(v, off, lo, part, s, e, low, skip, scratch):
    """part[s:e] (packed keys of ids whose truncated keys agree) in exact order:
    insertion sorts of runs of 16, then bottom-up merges through ``scratch``."""
    for a in range(s, e, 16):
        b = min(a + 16, e)
        for i in range(a + 1, b):
            x = part[i]
            j = i - 1
            while j >= a and _before(v, off, lo, x, part[j], low, skip):
                part[j + 1] = part[j]
                j -= 1
            part[j + 1] = x
    src, dst = part, scratch
    width = 16
    while width < e - s:
        for a in range(s, e, 2 * width):
            mid = min(a + width, e)
            b = min(a + 2 * width, e)
            i, j, t = a, mid, a
            while i < mid and j < b:
                if _before(v, off, lo, src[j], src[i], low, skip):
                    dst[t] = src[j]
                    j += 1
                else:
                    dst[t] = src[i]
                    i += 1
                t += 1
            while i < mid:
                dst[t] = src[i]
                i += 1
                t += 1
            while j < b:
                dst[t] = src[j]
                j += 1
                t += 1
        src, dst = dst, src
        width *= 2
    if src is not part:
        for i in range(s, e):
            part[i] = src[i]


@register_jitable
def _insertion(a, s, e):
    for i in range(s + 1, e):
        x = a[i]
        j = i - 1
        while j >= s and x < a[j]:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x


@register_jitable
def _heapsort(a, s, e):
    """a[s:e] sorted ascending, O(n log n) whatever the keys: a heapsort
    (descending), then reversed. (NumPy's ``sort`` would compile a quicksort,
    ~1.8 s of CPU, for the rare range the spread sort does not finish.)"""
    sort_desc(a[s:e])
    i, j = s, e - 1
    while i < j:
        a[i], a[j] = a[j], a[i]
        i += 1
        j -= 1


@kernel
def _sort_keys(a, n, tmp, counts, stack):
    """a[:n] sorted in place (distinct uint64s): a most-significant-first spread
    sort, linear for keys spread over their range. A range of m keys is counted
    into 2m buckets by each key's offset from the range's smallest, in the bits
    the range spans, and placed through ``tmp``; buckets of up to 16 keys are then
    insertion sorted (one pass over the range when all are that small), larger
    ones (clustered keys, e.g. ids of ASCII digits) spread again over their own
    range, and after 8 rounds heapsorted. ``counts`` holds at least
    2 * 2**ceil(log2(n)) + 1 entries, ``stack`` 3 * (n // 16 + 1)."""
    stack[0], stack[1], stack[2] = 0, n, 0
    top = 3
    while top > 0:
        top -= 3
        s, e, depth = stack[top], stack[top + 1], stack[top + 2]
        if e - s <= 16:
            _insertion(a, s, e)
            continue
        if depth >= 8:
            _heapsort(a, s, e)
            continue
        lo = a[s]
        hi = a[s]
        for i in range(s + 1, e):
            v = a[i]
            lo = min(lo, v)
            hi = max(hi, v)
        n_buckets = 1
        while n_buckets < 2 * (e - s):
            n_buckets *= 2
        shift = np.uint64(0)
        while ((hi - lo) >> shift) >= np.uint64(n_buckets):
            shift += _ONE
        c = counts[:n_buckets + 1]
        c[:] = 0
        for i in range(s, e):
            c[np.int64((a[i] - lo) >> shift) + 1] += 1
        largest = 0
        for b in range(n_buckets):
            largest = max(largest, c[b + 1])
            c[b + 1] += c[b]
        for i in range(s, e):
            b = np.int64((a[i] - lo) >> shift)
            tmp[s + c[b]] = a[i]
            c[b] += 1
        for i in range(s, e):
            a[i] = tmp[i]
        if largest <= 16:
            _insertion(a, s, e)
            continue
        start = 0  # c[b] is now the end of bucket b
        for b in range(n_buckets):
            end = c[b]
            if end - start > 16:
                stack[top], stack[top + 1], stack[top + 2] = s + start, s + end, depth + 1
                top += 3
            elif end - start > 1:
                _insertion(a, s + start, s + end)
            start = end


@register_jitable
def _pack_keys(v, off, lo, hi, skip, out):
    """out[:n] <- the sort keys of rows lo..hi-1, each with its position in the low
    bits (the truncated key bits are restored by :func:`_finish`); the mask of the
    position bits."""
    n = hi - lo
    bits = 0
    while (1 << bits) < n:
        bits += 1
    low = np.uint64((1 << bits) - 1)
    for i in range(n):
        out[i] = (_sort_key(v, off, lo + i, skip) & ~low) | np.uint64(i)
    return low


@register_jitable
def _finish(v, off, lo, hi, part, low, skip, scratch, out_order):
    """out_order[lo:hi] <- the rows in descending id order, from their packed keys
    sorted ascending in ``part``. Rows whose keys agree above the position bits
    (rare: a pass that writes the order notes whether there are any) are then put
    in exact order by comparing the ids, and the order written again."""
    if _unpack_desc(lo, hi, part, low, out_order):
        _exact_ties(v, off, lo, hi - lo, part, low, skip, scratch)
        _unpack_desc(lo, hi, part, low, out_order)


@register_jitable
def _unpack_desc(lo, hi, part, low, out_order):
    """out_order[lo:hi] <- the rows of the packed keys part[:hi - lo], last first;
    whether two neighbouring keys agree above the position bits."""
    high = ~low
    ties = False
    for i in range(hi - lo):
        out_order[hi - 1 - i] = lo + np.int64(part[i] & low)
        if i > 0:
            ties |= ((part[i] ^ part[i - 1]) & high) == 0
    return ties


@register_jitable
def _exact_ties(v, off, lo, n, part, low, skip, scratch):
    """The runs of part[:n] whose keys agree above the position bits put in exact
    order (:func:`_exact_sort`)."""
    high = ~low
    s = np.int64(0)
    for i in range(1, n + 1):
        if i == n or (part[i] & high) != (part[s] & high):
            if i - s > 1:
                _exact_sort(v, off, lo, part, s, i, low, skip, scratch)
            s = i


@kernel(inner=True)
def _descending(v, off, lo, hi, keys, scratch, counts, stack, out_order):
    """out_order[lo:hi] <- the rows lo..hi-1 in descending string order of their ids:
    one 64-bit key a row, sorted as integers (:func:`_sort_keys`), then
    :func:`_finish`."""
    if hi > lo:
        skip = _skip(v, off, lo, hi)
        low = _pack_keys(v, off, lo, hi, skip, keys)
        _sort_keys(keys, hi - lo, scratch, counts, stack)
        _finish(v, off, lo, hi, keys, low, skip, scratch, out_order)


def trec_keys(goff, ids, groups, chunks, keys, skips):
    """For trec_eval's order sorted outside the kernels (NumPy's vectorised sort of
    the rows of a 2-D array: several times faster than a sort inside them):
    keys[i, :n] <- the packed sort keys of the n rows of group ``groups[i]``, the
    rest of the row all ones (sorting last: no key of a UTF-8 string or an int64
    has them), each row then sorted ascending; skips[i] <- the prefix bytes the
    keys skip. Chunks of ``groups`` (bounds ``chunks``) run on several threads
    (:func:`.threads.run_chunks`; NumPy sorts without holding the GIL), each
    sorting its rows while they are in cache."""
    def work(c):
        i0, i1 = chunks[c], chunks[c + 1]
        _trec_keys_chunk(i0, i1, goff, ids, groups, keys, skips)
        keys[i0:i1].sort(axis=1)
    run_chunks(len(chunks) - 1, work)


@kernel
def _trec_keys_chunk(i0, i1, goff, ids, groups, keys, skips):
    v, off = ids
    for i in range(i0, i1):
        g = groups[i]
        lo = goff[g]
        hi = goff[g + 1]
        skip = _skip(v, off, lo, hi)
        skips[i] = skip
        row = keys[i]
        _pack_keys(v, off, lo, hi, skip, row)
        row[hi - lo:] = _ALL


_SIGN = {8: np.uint64(1 << 63), 4: np.uint64(1 << 31)}
_INF = {8: np.uint64(0x7FF0000000000000), 4: np.uint64(0x7F800000)}


def _score_key(b):
    """(key, nan) of a score given by its bits: keys in the scores' order, equal
    exactly when the scores compare equal (-0.0 takes 0.0's key), and whether
    the score is NaN."""


@overload(_score_key)
def _score_key_impl(b):
    size = b.bitwidth // 8
    sign, inf = _SIGN[size], _INF[size]
    ones = np.uint64((1 << (8 * size)) - 1)

    def impl(b):
        x = np.uint64(b)
        if x == sign:
            x = np.uint64(0)
        nan = (x & ~sign) > inf
        return ((~x & ones) if x & sign else (x | sign)), nan
    return impl


def tied_groups(goff, bits, chunks, out):
    """out[g] <- 1 when two scores of group g (rows goff[g]:goff[g+1]) are equal
    (-0.0 equals 0.0) or one is NaN, else 0: whether the order of the group's rows
    can decide its ranking (trec_eval's order is needed only then). ``bits``: the
    scores viewed as unsigned integers of their width (uint64 for float64, uint32
    for float32). A hash set of each group's scores (a scratch table per chunk,
    reused, as :func:`join_docs` keeps one), left at the first equal pair. Chunks
    of groups run on several threads (:func:`.threads.run_chunks`)."""
    run_chunks(len(chunks) - 1,
               lambda c: _tied_chunk(chunks[c], chunks[c + 1], goff, bits, out))


@register_jitable
def _has_tie(bits, lo, hi, rows, keys, shift, mask):
    """Whether two of the scores lo..hi-1 are equal or one is NaN. Scores in
    descending (or ascending) order, as runs usually come, tie exactly where
    neighbours are equal: one pass. Otherwise a hash set of the scores (slots
    holding a row below ``lo`` are empty)."""
    sorted_to = lo
    up = 0  # the direction seen so far: 0 none, 1 ascending, -1 descending
    prev = np.uint64(0)
    for r in range(lo, hi):
        x, nan = _score_key(bits[r])
        if nan:
            return True
        if r > lo:
            if x == prev:
                return True
            step = 1 if x > prev else -1
            if up == 0:
                up = step
            elif step != up:
                break
        prev = x
        sorted_to = r + 1
    if sorted_to == hi:
        return False
    for r in range(lo, hi):
        x, nan = _score_key(bits[r])
        if nan:
            return True
        h = (x * _K) >> shift
        while True:
            s = rows[h]
            if s < lo:
                rows[h] = r
                keys[h] = x
                break
            if keys[h] == x:
                return True
            h = (h + _ONE) & mask
    return False


TIE_TABLE = 1 << 16  # slots of the tie check's hash table, unless a list needs more


@kernel
def _tied_chunk(g0, g1, goff, bits, out):
    longest = 1
    for g in range(g0, g1):
        longest = max(longest, goff[g + 1] - goff[g])
    # a sparse table (at most 1 slot in 8 filled, up to 2**16 slots, 1 MiB): fewer
    # collisions, whose outcome the branch predictor cannot know (2x faster on
    # lists of 100-1,000 distinct scores than a table twice the list)
    size, shift, mask = _table_size(max(2 * longest, min(8 * longest, TIE_TABLE)))
    rows = np.full(size, -1, np.int64)
    keys = np.empty(size, np.uint64)
    for g in range(g0, g1):
        out[g] = _has_tie(bits, goff[g], goff[g + 1], rows, keys, shift, mask)


def join_docs(goff, ids, hashes, judged_q, joff, jids, jhashes, chunks, want_order,
              key_rows, sorted_keys, skips, out_match, out_order, first_dup):
    """Per group g: each row's judgment and, with ``want_order``, trec_eval's order.

    ``out_match[row]`` <- the position t in ``jids`` of the row's id among the
    judgments of group ``judged_q[g]`` (joff[jq]:joff[jq+1]), or -1 (unjudged, or
    ``judged_q[g]`` is -1).
    ``out_order[goff[g]:goff[g+1]]`` <- (only with ``want_order``) the group's rows
    in document id *descending* string order when ``key_rows[g] >= 0``, else in
    their input order: the sorted keys of row ``key_rows[g]`` of ``sorted_keys``
    (:func:`trec_keys`, sorted) and ``skips`` when given, else sorted here.
    ``first_dup[g]`` <- a row whose id another row of the group has too, or -1.

    One hash set of the group's ids per group (a scratch table per chunk, reused:
    entries of earlier groups hold rows below the group's first row and count as
    empty), probed once per judgment: O(rows + judgments). Slots keep the hash
    too, so ids are compared only when their hashes are equal. ``hashes`` and
    ``jhashes``: the ids' hashes (:func:`id_hashes`) when computed already (ids
    shared by several joins), else empty (hashed here). Chunks of groups run on
    several threads (:func:`.threads.run_chunks`), each with its own table."""
    run_chunks(len(chunks) - 1, lambda c: _join_chunk(
        chunks[c], chunks[c + 1], goff, ids, hashes, judged_q, joff, jids, jhashes,
        want_order, key_rows, sorted_keys, skips, out_match, out_order, first_dup))


def id_hashes(ids, out):
    """out[i] <- the hash of id i (as :func:`join_docs` hashes it), for ids that
    several joins read: hashed once, not once a join. Rows in parallel slices."""
    run_ranges(len(out), 8, lambda c, a, b: _hash_rows(a, b, ids, out))


@kernel
def _hash_rows(r0, r1, ids, out):
    v, off = ids
    for r in range(r0, r1):
        out[r] = _hash(v, off, r)


@register_jitable
def _hash_of(v, off, hashes, r):
    """Id r's hash: computed already in ``hashes``, or now (``hashes`` empty)."""
    if len(hashes):
        return hashes[r]
    return _hash(v, off, r)


@register_jitable
def _table_size(longest):
    """(size, shift, mask) of a hash table for up to ``longest`` ids: the power of 2
    at least twice as large (>= 2), and what turns a hash's top bits into a slot."""
    bits = 1
    while (1 << bits) < 2 * longest:
        bits += 1
    return 1 << bits, np.uint64(64 - bits), np.uint64((1 << bits) - 1)


@register_jitable
def _put_run(v, off, id_hash, lo, hi, rows, hashes, shift, mask, out_match):
    """A group's rows lo..hi-1 into the hash set (slots holding a row below ``lo`` are
    empty), each row's ``out_match`` reset to -1; the first row whose id is there
    already, or -1. (A loop of its own: inside the join's larger loop LLVM
    optimises it about twice as badly.)"""
    dup = -1
    for r in range(lo, hi):
        out_match[r] = -1
        x = _hash_of(v, off, id_hash, r)
        h = x >> shift
        while True:
            s = rows[h]
            if s < lo:
                rows[h] = r
                hashes[h] = x
                break
            if hashes[h] == x and _same(v, off, s, v, off, r):
                if dup < 0:
                    dup = r
                break
            h = (h + _ONE) & mask
    return dup


@register_jitable
def _find_judged(v, off, jv, joff, jid_hash, t0, t1, lo, rows, hashes, shift, mask,
                 out_match):
    """The judgments t0..t1-1 looked up in the group's hash set (rows from ``lo``):
    ``out_match[row]`` <- t for the row whose id judgment t judges."""
    for t in range(t0, t1):
        x = _hash_of(jv, joff, jid_hash, t)
        h = x >> shift
        while True:
            s = rows[h]
            if s < lo:
                break
            if hashes[h] == x and _same(v, off, s, jv, joff, t):
                out_match[s] = t
                break
            h = (h + _ONE) & mask


@kernel
def _join_chunk(g0, g1, goff, ids, id_hash, judged_q, joff, jids, jid_hash, want_order,
                key_rows, sorted_keys, skips, out_match, out_order, first_dup):
    v, off = ids
    jv, joff_ = jids
    longest = 1
    for g in range(g0, g1):
        longest = max(longest, goff[g + 1] - goff[g])
    size, shift, mask = _table_size(longest)
    rows = np.full(size, -1, np.int64)
    hashes = np.empty(size, np.uint64)
    scratch = np.empty(longest if want_order else 0, np.uint64)
    sort_here = want_order and not len(sorted_keys)
    keys = np.empty(longest if sort_here else 0, np.uint64)
    counts = np.empty(2 * size + 1 if sort_here else 0, np.int64)
    stack = np.empty(3 * (longest // 16 + 1) if sort_here else 0, np.int64)
    for g in range(g0, g1):
        lo = goff[g]
        hi = goff[g + 1]
        first_dup[g] = _put_run(v, off, id_hash, lo, hi, rows, hashes, shift, mask, out_match)
        jq = judged_q[g]
        if jq >= 0 and hi > lo:
            _find_judged(v, off, jv, joff_, jid_hash, joff[jq], joff[jq + 1], lo, rows, hashes,
                         shift, mask, out_match)
        if not want_order:
            continue
        k = key_rows[g]
        if k < 0:
            for r in range(lo, hi):
                out_order[r] = r
        elif len(sorted_keys):
            n = hi - lo
            bits = 0
            while (1 << bits) < n:
                bits += 1
            _finish(v, off, lo, hi, sorted_keys[k], np.uint64((1 << bits) - 1), skips[k],
                    scratch, out_order)
        else:
            _descending(v, off, lo, hi, keys, scratch, counts, stack, out_order)


def line_up(goff, ids, judged_q, joff, jids, extra, chunks, out_match, first_dup,
            jfirst_dup):
    """Two sets of judgments lined up on (group, id), each checked for an id it
    lists twice in a group, in one pass.

    Groups 0..n-1 (``n = len(goff) - 1``) are the first set's (rows
    goff[g]:goff[g+1]), each beside the second set's group ``judged_q[g]``
    (rows joff[jq]:joff[jq+1]; none for -1); groups n.. are the second set's
    groups ``extra`` that no group of the first set meets (alone, to check them).
    ``out_match[row]`` <- the position in ``jids`` of the first set's row's id in
    its group beside, or -1. ``first_dup[g]`` <- a row of the first set's group g
    whose id an earlier row of the group has, or -1; ``jfirst_dup[jq]`` <- the
    same for the second set's group jq (the earliest such row: what a check of
    each set alone finds), or -1.

    One hash set per group, of the first set's ids then the second's: each id is
    hashed once and put in or found once, O(rows of both). Slots hold the group
    they belong to (a table per chunk, reused: a slot of another group is
    empty), the hash and the row (the second set's as -1 - row). Chunks of groups
    run on several threads (:func:`.threads.run_chunks`)."""
    run_chunks(len(chunks) - 1, lambda c: _line_up_chunk(
        chunks[c], chunks[c + 1], goff, ids, judged_q, joff, jids, extra, out_match, first_dup,
        jfirst_dup))


@register_jitable
def _pair(goff, judged_q, extra, g):
    """(lo, hi, jq) of group g of :func:`line_up`."""
    n = len(goff) - 1
    if g < n:
        return goff[g], goff[g + 1], judged_q[g]
    return np.int64(0), np.int64(0), extra[g - n]


@register_jitable
def _put_first(v, off, lo, hi, g, group, rows, hashes, shift, mask, out_match):
    """The first set's rows lo..hi-1 into the table of group g; the first row whose
    id is there already, or -1."""
    dup = -1
    for r in range(lo, hi):
        out_match[r] = -1
        x = _hash(v, off, r)
        h = x >> shift
        while True:
            if group[h] != g:
                group[h] = g
                rows[h] = r
                hashes[h] = x
                break
            if hashes[h] == x and _same(v, off, rows[h], v, off, r):
                if dup < 0:
                    dup = r
                break
            h = (h + _ONE) & mask
    return dup


@register_jitable
def _put_second(v, off, jv, joff, t0, t1, g, group, rows, hashes, shift, mask, out_match):
    """The second set's rows t0..t1-1 matched to the first set's rows in the table of
    group g (``out_match``), or put in it; the first row whose id an earlier row of
    the second set has, or -1."""
    dup = -1
    for t in range(t0, t1):
        x = _hash(jv, joff, t)
        h = x >> shift
        while True:
            if group[h] != g:
                group[h] = g
                rows[h] = -1 - t
                hashes[h] = x
                break
            s = rows[h]
            if hashes[h] == x:
                if s >= 0 and _same(v, off, s, jv, joff, t):
                    if out_match[s] >= 0:
                        if dup < 0:
                            dup = t
                    else:
                        out_match[s] = t
                    break
                if s < 0 and _same(jv, joff, -1 - s, jv, joff, t):
                    if dup < 0:
                        dup = t
                    break
            h = (h + _ONE) & mask
    return dup


@kernel
def _line_up_chunk(g0, g1, goff, ids, judged_q, joff, jids, extra, out_match, first_dup,
                   jfirst_dup):
    v, off = ids
    jv, joff_ = jids
    longest = 1
    for g in range(g0, g1):
        lo, hi, jq = _pair(goff, judged_q, extra, g)
        n = hi - lo
        if jq >= 0:
            n += joff[jq + 1] - joff[jq]
        longest = max(longest, n)
    size, shift, mask = _table_size(longest)
    group = np.full(size, -1, np.int64)
    rows = np.empty(size, np.int64)
    hashes = np.empty(size, np.uint64)
    n_first = len(goff) - 1
    for g in range(g0, g1):
        lo, hi, jq = _pair(goff, judged_q, extra, g)
        dup = _put_first(v, off, lo, hi, g, group, rows, hashes, shift, mask, out_match)
        if g < n_first:
            first_dup[g] = dup
        if jq >= 0:
            jfirst_dup[jq] = _put_second(v, off, jv, joff_, joff[jq], joff[jq + 1], g, group,
                                         rows, hashes, shift, mask, out_match)


SHORT = 7  # bytes: a text id up to this long packs into one int64 (:func:`pack_short`)


PACK_ROWS = 1 << 18  # ids a thread packs at least (fewer: one thread, no hand-off)


def pack_short(data, off, out):
    """out[i] <- text id i (Arrow's ``data`` and int64 ``off``) as one int64: its
    bytes, little-endian, and its length in the top byte, so that two ids are
    equal exactly when their integers are (matched as integers they cost a
    tenth of matching the text). False when an id is longer than :data:`SHORT`
    bytes (``out`` then only partly written). Ranges of ids on several threads
    (:func:`.threads.run_chunks`), from PACK_ROWS ids a range."""
    from .threads import thread_count

    n = len(out)
    n_chunks = max(1, min(8 * thread_count(), n // PACK_ROWS))
    if n_chunks == 1:
        return _pack_range(data, off, out)
    fits = np.ones(n_chunks, np.bool_)

    def work(c, a, b):
        fits[c] = _pack_range(data, off[a:b + 1], out[a:b])

    run_ranges(n, n_chunks, work)
    return bool(fits.all())


@kernel
def _pack_range(data, off, out):
    """:func:`pack_short` of ids 0..len(out)-1 of ``off`` (offsets into ``data``)."""
    for i in range(len(out)):
        a = off[i]
        n = off[i + 1] - a
        if n > SHORT:
            return False
        out[i] = np.int64(str_head(data, a, n) | (np.uint64(n) << _S56))
    return True


@kernel(inner=True)
def _shift(size):
    """64 - log2(size) for a power of 2 size >= 2: a hash's top bits index the table."""
    bits = 1
    while (1 << bits) < size:
        bits += 1
    return np.uint64(64 - bits)


@kernel
def index_ids(ids, n, table):
    """Hash index of ids 0..n-1 (all distinct): ``table`` (a power-of-2 length >= 2n,
    filled with -1) <- the position of each id at its slot."""
    mask = np.uint64(len(table) - 1)
    shift = _shift(len(table))
    v, off = ids
    for i in range(n):
        h = _hash(v, off, i) >> shift
        while table[h] >= 0:
            h = (h + _ONE) & mask
        table[h] = i


@kernel
def lookup_ids(table, indexed, ids, out):
    """out[i] <- the position in ``indexed`` (see :func:`index_ids`) of ``ids[i]``, or -1."""
    mask = np.uint64(len(table) - 1)
    shift = _shift(len(table))
    v, off = ids
    w, woff = indexed
    for i in range(len(out)):
        h = _hash(v, off, i) >> shift
        out[i] = -1
        while True:
            s = table[h]
            if s < 0:
                break
            if _same(w, woff, s, v, off, i):
                out[i] = s
                break
            h = (h + _ONE) & mask
