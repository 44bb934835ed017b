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

Quick sizes (the default, as the suite runs with ``--benchmark-disable``): 20,000
queries and 1,000 resamples. Full: ``FASTNDCG_BENCH_FULL=1 pytest
benchmarks/test_bench_compare.py --benchmark-enable``. Every function is called
once before it is timed (Numba compilation is never measured).
"""

from __future__ import annotations

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


def write_log(path, n_queries: int, n_systems: int, n_segments: int, seed: int = 0) -> int:
    """A log of ~10 rows a query: ``query_id`` int64, float32 scores ``score_a``...
    of slowly increasing quality, int8 labels and a dictionary ``market`` column
    constant within a query. Returns its rows."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(5, 16, n_queries)
    n = int(lens.sum())
    label = (rng.integers(0, 4, n) * (rng.random(n) < 0.4)).astype(np.int8)
    cols = {"query_id": np.repeat(np.arange(n_queries, dtype=np.int64), lens)}
    for s in range(n_systems):
        cols[f"score_{'abcdefgh'[s]}"] = (label * (0.3 + 0.02 * s) + rng.random(n)).astype(
            np.float32)
    cols["label"] = label
    markets = pa.array([f"m{g:02d}" for g in range(n_segments)])
    codes = np.repeat(rng.integers(0, n_segments, n_queries), lens).astype(np.int32)
    cols["market"] = pa.DictionaryArray.from_arrays(pa.array(codes), markets)
    pq.write_table(pa.table(cols), path, row_group_size=1 << 20)
    return n


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
