"""The entry point: :func:`compare`.

A log is streamed once, every system scored on each chunk (:mod:`.stream`), unless
``method="queries"`` or its queries' rows are scattered; then, as for runs
against qrels, every system is evaluated and its per-query values are held
(:mod:`.values`). Up to ``SCALE_QUERIES`` queries the query-level methods run
(:mod:`.queries`), above it the bucket methods (:mod:`.buckets`).
"""

from __future__ import annotations

import os
import time
from typing import Sequence

from .. import _validate as V
from . import arguments  # (SCALE_QUERIES read when used: tests lower it)
from .arguments import DEFAULT_BUCKETS, settings
from .buckets import stats_of_values
from .comparison import Comparison
from .ppi import with_ppi
from .queries import compare_queries
from .stream import check_log, refuse_reader, result, streamed
from .values import read_values

__all__ = ["compare"]


def _input_paths(source, systems, qrels) -> tuple:
    """The files a comparison reads: the log, or the runs and the qrels."""
    items = [source, qrels]
    if qrels is not None and source is None:  # systems are runs (else score columns)
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
        are the systems, with a label column or judged by ``qrels``; ``None`` when
        the systems are runs against ``qrels``.
    systems : score columns of the log (``["score_a", "score_b"]``, or a dict
        ``{name: column}``), or with ``qrels`` the runs: a dict ``{name: run}``
        (TREC run files, Parquet files or tables) or a list of run paths (named by
        file name). At least two.
    baseline : the system the others are tested against (default: the first).
    qrels : judgments (as for :func:`fastndcg.evaluate`): of the runs (``source``
        None), or of the log's documents (its ``doc_id`` column), which then streams
        as a log without them does.
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
        flat in the number of queries). See :mod:`fastndcg.compare`.
    buckets : the number of hashed buckets of queries (default 1,000).
    human_qrels (in ``options``) : with ``qrels`` an LLM's judgments, human judgments of
        a sample of the queries: ``tests`` then also gives each pair's
        prediction-powered difference (:mod:`fastndcg._compare.ppi`), with ``ppi=`` its
        λ as :func:`fastndcg.evaluate` takes it and ``confidence`` its level. From
        exact sums: a log streams with them in flat memory (``method="buckets"``, Dask,
        Spark), the same bits as ``method="queries"``.
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
    st = settings(systems, "fastndcg.compare", source is not None or qrels is None,
                  baseline=baseline, qrels=qrels, segment=segment,
                  k=k, confidence=confidence, n_resamples=n_resamples, seed=seed, tests=tests,
                  correction=correction, method=method, buckets=buckets, **options)
    inputs = _input_paths(source, systems, qrels)
    passed = None
    if source is not None and st.method != "queries":
        refuse_reader(source)
        passed = streamed(source, st, progress)  # (its reader checks every column)
    if passed is not None:
        stats, reports = passed
        return result(st, stats, reports, started, inputs, progress)
    if source is not None:
        check_log(source, st)
    v = read_values(source, qrels, st, progress)
    if st.method == "auto" and len(v.ids) > arguments.SCALE_QUERIES:
        c = result(st, stats_of_values(v, st), v.reports, started, inputs, progress)
    else:
        c = compare_queries(v, st, started, inputs, progress)
    if st.human_qrels is None:
        return c
    c = with_ppi(c, source, v, st, progress)
    c.seconds = time.perf_counter() - started
    return c
