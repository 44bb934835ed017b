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

import inprocess

if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs a Java runtime, and none is installed", allow_module_level=True)
pyspark = pytest.importorskip("pyspark", reason="pip install 'fastndcg[spark]'")

import fastndcg.spark as fspark  # noqa: E402

TREC = Path(__file__).parent / "data" / "trec_eval"
# the Spark session is the suite's shared one (the ``spark`` fixture of tests/conftest.py)


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


@pytest.fixture
def no_shuffle(monkeypatch):
    """Fails a test that reaches the shuffle path (the read path must serve it)."""
    def shuffle(*args, **kwargs):
        raise AssertionError("the shuffle path ran")
    monkeypatch.setattr(fspark, "_run", shuffle)
    monkeypatch.setattr(fspark, "_shuffle_paired", shuffle)


@pytest.mark.parametrize("ties", ["average", "optimistic", "pessimistic", "stable"])
def test_list_mode_every_tie_rule_shuffled(spark, tmp_path, ties):
    table = tie_heavy_log()
    path = tmp_path / "log.parquet"
    pq.write_table(table, path, row_group_size=50)
    opts = dict(k=[1, 3, 10, None], ties=ties, measure=None)
    want = fastndcg.evaluate(table.drop(["pos", "w"]), **opts)
    extra = {"order": "pos"} if ties == "stable" else {}
    df = spark.read.parquet(str(path))
    same(fspark.evaluate(df, spark=spark, **opts, **extra), want)


@pytest.mark.parametrize("ties", ["average", "optimistic", "pessimistic", "stable"])
def test_a_path_is_read_by_the_executors(spark, tmp_path, no_shuffle, ties):
    """Files cut into pieces of a few row groups; queries straddle row groups, pieces
    and files; ``stable`` follows file order with no order column."""
    table = tie_heavy_log(120, seed=11)
    folder = tmp_path / "log"
    folder.mkdir()
    for i, (a, b) in enumerate([(0, 101), (101, 405), (405, table.num_rows)]):
        pq.write_table(table.slice(a, b - a), folder / f"f{i}.parquet", row_group_size=23)
    opts = dict(k=[1, 3, 10, None], ties=ties, measure=None)
    want = fastndcg.evaluate(table.drop(["pos", "w"]), **opts)
    for partitions in (None, 2, 7):
        got = fspark.evaluate(str(folder), spark=spark, partitions=partitions, **opts)
        same(got, want)
        assert "shuffled" not in got.source


@pytest.mark.parametrize("ties", ["stable", "ranx"])
def test_a_sorted_path_with_order_is_read_by_the_executors(spark, tmp_path, no_shuffle, ties):
    """Each query's rows scrambled in the files (queries still together, in increasing
    order), ``pos`` their input order: the executors read the path in place and sort
    each query by ``order=`` before ranking, also the queries that straddle pieces."""
    table = tie_heavy_log(120, seed=12)
    q = table["query_id"].to_numpy()
    scrambled = table.take(pa.array(np.lexsort((np.random.default_rng(3).random(len(q)), q))))
    folder = tmp_path / "log"
    folder.mkdir()
    pq.write_table(scrambled.slice(0, 301), folder / "a.parquet", row_group_size=17)
    pq.write_table(scrambled.slice(301), folder / "b.parquet", row_group_size=17)
    opts = dict(k=[1, 3, 10, None], ties=ties, measure=None)
    want = fastndcg.evaluate(table.drop(["pos", "w"]), **opts)
    for partitions in (None, 5):
        got = fspark.evaluate(str(folder), spark=spark, order="pos", partitions=partitions,
                              **opts)
        same(got, want)
        assert "shuffled" not in got.source
    # the file order scores otherwise: the test can tell
    file_order = fspark.evaluate(str(folder), spark=spark, **opts)
    assert not file_order.per_query.sort_by("query_id").equals(want.per_query.sort_by("query_id"))
    with pytest.raises(ValueError, match=r"order='score' is also the score column"):
        fspark.evaluate(str(folder), spark=spark, order="score", **opts)


def test_read_path_qrels_weights_explain_per_query_directory(spark, tmp_path, no_shuffle):
    run = fastndcg.io.read_trec_run(TREC / "results.test")
    path = tmp_path / "run.parquet"
    pq.write_table(run, path, row_group_size=40)
    opts = dict(qrels=str(TREC / "qrels.test"), gain="linear", ties="trec", complete=True,
                measure="ndcg_cut.5,10 ndcg map", explain=True)
    want = fastndcg.evaluate(str(TREC / "results.test"), **opts)
    out = tmp_path / "per_query"
    got = fspark.evaluate(str(path), spark=spark, partitions=5, per_query=str(out), **opts)
    same(got, want)
    assert (got.n_unjudged, got.n_missing) == (want.n_unjudged, want.n_missing)
    assert not [f for f in os.listdir(out) if not f.startswith("part-")]
    frame = fspark.per_query_dataframe(got, spark)  # lazy: Spark reads the parts
    assert frame.count() == want.n_queries
    a, b = frame.toArrow().sort_by("query_id"), want.per_query.sort_by("query_id")
    assert a.column_names == b.column_names
    for name in b.column_names:
        assert a[name].to_pylist() == b[name].to_pylist(), name
    with pytest.raises(ValueError, match=r"report: its per-query results were not written"):
        fspark.per_query_dataframe(want, spark)

    table = tie_heavy_log(70, seed=2)
    pq.write_table(table, tmp_path / "w.parquet", row_group_size=30)
    wopts = dict(measure="ndcg_cut.3 recip_rank", weight="w")
    got = fspark.evaluate(str(tmp_path / "w.parquet"), spark=spark, per_query=False, **wopts)
    assert got.mean == pytest.approx(fastndcg.evaluate(table, **wopts).mean, rel=1e-13)


def test_an_unsorted_path_is_shuffled_with_the_same_answer(spark, tmp_path):
    table = tie_heavy_log(90, seed=4)
    runs = np.unique(table["query_id"].to_numpy(), return_index=True)[1]
    # whole queries in a scrambled order, written as two files: ids not increasing
    order = np.random.default_rng(1).permutation(len(runs))
    bounds = np.append(runs, table.num_rows)
    rows = np.concatenate([np.arange(bounds[q], bounds[q + 1]) for q in order])
    scrambled = table.take(pa.array(rows))
    folder = tmp_path / "log"
    folder.mkdir()
    pq.write_table(scrambled.slice(0, 200), folder / "a.parquet", row_group_size=31)
    pq.write_table(scrambled.slice(200), folder / "b.parquet", row_group_size=31)
    out = tmp_path / "per_query"
    got = fspark.evaluate(str(folder), spark=spark, k=[2, 10], per_query=str(out))
    same(got, fastndcg.evaluate(table, k=[2, 10]))
    assert "not sorted by query: shuffled by Spark" in got.source
    assert len(pq.read_table(out)) == got.n_queries  # the read path's parts were removed
    with pytest.raises(ValueError, match=r"not sorted by query.*ties='stable'.*order="):
        fspark.evaluate(str(folder), spark=spark, ties="stable")
    same(fspark.evaluate(str(folder), spark=spark, ties="stable", order="pos"),
         fastndcg.evaluate(scrambled.drop(["pos", "w"]).sort_by([("query_id", "ascending")]),
                           ties="stable"))


def test_measures_weights_explain_and_a_shuffled_dataframe(spark):
    table = tie_heavy_log(80, seed=5)
    shuffled = table.take(np.random.default_rng(0).permutation(table.num_rows))
    opts = dict(measure="ndcg_cut.3,10 map P.5 recip_rank", weight="w", explain=True)
    want = fastndcg.evaluate(table.drop(["pos"]), **opts)
    df = spark.createDataFrame(shuffled.to_pandas())
    same(fspark.evaluate(df, spark=spark, **opts), want)


def test_stable_ties_need_an_order_column_when_shuffled(spark, tmp_path):
    path = tmp_path / "log.parquet"
    pq.write_table(tie_heavy_log(), path)
    df = spark.read.parquet(str(path))
    with pytest.raises(ValueError, match=r"ties='stable' .* give order="):
        fspark.evaluate(df, spark=spark, ties="stable")
    with pytest.raises(ValueError, match=r"column .rank. \(the input order\) not found.*order="):
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
    opts = dict(preset="trec_eval", measure="ndcg_cut.5,10 ndcg map gm_bpref iprec_at_recall "
                                            "infAP ndcg_rel Rndcg ERR@20 RBP(rel=1) utility")
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


@pytest.mark.heavy
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


def test_spark_ranking_metrics_is_binary_gain_ndcg(spark):
    """What the documentation says of Spark's own NDCG, checked: given (ranked ids,
    relevant ids, their grades), ``RankingMetrics.ndcgAt`` is binary-gain NDCG."""
    from pyspark.mllib.evaluation import RankingMetrics
    table = tie_heavy_log(50, seed=9)
    pdf = table.to_pandas()
    lists = []
    for _, g in pdf.groupby("query_id", sort=True):
        g = g.sort_values(["score", "doc_id"], ascending=[False, True], kind="stable")
        rel = g[g.label > 0]
        lists.append((g.doc_id.tolist(), rel.doc_id.tolist(), rel.label.astype(float).tolist()))
    got = RankingMetrics(spark.sparkContext.parallelize(lists, 2)).ndcgAt(5)
    # rows are in doc id order within a query, so input order breaks ties as above
    binary = fastndcg.evaluate(table, k=5, ties="stable", gain=[0, 1, 1, 1]).mean["ndcg@5"]
    graded = fastndcg.evaluate(table, k=5, ties="stable").mean["ndcg@5"]
    assert got == pytest.approx(binary, rel=1e-14)
    assert abs(got - graded) > 1e-3


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    return subprocess.run([sys.executable, "-m", "fastndcg", "evaluate", "--spark", "local[2]",
                           *args], capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture
def spark_cli(spark, monkeypatch):
    """``fastndcg ... --spark local[2]`` in this process (tests/inprocess.py): its
    ``getOrCreate()`` finds the suite's session, so no second JVM starts; its ``stop()``
    at the end is recorded instead of done. Returns (run, stopped sessions)."""
    stopped = []
    monkeypatch.setattr(type(spark), "stop", lambda self: stopped.append(self))
    return (lambda *args: inprocess.run(args, env={"PYSPARK_PYTHON": sys.executable})), stopped


def test_command_line_on_spark_in_this_process(spark_cli, tmp_path):
    """The command's numbers and its one-line error, on the suite's session; the
    command stops the session it used. (Its own JVM, whose banner stays off the
    terminal: the heavy tests below.)"""
    import json
    run, stopped = spark_cli
    table = tie_heavy_log(40, seed=6)
    path = tmp_path / "log.parquet"
    pq.write_table(table, path, row_group_size=60)
    out = run("evaluate", path, "--spark", "local[2]", "-k", "3", "--format", "json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)["ndcg@3"]
    assert got == pytest.approx(fastndcg.evaluate(table, k=3).mean["ndcg@3"], rel=1e-13)
    assert len(stopped) == 1
    bad = run("evaluate", path, "--spark", "local[2]", "--label-col", "grade")
    assert bad.returncode == 1 and bad.stdout == ""
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and "'grade'" in lines[0] and "--label-col" in lines[0], bad.stderr
    assert len(stopped) == 2
    from test_compare import make_log
    table = make_log(300, n_systems=2, n_segments=1, seed=8)
    pq.write_table(table, path, row_group_size=100)
    out = run("compare", path, "--systems", "score_a,score_b", "--spark", "local[2]",
              "--resamples", "300", "--format", "json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    want = fastndcg.compare(table, ["score_a", "score_b"], n_resamples=300)
    assert [r["p_t"] for r in got["tests"]] == want.tests["p_t"].to_pylist()
    assert [r["ci_high"] for r in got["tests"]] == want.tests["ci_high"].to_pylist()
    assert len(stopped) == 3


@pytest.mark.heavy  # a JVM of its own, twice
def test_command_line_on_spark_reads_a_path_and_speaks_in_one_line(tmp_path):
    table = tie_heavy_log(40, seed=6)
    path = tmp_path / "log.parquet"
    pq.write_table(table, path, row_group_size=60)
    out = _cli(str(path), "-k", "3", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""  # Spark's banner and log go to a file, not to the terminal
    import json
    got = json.loads(out.stdout)["ndcg@3"]
    assert got == pytest.approx(fastndcg.evaluate(table, k=3).mean["ndcg@3"], rel=1e-13)
    bad = _cli(str(path), "--label-col", "grade")
    assert bad.returncode == 1 and bad.stdout == ""
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and "'grade'" in lines[0] and "--label-col" in lines[0], bad.stderr


# --------------------------------------------------------------------------- compare

@pytest.mark.parametrize("method", ["auto", "buckets"])
def test_compare_equals_one_machine_bit_for_bit(spark, tmp_path, no_shuffle, method):
    """A sorted path read by the executors (queries straddling the pieces) and a
    shuffled DataFrame give the one-machine Comparison, bit for bit."""
    from test_compare import make_log
    table = make_log(500, n_systems=3, n_segments=3, seed=4)
    path = tmp_path / "log.parquet"
    pq.write_table(table, path, row_group_size=113)
    systems = ["score_a", "score_b", "score_c"]
    kw = dict(k=[5, 10], segment="market", n_resamples=400, method=method)
    want = fastndcg.compare(table, systems, **kw)
    got = fspark.compare(str(path), systems, spark=spark, partitions=4, **kw)
    assert got.method == want.method == ("queries" if method == "auto" else "buckets")
    assert got.systems.equals(want.systems) and got.tests.equals(want.tests)


def test_compare_shuffled_dataframe_and_stable_ties(spark, tmp_path):
    from test_compare import make_log
    table = make_log(300, n_systems=2, n_segments=1, seed=6)
    table = table.append_column("pos", pa.array(np.arange(table.num_rows, dtype=np.int64)))
    kw = dict(n_resamples=300, method="buckets", ties="stable")
    want = fastndcg.compare(table, ["score_a", "score_b"], **kw)
    df = spark.createDataFrame(table.to_pandas())
    with pytest.raises(ValueError, match=r"ties='stable'.*order="):
        fspark.compare(df, ["score_a", "score_b"], spark=spark, **kw)
    got = fspark.compare(df, ["score_a", "score_b"], spark=spark, order="pos", **kw)
    assert got.tests.equals(want.tests) and got.systems.equals(want.systems)


@pytest.mark.heavy  # a JVM of its own
def test_compare_on_the_command_line_with_spark(tmp_path):
    from test_compare import make_log
    table = make_log(300, n_systems=2, n_segments=1, seed=8)
    path = tmp_path / "log.parquet"
    pq.write_table(table, path, row_group_size=100)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    out = subprocess.run([sys.executable, "-m", "fastndcg", "compare", str(path), "--systems",
                          "score_a,score_b", "--spark", "local[2]", "--resamples", "300",
                          "--format", "json"], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    import json
    got = json.loads(out.stdout)
    want = fastndcg.compare(table, ["score_a", "score_b"], n_resamples=300)
    assert [r["p_t"] for r in got["tests"]] == want.tests["p_t"].to_pylist()
    assert [r["ci_high"] for r in got["tests"]] == want.tests["ci_high"].to_pylist()


# --------------------------------------------------------------------------- judges

REAL = Path(__file__).parent / "data" / "real"
CORE_RUN = REAL / "runs" / "core18_title_rm3.run.gz"
CORE_QRELS = str(REAL / "qrels" / "qrels.core18.txt.gz")
JUDGE_MEASURES = "nDCG@10 AP P@10 RR"
SET_MEASURES = ["ndcg_cut.5,10", "map", "P.5,10", "recip_rank", "Rprec", "bpref"]


@pytest.fixture(scope="module")
def judges(tmp_path_factory):
    """The Core 2018 run (50 queries of 1,000 rows) written sorted by query in row
    groups of 1,500 rows, so queries straddle row groups, pieces and the two files;
    the same run less 6 queries (judged queries the run lacks); and the files of
    the prediction-powered benchmark: an LLM's qrels (core18's with 30% of the
    grades moved) and the true grades of 15 queries."""
    from benchmarks.test_bench_ppi import judge_files
    d = tmp_path_factory.mktemp("judges")
    llm, human = judge_files(str(d))
    run = fastndcg.io.read_trec_run(CORE_RUN).sort_by("query_id")  # (a stable sort)
    ids = pa.compute.unique(run["query_id"]).to_pylist()
    short = run.filter(pa.compute.invert(pa.compute.is_in(run["query_id"],
                                                          value_set=pa.array(ids[::8]))))
    folders = {}
    for name, table in (("run", run), ("short", short)):
        folder = d / name
        folder.mkdir()
        pq.write_table(table.slice(0, 20_500), folder / "a.parquet", row_group_size=1_500)
        pq.write_table(table.slice(20_500), folder / "b.parquet", row_group_size=1_500)
        folders[name] = str(folder)
    return dict(llm=llm, human=human, tables={"run": run, "short": short}, **folders)


def _bits(got: pa.Table, want: pa.Table) -> None:
    """Per-query tables equal value for value, to the bit, sorted by (labels,) query id."""
    keys = [c for c in ("labels", "query_id") if c in want.column_names]
    a, b = got.sort_by([(k, "ascending") for k in keys]), want.sort_by(
        [(k, "ascending") for k in keys])
    assert a.schema.remove_metadata() == b.schema.remove_metadata()
    for name in b.column_names:
        x, y = a[name].to_numpy(), b[name].to_numpy()
        if x.dtype.kind == "f":
            assert np.array_equal(x.view(np.int64), y.view(np.int64)), name
        else:
            assert np.array_equal(x, y), name


def _counts(got, want) -> None:
    for attr in ("n_queries", "n_rows", "n_zero_idcg", "n_unjudged", "n_missing", "qrels_mode",
                 "complete"):
        assert getattr(got, attr) == getattr(want, attr), attr


@pytest.mark.parametrize("where, complete", [("read", False), ("read", True),
                                             ("shuffle", False)])
def test_label_sets_equal_separate_calls_and_one_machine(spark, judges, request, where,
                                                          complete):
    """``qrels={name: ...}`` on Spark, each partition read and ranked once: every set's
    report equals the set's own ``fastndcg.spark.evaluate`` call to the bit, and
    ``fastndcg.evaluate``'s (per-query values to the bit, means to 1e-12: partial
    sums merged in another order). One set is a Spark DataFrame."""
    name = "short" if complete else "run"
    if where == "read":
        request.getfixturevalue("no_shuffle")
    source = judges[name] if where == "read" else spark.read.parquet(judges[name])
    human = fastndcg.io.read_trec_qrels(judges["human"])
    sets = {"truth": CORE_QRELS, "llm": judges["llm"],
            "human": spark.createDataFrame(human.to_pandas())}
    here = {"truth": CORE_QRELS, "llm": judges["llm"], "human": judges["human"]}
    opts = dict(preset="trec_eval", measure=SET_MEASURES, complete=complete)
    got = fspark.evaluate(source, spark=spark, qrels=sets, partitions=5, **opts)
    assert isinstance(got, fastndcg.LabelSets) and list(got.reports) == list(sets)
    want = fastndcg.evaluate(judges[name], qrels=here, **opts)
    assert got.per_query.column_names[0] == "labels"
    assert pa.compute.unique(got.per_query["labels"]).to_pylist() == list(sets)
    _bits(got.per_query, want.per_query)
    for set_name, qrels in sets.items():
        g, w = got[set_name], want[set_name]
        _counts(g, w)
        assert list(g.mean) == list(w.mean)
        for k, v in w.mean.items():
            assert g.mean[k] == pytest.approx(v, rel=1e-12, nan_ok=True), (set_name, k)
        alone = fspark.evaluate(source, spark=spark, qrels=qrels, partitions=5, **opts)
        assert g.mean == alone.mean  # the set's own Spark call: to the bit
        _counts(g, alone)
    assert got["truth"].mean != got["llm"].mean
    if complete:
        assert got["truth"].n_missing == 7


@pytest.mark.parametrize("where, complete, per_query", [
    ("read", False, None), ("read", True, "directory"), ("shuffle", False, False),
    ("shuffle", True, None)])
def test_ppi_equals_one_machine_to_the_bit(spark, judges, request, tmp_path, where, complete,
                                           per_query):
    """``human_qrels=`` on Spark: each partition returns the exact sums of its queries
    (the read path's stitched queries and complete=True's missing ones added on the
    driver), so ``report.ppi`` is one machine's to the bit; the report and its
    per-query results are the LLM's, as on one machine."""
    name = "short" if complete else "run"
    if where == "read":
        request.getfixturevalue("no_shuffle")
    source = judges[name] if where == "read" else spark.read.parquet(judges[name])
    human = judges["human"]
    if where == "shuffle":  # the human sample as a Spark DataFrame
        human = spark.createDataFrame(fastndcg.io.read_trec_qrels(human).to_pandas())
    opts = dict(qrels=judges["llm"], measure=JUDGE_MEASURES, complete=complete)
    if complete:
        opts.update(ppi=0.5, confidence=0.8)
    out = {"directory": str(tmp_path / "pq"), None: None, False: False}[per_query]
    got = fspark.evaluate(source, spark=spark, human_qrels=human, partitions=5, per_query=out,
                          **opts)
    want = fastndcg.evaluate(judges[name], human_qrels=judges["human"], **opts)
    assert got.ppi.to_dict() == want.ppi.to_dict()
    assert got.ppi.measures["ndcg@10"].n == want.ppi.measures["ndcg@10"].n > 10
    _counts(got, want)
    for k, v in want.mean.items():
        assert got.mean[k] == pytest.approx(v, rel=1e-12), k
    if per_query is False:
        assert got.per_query_path is None
    else:
        _bits(got.per_query, want.per_query)
    if per_query == "directory":
        assert sorted(os.listdir(out))[0].startswith("part-")
        assert not [f for f in os.listdir(out) if not f.startswith("part-")]


def _message(call) -> str:
    with pytest.raises(ValueError) as err:
        call()
    return str(err.value)


def test_judges_bad_input_as_on_one_machine(spark, judges, tmp_path):
    """A set that judges none of the run is named; a human sample of fewer than 2
    queries (found before the run is read, or only once it is scored), human
    judgments sharing no query, ``ppi`` and ``confidence`` out of range, label sets
    beside human_qrels: the messages of ``fastndcg.evaluate``. A failed run writes
    no per-query results."""
    df = spark.read.parquet(judges["run"])
    llm, human = judges["llm"], judges["human"]
    other = pa.table({"query_id": ["nosuch"], "doc_id": ["a"], "label": [1]})
    with pytest.raises(ValueError, match=r"none of the 50 queries of the Spark DataFrame has a "
                                         r"judgment in the qrels of label set 'llm'"):
        fspark.evaluate(df, spark=spark, qrels={"truth": CORE_QRELS, "llm": other}, k=10)
    first = open(human).readline().split()[0]
    one = tmp_path / "one.txt"
    one.write_text("".join(line for line in open(human) if line.split()[0] == first))
    none = tmp_path / "none.txt"
    none.write_text("nosuchquery 0 doc1 1\nnosuchquery2 0 doc2 1\n")
    out = tmp_path / "pq"
    cases = [dict(human_qrels=str(one)), dict(human_qrels=str(none)),
             dict(human_qrels=human, ppi=1.5), dict(human_qrels=human, ppi="fast"),
             dict(human_qrels=human, confidence=1), dict(ppi=0.5),
             dict(human_qrels=human, qrels={"a": llm, "b": llm})]
    for case in cases:
        kw = {"qrels": llm, "k": 10, **case}
        here = _message(lambda: fastndcg.evaluate(judges["run"], **kw))
        assert _message(lambda: fspark.evaluate(judges["run"], spark=spark, per_query=str(out),
                                                **kw)) == here
        assert not out.exists()
    assert "judge 1 of the 50 queries" in _message(
        lambda: fspark.evaluate(df, spark=spark, qrels=llm, human_qrels=str(one), k=10))
    # the sample is found short only once the run is scored: the run lacks 14 of its 15
    sample = sorted({line.split()[0] for line in open(human)})
    table = judges["tables"]["run"]
    cut = table.filter(pa.compute.invert(pa.compute.is_in(table["query_id"],
                                                          value_set=pa.array(sample[1:]))))
    here = _message(lambda: fastndcg.evaluate(cut, qrels=llm, human_qrels=human, k=10))
    assert "human_qrels judge 1 of the 36 queries scored with the LLM's judgments" in here
    there = _message(lambda: fspark.evaluate(spark.createDataFrame(cut.to_pandas()),
                                             spark=spark, qrels=llm, human_qrels=human, k=10,
                                             per_query=str(out)))
    assert there == here and not out.exists()
    # compare takes them with the LLM's qrels (tests/test_ppi_compare.py), not without
    with pytest.raises(ValueError, match=r"human_qrels=\.\.\. needs qrels=\.\.\. in compare"):
        fspark.compare(df, ["score", "doc_id"], human_qrels=human)


def test_command_line_judges_on_spark(spark_cli, judges, tmp_path):
    """``--spark`` with ``--qrels NAME=PATH`` repeated: one JSON line a set, as on one
    machine (means to 1e-12, the rest equal), and the per-query parts, a set each,
    the one-machine rows to the bit; with ``--human-qrels``, the prediction-powered
    means of one machine exactly; a set named twice is refused as on one machine."""
    import json
    run, _ = spark_cli
    named = ["--qrels", f"truth={CORE_QRELS}", "--qrels", f"llm={judges['llm']}"]
    args = ["-m", "nDCG@10", "-m", "AP", "--format", "json"]
    here = inprocess.run(["evaluate", judges["run"], *named, *args, "--per-query",
                          str(tmp_path / "here")])
    there = run("evaluate", judges["run"], "--spark", "local[2]", *named, *args,
                "--per-query", str(tmp_path / "spark"))
    assert here.returncode == 0 and there.returncode == 0, here.stderr + there.stderr
    for a, b in zip(*[[json.loads(line) for line in p.stdout.splitlines()]
                      for p in (here, there)]):
        a.pop("seconds"), b.pop("seconds")
        assert a["labels"] == b["labels"] and list(a) == list(b)
        assert {k: v for k, v in b.items() if not isinstance(v, float)} == {
            k: v for k, v in a.items() if not isinstance(v, float)}
        assert {k: v for k, v in b.items() if isinstance(v, float)} == pytest.approx(
            {k: v for k, v in a.items() if isinstance(v, float)}, rel=1e-12)
    assert sorted(os.listdir(tmp_path / "spark")) == ["part-000000.parquet",
                                                      "part-000001.parquet"]
    _bits(pq.read_table(tmp_path / "spark"), pq.read_table(tmp_path / "here"))
    text = run("evaluate", judges["run"], "--spark", "local[2]", *named, "-m", "nDCG@10")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].endswith(f"(qrels truth={CORE_QRELS}, llm={judges['llm']})")
    assert lines[1].split()[:2] == ["labels", "ndcg@10"]
    assert [r.split()[0] for r in lines[2:4]] == ["truth", "llm"]

    ppi = ["--qrels", judges["llm"], "--human-qrels", judges["human"], *args]
    here = inprocess.run(["evaluate", judges["run"], *ppi])
    there = run("evaluate", judges["run"], "--spark", "local[2]", *ppi)
    assert there.returncode == 0, there.stderr
    assert json.loads(there.stdout)["ppi"] == json.loads(here.stdout)["ppi"]

    twice = run("evaluate", judges["run"], "--spark", "local[2]", *named, "--qrels",
                f"llm={CORE_QRELS}")
    assert twice.returncode == 2 and "--qrels names the label set 'llm' twice" in twice.stderr
