"""String document-id primitives in byte order (strcmp), as trec_eval compares ids.

Ids arrive as Arrow strings: ``data`` (uint8 bytes) and ``soff`` (int64 offsets;
string i is data[soff[i]:soff[i+1]]). These small functions are the string
side of the per-query kernels in :mod:`.join` (which overloads them together
with their integer counterparts); nothing here is a kernel of its own, and each
is compiled into the kernel that calls it (``register_jitable``), where it can
be inlined: a call to a separately cached function cannot be, and costs more
than these functions' work. Bytes are read 8 at a time where the buffer allows
(:func:`_word`). Ids of one query
often share a long prefix ("clueweb09-en0000-..."), so sorting skips the
group's common prefix and orders first by the next 8 bytes read as a big-endian
integer (:func:`prefix_key`).

Numba's disk cache checks the source file of a cached kernel only: after
changing these functions, touch join.py (or clear the cache), or the kernels
there keep the old code.
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable
from numba.cpython.unsafe.numbers import trailing_zeros


_K = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xC2B2AE3D27D4EB4F)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_M8 = np.uint64(0x00FF00FF00FF00FF)
_M16 = np.uint64(0x0000FFFF0000FFFF)
_B1, _B2, _B3, _B4, _B5, _B6, _B7 = (np.uint64(b) for b in range(1, 8))
_S8, _S16, _S24, _S32, _S40, _S48, _S56 = (np.uint64(8 * b) for b in range(1, 8))


@register_jitable
def _word(data, a):
    """Bytes a..a+7 as a little-endian uint64 (a + 8 <= len(data)). Indexed with an
    unsigned integer: no negative-index wraparound, so LLVM makes it one load."""
    u = np.uint64(a)
    return (np.uint64(data[u]) | (np.uint64(data[u + _B1]) << _S8)
            | (np.uint64(data[u + _B2]) << _S16) | (np.uint64(data[u + _B3]) << _S24)
            | (np.uint64(data[u + _B4]) << _S32) | (np.uint64(data[u + _B5]) << _S40)
            | (np.uint64(data[u + _B6]) << _S48) | (np.uint64(data[u + _B7]) << _S56))


@register_jitable
def _low_bytes(n):
    """A mask of the low min(n, 8) bytes of a uint64 (n >= 0)."""
    m = min(n, 8)
    return (_ALL >> np.uint64(64 - 8 * m)) if m > 0 else np.uint64(0)


@register_jitable
def _head(data, a, n):
    """The first min(n, 8) bytes from a as a little-endian uint64, zero above."""
    if a + 8 <= len(data):
        return _word(data, a) & _low_bytes(n)
    # at the end of the buffer: 8 reads clamped to it (a fixed count, no loop exit
    # that depends on the data: this branch must not slow the usual one)
    last = len(data) - 1
    w = np.uint64(0)
    for t in range(8):
        w |= np.uint64(data[min(a + t, last)]) << np.uint64(8 * t)
    return w & _low_bytes(n)


@register_jitable
def str_head(data, a, n):
    """The first min(n, 8) bytes of the n bytes from byte a, little-endian, zero above."""
    return _head(data, a, n)


@register_jitable
def str_cmp(d1, o1, i, d2, o2, j, skip):
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


@register_jitable
def str_equal(d1, o1, i, d2, o2, j):
    a, n = o1[i], o1[i + 1] - o1[i]
    b = o2[j]
    if o2[j + 1] - b != n:
        return False
    if n <= 8:
        return _head(d1, a, n) == _head(d2, b, n)
    # n > 8: the first 8 and the last 8 bytes cover ids up to 16 bytes
    if _word(d1, a) != _word(d2, b) or _word(d1, a + n - 8) != _word(d2, b + n - 8):
        return False
    for t in range(8, n - 8, 8):
        if _word(d1, a + t) != _word(d2, b + t):
            return False
    return True


@register_jitable
def str_hash(data, soff, i):
    """A 64-bit hash of string i whose *top* bits are well mixed (multiplicative
    hashing: tables take their index from the top bits)."""
    a, e = soff[i], soff[i + 1]
    n = e - a
    first = _head(data, a, n)
    # the last 8 bytes (the same as the first for ids of up to 8), no branch on n
    last = _word(data, e - 8) if e - 8 >= a else first
    h = first ^ (last * _K2)
    if n > 16:  # the middle of longer ids
        for t in range(a + 8, e - 8, 8):
            h = (h ^ _word(data, t)) * _K
    return (h ^ np.uint64(n)) * _K


@register_jitable
def common_prefix(data, soff, lo, hi):
    """The length of the prefix shared by strings lo..hi-1 (0 when there are none)."""
    if hi <= lo:
        return 0
    first = soff[lo]
    common = soff[lo + 1] - first
    for i in range(lo + 1, hi):
        a = soff[i]
        n = min(common, soff[i + 1] - a)
        j = 0
        while j < n:
            x = _head(data, a + j, n - j) ^ _head(data, first + j, n - j)
            if x != 0:  # the first differing byte is the lowest non-zero one
                j += np.int64(trailing_zeros(x)) // 8
                break
            j += 8
        common = min(j, n)
    return common


@register_jitable
def prefix_key(data, soff, i, skip):
    """The 8 bytes of string i after byte ``skip``, big-endian, zero padded: keys in
    this order are in byte order, up to ties broken by :func:`str_cmp`."""
    a = soff[i] + skip
    w = _head(data, a, soff[i + 1] - a)
    # byte-swapped: the first byte most significant
    w = ((w & _M8) << np.uint64(8)) | ((w >> np.uint64(8)) & _M8)
    w = ((w & _M16) << np.uint64(16)) | ((w >> np.uint64(16)) & _M16)
    return (w << np.uint64(32)) | (w >> np.uint64(32))
