"""A log's comparison streamed: every system scored in one pass, a partition at a time.

The internal API of the engines that compare a log (one machine, and
:mod:`fastndcg.dask` and :mod:`fastndcg.spark` in their tasks):

1. :func:`~fastndcg._compare.arguments.settings` checks the arguments;
2. :func:`prepare` gives each system's evaluation options, the columns read and
   the :class:`~fastndcg._compare.paired.Plan` of the partitions, and
   :func:`paired_scorer` the scorer (with the judgments read, when the log's
   documents are judged by ``qrels``, and ``human_qrels``);
3. each partition is scored by the :class:`~fastndcg._compare.paired.PairedScorer`
   through :func:`~fastndcg._compare.paired.paired_partition`, and the pieces merge
   exactly (:func:`~fastndcg._compare.paired.merge_pieces`);
4. :func:`system_reports` gives each system's Report, and :func:`result` the
   :class:`~fastndcg.Comparison` of the merged statistics (with human
   judgments, its prediction-powered columns from the merged sums).

:func:`streamed` runs the steps on one machine.
"""

from __future__ import annotations

import pyarrow as pa

import time

from .. import io
from .._progress import Progress
from .._evaluate import check_nonempty, check_options, load_judgments, repeated_ids
from ..partition import Options, read_as
from ..qrels import load_qrels
from ..report import Report
from ..totals import Totals
from . import arguments  # (SCALE_QUERIES read when used: tests lower it)
from .arguments import EVAL_DEFAULTS, Settings
from .buckets import compare_buckets
from .comparison import Comparison
from .paired import PairedScorer, Plan, Stats, paired_partition
from .ppi import with_sums
from .queries import compare_queries
from .values import kept_values, segment_mapping

__all__ = ["prepare", "paired_scorer", "system_reports", "result", "streamed", "check_log",
           "refuse_reader"]


def prepare(source, st: Settings) -> tuple[list, dict, Plan]:
    """A log's comparison, to stream (one machine, Dask, Spark): each system's
    evaluation options, the columns read (name -> role) and the partitions' plan."""
    opts_list, roles = [], {}
    for item in st.items:
        o, r = check_options(qrels=st.qrels, score=item,
                             **{n: st.options.get(n, d) for n, d in EVAL_DEFAULTS.items()
                                if n != "qrels"})
        opts_list.append(read_as(o, source))
        roles.update(r)
    for item in st.items:
        roles[item] = "system"
    column = mapping = None
    if isinstance(st.segment, str):
        if st.segment in roles:
            raise ValueError(f"segment={st.segment!r} is also the {roles[st.segment]} "
                             f"column; name a column of segment values")
        roles[st.segment] = "segment"
        column = st.segment
    elif st.segment is not None:
        mapping = segment_mapping(st.segment, None)
    keep = arguments.SCALE_QUERIES if st.method == "auto" else (0 if st.method == "buckets" else 2 ** 62)
    plan = Plan(list(st.names), st.base, list(opts_list[0].names), st.n_buckets, st.seed, keep,
                column, mapping, st.human_qrels is not None)
    return opts_list, roles, plan


def paired_scorer(opts_list: list[Options], plan: Plan, st: Settings) -> PairedScorer:
    """The scorer of every partition, with the judgments of the log's documents
    (``qrels``) and the human judgments of a sample (``human_qrels``) read once."""
    opts = opts_list[0]
    judged = load_judgments(st.qrels, opts)[None]
    human = None
    if st.human_qrels is not None:
        human = load_qrels(st.human_qrels, opts.query, opts.doc, opts.label, opts.gain,
                           opts.negative_labels, opts.preset, name="human_qrels")
    return PairedScorer(opts_list, plan, judged, human)


def system_reports(totals: Totals, plan: Plan, describe: str, inputs=()) -> dict:
    """Each system's Report (counts and means) from a paired run's Totals."""
    M = len(plan.measures)
    out = {}
    for s, name in enumerate(plan.systems):
        cols = slice(s * M, (s + 1) * M)
        t = Totals(list(plan.measures), totals.sums[cols], totals.counts[cols],
                   totals.n_queries, totals.n_rows, totals.n_zero_idcg,
                   sums_exp=None if totals.sums_exp is None else totals.sums_exp[cols])
        out[name] = Report(None, t, source=describe, inputs=inputs)
    return out


def result(st: Settings, stats: Stats, reports: dict, started: float, inputs: tuple,
           progress: bool = False) -> Comparison:
    """The Comparison of merged statistics: query-level when they kept every value,
    else from the buckets."""
    measures = list(next(iter(reports.values())).totals.names)
    if st.qrels is not None and not stats.n_queries + stats.n_left_out:
        raise ValueError(f"none of the queries of {next(iter(reports.values())).source} has a "
                         f"judgment in the qrels: do the log's and the qrels' query ids match "
                         f"(same spelling, same column)?")
    if stats.kept is not None:
        c = compare_queries(kept_values(stats, measures, reports), st, started, inputs,
                            progress)
    else:
        c = compare_buckets(st, stats, reports, measures, started, inputs, progress)
    if stats.ppi is None:
        return c
    c = with_sums(c, stats.ppi, st)
    c.seconds = time.perf_counter() - started
    return c


def streamed(source, st: Settings, progress: bool):
    """One pass over the log scoring every system: (Stats, reports), or None when a
    query's rows are not adjacent (the streamed sums would split it)."""
    opts_list, roles, plan = prepare(source, st)
    src = io.open_source(source, roles, batch_rows=st.options.get("batch_rows", 1 << 20))
    scorer = paired_scorer(opts_list, plan, st)
    bar = Progress(src.num_rows, enabled=bool(progress))
    try:
        result, stats = paired_partition(src.batches(prefetch=True), scorer, progress=bar)
    finally:
        bar.close()
    if not result.sorted:
        query = opts_list[0].query
        dup = repeated_ids(src, query, result.n_runs)
        if dup is not None:
            if st.method == "buckets":
                raise ValueError(f"the rows of query {dup[0].as_py()!r} are not adjacent in "
                                 f"{src.describe} ({len(dup):,} queries are split like this); "
                                 f"method='buckets' streams the log once and needs each "
                                 f"query's rows together: sort the log by {query!r} first, or "
                                 f"use method='auto'")
            return None
    check_nonempty(result.n_rows, src.describe, None, None)
    return stats, system_reports(result.totals, plan, src.describe, tuple(src.paths or ()))


def check_log(source, st: Settings) -> None:
    """A log whose score columns are the systems: readable again, every column there."""
    refuse_reader(source)
    io.open_source(source, prepare(source, st)[1])  # every column exists, usable type


def refuse_reader(source) -> None:
    """A comparison may read its log twice: a RecordBatchReader, read once, is refused."""
    if isinstance(source, pa.RecordBatchReader):
        raise TypeError("compare may read the log more than once (to regroup queries whose "
                        "rows are not adjacent), and a RecordBatchReader can be read only "
                        "once; pass a Parquet path, a Table or a Dataset")
