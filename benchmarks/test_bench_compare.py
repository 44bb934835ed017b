"""Benchmarks of ``fastndcg.compare`` (pytest-benchmark): the targets for comparing rankers.

Group "compare-2": two systems (score columns of one Parquet log) on 1,000,000
queries (~10 rows each), NDCG@10, 10,000 resamples for both the randomization
test and the bootstrap, every test and the Holm correction; evaluation included
(the timed call reads the Parquet file). Target: <= 15 s on the 2-core machine.

Group "compare-5x20": five systems on 1,000,000 queries in 20 segments (a
dictionary-encoded ``market`` column), same settings. Target: <= 60 s.

Group "compare-ranx": ``fastndcg.compare`` (randomization and t tests, plus
its bootstrap intervals) beside ``ranx.compare(..., stat_test="fisher")`` on the
same two systems (quick: 2,000 queries, 1,000 permutations; full: 20,000 queries,
10,000 permutations; ranx needs Python dicts, so it is not run at a million
queries). Before timing, ranx's NDCG@10 means are asserted equal to fastndcg's.

The tests and intervals are validated against scipy.stats in
``tests/test_compare.py``; scipy is not timed here (its resampling of a million
values 10,000 times holds (resamples x values) arrays and takes minutes).

Group "compare-scale": ``fastndcg compare LOG --systems score_a,score_b --format
json`` as a fresh process (default settings: NDCG@10, 10,000 resamples, every test
the method has) on 10M and 100M queries (~10 rows each; quick: 200,000 queries with
``--method buckets``); wall time and the process's peak resident memory
(``extra_info["peak_rss_mib"]``). Targets: 100M queries <= 3 minutes, <= 1 GiB and
<= 1.3x the 10M figure. Heavy: the 100M-query log is ~1 billion rows (written once,
2M queries at a time, to ``$FASTNDCG_BENCH_CACHE``).

Group "compare-dask": ``fastndcg.dask.compare`` with ``--method buckets`` on the 10M
log (quick: 200,000 queries), cut into partitions of 4M rows, on a LocalCluster of 1
worker process and of 2 (started, and their kernels loaded, before timing); the two
Comparisons are asserted identical. Target: 2 workers >= 1.6x the throughput of 1.

Quick sizes (the default, as the suite runs with ``--benchmark-disable``): 20,000
queries and 1,000 resamples. Full: ``FASTNDCG_BENCH_FULL=1 pytest
benchmarks/test_bench_compare.py --benchmark-enable``. Every function is called
once before it is timed (Numba compilation is never measured).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fastndcg
from benchmarks import _data, _files

FULL = {"queries": 1_000_000, "resamples": 10_000}
QUICK = {"queries": 20_000, "resamples": 1_000}


def sizes() -> dict:
    return dict(QUICK if _data.is_quick() else FULL)


def write_log(path, n_queries: int, n_systems: int, n_segments: int, seed: int = 0,
              chunk_queries: int = 2_000_000) -> int:
    """A log of ~10 rows a query: ``query_id`` int64, float32 scores ``score_a``...
    of slowly increasing quality, int8 labels and a dictionary ``market`` column
    constant within a query. Written ``chunk_queries`` queries at a time (the first
    chunk from ``seed``, each next one from the next seed), so a 100M-query log
    never sits in memory. Returns its rows."""
    markets = pa.array([f"m{g:02d}" for g in range(n_segments)])
    writer = None
    n_rows = 0
    try:
        for c, q0 in enumerate(range(0, n_queries, chunk_queries)):
            nq = min(chunk_queries, n_queries - q0)
            rng = np.random.default_rng(seed + c)
            lens = rng.integers(5, 16, nq)
            n = int(lens.sum())
            label = (rng.integers(0, 4, n) * (rng.random(n) < 0.4)).astype(np.int8)
            cols = {"query_id": np.repeat(np.arange(q0, q0 + nq, dtype=np.int64), lens)}
            for s in range(n_systems):
                cols[f"score_{'abcdefgh'[s]}"] = (label * (0.3 + 0.02 * s)
                                                  + rng.random(n)).astype(np.float32)
            cols["label"] = label
            codes = np.repeat(rng.integers(0, n_segments, nq), lens).astype(np.int32)
            cols["market"] = pa.DictionaryArray.from_arrays(pa.array(codes), markets)
            table = pa.table(cols)
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema)
            writer.write_table(table, row_group_size=1 << 20)
            n_rows += n
    finally:
        if writer is not None:
            writer.close()
    return n_rows


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cmp") if _data.is_quick() else _files.cache_dir()
    n = sizes()["queries"]
    out = {}
    for n_sys, n_seg in ((2, 1), (5, 20)):
        path = folder / f"compare-{n}q-{n_sys}s-{n_seg}m.parquet"
        if not path.exists():
            _files.say(f"writing {path}")
            tmp = path.with_suffix(".tmp")
            write_log(tmp, n, n_sys, n_seg)
            tmp.replace(path)
        out[n_sys] = str(path)
    return out


def _describe(benchmark, system, role, case, **extra):
    _data.describe(benchmark, system=system, role=role, case=case)
    benchmark.extra_info.update(extra)


@pytest.mark.benchmark(group="compare-2")
def test_compare_two_systems(benchmark, logs):
    sz = sizes()
    cols = ["score_a", "score_b"]
    fastndcg.compare(logs[2], cols, n_resamples=10)  # compile / load the cache
    result = benchmark.pedantic(fastndcg.compare, args=(logs[2], cols),
                                kwargs=dict(k=10, n_resamples=sz["resamples"]),
                                rounds=1 if not _data.is_quick() else 2, iterations=1)
    assert result.tests.num_rows == 1 and result.systems["n_queries"][0].as_py() == sz["queries"]
    _describe(benchmark, "fastndcg.compare", "fastndcg", "2 systems",
              queries=sz["queries"], resamples=sz["resamples"], target_s=15)


@pytest.mark.benchmark(group="compare-5x20")
def test_compare_five_systems_twenty_segments(benchmark, logs):
    sz = sizes()
    cols = ["score_a", "score_b", "score_c", "score_d", "score_e"]
    fastndcg.compare(logs[5], cols, segment="market", n_resamples=10)
    result = benchmark.pedantic(fastndcg.compare, args=(logs[5], cols),
                                kwargs=dict(k=10, n_resamples=sz["resamples"],
                                            segment="market"),
                                rounds=1 if not _data.is_quick() else 2, iterations=1)
    assert result.tests.num_rows == 4 * 20
    _describe(benchmark, "fastndcg.compare", "fastndcg", "5 systems x 20 segments",
              queries=sz["queries"], resamples=sz["resamples"], target_s=60)


# --------------------------------------------------------------------------- ranx

RANX = {"quick": (2_000, 1_000), "full": (20_000, 10_000)}  # queries, permutations


@pytest.fixture(scope="module")
def ranx_case():
    ranx = pytest.importorskip("ranx")
    n_q, n_perm = RANX["quick" if _data.is_quick() else "full"]
    rng = np.random.default_rng(5)
    lens = rng.integers(5, 16, n_q)
    q = np.repeat(np.arange(n_q), lens)
    label = (rng.integers(0, 4, len(q)) * (rng.random(len(q)) < 0.4)).astype(np.int8)
    # ranx needs every query judged: keep queries with a relevant document
    has = np.zeros(n_q, bool)
    np.logical_or.at(has, q, label > 0)
    keep = has[q]
    q, label = q[keep], label[keep]
    doc = np.arange(len(q))
    a = (label * 0.3 + rng.random(len(q))).astype(np.float32)
    b = (label * 0.32 + rng.random(len(q))).astype(np.float32)
    log = pa.table({"query_id": q, "doc_id": doc, "score_a": a, "score_b": b, "label": label})
    qd: dict = {}
    ra: dict = {}
    rb: dict = {}
    for qi, di, li, ai, bi in zip(q.tolist(), doc.tolist(), label.tolist(), a.tolist(),
                                  b.tolist()):
        if li > 0:
            qd.setdefault(str(qi), {})[str(di)] = li
        ra.setdefault(str(qi), {})[str(di)] = ai
        rb.setdefault(str(qi), {})[str(di)] = bi
    qrels, run_a, run_b = ranx.Qrels(qd), ranx.Run(ra, name="a"), ranx.Run(rb, name="b")
    # same answers first: ranx's ndcg@10 (linear gain) equals fastndcg's mean
    for col, run in (("score_a", run_a), ("score_b", run_b)):
        mine = fastndcg.evaluate(log, score=col, k=10, gain="linear").mean["ndcg@10"]
        assert abs(ranx.evaluate(qrels, run, "ndcg@10") - mine) < 1e-9
    return log, qrels, run_a, run_b, n_perm


@pytest.mark.benchmark(group="compare-ranx")
def test_compare_like_ranx(benchmark, ranx_case):
    log, _, _, _, n_perm = ranx_case
    kw = dict(k=10, gain="linear", n_resamples=n_perm, tests=["randomization", "t"])
    fastndcg.compare(log, ["score_a", "score_b"], **dict(kw, n_resamples=10))
    benchmark.pedantic(fastndcg.compare, args=(log, ["score_a", "score_b"]), kwargs=kw,
                       rounds=3, iterations=1)
    _describe(benchmark, "fastndcg.compare (randomization + t, and bootstrap intervals)",
              "fastndcg", "fisher", queries=len(log["query_id"].unique()),
              resamples=n_perm)


@pytest.mark.benchmark(group="compare-ranx")
def test_ranx_compare_fisher(benchmark, ranx_case):
    import ranx
    _, qrels, run_a, run_b, n_perm = ranx_case
    ranx.compare(qrels, [run_a, run_b], metrics="ndcg@10", stat_test="fisher",
                 n_permutations=10)
    benchmark.pedantic(ranx.compare, args=(qrels, [run_a, run_b]),
                       kwargs=dict(metrics="ndcg@10", stat_test="fisher",
                                   n_permutations=n_perm),
                       rounds=1, iterations=1)
    _describe(benchmark, "ranx.compare (Fisher randomization)", "peer", "fisher",
              resamples=n_perm)


# --------------------------------------------------------------------------- at scale

SCALE = {"quick": [200_000], "full": [10_000_000, 100_000_000]}


def _scale_log(n: int) -> str:
    folder = _files.cache_dir()
    path = folder / f"compare-{n}q-2s-1m.parquet"
    if not path.exists():
        _files.say(f"writing {path}")
        tmp = path.with_suffix(".tmp")
        write_log(tmp, n, 2, 1)
        tmp.replace(path)
    return str(path)


def _fresh_compare(path: str, *args: str) -> tuple[float, float, dict]:
    """``fastndcg compare`` in a new process: (seconds, peak RSS in MiB, its JSON)."""
    import json
    import subprocess
    import sys
    import time
    code = ("import json, resource, sys; from fastndcg.cli import main; rc = main(sys.argv[1:]); "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); "
            "sys.exit(rc)")
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, "compare", path, "--systems",
                          "score_a,score_b", "--format", "json", "--quiet", *args],
                         capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - t
    rss_kib = int(out.stderr.strip().splitlines()[-1])
    return seconds, rss_kib / 1024, json.loads(out.stdout)


@pytest.mark.heavy
@pytest.mark.benchmark(group="compare-scale")
@pytest.mark.parametrize("n", SCALE["quick" if _data.is_quick() else "full"])
def test_compare_at_scale(benchmark, n):
    path = _scale_log(n) if not _data.is_quick() else None
    if path is None:
        import tempfile
        path = str(Path(tempfile.mkdtemp()) / "log.parquet")
        write_log(path, n, 2, 1)
    extra = ["--method", "buckets"] if _data.is_quick() else []
    import tempfile
    small = str(Path(tempfile.mkdtemp()) / "small.parquet")
    write_log(small, 2_000, 2, 1)
    for method in ("queries", "buckets"):  # the compile cache, warm (not the big log's pages)
        _fresh_compare(small, "--resamples", "10", "--method", method)
    runs = []

    def run():
        runs.append(_fresh_compare(path, *extra))

    benchmark.pedantic(run, rounds=1, iterations=1)
    seconds, rss, data = runs[-1]
    assert data["systems"][0]["n_queries"] == n
    assert data["method"] == ("buckets" if n > 1_000_000 or extra else "queries")
    _describe(benchmark, "fastndcg compare (fresh process)", "fastndcg", f"{n:,} queries",
              queries=n, seconds=round(seconds, 2), peak_rss_mib=round(rss, 1),
              target_s=180, target_rss_mib=1024)


@pytest.fixture(scope="module")
def dask_log():
    pytest.importorskip("distributed")
    n = 200_000 if _data.is_quick() else 10_000_000
    if _data.is_quick():
        import tempfile
        path = str(Path(tempfile.mkdtemp()) / "log.parquet")
        write_log(path, n, 2, 1)
        return path, n
    return _scale_log(n), n


@pytest.mark.heavy
@pytest.mark.benchmark(group="compare-dask")
@pytest.mark.parametrize("workers", [1, 2])
def test_dask_compare_workers(benchmark, dask_log, workers):
    import fastndcg.dask
    from distributed import Client, LocalCluster
    path, n = dask_log
    kw = dict(method="buckets", partition_rows=4 << 20)
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        fastndcg.dask.compare(path, ["score_a", "score_b"], client=client, n_resamples=10, **kw)
        result = benchmark.pedantic(fastndcg.dask.compare, args=(path, ["score_a", "score_b"]),
                                    kwargs=dict(client=client, **kw), rounds=5, iterations=1)
    one = fastndcg.compare(path, ["score_a", "score_b"], method="buckets")
    assert result.tests.equals(one.tests) and result.systems.equals(one.systems)
    _describe(benchmark, f"fastndcg.dask.compare, {workers} worker process(es)", "fastndcg",
              f"{workers} workers", queries=n, target_ratio=1.6)
