"""Seeded synthetic search logs: for ``fastndcg demo``, ``fastndcg synth`` and benchmarks.

A log has one row per (query, document): ``query_id`` int64, ``doc_id`` int64,
``score`` float32, ``label`` int8 (graded relevance 0..4). Queries are written in
order, their rows adjacent; list lengths are uniform on 1 .. 2 * ``mean_docs`` - 1.
Each document has a hidden relevance; the label is it, graded, and the score is it
plus noise, rounded to 2 decimals, so scores tie inside a query and NDCG is
neither 0 nor 1. The same ``seed`` gives the same log whatever the block size.

>>> table = synthetic_log(3, seed=1, mean_docs=4)
>>> table.column_names
['query_id', 'doc_id', 'score', 'label']
>>> table["query_id"].to_pylist() == sorted(table["query_id"].to_pylist())
True
"""

from __future__ import annotations

import os
import shutil
from typing import Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from . import _validate as V

MARK = b"fastndcg.synth"  # schema metadata key: this file is a synthetic log
SCHEMA = pa.schema([("query_id", pa.int64()), ("doc_id", pa.int64()),
                    ("score", pa.float32()), ("label", pa.int8())], metadata={MARK: b"1"})
_BLOCK = 8192  # queries per generated block (the seed stream is per block)


def _block(first_query: int, n_queries: int, seed: int, mean_docs: int) -> pa.Table:
    rng = np.random.default_rng([seed, first_query // _BLOCK])
    lengths = rng.integers(1, 2 * mean_docs, size=n_queries)
    n = int(lengths.sum())
    query = np.repeat(np.arange(first_query, first_query + n_queries, dtype=np.int64), lengths)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    doc = query * 10_000 + (np.arange(n) - starts)
    relevance = rng.random(n, dtype=np.float32) ** 3  # skewed to 0: most items irrelevant
    label = np.minimum((relevance * 5).astype(np.int8), np.int8(4))
    noise = rng.standard_normal(n, dtype=np.float32) * np.float32(0.25)
    score = np.round(relevance + noise, 2)
    return pa.table([query, doc, score, label], schema=SCHEMA)


def iter_blocks(n_queries: int, *, seed: int = 0, mean_docs: int = 50) -> Iterator[pa.Table]:
    """The log of ``n_queries`` queries as consecutive tables of up to 8,192 queries."""
    if n_queries < 0 or mean_docs < 1:
        raise ValueError(f"n_queries must be >= 0 and mean_docs >= 1, got {n_queries} and {mean_docs}")
    for first in range(0, n_queries, _BLOCK):
        yield _block(first, min(_BLOCK, n_queries - first), seed, mean_docs)


def synthetic_log(n_queries: int, *, seed: int = 0, mean_docs: int = 50) -> pa.Table:
    """The whole log in memory (see the module docstring for its shape)."""
    blocks = list(iter_blocks(n_queries, seed=seed, mean_docs=mean_docs))
    return pa.concat_tables(blocks) if blocks else SCHEMA.empty_table()


MAX_QUERIES = 10 ** 9  # 50 billion rows at the default 50 a query
MAX_MEAN_DOCS = 10 ** 6
BYTES_PER_ROW = 8  # about what a row takes in the written Parquet file (snappy)


def check_size(n_queries: int, mean_docs: int, path: str | os.PathLike) -> None:
    """Refuse a log beyond the bounds, or one that would not fit on the disk of
    ``path`` (estimated at BYTES_PER_ROW bytes a row)."""
    V.count(n_queries, "queries", hi=MAX_QUERIES, fix="write fewer queries")
    V.count(mean_docs, "mean_docs", hi=MAX_MEAN_DOCS, fix="use fewer documents a query")
    need = n_queries * mean_docs * BYTES_PER_ROW
    where = os.path.dirname(os.path.abspath(os.fspath(path))) or "."
    while not os.path.exists(where):
        where = os.path.dirname(where)
    free = shutil.disk_usage(where).free
    if need > free:
        raise ValueError(f"{os.fspath(path)!r}: a log of {n_queries:,} queries x {mean_docs} "
                         f"documents needs about {need / 2 ** 30:,.1f} GiB, but {where!r} has "
                         f"{free / 2 ** 30:,.1f} GiB free; write fewer queries or choose "
                         f"another place")


def check_replaceable(path: str | os.PathLike, name: str = "path") -> None:
    """An existing file at ``path`` (links followed) is replaced only when it is a
    synthetic log itself: anything else there is someone's data."""
    real = os.path.realpath(os.fspath(path))
    if not os.path.exists(real):
        return
    try:
        ours = MARK in (pq.read_schema(real).metadata or {})
    except (OSError, pa.ArrowException):
        ours = False
    if not ours:
        raise ValueError(f"{name} {V.shown(os.fspath(path))} already exists and is not a "
                         f"synthetic log, so it is not replaced; remove it or choose a new path")


def write_synthetic_log(path: str | os.PathLike, n_queries: int, *, seed: int = 0,
                        mean_docs: int = 50, row_group_rows: int = 1 << 20,
                        on_block: Callable[[int], None] | None = None) -> int:
    """Write the log to one Parquet file in row groups of exactly ``row_group_rows``
    rows (the last may be shorter), so queries straddle row groups as in real logs.
    Memory stays at about one row group. Returns the number of rows written;
    ``on_block(rows)`` is called after each generated block."""
    V.count(row_group_rows, "row_group_rows", hi=1 << 31, fix="rows a row group holds; "
            "the default 1048576 suits most readers")
    check_size(n_queries, mean_docs, path)
    check_replaceable(path)
    parent = os.path.dirname(os.path.abspath(os.fspath(path)))
    os.makedirs(parent, exist_ok=True)  # as per-query outputs do
    rows = 0
    pending: list[pa.Table] = []
    pending_rows = 0
    with pq.ParquetWriter(path, SCHEMA, compression="snappy") as writer:
        for block in iter_blocks(n_queries, seed=seed, mean_docs=mean_docs):
            pending.append(block)
            pending_rows += block.num_rows
            if pending_rows >= row_group_rows:
                table = pa.concat_tables(pending)
                full = (pending_rows // row_group_rows) * row_group_rows
                writer.write_table(table.slice(0, full), row_group_size=row_group_rows)
                pending = [table.slice(full)]
                pending_rows -= full
            rows += block.num_rows
            if on_block is not None:
                on_block(block.num_rows)
        if pending_rows:
            writer.write_table(pa.concat_tables(pending), row_group_size=row_group_rows)
    return rows
