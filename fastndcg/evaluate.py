"""Streaming evaluation of search logs: batches -> whole queries -> kernels -> Report.

Data flows one way. :mod:`fastndcg.io` yields record batches of the needed columns;
:func:`_query_chunks` cuts them into chunks of *whole* queries (a query whose rows
run on into the next batch, row group or file is held back until it ends, so it
is scored once, whole); each chunk is scored by the kernels (list mode: labels
from the log; qrels mode: labels joined from the judgments, IDCG from all judged
documents of the query); results collect into a :class:`Report`.

Memory is bounded by a few batches (1M rows each) and the largest query, plus the
per-query results (about 50 bytes a query), not by the size of the log.

Rows of one query must be adjacent to stream. When they are not (the same query
id appears again later), the first pass notices it at the end; the rows of the
queries concerned are then read again, grouped (in memory when they are few,
else through temporary Parquet buckets on disk, so memory stays bounded) and
scored whole. A one-shot ``RecordBatchReader`` cannot be read again, so there it
is an error naming the query. No query is ever scored in two parts.
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import _kernels as K
from . import api, io
from ._progress import Progress

__all__ = ["evaluate", "Report", "Totals"]

_REGROUP_ROWS = 8 << 20  # scattered rows regrouped in memory up to this many, else on disk


# --------------------------------------------------------------------------- results

@dataclass
class Totals:
    """Mergeable aggregates of per-query NDCG: sums and counts per cutoff.

    ``merge`` adds two together (batches, files, Dask partitions); ``mean`` is the
    sum over the queries with a value (NaN, from ``zero_idcg="nan"``, left out).

    >>> a = Totals.of(["ndcg@3"], np.array([[0.5], [1.0]]), np.array([False, True]), 7)
    >>> b = Totals.of(["ndcg@3"], np.array([[0.0]]), np.array([False]), 2)
    >>> a.merge(b).mean
    {'ndcg@3': 0.5}
    """
    names: list[str]
    sums: np.ndarray
    counts: np.ndarray
    n_queries: int = 0
    n_rows: int = 0
    n_zero_idcg: int = 0

    @classmethod
    def of(cls, names: list[str], values: np.ndarray, zero: np.ndarray, n_rows: int) -> "Totals":
        ok = ~np.isnan(values)
        return cls(list(names), np.where(ok, values, 0.0).sum(axis=0), ok.sum(axis=0),
                   len(values), int(n_rows), int(zero.sum()))

    def merge(self, other: "Totals") -> "Totals":
        if self.names != other.names:
            raise ValueError(f"cannot merge totals of {self.names} and {other.names}")
        return Totals(self.names, self.sums + other.sums, self.counts + other.counts,
                      self.n_queries + other.n_queries, self.n_rows + other.n_rows,
                      self.n_zero_idcg + other.n_zero_idcg)

    @property
    def mean(self) -> dict[str, float]:
        return {n: (float(s / c) if c else math.nan)
                for n, s, c in zip(self.names, self.sums, self.counts)}


class Report:
    """What :func:`evaluate` found.

    Attributes
    ----------
    per_query : pyarrow.Table -- the query id (named as in the source), ``n_docs``
        (rows of the query in the run/log), then one float64 ``ndcg@K`` column per
        cutoff; one row per scored query, in order of first appearance.
    mean : dict -- ``{"ndcg@K": mean over queries}`` (NaN values left out).
    n_queries : queries scored (rows of ``per_query``).
    n_rows : rows read from the log or run.
    n_zero_idcg : scored queries whose IDCG is 0 (no relevant item): scored by
        ``zero_idcg``; with "nan" they are left out of ``mean``.
    n_unjudged : qrels mode: queries of the run without any judgment, left out
        (as trec_eval does).
    n_missing : qrels mode: judged queries absent from the run: scored 0 with
        ``complete=True`` (and then part of ``per_query``), else left out.
    seconds : wall time of the evaluation.
    """

    def __init__(self, per_query: pa.Table, totals: Totals, *, n_unjudged: int = 0,
                 n_missing: int = 0, complete: bool = False, qrels_mode: bool = False,
                 seconds: float = 0.0, source: str = "") -> None:
        self.per_query = per_query
        self.totals = totals
        self.n_unjudged = n_unjudged
        self.n_missing = n_missing
        self.complete = complete
        self.qrels_mode = qrels_mode
        self.seconds = seconds
        self.source = source

    n_queries = property(lambda self: self.totals.n_queries)
    n_rows = property(lambda self: self.totals.n_rows)
    n_zero_idcg = property(lambda self: self.totals.n_zero_idcg)
    mean = property(lambda self: self.totals.mean)

    def to_pandas(self):
        """``per_query`` as a pandas DataFrame (needs pandas)."""
        return self.per_query.to_pandas()

    def to_dict(self) -> dict[str, Any]:
        """Counts and means as plain numbers (what ``--format json`` prints)."""
        out: dict[str, Any] = {"n_queries": self.n_queries, "n_zero_idcg": self.n_zero_idcg,
                               "n_rows": self.n_rows}
        if self.qrels_mode:
            out.update(n_unjudged=self.n_unjudged, n_missing=self.n_missing,
                       complete=self.complete)
        out.update(self.mean)
        out["seconds"] = round(self.seconds, 4)
        return out

    def write(self, path: str | os.PathLike) -> None:
        """Write ``per_query`` to ``.parquet`` or ``.csv`` (chosen by the extension)."""
        path = os.fspath(path)
        ext = os.path.splitext(path)[1].lower()
        if ext in (".parquet", ".pq"):
            import pyarrow.parquet as pq
            pq.write_table(self.per_query, path)
        elif ext == ".csv":
            import pyarrow.csv as csv
            csv.write_csv(self.per_query, path)
        else:
            raise ValueError(f"cannot tell the format of {path!r} from its extension; name it "
                             f"*.parquet or *.csv")

    def format_table(self) -> str:
        """An aligned text table of the means and counts."""
        counts = [("queries", self.n_queries), ("rows", self.n_rows),
                  ("zero-IDCG queries", self.n_zero_idcg)]
        if self.qrels_mode:
            counts += [("unjudged queries (left out)", self.n_unjudged),
                       (f"judged queries not in run ({'scored 0' if self.complete else 'left out'})",
                        self.n_missing)]
        rows = [(name, f"{value:.4f}") for name, value in self.mean.items()]
        rows += [(name, f"{value:,}") for name, value in counts]
        rate = self.n_rows / self.seconds if self.seconds > 0 else 0.0
        rows.append(("time", f"{self.seconds:.3f} s ({rate / 1e6:,.1f}M rows/s)"))
        width = max(len(r[0]) for r in rows)
        lines = [f"{name:<{width}}  {value}" for name, value in rows]
        return "\n".join(lines)

    def __repr__(self) -> str:
        means = ", ".join(f"{k}={v:.4f}" for k, v in self.mean.items())
        return f"<Report {self.n_queries:,} queries, {self.n_rows:,} rows: {means}>"


# --------------------------------------------------------------------------- options

@dataclass
class _Options:
    cutoffs: list
    names: list[str]
    gain: api._Gain
    ties: str
    tmode: int
    log_base: float
    zero_idcg: str
    nan_scores: str
    negative_labels: str


def _options(k, gain, ties, log_base, zero_idcg, nan_scores, negative_labels) -> _Options:
    cutoffs, _ = api._cutoffs(k)
    gain_spec = api._gain(gain)
    ties = api._choice("ties", ties, (*api._TIES, "trec"))
    tmode = K.STABLE if ties == "trec" else api._TIES[ties]  # rows are put in trec order
    base = api._log_base(log_base)
    api._choice("zero_idcg", zero_idcg, api._ZERO_IDCG)
    api._choice("nan_scores", nan_scores, api._NAN_SCORES)
    api._choice("negative_labels", negative_labels, api._NEGATIVE_LABELS)
    names = ["ndcg" if c is None else f"ndcg@{c}" for c in cutoffs]
    if len(set(names)) != len(names):
        raise ValueError(f"k lists a cutoff twice: {cutoffs}; give each cutoff once")
    return _Options(cutoffs, names, gain_spec, ties, tmode, base, zero_idcg, nan_scores,
                    negative_labels)


class _LogBatch(api._Batch):
    """A chunk's CSR arrays; queries are named by their id alone in messages."""

    def name(self, q: int) -> str:
        return f"query {self.ids[q]!r}"


class _Names:
    """Query ids for messages: ``names[q]`` is the plain id of query q."""

    def __init__(self, ids: pa.Array) -> None:
        self.ids = ids

    def __getitem__(self, q: int):
        return self.ids[int(q)].as_py()


# --------------------------------------------------------------------------- arrays

def _plain_ids(col: pa.Array) -> pa.Array:
    """Query or document ids as int64 or large_string (one type per kind)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if pa.types.is_integer(col.type):
        return col if col.type == pa.int64() else col.cast(pa.int64())
    if col.type != pa.large_string():
        col = col.cast(pa.large_string())
    return col


def _as_strings(col: pa.Array) -> pa.Array:
    col = _plain_ids(col)
    return col if col.type == pa.large_string() else col.cast(pa.large_string())


def _string_buffers(col: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(bytes, int64 offsets) of a large_string array, zero copy."""
    col = _as_strings(col)
    bufs = col.buffers()
    offsets = np.frombuffer(bufs[1], np.int64)[col.offset:col.offset + len(col) + 1]
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.zeros(1, np.uint8)
    if len(data) == 0:
        data = np.zeros(1, np.uint8)
    return data, offsets


def _numbers(col: pa.Array, widen: dict) -> np.ndarray:
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    return api._numeric(col.to_numpy(zero_copy_only=False), "values", widen)


def _run_starts(ids: pa.Array) -> np.ndarray:
    """Positions (> 0) where the query id differs from the row before."""
    n = len(ids)
    if n < 2:
        return np.zeros(0, np.int64)
    if pa.types.is_integer(ids.type):
        arr = ids.to_numpy()
        return np.flatnonzero(arr[1:] != arr[:-1]) + 1
    change = pc.not_equal(ids.slice(1), ids.slice(0, n - 1))
    return np.flatnonzero(change.to_numpy(zero_copy_only=False)) + 1


def _chunk_bounds(offsets: np.ndarray) -> np.ndarray:
    return api._chunks(offsets, offsets)


# --------------------------------------------------------------------------- grouping

@dataclass
class _Chunk:
    """Whole queries: ``ids[q]`` owns rows ``offsets[q]:offsets[q+1]`` of ``table``."""
    ids: pa.Array
    offsets: np.ndarray
    table: pa.Table | pa.RecordBatch


def _check_nulls(batch: pa.RecordBatch, query: str, row0: int, rest: Iterator) -> None:
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


def _query_chunks(source: io.Source, query: str, progress: Progress | None = None
                  ) -> Iterator[_Chunk]:
    """Chunks of whole queries from the source's batches (see the module docstring)."""
    tail: list[pa.RecordBatch] = []
    tail_id = None
    row0 = 0
    batches = source.batches(prefetch=True)

    def close_tail():
        table = pa.Table.from_batches(tail).combine_chunks()
        ids = _plain_ids(table.column(query)).slice(0, 1)
        return _Chunk(ids, np.array([0, table.num_rows], np.int64), table)

    for batch in batches:
        _check_nulls(batch, query, row0, batches)
        ids = _plain_ids(batch.column(query))
        n = len(ids)
        starts = _run_starts(ids)
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
            run_starts = np.concatenate(([lo], inner)).astype(np.int64)
            offsets = np.append(run_starts - lo, last_start - lo).astype(np.int64)
            yield _Chunk(ids.take(pa.array(run_starts)), offsets,
                         batch.slice(lo, last_start - lo))
        tail = [batch.slice(last_start)]
        tail_id = ids[last_start].as_py()
        row0 += n
        if progress:
            progress.update(n)
    if tail:
        yield close_tail()


def _regroup(table: pa.Table, query: str) -> _Chunk:
    """All rows of some queries, in any order -> one chunk (input order kept per query)."""
    ids = _plain_ids(table.column(query))
    encoded = ids.dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    counts = np.bincount(codes, minlength=len(encoded.dictionary))
    offsets = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    if len(codes) > 1 and not (codes[1:] >= codes[:-1]).all():  # not grouped yet
        table = table.take(pa.array(np.argsort(codes, kind="stable")))
    return _Chunk(encoded.dictionary, offsets, table)


# --------------------------------------------------------------------------- qrels

def _sorted_docs(chunk: _Chunk, doc: str) -> tuple:
    """(bytes, offsets, perm, dup) of the chunk's document ids, ``perm`` ordering each
    query's ids; ``dup`` is None or (query id, document id, queries with duplicates)."""
    data, soff = _string_buffers(chunk.table.column(doc))
    perm = np.empty(chunk.table.num_rows, np.int64)
    first_dup = np.empty(len(chunk.ids), np.int64)
    K.sort_strings_by_group(chunk.offsets, data, soff, _chunk_bounds(chunk.offsets), perm,
                            first_dup)
    bad = np.flatnonzero(first_dup >= 0)
    if not len(bad):
        return data, soff, perm, None
    q = int(bad[0])
    d = _as_strings(chunk.table.column(doc))[int(first_dup[q])].as_py()
    return data, soff, perm, (chunk.ids[q].as_py(), d, len(bad))


@dataclass
class _Qrels:
    ids: pa.Array          # unique judged query ids (int64 or large_string)
    offsets: np.ndarray    # judgments of query j: rows offsets[j]:offsets[j+1]
    data: np.ndarray       # document id bytes / offsets, grouped by query
    soff: np.ndarray
    perm: np.ndarray       # per query: positions in document id order
    labels: np.ndarray     # per judgment, after the negative_labels policy
    info: Any              # api._LabelInfo of the labels
    docs: pa.Array = field(repr=False, default=None)


def _load_qrels(qrels, query: str, doc: str, label: str, opts: _Options) -> _Qrels:
    roles = {query: "query", doc: "doc", label: "label"}
    src = io.open_source(qrels, roles, trec=lambda p: io.read_trec_qrels(
        p, query=query, doc=doc, label=label))
    src.describe = f"qrels {src.describe}"
    batches = list(src.batches())
    row0 = 0
    for i, b in enumerate(batches):
        _check_nulls(b, query, row0, iter(batches[i + 1:]))
        row0 += b.num_rows
    table = pa.Table.from_batches(batches, schema=batches[0].schema) if batches else None
    if table is None or table.num_rows == 0:
        raise ValueError(f"the {src.describe} hold no judgments; check the file")
    chunk = _regroup(table, query)
    data, soff, perm, dup = _sorted_docs(chunk, doc)
    if dup is not None:
        qid, d, n_bad = dup
        raise ValueError(f"the {src.describe} judge document {d!r} of query {qid!r} more than "
                         f"once ({n_bad:,} queries have such duplicates); keep one judgment "
                         f"per (query, document)")
    labels = _numbers(chunk.table.column(label), api._WIDEN_LABELS)
    batch = _LogBatch(chunk.offsets, labels, labels, ids=_Names(chunk.ids))
    try:
        info = api._check_values(batch, opts.gain, "error", opts.negative_labels,
                                 check_scores=False)
    except ValueError as err:
        raise ValueError(f"in the {src.describe}, column {label!r}: {err}") from None
    info = api._LabelInfo(info.integer, min(info.lo, 0.0), max(info.hi, 0.0))
    return _Qrels(chunk.ids, chunk.offsets, data, soff, perm, batch.labels, info,
                  _as_strings(chunk.table.column(doc)))


def _match_ids(ids: pa.Array, judged: pa.Array) -> tuple[pa.Array, pa.Array]:
    """The two id arrays in one type: int64 when both are integers, else strings."""
    if ids.type != judged.type:
        return _as_strings(ids), _as_strings(judged)
    return ids, judged


# --------------------------------------------------------------------------- scoring

@dataclass
class _Scored:
    ids: pa.Array
    n_docs: np.ndarray
    values: np.ndarray   # (n_queries, n_cutoffs) NDCG
    zero: np.ndarray     # IDCG == 0 at some cutoff
    unjudged: pa.Array | None = None


class _Scorer:
    """Scores chunks of whole queries: list mode or qrels mode."""

    def __init__(self, opts: _Options, query: str, doc: str | None, score: str,
                 label: str | None, qrels: _Qrels | None, complete: bool) -> None:
        self.opts = opts
        self.query, self.doc, self.score, self.label = query, doc, score, label
        self.qrels = qrels
        self.seen = None if qrels is None else np.zeros(len(qrels.ids), bool)
        self.complete = complete

    def _doc_order(self, chunk: _Chunk) -> tuple:
        """Document ids sorted within each query; a duplicate is an error."""
        data, soff, perm, dup = _sorted_docs(chunk, self.doc)
        if dup is not None:
            qid, d, _ = dup
            what = "run" if self.qrels is not None else "log"
            raise ValueError(f"the {what} lists document {d!r} more than once for query "
                             f"{qid!r}; keep one row per (query, document)")
        return data, soff, perm

    def score_chunk(self, chunk: _Chunk) -> _Scored:
        opts = self.opts
        names = _Names(chunk.ids)
        scores = _numbers(chunk.table.column(self.score), api._WIDEN_SCORES)
        ideal = None
        info_override = None
        judged_q = None
        order = None
        if self.qrels is None:
            labels = _numbers(chunk.table.column(self.label), api._WIDEN_LABELS)
            if opts.ties == "trec":
                data, soff, perm = self._doc_order(chunk)
                order = np.empty(len(scores), np.int64)
                dummy = np.empty(len(scores), np.int64)
                none = np.full(len(chunk.ids), -1, np.int64)
                K.join_judgments(chunk.offsets, data, soff, perm, none, chunk.offsets, data,
                                 soff, perm, dummy, _chunk_bounds(chunk.offsets), dummy, order)
        else:
            qr = self.qrels
            data, soff, perm = self._doc_order(chunk)
            run_ids, judged_ids = _match_ids(chunk.ids, qr.ids)
            judged_q = pc.index_in(run_ids, value_set=judged_ids).fill_null(-1)
            judged_q = judged_q.to_numpy(zero_copy_only=False).astype(np.int64)
            labels = np.empty(len(scores), qr.labels.dtype)
            order = np.empty(len(scores), np.int64)
            K.join_judgments(chunk.offsets, data, soff, perm, judged_q, qr.offsets, qr.data,
                             qr.soff, qr.perm, qr.labels, _chunk_bounds(chunk.offsets), labels,
                             order)
            ideal = _gather_ideal(qr, judged_q)
            info_override = qr.info
            self.seen[judged_q[judged_q >= 0]] = True
        if opts.ties == "trec":
            # rows in docno-descending order within each query: "input order wins" on
            # tied scores is then trec_eval's tie-break (opts.tmode is STABLE)
            scores, labels = scores[order], labels[order]
        batch = _LogBatch(chunk.offsets, scores, labels, ids=names)
        try:
            info = api._check_values(batch, opts.gain, opts.nan_scores,
                                     "keep" if self.qrels is not None else opts.negative_labels)
        except ValueError as err:
            where = (f"column {self.score!r}" if str(err).startswith("scores")
                     else f"column {self.label!r}")
            raise ValueError(f"in {where}: {err}") from None
        if info_override is not None:
            info = info_override
        dcg, idcg = api._run(batch, opts.cutoffs, opts.gain, opts.tmode, opts.log_base, info,
                             True, True, ideal=ideal)
        api._check_finite(idcg, batch, "IDCG")
        api._check_finite(dcg, batch, "DCG")
        ids, n_docs, unjudged = chunk.ids, np.diff(chunk.offsets), None
        if judged_q is not None and (judged_q < 0).any():
            # queries without judgments are left out (and counted), before zero_idcg
            keep = judged_q >= 0
            unjudged = ids.filter(pa.array(~keep))
            ids, n_docs, dcg, idcg = ids.filter(pa.array(keep)), n_docs[keep], dcg[keep], idcg[keep]
            batch = _LogBatch(None, None, None, ids=_Names(ids))
        values = api._normalise(dcg, idcg, opts.zero_idcg, batch, opts.cutoffs)
        return _Scored(ids, n_docs, values, (idcg == 0).any(axis=1), unjudged=unjudged)

    def missing(self) -> _Scored | None:
        """Judged queries never seen in the run, scored with an empty ranking (DCG 0)."""
        qr = self.qrels
        if qr is None or self.seen.all():
            return None
        idx = np.flatnonzero(~self.seen)
        n = len(idx)
        batch = _LogBatch(np.zeros(n + 1, np.int64), np.zeros(0, np.float64),
                           np.zeros(0, qr.labels.dtype), ids=_Names(qr.ids.take(pa.array(idx))))
        ideal = _gather_ideal(qr, idx.astype(np.int64))
        dcg, idcg = api._run(batch, self.opts.cutoffs, self.opts.gain, self.opts.tmode,
                             self.opts.log_base, qr.info, True, True, ideal=ideal)
        values = api._normalise(dcg, idcg, self.opts.zero_idcg, batch, self.opts.cutoffs)
        return _Scored(qr.ids.take(pa.array(idx)), np.zeros(n, np.int64), values,
                       (idcg == 0).any(axis=1))


def _gather_ideal(qr: _Qrels, judged_q: np.ndarray) -> api._Batch:
    """The judged labels of each query (none for -1), as a CSR batch."""
    ok = judged_q >= 0
    j = np.where(ok, judged_q, 0)
    lengths = np.where(ok, qr.offsets[j + 1] - qr.offsets[j], 0)
    ioff = np.zeros(len(judged_q) + 1, np.int64)
    np.cumsum(lengths, out=ioff[1:])
    idx = np.repeat(qr.offsets[j] - ioff[:-1], lengths) + np.arange(ioff[-1])
    labels = qr.labels[idx]
    return api._Batch(ioff, labels, labels)


# --------------------------------------------------------------------------- assembling

def _concat_ids(parts: list[pa.Array]) -> list[pa.Array]:
    """Id arrays in one type (strings when integer and string ids meet)."""
    if len({p.type for p in parts}) > 1:
        return [_as_strings(p) for p in parts]
    return parts


class _Results:
    """Per-query results, kept as Arrow record batches (about 50 bytes a query)."""

    def __init__(self, query: str, names: list[str]) -> None:
        self.query = query
        self.names = names
        self.batches: list[pa.RecordBatch] = []
        self.zero: list[np.ndarray] = []

    def add(self, s: _Scored) -> None:
        cols = [s.ids, pa.array(s.n_docs.astype(np.int64, copy=False))]
        cols += [pa.array(np.ascontiguousarray(s.values[:, i])) for i in range(len(self.names))]
        self.batches.append(pa.RecordBatch.from_arrays(cols, names=[self.query, "n_docs",
                                                                    *self.names]))
        self.zero.append(s.zero)

    def table(self, id_type: pa.DataType | None) -> tuple[pa.Table, np.ndarray]:
        if not self.batches:
            fields = [(self.query, id_type or pa.large_string()), ("n_docs", pa.int64())]
            fields += [(n, pa.float64()) for n in self.names]
            return pa.schema(fields).empty_table(), np.zeros(0, bool)
        ids = _concat_ids([b.column(0) for b in self.batches])
        batches = [b.set_column(0, self.query, i) if i is not b.column(0) else b
                   for b, i in zip(self.batches, ids)]
        zero = np.concatenate(self.zero)
        self.batches, self.zero = [], []
        return pa.Table.from_batches(batches), zero


def _duplicate_ids(col: pa.ChunkedArray) -> pa.Array | None:
    """Ids that label more than one result row (a query whose rows were not adjacent)."""
    if pa.types.is_integer(col.type):
        arrays = [c.to_numpy() for c in col.chunks if len(c)]
        last = None
        for a in arrays:  # ascending ids (the common, sorted log) cannot repeat
            if (last is not None and a[0] <= last) or not (a[1:] > a[:-1]).all():
                break
            last = a[-1]
        else:
            return None
        s = np.sort(np.concatenate(arrays))
        dup = np.unique(s[1:][s[1:] == s[:-1]])
        return pa.array(dup) if len(dup) else None
    encoded = col.combine_chunks().dictionary_encode()
    counts = np.bincount(encoded.indices.to_numpy(zero_copy_only=False),
                         minlength=len(encoded.dictionary))
    dup = np.flatnonzero(counts > 1)
    return encoded.dictionary.take(pa.array(dup)) if len(dup) else None


def _rescore_scattered(source: io.Source, query: str, dup_ids: pa.Array, n_rows: int,
                       scorer: _Scorer) -> list[_Scored]:
    """Read the rows of the scattered queries again and score each query whole."""
    if not source.rereadable:
        raise ValueError(f"the rows of query {dup_ids[0].as_py()!r} are not adjacent in "
                         f"{source.describe} ({len(dup_ids):,} queries are split like this), "
                         f"and a RecordBatchReader cannot be read twice to regroup them; sort "
                         f"the log by {query!r} first, or pass a file, Table or Dataset")
    n_buckets = max(1, -(-n_rows // _REGROUP_ROWS))
    if n_buckets == 1:
        parts = [b.filter(pc.is_in(_plain_ids(b.column(query)), value_set=dup_ids))
                 for b in source.batches()]
        table = pa.Table.from_batches([p for p in parts if p.num_rows], schema=parts[0].schema)
        return [scorer.score_chunk(_regroup(table, query))]
    import pyarrow.parquet as pq

    out = []
    with tempfile.TemporaryDirectory(prefix="fastndcg-regroup-") as tmp:
        writers: dict[int, Any] = {}
        try:
            for b in source.batches():
                where = pc.index_in(_plain_ids(b.column(query)), value_set=dup_ids)
                keep = pc.is_valid(where)
                if not pc.any(keep).as_py():
                    continue
                rows = b.filter(keep)
                bucket = pc.filter(where, keep).to_numpy() % n_buckets
                for k in np.unique(bucket):
                    if k not in writers:
                        writers[k] = pq.ParquetWriter(os.path.join(tmp, f"{k}.parquet"),
                                                      rows.schema)
                    writers[k].write_batch(rows.filter(pa.array(bucket == k)))
        finally:
            for w in writers.values():
                w.close()
        for k in sorted(writers):
            table = pq.read_table(os.path.join(tmp, f"{k}.parquet"))
            out.append(scorer.score_chunk(_regroup(table, query)))
    return out


def _fix_scattered(table: pa.Table, zero: np.ndarray, dup_ids: pa.Array, source: io.Source,
                   query: str, scorer: _Scorer, names: list[str]) -> tuple[pa.Table, np.ndarray]:
    """Replace the partial results of scattered queries by whole-query results, kept at
    each query's first appearance."""
    ids = table.column(query).combine_chunks()
    if dup_ids.type != ids.type:
        dup_ids = dup_ids.cast(ids.type)
    n_docs = table.column("n_docs").to_numpy()
    values = np.column_stack([table.column(n).to_numpy() for n in names])
    dup_rows = np.flatnonzero(pc.is_in(ids, value_set=dup_ids).to_numpy(zero_copy_only=False))
    fixed = _rescore_scattered(source, query, dup_ids, int(n_docs[dup_rows].sum()), scorer)
    fixed_ids = pa.concat_arrays(_concat_ids([f.ids for f in fixed]))
    sub = ids.take(pa.array(dup_rows)).dictionary_encode()
    _, first = np.unique(sub.indices.to_numpy(zero_copy_only=False), return_index=True)
    slot = dup_rows[first]
    if fixed_ids.type != ids.type:
        fixed_ids = fixed_ids.cast(ids.type)
    src = pc.index_in(ids.take(pa.array(slot)), value_set=fixed_ids).to_numpy(
        zero_copy_only=False).astype(np.int64)
    n_docs = n_docs.copy()
    n_docs[slot] = np.concatenate([f.n_docs for f in fixed])[src]
    values[slot] = np.concatenate([f.values for f in fixed])[src]
    zero = zero.copy()
    zero[slot] = np.concatenate([f.zero for f in fixed])[src]
    keep = np.ones(len(ids), bool)
    keep[dup_rows] = False
    keep[slot] = True
    cols = [ids.filter(pa.array(keep)), pa.array(n_docs[keep])]
    cols += [pa.array(values[keep, i]) for i in range(len(names))]
    return pa.table(cols, names=[query, "n_docs", *names]), zero[keep]


def _totals(table: pa.Table, zero: np.ndarray, names: list[str], n_rows: int) -> Totals:
    sums = np.zeros(len(names))
    counts = np.zeros(len(names), np.int64)
    for i, name in enumerate(names):
        for chunk in table.column(name).chunks:
            v = chunk.to_numpy()
            ok = ~np.isnan(v)
            sums[i] += v[ok].sum()
            counts[i] += ok.sum()
    return Totals(list(names), sums, counts, table.num_rows, int(n_rows), int(zero.sum()))


# --------------------------------------------------------------------------- public

def check_options(*, qrels, query, doc, score, label, k, gain, ties, log_base, zero_idcg,
                  nan_scores, negative_labels, complete, batch_rows) -> tuple[_Options, dict]:
    """Validate :func:`evaluate`'s options (not the data): the options and the columns
    to read (name -> role). The command line calls it first, to tell usage errors
    (exit 2) from bad data (exit 1)."""
    opts = _options(k, gain, ties, log_base, zero_idcg, nan_scores, negative_labels)
    if not isinstance(complete, bool):
        raise TypeError(f"complete must be True or False, got {complete!r}")
    if complete and qrels is None:
        raise ValueError("complete=True scores judged queries missing from the run, so it "
                         "needs qrels=...; drop complete or pass the judgments")
    if not isinstance(batch_rows, int) or isinstance(batch_rows, bool) or batch_rows < 1:
        raise ValueError(f"batch_rows must be an int >= 1, got {batch_rows!r}")
    for name, value in (("query", query), ("doc", doc), ("score", score), ("label", label)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a column name (str), got {value!r}")
    names = {query: "query", score: "score"}
    if qrels is None:
        names[label] = "label"
        if opts.ties == "trec":
            names[doc] = "doc"
    else:
        names[doc] = "doc"
    if len(names) < (3 if qrels is not None or opts.ties != "trec" else 4):
        raise ValueError(f"the query, doc, score and label columns must be different, got "
                         f"query={query!r}, doc={doc!r}, score={score!r}, label={label!r}")
    return opts, names


def evaluate(source, *, qrels=None, query: str = "query_id", doc: str = "doc_id",
             score: str = "score", label: str = "label", k: int | None | Sequence[int] = (1, 3, 5, 10),
             gain="exp2", ties: str = "average", log_base: float = 2.0,
             zero_idcg: str = "zero", nan_scores: str = "error",
             negative_labels: str = "error", complete: bool = False,
             progress: bool = False, batch_rows: int = 1 << 20) -> Report:
    """NDCG@k of every query of a search log, streamed in record batches.

    Parameters
    ----------
    source : a Parquet file, a directory or glob of Parquet files, a pyarrow Table /
        Dataset / RecordBatchReader, or a pandas or polars DataFrame, one row per
        (query, item). With ``qrels`` also a TREC run file (``qid Q0 docno rank
        score tag``, optionally compressed).
    qrels : judgments (TREC qrels file ``qid iter docno rel``, Parquet or a table
        with columns ``query``, ``doc``, ``label``). Qrels mode: a run row's label
        is its judgment (0 when unjudged), IDCG uses every judged document of the
        query, run queries without judgments are left out (``n_unjudged``).
    query, doc, score, label : column names. ``doc`` is read in qrels mode and
        for ``ties="trec"``; ``label`` is not read from a run in qrels mode.
    k, gain, ties, log_base, zero_idcg, nan_scores, negative_labels : as
        :func:`fastndcg.ndcg`; ``ties="trec"`` (score descending, then document id
        descending as strings) is trec_eval's rule and needs document ids.
    complete : qrels mode: score judged queries missing from the run as 0
        (trec_eval ``-c``); by default they are left out and counted (``n_missing``).
    progress : draw a progress bar with rows/s on stderr.
    batch_rows : rows per record batch read (memory vs. per-batch overhead).

    The rows of one query may straddle batches, row groups and files; rows of a
    query that are not adjacent are regrouped (see the module docstring).

    Example
    -------
    >>> import pyarrow as pa, fastndcg
    >>> log = pa.table({"query_id": [7, 7, 7, 9, 9], "score": [0.9, 0.5, 0.1, 0.3, 0.8],
    ...                 "label": [0, 2, 1, 1, 0]})
    >>> report = fastndcg.evaluate(log, k=[1, 3], gain="linear")
    >>> report.per_query.column_names
    ['query_id', 'n_docs', 'ndcg@1', 'ndcg@3']
    >>> [round(v, 4) for v in report.per_query["ndcg@3"].to_pylist()]
    [0.6697, 0.6309]
    >>> report.n_queries, round(report.mean["ndcg@3"], 4)
    (2, 0.6503)
    """
    started = time.perf_counter()
    opts, names = check_options(qrels=qrels, query=query, doc=doc, score=score, label=label,
                                k=k, gain=gain, ties=ties, log_base=log_base,
                                zero_idcg=zero_idcg, nan_scores=nan_scores,
                                negative_labels=negative_labels, complete=complete,
                                batch_rows=batch_rows)
    judged = None if qrels is None else _load_qrels(qrels, query, doc, label, opts)
    src = io.open_source(source, names, batch_rows=batch_rows,
                         trec=(lambda p: io.read_trec_run(p, query=query, doc=doc, score=score))
                         if qrels is not None else None)
    scorer = _Scorer(opts, query, doc, score, label, judged, complete)
    bar = Progress(src.num_rows, enabled=bool(progress))
    results = _Results(query, opts.names)
    unjudged: list[pa.Array] = []
    id_type = None
    try:
        for chunk in _query_chunks(src, query, bar):
            id_type = chunk.ids.type
            scored = scorer.score_chunk(chunk)
            results.add(scored)
            if scored.unjudged is not None:
                unjudged.append(scored.unjudged)
    finally:
        bar.close()
    if id_type is None and src.schema is not None and query in src.schema.names:
        id_type = pa.int64() if pa.types.is_integer(src.schema.field(query).type) else None
    table, zero = results.table(id_type)
    dup_ids = _duplicate_ids(table.column(query)) if table.num_rows else None
    if dup_ids is not None:
        table, zero = _fix_scattered(table, zero, dup_ids, src, query, scorer, opts.names)
    missing = scorer.missing()
    n_missing = 0 if missing is None else len(missing.ids)
    if missing is not None and complete:
        results.add(missing)
        more, more_zero = results.table(None)
        if more.schema != table.schema:
            table = table.set_column(0, query, _as_strings(table.column(query).combine_chunks()))
            more = more.set_column(0, query, _as_strings(more.column(query).combine_chunks()))
        table = pa.concat_tables([table, more])
        zero = np.concatenate([zero, more_zero])
    n_unjudged = len(pc.unique(pa.chunked_array(unjudged))) if unjudged else 0
    return Report(table, _totals(table, zero, opts.names, bar.done), n_unjudged=n_unjudged,
                  n_missing=n_missing, complete=complete, qrels_mode=qrels is not None,
                  seconds=time.perf_counter() - started, source=src.describe)
