"""Reading TREC run and qrels text in one pass over its bytes.

:func:`read_lines` splits each line into fields, copies the wanted ones (query
and document ids) into their own buffers with Arrow's offsets, parses the one
number of a line (a run's score, a qrels grade) and builds nothing for the other
fields. What a byte is (part of a field, a blank between fields, a line end, or
one the caller's rules do not read here) comes from a table of 256 classes, so
trec_eval's rules and ``fastndcg.io``'s differ by their table and a few flags.

Any line it does not read as the usual case (a field missing, a comment, a
number that is not plain) stops it with a status: the caller then reads the file
by its exact, slower path, which names the line. Numbers are parsed exactly:

* a decimal score with at most 19 significant digits whose mantissa is below
  2**53 and whose power of ten is within 1e22 is one correctly rounded IEEE
  operation (Clinger's fast path: both operands are exact doubles), so it has
  the bits of C's strtod; any other plain decimal is handed back as text for a
  correctly rounding parser;
* a whole-number grade is C's atol, held at the 64-bit bounds.
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from ._jit import kernel

# byte classes (the caller's table maps each of the 256 bytes to one)
FIELD, BLANK, END, ODD, HIGH = 0, 1, 2, 3, 4
# what a field is (``want``): a string slot >= 0, or
SKIP, NUMBER, LAST = -1, -2, -3
# statuses
USUAL, UNUSUAL = 0, 1
# a number's kind
EXACT, HARD, NOT_PLAIN = 0, 1, 2

_POW10 = np.array([10.0 ** e for e in range(23)])
_TWO53 = np.uint64(1 << 53)
_MAX = np.uint64((1 << 63) - 1)
_TOP = np.uint64(1 << 63)


@register_jitable
def _digit(c):
    return 48 <= c <= 57


@register_jitable
def decimal(data, a, b):
    """(value, kind) of the plain decimal data[a:b] (``[+-]digits[.digits][e[+-]digits]``):
    EXACT with its value, HARD (a plain number this fast path cannot round: the
    caller parses its text), NOT_PLAIN."""
    i = a
    neg = False
    if i < b and (data[i] == 43 or data[i] == 45):
        neg = data[i] == 45
        i += 1
    m = np.uint64(0)
    sig = 0      # significant digits in m
    seen = 0     # digits before the exponent
    e10 = 0
    hard = False
    point = False
    while i < b:
        c = data[i]
        i += 1
        if c == 46 and not point:
            point = True
            continue
        if not _digit(c):
            i -= 1
            break
        seen += 1
        if point:
            e10 -= 1
        if sig > 0 or c != 48:
            if sig == 19:
                hard = True  # (its value no longer matters)
            else:
                m = m * np.uint64(10) + np.uint64(c - 48)
                sig += 1
    if seen == 0:
        return 0.0, NOT_PLAIN
    if i < b and (data[i] == 101 or data[i] == 69):
        i += 1
        eneg = False
        if i < b and (data[i] == 43 or data[i] == 45):
            eneg = data[i] == 45
            i += 1
        if i == b:
            return 0.0, NOT_PLAIN
        e = 0
        while i < b and _digit(data[i]):
            if e < 100000:
                e = e * 10 + (data[i] - 48)
            i += 1
        e10 += -e if eneg else e
    if i != b:
        return 0.0, NOT_PLAIN
    if m == 0 and not hard:
        return (-0.0 if neg else 0.0), EXACT
    if hard or m > _TWO53 or e10 > 22 or e10 < -22:
        return 0.0, HARD
    v = np.float64(m)
    v = v * _POW10[e10] if e10 >= 0 else v / _POW10[-e10]
    return (-v if neg else v), EXACT


@register_jitable
def whole(data, a, b, plain):
    """(value, ok) of the whole number data[a:b] (``[+-]digits``) as C's atol reads
    it, held at the 64-bit bounds; with ``plain``, only ``-?digits`` of at most 15
    digits are taken (ok False otherwise)."""
    i = a
    neg = False
    if i < b and (data[i] == 43 or data[i] == 45):
        if plain and data[i] == 43:
            return 0, False
        neg = data[i] == 45
        i += 1
    if i == b or (plain and b - i > 15):
        return 0, False
    m = np.uint64(0)
    while i < b:
        c = data[i]
        if not _digit(c):
            return 0, False
        if m <= _TOP:  # past it the value is held anyway
            m = m * np.uint64(10) + np.uint64(c - 48)
        i += 1
    if neg:
        if m >= _TOP:
            return -(1 << 63), True
        return -np.int64(m), True
    if m >= _MAX:
        return (1 << 63) - 1, True
    return np.int64(m), True


@register_jitable
def _is_q0(data, a, b):
    return b - a == 2 and (data[a] | 32) == 113 and data[a + 1] == 48


@kernel
def read_lines(data, start, stop, row0, hard0, classes, want, exact, comments, blank_ok,
               no_q0, whole_number, plain_grades, chars, offs, floats, ints, hard_rows,
               hard_chars, hard_offs):
    """Each line of ``data[start:stop]`` (which ends with a line end and starts a
    line) into fields; returns (rows, status, line, hard, high, last_a, last_b).

    Several pieces of one file are read at once into the same buffers, each in its
    own part: a piece's strings go to ``chars[slot, start:]`` (a line's fields are
    never longer than the line), its rows from ``row0`` (``offs[slot, row0]`` is
    ``start``, set by the caller; ``offs`` has one more entry a piece), its hard
    numbers from ``hard0`` (``hard_offs[hard0]`` is ``start``). ``rows`` and ``hard``
    are where the piece's rows and hard numbers end; ``line`` counts from the
    piece's first line (1); last_a and last_b are positions in ``data``.

    ``classes``: each byte's class (FIELD, BLANK, END, ODD: the line is unusual,
    HIGH: a field byte, noted in ``high``). ``want[f]``: field f is copied into
    string slot ``want[f]`` (``chars[slot]``, ``offs[slot]``), is the line's NUMBER
    (``floats``, or ``ints`` with ``whole_number``), is LAST (only the last row's
    bounds are kept: data[last_a:last_b]) or is skipped. A line with fewer
    fields than ``want`` (or, with ``exact``, more) is unusual; so is a blank line
    unless ``blank_ok`` (then skipped), a line whose first field starts with '#'
    with ``comments``, and with ``no_q0`` a line of more fields whose second is
    Q0. A plain decimal this fast path cannot round is HARD: its row goes to
    ``hard_rows`` and its text to ``hard_chars``/``hard_offs``. ``status`` is
    UNUSUAL at the first such line (``line``, from 1) and nothing after it counts."""
    n_want = len(want)
    fill = np.full(chars.shape[0], start, np.int64)
    row = row0
    hard = hard0
    high = False
    line = 0
    last_a = 0
    last_b = 0
    pos = start
    while pos < stop:
        line += 1
        f = 0
        q0 = False
        row_a = 0
        row_b = 0
        while True:
            while classes[data[pos]] == BLANK:
                pos += 1
            c = classes[data[pos]]
            if c == END:
                pos += 1
                break
            a = pos
            while True:
                c = classes[data[pos]]
                if c == FIELD:
                    pos += 1
                elif c == HIGH:
                    high = True
                    pos += 1
                else:
                    break
            if c == ODD:
                return row, UNUSUAL, line, hard, high, last_a, last_b
            if f == 0 and comments and data[a] == 35:
                return row, UNUSUAL, line, hard, high, last_a, last_b
            if f == 1 and no_q0:
                q0 = _is_q0(data, a, pos)
            if f < n_want:
                w = want[f]
                if w >= 0:
                    k = fill[w]
                    for t in range(a, pos):
                        chars[w, k + t - a] = data[t]
                    fill[w] = k + pos - a
                elif w == NUMBER:
                    if whole_number:
                        value, ok = whole(data, a, pos, plain_grades)
                        if not ok:
                            return row, UNUSUAL, line, hard, high, last_a, last_b
                        ints[row] = value
                    else:
                        x, kind = decimal(data, a, pos)
                        if kind == NOT_PLAIN:
                            return row, UNUSUAL, line, hard, high, last_a, last_b
                        floats[row] = x
                        if kind == HARD:
                            k = hard_offs[hard]
                            for t in range(a, pos):
                                hard_chars[k + t - a] = data[t]
                            hard_rows[hard] = row
                            hard_offs[hard + 1] = k + pos - a
                            hard += 1
                elif w == LAST:
                    row_a = a
                    row_b = pos
            f += 1
        if f == 0:
            if not blank_ok:
                return row, UNUSUAL, line, hard, high, last_a, last_b
            continue
        if f < n_want or (exact and f != n_want) or (q0 and f > n_want):
            return row, UNUSUAL, line, hard, high, last_a, last_b
        row += 1
        for w in range(chars.shape[0]):
            offs[w, row] = fill[w]
        last_a = row_a
        last_b = row_b
    return row, USUAL, line, hard, high, last_a, last_b

