"""Evaluate a search log where it lives: a Spark DataFrame, table or path.

``fastndcg.spark.evaluate(df, ...)`` takes the options of :func:`fastndcg.evaluate`
and returns the same :class:`~fastndcg.Report`, with the same numbers.

How it runs
-----------
**A Parquet path** (a file, a directory or a glob, local or any URL pyarrow or
fsspec reads) **is read by the executors themselves**: the files' footers are
read on the driver and cut into pieces of whole row groups, at least one per
core (``partitions=`` sets how many); each Spark task reads its piece with
pyarrow and scores it with the one partition scorer
(:func:`fastndcg.partition.score_partition`, the function every path calls).
No row passes through the JVM: Spark's conversion of rows to Arrow alone costs
more than all of fastndcg's work. A query that straddles two pieces comes back
from both tasks unscored and is joined and scored on the driver, as the Dask
path does. This needs the rows of each query together in the files (a log
written sorted by query, as logs usually are): when the pieces' query ids are
not in increasing order, the log is evaluated again by the shuffle below, and
the result says so (``Report.source``). In file order, ``ties="stable"`` needs
no ``order=``.

With ``order=`` (a column whose ascending order is the input order within a
query) the executors sort each query's rows by it before scoring, so a sorted
path is still read in place.

**A DataFrame or a table** (or a path not sorted by query) is shuffled: the rows are
brought together by query with ``repartition(query)`` and
``sortWithinPartitions(query[, order])``, then every partition is scored on the
executors by ``mapInArrow`` with the same partition scorer.
Spark's Arrow batches are small (10,000 rows by default), so they are coalesced to
``batch_rows`` before they reach the kernels, and a query that continues from one
batch into the next is carried over, as on one machine; a Python worker holds
about one batch and one query, never a whole partition. Each task runs one Numba
thread (Spark runs a task per core) and loads the kernels from the compile cache
(``FASTNDCG_CACHE_DIR``, a writable directory on each executor; run ``fastndcg
warmup`` there once, e.g. in the image). Spark forks its Python workers from a
daemon that never loads Numba, so each worker starts its threading layer after
the fork (OpenMP is not safe to use across a fork), and with one thread a task
no thread pool is shared between tasks. Each partition returns its mergeable
totals (and, unless ``per_query=False``, its per-query rows, or the path of the
Parquet part it wrote), one small row; the driver merges them exactly as the Dask
path does. A task that dies is retried by Spark: its result replaces nothing, as a
partition's result is only read once the task succeeded.

Ties: ``ties="average"`` (the default) and ``"trec"`` need no order. ``ties="stable"``
ranks tied scores in input order and ``ties="ranx"`` (``preset="ranx"``) sorts the
input order as ranx does, and Spark keeps no input order across shuffles: on the
shuffle path give ``order=`` (a column whose ascending order is the input order,
e.g. the original rank or position), or choose another rule.

Qrels mode: judgments as a TREC or Parquet path, a pyarrow Table, or a Spark
DataFrame (collected to the driver), read once and broadcast to the executors;
each partition joins its queries with them, and ``ties="trec"`` orders tied
documents exactly as on one machine.

Several sets of judgments: with label sets (``qrels={"human": ..., "llm": ...}``)
every set is broadcast, and each task reads and ranks its rows once and scores
them under every set (:func:`fastndcg.partition.score_sets`), one part of
per-query results a set; the driver merges each set as it merges one, and
returns :func:`fastndcg.evaluate`'s :class:`~fastndcg.report.LabelSets`. With
``human_qrels=`` (prediction-powered means) the LLM's and the human judgments
are two such sets, and each task also returns the exact sums of the estimates
(a :class:`fastndcg.ppi.Lining`) of the queries it scored; the driver merges
them, adds the queries it stitched from two pieces (and, with
``complete=True``, the judged queries the run lacks), and ``report.ppi`` is
one machine's to the bit.

Example
-------
>>> import fastndcg.spark                                          # doctest: +SKIP
>>> report = fastndcg.spark.evaluate(spark.table("search.clicks"), k=[1, 10])  # doctest: +SKIP
"""

from __future__ import annotations

import os
import pickle
import time
import dataclasses
from dataclasses import dataclass
from typing import Any, Iterator

import pyarrow as pa

from . import _validate as V
from . import io
from .chunks import regroup
from ._evaluate import (HUMAN_SETS, check_finished, check_human_beside, check_nonempty,
                       check_scored, finish, id_type, judgment_paths, load_human,
                       load_judgments, run_output, set_parts)
from .ppi import Lining
from .partition import (Options, Scorer, SetScorer, check_options, explain_columns,
                        score_sets)
from ._compare.arguments import check_log_only, settings
from ._compare.comparison import Comparison
from ._compare.paired import PairedScorer, merge_pieces, paired_partition
from ._compare.stream import paired_scorer, prepare, result, system_reports
from .pieces import (PARTITION_ROWS, Context, list_parquet, piece_batches, score_piece,
                     score_piece_sets, stitch)
from .options import bound, label_sets, takes_options
from .qrels import Qrels, load_qrels
from .output import Output
from .parts import PartWriter, result_schema
from .report import LabelSets, Report

__all__ = ["evaluate", "compare", "per_query_dataframe", "SparkJobFailed", "COALESCE_ROWS"]

_INPUT_ORDER = ("stable", "ranx")  # tie rules that read the order rows come in

COALESCE_ROWS = 1 << 16
"""On the shuffle path, Spark's Arrow batches (10,000 rows by default) are joined
to about this many rows before they reach the kernels (``batch_rows=``)."""


class SparkJobFailed(RuntimeError):
    """Spark could not run the job (not a problem of the data or the options)."""


def per_query_dataframe(report: Report, spark=None):
    """The per-query results a run wrote to a directory (``per_query=PATH``), as a
    lazy Spark DataFrame (read when Spark needs it: join it with other tables, or
    filter and aggregate it there).

    Example
    -------
    >>> r = fastndcg.spark.evaluate("logs/", k=10, per_query="s3://bucket/ndcg/")  # doctest: +SKIP
    >>> fastndcg.spark.per_query_dataframe(r).where("`ndcg@10` < 0.2").count()   # doctest: +SKIP
    """
    _require()
    if not isinstance(report, Report):
        raise TypeError(f"report must be the Report of an evaluation, got {V.shown(report)} "
                        f"({type(report).__name__})")
    path = report.per_query_path
    if path is None or path.lower().endswith((".csv", ".tsv")):
        raise ValueError(f"report: its per-query results were not written as Parquet "
                         f"({'kept in memory or none' if path is None else V.shown(path)}); "
                         f"evaluate with per_query='DIRECTORY' (a path every executor can "
                         f"reach) to read them back as a Spark DataFrame")
    return _session(spark).read.parquet(report.per_query_path)


def _require():
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise ImportError("fastndcg.spark needs pyspark: pip install 'fastndcg[spark]'") from None


@dataclass
class _Sets:
    """The judgments an evaluation scores the log with, each partition read and ranked
    once: one set (``[None]`` in list mode), label sets (``names``), or the LLM's and
    the human sample's (``ppi``: the prediction-powered sums added as they are scored)."""
    judged: list               # a set each: its Qrels (None in list mode)
    outputs: list              # a set each: where its per-query results go
    names: list | None = None  # the sets' names in messages (None: one set)
    ppi: bool = False


@dataclass
class _Task:
    """What every task needs, pickled once into the function Spark ships."""
    opts: Options
    schemas_out: list          # a label set each: the schema of its per-query results
    keep: list                 # ... whether they are kept (in memory or written)
    staging: list              # ... the directory the executors write them to (None: returned)
    batch_rows: int
    cache_dir: str | None
    paired: PairedScorer | None = None  # a comparison: every system scored into Stats
    ppi: bool = False          # each partition's prediction-powered sums returned (a Lining)

    def lining(self) -> Lining | None:
        """A partition's prediction-powered sums, to add its queries to (None: no PPI)."""
        return Lining(self.opts.names) if self.ppi else None


def _coalesce(batches: Iterator[pa.RecordBatch], rows: int) -> Iterator[pa.RecordBatch]:
    """Spark's small Arrow batches joined into batches of about ``rows`` rows."""
    pending: list[pa.RecordBatch] = []
    n = 0
    for b in batches:
        if b.num_rows == 0:
            continue
        pending.append(b)
        n += b.num_rows
        if n >= rows:
            yield from pa.Table.from_batches(pending).combine_chunks().to_batches()
            pending, n = [], 0
    if pending:
        yield from pa.Table.from_batches(pending).combine_chunks().to_batches()


def _task(opts: Options, schemas_out: list, sets: _Sets | None, batch_rows: int,
          paired: PairedScorer | None = None) -> _Task:
    """The task of an evaluation scoring ``sets`` (their per-query results of schemas
    ``schemas_out``), or of a comparison (``paired``, no sets)."""
    from ._cache import cache_dir
    where = cache_dir()
    outputs = [] if sets is None else sets.outputs
    return _Task(opts, schemas_out, [o.kind != "none" for o in outputs],
                 [o.staging if o.kind == "path" else None for o in outputs], batch_rows,
                 str(where) if where else None, paired, sets is not None and sets.ppi)


def _with_order(order: str | None, roles: dict) -> dict:
    """The columns read, with ``order=`` among them (checked)."""
    if order is None:
        return roles
    V.text(order, "order", what="a column name")
    if order in roles:
        raise ValueError(f"order={order!r} is also the {roles[order]} column; name the "
                         f"column whose ascending order is the input order")
    return {**roles, order: "order"}


def _check_input_order(ties: str, order: str | None, unsorted: str | None = None) -> None:
    """Spark's shuffle keeps no input order: the tie rules that read it need
    ``order=`` there (``unsorted``: the path that has to be shuffled)."""
    if ties not in _INPUT_ORDER or order is not None:
        return
    if unsorted is None:
        raise ValueError(f"ties={ties!r} ranks tied scores by their input order, which "
                         f"Spark does not keep across shuffles: give order= (a column whose "
                         f"ascending order is the input order, e.g. the original rank), or use "
                         f"ties='average'; a Parquet path sorted by query is read in file order "
                         f"and needs none")
    raise ValueError(f"the log {V.shown(unsorted)} is not sorted by query, so Spark "
                     f"must shuffle it, and ties={ties!r} (by input order) then "
                     f"needs order= (a column whose ascending order is the input "
                     f"order); or sort the files by query, or use ties='average'")


def _read_task(task_bytes: bytes, pieces_bytes: bytes, qrels_bc):
    """The function each task of the read path runs: its pieces (indices) read with
    pyarrow and scored, one pickled result each."""
    def run(indices: Iterator[int]) -> Iterator[bytes]:
        task: _Task = pickle.loads(task_bytes)
        _executor_setup(task)
        pieces, ctxs = pickle.loads(pieces_bytes)
        qrels = [None] * len(ctxs) if qrels_bc is None else pickle.loads(qrels_bc.value)
        for i in indices:
            try:
                if task.paired is not None:
                    result, extra = paired_partition(piece_batches(pieces[i], None, ctxs[0]),
                                                     task.paired, edges=True,
                                                     row0=pieces[i].row0)
                else:  # a (PartitionResult, Part) a set, and the piece's PPI sums
                    extra = task.lining()
                    result = score_piece_sets(pieces[i], None, ctxs, qrels, 2 * i + 1,
                                              on_scored=extra)
                yield pickle.dumps(("ok", i, result, extra))
            except (ValueError, TypeError) as err:  # bad data: told on the driver, not retried
                yield pickle.dumps(("error", type(err).__name__, str(err)))
    return run


def _executor_setup(task: _Task) -> None:
    if task.cache_dir and "FASTNDCG_CACHE_DIR" not in os.environ:
        os.environ["FASTNDCG_CACHE_DIR"] = task.cache_dir
    import numba
    numba.set_num_threads(1)  # one task per core: more threads would oversubscribe


def _score_task(task_bytes: bytes, qrels_bc, index_col: str):
    """The function ``mapInArrow`` runs on each partition: one payload row out."""
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        task: _Task = pickle.loads(task_bytes)
        _executor_setup(task)
        from pyspark import TaskContext
        ctx = TaskContext.get()
        slot = 2 * (ctx.partitionId() if ctx is not None else 0) + 1
        qrels = ([None] * len(task.schemas_out) if qrels_bc is None
                 else pickle.loads(qrels_bc.value))
        attempt = ctx.attemptNumber() if ctx is not None else 0
        writers = [PartWriter(schema, None if staging is None else
                              os.path.join(staging, f"part-{slot:06d}.a{attempt}.parquet"),
                              keep=keep)
                   for schema, keep, staging in zip(task.schemas_out, task.keep, task.staging)]
        try:
            if task.paired is not None:  # a comparison: its partition's Stats
                result, stats = paired_partition(_coalesce(batches, task.batch_rows),
                                                 task.paired)
                payload = ("ok", slot, result, stats)
            else:  # a (PartitionResult, Part) a set, and the partition's PPI sums
                lining = task.lining()
                results = score_sets(_coalesce(batches, task.batch_rows),
                                     [Scorer(task.opts, q) for q in qrels], writers,
                                     on_scored=lining)
                payload = ("ok", slot, [(r, w.close()) for r, w in zip(results, writers)],
                           lining)
        except (ValueError, TypeError) as err:  # bad data: told on the driver, not retried
            for w in writers:
                w.abort()
            payload = ("error", type(err).__name__, str(err))
        except BaseException:
            for w in writers:
                w.abort()
            raise
        yield pa.RecordBatch.from_pydict({index_col: [pickle.dumps(payload)]},
                                         schema=pa.schema([(index_col, pa.binary())]))
    return run


def _session(spark):
    from pyspark.sql import SparkSession
    if spark is None:
        spark = SparkSession.getActiveSession()
        if spark is None:
            raise ValueError("no active Spark session: pass spark=SparkSession (or start one, "
                             "e.g. SparkSession.builder.master('local[2]').getOrCreate())")
    elif not isinstance(spark, SparkSession):
        raise TypeError(f"spark must be a pyspark.sql.SparkSession, got {V.shown(spark)} "
                        f"({type(spark).__name__})")
    return spark


def _dataframe(source, spark) -> tuple[Any, str, list[str]]:
    """(DataFrame, description, input paths) of a DataFrame, a path or a table name."""
    from pyspark.sql import DataFrame
    if isinstance(source, DataFrame):
        return source, "the Spark DataFrame", []
    if isinstance(source, (str, os.PathLike)):
        text = V.input_path(source, "source")
        if _is_path(text):
            if "://" not in text:
                if not os.path.exists(text) and not any(ch in text for ch in "*?["):
                    raise FileNotFoundError(f"source {text!r} does not exist; check the path")
            try:
                return spark.read.parquet(text), repr(text), io.input_paths(text)
            except Exception as err:  # Spark's AnalysisException: not an Exception we export
                raise ValueError(f"source {V.shown(text)}: Spark cannot read it as Parquet "
                                 f"({_first_line(err)})") from None
        try:
            return spark.table(text), f"table {text!r}", []
        except Exception as err:
            raise ValueError(f"source {V.shown(text)} is neither a path nor a table Spark "
                             f"knows ({_first_line(err)}); name a Parquet path or a table") from None
    raise TypeError(f"source must be a Spark DataFrame, a table name or a Parquet path, got "
                    f"{V.shown(source)} ({type(source).__name__})")


def _is_path(source) -> bool:
    """Whether the source names files (the read path), not a table."""
    if isinstance(source, os.PathLike):
        return True
    if not isinstance(source, str):
        return False
    return ("://" in source or os.path.exists(source) or os.sep in source
            or source.endswith((".parquet", ".pq")))


def _collect(rdd_or_df) -> list:
    """``collect()``, Spark's own failures (tasks out of retries, a lost executor)
    raised as SparkJobFailed."""
    try:
        return rdd_or_df.collect()
    except Exception as err:
        if type(err).__module__.split(".")[0] not in ("pyspark", "py4j"):
            raise
        raise SparkJobFailed(f"the Spark job failed: {_first_line(err)}") from None


def _unpack(item: tuple) -> tuple:
    if item[0] == "error":
        raise (TypeError if item[1] == "TypeError" else ValueError)(item[2])
    return item[1:]


def _read(spark, source: str, roles: dict, opts: Options, sets: _Sets,
          partitions: int | None, batch_rows: int) -> tuple | None:
    """The read path: tasks read and score pieces of the files under every set; the
    sets' :class:`~fastndcg.pieces.Stitched` results, the PPI sums and the
    description, or None when the log is not sorted by query (nothing is kept: the
    caller shuffles it)."""
    sc = spark.sparkContext
    n = partitions or sc.defaultParallelism
    pieces, schema, describe, _ = list_parquet(source, roles, PARTITION_ROWS, min_pieces=n)
    schemas = _schemas(schema, opts, sets)
    task = _task(opts, schemas, sets, batch_rows)
    ctxs = [Context(opts, list(roles), schema, schema_out, batch_rows, keep, staging)
            for schema_out, keep, staging in zip(schemas, task.keep, task.staging)]
    qrels_bc = _broadcast(sc, sets)
    tasks = sc.parallelize(range(len(pieces)), len(pieces)).mapPartitions(
        _read_task(pickle.dumps(task), pickle.dumps((pieces, ctxs)), qrels_bc))
    try:
        items = [_unpack(pickle.loads(b)) for b in _collect(tasks)]
    finally:
        if qrels_bc is not None:
            qrels_bc.unpersist()
    sts, lining = _stitched(items, opts, sets, schemas)
    if not sts[0].ordered:  # the order of the run's ids: the same under every set
        for st in sts:
            for part in st.parts.values():
                part.remove()
        return None
    if lining is not None:  # the queries stitched here, added to the sums whole
        several = SetScorer([Scorer(opts, j) for j in sets.judged])
        for slot in sorted(sts[0].edges.done):
            for t in sts[0].edges.done[slot]:
                lining(several.score_chunk(regroup(t, opts.query)))
    return sts, lining, describe, schemas


def _schemas(schema: pa.Schema, opts: Options, sets: _Sets) -> list[pa.Schema]:
    """The schema of each set's per-query results (its query ids' type depends on
    its qrels)."""
    return [result_schema(opts.query, id_type(schema, opts.query, j, opts.complete), opts.names,
                          weight=opts.weight, extra=explain_columns(opts))
            for j in sets.judged]


def _broadcast(sc, sets: _Sets):
    """The sets' judgments broadcast to the executors (None in list mode)."""
    if sets.judged[0] is None:
        return None
    return sc.broadcast(pickle.dumps(sets.judged))


def _in_order(items: list) -> list:
    """(result, extra) of each task's (index, result, extra), by index."""
    return [(res, extra) for _, res, extra in sorted(items, key=lambda r: r[0])]


def _stitched(items: list, opts: Options, sets: _Sets, schemas: list) -> tuple[list, Any]:
    """The tasks' results (index, a (PartitionResult, Part) a set, PPI sums) put
    together: each set's :func:`~fastndcg.pieces.stitch`, and the partitions'
    prediction-powered sums merged (None without)."""
    ordered = _in_order(items)
    sts = [stitch([pairs[j] for pairs, _ in ordered], opts, judged, out, schema)
           for j, (judged, out, schema) in enumerate(zip(sets.judged, sets.outputs, schemas))]
    if not sets.ppi:
        return sts, None
    lining = Lining(opts.names)
    for _, each in ordered:
        lining.merge(each)
    return sts, lining


def _reports(sts: list, lining: Lining | None, opts: Options, sets: _Sets, describe: str,
             schemas: list, settings: dict) -> list[Report]:
    """One Report a set from its merged results, with the prediction-powered means of
    ``lining`` on the first; every set (and the human sample) is checked before any
    output is committed."""
    totals = [st.totals(opts.names, opts.weight is not None) for st in sts]
    names = sets.names or [None] * len(sts)
    for total, st, name in zip(totals, sts, names):
        total.n_rows = st.n_rows
        check_finished(total, st.n_rows, opts, st.seen, st.unjudged, describe, name)
    ppi = None
    if lining is not None:
        if opts.complete:  # the judged queries the run lacks, scored 0, lined up by id
            lining([Scorer(opts, j).missing(st.seen) for j, st in zip(sets.judged, sts)])
        check_scored(lining, sets.judged[1], sets.judged[0] is None)
        ppi = lining.estimate(settings["confidence"], settings["ppi"])
    reports = [finish(total, st.n_rows, opts, st.seen, st.unjudged,
                      [st.parts[s] for s in sorted(st.parts)], out, describe, schema,
                      n_missing=st.n_missing, labels=name)
               for total, st, out, schema, name in zip(totals, sts, sets.outputs, schemas,
                                                       names)]
    reports[0].ppi = ppi
    return reports


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return " ".join(text[0].split())[:300] if text else type(err).__name__


def _arrow_schema(df) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema
    return to_arrow_schema(df.schema)


def _as_arrow(qrels):
    """Judgments given as a Spark DataFrame collected to a pyarrow Table (a mapping of
    label sets: each of its sets); anything else as given."""
    from pyspark.sql import DataFrame
    sets = label_sets(qrels)
    if sets is not None:
        return {name: _as_arrow(q) for name, q in sets.items()}
    return qrels.toArrow() if isinstance(qrels, DataFrame) else qrels


@takes_options("fastndcg.spark.evaluate")
def evaluate(source, *, spark=None, order: str | None = None, per_query=None,
             partitions: int | None = None, batch_rows: int = COALESCE_ROWS,
             progress: bool = False, **options) -> Report | LabelSets:
    """NDCG@k (and any other measure) of a log in Spark, scored on the executors.

    With several label sets (``qrels={"human": ..., "llm": ...}``) each partition is
    read and ranked once and scored under every set, and the result is the
    :class:`~fastndcg.report.LabelSets` that :func:`fastndcg.evaluate` gives (the
    per-query parts a set after another, a first column ``labels``). With
    ``human_qrels=`` (``qrels=`` the LLM's judgments) each partition is scored
    under both and returns the exact sums of the prediction-powered means, merged
    on the driver: ``report.ppi`` is :func:`fastndcg.evaluate`'s, to the bit.

    Parameters
    ----------
    source : a Spark DataFrame, a table name (``spark.table``), or a Parquet file,
        directory or glob (local or a URL pyarrow/fsspec reads), which the
        executors read themselves.
    spark : the SparkSession (default: the active one).
    order : a column whose ascending order is the input order within a query: each
        query's rows are sorted by it before they are ranked (rows with equal
        values keep their order). Needed by ``ties="stable"`` and ``"ranx"`` on the
        shuffle path (Spark keeps no input order); a Parquet path sorted by query
        is still read by the executors, each query sorted there.
    per_query : None (the per-query rows gathered to the driver as a pyarrow Table),
        False (none kept) or a directory the executors write Parquet parts to (on a
        cluster, a path every executor and the driver can reach).
    partitions : a Parquet path: at least this many pieces (of whole row groups) the
        files are cut into, one task each (default: Spark's default parallelism,
        the executors' cores); a shuffle: how many partitions the rows are hashed
        into by query (default: ``spark.sql.shuffle.partitions``).
    batch_rows : Spark's Arrow batches are joined to about this many rows.
    **options : the evaluation options (:data:`fastndcg.options.OPTIONS`), as
        :func:`fastndcg.evaluate` takes them; ``qrels`` (or a label set of it) and
        ``human_qrels`` may also be a Spark DataFrame.
    Everything else: as :func:`fastndcg.evaluate`.

    Example
    -------
    >>> import fastndcg.spark                                       # doctest: +SKIP
    >>> fastndcg.spark.evaluate("logs/", k=10, per_query=False).mean  # doctest: +SKIP
    {'ndcg@10': 0.8158...}
    >>> sets = fastndcg.spark.evaluate("logs/", k=10, qrels={"human": "h.txt",  # doctest: +SKIP
    ...                                                      "llm": "llm.parquet"})
    >>> fastndcg.spark.evaluate("logs/", k=10, qrels="llm.parquet",  # doctest: +SKIP
    ...                         human_qrels="h.txt").ppi
    """
    _require()
    started = time.perf_counter()
    progress = V.flag(progress, "progress")
    opts, roles = check_options(per_query=per_query, batch_rows=batch_rows, **options)
    qrels, human = options.get("qrels"), options.get("human_qrels")
    check_human_beside(qrels, human)
    roles = _with_order(order, roles)
    if order is not None:  # each query's rows are sorted by it on the executors
        opts = dataclasses.replace(opts, order=order)
    if partitions is not None:
        V.count(partitions, "partitions", hi=1 << 20, fix="about 2-4 per core is usual")
    spark = _session(spark)
    read = _is_path(source)
    if not read:
        _check_input_order(opts.ties, order)
    if read:
        text = V.input_path(source, "source")
        inputs = io.input_paths(text)
    else:
        df, describe, inputs = _dataframe(source, spark)
    inputs += judgment_paths(qrels, human)
    output = Output(per_query, inputs, directory=True)
    several = label_sets(qrels) is not None
    try:
        settings = bound(options, "fastndcg.spark.evaluate")
        settings["human_qrels"] = _as_arrow(human)
        judged = load_judgments(_as_arrow(qrels), opts)
        if several:
            names = list(judged)
            sets = _Sets(list(judged.values()), [run_output(output, j) for j in range(len(names))],
                         names)
        elif human is None:
            sets = _Sets([judged[None]], [output])
        else:
            sets = _Sets([judged[None], load_human(settings["human_qrels"], opts, judged[None])],
                         [output, Output(False, [])], list(HUMAN_SETS), ppi=True)
        done = None
        if read:
            done = _read(spark, text, roles, opts, sets, partitions, batch_rows)
            if done is None:  # not sorted by query: shuffle it
                _check_input_order(opts.ties, order, unsorted=text)
                df, describe, _ = _dataframe(text, spark)
                describe += " (not sorted by query: shuffled by Spark)"
        if done is None:
            done = _run(spark, df, describe, roles, opts, sets, order, partitions, batch_rows)
        sts, lining, describe, schemas = done
        reports = _reports(sts, lining, opts, sets, describe, schemas, settings)
        seconds = time.perf_counter() - started
        if several:
            for r in reports:
                r.seconds = seconds
            return LabelSets(dict(zip(names, reports)),
                             output.commit(set_parts(names, reports, output)), seconds,
                             reports[0].source)
    except BaseException:
        output.abort()
        raise
    reports[0].seconds = seconds
    return reports[0]


def _run(spark, df, describe: str, roles: dict, opts: Options, sets: _Sets,
         order: str | None, partitions: int | None, batch_rows: int) -> tuple:
    """The shuffle path: rows hashed to partitions by query, sorted, scored under every
    set; as :func:`_read` returns (each query is whole in one partition)."""
    from pyspark.sql import functions as F

    schema = _arrow_schema(df)
    columns = list(roles) + ([opts.weight] if opts.weight is not None and opts.weight not in roles
                             else [])
    io.check_columns(schema, roles, describe)
    for param, extra in (("weight", opts.weight),):
        if extra is not None and extra not in schema.names:
            raise ValueError(f"{param}={V.shown(extra)}: column not found in {describe}; it has "
                             f"columns {', '.join(map(repr, schema.names))}")
    schemas = _schemas(schema, opts, sets)
    task = _task(opts, schemas, sets, batch_rows)
    sc = spark.sparkContext
    qrels_bc = _broadcast(sc, sets)
    picked = df.select(*columns)  # (order= is one of the roles' columns)
    n = partitions or int(spark.conf.get("spark.sql.shuffle.partitions"))
    grouped = picked.repartition(n, F.col(opts.query)).sortWithinPartitions(
        *([opts.query] + ([order] if order else [])))
    payload_col = "fastndcg_payload"
    try:
        rows = _collect(grouped.mapInArrow(_score_task(pickle.dumps(task), qrels_bc, payload_col),
                                           f"{payload_col} binary"))
    finally:
        if qrels_bc is not None:
            qrels_bc.unpersist()
    # each query is in one partition: no edges to stitch, only the merge
    items = [_unpack(pickle.loads(row[payload_col])) for row in rows]
    sts, lining = _stitched(items, opts, sets, schemas)
    return sts, lining, describe, schemas



def compare(source, systems, *, spark=None, order: str | None = None,
            partitions: int | None = None, batch_rows: int = COALESCE_ROWS,
            progress: bool = False, **kwargs) -> Comparison:
    """:func:`fastndcg.compare` in Spark: the same arguments, the same
    :class:`~fastndcg.Comparison`, bit for bit.

    The log is read as :func:`evaluate` reads it (a Parquet path sorted by query by
    the executors themselves, anything else through Spark's shuffle by query); each
    task scores every system on its whole queries and returns mergeable sums
    (:mod:`fastndcg._compare.paired`), which the driver merges exactly before it runs the
    tests. Up to 1,000,000 queries the tasks send their per-query values as well and
    the query-level methods run on them; above, the bucket methods (see
    :mod:`fastndcg.compare`), with memory flat in the number of queries.

    Parameters
    ----------
    source : a Spark DataFrame, a table name or a Parquet path (as for :func:`evaluate`):
        a log whose score columns are the systems.
    systems : the score columns (a list, or a dict {name: column}); at least two.
    spark, order, partitions, batch_rows : as for :func:`evaluate`.
    **kwargs : :func:`fastndcg.compare`'s arguments (``baseline``, ``segment``,
        ``k``, ``n_resamples``, ``method``, ...) and evaluation options; with
        ``qrels=`` the log's documents are judged by them (and ``human_qrels=``
        adds the prediction-powered differences, from sums merged exactly). Runs
        (a file a system) are compared on one machine. Every argument is checked, by
        the checks of :func:`fastndcg.compare`, before any Spark job or session is started; a keyword it
        does not take is refused by name (TypeError).

    Example
    -------
    >>> import fastndcg.spark                                        # doctest: +SKIP
    >>> cmp = fastndcg.spark.compare("logs/", ["score_a", "score_b"], k=10)  # doctest: +SKIP
    """
    _require()
    started = time.perf_counter()
    progress = V.flag(progress, "progress")
    check_log_only(source, "fastndcg.spark.compare")
    # every argument checked before any work (batch_rows as evaluate checks it)
    st = settings(systems, "fastndcg.spark.compare", batch_rows=batch_rows, **kwargs)
    opts_list, roles, plan = prepare(source, st)
    roles = _with_order(order, roles)
    if order is not None:
        opts_list = [dataclasses.replace(o, order=order) for o in opts_list]
    if partitions is not None:
        V.count(partitions, "partitions", hi=1 << 20, fix="about 2-4 per core is usual")
    spark = _session(spark)
    scorer = paired_scorer(opts_list, plan, st)
    opts = opts_list[0]
    read = _is_path(source)
    if not read:
        _check_input_order(opts.ties, order)
    task = _task(opts, [], None, batch_rows, paired=scorer)
    out = None
    if read:
        text = V.input_path(source, "source")
        inputs = io.input_paths(text)
        out = _read_paired(spark, text, roles, task, partitions)
        if out is None:
            _check_input_order(opts.ties, order, unsorted=text)
            df, describe, _ = _dataframe(text, spark)
            describe += " (not sorted by query: shuffled by Spark)"
    else:
        df, describe, inputs = _dataframe(source, spark)
    if out is None:
        out = _shuffle_paired(spark, df, describe, roles, task, order, partitions)
    stats, totals, describe = out
    check_nonempty(totals.n_rows, describe, None, None)
    return result(st, stats, system_reports(totals, plan, describe, inputs), started,
                  tuple(inputs), progress)


def _read_paired(spark, source: str, roles: dict, task: _Task, partitions: int | None):
    """The read path of a comparison: (Stats, Totals, description), or None when the
    log is not sorted by query."""
    sc = spark.sparkContext
    pieces, schema, describe, _ = list_parquet(source, roles, PARTITION_ROWS,
                                               min_pieces=partitions or sc.defaultParallelism)
    ctx = Context(task.opts, list(roles), schema, None, task.batch_rows, False, None)
    tasks = sc.parallelize(range(len(pieces)), len(pieces)).mapPartitions(
        _read_task(pickle.dumps(task), pickle.dumps((pieces, [ctx])), None))
    items = [_unpack(pickle.loads(b)) for b in _collect(tasks)]
    stats, totals, ordered, _ = merge_pieces(_in_order(items), task.paired)
    return (stats, totals, describe) if ordered else None


def _shuffle_paired(spark, df, describe: str, roles: dict, task: _Task, order: str | None,
                    partitions: int | None):
    """The shuffle path of a comparison: rows brought together by query, each
    partition scored into Stats."""
    from pyspark.sql import functions as F

    io.check_columns(_arrow_schema(df), roles, describe)
    query = task.opts.query
    n = partitions or int(spark.conf.get("spark.sql.shuffle.partitions"))
    grouped = df.select(*list(roles)).repartition(n, F.col(query)).sortWithinPartitions(
        *([query] + ([order] if order else [])))
    payload_col = "fastndcg_payload"
    rows = _collect(grouped.mapInArrow(_score_task(pickle.dumps(task), None, payload_col),
                                       f"{payload_col} binary"))
    items = [_unpack(pickle.loads(row[payload_col])) for row in rows]
    stats, totals, _, _ = merge_pieces(_in_order(items), task.paired)
    return stats, totals, describe
