"""Record batches -> chunks of whole queries.

:func:`query_chunks` cuts a stream of record batches into :class:`Chunk` objects,
each holding whole queries in CSR layout: a query whose rows run on into the next
batch, row group or file is held back until it ends, so it is scored once, whole.
The last chunk of a stream is always the last run of rows on its own, which is
what lets a partition of a larger log hand its two edge queries to whoever
stitches partitions together (:mod:`fastndcg.dask`).

A *run* is a maximal block of adjacent rows with one query id. In a log whose
queries are contiguous every run is a query; when a query's rows are scattered
(its id appears again later) each run is a fragment, found and repaired by
:mod:`fastndcg.scattered`.

>>> import pyarrow as pa
>>> batches = [pa.record_batch({"q": [1, 1, 2]}), pa.record_batch({"q": [2, 3]})]
>>> [c.ids.to_pylist() for c in query_chunks(iter(batches), "q")]
[[1], [2], [3]]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._arrow import all_distinct, as_numpy, from_numpy, one_array, plain_ids, run_starts

__all__ = ["Chunk", "query_chunks", "regroup", "group", "run_ids", "check_nulls"]


@dataclass
class Chunk:
    """Whole queries: ``ids[q]`` owns rows ``offsets[q]:offsets[q+1]`` of ``table``."""
    ids: pa.Array
    offsets: np.ndarray
    table: pa.Table | pa.RecordBatch

    @property
    def n_queries(self) -> int:
        return len(self.offsets) - 1

    def query_rows(self, q: int) -> pa.Table:
        """The rows of query ``q`` as a table of its own (copied out of the chunk: a
        slice would carry the whole batch's buffers when pickled to another process)."""
        lo, hi = int(self.offsets[q]), int(self.offsets[q + 1])
        table = self.table.take(from_numpy(np.arange(lo, hi, dtype=np.int64)))
        return pa.Table.from_batches([table]) if isinstance(table, pa.RecordBatch) else table

    def drop_first(self) -> "Chunk | None":
        """The chunk without its first query (None when nothing is left)."""
        if self.n_queries <= 1:
            return None
        lo = int(self.offsets[1])
        return Chunk(self.ids.slice(1), self.offsets[1:] - lo,
                     self.table.slice(lo, self.table.num_rows - lo))

    def select(self, wanted: pa.Array) -> "Chunk | None":
        """The chunk's queries whose id is in ``wanted`` (None when there are none)."""
        ids = self.ids if self.ids.type == wanted.type else self.ids.cast(wanted.type)
        mask = as_numpy(pc.is_in(ids, value_set=wanted))
        if not mask.any():
            return None
        if mask.all():
            return self
        q = np.flatnonzero(mask)
        lengths = self.offsets[q + 1] - self.offsets[q]
        rows = np.repeat(self.offsets[q] - np.concatenate(([0], np.cumsum(lengths)[:-1])),
                         lengths) + np.arange(int(lengths.sum()))
        offsets = np.zeros(len(q) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return Chunk(self.ids.take(from_numpy(q)), offsets, self.table.take(from_numpy(rows)))


def check_nulls(batch: pa.RecordBatch, query: str, row0: int, rest: Iterable) -> None:
    """A clear error for the first null in any column (counting the rest of the stream)."""
    for name in batch.column_names:
        col = batch.column(name)
        if not col.null_count:
            continue
        total = col.null_count + sum(b.column(name).null_count for b in rest)
        first = pc.index(pc.is_null(col), True).as_py()
        if name == query:
            raise ValueError(f"column {name!r} has {total:,} null query id(s) (first at row "
                             f"{row0 + first:,}); every row needs a query: fill or drop them")
        qid = batch.column(query)[first].as_py()
        raise ValueError(f"column {name!r} has {total:,} null value(s) (first in query {qid!r}, "
                         f"row {row0 + first:,}); drop or fill those rows (e.g. "
                         f"pyarrow.compute.fill_null) before evaluating")


def query_chunks(batches: Iterator[pa.RecordBatch], query: str, progress=None,
                 row0: int = 0) -> Iterator[Chunk]:
    """Chunks of whole queries (runs) from ``batches``, in order; the last chunk
    holds exactly the last run. ``progress.update(rows)`` is called per batch."""
    tail: list[pa.RecordBatch] = []
    tail_id = None

    what = f"query ids in column {query!r}"

    def close_tail():
        table = pa.Table.from_batches(tail).combine_chunks()
        ids = plain_ids(one_array(table.column(query)).slice(0, 1), what)
        return Chunk(ids, np.array([0, table.num_rows], np.int64), table)

    for batch in batches:
        check_nulls(batch, query, row0, batches)
        ids = plain_ids(batch.column(query), what, narrow=True)  # only its runs are read
        n = len(ids)
        starts = run_starts(ids)
        first_end = int(starts[0]) if len(starts) else n
        last_start = int(starts[-1]) if len(starts) else 0
        lo = 0
        if tail and ids[0].as_py() == tail_id:
            tail.append(batch.slice(0, first_end))
            if first_end == n:
                row0 += n
                if progress:
                    progress.update(n)
                continue
            yield close_tail()
            lo = first_end
        elif tail:
            yield close_tail()
        if lo < last_start:
            inner = starts[(starts > lo) & (starts < last_start)]
            starts_ = np.concatenate(([lo], inner)).astype(np.int64)
            offsets = np.append(starts_ - lo, last_start - lo).astype(np.int64)
            yield Chunk(plain_ids(ids.take(from_numpy(starts_)), what), offsets,
                        batch.slice(lo, last_start - lo))
        tail = [batch.slice(last_start)]
        tail_id = ids[last_start].as_py()
        row0 += n
        if progress:
            progress.update(n)
    if tail:
        yield close_tail()


def run_ids(batches: Iterator[pa.RecordBatch], query: str) -> Iterator[pa.Array]:
    """The query id of every run, in order (the same runs :func:`query_chunks` makes),
    reading nothing but the query column."""
    last = None
    what = f"query ids in column {query!r}"
    for batch in batches:
        ids = plain_ids(batch.column(query), what, narrow=True)
        if not len(ids):
            continue
        starts = np.concatenate(([0], run_starts(ids))).astype(np.int64)
        out = plain_ids(ids.take(from_numpy(starts)), what)
        if last is not None and out[0].as_py() == last:
            out = out.slice(1)
        last = ids[len(ids) - 1].as_py()
        if len(out):
            yield out


def regroup(table: pa.Table, query: str) -> Chunk:
    """All rows of some queries, in any order -> one chunk (input order kept per query,
    queries in order of first appearance)."""
    ids = plain_ids(table.column(query))
    encoded = ids.dictionary_encode()
    codes = as_numpy(encoded.indices)
    counts = np.bincount(codes, minlength=len(encoded.dictionary))
    offsets = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    if len(codes) > 1 and not (codes[1:] >= codes[:-1]).all():  # not grouped yet
        table = table.take(from_numpy(np.argsort(codes, kind="stable")))
    return Chunk(encoded.dictionary, offsets, table)


def group(table: pa.Table, query: str) -> Chunk:
    """All rows of some queries -> one chunk, as :func:`regroup`; a table whose
    queries are grouped already (the usual file) is taken as it is, found by
    comparing neighbouring ids (no hash of every id).

    >>> group(pa.table({"q": ["b", "b", "a"]}), "q").offsets.tolist()
    [0, 2, 3]
    """
    ids = plain_ids(table.column(query))
    if not len(ids):
        return Chunk(ids, np.zeros(1, np.int64), table)
    starts = np.concatenate(([0], run_starts(ids))).astype(np.int64)
    first = ids.take(from_numpy(starts))
    if all_distinct(first):
        return Chunk(first, np.append(starts, len(ids)).astype(np.int64), table)
    return regroup(table, query)
