"""Document-id kernels: per-query string sorting and the qrels join by string id."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._cache import CACHE

# --------------------------------------------------------------------------- strings
# Document ids arrive as Arrow strings: ``data`` (uint8 bytes) and ``soff`` (int64
# offsets; string i is data[soff[i]:soff[i+1]]). Groups are CSR ``goff`` as above;
# ``perm`` holds positions local to the group. Order is byte order (strcmp), as
# trec_eval compares document ids. Ids of one query often share a long prefix
# ("clueweb09-en0000-..."), so sorting skips the group's common prefix ``lcp[g]``
# and compares first ``pre``: the next 8 bytes as a big-endian integer.

@njit(parallel=True, cache=CACHE, nogil=True)
def group_prefixes(goff, data, soff, chunks, lcp, pre):
    """lcp[g] <- the length of the prefix shared by all strings of group g;
    pre[i] <- the 8 bytes of string i after its group's shared prefix, zero padded."""
    for c in prange(len(chunks) - 1):
        for g in range(chunks[c], chunks[c + 1]):
            lo = goff[g]
            hi = goff[g + 1]
            common = 0
            if hi > lo:
                common = soff[lo + 1] - soff[lo]
                first = soff[lo]
                for i in range(lo + 1, hi):
                    a = soff[i]
                    n = min(common, soff[i + 1] - a)
                    j = 0
                    while j < n and data[a + j] == data[first + j]:
                        j += 1
                    common = j
            lcp[g] = common
            for i in range(lo, hi):
                a = soff[i] + common
                e = soff[i + 1]
                v = np.uint64(0)
                for j in range(8):
                    v <<= np.uint64(8)
                    if a + j < e:
                        v |= np.uint64(data[a + j])
                pre[i] = v


@njit(cache=CACHE, nogil=True, inline="always")
def _str_cmp(d1, o1, i, d2, o2, j, skip):
    """-1, 0, 1 as string i of (d1, o1) sorts before, equal to, after string j of
    (d2, o2), comparing from byte ``skip`` on (the bytes before it are equal)."""
    a, a_end = o1[i] + skip, o1[i + 1]
    b, b_end = o2[j] + skip, o2[j + 1]
    while a < a_end and b < b_end:
        u = d1[a]
        v = d2[b]
        if u != v:
            return -1 if u < v else 1
        a += 1
        b += 1
    la = a_end - a
    lb = b_end - b
    if la == lb:
        return 0
    return -1 if la < lb else 1


@njit(cache=CACHE, nogil=True, inline="always")
def _key_cmp(pre, data, soff, i, j, skip):
    x = pre[i]
    y = pre[j]
    if x != y:
        return -1 if x < y else 1
    return _str_cmp(data, soff, i, data, soff, j, skip)


@njit(cache=CACHE, nogil=True)
def _sort_group_strings(lo, n, skip, pre, data, soff, perm, scratch):
    """Stable sort of the group's strings: perm[lo:lo+n] <- local positions in byte order."""
    for i in range(n):
        perm[lo + i] = i
    # insertion sort of runs of 16, then bottom-up merges through ``scratch``
    run = 16
    for s in range(0, n, run):
        e = min(s + run, n)
        for i in range(s + 1, e):
            x = perm[lo + i]
            j = i - 1
            while j >= s and _key_cmp(pre, data, soff, lo + x, lo + perm[lo + j], skip) < 0:
                perm[lo + j + 1] = perm[lo + j]
                j -= 1
            perm[lo + j + 1] = x
    src, dst = perm, scratch
    width = run
    while width < n:
        for s in range(0, n, 2 * width):
            mid = min(s + width, n)
            e = min(s + 2 * width, n)
            i, j, t = s, mid, s
            while i < mid and j < e:
                if _key_cmp(pre, data, soff, lo + src[lo + j], lo + src[lo + i], skip) < 0:
                    dst[lo + t] = src[lo + j]
                    j += 1
                else:
                    dst[lo + t] = src[lo + i]
                    i += 1
                t += 1
            while i < mid:
                dst[lo + t] = src[lo + i]
                i += 1
                t += 1
            while j < e:
                dst[lo + t] = src[lo + j]
                j += 1
                t += 1
        src, dst = dst, src
        width *= 2
    if src is not perm:
        for i in range(n):
            perm[lo + i] = src[lo + i]


@njit(parallel=True, cache=CACHE, nogil=True)
def sort_strings_by_group(goff, data, soff, chunks, perm, first_dup):
    """Per group: ``perm`` <- local positions in string order; ``first_dup[g]`` <- the
    row of a string equal to another of its group (the later one in that order), or -1."""
    lcp = np.empty(len(goff) - 1, np.int64)
    pre = np.empty(len(soff) - 1, np.uint64)
    group_prefixes(goff, data, soff, chunks, lcp, pre)
    scratch = np.empty_like(perm)
    for c in prange(len(chunks) - 1):
        for g in range(chunks[c], chunks[c + 1]):
            lo = goff[g]
            n = goff[g + 1] - lo
            _sort_group_strings(lo, n, lcp[g], pre, data, soff, perm, scratch)
            first_dup[g] = -1
            for i in range(1, n):
                a = lo + perm[lo + i - 1]
                b = lo + perm[lo + i]
                if _key_cmp(pre, data, soff, a, b, lcp[g]) == 0:
                    first_dup[g] = b
                    break


@njit(parallel=True, cache=CACHE, nogil=True)
def join_judgments(goff, data, soff, perm, judged_q, joff, jdata, jsoff, jperm, jlabels,
                   chunks, out_labels, out_order):
    """Qrels join for groups sorted by :func:`sort_strings_by_group` on both sides.

    Group g of the run is judged by group ``judged_q[g]`` of the qrels (-1: none).
    ``out_labels[row]`` <- the judged label of the row's document, 0 if unjudged;
    ``out_order[goff[g] + i]`` <- the row whose document id is i-th in *descending*
    string order within its group (so "input order wins" ties over rows taken in
    this order are trec_eval's docno-descending tie-break).
    One merge of the two sorted lists per group: O(n + judged)."""
    for c in prange(len(chunks) - 1):
        for g in range(chunks[c], chunks[c + 1]):
            lo = goff[g]
            n = goff[g + 1] - lo
            for i in range(n):
                row = lo + perm[lo + i]
                out_order[lo + n - 1 - i] = row
                out_labels[row] = 0
            jq = judged_q[g]
            if jq < 0:
                continue
            jlo = joff[jq]
            m = joff[jq + 1] - jlo
            i = 0
            t = 0
            while i < n and t < m:
                row = lo + perm[lo + i]
                jrow = jlo + jperm[jlo + t]
                d = _str_cmp(data, soff, row, jdata, jsoff, jrow, 0)
                if d < 0:
                    i += 1
                elif d > 0:
                    t += 1
                else:
                    out_labels[row] = jlabels[jrow]
                    i += 1
