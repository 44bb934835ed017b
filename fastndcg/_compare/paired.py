"""Paired per-query values -> mergeable comparison statistics.

A comparison scores every system on each whole-query chunk (:class:`PairedScorer`,
one :class:`~fastndcg.partition.Scorer` per system, so the values are those
:func:`fastndcg.evaluate` gives), and :func:`paired_partition` turns a partition's
values into :class:`Stats` through :func:`fastndcg.partition.score_partition`, the
one function that scores a partition on every path. What a partition keeps does
not grow with its queries:

* per group (segment) and hashed bucket of queries: the number of queries, the sum
  of every system's values and of every pair's differences (against the baseline);
* per group: the sums of squared differences, and wins, ties and losses;
* the per-query values themselves, but only while the whole comparison holds at
  most ``Plan.keep`` queries (then the query-level methods use them);
* with human judgments of a sample of the queries (``Plan.human``), per group the
  prediction-powered sums of every pair's differences (:class:`PairSums`): each
  system is scored under the LLM's judgments and the human ones from one ranking.

Sums are fixed-point integers (:mod:`fastndcg._kernels.paired`), so :meth:`Stats.merge`
is exact: every path (one machine, Dask, Spark), partitioning, batch size and
thread count gives the same bits. A query's bucket is a seeded hash of its id.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import _kernels as K
from .._arrow import as_numpy, from_numpy, id_hash, plain_ids
from ..chunks import Chunk, regroup
from ..partition import Options, PartitionResult, Scored, Scorer, score_partition
from ..parts import Rows
from ..pieces import Edges, in_order
from ..ppi import Sums, matched
from ..qrels import Qrels
from ..totals import Totals

__all__ = ["Plan", "PairedScorer", "PairedScored", "PairSums", "Stats", "paired_partition",
           "merge_pieces", "segment_of", "bucket_key"]

_MASK = (1 << 64) - 1


def _mix(x: int) -> int:
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def bucket_key(seed: int) -> np.uint64:
    """The key that seeds the hash of query ids to buckets."""
    return np.uint64(_mix((seed ^ 0xB0C4E75EED) & _MASK))


@dataclass
class Plan:
    """What every partition of a comparison needs (small; pickled to workers)."""
    systems: list            # names, in order
    base: int                # the baseline's index
    measures: list           # the measure columns of each system's values
    n_buckets: int
    seed: int
    keep: int                # per-query values kept while the comparison has <= keep queries
    segment: str | None = None          # a column of the log holding each query's segment
    segment_map: tuple | None = None    # or (query ids, segments): a mapping
    human: bool = False                 # human judgments of a sample: PairSums kept


def segment_of(chunk: Chunk, column: str) -> pa.Array:
    """The segment of each query of ``chunk`` from a column of the log, checked to be
    the same on every row of the query."""
    seg = chunk.table.column(column)
    if isinstance(seg, pa.ChunkedArray):
        seg = seg.combine_chunks()
    if pa.types.is_dictionary(seg.type):
        seg = seg.dictionary_decode()
    starts = chunk.offsets[:-1]
    firsts = seg.take(from_numpy(starts.astype(np.int64)))
    lengths = np.diff(chunk.offsets)
    spread = firsts.take(from_numpy(np.repeat(np.arange(len(starts), dtype=np.int64), lengths)))
    differs = pc.not_equal(seg, spread)
    if firsts.null_count:
        q = pc.index(pc.is_null(firsts), True).as_py()
        raise ValueError(f"column {column!r} (segment) is null for query "
                         f"{chunk.ids[q].as_py()!r}; give every query a segment value")
    if pc.any(differs).as_py():
        row = pc.index(differs, True).as_py()
        q = int(np.searchsorted(chunk.offsets, row, side="right")) - 1
        raise ValueError(f"column {column!r} (segment) varies within query "
                         f"{chunk.ids[q].as_py()!r} ({firsts[q].as_py()!r} and "
                         f"{seg[row].as_py()!r}); a query belongs to one segment: give every "
                         f"row of a query the same value")
    return firsts


def _mapped(ids: pa.Array, mapping: tuple) -> pa.Array:
    keys, segs = mapping
    pos = pc.index_in(ids if ids.type == keys.type else ids.cast(keys.type), value_set=keys)
    if pos.null_count:
        q = ids.filter(pc.is_null(pos))[0].as_py()
        raise ValueError(f"query {q!r} has no segment in the mapping given as segment=; map "
                         f"every scored query ({pos.null_count:,} of this chunk are missing)")
    return segs.take(pos)


@dataclass
class PairedScored(Scored):
    """A chunk's values, every system side by side, and with human judgments the
    values of the queries they judge (``human``: ids and values, the same columns)."""
    human: Rows | None = None


class PairedScorer:
    """Scores a chunk once per system; the values side by side (system-major columns
    ``"{measure} {system}"``), with each query's segment. With ``qrels`` the log's
    documents are judged by them (queries without a judgment left out), and with
    ``human`` as well by the human judgments of a sample, each system's rows ranked
    once for both."""

    def __init__(self, opts_list: list[Options], plan: Plan, qrels: Qrels | None = None,
                 human: Qrels | None = None) -> None:
        self.scorers = [Scorer(o, qrels) for o in opts_list]
        self.human = None if human is None else [Scorer(o, human) for o in opts_list]
        self.plan = plan
        names = [f"{m} {s}" for s in plan.systems for m in plan.measures]
        self.opts = dataclasses.replace(opts_list[0], names=names)
        self.qrels = None

    def score_chunk(self, chunk: Chunk) -> PairedScored:
        ranked = [sc.rank(chunk) for sc in self.scorers]
        parts = [sc.score_ranked(r) for sc, r in zip(self.scorers, ranked)]
        first = parts[0]
        extra = None
        if self.plan.segment is not None:
            seg = segment_of(chunk, self.plan.segment)
            if len(first.ids) < len(chunk.ids):  # queries without judgments left out
                seg = seg.filter(pc.is_in(chunk.ids, value_set=first.ids))
            extra = {"segment": seg}
        elif self.plan.segment_map is not None:
            extra = {"segment": _mapped(first.ids, self.plan.segment_map)}
        human = None
        if self.human is not None:
            by_human = [sc.score_ranked(r) for sc, r in zip(self.human, ranked)]
            human = Rows(by_human[0].ids, by_human[0].n_docs, _side_by_side(by_human),
                         by_human[0].zero)
        return PairedScored(first.ids, first.n_docs, _side_by_side(parts), first.zero, None,
                            extra, human=human)


def _side_by_side(parts: list[Scored]) -> np.ndarray:
    """The systems' values of the same queries, side by side (system-major)."""
    return np.ascontiguousarray(np.hstack([p.values for p in parts]) if len(parts) > 1
                                else parts[0].values)


class PairSums:
    """The prediction-powered sums of a comparison with human judgments of a sample
    of its queries: per group (segment), a :class:`fastndcg.ppi.Sums` of every pair's
    per-query difference, system - baseline (column ``j * M + m``: the j-th system
    other than the baseline, measure m), under the LLM's labels on every query
    compared (Ŷ) and under the human labels on those they judge (Y). A query's two
    values are lined up by id as they are added, so nothing is kept per query; the
    sums are exact, so they merge to the same bits in any order.

    >>> plan = Plan(["a", "b"], 0, ["ndcg@10"], 10, 0, 0, human=True)
    >>> ps = PairSums(plan)
    >>> ps.add(pa.array([1, 2, 3]), np.array([[0.5, 0.7], [0.4, 0.4], [0.1, 0.3]]), None,
    ...        Rows(pa.array([1, 2]), np.zeros(2), np.array([[0.5, 0.6], [0.5, 0.6]]),
    ...             np.zeros(2, bool)))
    >>> e = ps.groups[None].estimate(ppi=1.0).measures["ndcg@10 b - a"]
    >>> e.n, e.N, round(e.estimate, 4)  # 0.2 + mean(0.1 - 0.2, 0.1 - 0.0)
    (2, 1, 0.2)
    """

    def __init__(self, plan: Plan) -> None:
        M, b = len(plan.measures), plan.base
        others = [s for s in range(len(plan.systems)) if s != b]
        self.cols = np.array([s * M + m for s in others for m in range(M)], np.int64)
        self.base_cols = np.array([b * M + m for _ in others for m in range(M)], np.int64)
        self.keys = [(measure, plan.systems[s]) for s in others for measure in plan.measures]
        self.baseline = plan.systems[b]
        self.groups: dict = {}  # segment value (None: no segments) -> Sums
        self.n_queries = 0      # queries compared (a value of every system and measure)
        self.n_shared = 0       # ... of them with human judgments
        self.n_human_only = 0   # queries with human judgments that are not compared
        self.example = None     # the smallest id of a query with human judgments

    def names(self, segment) -> list[str]:
        """The columns of a group's Sums, named for messages."""
        at = "" if segment is None else f" (segment {segment!r})"
        return [f"{measure} {system} - {self.baseline}{at}" for measure, system in self.keys]

    def differences(self, values: np.ndarray) -> np.ndarray:
        """Every pair's differences (q, P*M) of the systems' values side by side (q, S*M)."""
        return values[:, self.cols] - values[:, self.base_cols]

    def add(self, ids: pa.Array, values: np.ndarray, segments: pa.Array | None,
            human: Rows | None) -> None:
        """Add the queries compared (``ids``, their values side by side, and segments, or
        None) and ``human``: the values of the queries with human judgments among them
        and others (counted as not compared)."""
        n_human = 0 if human is None else len(human.ids)
        if n_human:
            low = pc.min(human.ids).as_py()
            if self.example is None or low < self.example:
                self.example = low
        if not len(ids):
            self.n_human_only += n_human
            return
        llm = self.differences(values)
        if n_human:
            where = matched(ids, human.ids)
            labelled = where.is_valid().to_numpy(zero_copy_only=False)
            pos = where.fill_null(0).to_numpy(zero_copy_only=False)
            by_human = self.differences(np.asarray(human.values, np.float64)[pos])
        else:
            labelled = np.zeros(len(ids), bool)
            by_human = np.full_like(llm, np.nan)
        shared = int(labelled.sum())
        self.n_queries += len(ids)
        self.n_shared += shared
        self.n_human_only += n_human - shared
        if segments is None:
            self._sums(None).add(llm, by_human, labelled)
            return
        uniq = pc.unique(segments)
        codes = pc.index_in(segments, value_set=uniq).to_numpy(zero_copy_only=False)
        for i, segment in enumerate(uniq.to_pylist()):
            rows = codes == i
            self._sums(segment).add(llm[rows], by_human[rows], labelled[rows])

    def _sums(self, segment) -> Sums:
        if segment not in self.groups:
            self.groups[segment] = Sums.empty(self.names(segment))
        return self.groups[segment]

    def merge(self, other: "PairSums") -> "PairSums":
        """``other``'s sums added into these (exact); returns self."""
        for segment, sums in other.groups.items():
            self._sums(segment).merge(sums)
        self.n_queries += other.n_queries
        self.n_shared += other.n_shared
        self.n_human_only += other.n_human_only
        if other.example is not None and (self.example is None or other.example < self.example):
            self.example = other.example
        return self


@dataclass
class Stats:
    """Mergeable statistics of a comparison (see the module docstring)."""
    n_sys: int
    n_meas: int
    n_buckets: int
    keep: int
    segments: list = field(default_factory=list)    # group g's segment value (None: none)
    seg_type: Any = None
    limbs: np.ndarray | None = None      # (G, B, Q, L) bucket sums
    counts: np.ndarray | None = None     # (G, B)
    squares: np.ndarray | None = None    # (G, P*M, L)
    wtl: np.ndarray | None = None        # (G, P*M, 3)
    n_queries: int = 0
    n_left_out: int = 0
    kept: list | None = field(default_factory=list)  # [(ids, values, segments)], None: too many
    since_normal: int = 0
    ppi: PairSums | None = None          # with human judgments: the prediction-powered sums

    @classmethod
    def empty(cls, plan: Plan) -> "Stats":
        s = cls(len(plan.systems), len(plan.measures), plan.n_buckets, plan.keep)
        s._grow(0)
        if plan.human:
            s.ppi = PairSums(plan)
        return s

    @property
    def n_q(self) -> int:
        return (2 * self.n_sys - 1) * self.n_meas

    @property
    def n_pm(self) -> int:
        return (self.n_sys - 1) * self.n_meas

    def _grow(self, n_new: int) -> None:
        g0 = 0 if self.limbs is None else self.limbs.shape[0]
        g = g0 + n_new
        L = K.FIX_LIMBS

        def grown(old, shape, dtype=np.int64):
            new = np.zeros((g,) + shape, dtype)
            if old is not None and g0:
                new[:g0] = old
            return new
        self.limbs = grown(self.limbs, (self.n_buckets, self.n_q, L))
        self.counts = grown(self.counts, (self.n_buckets,))
        self.squares = grown(self.squares, (self.n_pm, L))
        self.wtl = grown(self.wtl, (self.n_pm, 3))

    def _groups(self, seg: pa.Array | None, n: int) -> np.ndarray:
        """Group index of each query (new segments appended)."""
        if seg is None:
            if not self.segments:
                self.segments.append(None)
                self._grow(1)
            return np.zeros(n, np.int64)
        if self.seg_type is None:
            self.seg_type = seg.type
        elif seg.type != self.seg_type:
            seg = seg.cast(self.seg_type)
        uniq = pc.unique(seg)
        index = {v: i for i, v in enumerate(self.segments)}
        new = [v for v in uniq.to_pylist() if v not in index]
        if new:
            for v in new:
                index[v] = len(self.segments)
                self.segments.append(v)
            self._grow(len(new))
        codes = as_numpy(pc.index_in(seg, value_set=uniq)).astype(np.int64)
        where = np.array([index[v] for v in uniq.to_pylist()], np.int64)
        return where[codes]

    def add(self, rows: Rows, key: np.uint64, base: int) -> None:
        values = rows.values
        n = len(rows)
        seg = None if rows.extra is None else rows.extra.get("segment")
        ok = ~np.isnan(values).any(axis=1)
        ids = rows.ids
        if not ok.all():
            self.n_left_out += int(n - ok.sum())
            mask = from_numpy(ok)
            values, ids = values[ok], ids.filter(mask)
            seg = None if seg is None else seg.filter(mask)
            n = len(ids)
        if self.ppi is not None:
            self.ppi.add(ids, values, seg, rows.human if isinstance(rows, PairedScored) else None)
        if not n:
            return
        values = np.ascontiguousarray(values, np.float64)
        group = self._groups(seg, n)
        ids = plain_ids(ids)
        if self.since_normal + n >= 1 << 30:
            self.normalize()
        bad = K.bucket_sums(values, group, id_hash(ids), key, np.int64(self.n_buckets),
                            np.int64(self.n_sys), np.int64(base), self.limbs, self.counts,
                            self.squares, self.wtl)
        if bad >= 0:
            raise ValueError(f"query {ids[int(bad)].as_py()!r} has a value (or a squared "
                             f"difference) of 2**90 or more, beyond what the comparison's "
                             f"sums hold; compare measures of ordinary size (e.g. not sums "
                             f"of counts)")
        self.since_normal += n
        self.n_queries += n
        if self.kept is not None:
            if self.n_queries > self.keep:
                self.kept = None
            else:
                self.kept.append((ids, values, seg))

    def normalize(self) -> None:
        L = K.FIX_LIMBS
        K.fix_normalize(self.limbs.reshape(-1, L))
        K.fix_normalize(self.squares.reshape(-1, L))
        self.since_normal = 0

    def merge(self, other: "Stats") -> "Stats":
        """``other`` added into these statistics (exact); returns self."""
        if other.segments:
            if other.segments == [None]:
                where = np.zeros(1, np.int64)
                if not self.segments:
                    self.segments.append(None)
                    self._grow(1)
            else:
                arr = pa.array(other.segments, other.seg_type)
                where = self._groups(arr, len(arr))
            self.limbs[where] += other.limbs
            self.counts[where] += other.counts
            self.squares[where] += other.squares
            self.wtl[where] += other.wtl
            self.normalize()
        if other.ppi is not None:
            self.ppi = other.ppi if self.ppi is None else self.ppi.merge(other.ppi)
        self.n_left_out += other.n_left_out
        self.n_queries += other.n_queries
        if self.kept is None or other.kept is None or self.n_queries > self.keep:
            self.kept = None
        else:
            self.kept += other.kept
        return self


class _StatsWriter:
    """What :func:`fastndcg.partition.score_partition` writes to: each chunk's rows
    added into :class:`Stats`; their Totals returned (the per-system counts)."""

    def __init__(self, plan: Plan, names: list[str]) -> None:
        self.names = names
        self.plan = plan
        self.key = bucket_key(plan.seed)
        self.stats = Stats.empty(plan)

    def add(self, rows: Rows) -> Totals:
        total = Totals.of_rows(self.names, rows)
        self.stats.add(rows, self.key, self.plan.base)
        return total


def paired_partition(batches: Iterator[pa.RecordBatch], scorer: PairedScorer, *,
                     edges: bool = False, progress=None, on_ids=None, row0: int = 0
                     ) -> tuple[PartitionResult, Stats]:
    """Score a partition for a comparison: :func:`~fastndcg.partition.score_partition`
    with the paired scorer, its per-query values kept as :class:`Stats`."""
    writer = _StatsWriter(scorer.plan, scorer.opts.names)
    result = score_partition(batches, scorer, writer, edges=edges, progress=progress,
                             on_ids=on_ids, row0=row0)
    writer.stats.normalize()
    return result, writer.stats


def score_tables(tables: list[pa.Table], scorer: PairedScorer) -> tuple[Stats, Totals]:
    """Whole queries given as tables (stitched edges), scored into Stats."""
    writer = _StatsWriter(scorer.plan, scorer.opts.names)
    total = Totals.empty(scorer.opts.names)
    for t in tables:
        total = total.merge(writer.add(scorer.score_chunk(regroup(t, scorer.opts.query))))
    writer.stats.normalize()
    return writer.stats, total


def merge_pieces(results: list, scorer: PairedScorer) -> tuple[Stats, Totals, bool, list]:
    """The pieces' ``(PartitionResult, Stats)`` in log order, their edge queries
    stitched and scored here: (merged Stats, merged Totals, whether the run ids
    increase across the whole log, so no query can be scattered, and per piece
    whether its head continues the piece before)."""
    edges = Edges(scorer.opts.query)
    joined = [edges.add(i, res.head, res.tail) for i, (res, _) in enumerate(results)]
    stats = Stats.empty(scorer.plan)
    totals = Totals.empty(scorer.opts.names)
    n_rows = 0
    for res, s in results:
        stats.merge(s)
        totals = totals.merge(res.totals)
        n_rows += res.n_rows
    for tables in edges.finish(len(results)).values():
        s, t = score_tables(tables, scorer)
        stats.merge(s)
        totals = totals.merge(t)
    totals.n_rows = n_rows
    return stats, totals, in_order(results), joined
