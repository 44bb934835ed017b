"""Results: mergeable :class:`Totals`, per-query result parts, and the :class:`Report`.

Per-query results are written as they are produced, in *parts*: a part is one
Parquet file (plus a side file of one byte per query saying whether its IDCG was
0, which the Totals need when a part is rewritten) or, for ``per_query=None``, a
list of record batches in memory. One machine writes one part; a Dask run writes
one part per partition. :class:`Output` owns the user's target (``per_query``):
it checks it before anything is read, stages parts next to it and moves them into
place only when the evaluation succeeded, so a failed run never leaves a partial
or clobbered output.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import uuid
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterator, Sequence

import numpy as np
import pyarrow as pa

from . import _validate as V
from ._arrow import as_numpy, from_numpy, scalar
from ._validate import OutputIsInput
from .measures import GM_FLOOR, summary_of

__all__ = ["Totals", "Report", "Output", "OutputIsInput", "PartWriter", "Part", "Rows",
           "Runs", "runid_part"]

_FLUSH_ROWS = 1 << 16  # per-query rows buffered before a Parquet row group is written


# --------------------------------------------------------------------------- totals

@dataclass
class Totals:
    """Mergeable aggregates of per-query NDCG: sums and counts per cutoff.

    ``merge`` adds two together (chunks, parts, Dask partitions); ``mean`` is the
    sum over the queries with a value (NaN, from ``zero_idcg="nan"``, left out),
    weighted by the query weights when the evaluation has them (``wsums`` /
    ``weights``: sums of weight x value and of weight, per cutoff).

    No finite input overflows a sum: each sum is kept as a float times a power of
    two, ``sums * 2**sums_exp`` (and ``wsums * 2**wsums_exp``, ``weights *
    2**weights_exp``), one exponent per cutoff. The exponents stay 0, and the sums
    are the plain float64 sums, while the terms lie within ``2**-64 .. 2**448``;
    beyond that a chunk's terms are divided by a power of two (exact) before they
    are added, and ``merge`` brings two sums to the larger exponent. ``mean``
    divides the two sums exactly and rounds once, so ordinary inputs give the
    very bits a plain ``sum / count`` gives, and weights anywhere from the
    smallest to the largest float still give the weighted mean.

    >>> a = Totals.of(["ndcg@3"], np.array([[0.5], [1.0]]), np.array([False, True]), 7)
    >>> b = Totals.of(["ndcg@3"], np.array([[0.0]]), np.array([False]), 2)
    >>> a.merge(b).mean
    {'ndcg@3': 0.5}
    >>> w = Totals.of(["ndcg@3"], np.array([[0.5], [1.0]]), np.array([False, False]), 2,
    ...               weight=np.array([3.0, 1.0]))
    >>> w.mean
    {'ndcg@3': 0.625}
    >>> huge = Totals.of(["ndcg@3"], np.array([[0.5], [1.0]]), np.array([False, False]), 2,
    ...                  weight=np.array([1e308, 1e308]))
    >>> huge.mean, huge.weights_exp
    ({'ndcg@3': 0.75}, array([1024]))
    """
    names: list[str]
    sums: np.ndarray
    counts: np.ndarray
    n_queries: int = 0
    n_rows: int = 0
    n_zero_idcg: int = 0
    wsums: np.ndarray | None = None
    weights: np.ndarray | None = None
    # the power of two each sum is scaled by, per cutoff (None: 0)
    sums_exp: np.ndarray | None = None
    wsums_exp: np.ndarray | None = None
    weights_exp: np.ndarray | None = None

    @classmethod
    def empty(cls, names: list[str], weighted: bool = False) -> "Totals":
        n = len(names)
        return cls(list(names), np.zeros(n), np.zeros(n, np.int64),
                   wsums=np.zeros(n) if weighted else None,
                   weights=np.zeros(n) if weighted else None)

    @classmethod
    def of(cls, names: list[str], values: np.ndarray, zero: np.ndarray, n_rows: int,
           weight: np.ndarray | None = None, ids: pa.Array | None = None) -> "Totals":
        values = np.asarray(values, np.float64)
        geo = [i for i, s in enumerate(_summaries(names)) if s == "gm"]
        if geo:  # a geometric mean sums logs (trec_eval's floor first); NaN stays NaN
            values = values.copy()
            values[:, geo] = np.log(np.maximum(values[:, geo], GM_FLOOR))
        if weight is None and values.ndim == 2 and values.shape[1] >= 2 \
                and values.flags.c_contiguous:
            # one compiled pass instead of six NumPy passes over the columns (each
            # ~10 ns a value); the sums have NumPy's bits (see column_totals)
            from ._kernels import column_totals

            n_c = values.shape[1]
            clean = np.empty(values.shape)
            sums, counts, big = np.empty(n_c), np.empty(n_c, np.int64), np.empty(n_c)
            if column_totals(values, clean, sums, counts, big) >= 0:
                _check_finite(names, clean, ids)
            e = _exponents(big)
            if e.any():
                sums = np.ldexp(clean, -e).sum(axis=0)
            return cls(list(names), sums, counts, len(values), int(n_rows),
                       int(np.count_nonzero(zero)), None, None, e)
        ok = ~np.isnan(values)
        clean = np.where(ok, values, 0.0)
        _check_finite(names, clean, ids)
        v, sums_exp = _scaled(clean)
        wsums = weights = wsums_exp = weights_exp = None
        if weight is not None:
            w, weights_exp = _scaled(np.where(ok, np.asarray(weight, np.float64)[:, None], 0.0))
            wsums, weights = (v * w).sum(axis=0), w.sum(axis=0)
            wsums_exp = sums_exp + weights_exp
        return cls(list(names), v.sum(axis=0), ok.sum(axis=0), len(values), int(n_rows),
                   int(np.count_nonzero(zero)), wsums, weights, sums_exp, wsums_exp,
                   weights_exp)

    @classmethod
    def of_rows(cls, names: list[str], rows) -> "Totals":
        return cls.of(names, rows.values, rows.zero, 0, rows.weight, rows.ids)

    def _exp(self, which: str) -> np.ndarray:
        e = getattr(self, which + "_exp")
        return np.zeros(len(self.names), np.int64) if e is None else e

    def merge(self, other: "Totals") -> "Totals":
        if self.names != other.names:
            raise ValueError(f"cannot merge totals of {self.names} and {other.names}")
        return self._combine(other, 1.0)

    def subtract(self, other: "Totals") -> "Totals":
        """These totals without those of ``other`` (a subset of their queries)."""
        out = self._combine(other, -1.0)
        out.n_rows = self.n_rows
        return out

    def _combine(self, other: "Totals", sign: float) -> "Totals":
        sums, sums_exp = _plus(self.sums, self._exp("sums"), sign * other.sums,
                               other._exp("sums"))
        wsums = weights = wsums_exp = weights_exp = None
        if self.wsums is not None or (sign > 0 and other.wsums is not None):
            wsums, wsums_exp = _plus(self.wsums, self._exp("wsums"),
                                     None if other.wsums is None else sign * other.wsums,
                                     other._exp("wsums"))
            weights, weights_exp = _plus(self.weights, self._exp("weights"),
                                         None if other.weights is None else sign * other.weights,
                                         other._exp("weights"))
        s = int(sign)
        return Totals(self.names, sums, self.counts + s * other.counts,
                      self.n_queries + s * other.n_queries, self.n_rows + s * other.n_rows,
                      self.n_zero_idcg + s * other.n_zero_idcg, wsums, weights, sums_exp,
                      wsums_exp, weights_exp)

    @property
    def mean(self) -> dict[str, float]:
        """Each column averaged over its queries as its measure is (see
        :func:`fastndcg.measures.summary_of`): the (weighted) mean; for the counts
        (``num_ret``, ``num_rel``, ...) their sum, as trec_eval prints it (never
        weighted); for ``gm_map`` and ``gm_bpref`` trec_eval's geometric mean."""
        if self.wsums is not None:
            out = {n: _quotient(s, es, w, ew) for n, s, es, w, ew in
                   zip(self.names, self.wsums, self._exp("wsums"), self.weights,
                       self._exp("weights"))}
        else:
            out = {n: _quotient(s, es, c, 0)
                   for n, s, es, c in zip(self.names, self.sums, self._exp("sums"), self.counts)}
        for i, (n, how) in enumerate(zip(self.names, _summaries(self.names))):
            if how == "sum":
                out[n] = _quotient(self.sums[i], self._exp("sums")[i], 1, 0) \
                    if self.counts[i] else 0.0
            elif how == "gm":
                out[n] = math.exp(out[n])
        return out


def _summaries(names: list[str]) -> list[str]:
    return [summary_of(n) for n in names]


# A column's terms are summed as they are while its largest |term| lies within
# 2**-_LOW .. 2**_HIGH: a product of two such terms is below 2**896, and 2**63 of
# those below 2**959, so no sum overflows; and the largest weight is not so small
# that its products with values fall among the subnormal floats, which keep fewer
# bits. Beyond, the terms are scaled (see Totals).
_HIGH = 448
_LOW = 64


def _scaled(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x / 2**e, e) per column of x: e is 0 while the column's largest |x| lies
    within 2**-_LOW .. 2**_HIGH, else that one's binary exponent (the scaled terms
    then lie within [-1, 1]). Dividing by a power of two is exact."""
    e = _exponents(np.max(np.abs(x), axis=0, initial=0.0))
    return (np.ldexp(x, -e) if e.any() else x), e


def _exponents(big: np.ndarray) -> np.ndarray:
    """The scaling exponent of each column from its largest |x| (see :func:`_scaled`)."""
    e = np.frexp(big)[1].astype(np.int64)  # 2**(e-1) <= big < 2**e
    return np.where((big > 0) & ((e > _HIGH) | (e <= -_LOW)), e, 0)


def _plus(a, ea, b, eb):
    """The sum of a * 2**ea and b * 2**eb (per cutoff) as (sum, exponent); a None
    side adds nothing."""
    if a is None:
        return b, (None if b is None else eb)
    if b is None:
        return a, ea
    if np.array_equal(ea, eb):
        return a + b, ea
    # at the larger exponent of the two (a zero sum has no say): the smaller
    # one is divided by a power of two, so neither grows
    e = np.where(a == 0, eb, np.where(b == 0, ea, np.maximum(ea, eb)))
    return np.ldexp(a, ea - e) + np.ldexp(b, eb - e), e


def _quotient(num, num_exp, den, den_exp) -> float:
    """num * 2**num_exp / (den * 2**den_exp) rounded once to the nearest float64
    (for exponents 0 the very bits of ``num / den``); NaN when den is 0."""
    if not den:
        return math.nan
    if not num:  # 0 (or -0.0, as num / den gives it)
        return float(num) / float(den)
    q = Fraction(float(num)) / Fraction(den.item() if isinstance(den, np.generic) else den)
    shift = int(num_exp) - int(den_exp)
    q = q * (1 << shift) if shift >= 0 else q / (1 << -shift)
    try:
        return float(q)
    except OverflowError:  # a mean lies within its values: only rounding of the sums
        return math.copysign(sys.float_info.max, q)  # can carry it past the largest float


def _check_finite(names: list[str], values: np.ndarray, ids: pa.Array | None) -> None:
    """A per-query value that overflowed float64 (an NDCG whose DCG is far larger
    than its IDCG) has no mean: an error naming it, never an inf or NaN mean."""
    bad = ~np.isfinite(values)
    if not bad.any():
        return
    q, c = (int(i) for i in np.argwhere(bad)[0])
    who = f"query {ids[q].as_py()!r}" if ids is not None else f"the query at position {q}"
    n = int(bad[:, c].sum())
    more = f" ({n:,} queries are like this)" if n > 1 else ""
    raise ValueError(f"{names[c]} of {who} is {float(values[q, c])!r} in float64: its exact "
                     f"value lies beyond float64's range, so no mean of {names[c]} can be "
                     f"given{more}; bring the labels into a narrower range (rescale them, or "
                     f"pass negative_labels='zero')")


# --------------------------------------------------------------------------- parts

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
        the IDCG-zero side file, as :func:`runid_part` writes, reads too)."""
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


# --------------------------------------------------------------------------- output target

_FILE_EXTS = (".parquet", ".pq", ".csv")


class Output:
    """The ``per_query`` target: None (in memory), False (nothing), a file
    (``.parquet``/``.pq``/``.csv``) or a directory of Parquet parts.

    Checked and prepared before anything is read: a target that is (or holds) a
    file the evaluation reads is refused; a missing directory is created; an
    unwritable place is reported. Parts are staged in a hidden directory and
    moved into place by :meth:`commit`; :meth:`abort` removes them."""

    def __init__(self, per_query: Any, inputs: list[str], *, directory: bool = False) -> None:
        self.spec = per_query
        self.inputs = tuple(inputs)  # the files the evaluation reads
        self.kind = "memory" if per_query is None else "none" if per_query is False else "path"
        self.path: str | None = None
        self.is_dir = False
        self.staging: str | None = None
        if per_query is True:
            raise TypeError("per_query takes None (a table in memory), False (none), or a "
                            "path (a .parquet or .csv file, or a directory); got True")
        if self.kind != "path":
            return
        if not isinstance(per_query, (str, os.PathLike)):
            raise TypeError(f"per_query takes None, False or a path, got {per_query!r} "
                            f"({type(per_query).__name__})")
        raw = V.path_text(per_query, "per_query")
        path = os.path.abspath(os.path.expanduser(raw))
        ext = os.path.splitext(path)[1].lower()
        self.is_dir = (directory or os.path.isdir(path) or raw.endswith(("/", os.sep))
                       or ext == "")
        if not self.is_dir and ext not in _FILE_EXTS:
            raise ValueError(f"per_query must name a .parquet or .csv file, or a directory (a "
                             f"name without extension), got {raw!r}")
        if self.is_dir and ext == ".csv":
            raise ValueError(f"per_query {raw!r}: a directory of per-query parts is written "
                             f"as Parquet; name a .csv file or a directory")
        self.path = path
        self.format = "csv" if ext == ".csv" and not self.is_dir else "parquet"
        # the one output guard: inputs (links followed), FIFOs and devices, writability
        V.output_path(raw, "per_query", inputs, exts=_FILE_EXTS, directory=self.is_dir)
        self._prepare()

    def _prepare(self) -> None:
        parent = self.path if self.is_dir else os.path.dirname(self.path)
        token = uuid.uuid4().hex[:12]
        # the outermost directory this creates, removed again (if empty) by abort()
        self._created = None
        probe = parent
        while probe and not os.path.exists(probe):
            self._created = probe
            probe = os.path.dirname(probe)
        try:
            if self.is_dir:
                os.makedirs(self.path, exist_ok=True)
                stray = [f for f in os.listdir(self.path)
                         if not f.startswith((".", "_")) and not _is_part_name(f)]
                if stray:
                    raise ValueError(f"per_query directory {self.spec!r} already holds "
                                     f"{stray[0]!r} (and {len(stray) - 1} more files) that are "
                                     f"not per-query parts; name an empty or new directory")
                self.staging = os.path.join(self.path, f".fastndcg-staging-{token}")
            else:
                if os.path.isdir(self.path):
                    raise ValueError(f"per_query {self.spec!r} is a directory")
                os.makedirs(parent, exist_ok=True)
                self.staging = os.path.join(parent, f".{os.path.basename(self.path)}.fastndcg-{token}")
            os.makedirs(self.staging)
            probe = os.path.join(self.staging, "probe")
            with open(probe, "wb"):
                pass
            os.remove(probe)
        except OSError as err:
            raise ValueError(f"cannot write per-query results to {self.spec!r}: "
                             f"{err.strerror or err}; choose a writable path") from None

    def part_path(self, index: int) -> str | None:
        """Where part ``index`` is staged (None: keep in memory or nothing)."""
        if self.kind != "path":
            return None
        return os.path.join(self.staging, f"part-{index:06d}.parquet")

    def commit(self, parts: list[Part]) -> Any:
        """Move the parts into place; returns what ``Report.per_query`` is made from."""
        if self.kind == "memory":
            tables = [p.table() for p in parts]
            return pa.concat_tables(tables) if tables else None
        if self.kind == "none":
            return None
        try:
            if self.is_dir:
                for f in os.listdir(self.path):
                    if _is_part_name(f):
                        os.remove(os.path.join(self.path, f))
                for i, p in enumerate(parts):
                    os.replace(p.path, os.path.join(self.path, f"part-{i:06d}.parquet"))
            elif self.format == "parquet" and len(parts) == 1:
                os.replace(parts[0].path, self.path)
            else:
                _write_single(parts, self.path, self.format)
        finally:
            self._remove_staging()
        return self.path

    def abort(self) -> None:
        """Remove the staged parts; after a failed run also the directories this
        created, if nothing else was put there."""
        self._remove_staging()
        created = getattr(self, "_created", None)
        if created:
            d = self.path if self.is_dir else os.path.dirname(self.path)
            while True:  # from the innermost up to the first one this created, if empty
                try:
                    os.rmdir(d)
                except OSError:
                    return
                if d == created:
                    return
                d = os.path.dirname(d)

    def _remove_staging(self) -> None:
        for _ in range(5):  # a file created while removing: try again
            if not (self.staging and os.path.isdir(self.staging)):
                return
            shutil.rmtree(self.staging, ignore_errors=True)


def _is_part_name(name: str) -> bool:
    return name.startswith("part-") and name.endswith(".parquet")


def _write_single(parts: list[Part], path: str, fmt: str) -> None:
    """Parts streamed into one Parquet or CSV file (written beside, then renamed)."""
    tmp = path + ".fastndcg-tmp"
    schema = parts[0].schema
    if fmt == "csv":
        import pyarrow.csv as csv
        writer = csv.CSVWriter(tmp, schema)
    else:
        import pyarrow.parquet as pq
        writer = pq.ParquetWriter(tmp, schema, compression="snappy")
    try:
        for p in parts:
            for b in p.iter_results():
                if b.num_rows:
                    writer.write_batch(b.cast(schema) if b.schema != schema else b)
    finally:
        writer.close()
    os.replace(tmp, path)


RUNID = "runid"  # the first column of the per-query results of several runs


def runid_part(results: Any, runid: str, path: str | None) -> Part:
    """One run's committed per-query results (a Table, or the path of its Parquet
    file) as a part with a first column ``runid``: written to ``path`` (Parquet,
    a batch at a time, so memory stays flat) or, for None, kept in memory."""
    if isinstance(results, pa.Table):
        schema, batches, f = results.schema, iter(results.to_batches()), None
    else:
        import pyarrow.parquet as pq
        f = pq.ParquetFile(results)
        schema, batches = f.schema_arrow, f.iter_batches()
    out = schema.insert(0, pa.field(RUNID, pa.string()))
    name = scalar(runid, pa.string())

    def tagged(b: pa.RecordBatch) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays([pa.repeat(name, b.num_rows), *b.columns],
                                          schema=out)
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


def read_per_query(path: str, schema: pa.Schema | None) -> pa.Table:
    """A committed per-query target read back (a file, or a directory of parts in
    name order)."""
    if os.path.isdir(path):
        import pyarrow.parquet as pq
        files = sorted(f for f in os.listdir(path) if _is_part_name(f))
        tables = [pq.read_table(os.path.join(path, f)) for f in files]
        if not tables:
            return schema.empty_table() if schema is not None else pa.table({})
        return pa.concat_tables(tables)
    if path.lower().endswith(".csv"):
        import pyarrow.csv as csv
        types = {f.name: f.type for f in schema} if schema is not None else None
        return csv.read_csv(path, convert_options=csv.ConvertOptions(column_types=types))
    import pyarrow.parquet as pq
    return pq.read_table(path)


# --------------------------------------------------------------------------- report

class Report:
    """What :func:`fastndcg.evaluate` found.

    Attributes
    ----------
    per_query : pyarrow.Table -- the query id (named as in the source), ``n_docs``
        (rows of the query in the run/log), then one float64 ``ndcg@K`` column per
        cutoff; one row per scored query, in order of first appearance. With
        ``per_query=PATH`` it is read back from that file or directory on first
        access (``per_query_path`` says where); with ``per_query=False`` none was
        kept and reading it is an error.
    mean : dict -- ``{"ndcg@K": mean over queries}`` (NaN values left out).
    n_queries : queries scored (rows of ``per_query``).
    n_rows : rows read from the log or run.
    n_zero_idcg : scored queries whose IDCG is 0 (no relevant item): scored by
        ``zero_idcg``; with "nan" they are left out of ``mean``.
    n_unjudged : qrels mode: queries of the run without any judgment, left out
        (as trec_eval does).
    n_missing : qrels mode: judged queries absent from the run: scored 0 with
        ``complete=True`` (and then part of ``per_query``), else left out.
    n_scattered : queries whose rows were not adjacent in the source (each was
        regrouped and scored whole).
    seconds : wall time of the evaluation.
    source : what was evaluated, in words (a path, or the kind of table).
    inputs : the files the evaluation read (:meth:`write` never writes over them).
    per_query_path : where the per-query results were written (``per_query=PATH``),
        else None.
    totals : the mergeable :class:`Totals` behind ``mean`` and the counts.
    complete : whether judged queries missing from the run were scored 0.
    qrels_mode : whether the run was joined to qrels.
    """

    def __init__(self, per_query: Any, totals: Totals, *, n_unjudged: int = 0,
                 n_missing: int = 0, complete: bool = False, qrels_mode: bool = False,
                 seconds: float = 0.0, source: str = "", n_scattered: int = 0,
                 schema: pa.Schema | None = None, inputs: Sequence[str] = ()) -> None:
        self._per_query = per_query if isinstance(per_query, pa.Table) else None
        self.inputs = tuple(inputs)  # the files read: write() never writes over them
        self.per_query_path = per_query if isinstance(per_query, str) else None
        self._schema = schema
        self.totals = totals
        self.n_unjudged = n_unjudged
        self.n_missing = n_missing
        self.n_scattered = n_scattered
        self.complete = complete
        self.qrels_mode = qrels_mode
        self.seconds = seconds
        self.source = source

    @property
    def per_query(self) -> pa.Table:
        if self._per_query is None:
            if self.per_query_path is None:
                raise ValueError("this evaluation kept no per-query results (per_query=False); "
                                 "pass per_query=None to keep them in memory, or a path to "
                                 "write them to a file")
            self._per_query = read_per_query(self.per_query_path, self._schema)
        return self._per_query

    def forget_per_query(self) -> None:
        """Keep no per-query results (``per_query=False`` runs that staged them)."""
        self._per_query = None
        self.per_query_path = None

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
        """Write ``per_query`` to ``.parquet`` or ``.csv`` (chosen by the extension),
        through the output guard (links, FIFOs, directories, writability)."""
        kept = (self.per_query_path,) if self.per_query_path else ()
        path = V.output_path(path, "path", self.inputs + kept, exts=_FILE_EXTS)
        if os.path.splitext(path)[1].lower() in (".parquet", ".pq"):
            import pyarrow.parquet as pq
            pq.write_table(self.per_query, path)
        else:
            import pyarrow.csv as csv
            csv.write_csv(self.per_query, path)

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



class Runs:
    """What ``evaluate_runs`` (``from fastndcg.evaluate import evaluate_runs``) found.

    Attributes
    ----------
    reports : runid -> :class:`Report` of that run, in the order the runs were given.
    sources : runid -> the run as given (a path, or the source of a pair).
    per_query : every run's per-query results, run after run, with a first column
        ``runid``: a pyarrow Table (``per_query=None``), the path written, or None
        (``per_query=False``).
    seconds : wall time of the whole evaluation (the qrels, read once, included).
    """

    def __init__(self, reports: dict, sources: dict, per_query: Any, seconds: float) -> None:
        self.reports, self.sources = reports, sources
        self.per_query, self.seconds = per_query, seconds

    def to_dicts(self) -> list[dict[str, Any]]:
        """One dict a run: ``runid``, ``source`` (a path; None for other sources),
        then :meth:`Report.to_dict` (what ``--format json`` prints, a line each)."""
        return [{"runid": runid,
                 "source": self.sources[runid] if isinstance(self.sources[runid], str) else None,
                 **r.to_dict()} for runid, r in self.reports.items()]

    def format_table(self) -> str:
        """An aligned text table: one row per run, ``runid`` first, its means and
        counts, ``source`` last."""
        first = next(iter(self.reports.values()))
        header = ["runid", *first.mean, "queries", "rows", "zero-IDCG"]
        if first.qrels_mode:
            header += ["unjudged", "missing"]
        header += ["time", "source"]
        rows = []
        for d in self.to_dicts():
            r = self.reports[d["runid"]]
            row = [d["runid"], *(f"{v:.4f}" for v in r.mean.values()), f"{r.n_queries:,}",
                   f"{r.n_rows:,}", f"{r.n_zero_idcg:,}"]
            if r.qrels_mode:
                row += [f"{r.n_unjudged:,}", f"{r.n_missing:,}"]
            rows.append(row + [f"{r.seconds:.3f} s", d["source"] or "-"])
        widths = [max(map(len, col)) for col in zip(header, *rows)]
        last = len(header) - 1
        lines = ["  ".join(cell.ljust(w) if i in (0, last) else cell.rjust(w)
                           for i, (cell, w) in enumerate(zip(row, widths))).rstrip()
                 for row in [header, *rows]]
        if first.qrels_mode:
            lines.append(f"unjudged: run queries without judgments (left out); missing: "
                         f"judged queries not in the run "
                         f"({'scored 0' if first.complete else 'left out'})")
        n_rows = sum(r.n_rows for r in self.reports.values())
        lines.append(f"{len(self.reports)} runs, {n_rows:,} rows in {self.seconds:.3f} s")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Runs {len(self.reports)}: {', '.join(self.reports)}>"
