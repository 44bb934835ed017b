"""The same evaluation on a Dask cluster (optional extra: ``pip install fastndcg[dask]``).

:func:`evaluate` takes the options of :func:`fastndcg.evaluate` and returns the
same :class:`~fastndcg.report.Report`, with per-query values bit-identical to the
single-machine path: each partition is scored by
:func:`fastndcg.partition.score_partition`, the function that scores the whole log
on one machine, and nothing is implemented twice.

How the work is cut and put back together:

* **Partitions.** A Parquet file is one partition, or several when it holds more
  than ``partition_rows`` rows (cut at row-group boundaries); a Dask DataFrame
  keeps its partitions. Files are listed and their footers read on the client
  (local paths or any fsspec URL: ``s3://``, ``gs://``, ``hdfs://``, ...), so a
  missing or damaged file fails the run before any work starts, naming the file.
* **Queries straddling partitions** are merged, not shuffled: a partition's first
  and last runs of rows may continue in its neighbours, so a task scores
  everything between them and returns the two edge runs unscored; the client
  stitches the edges of consecutive partitions (at most two small queries per
  partition) and scores them with the same scorer. A shuffle by query id would
  move every row over the network to fix a few queries per partition, and would
  lose the order of rows inside a query that ``ties="stable"`` depends on.
* **Scattered queries** (rows of one id far apart): when the run ids are not in
  increasing order across the whole log, tasks hash the run ids of each
  partition into buckets, one task per bucket finds the ids seen twice, the rows
  of those queries are read again and each is scored whole, and the parts of
  per-query results that hold their fragments are rewritten (first appearance
  kept), as on one machine.
* **Qrels mode.** The judgments are read once on the client and handed to the
  workers as one task's result, which the scheduler computes again if the worker
  holding it dies (scattered data would be lost with it); they are small next to
  the run. Judged queries missing from the run are found by OR-ing the tasks'
  "seen" masks.
* **Prediction-powered means** (``human_qrels=``): each task returns, with its
  results under the LLM's and the human judgments, the exact sums of the means
  of its queries (:class:`~fastndcg.ppi.Lining`, a few kilobytes); the client
  merges them, adds the stitched queries, and takes scattered queries'
  fragments out and puts them in whole: the bits of one machine.
* **Results.** With ``per_query=PATH`` (a directory; created when missing) each
  task writes its part of the per-query results there itself; parts are staged
  in a hidden directory and moved into place when the run succeeded, so a
  failed run leaves no partial output. With ``None`` the parts are gathered to
  the client as one table; with ``False`` nothing is kept. Means come from the
  merged :class:`~fastndcg.report.Totals` of the tasks.
* **Faults.** Tasks are pure and write their parts under a temporary name, then
  rename: when a worker dies, Dask runs its lost tasks again elsewhere and the
  answer is complete and the same. An error in the data (a damaged file, a bad
  value) fails the whole run with that error.
* **Compiling.** Numba compiles each kernel once per worker process, not per
  task; the compiled code is cached on disk (``FASTNDCG_CACHE_DIR``), and a
  worker plugin loads the kernels when a worker starts.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pyarrow as pa

from . import _validate as V
from . import io
from ._arrow import as_numpy
from .chunks import regroup
from .options import bound, takes_options
from .partition import explain_columns
from .ppi import Lining
from .options import label_sets
from .partition import (Options, PartitionResult, Scorer, SetScorer, check_options,
                        read_as, score_sets)
from .qrels import Qrels, load_qrels
from .output import Output
from .parts import Part, PartWriter, result_schema
from .report import LabelSets, Report
from .totals import Totals
from .scattered import Fixed, duplicates_in, patch, rescore
from ._compare.arguments import check_log_only, settings
from ._compare.comparison import Comparison
from ._evaluate import (HUMAN_SETS, check_finished, check_human_beside, check_nonempty,
                       check_scored, finish, id_type, judgment_paths, load_human,
                       load_judgments, open_run, run_output, set_parts)
from ._compare.paired import PairedScorer, merge_pieces, paired_partition
from ._compare.stream import paired_scorer, prepare, result, system_reports
from .pieces import (PARTITION_ROWS, Context, Piece, list_parquet, piece_batches,
                     score_edges, score_piece_sets, stitch)

__all__ = ["evaluate", "compare", "WarmKernels"]



def _require():
    try:
        import distributed  # noqa: F401 - only to say what is missing
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("fastndcg.dask needs Dask's distributed scheduler: "
                          "pip install 'fastndcg[dask]'") from None


# --------------------------------------------------------------------------- tasks

def _set_threads() -> None:
    """Numba threads = the worker's threads, so worker processes do not oversubscribe."""
    try:
        from distributed import get_worker
        import numba
        numba.set_num_threads(max(1, min(numba.config.NUMBA_NUM_THREADS,
                                         get_worker().state.nthreads)))
    except (ImportError, ValueError, AttributeError):
        pass


def _score_piece(piece: Piece, data, ctxs: list, qrels: list, slot: int, lined: bool
                 ) -> tuple[list[tuple[PartitionResult, Part]], Lining | None]:
    """The piece scored under each label set (a ``(PartitionResult, Part)`` a set)
    and, when ``lined`` (two sets: the LLM's and the human judgments), the
    prediction-powered sums of its whole queries (a few kilobytes)."""
    _set_threads()
    lining = Lining(ctxs[0].opts.names) if lined else None
    return score_piece_sets(piece, data, ctxs, qrels, slot, lining), lining


def _piece_run_ids(piece: Piece, data, ctx: Context, skip_head: bool, n_buckets: int) -> list:
    """The piece's run ids (its head left out when it continues the previous
    piece), hashed into ``n_buckets`` arrays."""
    from ._arrow import id_hash
    from .chunks import run_ids

    ids = list(run_ids(piece_batches(piece, data, ctx, [ctx.opts.query]), ctx.opts.query))
    if not ids:
        return [None] * n_buckets
    ids = pa.concat_arrays(ids)
    if skip_head:
        ids = ids.slice(1)
    bucket = (id_hash(ids) % np.uint64(n_buckets)).astype(np.int64)
    return [ids.filter(pa.array(bucket == b)) for b in range(n_buckets)]


def _bucket_duplicates(*parts) -> pa.Array | None:
    parts = [p for p in parts if p is not None and len(p)]
    return duplicates_in(pa.concat_arrays(parts)) if parts else None


def _piece_rows(piece: Piece, data, ctx: Context, dup: pa.Array) -> pa.Table | None:
    """The piece's rows of the scattered queries, in source order."""
    import pyarrow.compute as pc
    from ._arrow import plain_ids

    out = []
    for batch in piece_batches(piece, data, ctx):
        ids = plain_ids(batch.column(ctx.opts.query))
        if ids.type != dup.type:
            ids = ids.cast(dup.type)
        keep = pc.is_in(ids, value_set=dup)
        if pc.any(keep).as_py():
            out.append(batch.filter(keep))
    return pa.Table.from_batches(out) if out else None


def _part_holds(part: Part, dup: pa.Array) -> np.ndarray:
    """Which scattered ids appear in ``part``."""
    import pyarrow.compute as pc

    found = np.zeros(len(dup), bool)
    for batch, _ in part.iter_batches():
        ids = batch.column(0)
        if ids.type != dup.type:
            ids = ids.cast(dup.type)
        at = as_numpy(pc.index_in(ids, value_set=dup).drop_null(), zero_copy_only=True)
        at = at.astype(np.int64)
        found[at] = True
    return found


def _patch_part(part: Part, fixed: Fixed, home: np.ndarray, path: str | None) -> tuple[Part, Totals]:
    writer = PartWriter(part.schema, path, keep=True)
    try:
        totals = patch(part, writer, fixed, home)
    except BaseException:
        writer.abort()
        raise
    new = writer.close()
    part.remove()
    return new, totals


def _fragment_totals(piece: Piece, data, ctxs: list, qrels: list, dup: pa.Array, lined: bool
                     ) -> tuple[list[Totals], Lining | None]:
    """Totals of the piece's interior runs of scattered queries (scored as the first
    pass scored them) under each label set, to be taken out of the means when no
    results are kept; with ``lined``, their prediction-powered sums too (added by
    the first pass as they are here, so taken out exactly)."""
    _set_threads()
    writers = [PartWriter(c.result_schema, None, keep=False) for c in ctxs]
    lining = Lining(ctxs[0].opts.names) if lined else None
    results = score_sets(piece_batches(piece, data, ctxs[0]),
                         [Scorer(c.opts, q) for c, q in zip(ctxs, qrels)], writers,
                         edges=True, only=dup, on_scored=lining)
    return [r.totals for r in results], lining


try:  # the plugin base class, when distributed is installed
    from distributed.diagnostics.plugin import WorkerPlugin as _WorkerPlugin
except ImportError:  # pragma: no cover
    _WorkerPlugin = object


class WarmKernels(_WorkerPlugin):
    """A Dask worker plugin that loads (or compiles, the first time) every variant
    of fastndcg's kernels (:func:`fastndcg.warmup`) when a worker starts, so no task
    pays for it.

    >>> from distributed import Client            # doctest: +SKIP
    >>> Client("tcp://scheduler:8786").register_plugin(WarmKernels())  # doctest: +SKIP
    """

    name = "fastndcg-warm-kernels"
    idempotent = True

    def setup(self, worker=None) -> None:
        from ._cache import CACHE
        from ._warmup import warmup

        # every kernel variant, loaded from the cache (about a second) or compiled
        # into it; worker processes sharing the cache wait for the one compiling a
        # variant and load it (fastndcg warmup in the image avoids the compiling).
        # Without a disk cache, tasks compile only what they use.
        if CACHE:
            warmup()

    def teardown(self, worker=None) -> None:
        pass


# --------------------------------------------------------------------------- client side

def _check_client(client, workers: int | None) -> None:
    if workers is not None:
        cores = os.cpu_count() or 1  # a local cluster: processes on this machine
        V.count(workers, "workers", hi=4 * cores, fix=f"this machine has {cores} cores, and one "
                f"worker process per core is best; for a bigger cluster start one and pass "
                f"client= (--scheduler)")
    if client is not None:
        from distributed import Client

        if not isinstance(client, Client):
            address = client if isinstance(client, str) else "tcp://host:8786"
            raise TypeError(f"client must be a distributed.Client, got {V.shown(client)} "
                            f"({type(client).__name__}); for a scheduler address write "
                            f"client=distributed.Client({V.shown(address)})")
        if workers is not None:
            raise ValueError(f"give client= or workers=, not both: workers={workers} starts a "
                             f"local cluster, client= uses an existing one")


def _client(client, workers: int | None):
    """The given client, the current one, or a new LocalCluster (closed by the caller)."""
    from distributed import Client, LocalCluster, get_client

    if client is not None:
        return client, None
    if workers is None:
        try:
            return get_client(), None
        except ValueError:
            pass
    n = workers or max(1, os.cpu_count() or 1)
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    return Client(cluster), cluster


def _pieces_of(source, roles: dict, opts: Options, batch_rows: int, partition_rows: int,
               client) -> tuple[list, pa.Schema, str, list, bool]:
    """(pieces, schema, description, input paths, needs_scatter)."""
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    module = type(source).__module__.split(".")[0]
    if module in ("dask", "dask_expr") and hasattr(source, "to_delayed"):
        meta = pa.Schema.from_pandas(source._meta, preserve_index=False)
        io.check_columns(meta, roles, "the Dask DataFrame")
        frames = client.compute(source[list(roles)].to_delayed())
        schema = pa.schema([meta.field(c) for c in roles])
        return [Piece("frame", data=f) for f in frames], schema, "the Dask DataFrame", [], False
    if isinstance(source, str) and ("://" in source or not opts.qrels_mode
                                    or not os.path.isfile(source) or io.is_parquet_file(source)):
        pieces, schema, describe, inputs = list_parquet(source, roles, partition_rows)
        return pieces, schema, describe, inputs, False
    # a TREC run file, or an in-memory table: read here, sent in slices
    src = open_run(source, opts, roles, batch_rows)
    table = pa.Table.from_batches(list(src.batches()),
                                  schema=pa.schema([src.schema.field(c) for c in roles]))
    n = max(1, -(-table.num_rows // partition_rows))
    step = -(-table.num_rows // n) if table.num_rows else 0
    # slices copied out (a pickled slice carries its whole table), sent inside the
    # tasks: the scheduler can send them again when a worker dies (scattered data
    # would be lost with it)
    pieces = [Piece("table", data=table.take(pa.array(np.arange(i * step, min(table.num_rows,
                                                                           (i + 1) * step)))),
                     row0=i * step) for i in range(n)]
    return pieces, table.schema, src.describe, io.input_paths(source), True


@takes_options("fastndcg.dask.evaluate")
def evaluate(source, *, client=None, workers: int | None = None, per_query=None,
             batch_rows: int = 1 << 20, partition_rows: int = PARTITION_ROWS,
             progress: bool = False, **options) -> Report | LabelSets:
    """:func:`fastndcg.evaluate` on a Dask cluster: the same options, the same Report.

    With several label sets (``qrels={"human": ..., "llm": ...}``) each partition is
    read and ranked once and scored under every set, and the result is the
    :class:`~fastndcg.report.LabelSets` that :func:`fastndcg.evaluate` gives,
    number for number (the per-query parts a set after another, a first column
    ``labels``).

    With ``human_qrels=`` (``qrels=`` an LLM's judgments) each partition is scored
    under both and returns the exact sums of the prediction-powered means
    (:class:`fastndcg.ppi.Lining`, a few kilobytes), which the client merges:
    ``report.ppi`` is :func:`fastndcg.evaluate`'s to the last bit, however the log
    is cut, and the checks and their messages are the same.

    Parameters
    ----------
    source : a Parquet file, directory or glob (a local path or any fsspec URL), a
        Dask DataFrame, or (in qrels mode) a TREC run file.
    client : a ``distributed.Client``; default: the current client, or else a new
        ``LocalCluster`` of ``workers`` processes (one thread each), closed at the end.
    workers : start a LocalCluster of this many worker processes (ignores a current
        client).
    per_query : None (gathered to the client as one table), False (none kept) or a
        directory (created when missing) that the workers write Parquet parts to;
        on a multi-machine cluster it must be a path every worker can write
        (a shared file system).
    partition_rows : a Parquet file with more rows is cut into partitions of about
        this many rows, at row-group boundaries.
    **options : the evaluation options (:data:`fastndcg.options.OPTIONS`), as
        :func:`fastndcg.evaluate` takes them.
    Everything else: as :func:`fastndcg.evaluate`.

    Example
    -------
    >>> import fastndcg.dask                                        # doctest: +SKIP
    >>> report = fastndcg.dask.evaluate("logs/", workers=2, k=[1, 10], per_query="out/")  # doctest: +SKIP
    >>> report = fastndcg.dask.evaluate("run.txt", qrels="llm.txt", human_qrels="human.txt",
    ...                                 workers=2, k=10)               # doctest: +SKIP
    >>> report.ppi.measures["ndcg@10"].estimate                      # doctest: +SKIP
    """
    _require()
    started = time.perf_counter()
    opts, roles = check_options(per_query=per_query, batch_rows=batch_rows, **options)
    qrels, human = options.get("qrels"), options.get("human_qrels")
    check_human_beside(qrels, human)
    V.count(partition_rows, "partition_rows", hi=1 << 40, fix="rows a partition holds; the "
            "default 16777216 suits most clusters")
    progress = V.flag(progress, "progress")
    if isinstance(source, (str, os.PathLike)):  # "" would read the working directory
        source = V.input_path(source, "source")  # (a URL is not stat-ed: passed on)
    _check_client(client, workers)
    inputs = [] if not isinstance(source, (str, os.PathLike)) else io.input_paths(source)
    inputs += judgment_paths(qrels, human)
    output = Output(per_query, inputs, directory=True)
    several = label_sets(qrels) is not None
    client_, cluster = None, None
    lining = None
    try:
        judged = load_judgments(qrels, opts)
        names = list(judged)
        sets = list(judged.values())
        outputs = [run_output(output, j) for j in range(len(names))] if several else [output]
        if human is not None:  # scored under the LLM's judgments and the human ones
            sets.append(load_human(human, opts, judged[None]))
            outputs.append(Output(False, []))
            names, lining = HUMAN_SETS, Lining(opts.names)
        client_, cluster = _client(client, workers)
        reports = _run(client_, source, roles, opts, sets, outputs, batch_rows,
                       partition_rows, names if several or lining is not None else None,
                       lining)
        if several:
            seconds = time.perf_counter() - started
            for r in reports:
                r.seconds = seconds
            return LabelSets(dict(zip(names, reports)),
                             output.commit(set_parts(names, reports, output)), seconds,
                             reports[0].source)
    except BaseException:
        output.abort()
        raise
    finally:
        if cluster is not None:
            client_.close()
            cluster.close()
    report = reports[0]
    if lining is not None:
        options = bound(options)
        report.ppi = lining.estimate(options["confidence"], options["ppi"])
    report.seconds = time.perf_counter() - started
    return report


def _run(client, source, roles: dict, opts: Options, judged: list, outputs: list,
         batch_rows: int, partition_rows: int, names: list | None = None,
         lining: Lining | None = None) -> list[Report]:
    """The log ``source`` scored on the cluster under each of ``judged`` (the Qrels
    of a label set each, or ``[None]`` in list mode), each partition read and
    ranked once, set ``j``'s per-query results to ``outputs[j]``: one Report a set.
    ``names``: the label sets' names (for messages), None for one set.
    ``lining``: with two sets (the LLM's judgments, the human ones), the
    prediction-powered sums, which the partitions' sums are merged into, exactly:
    the stitched queries are added here, and scattered queries' fragments taken
    out and the whole queries added, so they are those of one pass over the log."""
    _warm(client)
    pieces, schema, describe, inputs, _ = _pieces_of(source, roles, opts, batch_rows,
                                                     partition_rows, client)
    opts = read_as(opts, source)
    ctxs = [Context(opts, list(roles), schema,
                    result_schema(opts.query, id_type(schema, opts.query, j, opts.complete),
                                  opts.names, weight=opts.weight, extra=explain_columns(opts)),
                    batch_rows, out.kind != "none", out.staging if out.kind == "path" else None)
            for j, out in zip(judged, outputs)]
    qrels_f = _shared(client, judged)
    lined = lining is not None
    futures = [client.submit(_score_piece, p.meta(), p.data, ctxs, qrels_f, 2 * i + 1, lined,
                             pure=False, retries=0)
               for i, p in enumerate(pieces)]
    results = []  # per piece: (PartitionResult, Part) a set
    for piece_results, piece_lining in _gather(client, futures):
        results.append(piece_results)
        if lined:
            lining.merge(piece_lining)

    # stitch the edges of consecutive pieces into whole queries, scored here
    scorers = [Scorer(opts, j) for j in judged]
    sts = [stitch([r[j] for r in results], opts, judged[j], outputs[j], ctxs[j].result_schema)
           for j in range(len(judged))]
    n_scattered = 0
    dup = None
    if not sts[0].ordered:  # the run's order: the same under every set
        dup = _duplicates(client, pieces, ctxs[0], sts[0].joined,
                          sum(r[0][0].n_runs for r in results))
    if lined:  # the stitched queries (scattered ones are added whole below)
        edges = Lining(opts.names, skip=dup)
        score_edges(sts[0].edges, scorers, edges)
        lining.merge(edges)
        if opts.complete:  # the judged queries the run lacks, under each set
            lining([scorer.missing(st.seen) for scorer, st in zip(scorers, sts)])
    if dup is not None:
        n_scattered = len(dup)
        _scattered(client, pieces, ctxs, qrels_f, scorers, sts, dup, outputs, lining)
    if lined:  # every set checked, and the human sample, before anything is committed
        for j, st in enumerate(sts):
            check_finished(st.totals(opts.names, opts.weight is not None), st.n_rows, opts,
                           st.seen, st.unjudged, describe, names[j])
        check_scored(lining, judged[1], judged[0] is None)
    return [finish(st.totals(opts.names, opts.weight is not None), st.n_rows, opts, st.seen,
                   st.unjudged, [st.parts[s] for s in sorted(st.parts)], out, describe,
                   ctx.result_schema, n_missing=st.n_missing, n_scattered=n_scattered,
                   labels=None if names is None else names[j])
            for j, (st, out, ctx) in enumerate(zip(sts, outputs, ctxs))]


def _scattered(client, pieces: list, ctxs: list, qrels_f, scorers: list, sts: list,
               dup: pa.Array, outputs: list, lining: Lining | None) -> None:
    """The queries ``dup`` whose rows are not adjacent, read again and scored whole,
    put in place of their fragments: in each set's parts (rewritten), or, with no
    results kept, in its totals (the fragments' totals taken out); and in the
    prediction-powered sums ``lining`` (the fragments' sums taken out)."""
    opts = ctxs[0].opts
    dup_f = _shared(client, dup)
    rows = _gather(client, [client.submit(_piece_rows, p.meta(), p.data, ctxs[0], dup_f,
                                          pure=False) for p in pieces])
    scored = rescore((b for t in rows if t is not None for b in t.to_batches()),
                     opts.query, dup, SetScorer(scorers))
    kept = [out.kind != "none" for out in outputs]
    frag = []
    if not all(kept) or lining is not None:
        frag = _gather(client, [client.submit(_fragment_totals, p.meta(), p.data, ctxs,
                                              qrels_f, dup_f, lining is not None, pure=False)
                                for p in pieces])
    if lining is not None:
        for _, piece_lining in frag:
            lining.subtract(piece_lining)
        for each in scored:
            lining(each)
    for j, st in enumerate(sts):
        fixed = Fixed(dup, [each[j] for each in scored], len(opts.names))
        if kept[j]:
            _repair_parts(client, st.parts, st.slot_totals, fixed, dup, outputs[j])
            continue
        # no parts to rewrite: take the fragments' totals out, put the whole queries in
        taken = [totals[j] for totals, _ in frag]
        for tables in st.edges.done.values():
            for t in tables:
                taken.append(_only(scorers[j].score_chunk(regroup(t, opts.query)), dup,
                                   opts.names))
        total = Totals.of_rows(opts.names, fixed.whole())
        for t in taken:
            total = total.subtract(t)
        st.slot_totals[-1] = total


def _duplicates(client, pieces: list, ctx: Context, joined: list, n_runs: int
                ) -> pa.Array | None:
    """The query ids that label more than one run across the pieces (None: none)."""
    n_buckets = max(1, min(256, -(-n_runs // (2 << 20))))
    maps = [client.submit(_piece_run_ids, p.meta(), p.data, ctx, joined[i], n_buckets, pure=False)
            for i, p in enumerate(pieces)]
    reduces = [client.submit(_bucket_duplicates,
                             *[client.submit(_getitem, m, b, pure=False) for m in maps],
                             pure=False) for b in range(n_buckets)]
    found = [d for d in _gather(client, reduces) if d is not None]
    return pa.concat_arrays(found) if found else None


def _compare_piece(piece: Piece, data, ctx: Context, scorer: PairedScorer):
    _set_threads()
    return paired_partition(piece_batches(piece, data, ctx), scorer, edges=True, row0=piece.row0)


def compare(source, systems, *, client=None, workers: int | None = None,
            partition_rows: int = PARTITION_ROWS, batch_rows: int = 1 << 20,
            progress: bool = False, **kwargs) -> Comparison:
    """:func:`fastndcg.compare` on a Dask cluster: the same arguments, the same
    :class:`~fastndcg.Comparison`.

    Each partition (as for :func:`evaluate`) scores every system on its whole
    queries and returns mergeable sums (:mod:`fastndcg._compare.paired`); the client stitches
    queries that straddle partitions, merges the sums exactly and runs the tests.
    Up to 1,000,000 queries the partitions send their per-query values as well and
    the query-level methods run on them; above, the bucket methods (see
    :mod:`fastndcg.compare`), with memory flat in the number of queries. The answer
    is bit-identical to :func:`fastndcg.compare` on one machine.

    Parameters
    ----------
    source : a Parquet file, directory or glob, a Dask DataFrame, or a pyarrow Table:
        a log whose score columns are the systems, each query's rows together.
    systems : the score columns (a list, or a dict {name: column}); at least two.
    client, workers, partition_rows, batch_rows : as for :func:`evaluate`.
    **kwargs : :func:`fastndcg.compare`'s arguments (``baseline``, ``segment``,
        ``k``, ``n_resamples``, ``method``, ...) and evaluation options; with
        ``qrels=`` the log's documents are judged by them (and ``human_qrels=``
        adds the prediction-powered differences, from sums merged exactly). Runs
        (a file a system) are compared on one machine. Every argument is checked, by
        the checks of :func:`fastndcg.compare`, before any task is started or the cluster reached; a keyword it
        does not take is refused by name (TypeError).

    Example
    -------
    >>> import fastndcg.dask                                        # doctest: +SKIP
    >>> cmp = fastndcg.dask.compare("logs/", ["score_a", "score_b"], workers=2)  # doctest: +SKIP
    >>> cmp.tests.select(["system", "mean_diff", "p_t_adj"]).to_pylist()  # doctest: +SKIP
    """
    _require()
    started = time.perf_counter()
    progress = V.flag(progress, "progress")
    check_log_only(source, "fastndcg.dask.compare")
    # every argument checked before any work (batch_rows as evaluate checks it)
    st = settings(systems, "fastndcg.dask.compare", batch_rows=batch_rows, **kwargs)
    V.count(partition_rows, "partition_rows", hi=1 << 40, fix="rows a partition holds; the "
            "default 16777216 suits most clusters")
    if isinstance(source, (str, os.PathLike)):
        source = V.input_path(source, "source")
    _check_client(client, workers)
    opts_list, roles, plan = prepare(source, st)
    scorer = paired_scorer(opts_list, plan, st)
    client_, cluster = None, None
    try:
        client_, cluster = _client(client, workers)
        _warm(client_)
        pieces, schema, describe, inputs, _ = _pieces_of(source, roles, opts_list[0],
                                                         batch_rows, partition_rows, client_)
        ctx = Context(opts_list[0], list(roles), schema, None, batch_rows, False, None)
        scorer_f = _shared(client_, scorer)
        results = _gather(client_, [client_.submit(_compare_piece, p.meta(), p.data, ctx,
                                                   scorer_f, pure=False, retries=0)
                                    for p in pieces])
        stats, totals, ordered, joined = merge_pieces(results, scorer)
        if not ordered:
            dup = _duplicates(client_, pieces, ctx, joined, sum(r.n_runs for r, _ in results))
            if dup is not None:
                raise ValueError(
                    f"the rows of query {dup[0].as_py()!r} are not adjacent in {describe} "
                    f"({len(dup):,} queries are split like this); a comparison on a cluster "
                    f"needs each query's rows together: sort the log by "
                    f"{opts_list[0].query!r}, or compare it on one machine")
    finally:
        if cluster is not None:
            client_.close()
            cluster.close()
    check_nonempty(totals.n_rows, describe, None, None)
    return result(st, stats, system_reports(totals, plan, describe, inputs), started,
                  tuple(inputs), progress)


def _warm(client) -> None:
    try:
        client.register_plugin(WarmKernels(), name=WarmKernels.name)
    except (AttributeError, TypeError):  # older distributed
        client.register_worker_plugin(WarmKernels(), name=WarmKernels.name)


def _keep(value):
    return value


def _shared(client, value):
    """A future of ``value`` (the qrels, a stitching table) that the tasks of a run
    read, and that survives the loss of a worker: a task holding ``value`` in the
    graph, which the scheduler runs again where its result is lost. Data given to
    ``Client.scatter`` cannot be recovered: a worker dying as it held the only copy
    failed the whole run ("lost scattered data")."""
    return client.submit(_keep, value, pure=False)


def _gather(client, futures: list) -> list:
    """``client.gather``; on an error, the other tasks are cancelled and waited for
    (a task already running keeps going) before the error is raised, so nothing
    writes into the output after it has been cleaned up."""
    try:
        return client.gather(futures)
    except BaseException:
        keys = {f.key for f in futures}
        client.cancel(futures)

        def busy(dask_worker, keys=keys) -> int:
            return sum(k in dask_worker.state.tasks for k in keys)

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if not any(client.run(busy).values()):
                    break
            except Exception:  # the cluster itself is gone: nothing left to wait for
                break
            time.sleep(0.05)
        raise


def _getitem(seq, i):
    return seq[i]


def _only(s, dup: pa.Array, names: list[str]) -> Totals:
    """The totals of the queries of ``s`` that are scattered."""
    import pyarrow.compute as pc
    ids = s.ids if s.ids.type == dup.type else s.ids.cast(dup.type)
    mask = as_numpy(pc.is_in(ids, value_set=dup))
    return Totals.of_rows(names, s.select(mask))


def _repair_parts(client, parts: dict[int, Part], slot_totals: dict[int, Totals], fixed: Fixed,
                  dup: pa.Array, output: Output) -> None:
    """Rewrite the parts that hold fragments of scattered queries (first appearance
    kept, across parts in slot order), updating ``parts`` and ``slot_totals``.
    Parts on disk are rewritten by tasks; parts in memory here."""
    slots = sorted(parts)
    on_disk = [s for s in slots if parts[s].path is not None]
    fixed_f = _shared(client, fixed) if on_disk else None
    dup_f = _shared(client, dup) if on_disk else None
    held = dict(zip(on_disk, _gather(client, [client.submit(_part_holds, parts[s], dup_f,
                                                          pure=False) for s in on_disk])))
    held.update({s: _part_holds(parts[s], dup) for s in slots if s not in held})
    claimed = np.zeros(len(dup), bool)
    futures = {}
    for s in slots:
        if not held[s].any():
            continue
        home = held[s] & ~claimed
        claimed |= held[s]
        if parts[s].path is None:
            parts[s], slot_totals[s] = _patch_part(parts[s], fixed, home, None)
        else:
            path = os.path.splitext(parts[s].path)[0] + "-repaired.parquet"  # the name only
            futures[s] = client.submit(_patch_part, parts[s], fixed_f, home, path, pure=False)
    for s, (part, total) in zip(futures, _gather(client, list(futures.values()))):
        parts[s], slot_totals[s] = part, total


