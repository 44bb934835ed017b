"""trec_eval's usual measure set from one ranking pass (pytest-benchmark).

Groups:

* ``measures-parquet`` -- qrels mode from a Parquet run and Parquet qrels (int64
  ids, ~100 documents a query, ``_files.cached_run_qrels``), trec_eval's rules:
  ``ndcg_cut.5,10`` alone beside trec_eval's usual set (``ndcg_cut.5,10 map
  recip_rank P.5,10 recall.100,1000``). Target: the set costs <= 1.5x NDCG alone.
* ``measures-trec`` -- the same set end to end from TREC text files (parse, join,
  score): ``fastndcg.evaluate(run, qrels=..., preset="pytrec_eval", measure=...)``
  beside pytrec_eval (``parse_qrel`` + ``parse_run`` + ``RelevanceEvaluator``).
  Target: >= 12x pytrec_eval.

Before anything is timed, fastndcg's answers are checked against pytrec_eval's
(every query, every measure, to 1e-9), and each function is called once (so
compilation or loading the compiled cache is never timed). Quick sizes by default;
``FASTNDCG_BENCH_FULL=1`` for the full ones:
``FASTNDCG_BENCH_FULL=1 pytest benchmarks/test_bench_measures.py --benchmark-enable``.
"""

from __future__ import annotations

import numpy as np
import pytest

import fastndcg
from benchmarks import _data, _files
from benchmarks.test_bench_evaluate import write_trec_files

NDCG = ["ndcg_cut.5,10"]
USUAL = ["ndcg_cut.5,10", "map", "recip_rank", "P.5,10", "recall.100,1000"]
PYTREC = {"ndcg_cut.5,10", "map", "recip_rank", "P.5,10", "recall.100,1000"}
# fastndcg column -> pytrec_eval's key
KEYS = {"ndcg@5": "ndcg_cut_5", "ndcg@10": "ndcg_cut_10", "ap": "map", "rr": "recip_rank",
        "p@5": "P_5", "p@10": "P_10", "r@100": "recall_100", "r@1000": "recall_1000"}
QUICK = {"parquet_queries": 5_000, "trec_queries": 2_000}
FULL = {"parquet_queries": 500_000, "trec_queries": 50_000}


def sizes() -> dict:
    return dict(QUICK if _data.is_quick() else FULL)


def pytrec_files(run, qrels) -> dict:
    import pytrec_eval

    with open(qrels) as f:
        judgments = pytrec_eval.parse_qrel(f)
    with open(run) as f:
        ranking = pytrec_eval.parse_run(f)
    return pytrec_eval.RelevanceEvaluator(judgments, PYTREC).evaluate(ranking)


def assert_same(report: fastndcg.Report, theirs: dict) -> None:
    per = report.per_query.to_pydict()
    ids = per[report.per_query.column_names[0]]
    assert set(map(str, ids)) == set(theirs)
    for col, key in KEYS.items():
        ours = np.array(per[col])
        ref = np.array([theirs[str(q)][key] for q in ids])
        np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-9, err_msg=col)


@pytest.fixture(scope="module")
def parquet_run():
    run, qrels, n_rows, _ = _files.cached_run_qrels(_files.cache_dir(),
                                                    sizes()["parquet_queries"], "int64")
    for m in (NDCG, USUAL):  # compile / load the cache
        fastndcg.evaluate(run, qrels=qrels, preset="trec_eval", measure=m)
    return run, qrels, n_rows


@pytest.mark.parametrize("which", ["ndcg", "usual"])
def test_parquet_qrels(benchmark, parquet_run, which):
    run, qrels, n_rows = parquet_run
    benchmark.group = "measures-parquet"
    measure = NDCG if which == "ndcg" else USUAL
    report = benchmark(fastndcg.evaluate, run, qrels=qrels, preset="trec_eval", measure=measure)
    assert report.n_rows == n_rows
    _data.describe(benchmark, f"fastndcg.evaluate measure={' '.join(measure)}", "fastndcg",
                   case=which)
    _data.record_rows_per_s(benchmark, n_rows, report.n_queries)


@pytest.fixture(scope="module")
def trec_files(tmp_path_factory):
    run, qrels, n_rows = write_trec_files(tmp_path_factory.mktemp("bench-measures"),
                                          sizes()["trec_queries"])
    report = fastndcg.evaluate(run, qrels=qrels, preset="pytrec_eval", measure=USUAL)
    pytest.importorskip("pytrec_eval")
    assert_same(report, pytrec_files(run, qrels))
    return run, qrels, n_rows


def test_trec_fastndcg(benchmark, trec_files):
    run, qrels, n_rows = trec_files
    benchmark.group = "measures-trec"
    report = benchmark(fastndcg.evaluate, run, qrels=qrels, preset="pytrec_eval",
                       measure=USUAL)
    _data.describe(benchmark, "fastndcg.evaluate from TREC files, usual set", "fastndcg")
    _data.record_rows_per_s(benchmark, n_rows, report.n_queries)


def test_trec_pytrec_eval(benchmark, trec_files):
    run, qrels, n_rows = trec_files
    benchmark.group = "measures-trec"
    benchmark.pedantic(pytrec_files, args=(run, qrels), rounds=3, iterations=1)
    _data.describe(benchmark, "pytrec_eval parse + RelevanceEvaluator, usual set", "peer")
    _data.record_rows_per_s(benchmark, n_rows, 0)
