"""fastndcg against DuckDB SQL and polars, from the same Parquet files.

Groups ``list-sql-10rows`` and ``list-sql-50rows`` (list mode): the synthetic
Parquet logs of ``test_bench_evaluate`` (~10 and ~50 rows a query; full: ~50M
rows each), NDCG@10 with exp2 gains (fastndcg's default) and score ties broken by
the row's position in the file:

* ``fastndcg.evaluate(path, k=[10], ties="stable")`` (per-query table kept in
  memory, as by default);
* DuckDB: ``read_parquet(path, file_row_number=true)``, ``row_number() over
  (partition by query_id order by score desc, file_row_number)`` for the ranking,
  ``row_number() over (partition by query_id order by label desc)`` for the ideal
  ordering, ``sum((pow(2, label) - 1) / log2(rnk + 1))`` down to rank 10, NDCG =
  DCG / IDCG (0 where IDCG is 0), then ``avg`` (``_peers.DUCKDB_LIST_SQL``);
* polars: ``scan_parquet``, ``rank("ordinal", descending=True).over(query_id)``
  (ties in the order the rows occur), the same sums in a ``group_by``, the mean.

Groups ``qrels-int64`` and ``qrels-string`` (qrels mode): a Parquet run of ~100
documents a query (full: 200,000 queries, 20M rows) and its Parquet qrels (~30%
of the run's rows judged plus 10 judged documents a query that the run does not
retrieve; 1% of the queries unjudged), with int64 ids and with string ids
(``_files.write_run_qrels``), scores of 1 decimal (every query has tied scores,
which trec_eval's rule orders); group ``qrels-int64-distinct``: the same with
scores of all their digits, as a model gives them (no ties):

* ``fastndcg.evaluate(run, qrels=qrels, ties="trec", k=[10])``;
* DuckDB: the run left-joined to the qrels (unjudged = grade 0), trec_eval's tie
  rule (``order by score desc, cast(doc_id as varchar) desc``), the ideal list
  from every judged document of the query (``_peers.DUCKDB_QRELS_SQL``);
* polars: the same with a left join and an ordinal rank of (score, doc id as a
  string), both descending.

Before anything is timed, every peer's per-query values are asserted equal to
fastndcg's (same query ids, values to 1e-9) and its mean to fastndcg's (to
1e-12); a mismatch fails the benchmark. The peers time what a user asks for, the
mean (``select avg(ndcg)`` / ``.mean()``), so they do not pay for handing back a
per-query table, which fastndcg builds. A peer that is not installed is skipped
(``pip install "fastndcg[bench]"``).
"""

from __future__ import annotations

import time

import pytest

from benchmarks import _data
from benchmarks import _peers as P

K = 10
TOL_PER_QUERY = 1e-9
TOL_MEAN = 1e-12
SLOW_ROUNDS = 3 if _data.is_quick() else 2  # rounds of the peers (and of fastndcg's slow calls + 1)
SLOW_S = 2.0  # fastndcg calls slower than this get SLOW_ROUNDS + 1 rounds
PEERS = {"duckdb": {"list": P.duckdb_list, "qrels": P.duckdb_qrels},
         "polars": {"list": P.polars_list, "qrels": P.polars_qrels}}


class Pair:
    """fastndcg's runner on the files, and its answers (the warm-up calls)."""

    def __init__(self, group: str, runner: P.Runner, files: tuple, **info) -> None:
        self.group, self.runner, self.files, self.info = group, runner, files, info
        self.per_query = runner.per_query()
        t0 = time.perf_counter()
        self.mean = runner.call()
        self.warm_s = time.perf_counter() - t0


def _check_and_time(benchmark, pair: Pair, peer: str) -> None:
    P.require(peer)
    benchmark.group = pair.group
    mode = "qrels" if pair.group.startswith("qrels") else "list"
    runner = PEERS[peer][mode](*pair.files, K, n_rows=pair.runner.n_rows)
    P.assert_same_keyed(pair.per_query, runner.per_query(), tol=TOL_PER_QUERY,
                        what=f"{runner.system} vs fastndcg, {pair.group}")
    mean = runner.call()  # and the warm-up of the timed call
    assert abs(mean - pair.mean) <= TOL_MEAN, (runner.system, mean, pair.mean)
    result = benchmark.pedantic(runner.call, rounds=SLOW_ROUNDS, iterations=1)
    assert abs(result - pair.mean) <= TOL_MEAN
    _data.describe(benchmark, runner.system, "peer", note=runner.note, k=[K], **pair.info)
    _data.record_rows_per_s(benchmark, runner.n_rows, len(pair.per_query))


def _time_fastndcg(benchmark, pair: Pair, system: str) -> None:
    benchmark.group = pair.group
    if pair.warm_s > SLOW_S:  # a few single-call rounds instead of pytest-benchmark's 5+
        result = benchmark.pedantic(pair.runner.call, rounds=SLOW_ROUNDS + 1, iterations=1)
    else:
        result = benchmark(pair.runner.call)
    assert result == pair.mean
    _data.describe(benchmark, system, "fastndcg", k=[K], **pair.info)
    _data.record_rows_per_s(benchmark, pair.runner.n_rows, len(pair.per_query))


# --------------------------------------------------------------------------- list mode

@pytest.fixture(scope="module", params=[10, 50], ids=lambda n: f"{n}rows")
def list_pair(request, parquet_log) -> Pair:
    path, n_rows, _ = parquet_log(request.param)
    runner = P.fastndcg_parquet(path, K, ties="stable", n_rows=n_rows)
    return Pair(f"list-sql-{request.param}rows", runner, (path,),
                rows_per_query=request.param, ties="stable")


def test_list_fastndcg(benchmark, list_pair):
    _time_fastndcg(benchmark, list_pair, "fastndcg.evaluate(path, ties='stable')")


@pytest.mark.parametrize("peer", list(PEERS))
def test_list_peer(benchmark, list_pair, peer):
    _check_and_time(benchmark, list_pair, peer)


# --------------------------------------------------------------------------- qrels mode

@pytest.fixture(scope="module", params=["int64", "string", "int64-distinct"])
def qrels_pair(request, run_qrels) -> Pair:
    kind, _, scores = request.param.partition("-")
    options = {"decimals": None} if scores == "distinct" else {}
    run, qrels, n_rows, n_judged = run_qrels(kind, **options)
    runner = P.fastndcg_parquet(run, K, qrels=qrels, ties="trec", n_rows=n_rows)
    return Pair(f"qrels-{request.param}", runner, (run, qrels), ids=kind,
                ties="trec", judgments=n_judged, scores="distinct" if scores else "1 decimal")


def test_qrels_fastndcg(benchmark, qrels_pair):
    _time_fastndcg(benchmark, qrels_pair, "fastndcg.evaluate(run, qrels=..., ties='trec')")


@pytest.mark.parametrize("peer", list(PEERS))
def test_qrels_peer(benchmark, qrels_pair, peer):
    _check_and_time(benchmark, qrels_pair, peer)

