"""TREC run and qrels text in compiled passes: reading a file's usual lines into
Arrow columns, and printing trec_eval's output lines into one buffer.

:func:`read_text` reads the bytes of a run or qrels file in one pass
(:func:`fastndcg._kernels.reading.read_lines`): the ids become Arrow strings, the
score (C's strtod, bit for bit) or the grade (C's atol) a NumPy column, and the
fields that are not read (iter, rank, a run's tag but its last line's) build
nothing. Two sets of rules:

* ``"trec_eval"``: trec_eval's own parsers (``fastndcg trec_eval``): a line ends
  at ``\\n`` only, blanks are C's ``isspace``; a qrels line has exactly four
  fields, a run line six or more; a run's blank lines are skipped;
* ``"io"``: :func:`fastndcg.io.read_trec_run` and ``read_trec_qrels``: ``\\r``
  also ends a line, blank lines are skipped, trailing fields are ignored, a qrels
  line of more fields whose second is Q0 is not read.

A file it does not read as the usual case (a comment, a field missing, a grade
or score that is not a plain number, text that is not UTF-8, and with rules
"io" any byte that is not ASCII or is a control character but a blank) gives
None: the caller reads it by its exact line-by-line path, which warns or refuses
naming ``file:line``.

:func:`print_lines` prints a table of values (lines x queries) as trec_eval does
(``%6.4f``, ``%ld``, text), into one ``bytes``.

>>> t = read_text(b"q1 0 d1 2\\nq1 0 d2 0\\n", "qrels", "trec_eval")
>>> t.table.to_pydict()
{'query_id': ['q1', 'q1'], 'doc_id': ['d1', 'd2'], 'label': [2, 0]}
>>> print_lines(["map                   \\t"], ["fixed4"], [[0.03125]], ["q1"]).decode()
'map                   \\tq1\\t0.0312\\n'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa

__all__ = ["Text", "read_text", "print_lines"]

_RUN = ("query_id", "doc_id", "score")
_QRELS = ("query_id", "doc_id", "label")


@dataclass
class Text:
    """A file read by :func:`read_text`: its table (query_id, doc_id, and score or
    label), and a run's tag (its last line's sixth field; None for qrels)."""
    table: pa.Table
    tag: str | None = None


def _classes(rules: str) -> np.ndarray:
    from ._kernels import reading as R

    classes = np.full(256, R.FIELD, np.uint8)
    classes[[ord(c) for c in " \t\v\f"]] = R.BLANK
    classes[ord("\n")] = R.END
    if rules == "trec_eval":
        classes[ord("\r")] = R.BLANK
        classes[0x80:] = R.HIGH
        classes[0] = R.ODD  # (the caller ends the file at a NUL byte)
    else:  # io: \r ends a line; control bytes and non-ASCII text by the exact path
        classes[ord("\r")] = R.END
        odd = [b for b in range(32) if chr(b) not in " \t\v\f\r\n"] + list(range(0x80, 256))
        classes[odd] = R.ODD
    return classes


def read_text(data: bytes, what: str, rules: str, *, tag: bool = False,
              names: Sequence[str] | None = None) -> Text | None:
    """The ``what`` ("run" or "qrels") text ``data`` by ``rules`` ("trec_eval" or
    "io", see the module), or None when it is not the usual case.

    ``tag``: a run's tag column too (rules "io": every line's sixth field); with
    rules "trec_eval" the tag of the last line is :attr:`Text.tag`. ``names``:
    the columns' names (default query_id, doc_id, score or label, then tag)."""
    from ._arrow import from_numpy
    from ._kernels import reading as R
    from ._kernels.threads import run_chunks

    if not data:
        return None
    if not (data.endswith(b"\n") or (rules == "io" and data.endswith(b"\r"))):
        data += b"\n"
    buf = np.frombuffer(data, np.uint8)
    run = what == "run"
    n_fields = 6 if run else 4
    want = np.full(n_fields, R.SKIP, np.int64)
    want[0], want[2] = 0, 1
    want[4 if run else 3] = R.NUMBER
    slots = 2
    if run and tag and rules == "io":
        want[5], slots = 2, 3
    elif run and rules == "trec_eval":
        want[5] = R.LAST
    classes = _classes(rules)
    cuts = _pieces(data)
    n_pieces = len(cuts) - 1
    # the most rows a piece can hold: a run line has six fields or more, a qrels line
    # four, each of a byte at least, a blank between them and a line end (the
    # buffers are sized for that, not for a count of the lines, which would take a
    # pass of its own: their pages beyond the rows read are never touched); a piece's
    # part of the row-indexed buffers starts after the ones before it, one entry more
    # (its first offset), and one more again (the row of an incomplete last line)
    most = np.diff(np.array(cuts, np.int64)) // (12 if run else 8) + 1
    row0 = np.zeros(n_pieces, np.int64)
    np.cumsum(most[:-1] + 1, out=row0[1:])
    n_rows = int(most.sum()) + n_pieces
    size = len(data)
    chars = np.empty((slots, size), np.uint8)
    offs = np.zeros((slots, n_rows + 1), np.int64)
    floats = np.empty(n_rows if run else 0, np.float64)
    ints = np.empty(0 if run else n_rows, np.int64)
    hard_rows = np.empty(n_rows if run else 0, np.int64)
    hard_chars = np.empty(size if run else 0, np.uint8)
    hard_offs = np.zeros(n_rows + 1 if run else 1, np.int64)
    trec = rules == "trec_eval"
    flags = (trec and not run, trec, run or not trec, not run and not trec, not run, not trec)
    found = [None] * n_pieces

    def piece(i: int) -> None:
        a, r0 = cuts[i], row0[i]
        offs[:, r0] = a
        if run:
            hard_offs[r0] = a
        found[i] = R.read_lines(buf, a, cuts[i + 1], r0, r0 if run else 0, classes, want,
                                *flags, chars, offs, floats, ints, hard_rows, hard_chars,
                                hard_offs)

    run_chunks(n_pieces, piece)
    if any(f[1] != R.USUAL for f in found):
        return None
    if any(f[4] for f in found):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None  # said by the exact path, with the line
    # the last line read is the last piece's that has rows
    last_a, last_b = next(((f[5], f[6]) for f, r0 in zip(found[::-1], row0[::-1]) if f[0] > r0),
                          (0, 0))
    values = floats if run else ints
    spans = [(r0, f[0]) for r0, f in zip(row0.tolist(), found)]
    for (r0, _), f in zip(spans, found):  # the numbers the fast path left as text
        if run and f[3] > r0:
            values[hard_rows[r0:f[3]]] = _parsed(hard_chars, hard_offs[r0:f[3] + 1])
    # each piece's rows are a chunk of the columns, where it read them (nothing moved)
    columns = [_chunks([_strings(chars[s], offs[s], r0, r1) for r0, r1 in spans])
               for s in range(slots)]
    values = _chunks([from_numpy(values[r0:r1]) for r0, r1 in spans])
    rows = sum(r1 - r0 for r0, r1 in spans)
    labels = list(names or (_RUN if run else _QRELS))
    arrays = [columns[0], columns[1], values]
    if slots == 3:
        arrays.append(columns[2])
        labels = labels[:3] + [labels[3] if len(labels) > 3 else "tag"]
    last = None
    if trec and run and rows:
        last = data[last_a:last_b].decode("utf-8")
    return Text(pa.table(arrays, names=labels[:len(arrays)]), last)


_PIECE = 1 << 22  # bytes: a file this long or longer is read in several pieces at once


def _pieces(data: bytes) -> list:
    """Where a file's pieces start (and, last, its length): one a thread (Numba's
    count) for a file of 4 MiB or more, each cut right after a ``\\n`` (a line end
    by both sets of rules), so each piece starts a line."""
    from ._kernels.threads import thread_count

    n = thread_count() if len(data) >= _PIECE else 1
    cuts = [0]
    for i in range(1, n):
        at = data.find(b"\n", max(cuts[-1], len(data) * i // n))
        if at < 0 or at + 1 >= len(data):
            break
        cuts.append(at + 1)
    cuts.append(len(data))
    return cuts


def _strings(chars: np.ndarray, offs: np.ndarray, start: int, stop: int) -> pa.Array:
    """A large_string array over the strings start:stop of a slot."""
    ends = offs[start:stop + 1]
    return pa.Array.from_buffers(pa.large_string(), stop - start,
                                 [None, pa.py_buffer(ends), pa.py_buffer(chars[:ends[-1]])])


def _chunks(arrays: list):
    """One array, or the pieces' arrays as the chunks of one column."""
    return arrays[0] if len(arrays) == 1 else pa.chunked_array(arrays)


def _parsed(chars: np.ndarray, offs: np.ndarray) -> np.ndarray:
    """Plain decimals (text) as doubles, correctly rounded (Arrow's parser, as
    strtod rounds them)."""
    texts = _strings(chars, offs, 0, len(offs) - 1)
    return np.asarray(texts.cast(pa.float64()).to_numpy(zero_copy_only=False))


# --------------------------------------------------------------------------- printing

_KINDS = {"nothing": 0, "fixed4": 1, "long": 2, "text": 3}


def _joined(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Strings as one UTF-8 buffer and offsets."""
    encoded = [t.encode("utf-8") for t in texts]
    offs = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(e) for e in encoded], out=offs[1:])
    return np.frombuffer(b"".join(encoded) or b"\0", np.uint8), offs


def _widest(values: np.ndarray) -> int:
    """The most bytes ``%6.4f`` prints for one of ``values``."""
    big = np.abs(values[np.isfinite(values)])
    return 22 if not len(big) or big.max() < 1e15 else 330


def print_lines(heads: Sequence[str], kinds: Sequence[str], values: Sequence, qids: Sequence[str]
                ) -> bytes:
    """The text of a table of printed lines x queries: for each query, each line
    whose kind is not "nothing": its head, the query id, a tab, its value (kind
    "fixed4": C's ``%6.4f``; "long": ``%ld``; "text": the string), a newline.
    ``values[j]``: line j's values, one per query (None for "nothing").

    >>> print_lines(["num_ret\\t", "P_5\\t"], ["long", "fixed4"], [[3], [-0.0]], ["all"])
    b'num_ret\\tall\\t3\\nP_5\\tall\\t-0.0000\\n'
    """
    from ._kernels.printing import print_table

    n_q = len(qids)
    codes = np.array([_KINDS[k] for k in kinds], np.int64)
    rows = np.zeros(len(kinds), np.int64)
    floats, longs, texts = [], [], []
    for j, (kind, column) in enumerate(zip(kinds, values)):
        if kind == "fixed4":
            rows[j] = len(floats)
            floats.append(np.asarray(column, np.float64))
        elif kind == "long":
            rows[j] = len(longs)
            longs.append(np.asarray(column, np.int64))
        elif kind == "text":
            rows[j] = len(texts) // max(n_q, 1)
            texts.extend(column)
    float_t = np.array(floats, np.float64).reshape(len(floats), n_q)
    long_t = np.array(longs, np.int64).reshape(len(longs), n_q)
    head_b, head_o = _joined(heads)
    qid_b, qid_o = _joined(qids)
    text_b, text_o = _joined(texts)
    shown = codes != 0
    widest = sum(_widest(np.asarray(c, np.float64)) for c in floats) + 21 * len(longs)
    size = (n_q * (int(np.diff(head_o)[shown].sum()) + 2 * int(shown.sum()) + widest)
            + int(shown.sum()) * int(qid_o[-1]) + len(text_b))
    out = np.empty(size, np.uint8)
    n = print_table(head_b, head_o, codes, rows, float_t, long_t, text_b, text_o, qid_b,
                    qid_o, out)
    return out[:n].tobytes()
