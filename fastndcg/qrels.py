"""Judgments: loading qrels once, and joining each chunk of a run to them.

The qrels are read whole (they are small next to a run), grouped by query and
each query's document ids sorted as byte strings. A run chunk is joined by a
merge of the two sorted id lists per query (Numba kernels over Arrow's string
buffers): each run row gets its judgment (0 when unjudged), and the ideal list of
a query is *all* its judged documents, retrieved or not (trec_eval's rule).

The same per-query document sort gives ``ties="trec"`` its order (document id
descending) and finds a document listed twice for a query.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import _core as C
from . import _kernels as K
from . import io
from ._arrow import as_strings, numbers, string_buffers
from .chunks import Chunk, check_nulls, regroup

__all__ = ["Qrels", "load_qrels", "join", "trec_order", "gather_ideal"]


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


def sorted_docs(chunk: Chunk, doc: str) -> tuple:
    """(bytes, offsets, perm, dup) of the chunk's document ids, ``perm`` ordering each
    query's ids; ``dup`` is None or (query id, document id, queries with duplicates)."""
    data, soff = string_buffers(chunk.table.column(doc), f"document ids in column {doc!r}")
    perm = np.empty(chunk.table.num_rows, np.int64)
    first_dup = np.empty(len(chunk.ids), np.int64)
    K.sort_strings_by_group(chunk.offsets, data, soff, chunk_bounds(chunk.offsets), perm,
                            first_dup)
    bad = np.flatnonzero(first_dup >= 0)
    if not len(bad):
        return data, soff, perm, None
    q = int(bad[0])
    d = as_strings(chunk.table.column(doc))[int(first_dup[q])].as_py()
    return data, soff, perm, (chunk.ids[q].as_py(), d, len(bad))


@dataclass
class Qrels:
    ids: pa.Array          # unique judged query ids (int64 or large_string)
    offsets: np.ndarray    # judgments of query j: rows offsets[j]:offsets[j+1]
    data: np.ndarray       # document id bytes / offsets, grouped by query
    soff: np.ndarray
    perm: np.ndarray       # per query: positions in document id order
    labels: np.ndarray     # per judgment, after the negative_labels policy
    info: Any              # _core.LabelInfo of the labels
    docs: pa.Array = field(repr=False, default=None)

    @property
    def n_queries(self) -> int:
        return len(self.ids)

    def judged_rows(self, chunk: Chunk, query: str, doc: str) -> np.ndarray:
        """Whether each row of a run chunk has a judgment (its (query, document) pair
        is in the qrels), in the chunk's row order."""
        if getattr(self, "_keys", None) is None:
            group = np.repeat(np.arange(len(self.ids)), np.diff(self.offsets))
            judged_ids = as_strings(self.ids).take(pa.array(group))
            self._keys = pc.binary_join_element_wise(judged_ids, self.docs, pa.scalar("\x1f", pa.large_string()))
        run_q = as_strings(chunk.table.column(query))
        run_d = as_strings(chunk.table.column(doc))
        keys = pc.binary_join_element_wise(run_q, run_d, pa.scalar("\x1f", pa.large_string()))
        return pc.is_in(keys, value_set=self._keys).to_numpy(zero_copy_only=False)


def load_qrels(qrels, query: str, doc: str, label: str, gain: C.Gain,
               negative_labels: str) -> Qrels:
    """Read and check the judgments (TREC qrels file, Parquet, or a table)."""
    roles = {query: "query", doc: "doc", label: "label"}
    try:
        src = io.open_source(qrels, roles, trec=lambda p: io.read_trec_qrels(
            p, query=query, doc=doc, label=label))
    except TypeError as err:
        if "as a search log" not in str(err):
            raise
        raise TypeError(f"qrels: cannot read a {type(qrels).__name__} as judgments; pass a TREC "
                        f"qrels file (qid iter docno rel), a Parquet file, or a table with "
                        f"columns {query!r}, {doc!r}, {label!r}") from None
    src.describe = f"qrels {src.describe}"
    batches = list(src.batches())
    row0 = 0
    for i, b in enumerate(batches):
        check_nulls(b, query, row0, iter(batches[i + 1:]))
        row0 += b.num_rows
    table = pa.Table.from_batches(batches, schema=batches[0].schema) if batches else None
    if table is None or table.num_rows == 0:
        raise ValueError(f"the {src.describe} hold no judgments; check the file")
    chunk = regroup(table, query)
    data, soff, perm, dup = sorted_docs(chunk, doc)
    if dup is not None:
        qid, d, n_bad = dup
        raise ValueError(f"the {src.describe} judge document {d!r} of query {qid!r} more than "
                         f"once ({n_bad:,} queries have such duplicates); keep one judgment "
                         f"per (query, document)")
    labels = numbers(chunk.table.column(label), C.WIDEN_LABELS)
    batch = NamedBatch(chunk.offsets, labels, labels, ids=Names(chunk.ids))
    try:
        info = C.check_values(batch, gain, "error", negative_labels, check_scores=False)
    except ValueError as err:
        raise ValueError(f"in the {src.describe}, column {label!r}: {err}") from None
    info = C.LabelInfo(info.integer, min(info.lo, 0.0), max(info.hi, 0.0))
    return Qrels(chunk.ids, chunk.offsets, data, soff, perm, batch.labels, info,
                 as_strings(chunk.table.column(doc)))


def _match_ids(ids: pa.Array, judged: pa.Array) -> tuple[pa.Array, pa.Array]:
    """The two id arrays in one type: int64 when both are integers, else strings."""
    if ids.type != judged.type:
        return as_strings(ids), as_strings(judged)
    return ids, judged


def _doc_order(chunk: Chunk, doc: str, what: str) -> tuple:
    """Document ids sorted within each query; a duplicate is an error."""
    data, soff, perm, dup = sorted_docs(chunk, doc)
    if dup is not None:
        qid, d, _ = dup
        raise ValueError(f"the {what} lists document {d!r} more than once for query "
                         f"{qid!r}; keep one row per (query, document)")
    return data, soff, perm


def trec_order(chunk: Chunk, doc: str) -> np.ndarray:
    """List mode, ``ties="trec"``: the rows of each query in document id descending
    order (a permutation of the chunk's rows)."""
    data, soff, perm = _doc_order(chunk, doc, "log")
    n = chunk.table.num_rows
    order = np.empty(n, np.int64)
    dummy = np.empty(n, np.int64)
    none = np.full(len(chunk.ids), -1, np.int64)
    K.join_judgments(chunk.offsets, data, soff, perm, none, chunk.offsets, data, soff, perm,
                     dummy, chunk_bounds(chunk.offsets), dummy, order)
    return order


def join(chunk: Chunk, qr: Qrels, doc: str) -> tuple:
    """(labels, order, judged_q, ideal) of a run chunk: each row's judgment (0 when
    unjudged), the rows of each query in document id descending order, the judged
    query index of each run query (-1: no judgments) and the ideal lists."""
    data, soff, perm = _doc_order(chunk, doc, "run")
    run_ids, judged_ids = _match_ids(chunk.ids, qr.ids)
    judged_q = pc.index_in(run_ids, value_set=judged_ids).fill_null(-1)
    judged_q = judged_q.to_numpy(zero_copy_only=False).astype(np.int64)
    n = chunk.table.num_rows
    labels = np.empty(n, qr.labels.dtype)
    order = np.empty(n, np.int64)
    K.join_judgments(chunk.offsets, data, soff, perm, judged_q, qr.offsets, qr.data, qr.soff,
                     qr.perm, qr.labels, chunk_bounds(chunk.offsets), labels, order)
    return labels, order, judged_q, gather_ideal(qr, judged_q)


def gather_ideal(qr: Qrels, judged_q: np.ndarray) -> C.Batch:
    """The judged labels of each query (none for -1), as a CSR batch."""
    ok = judged_q >= 0
    j = np.where(ok, judged_q, 0)
    lengths = np.where(ok, qr.offsets[j + 1] - qr.offsets[j], 0)
    ioff = np.zeros(len(judged_q) + 1, np.int64)
    np.cumsum(lengths, out=ioff[1:])
    idx = np.repeat(qr.offsets[j] - ioff[:-1], lengths) + np.arange(ioff[-1])
    labels = qr.labels[idx]
    return C.Batch(ioff, labels, labels)
