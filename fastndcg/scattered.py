"""Scattered queries: finding query ids that label more than one run, and scoring
those queries whole, in bounded memory.

A query is *scattered* when its rows are not adjacent (its id appears again
after other queries). The first pass scores every run on its own; when its ids
did not come in strictly increasing order (:class:`fastndcg.partition.SortCheck`,
the cheap proof for the common sorted log), :class:`IdSpill` looks for ids seen
more than once: the run ids are hashed into buckets on disk once there are more
than ``SPILL_IDS`` of them, and each bucket is checked on its own, so memory
stays bounded whatever the number of queries. The rows of the scattered queries
are then read again (:func:`rescore`), regrouped in memory when they are few or
through hash buckets on disk, and each query is scored whole; :func:`patch`
rewrites a part of per-query results, putting each whole result at the query's
first appearance and dropping its fragments.

Memory here grows with the number of *scattered* queries (their ids and results,
about 100 bytes each), never with the number of queries or rows of the log.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._arrow import as_numpy, concat_ids, from_numpy, id_hash, plain_ids, scalar
from .chunks import regroup
from .parts import Part, PartWriter, Rows, weight_name
from .totals import Totals

__all__ = ["IdSpill", "rescore", "patch", "Fixed", "duplicates_in"]

SPILL_IDS = 2 << 20      # run ids held in memory before they are spilled to hash buckets
REGROUP_ROWS = 8 << 20   # rows of scattered queries regrouped in memory, else on disk


def _seen_twice(values: np.ndarray) -> np.ndarray:
    """The values that occur more than once in ``values``, each once, ascending."""
    s = np.sort(values)
    return np.unique(s[1:][s[1:] == s[:-1]])


def duplicates_in(ids: pa.Array) -> pa.Array | None:
    """Ids that occur more than once in ``ids``."""
    if not len(ids):
        return None
    if pa.types.is_integer(ids.type):
        dup = _seen_twice(as_numpy(ids, zero_copy_only=True))
        return from_numpy(dup, ids.type) if len(dup) else None
    # text: the ids whose 64-bit hash is seen twice, then those few compared as text
    # (Arrow's dictionary of every id cost ~140 ns an id; hashing and sorting ~15)
    h = id_hash(ids)
    twice = _seen_twice(h)
    if not len(twice):
        return None
    ids = ids.filter(from_numpy(np.isin(h, twice)))
    encoded = ids.dictionary_encode()
    counts = np.bincount(as_numpy(encoded.indices), minlength=len(encoded.dictionary))
    dup = np.flatnonzero(counts > 1)
    return encoded.dictionary.take(from_numpy(dup)) if len(dup) else None


class IdSpill:
    """Collects ids; :meth:`duplicates` gives those seen more than once. Up to
    ``SPILL_IDS`` ids stay in memory; past that all go to ``n_buckets`` files on
    disk by hash, so memory stays at about ``SPILL_IDS`` ids plus one bucket.

    >>> spill = IdSpill()
    >>> spill.add(pa.array([3, 1, 2], pa.int64())); spill.add(pa.array([1], pa.int64()))
    >>> spill.duplicates().to_pylist()
    [1]
    """

    def __init__(self, expected: int | None = None, tmpdir: str | None = None,
                 memo: bool = False) -> None:
        # memo: the ids of a source that can be read again, kept while they fit in
        # memory (no disk written); past SPILL_IDS they are dropped (``gave_up``)
        # and read again from the source if they are needed
        self.memo = memo
        self.gave_up = False
        self.n_buckets = max(16, -(-(expected or 0) // SPILL_IDS)) if expected else 256
        self.tmpdir = tmpdir
        self._buffer: list[pa.Array] = []
        self._buffered = 0
        self._dir: str | None = None
        self._writers: dict[int, pa.ipc.RecordBatchStreamWriter] = {}
        self._type = None

    def add(self, ids: pa.Array) -> None:
        if not len(ids) or self.gave_up:
            return
        ids = plain_ids(ids)
        if self._type is None:
            self._type = ids.type
        elif ids.type != self._type:  # int and string ids in one log: compare as strings
            raise ValueError("query ids change type between batches (integers and strings); "
                             "write the log with one type for the query column")
        self._buffer.append(ids)
        self._buffered += len(ids)
        if self._buffered > SPILL_IDS:
            if self.memo:
                self._buffer, self._buffered, self.gave_up = [], 0, True
            else:
                self._spill()

    def _spill(self) -> None:
        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="fastndcg-ids-", dir=self.tmpdir)
        ids = pa.concat_arrays(self._buffer)
        self._buffer, self._buffered = [], 0
        bucket = (id_hash(ids) % np.uint64(self.n_buckets)).astype(np.int64)
        order = np.argsort(bucket, kind="stable")
        bounds = np.searchsorted(bucket[order], np.arange(self.n_buckets + 1))
        ids = ids.take(from_numpy(order))
        schema = pa.schema([("id", ids.type)])
        for b in range(self.n_buckets):
            lo, hi = int(bounds[b]), int(bounds[b + 1])
            if lo == hi:
                continue
            if b not in self._writers:
                sink = pa.OSFile(os.path.join(self._dir, f"{b}.arrow"), "wb")
                self._writers[b] = pa.ipc.new_stream(sink, schema)
            self._writers[b].write_batch(pa.record_batch([ids.slice(lo, hi - lo)], schema=schema))

    def duplicates(self) -> pa.Array | None:
        """All ids seen more than once (None if none); removes the spill files."""
        try:
            if self._dir is None:
                if not self._buffer:
                    return None
                return duplicates_in(pa.concat_arrays(self._buffer))
            if self._buffer:
                self._spill()
            found = []
            for b, writer in sorted(self._writers.items()):
                writer.close()
                with pa.memory_map(os.path.join(self._dir, f"{b}.arrow")) as f:
                    table = pa.ipc.open_stream(f).read_all()
                dup = duplicates_in(table.column(0).combine_chunks())
                if dup is not None:
                    found.append(dup)
            return pa.concat_arrays(found) if found else None
        finally:
            self.close()

    def close(self) -> None:
        for w in self._writers.values():
            try:
                w.close()
            except (OSError, pa.ArrowException):
                pass
        self._writers = {}
        self._buffer = []
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


class Fixed:
    """Whole-query results of the scattered queries, aligned to ``dup_ids``
    (``has[i]`` False: query i got no result, e.g. it has no judgments)."""

    def __init__(self, dup_ids: pa.Array, scored: list, n_cutoffs: int) -> None:
        n = len(dup_ids)
        self.dup_ids = dup_ids
        self.has = np.zeros(n, bool)
        self.n_docs = np.zeros(n, np.int64)
        self.values = np.zeros((n, n_cutoffs))
        self.zero = np.zeros(n, bool)
        self.weight = None
        self.extra = None
        for s in scored:
            if not len(s.ids):
                continue
            ids = s.ids if s.ids.type == dup_ids.type else s.ids.cast(dup_ids.type)
            at = as_numpy(pc.index_in(ids, value_set=dup_ids)).astype(np.int64)
            self.has[at] = True
            self.n_docs[at] = s.n_docs
            self.values[at] = s.values
            self.zero[at] = s.zero
            if s.weight is not None:
                if self.weight is None:
                    self.weight = np.zeros(n)
                self.weight[at] = s.weight
            for name, col in (s.extra or {}).items():
                if self.extra is None:
                    self.extra = {}
                if name not in self.extra:
                    self.extra[name] = np.zeros(n, col.dtype)
                self.extra[name][at] = col

    def whole(self) -> Rows:
        """The whole-query results that exist, as rows."""
        mask = self.has
        return Rows(self.dup_ids.filter(from_numpy(mask)), self.n_docs[mask], self.values[mask],
                    self.zero[mask], None if self.weight is None else self.weight[mask],
                    None if self.extra is None else {k: v[mask] for k, v in self.extra.items()})


def rescore(batches: Iterable[pa.RecordBatch], query: str, dup_ids: pa.Array, scorer,
            tmpdir: str | None = None) -> list:
    """Read the rows of the scattered queries again (in source order) and score each
    query whole: in memory up to ``REGROUP_ROWS`` rows, else through hash buckets
    on disk. Returns a list of ``Scored``."""
    import pyarrow.parquet as pq

    held: list[pa.RecordBatch] = []
    held_rows = 0
    tmp = None
    writers: dict[int, pq.ParquetWriter] = {}
    n_buckets = 0

    def to_disk(rows: pa.RecordBatch) -> None:
        bucket = (id_hash(plain_ids(rows.column(query))) % np.uint64(n_buckets)).astype(np.int64)
        for b in np.unique(bucket):
            if b not in writers:
                writers[b] = pq.ParquetWriter(os.path.join(tmp, f"{b}.parquet"), rows.schema)
            writers[b].write_batch(rows.filter(from_numpy(bucket == b)))

    try:
        for batch in batches:
            ids = plain_ids(batch.column(query))
            if ids.type != dup_ids.type:
                ids = ids.cast(dup_ids.type)
            keep = pc.is_in(ids, value_set=dup_ids)
            if not pc.any(keep).as_py():
                continue
            rows = batch.filter(keep)
            if tmp is None:
                held.append(rows)
                held_rows += rows.num_rows
                if held_rows > REGROUP_ROWS:
                    tmp = tempfile.mkdtemp(prefix="fastndcg-regroup-", dir=tmpdir)
                    n_buckets = max(2, -(-4 * held_rows // REGROUP_ROWS))
                    for r in held:
                        to_disk(r)
                    held = []
            else:
                to_disk(rows)
        if tmp is None:
            if not held:
                return []
            table = pa.Table.from_batches(held, schema=held[0].schema)
            return [scorer.score_chunk(regroup(table, query))]
        for w in writers.values():
            w.close()
        out = []
        for b in sorted(writers):
            table = pq.read_table(os.path.join(tmp, f"{b}.parquet"))
            out.append(scorer.score_chunk(regroup(table, query)))
        return out
    finally:
        for w in writers.values():
            try:
                w.close()
            except (OSError, pa.ArrowException):
                pass
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def patch(part: Part, writer: PartWriter, fixed: Fixed, home: np.ndarray | None = None
          ) -> Totals:
    """Copy ``part`` into ``writer``, with each scattered query's first fragment
    replaced by its whole result and its other fragments dropped. ``home[i]``:
    whether this part holds the first appearance of ``fixed.dup_ids[i]`` (default:
    all, for a log in one part). Returns the totals of what was written."""
    home = np.ones(len(fixed.dup_ids), bool) if home is None else home
    done = ~(home & fixed.has)  # a first appearance still to write
    total = Totals.empty(writer.names, weighted=weight_name(part.schema) is not None)
    for rows in part.iter_rows():
        ids = rows.ids if rows.ids.type == fixed.dup_ids.type else rows.ids.cast(fixed.dup_ids.type)
        at = pc.index_in(ids, value_set=fixed.dup_ids)
        at = as_numpy(at.fill_null(scalar(-1, at.type))).astype(np.int64)
        keep = at < 0
        where = np.flatnonzero(~keep)
        where = where[~done[at[where]]]
        # the first row of each scattered query still to write takes its whole result
        _, first = np.unique(at[where], return_index=True)
        where = where[first]
        i = at[where]
        done[i] = True
        keep[where] = True
        rows.n_docs = rows.n_docs.copy()
        rows.values = rows.values.copy()
        rows.zero = rows.zero.copy()
        rows.n_docs[where], rows.values[where], rows.zero[where] = (
            fixed.n_docs[i], fixed.values[i], fixed.zero[i])
        if rows.weight is not None and fixed.weight is not None:
            rows.weight = rows.weight.copy()
            rows.weight[where] = fixed.weight[i]
        for name in rows.extra or {}:
            rows.extra[name] = rows.extra[name].copy()
            rows.extra[name][where] = fixed.extra[name][i]
        total = total.merge(writer.add(rows.select(keep)))
    return total


def merge_ids(parts: list[pa.Array]) -> pa.Array | None:
    parts = [p for p in parts if p is not None and len(p)]
    if not parts:
        return None
    return pc.unique(pa.concat_arrays(concat_ids(parts)))


def iter_nonempty(it: Iterable) -> Iterator:
    for x in it:
        if x is not None:
            yield x
