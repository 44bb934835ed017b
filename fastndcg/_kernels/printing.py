"""Printing trec_eval's output lines into one buffer of bytes.

:func:`print_table` writes a table of printed lines x queries: for each query,
for each line, the line's head (its name padded, a tab), the query id, a tab, the
value and a newline. A value is printed as C's printf prints it: ``%6.4f`` for a
number (:func:`fixed4`: the double's exact binary value rounded to 4 decimals,
half to even, as glibc rounds it; ``nan``, ``-nan``, ``inf``, ``-inf`` padded to
6), ``%ld`` for a count, or as given text.
"""

from __future__ import annotations

import math

import numpy as np
from numba.extending import register_jitable

from ._jit import kernel

# what a printed line holds (``kinds``)
NOTHING, FIXED4, LONG, TEXT = 0, 1, 2, 3

_ONE = np.uint64(1)
_625 = np.uint64(625)
_TEN = np.uint64(10)
_TEN4 = np.uint64(10000)
_BILLION = np.uint64(1_000_000_000)


@register_jitable
def _digits(out, pos, m):
    """The decimal digits of the uint64 m at out[pos:]; the new position."""
    n = 1
    t = m
    while t >= _TEN:
        t //= _TEN
        n += 1
    for k in range(n - 1, -1, -1):
        out[pos + k] = 48 + np.uint8(m % _TEN)
        m //= _TEN
    return pos + n


@register_jitable
def _big_digits(out, pos, m, shift):
    """The decimal digits of m * 2**shift (an integer past 64 bits) at out[pos:], by
    base-1e9 limbs doubled ``shift`` times; the new position."""
    limbs = np.zeros(40, np.uint64)  # 360 digits: past the largest double (309)
    limbs[0] = m % _BILLION
    limbs[1] = (m // _BILLION) % _BILLION
    limbs[2] = m // (_BILLION * _BILLION)
    used = 3
    for _ in range(shift):
        carry = np.uint64(0)
        for k in range(used):
            v = limbs[k] * np.uint64(2) + carry
            carry = v // _BILLION
            limbs[k] = v % _BILLION
        if carry:
            limbs[used] = carry
            used += 1
    while used > 1 and limbs[used - 1] == 0:
        used -= 1
    pos = _digits(out, pos, limbs[used - 1])
    for k in range(used - 2, -1, -1):
        v = limbs[k]
        for d in range(8, -1, -1):
            out[pos + d] = 48 + np.uint8(v % _TEN)
            v //= _TEN
        pos += 9
    return pos


# what C prints for nan, -nan, inf and -inf in 6 columns, one after the other
_WORDS = np.frombuffer(b"   nan  -nan   inf  -inf", np.uint8)
_NAN, _MINUS_NAN, _INF, _MINUS_INF = 0, 1, 2, 3


@register_jitable
def _word(out, pos, k):
    """Word k of :data:`_WORDS` at out[pos:]; the new position."""
    for t in range(6):
        out[pos + t] = _WORDS[6 * k + t]
    return pos + 6


@register_jitable
def fixed4(out, pos, x):
    """C's printf("%6.4f", x) at out[pos:]; the new position. The integer part is
    |x| rounded down (exact), the fraction f = |x| - that (exact) is f = mf * 2**ef
    with mf < 2**53, so f * 10**4 = mf * 625 * 2**(ef + 4) fits 64 bits and is
    rounded to a whole number half to even on its exact bits."""
    if np.isnan(x):
        return _word(out, pos, _MINUS_NAN if np.signbit(x) else _NAN)
    if np.isinf(x):
        return _word(out, pos, _MINUS_INF if x < 0 else _INF)
    if np.signbit(x):
        out[pos] = 45
        pos += 1
        x = -x
    whole = np.floor(x)
    f = x - whole
    q = np.uint64(0)
    if f > 0.0:
        mant, ef = math.frexp(f)  # f = mant * 2**ef, 0.5 <= mant < 1
        mf = np.uint64(math.ldexp(mant, 53))
        e = ef - 53 + 4
        n = mf * _625
        if e >= 0:
            q = n << np.uint64(e)
        elif e > -64:
            s = np.uint64(-e)
            q = n >> s
            rest = n & ((_ONE << s) - _ONE)
            half = _ONE << (s - _ONE)
            if rest > half or (rest == half and (q & _ONE) == _ONE):
                q += _ONE
    if q == _TEN4:
        q = np.uint64(0)
        whole += 1.0
    if whole < 18446744073709551616.0:
        pos = _digits(out, pos, np.uint64(whole))
    else:
        mant, ew = math.frexp(whole)
        pos = _big_digits(out, pos, np.uint64(math.ldexp(mant, 53)), ew - 53)
    out[pos] = 46
    for k in range(4, 0, -1):
        out[pos + k] = 48 + np.uint8(q % _TEN)
        q //= _TEN
    return pos + 5


@register_jitable
def long_text(out, pos, v):
    """C's printf("%ld", v) at out[pos:]; the new position."""
    if v < 0:
        out[pos] = 45
        pos += 1
        return _digits(out, pos, np.uint64(0) - np.uint64(v))
    return _digits(out, pos, np.uint64(v))


@register_jitable
def _copy(out, pos, data, a, b):
    for t in range(a, b):
        out[pos + t - a] = data[t]
    return pos + b - a


@kernel
def print_table(heads, head_offs, kinds, rows, floats, longs, texts, text_offs,
                qids, qid_offs, out):
    """Line j of query i, for each query i and each line j whose kind is not
    NOTHING: heads[head_offs[j]:head_offs[j + 1]], query id i, a tab, the value,
    a newline. The value of a FIXED4 line is ``floats[rows[j], i]``, of a LONG
    line ``longs[rows[j], i]``, of a TEXT line the text ``rows[j] * n_queries + i``
    of (``texts``, ``text_offs``). Returns the bytes written into ``out``, which
    must be large enough (``fixed4`` writes at most 330 bytes)."""
    n_q = len(qid_offs) - 1
    pos = 0
    for i in range(n_q):
        for j in range(len(kinds)):
            kind = kinds[j]
            if kind == NOTHING:
                continue
            pos = _copy(out, pos, heads, head_offs[j], head_offs[j + 1])
            pos = _copy(out, pos, qids, qid_offs[i], qid_offs[i + 1])
            out[pos] = 9
            pos += 1
            if kind == FIXED4:
                pos = fixed4(out, pos, floats[rows[j], i])
            elif kind == LONG:
                pos = long_text(out, pos, longs[rows[j], i])
            else:
                t = rows[j] * n_q + i
                pos = _copy(out, pos, texts, text_offs[t], text_offs[t + 1])
            out[pos] = 10
            pos += 1
    return pos
