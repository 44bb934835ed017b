"""fastndcg in Spark against Spark's own ways of computing NDCG@10, in one session.

Group ``spark``: a synthetic Parquet log of ~10 rows a query (1..19; quick: 20,000
queries, ~200k rows; full: 2,000,000 queries, ~20M rows), NDCG@10 with exp2 gains
and score ties broken by the row's position in the file (document ids ascend
within a query in file order, so that is also "doc_id ascending"). Spark runs
``local[2]`` (one executor thread per core of this machine's 2), with
``spark.sql.shuffle.partitions`` = 4:

* ``fastndcg.spark.evaluate(path, ties="stable")``: the read path (tasks read
  pieces of the file with pyarrow; no row passes through the JVM), and the same
  with ``order="pos"`` (each query's rows sorted by it on the executors);
* ``fastndcg.spark.evaluate(spark.read.parquet(path), order="pos")``: the shuffle
  path a DataFrame takes (``repartition`` + ``sortWithinPartitions`` +
  ``mapInArrow``); ``pos`` is the row's position in the file, added by
  ``pyarrow`` when the log is written (the window query orders by ``doc_id``);
* peer: a window-function NDCG@10 written as a Spark user would
  (``row_number()`` over (score desc, doc_id) and over label desc, the sums in a
  ``groupBy``, the mean);
* peer: ``pyspark.mllib.evaluation.RankingMetrics(rdd).ndcgAt(10)`` fed (ranked
  doc ids, relevant doc ids, their grades) built with ``collect_list`` +
  ``sort_array``. It returns binary-gain NDCG whatever the grades (measured:
  it equals fastndcg with ``gain=[0, 1, 1, 1, 1]`` to 1e-15), so its answer is
  checked against that and its time is not comparable in meaning, only in cost;
* bound: the same ``repartition`` + ``sortWithinPartitions`` followed by a
  ``mapInArrow`` that only counts the rows it receives (the floor Spark sets for
  the shuffle path);
* bound: ``fastndcg.evaluate(path)`` on one machine (Spark's overhead is
  fastndcg.spark's time over this one).

Every answer is checked before anything is timed: the window query's and the
Spark paths' means against ``fastndcg.evaluate`` (to 1e-12), RankingMetrics'
against fastndcg's binary-gain mean. Medians of 3 rounds each.

``test_spark_worker_memory_is_flat`` measures (does not time) the peak resident
memory of Spark's Python workers on the log and on one with 10x the queries
(sampled every 10 ms with psutil), on both paths, with per-query results written
to a directory; the figures go to ``extra_info``.

Heavy (Spark's start-up and its peers take long whatever the size): run with
``FASTNDCG_BENCH_FULL=1 python -m pytest benchmarks/test_bench_spark.py
--benchmark-enable --benchmark-json=spark.json``.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmarks import _data, _files

pytestmark = pytest.mark.heavy

if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs a Java runtime, and none is installed", allow_module_level=True)
pytest.importorskip("pyspark", reason="pip install 'fastndcg[spark]'")

import fastndcg  # noqa: E402
import fastndcg.spark as fspark  # noqa: E402

QUERIES = {"quick": 20_000, "full": 2_000_000}
K = 10
ROUNDS = 3
TOL_MEAN = 1e-12
GROUP = "spark"


def _queries() -> int:
    return QUERIES["quick" if _data.is_quick() else "full"]


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (SparkSession.builder.master("local[2]").appName("fastndcg-bench")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.driver.memory", "6g")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _with_position(folder, n_queries: int) -> tuple[str, int]:
    """The synthetic log with a ``pos`` column (its row number), cached beside it."""
    src, rows = _files.cached_log(folder, n_queries, 1 << 20, mean_docs=10)
    path = src.replace(".parquet", "-pos.parquet")
    if not os.path.exists(path) or pq.ParquetFile(path).metadata.num_rows != rows:
        f = pq.ParquetFile(src)
        with pq.ParquetWriter(path + ".tmp", f.schema_arrow.append(pa.field("pos", pa.int64()))) as w:
            at = 0
            for g in range(f.num_row_groups):
                t = f.read_row_group(g)
                w.write_table(t.append_column("pos", pa.array(np.arange(at, at + t.num_rows))))
                at += t.num_rows
        os.replace(path + ".tmp", path)
    return path, rows


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spark-bench") if _data.is_quick() else _files.cache_dir()
    path, rows = _with_position(folder, _queries())
    want = fastndcg.evaluate(path, k=K, ties="stable", per_query=False).mean[f"ndcg@{K}"]
    binary = fastndcg.evaluate(path, k=K, ties="stable", gain=[0, 1, 1, 1, 1],
                               per_query=False).mean[f"ndcg@{K}"]
    return path, rows, want, binary


# ---------------------------------------------------------------- the systems

def window_ndcg(spark, path: str) -> float:
    from pyspark.sql import Window, functions as F
    df = spark.read.parquet(path)
    ranked = Window.partitionBy("query_id").orderBy(F.desc("score"), F.asc("doc_id"))
    ideal = Window.partitionBy("query_id").orderBy(F.desc("label"))
    gain = F.pow(F.lit(2.0), F.col("label")) - 1
    per_query = (df.withColumn("r", F.row_number().over(ranked))
                   .withColumn("ri", F.row_number().over(ideal))
                   .groupBy("query_id").agg(
                       F.sum(F.when(F.col("r") <= K, gain / F.log2(F.col("r") + 1))
                             .otherwise(0)).alias("dcg"),
                       F.sum(F.when(F.col("ri") <= K, gain / F.log2(F.col("ri") + 1))
                             .otherwise(0)).alias("idcg")))
    return per_query.select(F.avg(F.when(F.col("idcg") > 0, F.col("dcg") / F.col("idcg"))
                                  .otherwise(0))).collect()[0][0]


def ranking_metrics_ndcg(spark, path: str) -> float:
    from pyspark.mllib.evaluation import RankingMetrics
    from pyspark.sql import functions as F
    df = spark.read.parquet(path)
    ranked = df.groupBy("query_id").agg(F.sort_array(F.collect_list(F.struct(
        (-F.col("score")).alias("s"), F.col("doc_id").alias("d"),
        F.col("label").alias("l")))).alias("r"))
    lists = ranked.select(F.col("r.d").alias("pred"),
                          F.expr("transform(filter(r, x -> x.l > 0), x -> x.d)").alias("gt"),
                          F.expr("transform(filter(r, x -> x.l > 0), x -> double(x.l))")
                          .alias("rel"))
    return RankingMetrics(lists.rdd.map(lambda r: (r.pred, r.gt, r.rel))).ndcgAt(K)


def floor(spark, path: str) -> int:
    df = spark.read.parquet(path).select("query_id", "doc_id", "score", "label", "pos")

    def count(batches):
        n = 0
        for b in batches:
            n += b.num_rows
        yield pa.RecordBatch.from_pydict({"n": [n]})

    grouped = df.repartition(4, "query_id").sortWithinPartitions("query_id", "pos")
    return sum(r.n for r in grouped.mapInArrow(count, "n long").collect())


def spark_read(spark, path: str) -> float:
    return fspark.evaluate(path, spark=spark, k=K, ties="stable",
                           per_query=False).mean[f"ndcg@{K}"]


def spark_read_ordered(spark, path: str) -> float:
    return fspark.evaluate(path, spark=spark, k=K, ties="stable", order="pos",
                           per_query=False).mean[f"ndcg@{K}"]


def spark_shuffle(spark, path: str) -> float:
    return fspark.evaluate(spark.read.parquet(path), spark=spark, k=K, ties="stable",
                           order="pos", per_query=False).mean[f"ndcg@{K}"]


def one_machine(spark, path: str) -> float:
    return fastndcg.evaluate(path, k=K, ties="stable", per_query=False).mean[f"ndcg@{K}"]


SYSTEMS = {
    "fastndcg.spark (path, read by the executors)": (spark_read, "fastndcg", "path", "want"),
    "fastndcg.spark (path with order=pos, read by the executors)": (spark_read_ordered,
                                                                    "fastndcg", "path", "want"),
    "fastndcg.spark (DataFrame, shuffled)": (spark_shuffle, "fastndcg", "dataframe", "want"),
    "Spark window functions": (window_ndcg, "peer", "", "want"),
    "Spark RankingMetrics.ndcgAt (binary gain)": (ranking_metrics_ndcg, "peer", "", "binary"),
    "repartition + sortWithinPartitions + empty mapInArrow": (floor, "bound", "dataframe", "rows"),
    "fastndcg.evaluate (one machine)": (one_machine, "bound", "path", "want"),
}


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_spark_ndcg(benchmark, spark, log, name):
    fn, role, case, answer = SYSTEMS[name]
    path, rows, want, binary = log
    expected = {"want": want, "binary": binary, "rows": rows}[answer]
    got = fn(spark, path)  # checked first (and Spark's workers warmed)
    assert abs(got - expected) <= (0 if answer == "rows" else TOL_MEAN), (name, got, expected)
    benchmark.group = GROUP
    result = benchmark.pedantic(fn, args=(spark, path), rounds=ROUNDS, iterations=1)
    assert abs(result - expected) <= (0 if answer == "rows" else TOL_MEAN)
    _data.describe(benchmark, name, role, case, k=[K], queries=_queries())
    _data.record_rows_per_s(benchmark, rows, _queries())


# ---------------------------------------------------------------- memory

class _PeakRSS:
    """Peak resident memory of Spark's Python worker processes while it runs."""

    def __init__(self) -> None:
        import psutil
        self.psutil, self.peak, self._stop = psutil, 0, threading.Event()

    def _workers(self):
        for p in self.psutil.process_iter(["cmdline"]):
            cmd = " ".join(p.info["cmdline"] or [])
            if "pyspark.daemon" in cmd or "pyspark.worker" in cmd:
                yield p

    def _poll(self) -> None:
        while not self._stop.is_set():
            for p in self._workers():
                try:
                    self.peak = max(self.peak, p.memory_info().rss)
                except self.psutil.Error:
                    pass
            time.sleep(0.01)

    def __enter__(self):
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def test_spark_worker_memory_is_flat(benchmark, tmp_path_factory):
    """Peak RSS of a Python worker, the log vs 10x its queries, both paths; each
    measurement in a new session (new worker processes)."""
    from pyspark.sql import SparkSession
    pytest.importorskip("psutil")
    folder = tmp_path_factory.mktemp("spark-mem") if _data.is_quick() else _files.cache_dir()
    n = _queries() // 10
    sizes = {"1x": _with_position(folder, n)[0], "10x": _with_position(folder, 10 * n)[0]}
    peaks = {}
    for case, run in (("path", lambda s, p, out: fspark.evaluate(
                          p, spark=s, k=K, ties="stable", per_query=out)),
                      ("dataframe", lambda s, p, out: fspark.evaluate(
                          s.read.parquet(p), spark=s, k=K, ties="stable", order="pos",
                          per_query=out))):
        for size, path in sizes.items():
            session = (SparkSession.builder.master("local[2]").appName("fastndcg-mem")
                       .config("spark.ui.enabled", "false")
                       .config("spark.sql.shuffle.partitions", "4")
                       .config("spark.driver.memory", "6g").getOrCreate())
            session.sparkContext.setLogLevel("ERROR")
            try:
                out = str(tmp_path_factory.mktemp("per-query"))
                shutil.rmtree(out)
                with _PeakRSS() as rss:
                    run(session, path, out)
                peaks[f"{case} {size}"] = rss.peak
            finally:
                session.stop()
    benchmark.group = "spark-memory"
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    _data.describe(benchmark, "peak RSS of a Spark Python worker", "fastndcg", "memory",
                   worker_peak_rss=peaks, queries={"1x": n, "10x": 10 * n},
                   ratio={c: peaks[f"{c} 10x"] / peaks[f"{c} 1x"] for c in ("path", "dataframe")})
    for c in ("path", "dataframe"):
        print(f"{c}: peak worker RSS {peaks[f'{c} 1x'] / 2**20:.0f} MiB on {n:,} queries, "
              f"{peaks[f'{c} 10x'] / 2**20:.0f} MiB on {10 * n:,} "
              f"({peaks[f'{c} 10x'] / peaks[f'{c} 1x']:.2f}x)")


# ---------------------------------------------------------------- comparing two rankers

def _two_systems(path: str) -> str:
    """The log with a second score column ``score_b`` (the first plus seeded noise)."""
    out = path.replace(".parquet", "-b.parquet")
    if not os.path.exists(out) or pq.ParquetFile(out).metadata.num_rows != \
            pq.ParquetFile(path).metadata.num_rows:
        f = pq.ParquetFile(path)
        rng = np.random.default_rng(7)
        schema = f.schema_arrow.append(pa.field("score_b", pa.float32()))
        with pq.ParquetWriter(out + ".tmp", schema) as w:
            for g in range(f.num_row_groups):
                t = f.read_row_group(g)
                noise = rng.normal(0, 0.3, t.num_rows)
                b = (t.column("score").to_numpy().astype(np.float64) + noise).astype(np.float32)
                w.write_table(t.append_column("score_b", pa.array(b)))
        os.replace(out + ".tmp", out)
    return out


def sql_means_and_interval(spark, path: str) -> tuple:
    """Spark SQL: NDCG@10 of both systems per query (window functions), their means
    and a normal-approximation 95% interval of the mean difference."""
    from pyspark.sql import Window, functions as F
    df = spark.read.parquet(path)
    gain = F.pow(F.lit(2.0), F.col("label")) - 1
    ideal = Window.partitionBy("query_id").orderBy(F.desc("label"))
    ra = Window.partitionBy("query_id").orderBy(F.desc("score"), F.asc("doc_id"))
    rb = Window.partitionBy("query_id").orderBy(F.desc("score_b"), F.asc("doc_id"))

    def dcg(rank):
        return F.sum(F.when(F.col(rank) <= K, gain / F.log2(F.col(rank) + 1)).otherwise(0))

    q = (df.withColumn("ra", F.row_number().over(ra)).withColumn("rb", F.row_number().over(rb))
           .withColumn("ri", F.row_number().over(ideal))
           .groupBy("query_id").agg(dcg("ra").alias("da"), dcg("rb").alias("db"),
                                    dcg("ri").alias("di")))
    nd = q.select(F.when(F.col("di") > 0, F.col("da") / F.col("di")).otherwise(0).alias("a"),
                  F.when(F.col("di") > 0, F.col("db") / F.col("di")).otherwise(0).alias("b"))
    row = nd.select(F.avg("a"), F.avg("b"), F.stddev_samp(F.col("b") - F.col("a")),
                    F.count("*")).collect()[0]
    mean_a, mean_b, sd, n = row
    half = 1.959963984540054 * sd / n ** 0.5
    return mean_a, mean_b, (mean_b - mean_a - half, mean_b - mean_a + half)


def spark_compare(spark, path: str) -> tuple:
    c = fspark.compare(path, ["score", "score_b"], spark=spark, k=K, ties="stable")
    mean_a, mean_b = c.systems["mean"].to_pylist()
    return mean_a, mean_b, (c.tests["ci_low"][0].as_py(), c.tests["ci_high"][0].as_py())


@pytest.fixture(scope="module")
def compared(spark, log):
    path = _two_systems(log[0])
    want = fastndcg.compare(path, ["score", "score_b"], k=K, ties="stable", n_resamples=10)
    return path, want


@pytest.mark.benchmark(group="spark-compare")
@pytest.mark.parametrize("name", ["fastndcg.spark.compare (path, read by the executors)",
                                  "Spark SQL: two means and a normal interval"])
def test_spark_compare(benchmark, spark, compared, name):
    path, want = compared
    fn = spark_compare if name.startswith("fastndcg") else sql_means_and_interval
    mean_a, mean_b, _ = fn(spark, path)  # warm, and the same means first
    assert abs(mean_a - want.systems["mean"][0].as_py()) < TOL_MEAN
    assert abs(mean_b - want.systems["mean"][1].as_py()) < TOL_MEAN
    benchmark.pedantic(fn, args=(spark, path), rounds=ROUNDS, iterations=1)
    _data.describe(benchmark, system=name, role="fastndcg" if fn is spark_compare else "peer",
                   case="2 systems")
    benchmark.extra_info.update(queries=_queries(), target_ratio=5)
