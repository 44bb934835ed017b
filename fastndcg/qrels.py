"""Judgments: loading qrels once, and joining each chunk of a run to them.

The qrels are read whole (they are small next to a run) and grouped by query;
their query ids get a hash index once. A run chunk is joined query by query in
Numba kernels (:mod:`fastndcg._kernels.join`): a hash set of the query's
document ids, probed with each of its judgments, gives every run row its
judgment (0 when unjudged) and finds a document listed twice; the ideal list of
a query is *all* its judged documents, retrieved or not (trec_eval's rule).

Integer document ids (int64 on both sides) are joined and ordered as numbers,
never formatted as text; ``ties="trec"`` (document id descending, compared as
strings) then uses a numeric key with the byte order of the decimal strings.
Other ids (strings, or integers meeting strings, or uint64) are compared as
strings, straight from Arrow's buffers. The trec order (a per-query sort) is
computed only when ``ties="trec"`` asks for it, and only for the queries whose
scores tie (:func:`fastndcg._core.tied_queries`): a query of distinct scores
ranks the same in any order, so its rows keep their input order.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import _core as C
from . import _kernels as K
from . import _validate as V
from . import io
from ._arrow import (as_numpy, as_strings, from_numpy, numbers, one_array, plain_ids,
                     string_buffers, text_buffers)
from .chunks import Chunk, check_nulls, group
from .presets import read_grades

__all__ = ["Qrels", "DocIds", "load_qrels", "join", "line_up", "duplicate_error", "trec_order",
           "gather_ideal", "judged_docs_only", "listed_twice"]


class NamedBatch(C.Batch):
    """A chunk's CSR arrays; queries are named by their id alone in messages."""

    def name(self, q: int) -> str:
        return f"query {self.ids[q]!r}"


class Names:
    """Query ids for messages: ``names[q]`` is the plain id of query q."""

    def __init__(self, ids: pa.Array) -> None:
        self.ids = ids

    def __getitem__(self, q: int):
        return self.ids[int(q)].as_py()


def chunk_bounds(offsets: np.ndarray) -> np.ndarray:
    return C.work_chunks(offsets, offsets)


_NO_OFFSETS = np.zeros(0, np.int64)
_NO_OFFSETS.flags.writeable = False


def kernel_ids(ids: pa.Array, as_text: bool) -> tuple:
    """Ids as the join kernels take them, a pair (values, offsets): integers as a
    NumPy array (zero copy) and no offsets, or, for strings or ``as_text``, the
    bytes and int64 offsets of their strings."""
    if not as_text and pa.types.is_integer(ids.type):
        out = (as_numpy(ids, zero_copy_only=True), _NO_OFFSETS)
    else:
        out = string_buffers(ids)
    for a in out:  # Arrow's buffers are read-only: one array type (one compiled kernel)
        a.flags.writeable = False
    return out


_NO_HASHES = np.zeros(0, np.uint64)  # ids hashed inside the join itself


class DocIds:
    """Document ids as the join kernels take them, each form made once: the ids
    (:func:`kernel_ids`, as numbers or as text) and, with ``hashed``, the hash of
    each text id, for ids that several joins read (a qrels' judgments; a run
    chunk joined to several label sets): hashed once rather than once a join.
    Integer ids are never hashed ahead: their hash is one multiplication."""

    def __init__(self, docs: pa.Array, hashed: bool) -> None:
        self.docs = docs
        self.hashed = hashed
        self._made: dict = {}

    def ids(self, as_text: bool) -> tuple:
        """The ids as :func:`kernel_ids` gives them."""
        key = ("ids", as_text)
        if key not in self._made:
            self._made[key] = kernel_ids(self.docs, as_text)
        return self._made[key]

    def short(self) -> np.ndarray | None:
        """Text ids of up to :data:`~fastndcg._kernels.join.SHORT` bytes each packed
        into one int64 (:func:`~fastndcg._kernels.join.pack_short`), or None when
        one is longer: equal ids, equal integers, matched at the cost of integers."""
        if "short" not in self._made:
            narrow = self.docs.type == pa.string()  # (not widened to be packed)
            data, offsets = text_buffers(self.docs) if narrow else self.ids(True)
            out = np.empty(len(self.docs), np.int64)
            with C.KERNEL_LOCK:
                fits = K.pack_short(data, offsets, out)
            out.flags.writeable = False  # one array type: that of kernel_ids' integers
            self._made["short"] = out if fits else None
        return self._made["short"]

    def hashes(self, as_text: bool) -> np.ndarray:
        """Each id's hash as the join computes it, or an empty array (hashed in the
        join): unless ``hashed`` and the ids are read as text."""
        ids = self.ids(as_text)
        if not self.hashed or not len(ids[1]):
            return _NO_HASHES
        key = ("hashes", as_text)
        if key not in self._made:
            out = np.empty(len(self.docs), np.uint64)
            if len(out):
                with C.KERNEL_LOCK:
                    K.id_hashes(ids, out)
            self._made[key] = out
        return self._made[key]


def _as_text(a: pa.Array, b: pa.Array, docs: bool) -> bool:
    """Whether ids of ``a`` and ``b`` are compared as strings: unless both are of one
    integer type (document ids: both int64, the type the trec order knows)."""
    if docs:
        return not a.type == b.type == pa.int64()
    return not (a.type == b.type and pa.types.is_integer(a.type))


def _duplicates(first_dup: np.ndarray):
    """None, or (query index, row) of the first query with a document listed twice,
    and how many queries have one."""
    bad = np.flatnonzero(first_dup >= 0)
    if not len(bad):
        return None
    q = int(bad[0])
    return q, int(first_dup[q]), len(bad)


_NO_KEYS = np.zeros((0, 0), np.uint64)
_NO_SKIPS = np.zeros(0, np.int64)
_NO_ROWS = np.zeros(0, np.int64)


_SCRATCH = threading.local()


_SCRATCH_MAX = 1 << 22  # elements: 32 MiB of int64 at most kept per array and thread


def _scratch(name: str, shape: tuple, dtype) -> np.ndarray:
    """An array for this chunk's join, reused by the next chunk (of this thread): a
    fresh array of a batch's size costs a page fault per 4 KiB on first touch.
    Larger ones (a huge query) are not kept."""
    size = int(np.prod(shape))
    if size > _SCRATCH_MAX:
        return np.empty(shape, dtype)
    pool = _SCRATCH.__dict__
    buf = pool.get(name)
    if buf is None or len(buf) < size or buf.dtype != dtype:
        buf = pool[name] = np.empty(max(size, 1024), dtype)
    return buf[:size].reshape(shape)


def _sorted_keys(chunk: Chunk, docs, groups: np.ndarray) -> tuple:
    """(keys, skips) for trec_eval's order of the queries ``groups`` (indices into
    the chunk's queries): the packed sort keys of query ``groups[i]`` in row i of a
    2-D array (padded), sorted (:func:`~fastndcg._kernels.join.trec_keys`); or
    empty arrays, for the kernels to sort, when the queries' lengths differ too
    much to pad them to the longest."""
    lengths = np.diff(chunk.offsets)[groups]
    longest = int(lengths.max(initial=0))
    if not len(groups) or len(groups) * longest > 2 * int(lengths.sum()) + 1024:
        return _NO_KEYS, _NO_SKIPS
    keys = _scratch("keys", (len(groups), longest), np.uint64)
    skips = np.empty(len(groups), np.int64)
    offsets = np.zeros(len(groups) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    with C.KERNEL_LOCK:
        K.trec_keys(chunk.offsets, docs, groups, chunk_bounds(offsets), keys, skips)
    return keys, skips


def _per_query(chunk: Chunk, docs, judged_q=None, jdocs=None, joff=None,
               order: np.ndarray | None = None, hashes=_NO_HASHES, jhashes=_NO_HASHES) -> tuple:
    """:func:`_join_queries`, its third item the first query that lists a document
    twice (:func:`_duplicates`) or None."""
    match, out_order, first_dup = _join_queries(chunk, docs, judged_q, jdocs, joff, order,
                                                hashes, jhashes)
    return match, out_order, _duplicates(first_dup)


def _join_queries(chunk: Chunk, docs, judged_q=None, jdocs=None, joff=None,
                  order: np.ndarray | None = None, hashes=_NO_HASHES,
                  jhashes=_NO_HASHES) -> tuple:
    """Run :func:`join_docs` over a chunk: (match, order or None, ``first_dup``: per
    query a row whose document an earlier row of the query has too, or -1),
    ``match`` valid until the next chunk's join in this thread. ``order``: which
    queries to put in trec order (a bool a query; the others keep their input
    order), or None; the order is None too when it names none. ``hashes`` and
    ``jhashes``: the hashes of ``docs`` and ``jdocs`` (:meth:`DocIds.hashes`), or
    empty."""
    n = chunk.table.num_rows
    n_q = len(chunk.offsets) - 1
    if judged_q is None:
        judged_q, jdocs, joff = np.full(n_q, -1, np.int64), docs, chunk.offsets
    groups = _NO_ROWS if order is None else np.flatnonzero(order)
    want = len(groups) > 0
    match = _scratch("match", (n,), np.int64)
    out_order = np.empty(n if want else 0, np.int64)
    first_dup = np.empty(n_q, np.int64)
    key_rows = _NO_ROWS
    keys, skips = _NO_KEYS, _NO_SKIPS
    if want:
        key_rows = np.full(n_q, -1, np.int64)
        key_rows[groups] = np.arange(len(groups))
        keys, skips = _sorted_keys(chunk, docs, groups)
    with C.KERNEL_LOCK:
        K.join_docs(chunk.offsets, docs, hashes, judged_q, joff, jdocs, jhashes,
                    chunk_bounds(chunk.offsets), want, key_rows, keys, skips, match, out_order,
                    first_dup)
    return match, (out_order if want else None), first_dup


def _doc_column(chunk: Chunk, doc: str, narrow: bool = False) -> pa.Array:
    return plain_ids(chunk.table.column(doc), f"document ids in column {doc!r}", narrow)


def chunk_docs(chunk: Chunk, doc: str, hashed: bool = True) -> DocIds:
    """The document ids of a run chunk (column ``doc``) as the joins take them:
    made once for the joins of every label set (``hashed``: text ids hashed once
    too). String ids (32-bit offsets) are widened only if a join reads them as
    text: packed into integers (the usual short ids), they need not be."""
    return DocIds(_doc_column(chunk, doc, narrow=True), hashed)


def _check_unique(chunk: Chunk, docs: pa.Array, dup, what: str) -> None:
    if dup is not None:
        q, row, _ = dup
        raise ValueError(f"the {what} lists document {as_strings(docs)[row].as_py()!r} more "
                         f"than once for query {chunk.ids[q].as_py()!r}; keep one row per "
                         f"(query, document)")


@dataclass
class Qrels:
    ids: pa.Array          # unique judged query ids (int64, uint64 or large_string)
    offsets: np.ndarray    # judgments of query j: rows offsets[j]:offsets[j+1]
    docs: pa.Array         # judged document ids, grouped by query (as ids in the source)
    # the label of judgment t at [t] (after the negative_labels policy), and 0 at
    # [-1]: indexed by join matches, -1 (unjudged) reads 0
    labels0: np.ndarray
    info: Any              # _core.LabelInfo of the labels
    # as labels0, before the negative_labels policy (relevance reads the grades as
    # judged: -2 is not relevant even at rel=0); the same array when nothing changed
    raw0: Any = None
    _cache: dict = field(repr=False, default_factory=dict)
    # the judged document ids as the joins take them, hashed once (:class:`DocIds`)
    doc_ids: Any = field(repr=False, default=None)
    subject: str = "the qrels"  # what messages call the judgments
    argument: str = "qrels"  # the argument they were given as (human_qrels: a sample)
    # judgments of a sample of the queries (human_qrels=): most queries are outside
    # it, so their ids are not collected (only an example, for messages)
    sample: bool = False
    # a grade given as an integer past 2**53, held as the nearest double (so two such
    # grades may be held alike): its value, else None
    inexact: Any = None

    def __post_init__(self) -> None:
        if self.doc_ids is None:
            self.doc_ids = DocIds(self.docs, hashed=True)

    def relevant_counts(self, rel: int) -> np.ndarray:
        """R of each judged query at threshold ``rel``: its judgments with a grade >= rel."""
        def count():
            raw = (self.labels0 if self.raw0 is None else self.raw0)[:-1]
            c = np.concatenate(([0], np.cumsum(raw >= rel, dtype=np.int64)))
            return c[self.offsets[1:]] - c[self.offsets[:-1]]
        return self._cached(("relevant", rel), count)

    @property
    def labels(self) -> np.ndarray:
        """The label of each judgment."""
        return self.labels0[:-1]

    @property
    def n_queries(self) -> int:
        return len(self.ids)

    def _cached(self, key, make):
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def check_unique(self) -> None:
        """Refuse judgments that judge a document twice for a query (what
        :func:`load_qrels` checks unless told ``unique=False``)."""
        chunk = Chunk(self.ids, self.offsets, pa.table({"doc": self.docs}))
        _judged_once(chunk, self.doc_ids, self.subject)

    def judged_queries(self, ids: pa.Array) -> np.ndarray:
        """The judged query index of each of ``ids`` (-1: no judgments); ids of another
        type than the judged ones (int vs string) are matched as strings."""
        text = _as_text(ids, self.ids, docs=False)
        given = None
        if text:  # short text ids (most are) looked up as the integers they pack into
            packed = self._cached(("packed",), lambda: DocIds(self.ids, False).short())
            short = None if packed is None else DocIds(ids, False).short()
            if short is not None:
                text, given = "packed", (short, _NO_OFFSETS)

        def index():
            judged = ((packed, _NO_OFFSETS) if text == "packed"
                      else kernel_ids(self.ids, text))
            size = 2
            while size < 2 * len(self.ids):
                size *= 2
            table = np.full(size, -1, np.int64)
            K.index_ids(judged, len(self.ids), table)  # not parallel: no lock
            return judged, table

        judged, table = self._cached(("index", text), index)
        out = np.empty(len(ids), np.int64)
        if len(ids):
            K.lookup_ids(table, judged, given or kernel_ids(ids, text), out)
        return out

    def match(self, chunk: Chunk, doc: str, order: np.ndarray | None = None,
              run_docs: DocIds | None = None) -> tuple:
        """(match, order, judged_q) of a run chunk: each row's judgment position in
        ``docs`` (-1: unjudged; a scratch array, overwritten by the next join in this
        thread), the rows with the queries that ``order`` flags in trec order and
        the others in input order (None when ``order`` is None or flags none) and
        each query's judged index (-1: none). A document listed twice is an error. ``run_docs``:
        the chunk's document ids (column ``doc``) as several joins share them
        (:func:`chunk_docs`), else read here."""
        if run_docs is None:
            run_docs = chunk_docs(chunk, doc, hashed=False)
        text = _as_text(run_docs.docs, self.docs, docs=True)
        judged_q = self.judged_queries(chunk.ids)
        short = None
        if text and (order is None or not order.any()):
            # short text ids (most are) matched as integers, when no query needs
            # trec_eval's order (which is the text's); the qrels' packed once
            jshort = self.doc_ids.short()
            short = None if jshort is None else run_docs.short()
        if short is not None:
            ids, jids = (short, _NO_OFFSETS), (jshort, _NO_OFFSETS)
            hashes = jhashes = _NO_HASHES
        else:
            ids, jids = run_docs.ids(text), self.doc_ids.ids(text)
            hashes, jhashes = run_docs.hashes(text), self.doc_ids.hashes(text)
        match, out_order, dup = _per_query(chunk, ids, judged_q, jids, self.offsets, order,
                                           hashes, jhashes)
        _check_unique(chunk, run_docs.docs, dup, "run")
        return match, out_order, judged_q

    def judged_rows(self, chunk: Chunk, query: str, doc: str) -> np.ndarray:
        """Whether each row of a run chunk has a judgment (its (query, document) pair
        is in the qrels), in the chunk's row order."""
        return self.match(chunk, doc)[0] >= 0


def load_qrels(qrels, query: str, doc: str, label: str, gain: C.Gain,
               negative_labels: str, preset: str | None = None, name: str = "qrels",
               unique: bool = True) -> Qrels:
    """Read and check the judgments (TREC qrels file, Parquet, or a table); a grade
    that is not a whole number is read as ``preset``'s tool reads it
    (:func:`fastndcg.presets.read_grades`); ``name``: what messages call them (the
    argument, or one label set of it). ``unique=False`` leaves the check for a
    document judged twice to the caller (:func:`line_up` does it), unless another
    check fails: that one is still said first."""
    roles = {query: "query", doc: "doc", label: "label"}
    if isinstance(qrels, io.Given):  # passed on under another name: messages use the user's
        name = qrels.argument
    try:
        src = io.open_source(qrels, roles, trec=lambda p: io.read_trec_qrels(
            p, query=query, doc=doc, label=label, preset=preset), name=name)
    except TypeError as err:
        if "as a search log" not in str(err):
            raise
        what = io.kind_of(qrels)
        got = "" if what.startswith("an iterator") else f"; got {V.shown(qrels)}"
        raise TypeError(f"{name}: cannot read {what} as judgments; pass a TREC qrels file (qid "
                        f"iter docno rel), a Parquet file, or a table with columns {query!r}, "
                        f"{doc!r}, {label!r}{got}") from None
    # messages name the qrels: a file by its name, an object by the argument (qrels=)
    memory = src.argument is not None
    kind = "human_qrels" if name == "human_qrels" else "qrels"  # (a label set is qrels)
    where = f"{name}: " if memory else f"in the {kind} {src.describe}: "
    src.describe = src.named if memory else f"{kind} {src.describe}"
    batches = list(src.batches())
    try:
        row0 = 0
        for i, b in enumerate(batches):
            check_nulls(b, query, row0, iter(batches[i + 1:]))
            row0 += b.num_rows
        table = pa.Table.from_batches(batches, schema=batches[0].schema) if batches else None
        if table is None or table.num_rows == 0:
            if memory:
                raise ValueError(f"{src.describe} holds no judgments (0 rows): nothing to "
                                 f"evaluate against; give it a row per judgment, with columns "
                                 f"{query!r}, {doc!r}, {label!r}")
            raise ValueError(f"the {src.describe} hold no judgments (0 rows); give one judgment a "
                             f"line (qid iter docno rel), or a table with columns {query!r}, "
                             f"{doc!r}, {label!r}")
        chunk = group(table, query)
        docs = _doc_column(chunk, doc)
    except ValueError as err:
        text = str(err)
        raise ValueError(text if text.startswith(("the ", "qrels", name)) else where + text) from None
    judged_docs = DocIds(docs, hashed=True)  # hashed once: here and in every join
    subject = f"{name}: the qrels" if memory else f"the {src.describe}"
    if unique:
        _judged_once(chunk, judged_docs, subject)
    try:
        labels0, raw0, info, inexact = _grades(chunk, docs, label, gain, negative_labels,
                                               preset, src, memory, where)
    except ValueError:
        if not unique:  # a document judged twice is still the first thing said
            _judged_once(chunk, judged_docs, subject)
        raise
    return Qrels(chunk.ids, chunk.offsets, docs, labels0, info, raw0, doc_ids=judged_docs,
                 subject=subject, argument=name, inexact=inexact)


def _inexact(exact: np.ndarray | None) -> int | None:
    """The first of the integer grades ``exact`` (those held as doubles) past 2**53,
    which a double holds only approximately, or None."""
    if exact is None or not len(exact):
        return None
    big = np.abs(exact.astype(np.float64)) > 2.0 ** 53
    return int(exact[int(np.argmax(big))]) if big.any() else None


def _grades(chunk: Chunk, docs: pa.Array, label: str, gain: C.Gain, negative_labels: str,
            preset: str | None, src, memory: bool, where: str) -> tuple:
    """(labels0, raw0, info, inexact) of the grouped judgments (see :class:`Qrels`),
    checked."""
    column = chunk.table.column(label)
    labels = numbers(column, C.kernel_labels)
    # integers past 32 bits are float64 to the kernels: the tool's bounds are checked on them
    exact = numbers(column) if labels.dtype.kind == "f" and pa.types.is_integer(
        column.type) else None
    labels = read_grades(labels, preset, lambda t: (
        f"{src.describe if memory else 'the ' + src.describe}, column {label!r}, query "
        f"{chunk.ids[int(np.searchsorted(chunk.offsets, t, 'right')) - 1].as_py()!r}, "
        f"document {as_strings(docs)[t].as_py()!r}"), exp2=gain.mode == K.EXP2, exact=exact)
    batch = NamedBatch(chunk.offsets, labels, labels, ids=Names(chunk.ids))
    try:
        info = C.check_values(batch, gain, "error", negative_labels, check_scores=False)
    except ValueError as err:
        raise ValueError(f"{where}column {label!r}: {err}" if memory else
                         f"in the {src.describe}, column {label!r}: {err}") from None
    info = C.LabelInfo(info.integer, min(info.lo, 0.0), max(info.hi, 0.0))
    # a writable copy, as gathered labels are (slices of it are ideal lists, and one
    # array type reaches the NDCG kernels)
    labels0 = np.zeros(len(batch.labels) + 1, batch.labels.dtype)
    labels0[:-1] = batch.labels
    raw0 = None
    if batch.labels is not labels:  # the policy changed some grades: keep them as judged
        raw0 = np.zeros(len(labels) + 1, labels.dtype)
        raw0[:-1] = labels
    return labels0, raw0, info, _inexact(exact)


def duplicate_error(subject: str, ids: pa.Array, docs: pa.Array, dup: tuple) -> ValueError:
    """The error of judgments that judge a document twice for a query: ``dup`` is
    (query index, row, queries with such a document), ``subject`` names the
    judgments ("the qrels file x")."""
    q, row, n_bad = dup
    how_many = "1 query has" if n_bad == 1 else f"{n_bad:,} queries have"
    return ValueError(f"{subject} judge document {as_strings(docs)[row].as_py()!r} of query "
                      f"{ids[q].as_py()!r} more than once ({how_many} such duplicates); "
                      f"keep one judgment per (query, document)")


def _judged_once(chunk: Chunk, docs: DocIds, subject: str) -> None:
    """Refuse judgments (grouped by query in ``chunk``) that judge a document twice
    for a query."""
    text = docs.docs.type != pa.int64()
    short = docs.short() if text else None  # packed (as the joins will want them)
    if short is not None:
        dup = _per_query(chunk, (short, _NO_OFFSETS))[2]
    else:
        dup = _per_query(chunk, docs.ids(text), hashes=docs.hashes(text))[2]
    if dup is not None:
        raise duplicate_error(subject, chunk.ids, docs.docs, dup)


def line_up(first: Qrels, second: Qrels) -> tuple:
    """(match, judged_q, duplicates) of two sets of judgments: for each judgment of
    ``first``, the position of the same (query, document) among ``second``'s (-1:
    not judged there); for each query of ``first``, its index among ``second``'s
    (-1: none); and for each set, None or the document it judges twice (query
    index, row, queries with such a document: :func:`duplicate_error`). Both sets
    are checked in the same pass that lines them up (load them with
    ``unique=False``: each check alone would build the same hash sets again).
    Ids of different types (integers, strings) are matched as text; text ids of
    up to 7 bytes, packed into integers (:meth:`DocIds.short`)."""
    text = _as_text(first.docs, second.docs, docs=True)
    judged_q = second.judged_queries(first.ids)
    unmet = np.ones(second.n_queries, bool)
    unmet[judged_q[judged_q >= 0]] = False
    extra = np.flatnonzero(unmet).astype(np.int64)
    sizes = np.concatenate((np.diff(first.offsets), np.zeros(len(extra), np.int64)))
    met = np.concatenate((judged_q, extra))
    sizes += np.where(met >= 0, second.offsets[met + 1] - second.offsets[np.maximum(met, 0)], 0)
    cost = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=cost[1:])
    match = np.empty(len(first.docs), np.int64)
    first_dup = np.empty(first.n_queries, np.int64)
    second_dup = np.full(second.n_queries, -1, np.int64)
    ids = first.doc_ids.ids(text), second.doc_ids.ids(text)
    if text:  # short text ids (most are) matched as integers
        short = first.doc_ids.short(), second.doc_ids.short()
        if short[0] is not None and short[1] is not None:
            ids = (short[0], _NO_OFFSETS), (short[1], _NO_OFFSETS)
    with C.KERNEL_LOCK:
        K.line_up(first.offsets, ids[0], judged_q, second.offsets, ids[1], extra,
                  chunk_bounds(cost), match, first_dup, second_dup)
    return match, judged_q, (_duplicates(first_dup), _duplicates(second_dup))


def judged_docs_only(run: pa.Table, judgments: pa.Table) -> pa.Table:
    """The rows of ``run`` whose document is judged with a label >= 0 for its query,
    in the run's order: trec_eval's ``-J`` (pytrec_eval's judged_docs_only_flag).
    Both tables have columns ``query_id`` and ``doc_id`` (``judgments`` also
    ``label``); ids are matched as text, so integer and string ids may meet."""
    judged = judgments.filter(from_numpy(as_numpy(judgments.column("label")) >= 0))

    def codes(column: str) -> tuple:
        """The ids of ``column`` in both tables as codes of one dictionary (text)."""
        a, b = (one_array(pc.cast(t.column(column), pa.large_string())) for t in (run, judged))
        encoded = pa.concat_arrays([a, b]).dictionary_encode()
        codes_ = as_numpy(encoded.indices).astype(np.int64)
        return codes_[:len(a)], codes_[len(a):], len(encoded.dictionary)

    rq, jq, _ = codes("query_id")
    rd, jd, n_docs = codes("doc_id")
    pairs = pc.is_in(from_numpy(rq * n_docs + rd), value_set=from_numpy(jq * n_docs + jd))
    return run.filter(pairs)


def trec_order(chunk: Chunk, doc: str, tied: np.ndarray | None) -> np.ndarray | None:
    """List mode, ``ties="trec"``: the rows of the chunk with those of each query
    that ``tied`` flags (a bool a query: its scores tie) in document id descending
    order and the others in input order; None when ``tied`` is None or flags none
    (every query ranks the same in any order). A document listed twice in a query
    is an error either way."""
    docs = _doc_column(chunk, doc)
    _, order, dup = _per_query(chunk, kernel_ids(docs, docs.type != pa.int64()), order=tied)
    _check_unique(chunk, docs, dup, "log")
    return order


def listed_twice(table: pa.Table, query: str, doc: str) -> pa.Array:
    """The ids of the queries of ``table`` that list a document more than once, in
    the order of their first row (one compiled pass: a hash set of each query's
    document ids, as every join finds them).

    >>> t = pa.table({"q": ["a", "a", "b", "b"], "d": ["x", "x", "x", "y"]})
    >>> listed_twice(t, "q", "d").to_pylist()
    ['a']
    """
    if table.num_rows < 2:
        return plain_ids(table.column(query)).slice(0, 0)
    chunk = group(table, query)
    docs = _doc_column(chunk, doc)
    _, _, first_dup = _join_queries(chunk, kernel_ids(docs, docs.type != pa.int64()))
    return chunk.ids.take(from_numpy(np.flatnonzero(first_dup >= 0)))


def join(chunk: Chunk, qr: Qrels, doc: str, order: np.ndarray | None = None,
         grades: bool = False, run_docs: DocIds | None = None) -> tuple:
    """(labels, order, judged_q, ideal, grades) of a run chunk: each row's judgment (0
    when unjudged), the rows with those of each query that ``order`` flags (a bool
    a query) in document id descending order and the others in input order (None
    when ``order`` is None or flags none), the judged query index of each run
    query (-1: no judgments), the ideal lists and, with ``grades``, (each row's
    grade as judged, whether it is judged) for the relevance of binary measures
    (else None). ``run_docs``: the chunk's document ids as the joins of several
    label sets share them (:func:`chunk_docs`)."""
    match, out_order, judged_q = qr.match(chunk, doc, order, run_docs)
    extra = None
    if grades:
        extra = ((qr.labels0 if qr.raw0 is None else qr.raw0)[match], match >= 0)
    return qr.labels0[match], out_order, judged_q, gather_ideal(qr, judged_q), extra


def gather_ideal(qr: Qrels, judged_q: np.ndarray) -> C.Batch:
    """The judged labels of each query (none for -1), as a CSR batch. When the judged
    queries come in the qrels' own order (runs and qrels sorted alike), the labels
    are a slice of the qrels' labels, not a copy."""
    ok = judged_q >= 0
    j = np.where(ok, judged_q, 0)
    starts = qr.offsets[j]
    lengths = np.where(ok, qr.offsets[j + 1] - starts, 0)
    ioff = np.zeros(len(judged_q) + 1, np.int64)
    np.cumsum(lengths, out=ioff[1:])
    judged = judged_q[ok]
    if len(judged) and (np.diff(judged) == 1).all():
        base = int(qr.offsets[judged[0]])
        labels = qr.labels[base:base + int(ioff[-1])]
    else:
        idx = np.repeat(starts - ioff[:-1], lengths) + np.arange(ioff[-1])
        labels = qr.labels[idx]
    return C.Batch(ioff, labels, labels)
