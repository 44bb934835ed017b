"""Scale benchmarks (pytest-benchmark): streamed per-query results, and Dask.

Group "per-query": ``fastndcg.evaluate`` on one synthetic Parquet log (quick:
20,000 queries of ~5 rows, row groups of 16,384 rows; full: 3,000,000 queries,
row groups of 1,048,576 rows) with ``per_query`` = None (a table in memory),
False (none kept), a ``.parquet`` file and a directory of parts. Before anything
is timed the four are asserted to give the same counts and means, and the file
and the directory the same per-query table as memory.

Group "dask": a multi-file dataset (quick: 400,000 rows in 8 files; full:
20,000,000 rows in 20 files; ~50 rows a query, files cut inside queries so that
queries straddle files) scored by ``fastndcg.dask.evaluate`` on a LocalCluster
of two worker processes of one thread (one cluster for the module) and by
``fastndcg.evaluate`` in this process. Before timing, the two are asserted to
give the same counts, means (to 1e-12) and per-query table; the timed calls keep
no per-query results (``per_query=False``).

Every function is called once before it is timed, so Numba compilation (or
loading the on-disk cache) and the cluster's start-up are never measured. Small
by default, since the suite runs with ``--benchmark-disable``; full size and
timings: ``FASTNDCG_BENCH_FULL=1 pytest benchmarks/test_bench_scale.py
--benchmark-enable``. ``scripts/bench_scale.py`` measures the scale targets
(peak memory of the command line, 30M queries; 100M rows on Dask).

``write_split_log`` and ``straddling_cuts`` are shared with ``scripts/bench_scale.py``.
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fastndcg
from benchmarks import _data
from fastndcg.synth import SCHEMA, iter_blocks, write_synthetic_log

K = [1, 3, 5, 10]
TOLERANCE = 1e-12

QUICK_SIZES = {"log_queries": 20_000, "log_mean_docs": 5, "log_row_group_rows": 1 << 14,
               "split_rows": 400_000, "split_files": 8, "split_mean_docs": 50,
               "split_row_group_rows": 1 << 15, "memory_queries": 80_000}
FULL_SIZES = {"log_queries": 3_000_000, "log_mean_docs": 5, "log_row_group_rows": 1 << 20,
              "split_rows": 20_000_000, "split_files": 20, "split_mean_docs": 50,
              "split_row_group_rows": 1 << 20, "memory_queries": 4_000_000}


def sizes(quick: bool | None = None) -> dict:
    """Sizes of this module's inputs; ``quick=None`` follows ``FASTNDCG_BENCH_FULL``."""
    if quick is None:
        quick = _data.is_quick()
    return dict(QUICK_SIZES if quick else FULL_SIZES)


# --------------------------------------------------------------------------- data

def write_split_log(folder: str | os.PathLike, n_rows: int, n_files: int, *, seed: int = 0,
                    mean_docs: int = 50, row_group_rows: int = 1 << 20) -> list[Path]:
    """The first ``n_rows`` rows of the seeded synthetic log (``fastndcg.synth``) as
    ``n_files`` Parquet files ``part-000.parquet ..`` of equal row counts (the last
    takes the remainder), in row groups of ``row_group_rows``.

    The cuts fall at row counts, not query boundaries, so queries straddle files
    (see :func:`straddling_cuts`); the last query may be cut short by ``n_rows``.
    Generated block by block: memory stays at about one file's rows plus a block.
    """
    if n_files < 1 or n_rows < n_files:
        raise ValueError(f"need n_rows >= n_files >= 1, got {n_rows} rows in {n_files} files")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    per_file = n_rows // n_files
    # every query has at least one row, so n_rows queries are always enough rows
    blocks = iter_blocks(n_rows, seed=seed, mean_docs=mean_docs)
    pending: list[pa.Table] = []
    pending_rows = 0
    paths = []
    for i in range(n_files):
        want = per_file if i < n_files - 1 else n_rows - per_file * (n_files - 1)
        path = folder / f"part-{i:03d}.parquet"
        with pq.ParquetWriter(path, SCHEMA, compression="snappy") as writer:
            while want:
                while pending_rows < min(want, row_group_rows):
                    block = next(blocks)
                    pending.append(block)
                    pending_rows += block.num_rows
                table = pa.concat_tables(pending)
                take = min(want, row_group_rows)
                writer.write_table(table.slice(0, take), row_group_size=row_group_rows)
                pending, pending_rows = [table.slice(take)], pending_rows - take
                want -= take
        paths.append(path)
    return paths


def straddling_cuts(paths) -> int:
    """How many of the cuts between consecutive files fall inside a query."""
    def edge(path, last: bool):
        meta = pq.ParquetFile(path).metadata
        group = meta.row_group(meta.num_row_groups - 1 if last else 0)
        stats = group.column(0).statistics
        return stats.max if last else stats.min

    return sum(edge(a, True) == edge(b, False) for a, b in zip(paths[:-1], paths[1:]))


def assert_same_answer(got: fastndcg.Report, expected: fastndcg.Report,
                       tables: bool = True) -> None:
    """Same counts, means to 1e-12 and (``tables``) an equal per-query table."""
    assert (got.n_queries, got.n_rows, got.n_zero_idcg) == (
        expected.n_queries, expected.n_rows, expected.n_zero_idcg)
    assert got.mean.keys() == expected.mean.keys()
    for name, value in expected.mean.items():
        assert math.isclose(got.mean[name], value, rel_tol=0, abs_tol=TOLERANCE), (
            name, got.mean[name], value)
    if tables:
        assert got.per_query.equals(expected.per_query)


# --------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def scale_log(tmp_path_factory) -> tuple[Path, int, int]:
    """(path, rows, queries) of the short-list log (~5 rows a query)."""
    s = sizes()
    path = tmp_path_factory.mktemp("bench-scale") / "log.parquet"
    rows = write_synthetic_log(path, s["log_queries"], seed=0, mean_docs=s["log_mean_docs"],
                               row_group_rows=s["log_row_group_rows"])
    return path, rows, s["log_queries"]


@pytest.fixture(scope="module")
def in_memory(scale_log, tmp_path_factory) -> fastndcg.Report:
    """The in-memory report (also the warm-up), checked against the other targets."""
    path, n_rows, n_queries = scale_log
    expected = fastndcg.evaluate(path, k=K)
    assert (expected.n_rows, expected.n_queries) == (n_rows, n_queries)
    out = tmp_path_factory.mktemp("bench-scale-out")
    assert_same_answer(fastndcg.evaluate(path, k=K, per_query=False), expected, tables=False)
    for target in (out / "per_query.parquet", out / "per_query_parts"):
        assert_same_answer(fastndcg.evaluate(path, k=K, per_query=target), expected)
    return expected


@pytest.fixture(scope="module")
def split_dataset(tmp_path_factory) -> tuple[Path, int]:
    """(directory, rows) of the multi-file dataset."""
    s = sizes()
    folder = tmp_path_factory.mktemp("bench-scale-split") / "log"
    paths = write_split_log(folder, s["split_rows"], s["split_files"],
                            mean_docs=s["split_mean_docs"],
                            row_group_rows=s["split_row_group_rows"])
    assert straddling_cuts(paths) > 0
    return folder, s["split_rows"]


@pytest.fixture(scope="module")
def dask_client():
    """One LocalCluster of two worker processes of one thread for the module."""
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("fastndcg.dask")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=logging.ERROR)
    client = distributed.Client(cluster)
    try:
        client.wait_for_workers(2, timeout=120)
        yield client
    finally:
        client.close()
        cluster.close()


@pytest.fixture(scope="module")
def split_expected(split_dataset, dask_client) -> fastndcg.Report:
    """Single-process report, asserted equal to the cluster's (both warm afterwards)."""
    import fastndcg.dask

    folder, n_rows = split_dataset
    single = fastndcg.evaluate(folder, k=K)
    assert single.n_rows == n_rows
    assert_same_answer(fastndcg.dask.evaluate(folder, client=dask_client, k=K), single)
    return single


# --------------------------------------------------------------------------- per-query

PER_QUERY = {"none": None, "false": False, "file": "per_query.parquet", "dir": "per_query_parts"}
PER_QUERY_LABEL = {"none": "None", "false": "False", "file": "'OUT.parquet'", "dir": "'DIR/'"}


@pytest.mark.benchmark(group="per-query")
@pytest.mark.parametrize("target", list(PER_QUERY))
def test_evaluate_per_query(benchmark, scale_log, in_memory, target, tmp_path):
    path, n_rows, n_queries = scale_log
    per_query = PER_QUERY[target]
    if isinstance(per_query, str):
        per_query = tmp_path / per_query
    report = benchmark(fastndcg.evaluate, path, k=K, per_query=per_query)
    assert_same_answer(report, in_memory, tables=False)
    if isinstance(per_query, Path):  # all queries written (the values were checked above)
        files = [per_query] if per_query.is_file() else sorted(per_query.glob("part-*.parquet"))
        assert sum(pq.read_metadata(f).num_rows for f in files) == n_queries
    _data.describe(benchmark, f"fastndcg.evaluate(path, per_query={PER_QUERY_LABEL[target]})",
                   "fastndcg", case=target, rows_per_query=sizes()["log_mean_docs"])
    _data.record_rows_per_s(benchmark, n_rows, n_queries)


# --------------------------------------------------------------------------- dask

@pytest.mark.benchmark(group="dask")
def test_single_process_files(benchmark, split_dataset, split_expected):
    folder, n_rows = split_dataset
    report = benchmark(fastndcg.evaluate, folder, k=K, per_query=False)
    assert_same_answer(report, split_expected, tables=False)
    _data.describe(benchmark, "fastndcg.evaluate(DIR, per_query=False), one process",
                   "fastndcg", case="single", files=sizes()["split_files"])
    _data.record_rows_per_s(benchmark, n_rows, report.n_queries)


@pytest.mark.benchmark(group="dask")
def test_dask_two_workers(benchmark, split_dataset, split_expected, dask_client):
    import fastndcg.dask

    folder, n_rows = split_dataset
    report = benchmark(fastndcg.dask.evaluate, folder, client=dask_client, k=K,
                       per_query=False)
    assert_same_answer(report, split_expected, tables=False)
    _data.describe(benchmark, "fastndcg.dask.evaluate(DIR, per_query=False), 2 workers x 1 thread",
                   "fastndcg", case="dask", workers=2, files=sizes()["split_files"])
    _data.record_rows_per_s(benchmark, n_rows, report.n_queries)


# --------------------------------------------------------------------------- memory

@pytest.mark.heavy
@pytest.mark.benchmark(group="memory")
def test_cli_peak_memory(benchmark, _input_dir):
    """``fastndcg evaluate LOG -k 1,3,5,10 --format json`` on the 200M-row log (4,000,000
    queries of ~50 rows; written once into the cache, ~1.2 GB): its peak resident
    memory (DESIGN.md: <= 1 GiB) in ``extra_info["peak_rss"]``, one round."""
    from benchmarks import _files, _procs

    n_queries = sizes()["memory_queries"]
    path, n_rows = _files.cached_log(_input_dir, n_queries, 1 << 20)
    cli, name = _procs.cli_command()
    cmd = [*cli, "evaluate", path, "-k", ",".join(map(str, K)), "--format", "json"]
    peaks = []

    def once():
        peak, _, out = _procs.run_peak_rss(cmd)
        peaks.append(peak)
        return out

    out = benchmark.pedantic(once, rounds=1, iterations=1)
    got = _procs.check_json(out, n_rows)
    assert got["n_queries"] == n_queries
    _data.describe(benchmark, f"{name} evaluate LOG (peak RSS)", "fastndcg", case="memory",
                   peak_rss=peaks[-1])
    _data.record_rows_per_s(benchmark, n_rows, n_queries)

