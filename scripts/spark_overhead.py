"""Spark's overhead, measured: fastndcg.spark.evaluate against fastndcg.evaluate on the same
Parquet file, a window-function NDCG@10 written as a Spark user would, and the floor
Spark sets (repartition + sortWithinPartitions + a mapInArrow that does nothing);
medians of 3 in one Spark session. Usage: python -m fastndcg synth --queries 40000 --out
/tmp/sp_2m.parquet, then python scripts/spark_overhead.py [PATH]."""
import time, statistics, pyarrow as pa
from pyspark.sql import SparkSession, functions as F, Window
import fastndcg, fastndcg.spark as fs
spark = SparkSession.builder.master('local[2]').config('spark.ui.enabled','false').config("spark.sql.shuffle.partitions", "4").config("spark.driver.memory","4g").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
import sys
P = sys.argv[1] if len(sys.argv) > 1 else '/tmp/sp_2m.parquet'
fs.evaluate(P, spark=spark, k=10, per_query=False)  # warm workers
def floor():
    df = spark.read.parquet(P).select("query_id","score","label")
    def noop(it):
        n = 0
        for b in it: n += b.num_rows
        yield pa.RecordBatch.from_pydict({"n": [n]})
    return df.repartition(4, "query_id").sortWithinPartitions("query_id").mapInArrow(noop, "n long").collect()
def window():
    df = spark.read.parquet(P)
    w = Window.partitionBy("query_id").orderBy(F.desc("score"), F.asc("doc_id"))
    wi = Window.partitionBy("query_id").orderBy(F.desc("label"))
    d = (df.withColumn("r", F.row_number().over(w)).withColumn("ri", F.row_number().over(wi))
           .withColumn("g", F.pow(2.0, F.col("label")) - 1)
           .groupBy("query_id").agg(
               F.sum(F.when(F.col("r") <= 10, F.col("g") / F.log2(F.col("r") + 1)).otherwise(0)).alias("dcg"),
               F.sum(F.when(F.col("ri") <= 10, F.col("g") / F.log2(F.col("ri") + 1)).otherwise(0)).alias("idcg")))
    return d.select(F.avg(F.when(F.col("idcg") > 0, F.col("dcg") / F.col("idcg")).otherwise(0))).collect()
res = {}
for name, fn in [("fastndcg.spark", lambda: fs.evaluate(P, spark=spark, k=10, per_query=False)),
                 ("fastndcg.evaluate", lambda: fastndcg.evaluate(P, k=10, per_query=False)),
                 ("spark window NDCG@10", window), ("shuffle+mapInArrow floor", floor)]:
    ts = []
    for _ in range(3):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    res[name] = statistics.median(ts)
for k, v in res.items():
    print(f"{k:28s} {v:7.2f} s", flush=True)
print("spark/evaluate", res["fastndcg.spark"]/res["fastndcg.evaluate"])
print("window/spark", res["spark window NDCG@10"]/res["fastndcg.spark"])
print("spark/floor", res["fastndcg.spark"]/res["shuffle+mapInArrow floor"])
