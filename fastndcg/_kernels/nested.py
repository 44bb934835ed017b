"""Numba kernels: Numba typed dicts of dicts as columns (the first step of a source).

ranx holds a ``Run`` and a ``Qrels`` as a Numba ``typed.Dict`` of query id ->
``typed.Dict`` of document id -> value. Walking one from Python crosses into
Numba for every entry (seconds for a million documents); :func:`nested_columns`
walks it compiled, in the order it holds its entries, and writes the ids as
Arrow's UTF-8 string layout (bytes and offsets), so the caller builds the Arrow
columns without a Python object per document. ranx keys the documents of a query
by NumPy fixed-width strings (``[unichr x N]``, N the longest id of the object),
so each N is a variant of its own, compiled on first use.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel


@kernel(inner=True)
def _put_utf8(s, data, at):
    """``s`` encoded as UTF-8 into data[at:] (room for 4 bytes a character); the
    position after it, negative when ``s`` holds a lone surrogate (no UTF-8)."""
    for i in range(len(s)):
        cp = ord(s[i])
        if cp < 0x80:
            data[at] = cp
            at += 1
        elif cp < 0x800:
            data[at] = 0xC0 | (cp >> 6)
            data[at + 1] = 0x80 | (cp & 0x3F)
            at += 2
        elif cp < 0x10000:
            if 0xD800 <= cp < 0xE000:
                return -1
            data[at] = 0xE0 | (cp >> 12)
            data[at + 1] = 0x80 | ((cp >> 6) & 0x3F)
            data[at + 2] = 0x80 | (cp & 0x3F)
            at += 3
        else:
            data[at] = 0xF0 | (cp >> 18)
            data[at + 1] = 0x80 | ((cp >> 12) & 0x3F)
            data[at + 2] = 0x80 | ((cp >> 6) & 0x3F)
            data[at + 3] = 0x80 | (cp & 0x3F)
            at += 4
    return at


@kernel()
def nested_columns(d):
    """(sizes, values, query bytes, query offsets, doc bytes, doc offsets, ok) of a
    typed dict of dicts ``d``: the documents of each query (in ``d``'s order), their
    values as float64, and the query and document ids as UTF-8 bytes with int64
    offsets; ``ok`` is False when an id holds a lone surrogate (then the rest is not
    filled in)."""
    n_q = len(d)
    n = 0
    q_chars = 0
    d_chars = 0
    for q, inner in d.items():
        n += len(inner)
        q_chars += len(q)
        for doc in inner.keys():
            d_chars += len(doc)
    sizes = np.empty(n_q, np.int64)
    values = np.empty(n, np.float64)
    q_data = np.empty(4 * q_chars, np.uint8)
    q_off = np.empty(n_q + 1, np.int64)
    d_data = np.empty(4 * d_chars, np.uint8)
    d_off = np.empty(n + 1, np.int64)
    q_off[0] = 0
    d_off[0] = 0
    i = 0
    j = 0
    qa = 0
    da = 0
    for q, inner in d.items():
        qa = _put_utf8(q, q_data, qa)
        if qa < 0:
            return sizes, values, q_data, q_off, d_data, d_off, False
        q_off[i + 1] = qa
        sizes[i] = len(inner)
        i += 1
        for doc, value in inner.items():
            da = _put_utf8(doc, d_data, da)
            if da < 0:
                return sizes, values, q_data, q_off, d_data, d_off, False
            d_off[j + 1] = da
            values[j] = value
            j += 1
    return sizes, values, q_data[:qa], q_off, d_data[:da], d_off, True
