"""Per-query values: every system's value of every measure on each query, lined up.

:func:`read_values` scores each system with :func:`fastndcg.evaluate`, lines the
per-query values up by query id (every system must have scored the same
queries), leaves out queries whose value is NaN and groups them by segment:
the :class:`Values` the query-level methods resample. :func:`kept_values` does
the same with the values a streamed comparison kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import io
from .._arrow import as_numpy, concat_ids, from_numpy
from ..chunks import query_chunks
from .._evaluate import evaluate
from ..parts import value_names
from .arguments import Settings
from .paired import Stats, segment_of

__all__ = ["Values", "read_values", "kept_values", "segment_mapping", "check_sizes",
           "judged_values"]

@dataclass
class Values:
    """Every system's per-query values, lined up by query and grouped by segment."""
    ids: pa.Array                 # query ids, grouped by segment, sorted within
    values: np.ndarray            # (S, M, n)
    measures: list[str]
    offsets: np.ndarray           # group boundaries
    segments: pa.Array | None     # one value per group (None: no segments)
    n_left_out: int
    reports: dict


def _score_all(source, qrels, st: Settings, progress: bool) -> tuple[dict, list]:
    """evaluate() once per system: the Reports and each one's per-query table."""
    reports, tables = {}, []
    for name, item in zip(st.names, st.items):
        if source is not None:  # a log: the systems are its score columns
            rep = evaluate(source, score=item, qrels=qrels, per_query=None, progress=progress,
                           **st.options)
        else:
            rep = evaluate(item, qrels=qrels, per_query=None, progress=progress, **st.options)
        reports[name] = rep
        tables.append(rep.per_query)
    return reports, tables


def _align(tables: list[pa.Table], st: Settings, query: str, measures: list[str]
           ) -> tuple[pa.Array, np.ndarray]:
    """Query ids sorted, and (S, M, n) values in that order; every system must have
    scored the same queries."""
    first = None
    values = None
    for s, t in enumerate(tables):
        ids = t.column(query).combine_chunks()
        order = pc.sort_indices(ids)
        sorted_ids = ids.take(order)
        if first is None:
            first = sorted_ids
            values = np.empty((len(tables), len(measures), len(ids)))
        elif len(sorted_ids) != len(first) or not sorted_ids.equals(first):
            _differ(first, sorted_ids, st.names[0], st.names[s])
        for m, name in enumerate(measures):
            values[s, m] = as_numpy(t.column(name).combine_chunks().take(order))
    return first, values


def _differ(a: pa.Array, b: pa.Array, name_a: str, name_b: str) -> None:
    only_a = a.filter(pc.invert(pc.is_in(a, value_set=b)))
    only_b = b.filter(pc.invert(pc.is_in(b, value_set=a)))
    if len(only_a):
        q, have, lack, n = only_a[0].as_py(), name_a, name_b, len(only_a)
    else:
        q, have, lack, n = only_b[0].as_py(), name_b, name_a, len(only_b)
    raise ValueError(f"query {q!r} is scored for system {have!r} but not for {lack!r} "
                     f"({n:,} such queries); every system must be scored on the same "
                     f"queries: pass complete=True to score judged queries missing from a "
                     f"run as 0, or give every run the same queries")


def _segment_of_queries(source, st: Settings, query: str) -> tuple[pa.Array, pa.Array]:
    """(query ids, segment of each) from a column of the log, each query checked to
    lie in one segment."""
    col = st.segment
    src = io.open_source(source, {query: "query", col: "segment"})
    ids_parts, seg_parts = [], []
    for chunk in query_chunks(src.batches(), query):
        firsts = segment_of(chunk, col)
        ids_parts.append(chunk.ids)
        seg_parts.append(firsts)
    if not ids_parts:
        return pa.array([], pa.int64()), pa.array([], pa.string())
    ids = pa.concat_arrays([p.cast(ids_parts[0].type) for p in ids_parts])
    segs = pa.concat_arrays(seg_parts)
    if len(pc.unique(ids)) < len(ids):  # scattered queries: their fragments must agree
        t = pa.table({"q": ids, "s": segs}).group_by("q").aggregate(
            [("s", "min"), ("s", "max")])
        bad = pc.not_equal(t.column("s_min"), t.column("s_max"))
        if pc.any(bad).as_py():
            i = pc.index(bad, True).as_py()
            _varies(col, t.column("q")[i], t.column("s_min")[i], t.column("s_max")[i])
        ids, segs = t.column("q").combine_chunks(), t.column("s_min").combine_chunks()
    return ids, segs


def _varies(col: str, query, a, b) -> None:
    raise ValueError(f"column {col!r} (segment) varies within query {query.as_py()!r} "
                     f"({a.as_py()!r} and {b.as_py()!r}); a query belongs to one segment: "
                     f"give every row of a query the same value")


def segment_mapping(segment, id_type: pa.DataType | None) -> tuple[pa.Array, pa.Array]:
    """(query ids, segment of each) of a ``segment=`` mapping (a dict, or a table of
    two columns), the ids cast to ``id_type`` (None: as they are)."""
    if isinstance(segment, Mapping):
        keys, vals = list(segment.keys()), list(segment.values())
        try:
            ids, segs = pa.array(keys), pa.array(vals)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as err:
            raise TypeError(f"segment: a dict must map query ids to segment values of one "
                            f"type each ({io.short_error(err)})") from None
    else:
        ids, segs = (segment.column(0).combine_chunks(), segment.column(1).combine_chunks())
    if segs.null_count:
        i = pc.index(pc.is_null(segs), True).as_py()
        raise ValueError(f"segment: query {ids[i].as_py()!r} has a null segment; give every "
                         f"query a segment value")
    if id_type is not None and ids.type != id_type:
        try:
            ids = ids.cast(id_type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise TypeError(f"segment: the query ids of the mapping are {ids.type}, but the "
                            f"scored queries' ids are {id_type}; use ids of that type") from None
    if len(pc.unique(ids)) < len(ids):
        raise ValueError("segment: the mapping names a query twice; give each query one segment")
    return ids, segs


def read_values(source, qrels, st: Settings, progress: bool) -> Values:
    """Every system evaluated (the log's score columns, judged by its labels or by
    ``qrels``, or the runs against ``qrels``) and its per-query values lined up; a
    log is checked by the caller."""
    query = st.options.get("query", "query_id")
    if source is None and isinstance(st.segment, str):
        raise ValueError(f"segment={st.segment!r} names a column of a log, but runs compared "
                         f"against qrels have none; pass a mapping from query id to segment "
                         f"(a dict or a two-column pyarrow Table)")
    reports, tables = _score_all(source, qrels, st, progress)
    measures = value_names(tables[0].schema)  # every measure evaluated, in column order
    ids, values = _align(tables, st, query, measures)
    keep = ~np.isnan(values).any(axis=(0, 1))
    n_left_out = int(len(keep) - keep.sum())
    if n_left_out:
        ids = ids.filter(pa.array(keep))
        values = values[:, :, keep]
    seg_of = None
    if st.segment is not None:
        if isinstance(st.segment, str):
            seg_ids, segs = _segment_of_queries(source, st, query)
        else:
            seg_ids, segs = segment_mapping(st.segment, ids.type)
        pos = pc.index_in(ids, value_set=seg_ids.cast(ids.type))
        if pos.null_count:
            q = ids.filter(pc.is_null(pos))[0].as_py()
            raise ValueError(f"query {q!r} has no segment in the mapping given as segment=; "
                             f"map every scored query ({pos.null_count:,} are missing)")
        seg_of = segs.take(pos)
    return _grouped(ids, values, seg_of, measures, n_left_out, reports)


def judged_values(source, qrels, st: Settings, measures: list, progress: bool
                  ) -> tuple[pa.Array, np.ndarray]:
    """Every system (a score column of the log ``source``, or a run when it is None)
    evaluated against other judgments ``qrels`` (a human sample): the ids of the
    queries they judge, sorted, and the (S, M, n) values of ``measures`` in that
    order (NaN kept: a query without a value is left out by whoever reads them)."""
    _, tables = _score_all(source, qrels, st, progress)
    return _align(tables, st, st.options.get("query", "query_id"), measures)


def kept_values(stats: Stats, measures: list, reports: dict) -> Values:
    """The query-level values a streamed comparison kept (it held few queries)."""
    S, M = stats.n_sys, stats.n_meas
    kept = stats.kept
    if not kept:
        check_sizes(0, np.zeros(0), None, None)
    ids = pa.concat_arrays(concat_ids([k[0] for k in kept]))
    values = np.vstack([k[1] for k in kept])
    order = pc.sort_indices(ids)
    ids = ids.take(order)
    values = values[as_numpy(order)].T.reshape(S, M, len(ids))
    seg_of = None
    if kept[0][2] is not None:
        seg_of = pa.concat_arrays([k[2].cast(kept[0][2].type) for k in kept]).take(order)
    return _grouped(ids, values, seg_of, measures, stats.n_left_out, reports)


def _grouped(ids: pa.Array, values: np.ndarray, seg_of: pa.Array | None, measures: list,
             n_left_out: int, reports: dict) -> Values:
    """Per-query values (S, M, n), in query id order, grouped by segment (stable)."""
    segments = None
    n = len(ids)
    if seg_of is None:
        offsets = np.array([0, n], np.int64)
    else:
        segments = pc.unique(seg_of)
        segments = segments.take(pc.sort_indices(segments))
        code = as_numpy(pc.index_in(seg_of, value_set=segments))
        order = np.argsort(code, kind="stable")
        counts = np.bincount(code, minlength=len(segments))
        offsets = np.zeros(len(segments) + 1, np.int64)
        np.cumsum(counts, out=offsets[1:])
        ids = ids.take(from_numpy(order))
        values = values[:, :, order]
    sizes = np.diff(offsets)
    if n >= 2 ** 32:  # the bootstrap draws row indices from 32-bit halves
        raise ValueError(f"compare holds at most 2**32 - 1 queries in memory, got {n:,}; "
                         f"compare a sample of queries, or segment by a column first")
    check_sizes(n, sizes, segments, lambda g: ids[int(offsets[g])].as_py())
    return Values(ids, np.ascontiguousarray(values), measures, offsets, segments, n_left_out,
                  reports)


def check_sizes(n: int, sizes: np.ndarray, segments, first_query) -> None:
    """A paired test needs 2 queries or more in every group (``sizes``; ``first_query(g)``
    names group g's first query, when known)."""
    if n == 0:
        raise ValueError("no query is left to compare (every query was left out: see the "
                         "evaluation's counts of unjudged queries and zero_idcg)")
    small = np.flatnonzero(sizes < 2)
    if len(small):
        g = int(small[0])
        what = ("the comparison" if segments is None
                else f"segment {segments[g].as_py()!r}")
        one = "" if first_query is None else f" ({first_query(g)!r})"
        raise ValueError(f"{what} has {'no' if sizes[g] == 0 else 'a single'} query{one}; a "
                         f"paired test needs at least 2 queries"
                         + ("" if segments is None else "; merge small segments or drop them"))
