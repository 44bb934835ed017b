"""Comparing rankers: paired significance tests, confidence intervals and segments.

:func:`compare` scores every system with :func:`fastndcg.evaluate` (the one
partition scorer), lines the per-query values up by query id, and turns them
into decisions:

* per system: mean NDCG@k and its percentile bootstrap interval;
* per system against the baseline: the mean difference and its (paired)
  bootstrap interval, an effect size (mean difference / standard deviation of
  the differences, Cohen's d_z), the two-sided p-values of a paired randomization
  (sign-flip) test, a paired t-test and a Wilcoxon signed-rank test, the same
  p-values corrected for multiple comparisons across every test reported (Holm by
  default), and win / tie / loss counts;
* with ``segment``, all of it for each value of a column (market, device, ...).

Resampling runs in Numba (:mod:`fastndcg._kernels.resample`), in parallel
across resamples, each resample drawing from its own counter-based stream: the
same seed gives the same numbers whatever the thread count. The t and Wilcoxon
p-values come from :mod:`fastndcg._stats` and equal scipy.stats' ``ttest_rel``
and ``wilcoxon`` (scipy is not needed at run time).

Decisions written down here (where there was a choice):

* The statistic of the randomization test is the mean difference; its p-value is
  ``(1 + #{|mean of flipped| >= |observed|}) / (1 + n_resamples)`` (a valid
  p-value, never 0), or exact over all ``2**n`` sign patterns when
  ``2**n <= n_resamples``, as ``scipy.stats.permutation_test`` does.
* When every difference is exactly 0 (identical rankings), all three p-values
  are 1 (scipy's t and Wilcoxon give NaN: no evidence of a difference either
  way) and the effect size is 0. Constant non-zero differences give an infinite
  effect size and a t-test p-value of 0, as scipy does.
* A query is a win when system - baseline > 0, a tie when it is exactly 0 (the
  Wilcoxon test drops the same queries as zero differences).
* Queries whose NDCG is NaN (``zero_idcg="nan"``: no relevant item) are left out
  of every test and counted in ``n_left_out``.
* With ``segment``, the tables hold one block per segment value and no row for
  all queries together (call again without ``segment`` for it); the correction is
  applied across every test reported: segments x systems x cutoffs.
* The default ``seed`` is 0, so a run can be repeated; change it to see the
  Monte Carlo error of the intervals and randomization p-values.

**Large comparisons** (``method="auto"`` above ``SCALE_QUERIES`` = 1,000,000
queries, all segments together; or ``method="buckets"``). A log whose score columns
are the systems is read once, every system scored on each chunk of whole queries
(:mod:`fastndcg.paired`), and each partition keeps mergeable sums instead of the
per-query values, so memory does not grow with the number of queries and
:mod:`fastndcg.dask` and :mod:`fastndcg.spark` give the very same Comparison. Each
query goes to one of ``buckets`` (default 1,000) buckets by a seeded hash of its
id; the sums are fixed-point integers, so they are exact and the same bits for any
partitioning, batch size and thread count. Up to 1,000,000 queries the per-query
values are kept as well and the query-level methods above run on them, giving the
same answers as before. Above it:

* **Intervals**: the bootstrap resamples buckets instead of queries (each resample
  draws ``buckets`` buckets with replacement; a mean is the drawn buckets' sum
  over their queries). Queries are assigned to buckets independently of their
  values, so bucket sums are independent and identically distributed, and
  resampling them estimates the sampling distribution of the ratio of means as
  resampling queries does -- the "bucket" (or block) method of large online
  experimentation platforms (Deng, Lu & Litz, WSDM 2017, "Trustworthy analysis of
  online A/B tests"; the Poisson bootstrap of Chamandy et al., Google, 2012, is
  the per-unit alternative, whose cost grows as queries x resamples). Its error
  in the interval width is about ``sqrt(1 / (2 * buckets))`` relative (2% for
  1,000), next to the Monte Carlo error of the resampling itself.
* **Randomization test**: the signs of whole buckets' difference sums are flipped.
  Under the null hypothesis each query's difference is symmetric about 0, so each
  bucket sum is too, and the test keeps its level exactly, as the query-level
  test does.
* **t-test and effect size**: from the exact sums of the differences and of their
  squares (the variance formed exactly, rounded once); they agree with
  ``scipy.stats.ttest_rel`` on the same values.
* **Wilcoxon** ranks every query's |difference| among all the others: it needs all
  the values at once, so it is not run above the size (the text report says so);
  asked for by name there, it is an error that says what to use instead.
* ``per_query`` is None: the per-query values were not kept.

Runs compared against qrels (separate files lined up by query id) are held in
memory query by query whatever their size; above 1,000,000 queries their tests
use the bucket methods too, so a comparison's method depends only on its size.
"""

from __future__ import annotations

import math
import numbers
import os
import sys
import time
import dataclasses
import inspect
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import measures as M
from . import io
from . import _core as C
from . import _validate as V
from . import _kernels as K
from . import _stats
from fractions import Fraction

from ._arrow import as_numpy, concat_ids, from_numpy
from ._progress import Progress
from .chunks import query_chunks
from .evaluate import check_nonempty, check_options, evaluate, repeated_ids
from .paired import PairedScorer, Plan, Stats, bucket_key, paired_partition, segment_of
from .partition import read_as
from .parts import Rows, value_names
from .report import Report
from .totals import Totals
from .presets import DEFAULT_K
from .tables import render

__all__ = ["compare", "Comparison", "check_arguments", "TESTS", "CORRECTIONS", "METHODS",
           "SCALE_QUERIES"]

TESTS = ("randomization", "t", "wilcoxon")
METHODS = ("auto", "queries", "buckets")
SCALE_QUERIES = 1_000_000  # method="auto": query-level methods up to this many queries
DEFAULT_BUCKETS = 1000
WILCOXON_AT_SCALE = (
    "the Wilcoxon signed-rank test ranks every query's |difference| against all the "
    "others, which needs all the values at once, and {why}; compare with the "
    "randomization and t tests (the default at this size), compare a sample of queries, "
    "or pass method='queries' to hold every value in memory")
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
_CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg",
                     "none": "not"}
# evaluate's options that compare sets itself, or that have no meaning for a comparison
_NOT_OPTIONS = {
    "score": "systems= names the score columns",
    "per_query": "the per-query values are kept in Comparison.per_query",
    "explain": "explain is for evaluate; compare keeps the per-query values only",
    "weight": "the tests weigh every query once; weighted comparisons are not supported",
}
# The engines of a comparison and the arguments only one of them takes (name -> (the
# function that takes it, what it is)); every engine also takes compare's own keyword
# arguments and the evaluation options it passes on (_EVAL_DEFAULTS).
ENGINES = ("fastndcg.compare", "fastndcg.dask.compare", "fastndcg.spark.compare")
ENGINE_ARGUMENTS = {
    "client": ("fastndcg.dask.compare", "the distributed.Client of the Dask cluster to run on"),
    "workers": ("fastndcg.dask.compare", "the worker processes of a local Dask cluster it "
                                         "starts"),
    "partition_rows": ("fastndcg.dask.compare", "the rows of a Dask partition"),
    "spark": ("fastndcg.spark.compare", "the SparkSession to run in"),
    "order": ("fastndcg.spark.compare", "a column whose ascending order is each query's input "
                                        "order, which Spark's shuffle does not keep; on one "
                                        "machine and on Dask rows keep their order in the log"),
    "partitions": ("fastndcg.spark.compare", "the Spark tasks the log is cut into"),
}
_EXACT_MAX = 20  # exact randomization tests enumerate at most 2**20 sign patterns
_RESAMPLE_BYTES = 4 << 30  # the resampled means kept for the intervals and p-values


# --------------------------------------------------------------------------- validation

def _check_keywords(where: str, given) -> None:
    """The keywords that ``where`` (one of ENGINES) caught in its ``**kwargs`` are
    evaluation options it passes on; any other is refused by name (the one check of
    every engine), one that belongs to another engine with where it belongs."""
    if where not in ENGINES:
        raise ValueError(f"where must be one of {', '.join(map(repr, ENGINES))}, got "
                         f"{V.shown(where)}")
    # what the suggestions are drawn from: every keyword ``where`` takes
    takes = [p.name for p in inspect.signature(compare).parameters.values()
             if p.kind is p.KEYWORD_ONLY]
    takes += [n for n in _EVAL_DEFAULTS if n not in takes]
    takes += [n for n, (owner, _) in ENGINE_ARGUMENTS.items() if owner == where]
    elsewhere = {n: f"it is an argument of {owner}() ({what}); drop it here, or call "
                    f"{owner}() to run there"
                 for n, (owner, what) in ENGINE_ARGUMENTS.items() if owner != where}
    elsewhere.update(_NOT_OPTIONS)
    V.keywords(given, takes, where, elsewhere)


def _whole(value, name: str, lo: int, hi: int | None, says: str, fix: str = ""):
    """One of compare's whole-number arguments: an int (NumPy's too; not a bool) in
    [lo, hi]; ``says`` words the range."""
    if (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral)
            or value < lo or (hi is not None and value > hi)):
        raise ValueError(f"{name} must be a whole number {says}, got {V.shown(value)}"
                         + (f"; {fix}" if fix else ""))
    return int(value)


def _systems(systems, qrels) -> tuple[list[str], list]:
    """(names, what to evaluate for each): score columns in list mode, runs with qrels."""
    if isinstance(systems, (str, os.PathLike)):
        raise TypeError(f"systems must list at least two systems (score columns, or runs with "
                        f"qrels=...), got the single {type(systems).__name__} {systems!r}")
    if isinstance(systems, Mapping):
        names, items = list(systems.keys()), list(systems.values())
        for n in names:
            if not isinstance(n, str) or not n:
                raise TypeError(f"systems: the names of a dict must be non-empty strings, got "
                                f"{n!r}")
    elif isinstance(systems, Sequence):
        items = list(systems)
        if qrels is None:
            names = items
        else:
            names = [os.path.basename(os.fspath(x)) if isinstance(x, (str, os.PathLike))
                     else None for x in items]
            if None in names:
                raise TypeError("systems: runs given as tables need names; pass a dict "
                                "{name: run}")
    else:
        raise TypeError(f"systems must be a list of score columns, or a dict {{name: column or "
                        f"run}}; got {type(systems).__name__}")
    if len(items) < 2:
        raise ValueError(f"compare needs at least two systems, got {len(items)}: {names!r}; "
                         f"add the baseline and the system(s) to compare with it")
    if qrels is None:
        for col in items:
            if not isinstance(col, str):
                raise TypeError(f"systems: without qrels a system is a score column of the log "
                                f"(a str), got {col!r}; to compare runs, pass qrels=...")
    for n in names:
        if names.count(n) > 1:
            raise ValueError(f"systems: {n!r} is named twice; give each system once (runs "
                             f"with the same file name need a dict of distinct names)")
    return [str(n) for n in names], items


@dataclass
class _Settings:
    names: list[str]
    items: list
    base: int
    confidence: float
    n_resamples: int
    seed: int
    tests: tuple
    correction: str
    segment: Any
    options: dict
    method: str = "auto"
    n_buckets: int = 1000
    tests_named: bool = False  # tests= given (else: every test the method has)


def _settings(systems, baseline, qrels, segment, k, confidence, n_resamples, seed, tests,
              correction, options, method="auto", buckets=DEFAULT_BUCKETS,
              where: str = "fastndcg.compare") -> _Settings:
    _check_keywords(where, options)  # first, as Python refuses an unknown keyword
    names, items = _systems(systems, qrels)
    if baseline is None:
        base = 0
    elif baseline in names:
        base = names.index(baseline)
    else:
        raise ValueError(f"baseline={baseline!r} is not among the systems "
                         f"{', '.join(map(repr, names))}; name one of them (by default the "
                         f"first is the baseline)")
    if (not isinstance(confidence, numbers.Real) or isinstance(confidence, (bool, np.bool_))
            or not 0 < confidence < 1):  # (NumPy's floats too)
        raise ValueError(f"confidence must be a number between 0 and 1 (exclusive), e.g. 0.95; "
                         f"got {V.shown(confidence)}")
    _whole(n_resamples, "n_resamples", 1, None, ">= 1", "the default 10000 suits most "
           "comparisons (fewer run faster, with noisier intervals and p-values)")
    _whole(seed, "seed", 0, 2 ** 64 - 1, "in [0, 2**64)", "pass an int such as seed=0 (the "
           "default)")
    C.check_choice("method", method, METHODS)
    _whole(buckets, "buckets", 2, 1 << 20, f"from 2 to 1048576 (hashed buckets of queries "
           f"that large comparisons resample; default {DEFAULT_BUCKETS:,})")
    explicit = tests is not None
    if tests is None:
        tests = TESTS
    if isinstance(tests, str):
        tests = tuple(t.strip() for t in tests.split(",") if t.strip())
    if not isinstance(tests, (list, tuple)) or not tests:
        raise ValueError(f"tests must name one or more of {', '.join(map(repr, TESTS))}, got "
                         f"{tests!r}")
    for t in tests:
        C.check_choice("tests", t, TESTS)
    if method == "buckets" and explicit and "wilcoxon" in tests:
        raise ValueError(WILCOXON_AT_SCALE.format(why="method='buckets' keeps no per-query "
                                                      "values"))
    if qrels is not None and method == "buckets":
        raise ValueError("method='buckets' streams a log whose score columns are the systems; "
                         "runs compared against qrels are lined up query by query in memory: "
                         "use method='auto' (buckets above "
                         f"{SCALE_QUERIES:,} queries) or 'queries'")
    C.check_choice("correction", correction, CORRECTIONS)
    if segment is not None and not isinstance(segment, (str, Mapping, pa.Table)):
        raise TypeError(f"segment must be a column name, or a mapping from query id to "
                        f"segment (a dict, or a pyarrow Table of two columns: query id and "
                        f"segment); got {type(segment).__name__}")
    if isinstance(segment, pa.Table) and segment.num_columns != 2:
        raise ValueError(f"segment as a table needs exactly two columns (query id, segment), "
                         f"got {segment.column_names}")
    if options.get("measure") is not None:  # measures named as trec_eval / ir_measures do
        if k != 10:
            raise ValueError(f"give the measures once: k={k!r} (NDCG cutoffs) or measure="
                             f"{options['measure']!r}, not both")
        k = DEFAULT_K  # evaluate's "k not given"
    options = dict(options, k=k)
    # every evaluation option is checked before anything is read
    opts, _ = check_options(qrels=qrels, score=items[0] if qrels is None else "score",
                            **{n: options.get(n, d) for n, d in _EVAL_DEFAULTS.items()})
    for m in opts.others:  # the tests compare arithmetic means of per-query values
        if M.REGISTRY[m.kind].summary == "gm":
            raise ValueError(f"compare tests differences of arithmetic means, but "
                             f"{m.column(opts.rel)!r} is averaged as a geometric mean; compare "
                             f"its per-query measure instead ('map' for gm_map, 'bpref' for "
                             f"gm_bpref)")
    # the memory of one group is known now: refuse before reading the log
    _check_memory(1, int(n_resamples), len(names), len(opts.names))
    return _Settings(names, items, base, float(confidence), int(n_resamples), int(seed),
                     tuple(t for t in TESTS if t in tests), correction, segment, options,
                     method, int(buckets), explicit)


def settings(systems, where: str = "fastndcg.compare", /, *, baseline=None, qrels=None,
             segment=None, k=10, confidence=0.95, n_resamples=10_000, seed=0, tests=None,
             correction="holm", method="auto", buckets=DEFAULT_BUCKETS,
             **options) -> _Settings:
    """:func:`compare`'s arguments, validated without reading anything, as ``where``
    (one of ENGINES: the engine's own arguments are not among them) takes them."""
    return _settings(systems, baseline, qrels, segment, k, confidence, n_resamples, seed,
                     tests, correction, options, method, buckets, where)


def check_arguments(systems, **kwargs) -> None:
    """Validate :func:`compare`'s arguments without reading anything (the command
    line calls it first, to tell usage errors from bad data)."""
    settings(systems, **kwargs)


def check_log_only(kwargs: dict, where: str) -> None:
    """A distributed comparison compares the score columns of a log."""
    if kwargs.get("qrels") is not None:
        raise ValueError(f"{where} compares the score columns of a log; compare runs against "
                         f"qrels on one machine with fastndcg.compare")


_EVAL_DEFAULTS = dict(query="query_id", doc="doc_id", label="label", k=10, gain=None,
                      ties=None, log_base=None, zero_idcg=None, nan_scores=None,
                      negative_labels=None, complete=False, batch_rows=1 << 20,
                      score_precision=None, preset=None, measure=None, rel=None)


# --------------------------------------------------------------------------- per-query values

@dataclass
class _Values:
    ids: pa.Array                 # query ids, grouped by segment, sorted within
    values: np.ndarray            # (S, M, n)
    measures: list[str]
    offsets: np.ndarray           # group boundaries
    segments: pa.Array | None     # one value per group (None: no segments)
    n_left_out: int
    reports: dict


def _score_all(source, qrels, st: _Settings, progress: bool) -> tuple[dict, list]:
    """evaluate() once per system: the Reports and each one's per-query table."""
    reports, tables = {}, []
    for name, item in zip(st.names, st.items):
        if qrels is None:
            rep = evaluate(source, score=item, per_query=None, progress=progress, **st.options)
        else:
            rep = evaluate(item, qrels=qrels, per_query=None, progress=progress, **st.options)
        reports[name] = rep
        tables.append(rep.per_query)
    return reports, tables


def _align(tables: list[pa.Table], st: _Settings, query: str, measures: list[str]
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


def _segment_of_queries(source, st: _Settings, query: str) -> tuple[pa.Array, pa.Array]:
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


def _segment_mapping(segment, id_type: pa.DataType) -> tuple[pa.Array, pa.Array]:
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


def _check_log(source, st: _Settings) -> None:
    """A log whose score columns are the systems: readable again, every column there."""
    _refuse_reader(source)
    io.open_source(source, prepare(source, st)[1])  # every column exists, usable type


def _refuse_reader(source) -> None:
    if isinstance(source, pa.RecordBatchReader):
        raise TypeError("compare may read the log more than once (to regroup queries whose "
                        "rows are not adjacent), and a RecordBatchReader can be read only "
                        "once; pass a Parquet path, a Table or a Dataset")


def _values(source, qrels, st: _Settings, progress: bool) -> _Values:
    query = st.options.get("query", "query_id")
    if qrels is None:
        _check_log(source, st)
    elif source is not None:
        raise TypeError("with qrels=..., the systems are the runs (systems={name: run}); "
                        "pass None as the source")
    elif isinstance(st.segment, str):
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
            seg_ids, segs = _segment_mapping(st.segment, ids.type)
        pos = pc.index_in(ids, value_set=seg_ids.cast(ids.type))
        if pos.null_count:
            q = ids.filter(pc.is_null(pos))[0].as_py()
            raise ValueError(f"query {q!r} has no segment in the mapping given as segment=; "
                             f"map every scored query ({pos.null_count:,} are missing)")
        seg_of = segs.take(pos)
    return _grouped(ids, values, seg_of, measures, n_left_out, reports)


def _grouped(ids: pa.Array, values: np.ndarray, seg_of: pa.Array | None, measures: list,
             n_left_out: int, reports: dict) -> _Values:
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
    _check_sizes(n, sizes, segments, lambda g: ids[int(offsets[g])].as_py())
    return _Values(ids, np.ascontiguousarray(values), measures, offsets, segments, n_left_out,
                   reports)


def _check_sizes(n: int, sizes: np.ndarray, segments, first_query) -> None:
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


# --------------------------------------------------------------------------- statistics

def _randomization(diffs: np.ndarray, offsets: np.ndarray, n_resamples: int, seed: int
                   ) -> np.ndarray:
    """Two-sided p-values (G, P) of the sign-flip test of each pair's mean difference."""
    n_groups, n_pairs = len(offsets) - 1, diffs.shape[0]
    sizes = np.diff(offsets)
    p = np.empty((n_groups, n_pairs))
    mc = {g for g in range(n_groups)
          if not (sizes[g] <= _EXACT_MAX and 2 ** int(sizes[g]) <= n_resamples)}
    null = None
    if mc:
        null = K.signflip_means(diffs, offsets, n_resamples, np.uint64(seed), K.sign_table())
    for g in range(n_groups):
        lo, hi = offsets[g], offsets[g + 1]
        for q in range(n_pairs):
            d = diffs[q, lo:hi]
            obs = abs(float(np.mean(d)))
            # sums in another order round differently: equal statistics must count
            tol = 1e-9 * float(np.mean(np.abs(d)))
            if g in mc:
                hits = int(np.count_nonzero(np.abs(null[g, :, q]) >= obs - tol))
                p[g, q] = (hits + 1) / (n_resamples + 1)
            else:
                every = K.signflip_exact(np.ascontiguousarray(d))
                p[g, q] = np.count_nonzero(np.abs(every) >= obs - tol) / len(every)
    return p


def _check_memory(n_groups: int, n_resamples: int, n_systems: int, n_cutoffs: int) -> None:
    """The resampled means kept (bootstrap, then the null of each pair) must fit."""
    need = 8 * n_groups * n_resamples * (2 * n_systems - 1) * n_cutoffs
    if need > _RESAMPLE_BYTES:
        raise ValueError(f"n_resamples={n_resamples:,} would hold {need / 2**30:.1f} GiB of "
                         f"resampled means ({n_groups} segment(s) x {n_systems} systems x "
                         f"{n_cutoffs} cutoff(s)); use fewer resamples, segments or cutoffs")


def _quantiles(x: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval along the last axis (linear interpolation, as
    scipy.stats.bootstrap's percentile method)."""
    a = (1 - confidence) / 2
    lo, hi = np.quantile(x, [a, 1 - a], axis=-1)
    return lo, hi


def _tests(v: _Values, st: _Settings) -> tuple[pa.Table, pa.Table]:
    S, M, n = v.values.shape
    G = len(v.offsets) - 1
    _check_memory(G, st.n_resamples, S, M)
    flat = v.values.reshape(S * M, n)
    boot = K.bootstrap_means(flat, v.offsets, st.n_resamples, np.uint64(st.seed))  # (G, R, S*M)
    boot = boot.reshape(G, st.n_resamples, S, M)
    others = [s for s in range(S) if s != st.base]
    diffs = np.ascontiguousarray(
        (v.values[others] - v.values[st.base][None]).reshape(len(others) * M, n))
    p_rand = (_randomization(diffs, v.offsets, st.n_resamples, st.seed)
              if "randomization" in st.tests else None)

    seg_type = v.segments.type if v.segments is not None else pa.string()
    sys_rows: dict[str, list] = {k: [] for k in ("system", "segment", "measure", "n_queries",
                                                 "mean", "ci_low", "ci_high")}
    test_rows: dict[str, list] = {k: [] for k in _TEST_COLUMNS}
    for g in range(G):
        lo, hi = int(v.offsets[g]), int(v.offsets[g + 1])
        seg = None if v.segments is None else v.segments[g].as_py()
        for m, measure in enumerate(v.measures):
            for s in range(S):
                ci_lo, ci_hi = _quantiles(boot[g, :, s, m], st.confidence)
                for k, val in (("system", st.names[s]), ("segment", seg), ("measure", measure),
                               ("n_queries", hi - lo), ("mean", float(np.mean(v.values[s, m, lo:hi]))),
                               ("ci_low", float(ci_lo)), ("ci_high", float(ci_hi))):
                    sys_rows[k].append(val)
            for j, s in enumerate(others):
                d = diffs[j * M + m, lo:hi]
                row = _pair(d, boot[g, :, s, m] - boot[g, :, st.base, m], st)
                row.update(system=st.names[s], baseline=st.names[st.base], segment=seg,
                           measure=measure, n_queries=hi - lo,
                           p_randomization=None if p_rand is None else float(p_rand[g, j * M + m]))
                for k in _TEST_COLUMNS:
                    if not k.endswith("_adj"):
                        test_rows[k].append(row.get(k))
    return _tables(sys_rows, test_rows, st.tests, st.correction, seg_type,
                   v.segments is not None)


def _tables(sys_rows: dict, test_rows: dict, tests_run: tuple, correction: str, seg_type,
            segmented: bool) -> tuple[pa.Table, pa.Table]:
    """The systems and tests tables from their rows; each test's p-values corrected."""
    for test, col in (("randomization", "p_randomization"), ("t", "p_t"),
                      ("wilcoxon", "p_wilcoxon")):
        raw = test_rows[col]
        if test in tests_run:
            adj = _stats.adjust(np.array(raw, dtype=np.float64), correction)
            test_rows[col + "_adj"] = [float(x) for x in adj]
        else:
            test_rows[col] = [None] * len(raw)
            test_rows[col + "_adj"] = [None] * len(raw)
    systems = pa.table({
        "system": pa.array(sys_rows["system"], pa.string()),
        **({"segment": pa.array(sys_rows["segment"], seg_type)} if segmented else {}),
        "measure": pa.array(sys_rows["measure"], pa.string()),
        "n_queries": pa.array(sys_rows["n_queries"], pa.int64()),
        "mean": pa.array(sys_rows["mean"], pa.float64()),
        "ci_low": pa.array(sys_rows["ci_low"], pa.float64()),
        "ci_high": pa.array(sys_rows["ci_high"], pa.float64()),
    })
    types = {"system": pa.string(), "baseline": pa.string(), "segment": seg_type,
             "measure": pa.string(), "n_queries": pa.int64(), "wins": pa.int64(),
             "ties": pa.int64(), "losses": pa.int64()}
    tests = pa.table({k: pa.array(test_rows[k], types.get(k, pa.float64()))
                      for k in _TEST_COLUMNS})
    return systems, tests


_TEST_COLUMNS = ("system", "baseline", "segment", "measure", "n_queries", "mean_diff", "ci_low",
                 "ci_high", "effect_size", "p_randomization", "p_t", "p_wilcoxon",
                 "p_randomization_adj", "p_t_adj", "p_wilcoxon_adj", "wins", "ties", "losses")


def _pair(d: np.ndarray, boot_diff: np.ndarray, st: _Settings) -> dict:
    """The paired statistics of one system against the baseline on one group."""
    mean = float(np.mean(d))
    sd = float(np.std(d, ddof=1))
    zero = not np.any(d)
    if sd > 0:
        effect = mean / sd
    else:
        effect = 0.0 if mean == 0 else math.copysign(math.inf, mean)
    lo, hi = _quantiles(boot_diff, st.confidence)
    out = dict(mean_diff=mean, ci_low=float(lo), ci_high=float(hi), effect_size=effect,
               wins=int(np.count_nonzero(d > 0)), ties=int(np.count_nonzero(d == 0)),
               losses=int(np.count_nonzero(d < 0)))
    out["p_t"] = (1.0 if zero else float(_stats.ttest_paired(d)[1])) if "t" in st.tests else None
    out["p_wilcoxon"] = ((1.0 if zero else float(_stats.wilcoxon(d)[1]))
                         if "wilcoxon" in st.tests else None)
    return out


# --------------------------------------------------------------------------- at scale

def prepare(source, st: _Settings) -> tuple[list, dict, Plan]:
    """A log's comparison, to stream (one machine, Dask, Spark): each system's
    evaluation options, the columns read (name -> role) and the partitions' plan."""
    opts_list, roles = [], {}
    for item in st.items:
        o, r = check_options(qrels=None, score=item,
                             **{n: st.options.get(n, d) for n, d in _EVAL_DEFAULTS.items()
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
        mapping = _segment_mapping(st.segment, None)
    keep = SCALE_QUERIES if st.method == "auto" else (0 if st.method == "buckets" else 2 ** 62)
    plan = Plan(list(st.names), st.base, list(opts_list[0].names), st.n_buckets, st.seed, keep,
                column, mapping)
    return opts_list, roles, plan


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


def _streamed(source, st: _Settings, progress: bool):
    """One pass over the log scoring every system: (Stats, reports), or None when a
    query's rows are not adjacent (the streamed sums would split it)."""
    opts_list, roles, plan = prepare(source, st)
    src = io.open_source(source, roles, batch_rows=st.options.get("batch_rows", 1 << 20))
    scorer = PairedScorer(opts_list, plan)
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


def _kept_values(stats: Stats, measures: list, reports: dict) -> _Values:
    """The query-level values a streamed comparison kept (it held few queries)."""
    S, M = stats.n_sys, stats.n_meas
    kept = stats.kept
    if not kept:
        _check_sizes(0, np.zeros(0), None, None)
    ids = pa.concat_arrays(concat_ids([k[0] for k in kept]))
    values = np.vstack([k[1] for k in kept])
    order = pc.sort_indices(ids)
    ids = ids.take(order)
    values = values[as_numpy(order)].T.reshape(S, M, len(ids))
    seg_of = None
    if kept[0][2] is not None:
        seg_of = pa.concat_arrays([k[2].cast(kept[0][2].type) for k in kept]).take(order)
    return _grouped(ids, values, seg_of, measures, stats.n_left_out, reports)


def _stats_of_values(v: _Values, st: _Settings) -> Stats:
    """Bucket statistics of per-query values held in memory (runs against qrels, or a
    log whose queries are scattered, above the query-level size)."""
    S, M, n = v.values.shape
    plan = Plan(list(st.names), st.base, list(v.measures), st.n_buckets, st.seed, 0)
    stats = Stats.empty(plan)
    seg = None
    if v.segments is not None:
        seg = v.segments.take(from_numpy(np.repeat(np.arange(len(v.segments), dtype=np.int64),
                                                   np.diff(v.offsets))))
    rows = Rows(v.ids, np.zeros(n, np.int64), v.values.reshape(S * M, n).T, np.zeros(n, bool),
                None, None if seg is None else {"segment": seg})
    stats.add(rows, bucket_key(st.seed), st.base)
    stats.normalize()
    stats.n_left_out = v.n_left_out
    return stats


def _bucket_tests(stats: Stats, st: _Settings, measures: list) -> tuple[pa.Table, pa.Table]:
    """The systems and tests tables from bucket statistics: bucket bootstrap
    intervals, the sign-flip test over bucket sums, the t-test on exact sums."""
    S, M = stats.n_sys, stats.n_meas
    C = S * M
    segmented = stats.segments != [None]
    if segmented:
        arr = pa.array(stats.segments, stats.seg_type)
        order = as_numpy(pc.sort_indices(arr)).astype(np.int64)
        segments = arr.take(from_numpy(order))
    else:
        order, segments = np.zeros(1, np.int64), None
    counts = stats.counts[order]
    sizes = counts.sum(axis=1)
    _check_sizes(int(sizes.sum()), sizes, segments, None)
    limbs = stats.limbs[order]
    squares = stats.squares[order]
    wtl = stats.wtl[order]
    L = K.FIX_LIMBS
    total = np.ascontiguousarray(limbs.sum(axis=1))  # (G, Q, L): canonical limbs < 2**32
    K.fix_normalize(total.reshape(-1, L))
    scale = Fraction(1, 1 << K.FIX_SHIFT)
    sums = K.fix_to_float(limbs)  # (G, B, Q)
    R = st.n_resamples
    boot = K.bucket_bootstrap(sums, counts.astype(np.float64), R, np.uint64(st.seed))
    dsums = np.ascontiguousarray(sums[:, :, C:])
    null = (K.bucket_signflip(dsums, R, np.uint64(st.seed)) if "randomization" in st.tests
            else None)
    seg_type = segments.type if segments is not None else pa.string()
    sys_rows: dict[str, list] = {k: [] for k in ("system", "segment", "measure", "n_queries",
                                                 "mean", "ci_low", "ci_high")}
    test_rows: dict[str, list] = {k: [] for k in _TEST_COLUMNS}
    others = [s for s in range(S) if s != st.base]
    for g in range(len(order)):
        n = int(sizes[g])
        seg = None if segments is None else segments[g].as_py()
        for m, measure in enumerate(measures):
            for s in range(S):
                mean = float(K.fix_to_int(total[g, s * M + m]) * scale / n)
                lo, hi = _quantiles(boot[g, :, s * M + m], st.confidence)
                for k, val in (("system", st.names[s]), ("segment", seg), ("measure", measure),
                               ("n_queries", n), ("mean", mean), ("ci_low", float(lo)),
                               ("ci_high", float(hi))):
                    sys_rows[k].append(val)
            for j, s in enumerate(others):
                q = j * M + m
                sd_sum = K.fix_to_int(total[g, C + q]) * scale
                sq_sum = K.fix_to_int(squares[g, q]) * scale
                wins, ties, losses = (int(x) for x in wtl[g, q])
                row = _pair_of_sums(n, sd_sum, sq_sum, ties == n, st)
                lo, hi = _quantiles(boot[g, :, C + q], st.confidence)
                row.update(system=st.names[s], baseline=st.names[st.base], segment=seg,
                           measure=measure, n_queries=n, ci_low=float(lo), ci_high=float(hi),
                           wins=wins, ties=ties, losses=losses, p_wilcoxon=None,
                           p_randomization=(None if null is None else _bucket_randomization(
                               dsums[g, :, q], counts[g], null[g, :, q], R)))
                for k in _TEST_COLUMNS:
                    if not k.endswith("_adj"):
                        test_rows[k].append(row.get(k))
    return _tables(sys_rows, test_rows, st.tests, st.correction, seg_type, segmented)


def _pair_of_sums(n: int, d_sum: Fraction, sq_sum: Fraction, zero: bool, st: _Settings) -> dict:
    """Mean difference, effect size and t-test of one pair from exact sums of the
    differences and of their squares (the variance formed exactly, rounded once)."""
    mean = d_sum / n
    var = (sq_sum - d_sum * d_sum / n) / (n - 1)
    var = max(var, Fraction(0))  # squares are rounded per query: never below 0
    sd = math.sqrt(float(var))
    m = float(mean)
    if sd > 0:
        effect = m / sd
        t = m / math.sqrt(float(var / n))
        p_t = min(1.0, 2.0 * _stats.t_sf(abs(t), float(n - 1)))
    else:
        effect = 0.0 if m == 0 else math.copysign(math.inf, m)
        p_t = 1.0 if m == 0 else 0.0
    if zero:
        p_t = 1.0
    return dict(mean_diff=m, effect_size=effect, p_t=p_t if "t" in st.tests else None)


def _bucket_randomization(d: np.ndarray, counts: np.ndarray, null: np.ndarray, R: int) -> float:
    """Two-sided p of the sign-flip test over bucket sums of differences: exact over
    all sign patterns of the non-empty buckets when there are at most 2**R of them."""
    d = d[counts > 0]
    obs = abs(float(np.sum(d)))
    tol = 1e-9 * float(np.sum(np.abs(d)))
    if len(d) <= _EXACT_MAX and 2 ** len(d) <= R:
        every = K.signflip_exact(np.ascontiguousarray(d)) * len(d)
        return np.count_nonzero(np.abs(every) >= obs - tol) / len(every)
    return (int(np.count_nonzero(np.abs(null) >= obs - tol)) + 1) / (R + 1)


# --------------------------------------------------------------------------- the result

@dataclass
class Comparison:
    """What :func:`compare` found.

    Attributes
    ----------
    systems : pyarrow.Table -- per system (and segment): ``system``, ``segment``
        (when segmenting), ``measure`` (``ndcg@K``), ``n_queries``, ``mean``,
        ``ci_low``, ``ci_high`` (percentile bootstrap interval of the mean).
    tests : pyarrow.Table -- per system against the baseline (per segment and
        measure): ``system``, ``baseline``, ``segment`` (null without segments),
        ``measure``, ``n_queries``, ``mean_diff`` (system - baseline), ``ci_low``,
        ``ci_high`` (paired bootstrap interval of the difference), ``effect_size``,
        ``p_randomization``, ``p_t``, ``p_wilcoxon``, the corrected
        ``p_randomization_adj``, ``p_t_adj``, ``p_wilcoxon_adj`` (null for tests not
        run), ``wins``, ``ties``, ``losses``.
    per_query : pyarrow.Table -- the query id, ``segment`` (when segmenting) and one
        column ``"{measure} {system}"`` per system and measure, in the order the
        tests used (grouped by segment, then by query id); None when the comparison
        ran over buckets (it kept no per-query values).
    method : "queries" (query-level resampling, and the Wilcoxon test) or "buckets"
        (the bucket methods, see the module docstring); n_buckets : their number.
    reports : dict -- each system's :class:`fastndcg.Report` (counts of unjudged,
        missing and zero-IDCG queries), per-query tables dropped.
    n_left_out : queries left out because their NDCG is NaN (``zero_idcg="nan"``).
    n_unjudged, n_missing : with qrels, run queries without any judgment (left out,
        as trec_eval does) and judged queries in no run (left out unless
        ``complete=True`` scored them 0), as :class:`fastndcg.Report` counts them.
    confidence, n_resamples, seed, correction, tests_run, baseline : the settings.
    system_names, measures : the systems and the measures compared, in order.
    segmented, segment_name : whether the queries were split by segment, and the
        name of the segment column (None without segments; "segment" when the
        segments were given as a mapping).
    seconds : wall time, evaluations included.
    """
    systems: pa.Table
    tests: pa.Table
    per_query: pa.Table | None
    reports: dict
    n_left_out: int
    confidence: float
    n_resamples: int
    seed: int
    correction: str
    tests_run: tuple
    baseline: str
    system_names: list
    measures: list
    segmented: bool
    segment_name: str | None = None
    n_unjudged: int = 0
    n_missing: int = 0
    seconds: float = 0.0
    inputs: tuple = ()  # the files read (for the plot's output guard)
    method: str = "queries"
    n_buckets: int | None = None

    # ----------------------------------------------------------------- outputs
    def to_dict(self) -> dict[str, Any]:
        """Settings and both tables as plain Python (NaN and infinities as None), what
        ``--format json`` prints."""
        def clean(rows):
            return [{k: (None if isinstance(x, float) and not math.isfinite(x) else x)
                     for k, x in r.items()} for r in rows]
        return {"baseline": self.baseline, "method": self.method,
                "n_buckets": self.n_buckets, "confidence": self.confidence,
                "n_resamples": self.n_resamples, "seed": self.seed,
                "correction": self.correction, "tests_run": list(self.tests_run),
                "n_left_out": self.n_left_out, "n_unjudged": self.n_unjudged,
                "n_missing": self.n_missing,
                "systems": clean(self.systems.to_pylist()),
                "tests": clean(self.tests.to_pylist()),
                "seconds": round(self.seconds, 4)}

    def format_table(self) -> str:
        """An aligned, readable text report."""
        return _render(self, "text")

    def to_markdown(self) -> str:
        """The report as GitHub-flavoured markdown tables."""
        return _render(self, "markdown")

    def to_latex(self) -> str:
        """The report as LaTeX ``tabular`` environments (booktabs rules)."""
        return _render(self, "latex")

    def plot(self, path: str | os.PathLike | None = None, *,
             measure: str | Sequence[str] | None = None):
        """Draw the comparison with matplotlib (``pip install 'fastndcg[plot]'``), one
        row per system: each system's mean with its interval; its paired difference
        against the baseline with its interval, a line at zero, and the corrected
        p-value of the first test run (starred and filled below ``1 - confidence``);
        and the queries it wins, ties and loses. Rows come in one block per measure
        (with segments: per segment). ``measure`` names the measure(s) drawn
        (default: every one; with segments, the last). Saves to ``path`` when given;
        returns the matplotlib Figure."""
        from ._plot import plot_comparison
        if path is not None:  # the one output guard (the inputs, when files, are refused)
            path = V.output_path(path, "path", self.inputs, exts=V.PLOT_EXTS)
        return plot_comparison(self, path, measure)

    def __repr__(self) -> str:
        return self.format_table()

    def _repr_markdown_(self) -> str:  # notebooks
        return self.to_markdown()


# --------------------------------------------------------------------------- rendering

def _p(x, alpha: float) -> str:
    if x is None:
        return "-"
    star = "*" if x < alpha else ""
    if x >= 1e-3:
        return f"{x:.4f}{star}"
    if x == 0:  # below the smallest double
        return f"<1e-300{star}"
    return f"{x:.1e}{star}"


def _f(x, signed: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    if isinstance(x, float) and math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return f"{x:+.4f}" if signed else f"{x:.4f}"


def _blocks(c: Comparison):
    """(title, system rows, test rows) per segment and measure."""
    srows = c.systems.to_pylist()
    trows = c.tests.to_pylist()
    keys = []
    for r in srows:
        key = (r.get("segment"), r["measure"])
        if key not in keys:
            keys.append(key)
    for seg, measure in keys:
        title = measure
        if c.segmented:
            title = f"{c.segment_name} = {seg!r}, {measure}"
        yield (title,
               [r for r in srows if r.get("segment") == seg and r["measure"] == measure],
               [r for r in trows if r["segment"] == seg and r["measure"] == measure])


def _render(c: Comparison, fmt: str) -> str:
    alpha = 1 - c.confidence
    pct = f"{c.confidence * 100:g}%"
    n_tests = c.tests.num_rows
    if c.method == "buckets":
        how = (f"{pct} percentile bootstrap intervals over {c.n_buckets:,} hashed buckets of "
               f"queries ({c.n_resamples:,} paired resamples, seed {c.seed}); randomization "
               f"test over the buckets' signs; t-test on exact sums"
               + ("" if "wilcoxon" in c.tests_run else
                  "; Wilcoxon not run (it ranks every query against all the others)"))
    else:
        how = (f"{pct} percentile bootstrap intervals ({c.n_resamples:,} paired resamples, "
               f"seed {c.seed})")
    note = (f"{how}; p-values two-sided, {_CORRECTION_NAMES[c.correction]} corrected"
            + (f" over {n_tests} comparison{'s' if n_tests != 1 else ''}"
               if c.correction != "none" else "")
            + f"; * marks p < {alpha:g}")
    if c.n_left_out:
        note += f"; {c.n_left_out:,} queries with NaN NDCG left out"
    if c.n_unjudged:
        note += f"; {c.n_unjudged:,} run queries without judgments left out"
    if c.n_missing:
        note += (f"; {c.n_missing:,} judged queries in no run "
                 + ("scored 0 (complete)" if bool(c.reports) and next(iter(c.reports.values())).complete else
                    "left out (complete=True scores them 0)"))
    heads_s = ["system", "queries", "mean", f"{pct} CI"]
    heads_t = [f"vs {c.baseline}", "mean diff", f"{pct} CI", "effect", "p rand", "p t",
               "p wilcoxon", "wins/ties/losses"]
    out = []
    for title, srows, trows in _blocks(c):
        s_body = [[r["system"], f"{r['n_queries']:,}", _f(r["mean"]),
                   f"[{_f(r['ci_low'])}, {_f(r['ci_high'])}]"] for r in srows]
        t_body = [[r["system"], _f(r["mean_diff"], True),
                   f"[{_f(r['ci_low'], True)}, {_f(r['ci_high'], True)}]",
                   _f(r["effect_size"], True), _p(r["p_randomization_adj"], alpha),
                   _p(r["p_t_adj"], alpha), _p(r["p_wilcoxon_adj"], alpha),
                   f"{r['wins']:,}/{r['ties']:,}/{r['losses']:,}"] for r in trows]
        out.append(render(heads_s, s_body, "l" + "r" * (len(heads_s) - 1), fmt, title))
        out.append(render(heads_t, t_body, "l" + "r" * (len(heads_t) - 1), fmt))
    if fmt == "latex":
        return "\n".join(out) + f"\n% {note}\n"
    if fmt == "markdown":
        return "\n\n".join(out) + f"\n\n_{note}_\n"
    return "\n\n".join(out) + f"\n\n{note}"


# --------------------------------------------------------------------------- entry point

def _input_paths(source, systems, qrels) -> tuple:
    """The files a comparison reads: the log, or the runs and the qrels."""
    items = [source, qrels]
    if qrels is not None:  # systems are runs (else score columns, not files)
        items += list(systems.values()) if isinstance(systems, dict) else list(systems)
    return tuple(os.fspath(x) for x in items if isinstance(x, (str, os.PathLike)))


def compare(source, systems, *, baseline: str | None = None, qrels=None, segment=None,
            k: int | None | Sequence[int] = 10, confidence: float = 0.95,
            n_resamples: int = 10_000, seed: int = 0,
            tests: Sequence[str] | str | None = None, correction: str = "holm",
            method: str = "auto", buckets: int = DEFAULT_BUCKETS,
            progress: bool = False, **options) -> Comparison:
    """Compare rankers on the same queries: intervals, paired tests, segments.

    Parameters
    ----------
    source : the search log (as for :func:`fastndcg.evaluate`) whose score columns
        are the systems; ``None`` when the systems are runs against ``qrels``.
    systems : score columns of the log (``["score_a", "score_b"]``, or a dict
        ``{name: column}``), or with ``qrels`` the runs: a dict ``{name: run}``
        (TREC run files, Parquet files or tables) or a list of run paths (named by
        file name). At least two.
    baseline : the system the others are tested against (default: the first).
    qrels : judgments (as for :func:`fastndcg.evaluate`); compares runs.
    segment : repeat everything for each value of this column of the log (one
        value per query), or of a mapping from query id to segment (a dict, or a
        two-column pyarrow Table: query id, segment).
    k : the NDCG cutoff(s) (default 10); each cutoff is a separate measure and its
        tests count in the correction. Or ``measure=`` (in ``options``): any
        measures, named as for :func:`fastndcg.evaluate` (``["nDCG@10", "AP",
        "RR@10", "P@5"]``, ``"map recip_rank"``), with ``rel=`` their relevance
        threshold; each is compared, and all count in the correction.
    confidence : of the bootstrap intervals (default 0.95); p-values below
        ``1 - confidence`` are starred in the text outputs.
    n_resamples : bootstrap resamples and randomization-test resamples (default
        10,000).
    seed : seeds the resampling (default 0); the numbers are the same for a given
        seed whatever the number of threads.
    tests : some of "randomization", "t", "wilcoxon" (default: every one the method
        has: all three query by query; randomization and t with buckets).
    correction : "holm" (default), "bonferroni", "bh" (Benjamini-Hochberg) or
        "none", applied to each test's p-values across every row of ``tests``.
    method : "auto" (default): query by query up to 1,000,000 queries (all segments
        together), over hashed buckets of queries above; "queries": always query by
        query (every value held in memory); "buckets": always over buckets (memory
        flat in the number of queries). See the module docstring.
    buckets : the number of hashed buckets of queries (default 1,000).
    **options : evaluation options of :func:`fastndcg.evaluate` (``gain``,
        ``ties``, ``preset``, ``complete``, ``query``, ``label``, ``zero_idcg`` ...).
        Any other keyword is refused (TypeError) before anything is read, with the
        closest name it takes; one that another engine takes (``workers=``,
        ``client=``: :func:`fastndcg.dask.compare`; ``spark=``, ``order=``:
        :func:`fastndcg.spark.compare`) with where it belongs. Every value is
        checked before anything is read as well.

    Every system is scored on the same queries: with runs, a query that one
    system lacks is an error naming it, unless ``complete=True`` scores judged
    queries missing from a run as 0.

    Example
    -------
    >>> import pyarrow as pa, fastndcg
    >>> log = pa.table({"query_id": [1, 1, 1, 2, 2, 2, 3, 3, 3],
    ...                 "a": [3, 2, 1, 3, 2, 1, 3, 2, 1],
    ...                 "b": [1, 2, 3, 1, 2, 3, 3, 1, 2],
    ...                 "label": [0, 1, 2, 0, 0, 1, 1, 0, 0]})
    >>> cmp = fastndcg.compare(log, ["a", "b"], k=3, n_resamples=1000)
    >>> cmp.tests.select(["system", "baseline", "wins", "ties", "losses"]).to_pylist()
    [{'system': 'b', 'baseline': 'a', 'wins': 2, 'ties': 1, 'losses': 0}]
    >>> cmp.tests["p_randomization"][0].as_py()  # exact: 4 of the 8 sign patterns
    0.5
    """
    started = time.perf_counter()
    progress = V.flag(progress, "progress")
    st = _settings(systems, baseline, qrels, segment, k, confidence, n_resamples, seed, tests,
                   correction, options, method, buckets)
    inputs = _input_paths(source, systems, qrels)
    streamed = None
    if qrels is None and st.method != "queries":
        _refuse_reader(source)
        streamed = _streamed(source, st, progress)  # (its reader checks every column)
    if streamed is not None:
        stats, reports = streamed
        return result(st, stats, reports, started, inputs, progress)
    v = _values(source, qrels, st, progress)
    if st.method == "auto" and len(v.ids) > SCALE_QUERIES:
        return result(st, _stats_of_values(v, st), v.reports, started, inputs, progress)
    return _query_level(v, st, started, inputs, progress)


def result(st: _Settings, stats: Stats, reports: dict, started: float, inputs: tuple,
           progress: bool = False) -> "Comparison":
    """The Comparison of merged statistics: query-level when they kept every value,
    else from the buckets."""
    measures = list(next(iter(reports.values())).totals.names)
    if stats.kept is not None:
        return _query_level(_kept_values(stats, measures, reports), st, started, inputs,
                            progress)
    if "wilcoxon" in st.tests:
        if st.tests_named:
            raise ValueError(WILCOXON_AT_SCALE.format(
                why=f"this comparison has {stats.n_queries:,} queries, above the "
                    f"{SCALE_QUERIES:,} up to which they are held in memory"))
        st = dataclasses.replace(st, tests=tuple(t for t in st.tests if t != "wilcoxon"))
    if progress:
        print(f"resampling {stats.n_buckets:,} buckets of {stats.n_queries:,} queries: "
              f"{st.n_resamples:,} resamples ...", file=sys.stderr, flush=True)
    systems_t, tests_t = _bucket_tests(stats, st, measures)
    return _comparison(st, systems_t, tests_t, None, reports, stats.n_left_out, measures,
                       stats.segments != [None], started, inputs, "buckets")


def _query_level(v: _Values, st: _Settings, started: float, inputs: tuple,
                 progress: bool) -> "Comparison":
    if progress:  # the evaluations drew their bars; resampling has none, so say what runs
        n_groups = len(v.offsets) - 1
        print(f"resampling {len(v.ids):,} queries"
              + (f" in {n_groups:,} segments" if v.segments is not None else "")
              + f": {st.n_resamples:,} bootstrap"
              + (" and randomization" if "randomization" in st.tests else "")
              + " resamples ...", file=sys.stderr, flush=True)
        resampling = time.perf_counter()
    systems_t, tests_t = _tests(v, st)
    if progress:
        print(f"resampling done in {time.perf_counter() - resampling:.1f} s", file=sys.stderr,
              flush=True)
    query = st.options.get("query", "query_id")
    cols = {query: v.ids}
    if v.segments is not None:
        code = np.repeat(np.arange(len(v.segments)), np.diff(v.offsets))
        cols["segment"] = v.segments.take(pa.array(code))
    for s, name in enumerate(st.names):
        for m, measure in enumerate(v.measures):
            cols[f"{measure} {name}"] = pa.array(v.values[s, m])
    return _comparison(st, systems_t, tests_t, pa.table(cols), v.reports, v.n_left_out,
                       v.measures, v.segments is not None, started, inputs, "queries")


def _comparison(st: _Settings, systems_t: pa.Table, tests_t: pa.Table, per_query, reports: dict,
                n_left_out: int, measures: list, segmented: bool, started: float, inputs: tuple,
                method: str) -> "Comparison":
    for rep in reports.values():
        rep.forget_per_query()
    return Comparison(systems_t, tests_t, per_query, reports, n_left_out,
                      st.confidence, st.n_resamples, st.seed, st.correction, st.tests,
                      st.names[st.base], st.names, list(measures), segmented,
                      st.segment if isinstance(st.segment, str) else
                      (None if st.segment is None else "segment"),
                      max(r.n_unjudged for r in reports.values()),
                      max(r.n_missing for r in reports.values()),
                      time.perf_counter() - started, inputs=inputs, method=method,
                      n_buckets=st.n_buckets if method == "buckets" else None)
