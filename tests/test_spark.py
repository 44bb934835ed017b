"""``fastndcg.spark.evaluate`` on a real local Spark (``local[2]`` with task retries):
per-query results bit-identical to ``fastndcg.evaluate`` on the same data, list and
qrels modes, every tie rule, queries straddling Spark's Arrow batches (set to 7
rows), a shuffled input, the real trec_eval test files, bad input as clear errors,
and a Python worker killed mid-run (Spark retries the task; the answer is unchanged).

Skipped only when no Java runtime is installed (Spark needs one).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fastndcg

if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs a Java runtime, and none is installed", allow_module_level=True)
pyspark = pytest.importorskip("pyspark", reason="pip install 'fastndcg[spark]'")

import fastndcg.spark as fspark  # noqa: E402

TREC = Path(__file__).parent / "data" / "trec_eval"


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    from pyspark.sql import SparkSession
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (SparkSession.builder.master("local[2, 3]")  # 3 attempts a task
               .appName("fastndcg-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "3")
               .config("spark.sql.execution.arrow.maxRecordsPerBatch", "7")  # queries straddle
               .config("spark.driver.memory", "1g")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def tie_heavy_log(n_queries: int = 60, seed: int = 3) -> pa.Table:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 12, n_queries)
    q = np.repeat(np.arange(n_queries, dtype=np.int64) * 7 + 1, sizes)
    n = len(q)
    return pa.table({"query_id": q, "doc_id": np.arange(n, dtype=np.int64),
                     "score": rng.integers(0, 4, n).astype(np.float64) / 4,  # ties
                     "label": rng.integers(0, 4, n).astype(np.int64),
                     "pos": np.arange(n, dtype=np.int64),
                     "w": np.repeat(rng.integers(1, 5, n_queries).astype(np.float64), sizes)})


def same(got, want) -> None:
    """Per-query tables equal row for row (sorted by query id), means to rounding."""
    key = got.per_query.column_names[0]
    a, b = got.per_query.sort_by(key), want.per_query.sort_by(key)
    assert a.column_names == b.column_names
    for name in a.column_names:
        assert a[name].equals(b[name]), name
    assert got.n_queries == want.n_queries and got.n_rows == want.n_rows
    for name, value in want.mean.items():
        assert got.mean[name] == pytest.approx(value, rel=1e-13, abs=1e-15, nan_ok=True), name


@pytest.mark.parametrize("ties", ["average", "optimistic", "pessimistic", "stable"])
def test_list_mode_every_tie_rule(spark, tmp_path, ties):
    table = tie_heavy_log()
    path = tmp_path / "log.parquet"
    pq.write_table(table, path, row_group_size=50)
    opts = dict(k=[1, 3, 10, None], ties=ties, measure=None)
    want = fastndcg.evaluate(table.drop(["pos", "w"]), **opts)
    extra = {"order": "pos"} if ties == "stable" else {}
    same(fspark.evaluate(str(path), spark=spark, **opts, **extra), want)


def test_measures_weights_explain_and_a_shuffled_dataframe(spark):
    table = tie_heavy_log(80, seed=5)
    shuffled = table.take(np.random.default_rng(0).permutation(table.num_rows))
    opts = dict(measure="ndcg_cut.3,10 map P.5 recip_rank", weight="w", explain=True)
    want = fastndcg.evaluate(table.drop(["pos"]), **opts)
    df = spark.createDataFrame(shuffled.to_pandas())
    same(fspark.evaluate(df, spark=spark, **opts), want)


def test_stable_ties_need_an_order_column(spark, tmp_path):
    path = tmp_path / "log.parquet"
    pq.write_table(tie_heavy_log(), path)
    with pytest.raises(ValueError, match=r"ties='stable' .* give order="):
        fspark.evaluate(str(path), spark=spark, ties="stable")
    with pytest.raises(ValueError, match=r"order='rank': column not found"):
        fspark.evaluate(str(path), spark=spark, ties="stable", order="rank")


@pytest.mark.parametrize("complete", [False, True])
def test_qrels_mode_on_trec_eval_test_files(spark, complete):
    opts = dict(qrels=str(TREC / "qrels.test"), k=[5, 10, None], gain="linear", ties="trec",
                complete=complete)
    run = fastndcg.io.read_trec_run(TREC / "results.test")
    want = fastndcg.evaluate(str(TREC / "results.test"), **opts)
    got = fspark.evaluate(spark.createDataFrame(run.to_pandas()), spark=spark, **opts)
    same(got, want)
    assert (got.n_unjudged, got.n_missing) == (want.n_unjudged, want.n_missing)


def test_qrels_as_a_spark_dataframe_and_preset(spark):
    run = fastndcg.io.read_trec_run(TREC / "results.test")
    qrels = fastndcg.io.read_trec_qrels(TREC / "qrels.test")
    opts = dict(preset="trec_eval", measure="ndcg_cut.5,10 ndcg map")
    want = fastndcg.evaluate(str(TREC / "results.test"), qrels=str(TREC / "qrels.test"), **opts)
    got = fspark.evaluate(spark.createDataFrame(run.to_pandas()), spark=spark,
                          qrels=spark.createDataFrame(qrels.to_pandas()), **opts)
    same(got, want)


def test_per_query_directory_and_none(spark, tmp_path):
    table = tie_heavy_log()
    df = spark.createDataFrame(table.to_pandas())
    want = fastndcg.evaluate(table, k=[3, 10])
    out = tmp_path / "per_query"
    got = fspark.evaluate(df, spark=spark, k=[3, 10], per_query=str(out))
    assert got.per_query_path == str(out)
    same(got, want)
    assert not [f for f in os.listdir(out) if not f.startswith("part-")]  # no staging left
    none = fspark.evaluate(df, spark=spark, k=[3, 10], per_query=False)
    assert none.mean == pytest.approx(want.mean, rel=1e-13)


def test_bad_input_is_a_clear_error(spark, tmp_path):
    table = tie_heavy_log()
    df = spark.createDataFrame(table.to_pandas())
    with pytest.raises(ValueError, match=r"column 'label' \(labels\) not found"):
        fspark.evaluate(df.drop("label"), spark=spark)
    with pytest.raises(TypeError, match=r"column 'label' .* has type string"):
        fspark.evaluate(df.withColumn("label", df["label"].cast("string")), spark=spark)
    nulls = df.withColumn("score", pyspark.sql.functions.when(df["pos"] == 5, None)
                          .otherwise(df["score"]))
    with pytest.raises(ValueError, match=r"score.*null"):
        fspark.evaluate(nulls, spark=spark)
    with pytest.raises(FileNotFoundError, match=r"source '.*nope.parquet' does not exist"):
        fspark.evaluate(str(tmp_path / "nope.parquet"), spark=spark)
    with pytest.raises(TypeError, match=r"source must be a Spark DataFrame"):
        fspark.evaluate(42, spark=spark)
    with pytest.raises(TypeError, match=r"spark must be a pyspark.sql.SparkSession"):
        fspark.evaluate(df, spark="local[2]")
    with pytest.raises(ValueError, match=r"k must be >= 1, got 0"):
        fspark.evaluate(df, spark=spark, k=0)


def test_a_killed_worker_is_retried_and_the_answer_is_unchanged(spark, tmp_path):
    """A Python worker dies (os._exit) in its first attempt at one partition, after
    reading some rows; Spark retries the task and the report is the same."""
    table = tie_heavy_log(90, seed=8)
    want = fastndcg.evaluate(table, k=[1, 5])
    marker = str(tmp_path / "killed-once")

    def die_once(batches):
        from pyspark import TaskContext
        for i, b in enumerate(batches):
            if i == 2 and TaskContext.get().partitionId() == 1 and not os.path.exists(marker):
                open(marker, "w").close()
                os._exit(1)
            yield b

    df = spark.createDataFrame(table.to_pandas()).repartition(3)
    flaky = df.mapInArrow(die_once, df.schema)
    same(fspark.evaluate(flaky, spark=spark, k=[1, 5]), want)
    assert os.path.exists(marker)  # the worker did die once


def test_a_job_that_cannot_finish_is_one_clear_error(spark):
    """Every attempt of a task dies: Spark gives up, and the error says so in a line."""
    df = spark.createDataFrame(tie_heavy_log().to_pandas())

    def always_die(batches):
        os._exit(1)
        yield from batches

    with pytest.raises(fspark.SparkJobFailed, match=r"^the Spark job failed: \S"):
        fspark.evaluate(df.mapInArrow(always_die, df.schema), spark=spark)


def test_import_fastndcg_never_imports_pyspark():
    code = "import fastndcg, sys; fastndcg.evaluate; print('pyspark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
