"""Per-query result parts: the rows of some queries, and where they are kept.

Per-query results are written as they are produced, in *parts*: a part is one
Parquet file (plus a side file of one byte per query saying whether its IDCG was
0, which the :class:`~fastndcg.totals.Totals` need when a part is rewritten) or,
for ``per_query=None``, a list of record batches in memory. One machine writes one
part; a Dask run writes one part per partition. :class:`Rows` are the per-query
results of some queries in order, :func:`result_schema` the table they are written
as, :class:`PartWriter` writes them and :class:`Part` reads them back.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np
import pyarrow as pa

from ._arrow import as_numpy, from_numpy, scalar
from .totals import Totals

__all__ = ["Rows", "Part", "PartWriter", "result_schema", "value_names", "weight_name",
           "rows_of", "result_batch", "tagged_part", "RUNID", "LABELS"]

_FLUSH_ROWS = 1 << 16  # per-query rows buffered before a Parquet row group is written


@dataclass
class Rows:
    """Per-query results of some queries, in order: what a part is made of."""
    ids: pa.Array
    n_docs: np.ndarray
    values: np.ndarray                 # (n, n_cutoffs) NDCG
    zero: np.ndarray                   # IDCG == 0 at some cutoff
    weight: np.ndarray | None = None   # the query weights, when the evaluation has them
    extra: dict | None = None          # further columns (name -> array), in schema order

    def __len__(self) -> int:
        return len(self.ids)

    def select(self, mask: np.ndarray) -> "Rows":
        arr = from_numpy(mask)
        return Rows(self.ids.filter(arr), self.n_docs[mask], self.values[mask], self.zero[mask],
                    None if self.weight is None else self.weight[mask],
                    None if self.extra is None else {k: v[mask] for k, v in self.extra.items()})


_META_VALUES = b"fastndcg.values"
_META_WEIGHT = b"fastndcg.weight"


def result_schema(query: str, id_type: pa.DataType, names: list[str], weight: str | None = None,
                  extra: list[tuple[str, pa.DataType]] = ()) -> pa.Schema:
    """The per-query table: id, ``n_docs``, the weight (if any), one float64 column
    per cutoff, then the explaining columns; its metadata says which is which."""
    fields = [(query, id_type), ("n_docs", pa.int64())]
    if weight is not None:
        fields.append((weight, pa.float64()))
    fields += [(n, pa.float64()) for n in names] + list(extra)
    return pa.schema(fields, metadata={_META_VALUES: "\x1f".join(names).encode(),
                                       _META_WEIGHT: (weight or "").encode()})


def value_names(schema: pa.Schema) -> list[str]:
    raw = (schema.metadata or {}).get(_META_VALUES, b"")
    return raw.decode().split("\x1f") if raw else []


def weight_name(schema: pa.Schema) -> str | None:
    return ((schema.metadata or {}).get(_META_WEIGHT, b"") or b"").decode() or None


def rows_of(batch: pa.RecordBatch, zero: np.ndarray, schema: pa.Schema) -> Rows:
    """A batch of a part decoded back into :class:`Rows`."""
    names, weight = value_names(schema), weight_name(schema)
    values = (np.column_stack([as_numpy(batch.column(n), zero_copy_only=True) for n in names])
              if names else np.zeros((batch.num_rows, 0)))
    fixed = {schema.names[0], "n_docs", *names, *([weight] if weight else [])}
    extra = {n: as_numpy(batch.column(n)) for n in batch.schema.names if n not in fixed}
    weights = None if weight is None else as_numpy(batch.column(weight), zero_copy_only=True)
    return Rows(batch.column(0), as_numpy(batch.column("n_docs"), zero_copy_only=True), values,
                zero, weights, extra or None)


def result_batch(schema: pa.Schema, rows: Rows) -> pa.RecordBatch:
    ids = rows.ids
    if ids.type != schema.field(0).type:
        ids = ids.cast(schema.field(0).type)
    names = value_names(schema)
    weight = weight_name(schema)
    cols = [ids, from_numpy(np.asarray(rows.n_docs, np.int64))]
    if weight is not None:
        cols.append(from_numpy(np.asarray(rows.weight, np.float64)))
    cols += [from_numpy(np.ascontiguousarray(rows.values[:, i])) for i in range(len(names))]
    for field in list(schema)[len(cols):]:
        cols.append(from_numpy((rows.extra or {})[field.name], field.type))
    return pa.RecordBatch.from_arrays(cols, schema=schema)


@dataclass
class Part:
    """Per-query results of one partition: a Parquet file with its IDCG-zero side
    file, or record batches in memory (``batches``/``zero``)."""
    schema: pa.Schema
    n_rows: int
    path: str | None = None
    zero_path: str | None = None
    batches: list | None = None
    zero: np.ndarray | None = None

    def iter_batches(self, batch_rows: int = 1 << 20) -> Iterator[tuple[pa.RecordBatch, np.ndarray]]:
        """(results, IDCG-zero flags) in order, a batch at a time."""
        if self.path is None:
            start = 0
            for b in self.batches or ():
                yield b, self.zero[start:start + b.num_rows]
                start += b.num_rows
            return
        import pyarrow.parquet as pq

        with open(self.zero_path, "rb") as zf, pq.ParquetFile(self.path) as f:
            for b in f.iter_batches(batch_size=batch_rows):
                zero = np.frombuffer(zf.read(b.num_rows), np.uint8).astype(bool)
                yield b, zero

    def iter_results(self, batch_rows: int = 1 << 20) -> Iterator[pa.RecordBatch]:
        """The per-query results in order, a batch at a time (a part written without
        the IDCG-zero side file, as :func:`tagged_part` writes, reads too)."""
        if self.path is None:
            yield from self.batches or ()
            return
        import pyarrow.parquet as pq

        with pq.ParquetFile(self.path) as f:
            yield from f.iter_batches(batch_size=batch_rows)

    def iter_rows(self) -> Iterator[Rows]:
        for b, zero in self.iter_batches():
            yield rows_of(b, zero, self.schema)

    def table(self) -> pa.Table:
        if self.path is None:
            return pa.Table.from_batches(self.batches or [], schema=self.schema)
        import pyarrow.parquet as pq
        return pq.read_table(self.path)

    def remove(self) -> None:
        for p in (self.path, self.zero_path):
            if p and os.path.exists(p):
                os.remove(p)


class PartWriter:
    """Writes per-query results as they come: to ``path`` (Parquet, row groups of
    64k queries or more) or, with ``path=None``, to memory; ``keep=False`` keeps
    nothing (only the count). :meth:`add` returns the rows' :class:`Totals`."""

    def __init__(self, schema: pa.Schema, path: str | None = None, keep: bool = True) -> None:
        self.schema = schema
        self.names = value_names(schema)
        self.path = path
        self.keep = keep
        self.n_rows = 0
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self._zero: list[np.ndarray] = []
        self._writer = None
        self._zf = None
        if path is not None:
            import pyarrow.parquet as pq
            # written under a temporary name and renamed by close(): a task that is run
            # again (its worker died) never meets a half-written part
            self._tmp = f"{path}.tmp-{uuid.uuid4().hex[:8]}"
            self._writer = pq.ParquetWriter(self._tmp, schema, compression="snappy")
            self._zf = open(self._tmp + ".zero", "wb")

    def add(self, rows: Rows) -> Totals:
        n = len(rows)
        total = Totals.of_rows(self.names, rows)
        if not n:
            return total
        self.n_rows += n
        if not self.keep:
            return total
        self._pending.append(result_batch(self.schema, rows))
        self._zero.append(np.asarray(rows.zero, bool))
        self._pending_rows += n
        if self._writer is not None and self._pending_rows >= _FLUSH_ROWS:
            self._flush()
        return total

    def _flush(self) -> None:
        if not self._pending:
            return
        self._writer.write_table(pa.Table.from_batches(self._pending, schema=self.schema),
                                 row_group_size=max(self._pending_rows, 1))
        self._zf.write(np.concatenate(self._zero).astype(np.uint8).tobytes())
        self._pending, self._zero, self._pending_rows = [], [], 0

    def close(self) -> Part:
        if self._writer is not None:
            self._flush()
            self._writer.close()
            self._zf.close()
            os.replace(self._tmp + ".zero", self.path + ".zero")
            os.replace(self._tmp, self.path)
            return Part(self.schema, self.n_rows, path=self.path, zero_path=self.path + ".zero")
        zero = np.concatenate(self._zero) if self._zero else np.zeros(0, bool)
        return Part(self.schema, self.n_rows, batches=self._pending if self.keep else None,
                    zero=zero if self.keep else None)

    def abort(self) -> None:
        if self._writer is not None:
            try:
                self._writer.close()
                self._zf.close()
            finally:
                for p in (self._tmp, self._tmp + ".zero"):
                    if os.path.exists(p):
                        os.remove(p)

RUNID = "runid"  # the first column of the per-query results of several runs
LABELS = "labels"  # the column naming the label set (after runid) of several label sets


def tagged_part(results: Any, tags: dict[str, str], path: str | None) -> Part:
    """One evaluation's committed per-query results (a Table, or the path of its
    Parquet file) as a part whose first columns are ``tags`` (column -> the value
    of every row, e.g. ``{"runid": "bm25", "labels": "llm"}``), in that order:
    written to ``path`` (Parquet, a batch at a time, so memory stays flat) or, for
    None, kept in memory."""
    if isinstance(results, pa.Table):
        schema, batches, f = results.schema, iter(results.to_batches()), None
    else:
        import pyarrow.parquet as pq
        f = pq.ParquetFile(results)
        schema, batches = f.schema_arrow, f.iter_batches()
    out = schema
    for i, column in enumerate(tags):
        out = out.insert(i, pa.field(column, pa.string()))
    names = [scalar(value, pa.string()) for value in tags.values()]

    def tagged(b: pa.RecordBatch) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays([*(pa.repeat(n, b.num_rows) for n in names),
                                           *b.columns], schema=out)
    try:
        if path is None:
            kept = [tagged(b) for b in batches]
            return Part(out, sum(b.num_rows for b in kept), batches=kept)
        import pyarrow.parquet as pq
        n = 0
        with pq.ParquetWriter(path, out, compression="snappy") as writer:
            for b in batches:
                writer.write_batch(tagged(b))
                n += b.num_rows
        return Part(out, n, path=path)
    finally:
        if f is not None:
            f.close()
